// How many passages of namespace $ns lack their namespace label (HippoPassage_<key>), from counts: the
// namespace's passages against the nodes with the label. A client of a version from before namespace labels may
// have indexed into the namespace after it was labelled; its passages come with the phrases and facts they name,
// so a client that connects and finds passages missing labels every node of the namespace again
// (cypher/label_namespace.cypher). Passages alone are counted: there are far fewer of them than phrases.
CALL () { MATCH (n:Passage {ns: $ns}) RETURN count(n) AS passages }
CALL () { MATCH (n:$($labels.passage)) RETURN count(n) AS labelled }
RETURN passages - labelled AS missing
