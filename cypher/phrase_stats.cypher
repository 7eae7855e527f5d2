// What linking weighs a phrase by ($texts: phrase texts): `passages`, |P_i|, the passages it is MENTIONED_IN (node
// specificity, HippoRAG's 1/|P_i|); `named`, those of them that name it (the mentions entity-ppr walks); `namedAs`,
// the passages that name it or a SYNONYM of it (the entity in any of its surface forms: "alzheimer" where a passage
// names "alzheimer s disease"); `occurs`, the passages whose title or text holds its words, by a phrase query of the
// namespace's full-text index, counted up to $limit (a phrase that common seeds at most 1/$limit of what a name of
// one passage does); `since`, the graph version that created it. `namedAs` / max(`occurs`, `named`) (at most 1) is
// the share of the passages that hold the words in which they name the entity: how surely the words name it where a
// question holds them. With a filter ($only: the node ids of its passages) every count is of its passages alone. A
// phrase's text holds letters, digits and single spaces only (hippo_neo4j/text.py), so the phrase query needs no
// escaping. Parameters: $ns, $texts, $limit, $only.
UNWIND $texts AS text
MATCH (ph:Phrase {ns: $ns, text: text})
CALL (ph) {
  CALL db.index.fulltext.queryNodes($indexes.text, '"' + ph.text + '"', {limit: $limit}) YIELD node
  WHERE $only IS NULL OR id(node) IN $only
  RETURN count(node) AS occurs
}
RETURN ph.text AS text, coalesce(ph.since, 0) AS since, occurs,
       COUNT { (ph)-[:MENTIONED_IN]->(q:Passage) WHERE $only IS NULL OR id(q) IN $only } AS passages,
       COUNT { (ph)-[m:MENTIONED_IN]->(q:Passage) WHERE coalesce(m.named, true) AND ($only IS NULL OR id(q) IN $only) }
         AS named,
       COUNT {
         MATCH (ph)-[m:MENTIONED_IN]->(q:Passage) WHERE coalesce(m.named, true) AND ($only IS NULL OR id(q) IN $only)
         RETURN q
         UNION
         MATCH (ph)-[:SYNONYM]-(:Phrase)-[m:MENTIONED_IN]->(q:Passage)
         WHERE coalesce(m.named, true) AND ($only IS NULL OR id(q) IN $only)
         RETURN q
       } AS namedAs
