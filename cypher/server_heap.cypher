// The server's heap as GDS sees it (gds.debug.sysInfo): what is free now and the maximum. No parameters.
CALL gds.debug.sysInfo() YIELD key, value
WITH collect([key, value]) AS info
RETURN [x IN info WHERE x[0] = 'availableHeapInBytes' | x[1]][0] AS availableHeap,
       [x IN info WHERE x[0] = 'heapMaxInBytes' | x[1]][0] AS maxHeap
