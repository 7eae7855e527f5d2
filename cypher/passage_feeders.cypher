// Feeders: the rows hippo_neo4j/graph/reset.py adds to a projection that holds passages (project_passage_graph,
// project_mention_graph) on a GDS whose sourceNodes take node ids only (GDS 2.13), so that one walk gives every
// passage its own seed weight. Each passage p gets 36 feeder nodes (virtual ids FEEDER_BASE + id(p) x 36 + k, for
// k = 0..35, above every node id) with directed FEEDS edges: feeder k sends 2^-k of what it holds to p and the rest
// to one sink (FEEDER_BASE - 1), a node that sends nothing on. A feeder in sourceNodes starts at (1 - d) and hands
// p d(1 - d) 2^-k one step later: p walks as if seeded with weight d 2^-k, so seeding the feeders of the binary
// digits of w / top (36 of them: off by at most top x 2^-36) seeds p with w x d / top. The projection's own
// relationships stay undirected (LINK); the feeders take no part in them and receive nothing. $only: in a
// filter's projection (project_*_graph_within.cypher), its passages' node ids, the only ones fed; else null.
MATCH (p:Passage {ns: $ns})
WHERE $only IS NULL OR id(p) IN $only
UNWIND range(0, 35) AS k
WITH p, k, 35184372088832 + id(p) * 36 + k AS feeder
UNWIND CASE WHEN k = 0 THEN [[p, 1.0]] ELSE [[p, 2.0 ^ (-k)], [35184372088831, 1.0 - 2.0 ^ (-k)]] END AS edge
RETURN feeder AS s, edge[0] AS t, edge[1] AS weight, 'FEEDS' AS type
