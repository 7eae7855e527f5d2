// Query-to-fact linking (hipporag2): the $k nearest facts of $embedding through the namespace's fact vector
// index, best $topK, each with |P| (how many passages its subject and its object were extracted from: node
// specificity); `since`: the newest graph version that created its subject or object phrase; `complete` is false for a
// namespace indexed before Fact nodes existed (see facts_complete.cypher).
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
WITH n IS NULL OR coalesce(n.facts, false) AS complete
CALL db.index.vector.queryNodes($indexes.fact, $k, $embedding) YIELD node AS f, score
WITH complete, f, score ORDER BY score DESC LIMIT $topK
RETURN f.id AS id, f.subject AS subject, f.predicate AS predicate, f.object AS object, 2 * score - 1 AS score,
       COUNT { (:Phrase {ns: $ns, text: f.subject})-[:MENTIONED_IN]->() } AS subjectPassages,
       COUNT { (:Phrase {ns: $ns, text: f.object})-[:MENTIONED_IN]->() } AS objectPassages,
       COLLECT { MATCH (ph:Phrase {ns: $ns}) WHERE ph.text IN [f.subject, f.object]
                 RETURN coalesce(ph.since, 0) AS s ORDER BY s DESC LIMIT 1 }[0] AS since,
       complete
ORDER BY score DESC
