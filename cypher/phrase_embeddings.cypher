// Every phrase of namespace $ns with its embedding (the in-process baseline; reusing vectors across indexes).
MATCH (n:Phrase {ns: $ns})
RETURN n.text AS key, n.embedding AS e
