// Project one namespace's mention graph into GDS (entity-ppr): every Phrase and every Passage node, the
// MENTIONED_IN edges of the entities each passage names (`named`), weight 1.0, and the SYNONYM edges between
// phrases, weight their cosine (HippoRAG's), all undirected. The synonym edges join the surface forms one
// entity takes in different passages ("alzheimer", "alzheimer s disease", "national alzheimer"), of which the
// query's entity links to one. RELATION edges are left out: on musique_train, offline SVO relations cost
// entity-ppr 4 points of R@5 (docs/results.md). A namespace indexed before mentions recorded `named` holds
// only its triples' arguments as mentions: those are walked instead. Parameters: $graph (name), $ns (namespace).
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
