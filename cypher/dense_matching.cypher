// Dense retrieval within a filter's passages ($nodes: their Neo4j node ids, cypher/passages_matching.cypher):
// the $topK with the largest exact cosine to $embedding, read from each passage's embedding. Used when few
// passages pass (hippo_neo4j/retrieve/dense.py, EXACT_WITHIN), where the vector index's nearest may hold none.
MATCH (p:Passage)
WHERE id(p) IN $nodes AND p.ns = $ns AND p.embedding IS NOT NULL
WITH p, vector.similarity.cosine(p.embedding, $embedding) AS similarity
ORDER BY similarity DESC, p.id
LIMIT $topK
RETURN p.id AS id, p.title AS title, p.text AS text, 2 * similarity - 1 AS score,
       [k IN keys(p) WHERE k STARTS WITH 'meta_' | [k, p[k]]] AS meta
