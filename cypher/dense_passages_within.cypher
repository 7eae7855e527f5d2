// Dense retrieval within a filter's passages when many pass ($nodes: their Neo4j node ids): the $k nearest
// passages through the namespace's passage vector index, those of $nodes kept, the $topK best. $k is chosen
// so that $topK of them pass in expectation; short of that, the client asks dense_matching.cypher.
CALL db.index.vector.queryNodes($indexes.passage, $k, $embedding) YIELD node, score
WITH node, score WHERE id(node) IN $nodes
RETURN node.id AS id, node.title AS title, node.text AS text, 2 * score - 1 AS score,
       [k IN keys(node) WHERE k STARTS WITH 'meta_' | [k, node[k]]] AS meta
ORDER BY score DESC
LIMIT $topK
