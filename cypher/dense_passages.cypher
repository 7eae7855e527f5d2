// Dense retrieval: the $topK best of the $k nearest passages through the namespace's passage vector index,
// cosine similarity ($k is the search's beam: a larger one comes closer to the exact nearest).
CALL db.index.vector.queryNodes($indexes.passage, $k, $embedding) YIELD node, score
RETURN node.id AS id, node.title AS title, node.text AS text, 2 * score - 1 AS score,
       [k IN keys(node) WHERE k STARTS WITH 'meta_' | [k, node[k]]] AS meta
ORDER BY score DESC
LIMIT $topK
