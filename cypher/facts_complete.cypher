// Whether namespace $ns has Fact nodes for all its passages: false only for a namespace indexed before
// Fact nodes existed (HippoRAG.rebuild_facts sets the flag); an unknown namespace is complete (empty).
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
RETURN n IS NULL OR coalesce(n.facts, false) AS complete
