// The keys without accents of namespace $ns's phrases ($rows: [{text, fold}], computed by the client from
// cypher/unfolded_phrases.cypher), then the namespace's `folded` flag: every phrase that needs a key has one.
CALL (*) {
  UNWIND $rows AS row
  MATCH (ph:Phrase {ns: $ns, text: row.text})
  SET ph.fold = row.fold
}
MATCH (n:HippoNamespace {name: $ns})
SET n.folded = true
