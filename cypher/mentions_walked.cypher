// Whether every mention of namespace $ns carries `walked` (cypher/walk_mentions.cypher): its `walkedAt` equals
// its graph version. With $version: first record that every mention carried it at that version (cypher/
// walk_mentions.cypher has just run), unless a write came since.
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
CALL (n) {
  WITH n WHERE $version IS NOT NULL AND n.version = $version
  SET n.walkedAt = $version
}
RETURN n IS NULL OR coalesce(n.walkedAt = n.version, false) AS walked
