// The phrases of namespace $ns that lack their key without accents (`fold`, cypher/write_phrases.cypher): those
// whose text holds a character outside printable ASCII, in a namespace written before phrases carried the key
// (its node lacks `folded`). Nothing for a namespace that has the flag, or none yet. The client computes the
// keys (hippo_neo4j/text.py fold_phrase) and writes them with cypher/set_folds.cypher.
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
WITH n WHERE n IS NOT NULL AND n.folded IS NULL
OPTIONAL MATCH (ph:Phrase {ns: $ns}) WHERE ph.fold IS NULL AND ph.text =~ '.*[^ -~].*'
RETURN collect(ph.text) AS texts
