// LLM-free retrieval (mode entity-ppr): one Personalized PageRank over the namespace's mention projection
// (phrases + passages; MENTIONED_IN links a passage to every entity it names), seeded with
//   - the query's entities' phrases: $seeds [{text, weight}], weights 1/|P_i| scaled by the client to sum $entityShare;
//   - every passage more similar to the query than the namespace's average, by its z-score
//     z = (cos - mean) / sd: $passageSources [[node id (a float: toInteger), z / sum of z]], computed by the client
//     (graph/passage_vectors.py), here scaled to sum 1 - $entityShare (`passageShare`; 1 when no entity links);
// then passages ranked by their own PPR mass. `contributors`: the passage's phrases among the $topPhrases
// with the most mass (of the $window nodes with the most), with that mass. `ranked` also holds the passages of
// $include (passage ids the client may place first) that are in the window below the top $topK.
// The entity walk (the same seeds' phrases alone) is cypher/entity_walk.cypher, run beside this statement.
// $graphVersion and $only (a filter's passages, the only ones ranked; `complete` then also when all $matching
// of them are in the window): see ppr_passages.cypher. Parameters: $graph, $graphVersion, $ns, $seeds,
// $passageSources, $entityShare, $damping, $maxIterations, $tolerance, $concurrency, $topK, $topPhrases, $window,
// $include, $only, $matching.
// the walk runs in a subquery that returns only (nodeId, score) rows: the sort below then buffers small
// rows, not rows that also carry the seed lists (the server's transaction memory counts those per row)
CALL () {
  CALL () {
    UNWIND $seeds AS seed
    MATCH (ph:Phrase {ns: $ns, text: seed.text})
    WHERE coalesce(ph.since, 0) <= $graphVersion
    RETURN collect([ph, seed.weight]) AS phraseSources
  }
  WITH phraseSources, CASE WHEN size(phraseSources) > 0 THEN 1.0 - $entityShare ELSE 1.0 END AS passageShare
  WITH phraseSources, passageShare, [x IN $passageSources | [toInteger(x[0]), passageShare * x[1]]] AS passageSources
  CALL gds.pageRank.stream($graph, {
    sourceNodes: phraseSources + passageSources, dampingFactor: $damping,
    relationshipWeightProperty: 'weight', maxIterations: $maxIterations, tolerance: $tolerance,
    concurrency: $concurrency, logProgress: false
  })
  YIELD nodeId, score
  WITH passageShare, nodeId, score WHERE score > 0
  RETURN passageShare, nodeId, score
}
// only the $window nodes with the most mass are looked up: the top passages are among them when they hold
// $topK passages or are all the nodes with mass (`complete`; else the client runs the statement again with a
// larger window), and the explanation's phrases are the window's
WITH passageShare, nodeId, score ORDER BY score DESC LIMIT $window
// a node deleted after the snapshot was projected can be gone or its id reused: keep this namespace's nodes
WITH passageShare, gds.util.asNode(nodeId) AS n, score
WITH passageShare, n, score, n.ns = $ns AND coalesce(n.since, 0) <= $graphVersion AS ours
WITH passageShare, count(*) AS windowSize,
     collect(CASE WHEN ours AND n:Passage AND ($only IS NULL OR id(n) IN $only) THEN [n, score] END) AS passages,
     collect(CASE WHEN ours AND n:Phrase THEN [n, score] END) AS phrases
CALL (phrases) {
  UNWIND phrases AS x
  // with a filter the walk ran on the graph its passages induce, whose phrases are all mentioned by them: the
  // explanation names only those
  WITH x ORDER BY x[1] DESC LIMIT $topPhrases
  RETURN collect(x) AS top
}
CALL (passages, top) {
  UNWIND passages AS x
  WITH x ORDER BY x[1] DESC
  WITH collect(x) AS sorted
  UNWIND sorted[..$topK] + [x IN sorted[$topK..] WHERE x[0].id IN $include] AS x
  WITH x[0] AS p, x[1] AS score
  OPTIONAL MATCH (ph:Phrase)-[:MENTIONED_IN]->(p)
  WITH p, score, collect(ph) AS named
  RETURN collect({id: p.id, title: p.title, text: p.text, score: score,
                  contributors: [t IN top WHERE t[0] IN named | {phrase: t[0].text, contribution: t[1]}],
                  meta: [k IN keys(p) WHERE k STARTS WITH 'meta_' | [k, p[k]]]}) AS ranked
}
RETURN ranked, [t IN top | {phrase: t[0].text, mass: t[1]}][..10] AS topPhrases, passageShare,
       windowSize < $window OR size(passages) >= $topK OR ($matching IS NOT NULL AND size(passages) >= $matching) AS complete
