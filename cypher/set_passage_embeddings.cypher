// New passage embeddings of namespace $ns (re-embedding): $rows [{key: passage id, embedding}].
UNWIND $rows AS row
MATCH (p:Passage {ns: $ns, id: row.key})
SET p.embedding = row.embedding
