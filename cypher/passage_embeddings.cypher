// Every passage of namespace $ns with its text and embedding (in-process baseline; reusing vectors).
MATCH (p:Passage {ns: $ns})
RETURN p.id AS key, p.title AS title, p.text AS text, p.embedding AS e
