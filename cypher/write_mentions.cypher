// (:Phrase)-[:MENTIONED_IN {count, named, walked}]->(:Passage): how often the phrase was extracted from the passage
// (as a triple argument, plus once as one of its entities), whether the passage names it as an entity, and that
// as a number (`walked`: 1.0 or 0.0), which the native mention projection weighs the edge by.
UNWIND $mentions AS row
MATCH (ph:Phrase {ns: $ns, text: row.phrase}), (p:Passage {ns: $ns, id: row.passage})
MERGE (ph)-[m:MENTIONED_IN]->(p)
SET m.count = row.count, m.named = row.named, m.walked = CASE WHEN coalesce(row.named, true) THEN 1.0 ELSE 0.0 END
