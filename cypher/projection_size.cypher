// Size of one GDS in-memory graph: node and relationship counts and its memory footprint. Parameter: $graph.
CALL gds.graph.list($graph) YIELD graphName, nodeCount, relationshipCount, memoryUsage, sizeInBytes
RETURN graphName, nodeCount, relationshipCount, memoryUsage, sizeInBytes
