// Mark a batch's passages complete: the content hash is set once their SYNONYM edges are written, in
// the same transaction. A passage without a hash is re-indexed from scratch by the next run.
UNWIND $passages AS row
MATCH (p:Passage {ns: $ns, id: row.id})
SET p.hash = row.hash
