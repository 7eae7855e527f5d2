// BM25 baseline: the namespace's full-text index on passage title and text. $query is escaped Lucene syntax.
// Equal scores in the order of the passage ids (Cypher's sort keeps no order of its own among them).
CALL db.index.fulltext.queryNodes($indexes.text, $query, {limit: $topK}) YIELD node, score
RETURN node.id AS id, node.title AS title, node.text AS text, score,
       [k IN keys(node) WHERE k STARTS WITH 'meta_' | [k, node[k]]] AS meta
ORDER BY score DESC, id
