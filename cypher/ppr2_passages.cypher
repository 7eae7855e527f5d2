// HippoRAG 2 retrieval: one Personalized PageRank over the namespace's passage projection, seeded with
// the phrase seeds of the query's facts ($seeds [{text, weight}]) and the passages' seeds, computed by the
// client ($passageSources [[node id, weight]], the id a float read back with toInteger: every passage with an
// embedding weighted passage_node_weight x the min-max normalised cosine of the query and the passage, a
// passage at the minimum getting none; or the top-N dense passages', HippoConfig.passage_seed_top_n;
// graph/passage_vectors.py); passages are ranked by
// their own PPR mass. The seeds are not normalised (GDS takes the biases as given), so the convergence
// tolerance is $tolerance x their total: the same relative precision as hipporag1, whose seeds sum to 1.
// $massFloor is a lower bound on the $topK-th passage's mass, computed by the client (0: none): GDS starts a
// source node at (1 - $damping) x its bias and only adds to it, so the $topK passages with the largest seeds
// end with at least (1 - $damping) x the $topK-th largest seed, and no node below that can be among the top
// passages. Only the nodes at or above it are sorted and looked up (about 70 of 21k on musique_train); when
// fewer than $topK passages come back (a seeded passage was deleted meanwhile), the client runs it again
// with 0. The passage sources are written into the walk's settings, never held in a variable (every row would hold
// them: cypher/entity_ppr_passages.cypher). $graphVersion and $only (a filter's passages): see ppr_passages.cypher.
// Parameters: $graph, $graphVersion, $ns, $seeds, $passageSources, $damping, $maxIterations, $tolerance,
// $concurrency, $topK, $massFloor, $only.
CALL () {
  UNWIND $seeds AS seed
  MATCH (ph:Phrase {ns: $ns, text: seed.text})
  WHERE coalesce(ph.since, 0) <= $graphVersion
  RETURN collect([ph, seed.weight]) AS phraseSources
}
WITH phraseSources, reduce(t = 0.0, x IN phraseSources + $passageSources | t + x[1]) AS total
CALL gds.pageRank.stream($graph, {
  sourceNodes: phraseSources + [x IN $passageSources | [toInteger(x[0]), x[1]]], dampingFactor: $damping,
  relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance * total,
  concurrency: $concurrency, logProgress: false
})
YIELD nodeId, score
WITH nodeId, score WHERE score >= $massFloor AND ($only IS NULL OR nodeId IN $only)
WITH nodeId, score ORDER BY score DESC
WITH gds.util.asNode(nodeId) AS p, score
// a node deleted after the snapshot was projected can be gone or its id reused: keep this namespace's passages
WHERE p:Passage AND p.ns = $ns AND coalesce(p.since, 0) <= $graphVersion
WITH p, score LIMIT $topK
RETURN collect({id: p.id, title: p.title, text: p.text, score: score,
                meta: [k IN keys(p) WHERE k STARTS WITH 'meta_' | [k, p[k]]]}) AS ranked
