// Phrase nodes, with the namespace's phrase label (its indexes cover it); the embedding is set once, when the
// phrase is first seen, and so is `since`: the graph version of the write that created the node (the
// transaction bumped it first), so a query on an older projection knows the node is not in it. `fold`: the
// phrase's key without accents (hippo_neo4j/text.py fold_phrase), set only where it differs from the text: the
// question's words find the phrase by either (cypher/phrase_matches.cypher).
MATCH (n:HippoNamespace {name: $ns})
UNWIND $phrases AS row
MERGE (ph:Phrase {ns: $ns, text: row.text})
ON CREATE SET ph.embedding = row.embedding, ph.since = n.version, ph.fold = row.fold, ph:$($labels.phrase)
