// passage_vectors.cypher for the passages with node ids $nodes only (those new or changed since the client's
// cache was read), with their embeddings.
UNWIND $nodes AS node
MATCH (p:Passage)
WHERE id(p) = node AND p.ns = $ns AND p.embedding IS NOT NULL
RETURN collect(id(p)) AS nodes, collect(p.id) AS ids, collect(coalesce(p.since, 0)) AS since,
       collect(coalesce(p.hash, '')) AS hashes, collect(p.embedding) AS embeddings
