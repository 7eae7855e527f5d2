"""A namespace's whole graph as plain Python values, for comparing two graphs exactly."""

from __future__ import annotations

from typing import Any

from neo4j import Driver


def dump(driver: Driver, ns: str, database: str = "neo4j") -> dict[str, Any]:
    def q(cypher: str) -> list[Any]:
        return driver.execute_query(cypher, ns=ns, database_=database).records

    return {
        "passages": {
            r["id"]: (r["title"], r["text"], r["hash"], r["triples"], r["embedded"])
            for r in q("MATCH (p:Passage {ns: $ns}) RETURN p.id AS id, p.title AS title, p.text AS text, "
                       "p.hash AS hash, p.triples AS triples, p.embedding IS NOT NULL AS embedded")
        },
        "phrases": {
            r["t"]: r["embedded"]
            for r in q("MATCH (p:Phrase {ns: $ns}) RETURN p.text AS t, p.embedding IS NOT NULL AS embedded")
        },
        "relations": {
            (r["a"], r["b"]): (r["w"], sorted(zip(r["s"], r["p"])))
            for r in q("MATCH (a:Phrase {ns: $ns})-[r:RELATION]->(b:Phrase) "
                       "RETURN a.text AS a, b.text AS b, r.weight AS w, r.sources AS s, r.predicates AS p")
        },
        "synonyms": {
            (r["a"], r["b"]): round(r["s"], 5)
            for r in q("MATCH (a:Phrase {ns: $ns})-[s:SYNONYM]->(b:Phrase) RETURN a.text AS a, b.text AS b, s.score AS s")
        },
        "mentions": {
            (r["a"], r["p"]): r["c"]
            for r in q("MATCH (a:Phrase {ns: $ns})-[m:MENTIONED_IN]->(p:Passage) RETURN a.text AS a, p.id AS p, m.count AS c")
        },
    }
