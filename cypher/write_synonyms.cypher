// SYNONYM {score} edges, one per unordered phrase pair (a < b).
UNWIND $pairs AS row
MATCH (a:Phrase {ns: $ns, text: row.a}), (b:Phrase {ns: $ns, text: row.b})
MERGE (a)-[s:SYNONYM]->(b)
SET s.score = row.score
