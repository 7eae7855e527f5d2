// GDS's estimate of the heap a projection of $nodes nodes and $relationships relationships (with a weight)
// needs, and the heap the server has left: checked before projecting, so a graph that cannot fit fails at once.
CALL gds.graph.project.estimate('*', '*', {
  nodeCount: $nodes, relationshipCount: $relationships, relationshipProperties: 'weight'
})
YIELD bytesMin, bytesMax
CALL gds.debug.sysInfo() YIELD key, value
WITH bytesMin, bytesMax, collect([key, value]) AS info
RETURN bytesMin, bytesMax,
       [x IN info WHERE x[0] = 'availableHeapInBytes' | x[1]][0] AS availableHeap,
       [x IN info WHERE x[0] = 'heapMaxInBytes' | x[1]][0] AS maxHeap
