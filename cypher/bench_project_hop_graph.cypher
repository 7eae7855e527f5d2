// Benchmark probe (bench/common.hop_graph): one namespace's mention graph as entity-ppr's second hop weighs it
// (cypher/entity_ppr_hop.cypher), projected into GDS so that cypher/bench_hop_pagerank.cypher runs the same hop as
// GDS's PageRank: every Phrase and Passage node, the MENTIONED_IN edges of the entities each passage names, each
// weighted by its count (how often the passage makes the mention), and the SYNONYM edges, their score, all
// undirected. The walks' own projection (cypher/project_mention_graph.cypher) weighs every mention 1.0.
// Parameters: $graph (name), $ns (namespace).
CALL () {
  MATCH (s:Phrase {ns: $ns})
  OPTIONAL MATCH (s)-[m:MENTIONED_IN]->(t:Passage)
  WHERE coalesce(m.named, true)
  RETURN s, t, toFloat(coalesce(m.count, 1)) AS weight
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
