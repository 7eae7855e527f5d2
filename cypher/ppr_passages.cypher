// HippoRAG retrieval: Personalized PageRank from the seed phrases over the namespace's projection,
// then passage score = sum over phrases of PPR mass x MENTIONED_IN.count.
// Phrases with mass <= $minMass (HippoConfig.ppr_min_mass) are left out of the sum.
// $graphVersion is the projection's graph version: nodes created after it (`since`) are not in it, so they
// neither seed the walk nor take a projected node's place (GDS node ids of deleted nodes can be reused).
// $only: with a metadata filter, the Neo4j node ids of the passages it leaves, the only ones scored (null: all),
// and the top phrases those the passages mention.
// Parameters: $graph, $graphVersion, $ns, $seeds [{text, weight}], $damping, $maxIterations, $tolerance,
// $concurrency, $minMass, $topK, $topPhrases, $only.
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
WITH gds.util.asNode(nodeId) AS ph, score
// a node deleted after the snapshot was projected can be gone or its id reused: keep this namespace's phrases
WHERE ph:Phrase AND ph.ns = $ns AND coalesce(ph.since, 0) <= $graphVersion
WITH collect([ph, score]) AS mass
CALL (mass) {
  UNWIND mass AS x
  // with a filter the walk ran on the graph its passages induce, whose phrases are all mentioned by them: the
  // explanation names only those
  WITH x ORDER BY x[1] DESC, x[0].text LIMIT $topPhrases
  RETURN collect({phrase: x[0].text, mass: x[1]}) AS topPhrases
}
CALL (mass) {
  UNWIND mass AS x
  WITH x[0] AS ph, x[1] AS score
  MATCH (ph)-[m:MENTIONED_IN]->(p:Passage)
  WHERE $only IS NULL OR id(p) IN $only
  WITH p, sum(score * m.count) AS total, collect([ph, score * m.count]) AS parts
  ORDER BY total DESC, p.id  // ties by id: the same passages and order on any index of the same corpus
  LIMIT $topK
  RETURN p, total, parts
}
// contributors are unsorted here; the client keeps each passage's largest
RETURN topPhrases, p.id AS id, p.title AS title, p.text AS text, total AS score,
       [x IN parts | {phrase: x[0].text, contribution: x[1]}] AS contributors,
       [k IN keys(p) WHERE k STARTS WITH 'meta_' | [k, p[k]]] AS meta
ORDER BY score DESC, id
