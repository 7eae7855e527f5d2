"""An independent in-process implementation of HippoRAG retrieval (numpy/scipy) over a graph read back
from Neo4j. It checks the GDS + Cypher path and is the in-process baseline of the benchmarks.

Semantics (the same as GDS PageRank with weighted ``sourceNodes``): the phrase graph is undirected, an
edge's weight is RELATION.weight or SYNONYM.score (parallel edges add up), transitions are row-normalised,
a node with no edges passes nothing on, and ``p = (1 - d) * reset + d * T^T p``.
"""

from __future__ import annotations

from dataclasses import dataclass

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

    @classmethod
    def load(cls, driver: Driver, database: str, ns: str) -> "ReferenceGraph":
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
        return cls(phrases, index, passages, transition.T.tocsr(), mentions, per_phrase)

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
