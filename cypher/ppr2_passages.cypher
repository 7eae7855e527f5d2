// HippoRAG 2 retrieval: one Personalized PageRank over the namespace's passage projection, seeded with
// the phrase seeds of the query's facts ($seeds [{text, weight}]) and every passage with an embedding,
// weighted $passageWeight x the min-max normalised cosine of the query ($embedding) and the passage
// (a passage at the minimum gets no seed); passages are ranked by their own PPR mass.
// $passageSeedRows [{id, weight}], when not null, gives the passage seeds instead (the client's top-N dense
// passages, HippoConfig.passage_seed_top_n). With $passageSeeds = false only the phrases seed the walk.
// `topSeeds` lists the $topSeeds largest passage seeds (explanations). The seeds are not normalised (GDS
// takes the biases as given), so the convergence tolerance is $tolerance x their total: the same relative
// precision as hipporag1, whose seeds sum to 1.
// $graphVersion: see ppr_passages.cypher. Parameters: $graph, $graphVersion, $ns, $seeds, $embedding,
// $passageWeight, $passageSeeds, $passageSeedRows, $damping, $maxIterations, $tolerance, $concurrency, $topK,
// $topSeeds.
CALL () {
  UNWIND $seeds AS seed
  MATCH (ph:Phrase {ns: $ns, text: seed.text})
  WHERE coalesce(ph.since, 0) <= $graphVersion
  RETURN collect([ph, seed.weight]) AS phraseSources
}
CALL () {
  UNWIND coalesce($passageSeedRows, []) AS row
  MATCH (p:Passage {ns: $ns, id: row.id})
  WHERE coalesce(p.since, 0) <= $graphVersion
  RETURN collect([p, row.weight]) AS given
}
CALL () {
  MATCH (p:Passage {ns: $ns})
  WHERE $passageSeeds AND $passageSeedRows IS NULL AND p.embedding IS NOT NULL
    AND coalesce(p.since, 0) <= $graphVersion
  WITH p, vector.similarity.cosine(p.embedding, $embedding) AS s
  WITH collect([p, s]) AS scored, min(s) AS lo, max(s) AS hi
  RETURN [x IN scored WHERE x[1] > lo | [x[0], $passageWeight * (x[1] - lo) / (hi - lo)]] AS computed
}
WITH phraseSources, given + computed AS passageSources
WITH phraseSources, passageSources, reduce(t = 0.0, x IN phraseSources + passageSources | t + x[1]) AS total
// the largest passage seeds, taken before the walk: the rows after it do not carry the seed list
CALL (passageSources) {
  UNWIND passageSources AS x
  WITH x ORDER BY x[1] DESC LIMIT $topSeeds
  RETURN collect({id: x[0].id, weight: x[1]}) AS topSeeds
}
CALL gds.pageRank.stream($graph, {
  sourceNodes: phraseSources + passageSources, dampingFactor: $damping,
  relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance * total,
  concurrency: $concurrency
})
YIELD nodeId, score
WITH topSeeds, nodeId, score ORDER BY score DESC
WITH topSeeds, gds.util.asNode(nodeId) AS p, score
// a node deleted after the snapshot was projected can be gone or its id reused: keep this namespace's passages
WHERE p:Passage AND p.ns = $ns AND coalesce(p.since, 0) <= $graphVersion
WITH topSeeds, p, score LIMIT $topK
RETURN collect({id: p.id, title: p.title, text: p.text, score: score}) AS ranked, topSeeds
