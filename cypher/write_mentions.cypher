// (:Phrase)-[:MENTIONED_IN {count}]->(:Passage): how often the phrase was extracted from the passage.
UNWIND $mentions AS row
MATCH (ph:Phrase {ns: $ns, text: row.phrase}), (p:Passage {ns: $ns, id: row.passage})
MERGE (ph)-[m:MENTIONED_IN]->(p)
SET m.count = row.count
