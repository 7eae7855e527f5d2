// Documents and their passages in reading order: each Document node (namespace, id = its path relative to the
// indexed folder, title, format, content hash, size, modification time, the passage budget and cut version it
// was cut with),
// each passage's FROM_DOCUMENT edge (with its position, `index`, and heading path, `heading`) and the NEXT_PASSAGE
// chain between them, replacing the edges it had (neo4j-graphrag's lexical graph: Chunk -[:FROM_DOCUMENT]->
// Document, NEXT_CHUNK). A passage id that is not in the namespace (its extraction failed: indexed on a later
// run) is left out; `passages` says how many each document holds.
// Parameters: $ns, $documents ({properties: the node's properties, id among them, passages: {id, heading} in
// reading order} each).
UNWIND $documents AS doc
MERGE (d:Document {ns: $ns, id: doc.properties.id})
SET d += doc.properties
WITH d, doc
CALL (d) {
  MATCH (p:Passage)-[r:FROM_DOCUMENT]->(d)
  OPTIONAL MATCH (p)-[n:NEXT_PASSAGE]->()
  WITH collect(DISTINCT r) + collect(DISTINCT n) AS edges
  FOREACH (e IN edges | DELETE e)
}
CALL (d, doc) {
  UNWIND range(0, size(doc.passages) - 1) AS i
  MATCH (p:Passage {ns: $ns, id: doc.passages[i].id})
  CREATE (p)-[:FROM_DOCUMENT {index: i, heading: doc.passages[i].heading}]->(d)
  WITH p, i ORDER BY i
  WITH collect(p) AS chain
  UNWIND range(0, size(chain) - 2) AS j
  WITH chain[j] AS a, chain[j + 1] AS b
  CREATE (a)-[:NEXT_PASSAGE]->(b)
}
RETURN d.id AS id, COUNT { MATCH (:Passage)-[:FROM_DOCUMENT]->(d) } AS passages
