// The mention graph of project_mention_graph.cypher (entity-ppr) as rows, the form a GDS without weighted
// sourceNodes (GDS 2.13) projects with the passages' feeders beside them (graph/reset.py): every Phrase and every
// Passage node, the MENTIONED_IN edges of the entities each passage names (`named`), weight 1.0, and the SYNONYM
// edges between phrases, weight their cosine, all undirected. A namespace indexed before mentions recorded
// `named` holds only its triples' arguments as mentions: those are walked instead. Parameters: $graph (name),
// $ns (namespace).
CALL () {
  MATCH (s:Phrase {ns: $ns})
  OPTIONAL MATCH (s)-[m:MENTIONED_IN]->(t:Passage)
  WHERE coalesce(m.named, true)
  RETURN s, t, 1.0 AS weight
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
