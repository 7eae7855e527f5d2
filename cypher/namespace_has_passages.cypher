// Whether namespace $ns holds any passage (an empty or unknown namespace answers every query with nothing).
RETURN EXISTS { MATCH (:Passage {ns: $ns}) } AS any
