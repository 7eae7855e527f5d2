// Record (or update) the evaluation harness's fingerprint on the namespace node. $complete = false before
// indexing starts, true once it finished; eval_version is the graph version at that moment.
// Parameters: $ns, $fingerprint, $complete, $report (JSON text or null).
MERGE (n:HippoNamespace {name: $ns})
ON CREATE SET n.facts = true, n.folded = true
SET n.eval_fingerprint = $fingerprint, n.eval_complete = $complete,
    n.eval_version = coalesce(n.version, 0), n.eval_report = $report
RETURN n.eval_version AS version
