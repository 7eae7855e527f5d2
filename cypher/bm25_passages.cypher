// BM25 baseline: the full-text index on passage title and text. $query is escaped Lucene syntax. The
// index's top $k hits are filtered to namespace $ns; `hits` lets the client widen $k when too few remain.
CALL db.index.fulltext.queryNodes('hippo_passage_text', $query, {limit: $k}) YIELD node, score
WITH collect({node: node, score: score}) AS found
UNWIND found AS hit
WITH hit.node AS node, hit.score AS score, size(found) AS hits
WHERE node.ns = $ns
RETURN node.id AS id, node.title AS title, node.text AS text, score, hits
ORDER BY score DESC
LIMIT $topK
