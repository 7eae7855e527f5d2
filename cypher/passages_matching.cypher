// The namespace's passages whose metadata passes every condition of $filters ([{key, op, value}]: key the
// `meta_` property, op one of = in < <= > >=; hippo_neo4j/metadata.py), as one row: their Neo4j node ids (what
// the retrievers restrict to), passage ids and content hashes (which key the projection of the graph they induce),
// how many passages the namespace holds (`total`), and when $texts and at most $exactWithin pass, the passages
// themselves (BM25 scores them client-side: hippo_neo4j/retrieve/bm25.py).
// Each value of a passage's metadata is a facet node (:HippoFacet {ns, key, value})-[:DESCRIBES]->(passage), a
// list of strings one per element (cypher/write_passages.cypher), so a condition is an index seek on
// (ns, key, value) (the hippo_facet constraint), equality and ranges alike, not a scan of the namespace's
// passages: a passage passes when it is reached from every condition. A value of another type than the
// condition's (a string against a number) passes no condition. Keys and values are parameters: this text is the
// same for every filter.
UNWIND range(0, size($filters) - 1) AS i
CALL (i) {
  WITH $filters[i] AS c WHERE c.op = '='
  MATCH (f:HippoFacet {ns: $ns, key: c.key, value: c.value})
  RETURN f
  UNION ALL
  WITH $filters[i] AS c WHERE c.op = 'in'
  UNWIND c.value AS value
  MATCH (f:HippoFacet {ns: $ns, key: c.key, value: value})
  RETURN f
  UNION ALL
  WITH $filters[i] AS c WHERE c.op = '<'
  MATCH (f:HippoFacet {ns: $ns, key: c.key}) WHERE f.value < c.value
  RETURN f
  UNION ALL
  WITH $filters[i] AS c WHERE c.op = '<='
  MATCH (f:HippoFacet {ns: $ns, key: c.key}) WHERE f.value <= c.value
  RETURN f
  UNION ALL
  WITH $filters[i] AS c WHERE c.op = '>'
  MATCH (f:HippoFacet {ns: $ns, key: c.key}) WHERE f.value > c.value
  RETURN f
  UNION ALL
  WITH $filters[i] AS c WHERE c.op = '>='
  MATCH (f:HippoFacet {ns: $ns, key: c.key}) WHERE f.value >= c.value
  RETURN f
}
MATCH (f)-[:DESCRIBES]->(p:Passage)
WITH DISTINCT i, p
WITH p, count(*) AS passed WHERE passed = size($filters)
WITH collect(p) AS passing
// the namespace's graph version and last re-embedding (as cypher/namespace_version.cypher), which key the
// projection of the graph these passages induce: read here, the query's walks need not ask again
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
RETURN [p IN passing | id(p)] AS nodes, [p IN passing | p.id] AS ids, [p IN passing | coalesce(p.hash, '')] AS hashes,
       CASE WHEN $texts AND size(passing) <= $exactWithin THEN
         [p IN passing | {id: p.id, title: p.title, text: p.text,
                          meta: [k IN keys(p) WHERE k STARTS WITH 'meta_' | [k, p[k]]]}] END AS passages,
       COUNT { MATCH (:Passage {ns: $ns}) } AS total, coalesce(n.version, 0) AS version, coalesce(n.graphEpoch, 0) AS epoch
