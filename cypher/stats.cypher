// Sizes of one namespace's graph.
RETURN COUNT { MATCH (:Passage {ns: $ns}) } AS passages,
       COUNT { MATCH (:Document {ns: $ns}) } AS documents,
       COUNT { MATCH (:Phrase {ns: $ns}) } AS phrases,
       COUNT { MATCH (:Fact {ns: $ns}) } AS facts,
       COUNT { MATCH (:Phrase {ns: $ns})-[:RELATION]->() } AS relation_edges,
       COUNT { MATCH (:Phrase {ns: $ns})-[:SYNONYM]->() } AS synonym_edges,
       COUNT { MATCH (:Phrase {ns: $ns})-[:MENTIONED_IN]->() } AS mention_edges
