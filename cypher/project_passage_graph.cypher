// Project one namespace's graph with its passages into GDS (hipporag2), natively from the namespace's labels:
// every Phrase and every Passage node (isolated ones too: any of them can seed PPR), RELATION edges weighted by
// how often the pair was extracted (`weight`), SYNONYM edges by their cosine (`score`), MENTIONED_IN edges with
// weight 1.0 (a mention has no `weight` of its own), all undirected. The tokens are made first (GDS refuses a
// label or type the database has never held). project_passage_graph_rows.cypher is the same graph as rows, the
// form a GDS without weighted sourceNodes walks with feeders (graph/reset.py). Parameters: $graph (name), $labels.
CALL db.createLabel($labels.phrase)
CALL db.createLabel($labels.passage)
CALL db.createRelationshipType('RELATION')
CALL db.createRelationshipType('SYNONYM')
CALL db.createRelationshipType('MENTIONED_IN')
CALL db.createProperty('weight')
CALL db.createProperty('score')
CALL gds.graph.project($graph, [$labels.phrase, $labels.passage], {
  RELATION: {orientation: 'UNDIRECTED', properties: {weight: {property: 'weight'}}},
  SYNONYM: {orientation: 'UNDIRECTED', properties: {weight: {property: 'score'}}},
  MENTIONED_IN: {orientation: 'UNDIRECTED', properties: {weight: {property: 'weight', defaultValue: 1.0}}}
}, {logProgress: false})
YIELD graphName, nodeCount, relationshipCount
RETURN graphName AS graph, nodeCount AS nodes, relationshipCount AS relationships
