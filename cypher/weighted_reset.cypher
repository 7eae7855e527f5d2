// A Personalized PageRank with a weighted reset on a GDS whose sourceNodes take node ids only (GDS 2.13, the
// line built for Neo4j 5.26). hippo_neo4j/graph/reset.py splices this in place of each
//   CALL gds.pageRank.stream($graph, {sourceNodes: SOURCES, ..., tolerance: TOLERANCE, ...}) YIELD nodeId, score
// of a PPR statement, where SOURCES is a list of [node or node id, weight]; CONFIG is the call's other settings.
// GDS's PageRank is linear in its reset: with sourceNodes S every node of S starts at (1 - d) and
// score = (1 - d)·[node in S] + d·(its in-neighbours' contributions), so the walk with weights w equals
// sum over levels of coef × (the walk from the level's members), when the members of a level share its weight:
//   - few distinct weights (entity seeds, at most `resetBits` of them): a level per weight, coef the weight; exact;
//   - otherwise (a seed per passage): the weights quantised to multiples of q = top / 2^resetBits, and a level
//     per bit of those integers (coef q × 2^k, members the sources whose bit k is set): at most resetBits + 1
//     walks; each weight is off by at most q / 2, so every score by at most size × q / 2 <= TOLERANCE in total
//     (PageRank's operator does not grow the L1 norm of its reset).
// Each level's walk stops where the weighted walk would: at TOLERANCE / coef on its own scale, over the number
// of levels (their truncations add up to at most one weighted walk's). An empty SOURCES is plain PageRank, as
// in the weighted call. Variables are prefixed `reset` so that they never meet the statement's own.
CALL (*) {
  WITH SOURCES AS resetGiven, TOLERANCE AS resetTolerance
  WITH resetGiven, resetTolerance, [x IN resetGiven WHERE x[1] > 0] AS resetSources
  WITH resetGiven, resetTolerance, resetSources,
       reduce(m = 0.0, x IN resetSources | CASE WHEN x[1] > m THEN x[1] ELSE m END) AS resetTop
  WITH resetGiven, resetTolerance, resetSources, resetTop,
       CASE WHEN size(resetSources) = 0 THEN 0
            ELSE toInteger(ceil(log(size(resetSources) * resetTop / (2.0 * resetTolerance)) / log(2.0))) END AS resetBits
  CALL (resetSources) {
    UNWIND resetSources AS x
    WITH x[1] AS weight, collect(x[0]) AS members
    RETURN collect({coef: weight, members: members}) AS resetExact
  }
  WITH resetGiven, resetTolerance, resetSources, resetTop, resetExact,
       CASE WHEN resetBits > 0 THEN resetBits ELSE 0 END AS resetBits
  WITH resetGiven, resetTolerance, resetExact, resetBits, resetTop,
       [x IN resetSources | [x[0], round(x[1] * 2.0 ^ resetBits / resetTop)]] AS resetUnits
  WITH resetTolerance, CASE
         WHEN size(resetGiven) = 0 THEN [{coef: 1.0, members: [], plain: true}]
         WHEN size(resetExact) <= resetBits + 1 THEN resetExact
         ELSE [k IN range(0, resetBits) | {
           coef: resetTop * 2.0 ^ (k - resetBits),
           members: [x IN resetUnits WHERE toInteger(floor(x[1] / 2.0 ^ k)) % 2 = 1 | x[0]]
         }]
       END AS resetLevels
  UNWIND [level IN resetLevels WHERE size(level.members) > 0 OR level.plain] AS resetLevel
  CALL gds.pageRank.stream($graph, {
    sourceNodes: resetLevel.members, CONFIG, tolerance: resetTolerance / resetLevel.coef / size(resetLevels)
  })
  YIELD nodeId, score
  RETURN nodeId, sum(resetLevel.coef * score) AS score
}
