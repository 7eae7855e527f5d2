// Query-entity linking within a filter's passages ($only: their Neo4j node ids): each row's nearest phrase among
// those the passages mention, so that a filtered query is seeded from, and its explanation names, the filter's
// phrases alone. $exact (few passages pass, hippo_neo4j/retrieve/linking.py): by exact cosine over those phrases;
// else of the $k nearest through the namespace's phrase vector index (a beam widened by the share that passes),
// and the client asks again exactly for a row none of whose hits passed. The columns are those of
// phrase_neighbours.cypher (`hits`: the one nearest phrase here); `passages`, |P_i|, counts the filter's passages
// alone, as in the graph they induce, which the walk runs on (project_*_graph_within.cypher).
UNWIND $rows AS row
CALL (row) {
  WITH row WHERE NOT $exact
  CALL db.index.vector.queryNodes($indexes.phrase, $k, row.embedding) YIELD node, score
  WITH node, score WHERE EXISTS { (node)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only }
  RETURN node, score ORDER BY score DESC LIMIT 1
  UNION ALL
  WITH row WHERE $exact
  MATCH (node:Phrase)-[:MENTIONED_IN]->(q:Passage)
  WHERE id(q) IN $only AND q.ns = $ns AND node.embedding IS NOT NULL
  WITH DISTINCT row, node
  WITH node, vector.similarity.cosine(node.embedding, row.embedding) AS score
  RETURN node, score ORDER BY score DESC, node.text LIMIT 1
}
WITH row, collect({node: node, score: score}) AS hits
WITH row, hits, hits[0].node AS nearest
RETURN row.key AS key,
       [h IN hits | {text: h.node.text, cosine: 2 * h.score - 1, since: coalesce(h.node.since, 0)}] AS hits,
       CASE WHEN nearest IS NULL THEN 0 ELSE COUNT { (nearest)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only } END AS passages
