// Every write bumps the namespace's graph version (stale projections). A namespace node created by this
// version of hippo-neo4j holds Fact nodes for all its passages (`facts`); one created before Fact nodes
// existed lacks the flag until HippoRAG.rebuild_facts derives them; likewise `folded`: its phrases carry
// their key without accents (cypher/unfolded_phrases.cypher).
MERGE (n:HippoNamespace {name: $ns})
ON CREATE SET n.facts = true, n.folded = true
SET n.version = coalesce(n.version, 0) + 1
RETURN n.version AS version
