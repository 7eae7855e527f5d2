// Why these passages were retrieved, drawn: the query's seed phrases, the phrases that carried most PPR mass,
// the RELATION and SYNONYM edges between them, the retrieved passages and the MENTIONED_IN edges into them.
// Read-only. Parameters: $ns, $question, $seeds [phrase text], $phrases [phrase text], $ids [passage id].
// hippo_neo4j.drawing.drawing_cypher() writes the values in as string literals, for pasting into Neo4j Browser.
WITH $ns AS ns, $question AS question, $seeds AS seedTexts, $phrases AS phraseTexts, $ids AS passageIds
CALL (ns, seedTexts, phraseTexts) {
  MATCH (ph:Phrase {ns: ns}) WHERE ph.text IN seedTexts OR ph.text IN phraseTexts
  RETURN collect(ph) AS phrases
}
CALL (ns, passageIds) {
  UNWIND passageIds AS id
  MATCH (p:Passage {ns: ns, id: id})
  RETURN collect(p) AS passages
}
RETURN question,
       [ph IN phrases WHERE ph.text IN seedTexts] AS seeds,
       phrases,
       passages,
       COLLECT { UNWIND phrases AS a MATCH (a)-[r:RELATION|SYNONYM]->(b:Phrase) WHERE b IN phrases RETURN r } AS edges,
       COLLECT { UNWIND phrases AS a MATCH (a)-[m:MENTIONED_IN]->(p:Passage) WHERE p IN passages RETURN m } AS mentions
