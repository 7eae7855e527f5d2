// Remove one namespace entirely, in batches. Parameter: $ns.
MATCH (n) WHERE (n:Passage OR n:Phrase OR n:Fact OR n:Document OR n:HippoFacet OR n:HippoProjectionLock) AND n.ns = $ns
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
