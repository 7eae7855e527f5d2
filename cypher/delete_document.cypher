// Remove one Document node (its passages are removed first, exactly, by delete_passages.cypher). Parameters: $ns,
// $id. Returns how many were found.
OPTIONAL MATCH (d:Document {ns: $ns, id: $id})
WITH d, d IS NOT NULL AS found
DETACH DELETE d
RETURN found
