// Project the mention graph (entity-ppr) that a filter's passages induce, as project_mention_graph.cypher
// projects a namespace's: those passages ($only: their Neo4j node ids) and the phrases they mention, the
// MENTIONED_IN edges of the entities each names (`named`; weight 1.0) and the SYNONYM edges between two of the
// phrases (their cosine), all undirected: the graph a namespace of those passages alone would walk, with its
// `path` weights (a phrase leads nowhere else when one of those passages alone names it and no synonym joins it
// to a phrase of theirs).
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
    RETURN collect(t) AS named
  }
  CALL (s) {
    MATCH (s)-[r:SYNONYM]->(t:Phrase)
    WHERE EXISTS { (t)-[:MENTIONED_IN]->(p:Passage) WHERE id(p) IN $only }
    RETURN collect([t, r.score]) AS synonyms
  }
  WITH s, named, synonyms, size(named) > 1 OR size(synonyms) > 0
         OR EXISTS { (s)<-[:SYNONYM]-(o:Phrase) WHERE EXISTS { (o)-[:MENTIONED_IN]->(p:Passage) WHERE id(p) IN $only } }
         AS leads
  UNWIND [t IN named | [t, 1.0, CASE WHEN leads THEN 1.0 ELSE 1.0e-9 END]] + [y IN synonyms | [y[0], y[1], y[1]]]
         + [[null, null, null]] AS edge
  RETURN s, edge[0] AS t, edge[1] AS weight, edge[2] AS path
  UNION ALL
  MATCH (s:Passage)
  WHERE id(s) IN $only AND s.ns = $ns AND NOT EXISTS { (:Phrase)-[m:MENTIONED_IN]->(s) WHERE coalesce(m.named, true) }
  RETURN s, null AS t, null AS weight, null AS path
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: weight, path: path} END},
  {undirectedRelationshipTypes: ['*'], readConcurrency: 1, logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
