// Which of the phrases $texts already exist in namespace $ns and will survive the replacement of the
// passages $replacing (an update deletes them first, in the same transaction: a phrase only they mention
// is deleted and must be created again, with its embedding).
UNWIND $texts AS t
MATCH (ph:Phrase {ns: $ns, text: t})
WHERE EXISTS { MATCH (ph)-[:MENTIONED_IN]->(p:Passage) WHERE NOT p.id IN $replacing }
RETURN ph.text AS text
