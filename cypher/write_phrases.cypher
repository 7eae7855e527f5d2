// Phrase nodes; the embedding is set once, when the phrase is first seen.
UNWIND $phrases AS row
MERGE (ph:Phrase {ns: $ns, text: row.text})
ON CREATE SET ph.embedding = row.embedding
