// The cosine of the query ($embedding) and every passage of the namespace with an embedding in graph
// version $graphVersion, computed by the server: what the client's passage-vector cache computes itself
// while the namespace's vectors fit its memory limit (graph/passage_vectors.py). One row of parallel lists;
// `cosines` are cosines themselves (the function scores (1 + cos) / 2).
MATCH (p:Passage {ns: $ns})
WHERE p.embedding IS NOT NULL AND coalesce(p.since, 0) <= $graphVersion
RETURN collect(id(p)) AS nodes, collect(p.id) AS ids,
       collect(2 * vector.similarity.cosine(p.embedding, $embedding) - 1) AS cosines
