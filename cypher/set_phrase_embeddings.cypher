// New phrase embeddings of namespace $ns (re-embedding): $rows [{key: phrase text, embedding}].
UNWIND $rows AS row
MATCH (ph:Phrase {ns: $ns, text: row.key})
SET ph.embedding = row.embedding
