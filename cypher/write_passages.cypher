// One batch of passages (id, title, text, content hash, embedding or null, triple count).
UNWIND $passages AS row
MERGE (p:Passage {ns: $ns, id: row.id})
SET p.title = row.title, p.text = row.text, p.hash = row.hash, p.embedding = row.embedding,
    p.triples = row.triples
