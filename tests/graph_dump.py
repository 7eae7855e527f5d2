"""A namespace's whole graph as plain Python values, for comparing two graphs exactly."""

from __future__ import annotations

import pytest

from hippo_neo4j.encode import shared_encoder


def rows(driver, query, **params):
    return [dict(r) for r in driver.execute_query(query, **params).records]


def snapshot(driver, ns: str) -> dict:
    """Everything of a namespace's graph that matters, in comparable form."""
    passages = {
        r["id"]: r
        for r in rows(
            driver,
            "MATCH (p:Passage {ns: $ns}) RETURN p.id AS id, p.title AS title, p.text AS text, p.hash AS hash, "
            "p.triples AS triples, p.embedding IS NOT NULL AS embedded, size(p.embedding) AS dim, keys(p) AS keys",
            ns=ns,
        )
    }
    for r in passages.values():
        r["keys"] = sorted(r["keys"])
    phrases = {
        r["text"]: (r["embedded"], r["dim"], sorted(r["keys"]))
        for r in rows(
            driver,
            "MATCH (ph:Phrase {ns: $ns}) RETURN ph.text AS text, ph.embedding IS NOT NULL AS embedded, "
            "size(ph.embedding) AS dim, keys(ph) AS keys",
            ns=ns,
        )
    }
    relations = {
        (r["a"], r["b"]): (r["w"], sorted(zip(r["s"], r["p"])), sorted(r["keys"]))
        for r in rows(
            driver,
            "MATCH (a:Phrase {ns: $ns})-[r:RELATION]->(b:Phrase) "
            "RETURN a.text AS a, b.text AS b, r.weight AS w, r.sources AS s, r.predicates AS p, keys(r) AS keys",
            ns=ns,
        )
    }
    mentions = {
        (r["a"], r["p"]): r["c"]
        for r in rows(
            driver,
            "MATCH (a:Phrase {ns: $ns})-[m:MENTIONED_IN]->(p:Passage) RETURN a.text AS a, p.id AS p, m.count AS c",
            ns=ns,
        )
    }
    synonyms = {
        (r["a"], r["b"]): r["s"]
        for r in rows(
            driver,
            "MATCH (a:Phrase {ns: $ns})-[s:SYNONYM]->(b:Phrase) RETURN a.text AS a, b.text AS b, s.score AS s",
            ns=ns,
        )
    }
    facts = {
        r["id"]: (r["s"], r["p"], r["o"], r["text"], sorted(r["sources"]), r["embedded"], sorted(r["keys"]))
        for r in rows(
            driver,
            "MATCH (f:Fact {ns: $ns}) RETURN f.id AS id, f.subject AS s, f.predicate AS p, f.object AS o, "
            "f.text AS text, f.sources AS sources, f.embedding IS NOT NULL AS embedded, keys(f) AS keys",
            ns=ns,
        )
    }
    other = rows(
        driver,
        "MATCH (a {ns: $ns})-[r]-(b) WHERE b.ns IS NULL OR b.ns <> $ns "
        "   OR NOT type(r) IN ['RELATION', 'SYNONYM', 'MENTIONED_IN'] RETURN count(r) AS n",
        ns=ns,
    )[0]["n"]
    return {
        "passages": passages,
        "phrases": phrases,
        "relations": relations,
        "mentions": mentions,
        "synonyms": synonyms,
        "facts": facts,
        "foreign_edges": other,
    }


def assert_same_graph(got: dict, want: dict, synonym_tol: float = 0.0, tau: float | None = None) -> None:
    tau = shared_encoder().synonym_threshold if tau is None else tau
    for key in ("passages", "phrases", "relations", "mentions", "facts", "foreign_edges"):
        if got[key] != want[key]:
            if isinstance(want[key], dict):
                extra = set(got[key]) - set(want[key])
                missing = set(want[key]) - set(got[key])
                changed = [k for k in set(got[key]) & set(want[key]) if got[key][k] != want[key][k]]
                pytest.fail(f"{key} differ: extra {sorted(extra)[:5]}, missing {sorted(missing)[:5]}, "
                            f"changed {[(k, got[key][k], want[key][k]) for k in changed[:3]]}")
            pytest.fail(f"{key}: {got[key]} != {want[key]}")
    # Embeddings computed in another encoder batch differ by ~1e-4 (padding), so across namespaces scores
    # are compared approximately, and a pair may only be on one side if its score is that close to tau.
    for pair in set(got["synonyms"]) ^ set(want["synonyms"]):
        score = got["synonyms"].get(pair, want["synonyms"].get(pair))
        assert abs(score - tau) <= synonym_tol, (pair, score)
    for pair in set(got["synonyms"]) & set(want["synonyms"]):
        assert got["synonyms"][pair] == pytest.approx(want["synonyms"][pair], abs=synonym_tol), pair
