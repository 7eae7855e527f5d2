// The phrases each of the passages $ids (passage ids) is MENTIONED_IN by, in the graph as indexed: the
// evaluation's diagnostic of whether a query's seeds name its gold passages (hippo_neo4j/evaluation/harness.py).
UNWIND $ids AS id
MATCH (p:Passage {ns: $ns, id: id})
OPTIONAL MATCH (ph:Phrase)-[:MENTIONED_IN]->(p)
RETURN id, collect(ph.text) AS phrases
