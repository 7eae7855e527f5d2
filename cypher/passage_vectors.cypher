// The namespace's passages with an embedding, as the client's passage-vector cache reads them
// (graph/passage_vectors.py): the Neo4j node id (what GDS takes as a PPR source), the passage id, `since`,
// the content hash (which changes when the passage does) and, with $vectors, the embedding.
// $nodes: only these node ids (the passages new or changed since the cache was read); null: all of them.
CALL () {
  MATCH (p:Passage {ns: $ns})
  WHERE $nodes IS NULL AND p.embedding IS NOT NULL
  RETURN p
  UNION
  UNWIND coalesce($nodes, []) AS node
  MATCH (p:Passage)
  WHERE id(p) = node AND p.ns = $ns AND p.embedding IS NOT NULL
  RETURN p
}
RETURN id(p) AS node, p.id AS id, coalesce(p.since, 0) AS since, p.hash AS hash,
       CASE WHEN $vectors THEN p.embedding END AS embedding
