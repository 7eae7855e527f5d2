// The graph version of a namespace: bumped by every write, so GDS projections know they are stale. `epoch`: the
// version of its last re-embedding (its synonym edges rebuilt; 0 if never), which a filter's projection is keyed by.
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
RETURN coalesce(n.version, 0) AS version, coalesce(n.graphEpoch, 0) AS epoch
