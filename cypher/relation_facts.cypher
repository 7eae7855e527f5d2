// Every extracted triple of namespace $ns as recorded in RELATION provenance (subject, object, the
// predicate as extracted, the passage that asserted it): what Fact nodes are derived from when a namespace
// indexed before facts existed is brought up to date (HippoRAG.rebuild_facts).
MATCH (s:Phrase {ns: $ns})-[r:RELATION]->(o:Phrase)
UNWIND range(0, size(r.sources) - 1) AS i
RETURN s.text AS subject, o.text AS object, r.predicates[i] AS predicate, r.sources[i] AS passage
