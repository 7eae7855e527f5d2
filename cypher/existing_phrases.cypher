// Which of the phrases $texts already exist in namespace $ns.
UNWIND $texts AS t
MATCH (ph:Phrase {ns: $ns, text: t})
RETURN ph.text AS text
