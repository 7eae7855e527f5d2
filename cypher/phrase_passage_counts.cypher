// |P_i|: how many passages each phrase was extracted from (node specificity).
UNWIND $texts AS t
MATCH (ph:Phrase {ns: $ns, text: t})
RETURN t AS text, COUNT { (ph)-[:MENTIONED_IN]->(:Passage) } AS passages
