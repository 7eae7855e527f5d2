// Remove passages and exactly their contribution: their MENTIONED_IN edges, their entries in RELATION
// and Fact provenance (an edge or fact left with no support goes), and phrases no passage mentions any more (with their
// SYNONYM edges), and their metadata facets that describe no other passage. Parameters: $ns, $ids. Returns how many passages were found.
// Each RELATION edge is rewritten once, from all of $ids together: several passages of one batch may
// support the same edge, and its `sources` and `predicates` lists must stay aligned.
UNWIND $ids AS id
MATCH (p:Passage {ns: $ns, id: id})
OPTIONAL MATCH (s:Phrase)-[:MENTIONED_IN]->(p)
OPTIONAL MATCH (f:HippoFacet)-[:DESCRIBES]->(p)
WITH collect(DISTINCT p) AS passages, collect(DISTINCT s) AS phrases, collect(DISTINCT f) AS facets
CALL (phrases) {
  UNWIND phrases AS s
  MATCH (s)-[r:RELATION]->(:Phrase)
  WHERE any(x IN r.sources WHERE x IN $ids)
  WITH DISTINCT r
  WITH r, [i IN range(0, size(r.sources) - 1) WHERE NOT r.sources[i] IN $ids] AS keep
  WITH r, [i IN keep | r.sources[i]] AS sources, [i IN keep | r.predicates[i]] AS predicates
  SET r.sources = sources, r.predicates = predicates, r.weight = size(sources)
  WITH r WHERE r.weight = 0
  DELETE r
}
// a passage's facts have a subject among its phrases (hippo_fact_subject index)
CALL (phrases) {
  UNWIND phrases AS s
  MATCH (f:Fact {ns: $ns, subject: s.text})
  WHERE any(x IN f.sources WHERE x IN $ids)
  WITH DISTINCT f
  WITH f, [x IN f.sources WHERE NOT x IN $ids] AS sources
  SET f.sources = sources
  WITH f WHERE size(sources) = 0
  DELETE f
}
CALL (passages) {
  UNWIND passages AS p
  DETACH DELETE p
}
CALL (phrases) {
  UNWIND phrases AS ph
  WITH ph WHERE NOT (ph)-[:MENTIONED_IN]->()
  DETACH DELETE ph
}
// and metadata facets that describe no passage any more
CALL (facets) {
  UNWIND facets AS f
  WITH f WHERE NOT (f)-[:DESCRIBES]->()
  DELETE f
}
RETURN size(passages) AS deleted
