// A Personalized PageRank with a weighted reset on a GDS whose sourceNodes take node ids only (GDS 2.13, the
// line built for Neo4j 5.26). hippo_neo4j/graph/reset.py splices this in place of each
//   CALL gds.pageRank.stream($graph, {sourceNodes: SOURCES, ..., tolerance: TOLERANCE, ...}) YIELD nodeId, score
// of a PPR statement, where SOURCES is a list of [node or node id, weight]; CONFIG is the call's other settings.
// GDS's PageRank is linear in its reset: with sourceNodes S every node of S starts at (1 - d) and
// score = (1 - d)·[node in S] + d·(its in-neighbours' contributions), so the weighted walk is a sum of walks:
//   - phrases (given as nodes; a query has a few distinct weights): a walk per distinct weight, times it;
//   - passages (given as node ids; one weight each): one walk from their feeders (cypher/passage_feeders.cypher,
//     in the projection): a passage of weight w seeds the feeders of the binary digits of w / top (top: the
//     largest passage weight), which seed it with w·d / top, so that walk times top / d is theirs, to
//     top·2^-36 a weight.
// Each walk stops where the weighted walk would: at TOLERANCE over its factor and the number of walks. The
// feeders and the sink (node ids from 35184372088831 on) are left out of the scores. An empty SOURCES is plain
// PageRank, as in the weighted call. Variables are prefixed `reset` so that they never meet the statement's own.
CALL (*) {
  WITH SOURCES AS resetGiven, TOLERANCE AS resetTolerance
  WITH resetGiven, resetTolerance,
       [x IN resetGiven WHERE x[1] > 0 AND NOT x[0] IS :: INTEGER] AS resetNodes,
       [x IN resetGiven WHERE x[1] > 0 AND x[0] IS :: INTEGER] AS resetIds
  CALL (resetNodes) {
    UNWIND resetNodes AS x
    WITH x[1] AS weight, collect(x[0]) AS members
    RETURN collect({coef: weight, members: members}) AS resetExact
  }
  WITH resetGiven, resetTolerance, resetExact, resetIds,
       reduce(m = 0.0, x IN resetIds | CASE WHEN x[1] > m THEN x[1] ELSE m END) AS resetTop
  CALL (resetIds, resetTop) {
    UNWIND resetIds AS x
    WITH x[0] AS id, toInteger(floor(x[1] / resetTop * 2.0 ^ 35 + 0.5)) AS units
    UNWIND range(0, 35) AS k
    WITH id, k WHERE (units / toInteger(2.0 ^ (35 - k))) % 2 = 1
    RETURN collect(35184372088832 + id * 36 + k) AS resetFeeders
  }
  WITH resetTolerance, CASE WHEN size(resetGiven) = 0 THEN [{coef: 1.0, members: [], plain: true}]
         ELSE resetExact + [{coef: resetTop / $damping, members: resetFeeders}] END AS resetLevels
  UNWIND [level IN resetLevels WHERE size(level.members) > 0 OR level.plain] AS resetLevel
  CALL gds.pageRank.stream($graph, {
    sourceNodes: resetLevel.members, CONFIG, tolerance: resetTolerance / resetLevel.coef / size(resetLevels)
  })
  YIELD nodeId, score
  WITH resetLevel, nodeId, score WHERE nodeId < 35184372088831
  RETURN nodeId, sum(resetLevel.coef * score) AS score
}
