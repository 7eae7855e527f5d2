// entity-ppr's results (hippo_neo4j/retrieve/entity_ppr.py): each passage of $ids, in that order, with its title,
// text and metadata, and what brought it there:
//   - `contributors`: its phrases among those of $mass (node id as text -> mass: the phrases with the most mass in
//     the walk),
//     each with the mass that flowed from the phrase into the passage at each step of the walk: $damping x the
//     phrase's mass x the edge's share of the phrase's weighted degree in the mention graph (a named mention 1.0,
//     a synonym its score);
//   - `via`, for the passages of $hopIds: the source of the second hop ($sources: passage id -> weight) and the
//     phrase of the passage the hop reached it through (`phrase`: one both name, or a synonym of one the source
//     names, `synonym_of`): of every such path, the one that carried the most mass in the hop's walk (the source's
//     weight times each step's share of the node's weighted degree, a named mention weighing its count, one of a
//     phrase that leads nowhere else 1e-9 times that, as in cypher/entity_ppr_hop.cypher; null for the other
//     passages). The source can be the passage itself (`self`): an agreed passage to which the hop leads back through
//     its own entities.
// `topPhrases`: $phrases ([node id, mass], the 10 with the most mass) with their text. Degrees count the mention graph the walk ran on: with a
// filter ($only: the node ids of its passages), the graph its passages induce; a degree of 0 (read as a concurrent
// delete removed a node's mentions: Cypher raises on an integer division by zero) counts as 1. Parameters: $ns, $ids, $phrases,
// $mass, $hopIds, $sources, $damping, $only.
CALL () {
  UNWIND $phrases AS x
  MATCH (ph:Phrase) WHERE id(ph) = toInteger(x[0]) AND ph.ns = $ns
  RETURN collect({phrase: ph.text, mass: x[1]}) AS topPhrases
}
// `via` first, for every hop passage at once (`vias`): each (passage, source) pair's strongest path, then the
// source's share (its weight over its weighted mentions of the phrases that lead somewhere else, as the hop's)
// counted once per source, not once per path
CALL () {
  UNWIND $hopIds AS hopId
  MATCH (p:Passage {ns: $ns, id: hopId})<-[m2:MENTIONED_IN]-(bridge:Phrase)
  WHERE coalesce(m2.named, true)
  CALL (bridge) {
    MATCH (bridge)-[t:SYNONYM]-(o:Phrase)
    WHERE $only IS NULL OR EXISTS { (o)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only }
    RETURN sum(t.score) AS bridgeSynonyms
  }
  WITH p, bridge, toFloat(coalesce(m2.count, 1)) AS arriving, bridgeSynonyms, [
         (bridge)-[n:MENTIONED_IN]->(q:Passage) WHERE coalesce(n.named, true) AND ($only IS NULL OR id(q) IN $only)
         | toFloat(coalesce(n.count, 1))] AS bridgeCounts
  WITH p, bridge, arriving, bridgeSynonyms + reduce(t = 0.0, c IN bridgeCounts | t + c) AS bridgeDegree,
       bridgeSynonyms > 0 OR size(bridgeCounts) > 1 AS bridgeLeads
  CALL (bridge, bridgeLeads) {
    // the sources that name the bridge (`named`; one that leads nowhere else weighs 1e-9 times its count, as the hop
    // steps) or a synonym of it
    MATCH (bridge)-[m1:MENTIONED_IN]->(s:Passage)
    WHERE coalesce(m1.named, true) AND $sources[s.id] IS NOT NULL
    RETURN s, bridge AS named, null AS synonym,
           toFloat(coalesce(m1.count, 1)) * CASE WHEN bridgeLeads THEN 1.0 ELSE 1.0e-9 END AS step
    UNION ALL
    MATCH (bridge)-[r:SYNONYM]-(named:Phrase)
    CALL (named) {
      MATCH (named)-[t:SYNONYM]-(o:Phrase)
      WHERE $only IS NULL OR EXISTS { (o)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only }
      RETURN sum(t.score) AS namedSynonyms
    }
    WITH named, r, namedSynonyms + reduce(t = 0.0, c IN [
           (named)-[n:MENTIONED_IN]->(q:Passage) WHERE coalesce(n.named, true) AND ($only IS NULL OR id(q) IN $only)
           | toFloat(coalesce(n.count, 1))] | t + c) AS namedDegree
    MATCH (named)-[m1:MENTIONED_IN]->(s:Passage)
    WHERE coalesce(m1.named, true) AND $sources[s.id] IS NOT NULL
    RETURN s, named, r.score AS synonym,
           toFloat(coalesce(m1.count, 1)) * $damping * r.score / CASE WHEN namedDegree > 0 THEN namedDegree ELSE 1 END
           AS step
  }
  // each step's share after the source's: the source's mention of the named phrase (its weight: the source's share
  // counts the rest), the synonym's of the named phrase's weighted degree (a step more: $damping), then the mention
  // of the passage the bridge arrives at, of the bridge's weighted degree
  WITH p, s, {phrase: bridge.text, synonym_of: CASE WHEN named = bridge THEN null ELSE named.text END,
              part: step * arriving / CASE WHEN bridgeDegree > 0 THEN bridgeDegree ELSE 1 END} AS path
  ORDER BY path.part DESC, path.phrase, path.synonym_of
  WITH p, s, collect(path)[0] AS path
  WITH s, collect({p: p, path: path}) AS reached
  WITH s, reached, reduce(t = 0.0, c IN [(s)<-[n:MENTIONED_IN]-(b:Phrase) WHERE coalesce(n.named, true)
         | toFloat(coalesce(n.count, 1)) * CASE WHEN
             EXISTS { (b)-[:SYNONYM]-(o:Phrase) WHERE $only IS NULL OR EXISTS { (o)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only } }
             OR COUNT { (b)-[k:MENTIONED_IN]->(q:Passage) WHERE coalesce(k.named, true) AND ($only IS NULL OR id(q) IN $only) } > 1
           THEN 1.0 ELSE 1.0e-9 END] | t + c) AS sourceDegree
  WITH s, reached, $sources[s.id] / CASE WHEN sourceDegree > 0 THEN sourceDegree ELSE 1 END AS share
  UNWIND reached AS r
  WITH r.p AS p, {passage: s.id, phrase: r.path.phrase, synonym_of: r.path.synonym_of, flow: share * r.path.part,
                  self: s = r.p} AS via
  ORDER BY via.flow DESC, via.passage, via.phrase, via.synonym_of
  WITH p, collect(via)[0] AS via
  RETURN collect({id: p.id, via: via}) AS vias
}
UNWIND range(0, size($ids) - 1) AS i
MATCH (p:Passage {ns: $ns, id: $ids[i]})
WITH topPhrases, vias, i, p
CALL (p) {
  MATCH (ph:Phrase)-[m:MENTIONED_IN]->(p)
  WHERE coalesce(m.named, true) AND $mass[toString(id(ph))] IS NOT NULL
  CALL (ph) {
    MATCH (ph)-[r:SYNONYM]-(o:Phrase)
    WHERE $only IS NULL OR EXISTS { (o)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only }
    RETURN sum(r.score) AS synonyms
  }
  WITH ph, $mass[toString(id(ph))] AS mass, synonyms + COUNT {
         (ph)-[n:MENTIONED_IN]->(q:Passage) WHERE coalesce(n.named, true) AND ($only IS NULL OR id(q) IN $only) } AS degree
  RETURN collect({phrase: ph.text, contribution: $damping * mass / CASE WHEN degree > 0 THEN degree ELSE 1 END})
         AS contributors
}
WITH topPhrases, vias, i, p, contributors, [v IN vias WHERE v.id = p.id | v.via][0] AS via
RETURN p.id AS id, p.title AS title, p.text AS text, contributors,
       [k IN keys(p) WHERE k STARTS WITH 'meta_' | [k, p[k]]] AS meta, via, topPhrases
ORDER BY i
