// Query-to-fact linking (hipporag2): the $k nearest facts (all namespaces) of $embedding through the fact
// vector index, kept to namespace $ns, best $topK, each with |P| (how many passages its subject and its
// object were extracted from: node specificity). `seen` tells the client whether widening $k could find more;
// `since`: the newest graph version that created its subject or object phrase; `complete` is false for a
// namespace indexed before Fact nodes existed (see facts_complete.cypher).
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
WITH n IS NULL OR coalesce(n.facts, false) AS complete
CALL db.index.vector.queryNodes('hippo_fact_embedding', $k, $embedding) YIELD node, score
WITH complete, collect({node: node, score: score}) AS found
UNWIND found AS hit
WITH complete, hit.node AS f, hit.score AS score, size(found) AS seen
WHERE f.ns = $ns
WITH complete, f, score, seen ORDER BY score DESC LIMIT $topK
RETURN f.id AS id, f.subject AS subject, f.predicate AS predicate, f.object AS object, 2 * score - 1 AS score,
       COUNT { (:Phrase {ns: $ns, text: f.subject})-[:MENTIONED_IN]->() } AS subjectPassages,
       COUNT { (:Phrase {ns: $ns, text: f.object})-[:MENTIONED_IN]->() } AS objectPassages,
       COLLECT { MATCH (ph:Phrase {ns: $ns}) WHERE ph.text IN [f.subject, f.object]
                 RETURN coalesce(ph.since, 0) AS s ORDER BY s DESC LIMIT 1 }[0] AS since,
       seen, complete
ORDER BY score DESC
