// Which of the facts $ids already exist in namespace $ns and will survive the replacement of the passages
// $replacing (see existing_phrases.cypher): those keep their embedding, the others are embedded.
UNWIND $ids AS id
MATCH (f:Fact {ns: $ns, id: id})
WHERE any(x IN f.sources WHERE NOT x IN $replacing)
RETURN f.id AS id
