// Content hashes of the passages among $ids that are already indexed in namespace $ns.
UNWIND $ids AS id
MATCH (p:Passage {ns: $ns, id: id})
RETURN p.id AS id, p.hash AS hash
