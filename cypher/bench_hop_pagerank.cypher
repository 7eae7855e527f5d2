// Benchmark probe (bench/hop_paths.py, bench/common.profile_entity_ppr): entity-ppr's second hop as GDS's PageRank
// stopped after HOP_STEPS + 1 iterations over the mention graph as the hop weighs it ($graph: a projection of
// cypher/bench_project_hop_graph.cypher), from the same sources as cypher/entity_ppr_hop.cypher, which sums the same
// paths in the database instead. Returns the $window nodes (phrases and passages) with the most mass
// as [node id, mass], most first (equal masses by node id). Parameters: $graph, $sources ([[node id (a float),
// weight]]), $damping, $maxIterations, $tolerance, $concurrency, $window.
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
