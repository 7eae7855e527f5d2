// entity-ppr's entity walk (hippo_neo4j/retrieve/entity_ppr.py), run beside cypher/entity_ppr_passages.cypher on
// the same projection with the same parameters: a Personalized PageRank from the phrases the question names alone
// ($seeds, the same weights; none: no walk, an empty window), along the paths between passages: by the `path`
// weights (cypher/project_mention_graph.cypher), a passage passes its mass on along the entities it shares, not
// into the phrases it alone names, which would only hand it back. Returns the $window nodes with the most mass as
// [node id, mass], most first (equal masses by node id).
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
    relationshipWeightProperty: 'path', maxIterations: $maxIterations, tolerance: $tolerance,
    concurrency: $concurrency, logProgress: false
  })
  YIELD nodeId, score
  WITH nodeId, score WHERE score > 0
  RETURN nodeId, score ORDER BY score DESC, nodeId LIMIT $window
}
WITH collect([nodeId, score]) AS window
RETURN window
