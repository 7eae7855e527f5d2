// The namespace labels (HippoPhrase_<key>, HippoPassage_<key>, HippoFact_<key>) on every node of namespace
// $ns that lacks its own: a namespace written before each namespace had its own indexes, labelled once when a
// client first connects to it. Runs in its own transactions (auto-commit).
CALL {
  MATCH (n:Phrase {ns: $ns}) WHERE NOT $labels.phrase IN labels(n) RETURN n, $labels.phrase AS label
  UNION
  MATCH (n:Passage {ns: $ns}) WHERE NOT $labels.passage IN labels(n) RETURN n, $labels.passage AS label
  UNION
  MATCH (n:Fact {ns: $ns}) WHERE NOT $labels.fact IN labels(n) RETURN n, $labels.fact AS label
}
CALL (n, label) { SET n:$(label) } IN TRANSACTIONS OF 10000 ROWS
RETURN count(n) AS labelled
