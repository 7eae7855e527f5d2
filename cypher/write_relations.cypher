// One RELATION edge per (subject, object) phrase pair. Each extracted triple appends its passage id and
// predicate to the edge's provenance lists; weight = how often the pair was extracted across the corpus,
// so removing a passage's entries removes its contribution exactly.
UNWIND $relations AS row
MATCH (s:Phrase {ns: $ns, text: row.subject}), (o:Phrase {ns: $ns, text: row.object})
MERGE (s)-[r:RELATION]->(o)
ON CREATE SET r.sources = [], r.predicates = []
SET r.sources = r.sources + row.passage, r.predicates = r.predicates + row.predicate
SET r.weight = size(r.sources)
