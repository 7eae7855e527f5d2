// Project the phrase graph (hipporag1) that a filter's passages induce, as project_phrase_graph.cypher projects a
// namespace's: the phrases those passages mention ($only: their Neo4j node ids), the SYNONYM edges between two of
// them (weight their cosine) and the RELATION edges between two of them weighted by how often those passages
// ($ids: their passage ids) extracted the pair (an edge only other passages extracted is left out), all
// undirected: the graph a namespace of those passages alone would walk. Read by one thread: a small graph, and
// GDS's buffers for several threads would hold three times its memory (22 against 9 MiB for 20 nodes). Parameters: $graph, $ns, $only, $ids.
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
    RETURN null AS t, null AS w
  }
  RETURN s, t, w
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: w} END},
  {undirectedRelationshipTypes: ['*'], readConcurrency: 1, logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
