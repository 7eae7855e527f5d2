// Project the graph with passages (hipporag2) that a filter's passages induce, as project_passage_graph.cypher
// projects a namespace's: those passages ($only: their Neo4j node ids) and the phrases they mention, the
// MENTIONED_IN edges between the two (weight 1.0), the SYNONYM edges between two of the phrases (their cosine)
// and the RELATION edges between two of them weighted by how often those passages ($ids: their passage ids)
// extracted the pair, all undirected: the graph a namespace of those passages alone would walk.
// Parameters: $graph, $ns, $only, $ids.
// One thread reads it (readConcurrency 1): the graph is small, and GDS keeps buffers per reading thread (on
// 20 nodes 9 MiB against 22 with the default).
CALL () {
  MATCH (q:Passage)<-[:MENTIONED_IN]-(s:Phrase)
  WHERE id(q) IN $only AND q.ns = $ns
  WITH DISTINCT s
  CALL (s) {
    MATCH (s)-[r:RELATION|SYNONYM]->(t:Phrase)
    WHERE EXISTS { (t)-[:MENTIONED_IN]->(p:Passage) WHERE id(p) IN $only }
    WITH t, CASE type(r) WHEN 'RELATION' THEN toFloat(size([x IN r.sources WHERE x IN $ids]))
                         ELSE toFloat(r.score) END AS w
    WHERE w > 0
    RETURN t, w
    UNION ALL
    MATCH (s)-[:MENTIONED_IN]->(t:Passage)
    WHERE id(t) IN $only
    RETURN t, 1.0 AS w
  }
  RETURN s, t, w
  UNION ALL
  MATCH (s:Passage)
  WHERE id(s) IN $only AND s.ns = $ns AND NOT EXISTS { (:Phrase)-[:MENTIONED_IN]->(s) }
  RETURN s, null AS t, null AS w
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: w} END},
  {undirectedRelationshipTypes: ['*'], readConcurrency: 1, logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
