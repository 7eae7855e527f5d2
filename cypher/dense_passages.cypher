// Dense retrieval: the $k nearest passages (all namespaces) through the passage vector index, kept to
// namespace $ns, cosine similarity. `seen` tells the client whether widening $k could find more.
CALL db.index.vector.queryNodes('hippo_passage_embedding', $k, $embedding) YIELD node, score
WITH collect({node: node, score: score}) AS found
UNWIND found AS hit
WITH hit.node AS node, hit.score AS score, size(found) AS seen
WHERE node.ns = $ns
RETURN node.id AS id, node.title AS title, node.text AS text, 2 * score - 1 AS score, seen
ORDER BY score DESC
LIMIT $topK
