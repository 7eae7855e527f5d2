// The evaluation harness's record of what a namespace holds: the fingerprint of the corpus and settings it
// was indexed from, whether that indexing finished, the graph version it finished at (any later write
// changes the version), the indexing report (JSON), and the mention edges written before mentions recorded
// whether the phrase is a name the passage holds (`named`; such an index lacks the names). Parameter: $ns.
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
RETURN n.eval_fingerprint AS fingerprint, coalesce(n.eval_complete, false) AS complete,
       n.eval_version AS recorded_version, coalesce(n.version, 0) AS version, n.eval_report AS report,
       COUNT { MATCH (:Passage {ns: $ns}) } AS passages, COUNT { MATCH (:Phrase {ns: $ns}) } AS phrases,
       COUNT { MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->() WHERE m.named IS NULL } AS legacy_mentions
