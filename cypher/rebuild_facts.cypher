// Fact nodes derived from RELATION provenance (HippoRAG.rebuild_facts): created with their embedding when
// missing; `sources` set to the full list recomputed from the graph, so running it again changes nothing.
UNWIND $facts AS row
MERGE (f:Fact {ns: $ns, id: row.id})
ON CREATE SET f.subject = row.subject, f.predicate = row.predicate, f.object = row.object, f.text = row.text,
              f.embedding = row.embedding, f:$($labels.fact)
SET f.sources = row.sources
