// LLM-free retrieval (mode entity-ppr), its walk: one Personalized PageRank over the namespace's mention projection
// (phrases + passages; MENTIONED_IN links a passage to every entity it names), seeded with
//   - the phrases the question names: $seeds [{text, weight}], weights scaled by the client to sum $entityShare;
//   - every passage more similar to the query than the namespace's average, by its z-score
//     z = (cos - mean) / sd: $passageSources [[node id (a float: toInteger), z / sum of z]], computed by the client
//     (graph/passage_vectors.py), here scaled to sum 1 - $entityShare (`passageShare`; 1 when no phrase seeds).
// Returns the $window nodes with the most mass as [node id, mass], most first (equal masses by node id): the client tells passages from phrases by the node ids of
// the passages it seeded (the projection's own, hippo_neo4j/retrieve/entity_ppr.py) and ranks the passages. The
// entity walk (the seeds' phrases alone) is cypher/entity_walk.cypher, run beside this statement.
// The passage sources are written into the walk's settings, never held in a variable: a row holds every variable
// in scope, and the sort keeps $window rows, so a list of the namespace's passages held as one made the statement's
// memory their number times the window (about 0.2 GiB for 1,000 passage sources; at 50,000 passages it exceeded the
// server's transaction memory). bench/walk_memory.py measures it.
// $graphVersion: the projection's graph version (phrases created after it are not in it). Parameters: $graph,
// $graphVersion, $ns, $seeds, $passageSources, $entityShare, $damping, $maxIterations, $tolerance, $concurrency,
// $window.
CALL () {
  UNWIND $seeds AS seed
  MATCH (ph:Phrase {ns: $ns, text: seed.text})
  WHERE coalesce(ph.since, 0) <= $graphVersion
  RETURN collect([ph, seed.weight]) AS phraseSources
}
WITH phraseSources, CASE WHEN size(phraseSources) > 0 THEN 1.0 - $entityShare ELSE 1.0 END AS passageShare
CALL (phraseSources, passageShare) {
  CALL gds.pageRank.stream($graph, {
    sourceNodes: phraseSources + [x IN $passageSources | [toInteger(x[0]), passageShare * x[1]]], dampingFactor: $damping,
    relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance,
    concurrency: $concurrency, logProgress: false
  })
  YIELD nodeId, score
  WITH nodeId, score WHERE score > 0
  RETURN nodeId, score ORDER BY score DESC, nodeId LIMIT $window
}
WITH passageShare, collect([nodeId, score]) AS window
RETURN window, passageShare
