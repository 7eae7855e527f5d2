// New fact embeddings of namespace $ns (re-embedding): $rows [{key: fact id, embedding}].
UNWIND $rows AS row
MATCH (f:Fact {ns: $ns, id: row.key})
SET f.embedding = row.embedding
