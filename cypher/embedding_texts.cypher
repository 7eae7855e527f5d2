// What each node of namespace $ns embeds, for re-embedding: passages (title + "\n" + text, as indexed),
// phrases (their text) and facts (their text); `kind` says which, `key` identifies the node.
CALL () {
  MATCH (p:Passage {ns: $ns})
  RETURN 'passage' AS kind, p.id AS key, CASE WHEN p.title <> '' THEN p.title + '\n' + p.text ELSE p.text END AS text
  UNION ALL
  MATCH (ph:Phrase {ns: $ns})
  RETURN 'phrase' AS kind, ph.text AS key, ph.text AS text
  UNION ALL
  MATCH (f:Fact {ns: $ns})
  RETURN 'fact' AS kind, f.id AS key, f.text AS text
}
RETURN kind, key, text
