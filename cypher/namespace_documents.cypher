// The namespace's documents: id, title, format, content hash and how many passages each holds. Parameter: $ns.
MATCH (d:Document {ns: $ns})
RETURN d.id AS id, d.title AS title, d.format AS format, d.hash AS hash,
       COUNT { MATCH (:Passage)-[:FROM_DOCUMENT]->(d) } AS passages
ORDER BY id
