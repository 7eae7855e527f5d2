MERGE (n:HippoNamespace {name: $ns})
SET n.version = coalesce(n.version, 0) + 1
RETURN n.version AS version
