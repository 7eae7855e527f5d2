// entity-ppr's second round (hippo_neo4j/retrieve/entity_ppr.py): a Personalized PageRank over the namespace's
// mention projection from the passages the agreement placed alone ($placed: passage ids, equal weights), the
// first hop of the answer, so that its mass shows where that hop leads: passages that share its entities,
// the closer and the more specific the entity, the more. $maxIterations is the client's HOP_STEPS + 1 (the paths
// of up to 3 steps: an entity shared directly or through a synonym), not a walk to convergence. Returns the
// passages not in $placed among the $window nodes with the most mass, with their mass (the client takes the top
// $hopTop, ties by id); `complete`: they are $hopTop or more, or all the nodes with mass (else the client runs
// the statement again with a larger window).
// $only and $matching: as in entity_ppr_passages.cypher. Parameters: $graph, $graphVersion, $ns, $placed,
// $damping, $maxIterations, $tolerance, $concurrency, $hopTop, $window, $only, $matching.
CALL () {
  CALL () {
    MATCH (p:Passage {ns: $ns})
    WHERE p.id IN $placed AND coalesce(p.since, 0) <= $graphVersion
    RETURN collect(p) AS placedNodes
  }
  WITH [p IN placedNodes | [p, 1.0 / size(placedNodes)]] AS hopSources WHERE size(placedNodes) > 0
  CALL gds.pageRank.stream($graph, {
    sourceNodes: hopSources, dampingFactor: $damping,
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
                  AND NOT x[0].id IN $placed AND ($only IS NULL OR id(x[0]) IN $only)] AS found
RETURN [x IN found | {id: x[0].id, mass: x[1]}] AS hop,
       windowSize < $window OR size(found) >= $hopTop OR ($matching IS NOT NULL AND size(found) >= $matching - size($placed)) AS complete
