// GDS's estimate of the heap a projection of $nodes nodes and $relationships relationships (with the
// $properties of its kind)
// needs: checked against the server's free heap (server_heap.cypher) before projecting, so a graph that cannot
// fit fails at once.
CALL gds.graph.project.estimate('*', '*', {
  nodeCount: $nodes, relationshipCount: $relationships, relationshipProperties: $properties
})
YIELD bytesMin, bytesMax
RETURN bytesMin, bytesMax
