// The namespace's phrases among a question's runs of words ($grams: each run's words joined by spaces, lower-case
// and without accents, hippo_neo4j/retrieve/linking.py): a phrase whose text is the run, or whose key without
// accents (`fold`, cypher/write_phrases.cypher) is. With a filter ($only: the node ids of its passages) only the
// phrases its passages mention, as in the graph they induce. Parameters: $ns, $grams, $only.
UNWIND $grams AS gram
CALL (gram) {
  MATCH (ph:Phrase {ns: $ns, text: gram})
  RETURN ph
  UNION
  MATCH (ph:Phrase {ns: $ns, fold: gram})
  RETURN ph
}
WITH gram, ph
WHERE $only IS NULL OR EXISTS { (ph)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only }
RETURN gram, ph.text AS text
ORDER BY gram, text
