// Whether namespace $ns holds any Fact node.
RETURN EXISTS { MATCH (:Fact {ns: $ns}) } AS any
