// The metadata of passages whose content did not change: $passages [{id, metadata, facets}], metadata the
// `meta_` properties to set (null: remove), facets as in write_passages.cypher (the passage's facets are made
// again; one that then describes no passage goes). Not versioned: no projection holds metadata, and filters
// read it at query time (cypher/passages_matching.cypher).
UNWIND $passages AS row
MATCH (p:Passage {ns: $ns, id: row.id})
SET p += row.metadata
WITH p, row
CALL (p) {
  MATCH (f:HippoFacet)-[d:DESCRIBES]->(p)
  DELETE d
  WITH f WHERE NOT (f)-[:DESCRIBES]->()
  DELETE f
}
CALL (p, row) {
  UNWIND row.facets AS facet
  MERGE (f:HippoFacet {ns: $ns, key: facet.key, value: facet.value})
  MERGE (f)-[:DESCRIBES]->(p)
}
