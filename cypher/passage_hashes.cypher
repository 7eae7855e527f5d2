// Content hashes and metadata (the `meta_` properties, as [property, value] pairs) of the passages among $ids
// that are already indexed in namespace $ns.
UNWIND $ids AS id
MATCH (p:Passage {ns: $ns, id: id})
RETURN p.id AS id, p.hash AS hash, [k IN keys(p) WHERE k STARTS WITH 'meta_' | [k, p[k]]] AS meta
