// HippoRAG retrieval: Personalized PageRank from the seed phrases over the namespace's projection,
// then passage score = sum over phrases of PPR mass x MENTIONED_IN.count.
// Parameters: $graph, $ns, $seeds [{text, weight}], $damping, $maxIterations, $tolerance, $concurrency,
// $topK, $topPhrases.
UNWIND $seeds AS seed
MATCH (ph:Phrase {ns: $ns, text: seed.text})
WITH collect([ph, seed.weight]) AS sources
CALL gds.pageRank.stream($graph, {
  sourceNodes: sources, dampingFactor: $damping, relationshipWeightProperty: 'weight',
  maxIterations: $maxIterations, tolerance: $tolerance, concurrency: $concurrency
})
YIELD nodeId, score
WITH gds.util.asNode(nodeId) AS ph, score WHERE score > 0
// a node deleted after the snapshot was projected can be gone or its id reused: keep this namespace's phrases
WITH ph, score WHERE ph:Phrase AND ph.ns = $ns
ORDER BY score DESC
WITH collect([ph, score]) AS mass
WITH mass, [x IN mass[..$topPhrases] | {phrase: x[0].text, mass: x[1]}] AS topPhrases
UNWIND mass AS x
WITH topPhrases, x[0] AS ph, x[1] AS score
MATCH (ph)-[m:MENTIONED_IN]->(p:Passage)
WITH topPhrases, p, ph.text AS phrase, score * m.count AS contribution
ORDER BY contribution DESC
WITH topPhrases, p, sum(contribution) AS total, collect({phrase: phrase, contribution: contribution})[..5] AS contributors
ORDER BY total DESC
LIMIT $topK
RETURN topPhrases, p.id AS id, p.title AS title, p.text AS text, total AS score, contributors
