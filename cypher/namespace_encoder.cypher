// The encoder namespace $ns is bound to (null for a namespace indexed before encoders were recorded, or never
// indexed), and whether it holds anything yet.
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
RETURN n.encoder AS name, n.encoderDimension AS dimension, n.encoderFingerprint AS fingerprint,
       EXISTS { MATCH (x) WHERE (x:Passage OR x:Phrase) AND x.ns = $ns } AS indexed
