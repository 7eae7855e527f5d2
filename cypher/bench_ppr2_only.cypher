// Benchmark probe: the Personalized PageRank of ppr2_passages.cypher alone, as `gds.pageRank.stats` (no
// rows streamed, sorted or looked up), to split a hipporag2 query's time. Parameters: those of
// ppr2_passages.cypher but $topK and $massFloor.
CALL () {
  UNWIND $seeds AS seed
  MATCH (ph:Phrase {ns: $ns, text: seed.text})
  WHERE coalesce(ph.since, 0) <= $graphVersion
  RETURN collect([ph, seed.weight]) AS phraseSources
}
WITH phraseSources, reduce(t = 0.0, x IN phraseSources + $passageSources | t + x[1]) AS total
CALL gds.pageRank.stats($graph, {
  sourceNodes: phraseSources + [x IN $passageSources | [toInteger(x[0]), x[1]]], dampingFactor: $damping,
  relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance * total,
  concurrency: $concurrency, logProgress: false
})
YIELD ranIterations, computeMillis
RETURN ranIterations, computeMillis
