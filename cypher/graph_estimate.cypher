// GDS's estimate of the heap a namespace's graph of one kind needs, as a native projection of the namespace's
// labels ($nodes) and the relationship types it walks ($relationships: a relationship projection, undirected, with
// a weight): GDS reads the node and relationship counts from the database's count store, where counting the
// namespace's nodes and edges (cypher/stats.cypher) took about half a second of each build at 50,000 passages
// (docs/scale.md, "Native projections, the memory check, and the first query").
// The graph projected from rows holds the same nodes and edges (the mention graph: the named mentions only, so
// the figure is an upper bound). Checked against the server's free heap (server_heap.cypher) before projecting.
CALL gds.graph.project.estimate($nodes, $relationships)
YIELD nodeCount, relationshipCount, bytesMin, bytesMax
RETURN nodeCount AS nodes, relationshipCount AS relationships, bytesMin, bytesMax
