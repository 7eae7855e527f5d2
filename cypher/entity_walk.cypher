// entity-ppr's entity walk (hippo_neo4j/retrieve/entity_ppr.py), run beside cypher/entity_ppr_passages.cypher on
// the same projection with the same parameters: a Personalized PageRank from the phrases the question names alone
// ($seeds, the same weights; none: no walk, an empty window). By linearity a passage's mass here is the part of its
// mass in the full walk that came from those phrases. Returns the $window nodes with the most mass as [node id,
// mass], most first (equal masses by node id).
// Parameters: $graph, $graphVersion, $ns, $seeds, $damping, $maxIterations, $tolerance, $concurrency, $window.
CALL () {
  UNWIND $seeds AS seed
  MATCH (ph:Phrase {ns: $ns, text: seed.text})
  WHERE coalesce(ph.since, 0) <= $graphVersion
  RETURN collect([ph, seed.weight]) AS phraseSources
}
CALL (phraseSources) {
  WITH phraseSources WHERE size(phraseSources) > 0
  CALL gds.pageRank.stream($graph, {
    sourceNodes: phraseSources, dampingFactor: $damping,
    relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance,
    concurrency: $concurrency, logProgress: false
  })
  YIELD nodeId, score
  WITH nodeId, score WHERE score > 0
  RETURN nodeId, score ORDER BY score DESC, nodeId LIMIT $window
}
WITH collect([nodeId, score]) AS window
RETURN window
