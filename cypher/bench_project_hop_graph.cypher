// Benchmark probe (bench/common.hop_graph): one namespace's mention graph as entity-ppr's second hop weighs it
// (cypher/entity_ppr_hop.cypher), projected into GDS so that cypher/bench_hop_pagerank.cypher runs the same hop as
// GDS's PageRank: every Phrase and Passage node, the MENTIONED_IN edges of the entities each passage names, each
// weighted by its count (how often the passage makes the mention), times 1e-9 for a phrase that leads nowhere else
// (cypher/project_mention_graph.cypher's `path` weights: a passage steps into such phrases next to not at all, or,
// naming no other, into them alike), and the SYNONYM edges, their score, all undirected. The walks' own projection weighs every
// mention 1.0. Parameters: $graph (name), $ns (namespace).
CALL () {
  MATCH (s:Phrase {ns: $ns})
  OPTIONAL MATCH (s)-[m:MENTIONED_IN]->(t:Passage)
  WHERE coalesce(m.named, true)
  WITH s, collect([t, toFloat(coalesce(m.count, 1))]) AS named
  WITH s, named, CASE WHEN size(named) > 1 OR EXISTS { (s)-[:SYNONYM]-(:Phrase) } THEN 1.0 ELSE 1.0e-9 END AS path
  UNWIND named AS x
  RETURN s, x[0] AS t, CASE WHEN x[0] IS NULL THEN null ELSE x[1] * path END AS weight
  UNION ALL
  MATCH (s:Phrase {ns: $ns})-[r:SYNONYM]->(t:Phrase)
  RETURN s, t, r.score AS weight
  UNION ALL
  MATCH (s:Passage {ns: $ns})
  WHERE NOT EXISTS { (:Phrase)-[m:MENTIONED_IN]->(s) WHERE coalesce(m.named, true) }
  RETURN s, null AS t, null AS weight
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: weight} END},
  {undirectedRelationshipTypes: ['*'], logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
