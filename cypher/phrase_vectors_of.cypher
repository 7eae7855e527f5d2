// The embeddings of the phrases $texts of namespace $ns (those that exist and have one).
UNWIND $texts AS t
MATCH (ph:Phrase {ns: $ns, text: t})
WHERE ph.embedding IS NOT NULL
RETURN ph.text AS text, ph.embedding AS embedding
