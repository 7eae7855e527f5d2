// Remove passages and exactly their contribution: their MENTIONED_IN edges, their entries in RELATION
// provenance (an edge left with no support goes), and phrases no passage mentions any more (with their
// SYNONYM edges). Parameters: $ns, $ids. Returns how many passages were found.
UNWIND $ids AS id
MATCH (p:Passage {ns: $ns, id: id})
OPTIONAL MATCH (s:Phrase)-[:MENTIONED_IN]->(p)
OPTIONAL MATCH (s)-[r:RELATION]->(:Phrase)
  WHERE id IN r.sources
WITH id, p, collect(DISTINCT r) AS rels, collect(DISTINCT s) AS phrases
FOREACH (r IN rels |
  SET r.predicates = [i IN range(0, size(r.sources) - 1) WHERE r.sources[i] <> id | r.predicates[i]])
FOREACH (r IN rels | SET r.sources = [x IN r.sources WHERE x <> id])
FOREACH (r IN rels | SET r.weight = size(r.sources))
FOREACH (r IN [x IN rels WHERE x.weight = 0] | DELETE r)
DETACH DELETE p
WITH phrases
UNWIND phrases AS ph
WITH DISTINCT ph
WHERE NOT (ph)-[:MENTIONED_IN]->()
DETACH DELETE ph
RETURN count(*) AS orphan_phrases
