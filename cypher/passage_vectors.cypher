// The namespace's passages with an embedding, as the client's passage-vector cache reads them
// (graph/passage_vectors.py), in one row of parallel lists: the Neo4j node ids (what GDS takes as PPR
// sources), the passage ids, `since`, the content hashes (which change when the passage does; '' before the
// passage is sealed) and, with $vectors, the embeddings (else an empty list: the embeddings are then not
// read). passage_vectors_of.cypher reads given passages.
MATCH (p:Passage {ns: $ns})
WHERE p.embedding IS NOT NULL
RETURN collect(id(p)) AS nodes, collect(p.id) AS ids, collect(coalesce(p.since, 0)) AS since,
       collect(coalesce(p.hash, '')) AS hashes, collect(CASE WHEN $vectors THEN p.embedding END) AS embeddings
