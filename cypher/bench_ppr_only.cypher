// Benchmark probe: the Personalized PageRank of ppr_passages.cypher alone (no passage aggregation), to
// split a hipporag1 query's time. Parameters: $graph, $ns, $seeds [{text, weight}], $damping,
// $maxIterations, $tolerance, $concurrency.
UNWIND $seeds AS seed
MATCH (ph:Phrase {ns: $ns, text: seed.text})
WITH collect([ph, seed.weight]) AS sources
CALL gds.pageRank.stream($graph, {
  sourceNodes: sources, dampingFactor: $damping, relationshipWeightProperty: 'weight',
  maxIterations: $maxIterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false
})
YIELD nodeId, score
WITH nodeId, score WHERE score > 0
RETURN count(*) AS nodes
