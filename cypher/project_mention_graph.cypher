// Project one namespace's mention graph into GDS (entity-ppr): every Phrase and every Passage node, and the
// MENTIONED_IN edges of the entities each passage names (`named`), weight 1.0, undirected. RELATION and
// SYNONYM edges are left out: on musique_train, offline SVO relations cost entity-ppr 4 points of R@5 and
// synonym edges added nothing (docs/results.md). Parameters: $graph (name), $ns (namespace).
CALL () {
  MATCH (s:Phrase {ns: $ns})
  OPTIONAL MATCH (s)-[m:MENTIONED_IN]->(t:Passage)
  WHERE m.named
  RETURN s, t
  UNION ALL
  MATCH (s:Passage {ns: $ns})
  WHERE NOT EXISTS { (:Phrase)-[:MENTIONED_IN {named: true}]->(s) }
  RETURN s, null AS t
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: 1.0} END},
  {undirectedRelationshipTypes: ['*']}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
