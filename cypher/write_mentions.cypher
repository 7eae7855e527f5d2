// (:Phrase)-[:MENTIONED_IN {count, named}]->(:Passage): how often the phrase was extracted from the passage
// (as a triple argument, plus once as one of its entities), and whether the passage names it as an entity.
UNWIND $mentions AS row
MATCH (ph:Phrase {ns: $ns, text: row.phrase}), (p:Passage {ns: $ns, id: row.passage})
MERGE (ph)-[m:MENTIONED_IN]->(p)
SET m.count = row.count, m.named = row.named
