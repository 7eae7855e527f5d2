// Project the mention graph (entity-ppr) that a filter's passages induce, as project_mention_graph.cypher
// projects a namespace's: those passages ($only: their Neo4j node ids) and the phrases they mention, the
// MENTIONED_IN edges of the entities each names (`named`; weight 1.0) and the SYNONYM edges between two of the
// phrases (their cosine), all undirected: the graph a namespace of those passages alone would walk.
// Parameters: $graph, $ns, $only, $ids (unused here; the other kinds weigh relations by it).
// One thread reads it (readConcurrency 1): the graph is small, and GDS keeps buffers per reading thread (on
// 20 nodes 9 MiB against 22 with the default).
CALL () {
  MATCH (q:Passage)<-[:MENTIONED_IN]-(s:Phrase)
  WHERE id(q) IN $only AND q.ns = $ns
  WITH DISTINCT s
  CALL (s) {
    MATCH (s)-[m:MENTIONED_IN]->(t:Passage)
    WHERE id(t) IN $only AND coalesce(m.named, true)
    RETURN t, 1.0 AS weight
    UNION ALL
    MATCH (s)-[r:SYNONYM]->(t:Phrase)
    WHERE EXISTS { (t)-[:MENTIONED_IN]->(p:Passage) WHERE id(p) IN $only }
    RETURN t, r.score AS weight
    UNION ALL
    RETURN null AS t, null AS weight
  }
  RETURN s, t, weight
  UNION ALL
  MATCH (s:Passage)
  WHERE id(s) IN $only AND s.ns = $ns AND NOT EXISTS { (:Phrase)-[m:MENTIONED_IN]->(s) WHERE coalesce(m.named, true) }
  RETURN s, null AS t, null AS weight
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: weight} END},
  {undirectedRelationshipTypes: ['*'], readConcurrency: 1, logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
