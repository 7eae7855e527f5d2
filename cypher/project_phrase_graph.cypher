// Project one namespace's phrase graph into GDS: every Phrase node (isolated ones too, so any phrase can
// seed PPR), RELATION edges weighted by how often the pair was extracted, SYNONYM edges weighted by
// their cosine score, all undirected. Parameters: $graph (name), $ns (namespace).
MATCH (s:Phrase {ns: $ns})
OPTIONAL MATCH (s)-[r:RELATION|SYNONYM]->(t:Phrase {ns: $ns})
WITH s, t, CASE type(r) WHEN 'RELATION' THEN toFloat(r.weight) ELSE toFloat(r.score) END AS w
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: w} END},
  {undirectedRelationshipTypes: ['*'], logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
