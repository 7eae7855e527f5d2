// Remove every SYNONYM edge of namespace $ns (re-embedding links them again from the new vectors).
MATCH (:Phrase {ns: $ns})-[s:SYNONYM]->()
DELETE s
