// One batch of passages (id, title, text, content hash, embedding or null, triple count).
// The namespace's passage label (its indexes cover it) is set on creation. `since`: the graph version of the write that created the node (see write_phrases.cypher).
MATCH (n:HippoNamespace {name: $ns})
UNWIND $passages AS row
MERGE (p:Passage {ns: $ns, id: row.id})
ON CREATE SET p.since = n.version, p:$($labels.passage)
SET p.title = row.title, p.text = row.text, p.hash = row.hash, p.embedding = row.embedding,
    p.triples = row.triples
