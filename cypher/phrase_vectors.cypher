// The namespace's phrases with an embedding, as a bulk run's synonym linking holds them in the client
// (graph/synonyms.py), in one row: the namespace's graph version, the phrase texts and, with $vectors, their
// embeddings (else an empty list: the embeddings are then not read). phrase_vectors_of.cypher reads given
// phrases.
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
CALL (n) {
  MATCH (ph:Phrase {ns: $ns})
  WHERE ph.embedding IS NOT NULL
  RETURN collect(ph.text) AS texts, collect(CASE WHEN $vectors THEN ph.embedding END) AS embeddings
}
RETURN coalesce(n.version, 0) AS version, texts, embeddings
