// Project one namespace's mention graph into GDS (entity-ppr), natively from the namespace's labels: every
// Phrase and every Passage node, the MENTIONED_IN edges weighted by `walked` (1.0 where the passage names the
// phrase as an entity, 0.0 where the phrase is only a triple's argument there: a walk sends nothing along those)
// and the SYNONYM edges weighted by their cosine (`score`), all undirected. The synonym edges join the surface
// forms one entity takes in different passages ("alzheimer", "alzheimer s disease", "national alzheimer"), of
// which the query's entity links to one. RELATION edges are left out: on musique_train, offline SVO relations
// cost entity-ppr 4 points of R@5. Every mention carries `walked` before this runs (cypher/walk_mentions.cypher).
// The tokens are made first (GDS refuses a label or type the database has never held).
// project_mention_graph_rows.cypher is the same graph as rows, the form a GDS without weighted sourceNodes walks
// with feeders (graph/reset.py). Parameters: $graph (name), $labels.
CALL db.createLabel($labels.phrase)
CALL db.createLabel($labels.passage)
CALL db.createRelationshipType('SYNONYM')
CALL db.createRelationshipType('MENTIONED_IN')
CALL db.createProperty('walked')
CALL db.createProperty('score')
CALL gds.graph.project($graph, [$labels.phrase, $labels.passage], {
  SYNONYM: {orientation: 'UNDIRECTED', properties: {weight: {property: 'score'}}},
  MENTIONED_IN: {orientation: 'UNDIRECTED', properties: {weight: {property: 'walked', defaultValue: 1.0}}}
}, {logProgress: false})
YIELD graphName, nodeCount, relationshipCount
RETURN graphName AS graph, nodeCount AS nodes, relationshipCount AS relationships
