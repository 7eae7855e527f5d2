// The graph version of a namespace: bumped by every write, so GDS projections know they are stale.
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
RETURN coalesce(n.version, 0) AS version
