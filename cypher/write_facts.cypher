// Fact nodes: one per distinct normalised (subject, predicate, object) triple of a namespace, with the
// embedding of its text (query-to-fact linking, hipporag2) and the passage ids that asserted it, once per
// extraction, so deleting a passage removes exactly its entries. The embedding is set on creation.
// $facts rows: {id, subject, predicate, object, text, sources, embedding}.
UNWIND $facts AS row
MERGE (f:Fact {ns: $ns, id: row.id})
ON CREATE SET f.subject = row.subject, f.predicate = row.predicate, f.object = row.object, f.text = row.text,
              f.embedding = row.embedding, f:$($labels.fact), f.sources = []
SET f.sources = f.sources + row.sources
