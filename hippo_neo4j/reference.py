"""An independent in-process implementation of HippoRAG retrieval (numpy/scipy) over a graph read back
from Neo4j. It checks the GDS + Cypher path and is the in-process baseline of the benchmarks.

Semantics (the same as GDS PageRank with weighted ``sourceNodes``): the phrase graph is undirected, an
edge's weight is RELATION.weight or SYNONYM.score (parallel edges add up), transitions are row-normalised,
a node with no edges passes nothing on, and ``p = (1 - d) * reset + d * T^T p``.

HippoRAG 2 (:meth:`ReferenceGraph.hipporag2`, loaded with ``hipporag2=True``): the graph also holds the
passages, joined to their phrases by edges of weight 1.0; the query's nearest facts by exact cosine give
phrase seeds (fact cosine / |P_i|, averaged per phrase, largest kept); every passage is seeded with
``passage_weight`` x its min-max normalised query cosine; the reset vector is not normalised (GDS uses the
biases as given) and passages rank by their own PPR mass.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from neo4j import Driver


@dataclass
class ReferenceGraph:
    phrases: list[str]
    phrase_index: dict[str, int]
    passages: list[str]
    transition_t: sp.csr_matrix  # T^T, phrases x phrases
    mentions: sp.csr_matrix  # phrases x passages, MENTIONED_IN.count
    passages_per_phrase: np.ndarray
    # hipporag2 only (load(..., hipporag2=True))
    full_transition_t: sp.csr_matrix | None = None  # (phrases + passages)^2, passages after the phrases
    facts: list[tuple[str, str, str]] = field(default_factory=list)
    fact_vectors: np.ndarray | None = None  # unit rows aligned with facts
    passage_vectors: np.ndarray | None = None  # unit rows aligned with passages (NaN: no embedding)

    @classmethod
    def load(cls, driver: Driver, database: str, ns: str, hipporag2: bool = False) -> "ReferenceGraph":
        phrases = [
            r["t"]
            for r in driver.execute_query(
                "MATCH (p:Phrase {ns: $ns}) RETURN p.text AS t ORDER BY t", ns=ns, database_=database
            ).records
        ]
        index = {t: i for i, t in enumerate(phrases)}
        passages = [
            r["id"]
            for r in driver.execute_query(
                "MATCH (p:Passage {ns: $ns}) RETURN p.id AS id ORDER BY id", ns=ns, database_=database
            ).records
        ]
        pindex = {p: i for i, p in enumerate(passages)}
        edges = driver.execute_query(
            "MATCH (a:Phrase {ns: $ns})-[r:RELATION|SYNONYM]->(b:Phrase {ns: $ns}) "
            "RETURN a.text AS a, b.text AS b, toFloat(CASE type(r) WHEN 'RELATION' THEN r.weight ELSE r.score END) AS w",
            ns=ns,
            database_=database,
        ).records
        n = len(phrases)
        rows = [index[e["a"]] for e in edges] + [index[e["b"]] for e in edges]
        cols = [index[e["b"]] for e in edges] + [index[e["a"]] for e in edges]
        weights = [e["w"] for e in edges] * 2
        adjacency = sp.csr_matrix((weights, (rows, cols)), shape=(n, n))
        out = np.asarray(adjacency.sum(axis=1)).ravel()
        inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        transition = sp.diags(inv) @ adjacency
        mention_rows = driver.execute_query(
            "MATCH (a:Phrase {ns: $ns})-[m:MENTIONED_IN]->(p:Passage {ns: $ns}) RETURN a.text AS a, p.id AS p, m.count AS c",
            ns=ns,
            database_=database,
        ).records
        mentions = sp.csr_matrix(
            (
                [float(m["c"]) for m in mention_rows],
                ([index[m["a"]] for m in mention_rows], [pindex[m["p"]] for m in mention_rows]),
            ),
            shape=(n, len(passages)),
        )
        per_phrase = np.asarray((mentions > 0).sum(axis=1)).ravel()
        graph = cls(phrases, index, passages, transition.T.tocsr(), mentions, per_phrase)
        if hipporag2:
            graph._load_hipporag2(driver, database, ns, adjacency)
        return graph

    def _load_hipporag2(self, driver: Driver, database: str, ns: str, adjacency: sp.csr_matrix) -> None:
        links = (self.mentions > 0).astype(float)
        full = sp.bmat([[adjacency, links], [links.T, None]]).tocsr()
        out = np.asarray(full.sum(axis=1)).ravel()
        inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        self.full_transition_t = (sp.diags(inv) @ full).T.tocsr()
        facts = driver.execute_query(
            "MATCH (f:Fact {ns: $ns}) WHERE f.embedding IS NOT NULL "
            "RETURN f.subject AS s, f.predicate AS p, f.object AS o, f.embedding AS e ORDER BY f.id",
            ns=ns, database_=database,
        ).records
        self.facts = [(f["s"], f["p"], f["o"]) for f in facts]
        self.fact_vectors = _unit(np.array([f["e"] for f in facts], dtype=np.float64).reshape(len(facts), -1))
        found = {
            r["id"]: r["e"]
            for r in driver.execute_query(
                "MATCH (p:Passage {ns: $ns}) RETURN p.id AS id, p.embedding AS e", ns=ns, database_=database
            ).records
        }
        dim = self.fact_vectors.shape[1] if len(facts) else 0
        self.passage_vectors = _unit(
            np.array([found[p] if found[p] is not None else [np.nan] * dim for p in self.passages], dtype=np.float64)
        )

    def hipporag2(
        self,
        query: np.ndarray,
        *,
        fact_top_k: int = 5,
        top_phrases: int = 5,
        passage_weight: float = 0.05,
        damping: float = 0.5,
        top_k: int = 10,
        keep: set[tuple[str, str, str]] | None = None,
        tol: float = 1e-13,
        max_iter: int = 1000,
    ) -> dict:
        """Facts (triple, cosine), phrase seeds, and the top passages by PPR mass; ``keep`` plays the
        recognition filter (only those triples seed)."""
        assert self.full_transition_t is not None, "load(..., hipporag2=True)"
        q = query / np.linalg.norm(query)
        cosines = self.fact_vectors @ q
        order = np.argsort(-cosines, kind="stable")[:fact_top_k]
        facts = [(self.facts[i], float(cosines[i])) for i in order]
        sums: dict[str, float] = {}
        counts: dict[str, int] = {}
        for triple, score in facts:
            if keep is not None and triple not in keep:
                continue
            for phrase in (triple[0], triple[2]):
                n = self.passages_per_phrase[self.phrase_index[phrase]]
                if n > 0:
                    sums[phrase] = sums.get(phrase, 0.0) + score / n
                    counts[phrase] = counts.get(phrase, 0) + 1
        seeds = dict(sorted(((t, sums[t] / counts[t]) for t in sums), key=lambda x: (-x[1], x[0]))[:top_phrases])
        n = len(self.phrases)
        reset = np.zeros(n + len(self.passages))
        for phrase, weight in seeds.items():
            reset[self.phrase_index[phrase]] = weight
        dense = self.passage_vectors @ q
        usable = np.isfinite(dense)
        lo, hi = dense[usable].min(), dense[usable].max()
        if hi > lo:
            reset[n:] = np.where(usable & (dense > lo), passage_weight * (np.nan_to_num(dense, nan=lo) - lo) / (hi - lo), 0.0)
        p = reset.copy()
        for _ in range(max_iter):
            nxt = (1 - damping) * reset + damping * (self.full_transition_t @ p)
            done = np.abs(nxt - p).sum() < tol
            p = nxt
            if done:
                break
        mass = p[n:]
        ranked = np.argsort(-mass, kind="stable")[:top_k]
        return {
            "facts": facts,
            "seeds": seeds,
            "passages": [(self.passages[i], float(mass[i])) for i in ranked],
            "passage_seeds": {self.passages[i]: float(reset[n + i]) for i in range(len(self.passages)) if reset[n + i] > 0},
        }

    def ppr(self, seeds: dict[str, float], damping: float, tol: float = 1e-13, max_iter: int = 1000) -> np.ndarray:
        reset = np.zeros(len(self.phrases))
        for phrase, weight in seeds.items():
            reset[self.phrase_index[phrase]] += weight
        reset /= reset.sum()
        p = reset.copy()
        for _ in range(max_iter):
            nxt = (1 - damping) * reset + damping * (self.transition_t @ p)
            if np.abs(nxt - p).sum() < tol:
                return nxt
            p = nxt
        return p

    def seed_weights(self, linked_phrases: list[str]) -> dict[str, float]:
        """Node specificity: 1 / |P_i| per linked phrase, normalised to sum 1."""
        raw = {t: 1.0 / self.passages_per_phrase[self.phrase_index[t]] for t in dict.fromkeys(linked_phrases)}
        total = sum(raw.values())
        return {t: w / total for t, w in raw.items()}

    def retrieve(
        self, seeds: dict[str, float], damping: float, top_k: int, min_mass: float = 0.0
    ) -> list[tuple[str, float]]:
        """Top passages by sum(PPR mass x MENTIONED_IN.count) over phrases with mass > ``min_mass``."""
        mass = self.ppr(seeds, damping)
        mass = np.where(mass > min_mass, mass, 0.0)
        scores = self.mentions.T @ mass
        order = np.argsort(-scores, kind="stable")[:top_k]
        return [(self.passages[i], float(scores[i])) for i in order if scores[i] > 0]


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True) if rows.size else np.ones((len(rows), 1))
    return np.divide(rows, norms, out=np.full_like(rows, np.nan), where=norms > 0)
