// BM25 within a filter that leaves many passages ($nodes: their Neo4j node ids, cypher/passages_matching.cypher;
// few are scored client-side, hippo_neo4j/retrieve/bm25.py): every hit of the namespace's full-text index
// ($limit: the namespace's passages), those of $nodes kept, the $topK best.
// The index cannot read metadata, and its top hits may hold none of the filter's passages. The scores are the
// namespace's (its term statistics), not those of an index over the filter's passages alone.
CALL db.index.fulltext.queryNodes($indexes.text, $query, {limit: $limit}) YIELD node, score
WITH node, score WHERE id(node) IN $nodes
RETURN node.id AS id, node.title AS title, node.text AS text, score,
       [k IN keys(node) WHERE k STARTS WITH 'meta_' | [k, node[k]]] AS meta
ORDER BY score DESC, id
LIMIT $topK
