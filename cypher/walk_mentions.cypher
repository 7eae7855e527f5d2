// `walked` on every mention of namespace $ns that lacks it: `named` as a number (1.0 where the passage names the
// phrase, 0.0 where the phrase is only a triple's argument there; 1.0 for a mention from before `named`, which
// the mention graph walks), the weight the native mention projection reads (GDS cannot load a boolean). Mentions
// written before `walked` existed, or by an older client since; the namespace's `walkedAt` then lags its version
// (cypher/bump_namespace_version.cypher) and cypher/mentions_walked.cypher records the version this ran at.
// Runs in its own transactions (auto-commit).
MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->()
WHERE m.walked IS NULL
CALL (m) { SET m.walked = CASE WHEN coalesce(m.named, true) THEN 1.0 ELSE 0.0 END } IN TRANSACTIONS OF 10000 ROWS
RETURN count(m) AS set
