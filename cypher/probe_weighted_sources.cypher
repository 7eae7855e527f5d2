// Capability probe: does GDS PageRank take weighted sourceNodes ([[node, weight], ...], GDS 2.17+)? A memory
// estimate of a fictitious two-node graph parses the algorithm's configuration without touching any graph:
// it fails on a GDS that takes node ids only (GDS 2.13). No parameters.
CALL gds.pageRank.stream.estimate(
  {nodeCount: 2, relationshipCount: 1, nodeProjection: '*', relationshipProjection: '*'},
  {sourceNodes: [[0, 0.5]]}
)
YIELD bytesMin
RETURN bytesMin
