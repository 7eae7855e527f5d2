// entity-ppr's entity walk (hippo_neo4j/retrieve/entity_ppr.py), run beside cypher/entity_ppr_passages.cypher on
// the same projection with the same parameters: a Personalized PageRank from the query's phrase seeds alone
// ($seeds, the same weights). `entityWalk`: with $entityWalk > 0 and a phrase seed, the $entityWalk passages with
// the most mass; by linearity their mass here is the part of their mass in the full walk that came from the
// query's entities. `entityComplete`: the $window nodes with the most mass hold those passages, or are all the
// nodes with mass (else the client runs both statements again with a larger window). $graphVersion, $only and
// $matching: see ppr_passages.cypher. Parameters: $graph, $graphVersion, $ns, $seeds, $damping, $maxIterations,
// $tolerance, $concurrency, $window, $entityWalk, $only, $matching.
CALL () {
  CALL () {
    UNWIND $seeds AS seed
    MATCH (ph:Phrase {ns: $ns, text: seed.text})
    WHERE coalesce(ph.since, 0) <= $graphVersion
    RETURN collect([ph, seed.weight]) AS phraseSources
  }
  WITH phraseSources WHERE $entityWalk > 0 AND size(phraseSources) > 0
  CALL gds.pageRank.stream($graph, {
    sourceNodes: phraseSources, dampingFactor: $damping,
    relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance,
    concurrency: $concurrency, logProgress: false
  })
  YIELD nodeId, score
  WITH nodeId, score WHERE score > 0
  RETURN nodeId, score ORDER BY score DESC LIMIT $window
}
WITH collect([gds.util.asNode(nodeId), score]) AS window
WITH size(window) AS windowSize,
     [x IN window WHERE x[0]:Passage AND x[0].ns = $ns AND coalesce(x[0].since, 0) <= $graphVersion
                  AND ($only IS NULL OR id(x[0]) IN $only)][..$entityWalk] AS found
RETURN [x IN found | {id: x[0].id, mass: x[1]}] AS entityWalk,
       windowSize < $window OR size(found) >= $entityWalk OR ($matching IS NOT NULL AND size(found) >= $matching) AS entityComplete
