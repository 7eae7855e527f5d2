// The synonym candidates of each new phrase $keys of namespace $ns, from its own stored embedding: its $k
// nearest phrases through the namespace's phrase vector index; of these, the first $top_k other than the phrase
// itself, and of those only the ones with cosine >= $tau (no other can become an edge), so little comes back.
// The index scores cosine as (1 + cos) / 2.
UNWIND $keys AS key
MATCH (ph:Phrase {ns: $ns, text: key})
CALL db.index.vector.queryNodes($indexes.phrase, $k, ph.embedding) YIELD node, score
WITH key, [h IN collect({text: node.text, cosine: 2 * score - 1}) WHERE h.text <> key][..$top_k] AS hits
RETURN key, [h IN hits WHERE h.cosine >= $tau] AS hits
