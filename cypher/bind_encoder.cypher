// Bind namespace $ns to the encoder that embeds it (name, dimension, fingerprint of the weights).
MERGE (n:HippoNamespace {name: $ns})
ON CREATE SET n.facts = true, n.version = 0
SET n.encoder = $name, n.encoderDimension = $dimension, n.encoderFingerprint = $fingerprint
