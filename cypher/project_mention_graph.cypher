// Project one namespace's mention graph into GDS (entity-ppr): every Phrase and every Passage node, the
// MENTIONED_IN edges of the entities each passage names (`named`), weight 1.0, and the SYNONYM edges between
// phrases, weight their cosine (HippoRAG's), all undirected. The synonym edges join the surface forms one
// entity takes in different passages ("alzheimer", "alzheimer s disease", "national alzheimer"), of which the
// query's entity links to one. RELATION edges are left out: on musique_train, offline SVO relations cost
// entity-ppr 4 points of R@5 (docs/results.md). A namespace indexed before mentions recorded `named` holds
// only its triples' arguments as mentions: those are walked instead. Parameters: $graph (name), $ns (namespace).
// Each edge also has a `path` weight, the one the entity walk follows (cypher/entity_walk.cypher): its weight,
// but 1e-9 on the mention of a phrase that leads nowhere else (named by that one passage, with no synonym). The
// passage sends such phrases next to none of its mass (the limit of a weight that tends to 0), so what it passes
// on goes along the entities it shares (a passage that shares none sends its own alike, and gets it all back); a
// phrase that leads nowhere still sends its one passage all it holds
// (its one edge is the whole of its degree), so a question that names it seeds that passage.
// One thread reads it (readConcurrency 1): GDS keeps buffers per reading thread and property, so with the default
// the second property doubled a small namespace's projection (demo: 31 to 59 MiB); with one thread it is 17 MiB,
// 58 MiB at 50,000 passages (61 before the second property), built as fast and walked as fast.
CALL () {
  MATCH (s:Phrase {ns: $ns})
  // (the first two tests read stored degrees; the named mentions are counted only where they decide)
  WITH s, CASE WHEN EXISTS { (s)-[:SYNONYM]-() } THEN 1.0
               WHEN COUNT { (s)-[:MENTIONED_IN]->() } <= 1 THEN 1.0e-9
               WHEN COUNT { (s)-[n:MENTIONED_IN]->() WHERE coalesce(n.named, true) } > 1 THEN 1.0
               ELSE 1.0e-9 END AS path
  OPTIONAL MATCH (s)-[m:MENTIONED_IN]->(t:Passage)
  WHERE coalesce(m.named, true)
  RETURN s, t, 1.0 AS weight, path
  UNION ALL
  MATCH (s:Phrase {ns: $ns})-[r:SYNONYM]->(t:Phrase)
  RETURN s, t, r.score AS weight, r.score AS path
  UNION ALL
  MATCH (s:Passage {ns: $ns})
  WHERE NOT EXISTS { (:Phrase)-[m:MENTIONED_IN]->(s) WHERE coalesce(m.named, true) }
  RETURN s, null AS t, null AS weight, null AS path
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {weight: weight, path: path} END},
  {undirectedRelationshipTypes: ['*'], readConcurrency: 1, logProgress: false}
) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
