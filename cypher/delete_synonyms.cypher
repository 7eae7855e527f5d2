// Remove every SYNONYM edge of namespace $ns (re-embedding links them again from the new vectors); `graphEpoch`
// moves, so that no filter's projection made before is walked while they are linked again (see bind_encoder.cypher).
OPTIONAL MATCH (n:HippoNamespace {name: $ns})
SET n.graphEpoch = n.version
WITH count(*) AS done
MATCH (:Phrase {ns: $ns})-[s:SYNONYM]->()
DELETE s
