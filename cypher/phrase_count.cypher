// How many phrases with an embedding namespace $ns holds, counted up to $cap (a caller that only needs to
// know whether there are more than $cap - 1 reads no further).
MATCH (ph:Phrase {ns: $ns})
WHERE ph.embedding IS NOT NULL
WITH ph LIMIT $cap
RETURN count(ph) AS phrases
