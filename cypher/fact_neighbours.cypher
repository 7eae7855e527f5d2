// Query-to-fact linking (hipporag2): the $k nearest facts of $embedding through the namespace's fact vector
// index, best $topK, each with |P| (how many passages its subject and its object were extracted from: node
// specificity); `since`: the newest graph version that created its subject or object phrase; `complete` is false for a
// namespace indexed before Fact nodes existed (see facts_complete.cypher).
// Within a filter's passages ($ids: their passage ids; null without a filter) only the facts they asserted (a
// fact's `sources`) count: of the index's $k nearest when many pass, and when few pass ($nodes: their Neo4j node
// ids, else null) by exact cosine over the facts found from the phrases those passages mention (a fact's subject
// is one), since the index's nearest may hold none of them (hippo_neo4j/retrieve/linking.py). |P| then counts
// those passages alone, as in the graph they induce, which the walk runs on (project_*_graph_within.cypher).
// `nsVersion`: the namespace's graph version in the same snapshot (the walk that follows takes its projection's
// version from it: graph/store.py).
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
WITH n IS NULL OR coalesce(n.facts, false) AS complete, coalesce(n.version, 0) AS nsVersion
CALL () {
  WITH 1 AS one WHERE $nodes IS NULL
  CALL db.index.vector.queryNodes($indexes.fact, $k, $embedding) YIELD node AS f, score
  WITH f, score WHERE $ids IS NULL OR any(source IN f.sources WHERE source IN $ids)
  RETURN f, score
  UNION ALL
  WITH 1 AS one WHERE $nodes IS NOT NULL
  MATCH (ph:Phrase)-[:MENTIONED_IN]->(p:Passage)
  WHERE id(p) IN $nodes AND p.ns = $ns
  WITH DISTINCT ph.text AS subject
  MATCH (f:Fact {ns: $ns, subject: subject})
  WHERE f.embedding IS NOT NULL AND any(source IN f.sources WHERE source IN $ids)
  RETURN f, vector.similarity.cosine(f.embedding, $embedding) AS score
}
WITH complete, nsVersion, f, score ORDER BY score DESC, f.id LIMIT $topK
// a fact deleted (its last passage was) after the index found it has no subject: left out
WITH complete, nsVersion, score, f.id AS id, f.subject AS subject, f.predicate AS predicate, f.object AS object
WHERE subject IS NOT NULL AND predicate IS NOT NULL AND object IS NOT NULL
RETURN id, subject, predicate, object, 2 * score - 1 AS score,
       COUNT { (:Phrase {ns: $ns, text: subject})-[:MENTIONED_IN]->(p) WHERE $ids IS NULL OR p.id IN $ids } AS subjectPassages,
       COUNT { (:Phrase {ns: $ns, text: object})-[:MENTIONED_IN]->(p) WHERE $ids IS NULL OR p.id IN $ids } AS objectPassages,
       COLLECT { MATCH (ph:Phrase {ns: $ns}) WHERE ph.text IN [subject, object]
                 RETURN coalesce(ph.since, 0) AS s ORDER BY s DESC LIMIT 1 }[0] AS since,
       complete, nsVersion
ORDER BY score DESC
