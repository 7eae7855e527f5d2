// The synonym candidates of each new phrase $keys of namespace $ns, from its own stored embedding: its $k
// nearest phrases (all namespaces) through the phrase vector index, kept to namespace $ns; of these, the
// first $top_k other than the phrase itself, and of those only the ones with cosine >= $tau (no other can
// become an edge), so little comes back. `seen`, `kept` (hits of $ns) and `last` (the cosine of the k-th hit)
// tell the client whether widening $k could find more. The index scores cosine as (1 + cos) / 2.
UNWIND $keys AS key
MATCH (ph:Phrase {ns: $ns, text: key})
CALL db.index.vector.queryNodes('hippo_phrase_embedding', $k, ph.embedding) YIELD node, score
WITH key, collect({node: node, score: score}) AS found
WITH key, found, [h IN found WHERE h.node.ns = $ns | {text: h.node.text, cosine: 2 * h.score - 1}] AS hits
RETURN key, size(found) AS seen, 2 * found[-1].score - 1 AS last, size(hits) AS kept,
       [h IN [h IN hits WHERE h.text <> key][..$top_k] WHERE h.cosine >= $tau] AS hits
