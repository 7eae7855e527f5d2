// Benchmark probe: how much hipporag1's passage sum (ppr_passages.cypher) reads after its walk, to split a query's
// time: the phrases with more mass than $minMass, the MENTIONED_IN rows the sum reads from them, and the passages
// those reach. Parameters: those of ppr_passages.cypher but $topK, $topPhrases and $only.
UNWIND $seeds AS seed
MATCH (ph:Phrase {ns: $ns, text: seed.text})
WHERE coalesce(ph.since, 0) <= $graphVersion
WITH collect([ph, seed.weight]) AS sources
CALL gds.pageRank.stream($graph, {
  sourceNodes: sources, dampingFactor: $damping, relationshipWeightProperty: 'weight',
  maxIterations: $maxIterations, tolerance: $tolerance, concurrency: $concurrency, logProgress: false
})
YIELD nodeId, score
WITH nodeId, score WHERE score > $minMass
WITH gds.util.asNode(nodeId) AS ph
WHERE ph:Phrase AND ph.ns = $ns AND coalesce(ph.since, 0) <= $graphVersion
OPTIONAL MATCH (ph)-[:MENTIONED_IN]->(p:Passage)
RETURN count(DISTINCT ph) AS phrases, count(p) AS rows, count(DISTINCT p) AS passages
