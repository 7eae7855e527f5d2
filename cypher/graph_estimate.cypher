// GDS's estimate of the heap a namespace's graph of one kind needs, as a native projection of the namespace's
// labels ($nodes) and the relationship types it walks ($relationships: a relationship projection, undirected, with
// a weight): GDS reads the node and relationship counts from the database's count store, so this takes milliseconds
// where counting the namespace's nodes and edges took most of a second at 50,000 passages (cypher/stats.cypher).
// The graph projected from rows holds the same nodes and edges (the mention graph: the named mentions only, so
// the figure is an upper bound). Checked against the server's free heap (server_heap.cypher) before projecting.
CALL gds.graph.project.estimate($nodes, $relationships)
YIELD nodeCount, relationshipCount, bytesMin, bytesMax
RETURN nodeCount AS nodes, relationshipCount AS relationships, bytesMin, bytesMax
