// Bind namespace $ns to the encoder that embeds it (name, dimension, fingerprint of the weights). Run in the
// transaction of the namespace's first write, so no passage is ever stored without its encoder; $replace
// rebinds a namespace that was re-embedded, whose synonym edges were rebuilt: `graphEpoch` then takes its
// version (a filter's projection is keyed by it, hippo_neo4j/graph/projection.py).
MERGE (n:HippoNamespace {name: $ns})
ON CREATE SET n.facts = true, n.folded = true, n.version = 0
WITH n, $replace OR n.encoder IS NULL AS set
SET n.encoder = CASE WHEN set THEN $name ELSE n.encoder END,
    n.encoderDimension = CASE WHEN set THEN $dimension ELSE n.encoderDimension END,
    n.encoderFingerprint = CASE WHEN set THEN $fingerprint ELSE n.encoderFingerprint END,
    n.graphEpoch = CASE WHEN $replace THEN n.version ELSE n.graphEpoch END
