// The $k nearest phrases (all namespaces) of each row's embedding through the phrase vector index, kept
// to namespace $ns. `seen` and `last` (the cosine of the k-th hit) tell the client whether widening $k
// could find more. The index scores cosine as (1 + cos) / 2; `cosine` is the cosine itself; `since` the graph
// version that created the phrase (a projection older than that lacks it); `passages`: |P_i| of the nearest
// hit, how many passages it was extracted from (node specificity), read here to save a round trip.
UNWIND $rows AS row
CALL db.index.vector.queryNodes('hippo_phrase_embedding', $k, row.embedding) YIELD node, score
WITH row, collect({node: node, score: score}) AS found
WITH row, found, [h IN found WHERE h.node.ns = $ns] AS ours
WITH row, found, ours, ours[0].node AS nearest
RETURN row.key AS key, size(found) AS seen, 2 * found[-1].score - 1 AS last,
       [h IN ours | {text: h.node.text, cosine: 2 * h.score - 1, since: coalesce(h.node.since, 0)}] AS hits,
       CASE WHEN nearest IS NULL THEN 0 ELSE COUNT { (nearest)-[:MENTIONED_IN]->(:Passage) } END AS passages
