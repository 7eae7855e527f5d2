// Benchmark probe (bench/seed_reach.py --walk): the mention graph of a set of nodes alone ($nodes: Neo4j node ids of
// phrases and passages), as project_mention_graph.cypher projects a namespace's: the named MENTIONED_IN edges
// (weight 1.0) and the SYNONYM edges (their score) between two of the nodes, all undirected, and every node even
// without one. Parameters: $graph, $nodes.
UNWIND $nodes AS n
MATCH (s) WHERE id(s) = n
CALL (s) {
  MATCH (s:Phrase)-[m:MENTIONED_IN]->(t:Passage)
  WHERE coalesce(m.named, true) AND id(t) IN $nodes
  RETURN t, 1.0 AS weight
  UNION ALL
  MATCH (s:Phrase)-[r:SYNONYM]->(t:Phrase)
  WHERE id(t) IN $nodes
  RETURN t, r.score AS weight
  UNION ALL
  RETURN null AS t, null AS weight
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: weight} END},
  {undirectedRelationshipTypes: ['*'], readConcurrency: 1, logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
