// HippoRAG 2 retrieval: one Personalized PageRank over the namespace's passage projection, seeded with
// the phrase seeds of the query's facts ($seeds [{text, weight}]) and every passage with an embedding,
// weighted $passageWeight x the min-max normalised cosine of the query ($embedding) and the passage
// (a passage at the minimum gets no seed); passages are ranked by their own PPR mass.
// With $passageSeeds = false only the phrases seed the walk (ablation). `passageSeeds` lists the
// $topSeeds largest passage seeds (explanations).
// Parameters: $graph, $ns, $seeds, $embedding, $passageWeight, $passageSeeds, $damping, $maxIterations,
// $tolerance, $concurrency, $topK, $topSeeds.
CALL () {
  UNWIND $seeds AS seed
  MATCH (ph:Phrase {ns: $ns, text: seed.text})
  RETURN collect([ph, seed.weight]) AS phraseSources
}
CALL () {
  MATCH (p:Passage {ns: $ns})
  WHERE $passageSeeds AND p.embedding IS NOT NULL
  WITH p, vector.similarity.cosine(p.embedding, $embedding) AS s
  WITH collect([p, s]) AS scored, min(s) AS lo, max(s) AS hi
  RETURN [x IN scored WHERE x[1] > lo | [x[0], $passageWeight * (x[1] - lo) / (hi - lo)]] AS passageSources
}
CALL gds.pageRank.stream($graph, {
  sourceNodes: phraseSources + passageSources, dampingFactor: $damping,
  relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance,
  concurrency: $concurrency
})
YIELD nodeId, score
WITH passageSources, nodeId, score ORDER BY score DESC
WITH passageSources, gds.util.asNode(nodeId) AS p, score
// a node deleted after the snapshot was projected can be gone or its id reused: keep this namespace's passages
WHERE p:Passage AND p.ns = $ns
WITH passageSources, p, score LIMIT $topK
WITH collect({id: p.id, title: p.title, text: p.text, score: score}) AS ranked, passageSources
CALL (passageSources) {
  UNWIND passageSources AS x
  WITH x ORDER BY x[1] DESC LIMIT $topSeeds
  RETURN collect({id: x[0].id, weight: x[1]}) AS topSeeds
}
RETURN ranked, topSeeds
