// What the namespace holds of each document $ids: its content hash, passage budget and cut version (`cut`) when it
// was indexed, its
// passages (FROM_DOCUMENT), and whether a passage has the document's own id (a folder indexed one file to a
// passage): what indexing the document again keeps or replaces. Parameters: $ns, $ids (document ids).
UNWIND $ids AS id
OPTIONAL MATCH (d:Document {ns: $ns, id: id})
RETURN id, d IS NOT NULL AS found, d.hash AS hash, d.passageTokens AS passageTokens, d.cut AS cut,
       COLLECT { MATCH (p:Passage)-[:FROM_DOCUMENT]->(d) RETURN p.id } AS passages,
       COUNT { MATCH (:Passage {ns: $ns, id: id}) } > 0 AS legacy
