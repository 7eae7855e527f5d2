// Every write bumps the namespace's graph version (stale projections). A namespace node created by this
// version of hippo-neo4j holds Fact nodes for all its passages (`facts`); one created before Fact nodes
// existed lacks the flag until HippoRAG.rebuild_facts derives them; likewise `folded`: its phrases carry
// their key without accents (cypher/unfolded_phrases.cypher). `walkedAt`: the version up to which every mention
// carries `walked` (cypher/write_mentions.cypher); a write moves it along while it is current, and a write by a
// client from before `walked`, which runs its own copy of this statement, leaves it behind
// (cypher/walk_mentions.cypher catches up).
MERGE (n:HippoNamespace {name: $ns})
ON CREATE SET n.facts = true, n.folded = true, n.walkedAt = 0
SET n.walkedAt = CASE WHEN n.walkedAt = coalesce(n.version, 0) THEN n.walkedAt + 1 ELSE n.walkedAt END
SET n.version = coalesce(n.version, 0) + 1
RETURN n.version AS version
