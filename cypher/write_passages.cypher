// One batch of passages (id, title, text, content hash, embedding or null, triple count, metadata: the `meta_`
// properties to set, and facets: [{key, value}], one per value of the metadata, a list one per element, which
// filters seek (cypher/passages_matching.cypher); an updated passage was deleted first, so none is left from
// before).
// The namespace's passage label (its indexes cover it) is set on creation. `since`: the graph version of the write that created the node (see write_phrases.cypher).
MATCH (n:HippoNamespace {name: $ns})
UNWIND $passages AS row
MERGE (p:Passage {ns: $ns, id: row.id})
ON CREATE SET p.since = n.version, p:$($labels.passage)
SET p.title = row.title, p.text = row.text, p.hash = row.hash, p.embedding = row.embedding,
    p.triples = row.triples
SET p += row.metadata
WITH p, row
CALL (p, row) {
  UNWIND row.facets AS facet
  MERGE (f:HippoFacet {ns: $ns, key: facet.key, value: facet.value})
  MERGE (f)-[:DESCRIBES]->(p)
}
