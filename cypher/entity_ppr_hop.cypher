// entity-ppr's second hop (hippo_neo4j/retrieve/entity_ppr.py): a walk over the namespace's mention projection from
// the passages that the question's text and the entity walk agree on ($sources: [[node id (a float), weight]],
// weighted by that agreement), the first hop of the answer, so that its mass shows where that hop leads: the
// passages that share an entity with them, the closer, the more specific the entity and the stronger the agreement,
// the more. The sources are given as nodes, so that a GDS that takes node ids only (graph/reset.py) walks exactly
// these steps too (a walk per distinct weight). $maxIterations is the client's HOP_STEPS + 1 (the paths of up to 3 steps: an entity shared directly or
// through a synonym), not a walk to convergence. Returns the $window nodes with the most mass as [node id, mass],
// most first (equal masses by node id); the client takes from each source the mass it started
// with. Parameters: $graph, $sources, $damping, $maxIterations, $tolerance,
// $concurrency, $window.
CALL () {
  UNWIND $sources AS x
  MATCH (p:Passage) WHERE id(p) = toInteger(x[0])
  RETURN collect([p, x[1]]) AS hopSources
}
CALL (hopSources) {
  WITH hopSources WHERE size(hopSources) > 0
  CALL gds.pageRank.stream($graph, {
    sourceNodes: hopSources, dampingFactor: $damping,
    relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance,
    concurrency: $concurrency, logProgress: false
  })
  YIELD nodeId, score
  WITH nodeId, score WHERE score > 0
  RETURN nodeId, score ORDER BY score DESC, nodeId LIMIT $window
}
WITH collect([nodeId, score]) AS window
RETURN window
