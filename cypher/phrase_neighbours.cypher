// The $k nearest phrases of each row's embedding through the namespace's phrase vector index. The index scores
// cosine as (1 + cos) / 2; `cosine` is the cosine itself; `since` the graph version that created the phrase (a
// projection older than that lacks it); `passages`: |P_i| of the nearest hit, how many passages it was
// extracted from (node specificity), read here to save a round trip; `nsVersion`: the namespace's graph version
// in the same snapshot (the walk that follows takes its projection's version from it: graph/store.py).
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
WITH coalesce(n.version, 0) AS nsVersion
UNWIND $rows AS row
CALL db.index.vector.queryNodes($indexes.phrase, $k, row.embedding) YIELD node, score
// a phrase deleted (no passage names it any more) after the index found it has no text: left out
WITH nsVersion, row, node, score, node.text AS text, coalesce(node.since, 0) AS since WHERE text IS NOT NULL
WITH nsVersion, row, collect({node: node, text: text, score: score, since: since}) AS hits
WITH nsVersion, row, hits, hits[0].node AS nearest
RETURN row.key AS key, nsVersion,
       [h IN hits | {text: h.text, cosine: 2 * h.score - 1, since: h.since}] AS hits,
       CASE WHEN nearest IS NULL THEN 0 ELSE COUNT { (nearest)-[:MENTIONED_IN]->(:Passage) } END AS passages
