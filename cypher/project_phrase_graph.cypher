// Project one namespace's phrase graph into GDS (hipporag1), natively from the namespace's label: every Phrase
// node (isolated ones too, so any phrase can seed PPR), RELATION edges weighted by how often the pair was
// extracted (`weight`), SYNONYM edges by their cosine (`score`), all undirected. GDS refuses a label or type the
// database has never held, so the tokens are made first (a no-op when they exist). Parameters: $graph (name),
// $labels (the namespace's labels by node kind).
CALL db.createLabel($labels.phrase)
CALL db.createRelationshipType('RELATION')
CALL db.createRelationshipType('SYNONYM')
CALL db.createProperty('weight')
CALL db.createProperty('score')
CALL gds.graph.project($graph, [$labels.phrase], {
  RELATION: {orientation: 'UNDIRECTED', properties: {weight: {property: 'weight'}}},
  SYNONYM: {orientation: 'UNDIRECTED', properties: {weight: {property: 'score'}}}
}, {logProgress: false})
YIELD graphName, nodeCount, relationshipCount
RETURN graphName AS graph, nodeCount AS nodes, relationshipCount AS relationships
