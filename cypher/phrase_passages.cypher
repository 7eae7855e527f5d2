// The passages each phrase of $texts is MENTIONED_IN, as Neo4j node ids (entity-ppr weighs a linked phrase's
// seed by how like the query those passages are). Parameters: $ns, $texts.
UNWIND $texts AS text
MATCH (ph:Phrase {ns: $ns, text: text})-[:MENTIONED_IN]->(p:Passage)
RETURN text, collect(id(p)) AS nodes
