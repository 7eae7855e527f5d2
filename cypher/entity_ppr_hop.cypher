// entity-ppr's second hop (hippo_neo4j/retrieve/entity_ppr.py): the mass that a walk of HOP_STEPS = 3 steps over the
// namespace's mentions brings from the passages that the question's text and the entity walk agree on
// ($sources: [[node id (a float), weight]], weighted by that agreement), the first hop of the answer, so that its
// mass shows where that hop leads: the passages that share an entity with them, the closer, the more specific the
// entity and the stronger the agreement, the more. A walk of 3 steps reaches a passage only by
//   source -> phrase -> passage                   (an entity both name; weight (1 - d) d^2) and
//   source -> phrase -> synonym -> passage        (one under another name; (1 - d) d^3),
// each step the edge's share of its node's weighted degree, where a named mention weighs as often as the passage
// makes it (MENTIONED_IN.count: the facts extracted from the passage that name the entity, plus one) and a synonym
// its score: the hop leaves a passage by what it says most about, and reaches the passages that say most about the
// entity it left by (an entity's own article before the passages that name it in passing). The statement sums
// those paths where they are, phrase by phrase: the mass GDS's PageRank gives after HOP_STEPS + 1 iterations from
// the same sources over a projection of those weights (reference.py's `short_walk` over `hop_transition_t`), at a
// cost that follows the sources' phrases and the passages they name, not the whole projection (docs/design.md,
// "entity-ppr's second hop sums its paths"). Each source keeps its starting mass, (1 - d) x its weight, as the
// walk's does; the client takes it out. Degrees count the graph the entity walk ran on: with a filter ($only: the
// node ids of its passages), the graph its passages induce (cypher/project_mention_graph_within.cypher). Returns the
// $window passages with the most mass as [node id, mass], most first (equal masses by node id).
// Parameters: $sources, $damping, $only, $window.
// one step: each phrase's mass from every source that names it (over (1 - d) d), and the passages (with their
// mentions' weights) and synonyms it leads to, each phrase read once. A phrase that leads nowhere else (its source
// alone names it, no synonym joins it) weighs 1e-9 times its count, as in the entity walk (the `path` weights of
// cypher/project_mention_graph.cypher): a source passes its mass on along the entities it shares, and one that
// shares none, into its own entities, which send it all back (the limit of a weight that tends to 0).
CALL () {
  UNWIND $sources AS x
  MATCH (s:Passage)<-[m:MENTIONED_IN]-(b:Phrase) WHERE id(s) = toInteger(x[0]) AND coalesce(m.named, true)
  WITH b, collect([id(s), toFloat(x[1]), toFloat(coalesce(m.count, 1))]) AS sent
  CALL (b) {
    MATCH (b)-[n:MENTIONED_IN]->(p:Passage) WHERE coalesce(n.named, true) AND ($only IS NULL OR id(p) IN $only)
    RETURN collect([p, toFloat(coalesce(n.count, 1))]) AS named
  }
  CALL (b) {
    MATCH (b)-[t:SYNONYM]-(o:Phrase)
    WHERE $only IS NULL OR EXISTS { (o)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only }
    RETURN collect([o, t.score]) AS synonyms
  }
  WITH collect({sent: sent, named: named, synonyms: synonyms,
                path: CASE WHEN size(named) > 1 OR size(synonyms) > 0 THEN 1.0 ELSE 1.0e-9 END}) AS entered
  // each source's degree (its mentions, each its count times its phrase's path weight), grouped once, then each
  // phrase's flow: what every source that names it sends it, its weight times the mention's share of that degree
  CALL (entered) {
    UNWIND range(0, size(entered) - 1) AS i
    UNWIND entered[i].sent AS x
    WITH x[0] AS source, collect([i, x[1] * x[2] * entered[i].path]) AS parts, sum(x[2] * entered[i].path) AS degree
    UNWIND parts AS part
    WITH part[0] AS i, sum(part[1] / degree) AS flow
    RETURN collect([i, flow]) AS flows
  }
  UNWIND flows AS f
  WITH entered[f[0]] AS b, f[1] AS flow
  WITH b, flow, reduce(w = 0.0, y IN b.named + b.synonyms | w + y[1]) AS degree
  RETURN collect({share: flow / degree, named: b.named, synonyms: b.synonyms}) AS phrases
}
// no step: each source's own starting mass; two: the passages each phrase names; three: those its synonyms name
CALL (phrases) {
  UNWIND $sources AS x
  MATCH (s:Passage) WHERE id(s) = toInteger(x[0])
  RETURN id(s) AS nodeId, toFloat(x[1]) AS part
  UNION ALL
  UNWIND phrases AS b
  UNWIND b.named AS p
  RETURN id(p[0]) AS nodeId, $damping * $damping * b.share * p[1] AS part
  UNION ALL
  UNWIND phrases AS b
  UNWIND b.synonyms AS y
  WITH y[0] AS o, sum(y[1] * b.share) AS reached
  CALL (o) {
    MATCH (o)-[n:MENTIONED_IN]->(p:Passage) WHERE coalesce(n.named, true) AND ($only IS NULL OR id(p) IN $only)
    RETURN collect([p, toFloat(coalesce(n.count, 1))]) AS named
  }
  CALL (o) {
    MATCH (o)-[t:SYNONYM]-(o2:Phrase)
    WHERE $only IS NULL OR EXISTS { (o2)-[:MENTIONED_IN]->(q:Passage) WHERE id(q) IN $only }
    RETURN sum(t.score) AS synonyms
  }
  WITH reached, named, reduce(w = 0.0, y IN named | w + y[1]) + synonyms AS degree WHERE degree > 0
  UNWIND named AS p
  RETURN id(p[0]) AS nodeId, $damping * $damping * $damping * reached * p[1] / degree AS part
}
WITH nodeId, (1 - $damping) * sum(part) AS mass
WHERE mass > 0
WITH nodeId, mass ORDER BY mass DESC, nodeId LIMIT $window
RETURN collect([nodeId, mass]) AS window
