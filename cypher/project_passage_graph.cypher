// Project one namespace's graph with its passages into GDS (hipporag2): every Phrase and every Passage
// node (isolated ones too: any of them can seed PPR), RELATION edges weighted by how often the pair was
// extracted, SYNONYM edges by their cosine, MENTIONED_IN edges with weight 1.0, all undirected.
// Parameters: $graph (name), $ns (namespace).
CALL () {
  MATCH (s:Phrase {ns: $ns})
  OPTIONAL MATCH (s)-[r:RELATION|SYNONYM|MENTIONED_IN]->(t)
  RETURN s, t, CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) WHEN 'SYNONYM' THEN toFloat(r.score)
                            ELSE 1.0 END AS w
  UNION ALL
  MATCH (s:Passage {ns: $ns})
  WHERE NOT EXISTS { (:Phrase)-[:MENTIONED_IN]->(s) }
  RETURN s, null AS t, null AS w
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: w} END},
  {undirectedRelationshipTypes: ['*'], logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
