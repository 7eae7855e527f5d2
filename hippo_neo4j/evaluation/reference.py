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

import functools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np
import scipy.sparse as sp
from neo4j import Driver

from ..retrieve.entity_ppr import (COSINE_PRECISION, HOP_STEPS, WINDOW, Ranking, agreement_chances, evidence,
                                   hop_sources, walk_precision)
from ..text import normalize_phrase

if TYPE_CHECKING:
    from ..memory import HippoRAG

# the weight (times its own) with which the entity walk and the hop step from a passage into a phrase that leads
# nowhere else: cypher/project_mention_graph.cypher's `path` weight, the stand-in for a weight that tends to 0
LEADS_NOWHERE = 1.0e-9


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
    mention_transition_t: sp.csr_matrix | None = None  # the same nodes, named MENTIONED_IN edges only (entity-ppr)
    # the same, where a passage steps into the phrases that lead nowhere else LEADS_NOWHERE times as much (the entity
    # walk)
    entity_transition_t: sp.csr_matrix | None = None
    hop_transition_t: sp.csr_matrix | None = None  # those, each named mention weighted by its count (the second hop)
    leads: np.ndarray | None = None  # the phrases that lead somewhere else (another passage, a synonym)
    # T^T of the mention graph, each mention once or by its count (``counted``), where a passage steps into the
    # phrases outside the mask ``leads`` LEADS_NOWHERE times as much (None: into every one alike)
    path_transition: Callable[[bool, np.ndarray | None], sp.csr_matrix] | None = None
    # a passage's named mentions there (its degree), of every phrase ("all") or of those with another neighbour ("shared")
    mention_counts: dict[str, np.ndarray] = field(default_factory=dict)
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
            "RETURN a.text AS a, b.text AS b, type(r) = 'SYNONYM' AS synonym, "
            "toFloat(CASE type(r) WHEN 'RELATION' THEN r.weight ELSE r.score END) AS w",
            ns=ns,
            database_=database,
        ).records
        n = len(phrases)

        def undirected(kept: list[Any]) -> sp.csr_matrix:
            rows = [index[e["a"]] for e in kept] + [index[e["b"]] for e in kept]
            cols = [index[e["b"]] for e in kept] + [index[e["a"]] for e in kept]
            return sp.csr_matrix(([e["w"] for e in kept] * 2, (rows, cols)), shape=(n, n))

        adjacency = undirected(edges)
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
            graph._load_hipporag2(driver, database, ns, adjacency, undirected([e for e in edges if e["synonym"]]))
        return graph

    def _load_hipporag2(
        self, driver: Driver, database: str, ns: str, adjacency: sp.csr_matrix, synonym: sp.csr_matrix
    ) -> None:
        links = (self.mentions > 0).astype(float)
        full = sp.bmat([[adjacency, links], [links.T, None]]).tocsr()
        out = np.asarray(full.sum(axis=1)).ravel()
        inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        self.full_transition_t = (sp.diags(inv) @ full).T.tocsr()
        named = driver.execute_query(
            "MATCH (a:Phrase {ns: $ns})-[m:MENTIONED_IN]->(p:Passage {ns: $ns}) WHERE coalesce(m.named, true) "
            "RETURN a.text AS a, p.id AS p, toFloat(coalesce(m.count, 1)) AS c",
            ns=ns, database_=database,
        ).records
        pindex = {p: i for i, p in enumerate(self.passages)}
        where = ([self.phrase_index[r["a"]] for r in named], [pindex[r["p"]] for r in named])

        def transition(weights: list[float],
                       leads: np.ndarray | None = None) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray]:
            """The mention graph's T^T with these weights on the named mentions (synonyms their score), its
            phrase-passage links and each node's weighted degree; with ``leads`` (a phrase mask), a passage steps
            into the other phrases with LEADS_NOWHERE times their weight, the `path` weights of
            cypher/project_mention_graph.cypher (a passage that names none of those phrases into its own)."""
            links = sp.csr_matrix((weights, where), shape=(len(self.phrases), len(self.passages)))
            back = links if leads is None else sp.diags(np.where(leads, 1.0, LEADS_NOWHERE)) @ links
            both = sp.bmat([[synonym, links], [back.T, None]], format="csr")
            both = sp.csr_matrix(both, shape=(len(self.phrases) + len(self.passages),) * 2)
            out = np.asarray(both.sum(axis=1)).ravel()
            inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
            return (sp.diags(inv) @ both).T.tocsr(), both, out

        self.mention_transition_t, both, out = transition([1.0] * len(named))  # the walk: each mention once
        links = both[: len(self.phrases), len(self.phrases):]
        shared = np.asarray((both[: len(self.phrases)] > 0).sum(axis=1)).ravel() >= 2  # it leads somewhere else too
        counts = [r["c"] for r in named]
        self.leads = shared
        self.path_transition = lambda counted, leads: transition(counts if counted else [1.0] * len(named), leads)[0]
        # the entity walk and the hop step from a passage into the phrases that lead somewhere (others: LEADS_NOWHERE)
        self.entity_transition_t = self.path_transition(False, shared)
        self.hop_transition_t = self.path_transition(True, shared)  # the hop: each mention as often as it is made
        self.mention_counts = {"all": out[len(self.phrases):], "shared": np.asarray(links[shared].sum(axis=0)).ravel()}
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
        mass = walk(self.full_transition_t, reset, damping, tol, max_iter)[n:]
        ranked = np.argsort(-mass, kind="stable")[:top_k]
        return {
            "facts": facts,
            "seeds": seeds,
            "passages": [(self.passages[i], float(mass[i])) for i in ranked],
            "passage_seeds": {self.passages[i]: float(reset[n + i]) for i in range(len(self.passages)) if reset[n + i] > 0},
        }

    def entity_ppr(
        self,
        query: np.ndarray,
        seeds: dict[str, float],
        *,
        entity_share: float = 0.5,
        damping: float = 0.5,
        top_k: int = 10,
        tol: float = 1e-13,
        max_iter: int = 1000,
        agreement: bool = True,
        hop: bool = True,
        precision: float = 1e-7,
        hop_masses: Callable[[ReferenceGraph, np.ndarray, dict[str, float], float],
                             tuple[np.ndarray, np.ndarray]] | None = None,
        passage_seeds: int | None = None,
        per_mention: frozenset[str] = frozenset(),
        mentions: str = "all",
        mention_power: float = 1.0,
        no_returns: frozenset[str] = frozenset(),
        paths: frozenset[str] = frozenset({"entity", "hop"}),
        seed_mentions: bool = False,
    ) -> dict:
        """entity-ppr (hippo_neo4j/retrieve/entity_ppr.py): ``seeds`` (phrase -> weight, the links' weights) scaled
        to sum ``entity_share``; passages above the mean cosine seeded by their z-score, scaled to sum the rest (all
        of it with no phrase seed); the walk, the entity walk (the phrase seeds alone) and, from the passages dense
        and the entity walk agree on (weighted by that agreement), a walk of ``HOP_STEPS`` steps, each ranking the
        passages among its ``WINDOW`` nodes with the most mass (masses equal to ``precision``, the server's walks'
        ``walk_precision``, by id); passages by the evidence of those rankings (``entity_ppr.evidence``).
        ``hop_masses(graph, query, sources, damping)``: the second hop's masses and what each passage's is taken
        down by, in place of :meth:`hop_masses` (bench/hop_variants.py). ``passage_seeds``: the walk seeds only the
        passages with the largest z-scores, that many (bench/seed_variants.py; None: every one above the mean).
        ``per_mention``: the signals among "walk", "entity" and "hop" that rank a passage by its mass divided by its
        named mentions (``mentions``: "all", or "shared", those of phrases with another neighbour), its degree in the
        mention graph, to the power ``mention_power``, instead of by its mass; ``no_returns``: those that rank it by
        its mass less what it gets back through the phrases only it names, a share d² of what it sends them
        (bench/degree_variants.py; none: the mode). ``paths``: the signals among "walk", "entity" and "hop" whose walks
        step from a passage only into the phrases that lead somewhere else (the mode: the entity walk and the hop),
        the others into every phrase it names; ``seed_mentions``: those walks also step into the question's phrases
        (bench/path_variants.py)."""
        assert self.mention_transition_t is not None, "load(..., hipporag2=True)"
        q = query / np.linalg.norm(query)
        n, m = len(self.phrases), len(self.passages)
        reset = np.zeros(n + m)
        raw = {t: w for t, w in seeds.items() if w > 0}
        for phrase, weight in raw.items():
            reset[self.phrase_index[phrase]] = entity_share * weight / sum(raw.values())
        dense = self.passage_vectors @ q
        usable = np.isfinite(dense)
        mean, sd = dense[usable].mean(), dense[usable].std()
        z = np.where(usable & (dense > mean), (np.nan_to_num(dense, nan=mean) - mean) / (sd if sd > 0 else 1.0), 0.0)
        if passage_seeds is not None and np.count_nonzero(z) > passage_seeds:  # ties at the cut by passage order
            z[np.argsort(-z, kind="stable")[passage_seeds:]] = 0.0
        if sd > 0 and z.sum() > 0:
            reset[n:] = (1.0 - entity_share if raw else 1.0) * z / z.sum()
        # each signal's graph (the hop's weighs each mention by its count): the mode's, or a variant's own
        transitions = {"walk": self.mention_transition_t, "entity": self.entity_transition_t,
                       "hop": self.hop_transition_t}
        if seed_mentions or paths != {"entity", "hop"}:
            assert self.path_transition is not None and self.leads is not None
            leads = self.leads.copy()
            if seed_mentions:
                leads[[self.phrase_index[t] for t in raw]] = True
            transitions = {signal: self.path_transition(signal == "hop", leads if signal in paths else None)
                           for signal in transitions}
        full = walk(transitions["walk"], reset, damping, tol, max_iter)

        count = np.maximum(self.mention_counts[mentions], 1.0)
        every = self.mention_counts["all"]
        # a passage's mass is the rest / (1 - d² · the share of its mentions whose phrases lead nowhere else)
        rest = 1 - damping ** 2 * (every - self.mention_counts["shared"]) / np.maximum(every, 1.0)

        def ranking(masses: np.ndarray, taken: np.ndarray | None = None, signal: str = "") -> Ranking:
            """The passages among the WINDOW nodes with the most mass (the hop: its WINDOW passages), by their mass
            (less ``taken``), per mention for a ``signal`` of ``per_mention``."""
            top = n + np.argsort(-masses[n:], kind="stable")[:WINDOW] if signal == "hop" else \
                np.argsort(-masses, kind="stable")[:WINDOW]
            kept = top[(top >= n) & (masses[top] > 0)] - n
            left = masses[n:][kept] - (taken[kept] if taken is not None else 0.0)
            if signal in per_mention:
                left = left / count[kept] ** mention_power
            if signal in no_returns:  # ranked by the rest
                left = left * rest[kept]
            return Ranking.of({self.passages[i]: float(x) for i, x in zip(kept, left)}, precision)

        kept = np.flatnonzero(usable)
        by_dense = Ranking.top([self.passages[i] for i in kept], dense[kept], COSINE_PRECISION)
        by_walk = ranking(full, signal="walk")
        by_entity = by_hop = None
        sources: dict[str, float] = {}
        if raw and agreement:
            entity_reset = np.zeros_like(reset)
            entity_reset[:n] = reset[:n]
            by_entity = ranking(walk(transitions["entity"], entity_reset, damping, tol, max_iter), signal="entity")
            sources = hop_sources(agreement_chances(int(usable.sum()), by_dense, by_entity)) if hop else {}
            if sources:
                hop_of = hop_masses or functools.partial(ReferenceGraph.hop_masses, transition=transitions["hop"])
                by_hop = ranking(*hop_of(self, q, sources, damping), signal="hop")
        found = evidence(int(usable.sum()), by_dense, by_walk, by_entity, by_hop)
        ranked = found.order()[:top_k]
        return {"passages": [(pid, found.score(pid)) for pid in ranked], "placed": {pid: found.placed[pid] for pid in ranked},
                "sources": sources, "phrase_seeds": {self.phrases[i]: float(reset[i]) for i in range(n) if reset[i] > 0}}

    def hop_masses(self, query: np.ndarray, sources: dict[str, float], damping: float,
                   transition: sp.csr_matrix | None = None) -> tuple[np.ndarray, np.ndarray]:
        """entity-ppr's second hop: the masses of a walk of ``HOP_STEPS`` steps from ``sources`` (passage id ->
        weight) over the mention graph (phrases, then passages), each named mention weighted by its count (how often
        the passage makes it: ``hop_transition_t``), and each passage's own starting mass, (1 - d) x its weight,
        which its ranking takes out (``query``, the unit query vector, is for variants that read it; ``transition``:
        another graph's T^T)."""
        assert self.hop_transition_t is not None, "load(..., hipporag2=True)"
        n, index = len(self.phrases), {p: i for i, p in enumerate(self.passages)}
        reset = np.zeros(n + len(self.passages))
        for pid, w in sources.items():
            reset[n + index[pid]] = w
        t = self.hop_transition_t if transition is None else transition
        return short_walk(t, reset, damping, HOP_STEPS), (1 - damping) * reset[n:]

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


def walk(transition_t: sp.csr_matrix, reset: np.ndarray, damping: float, tol: float, max_iter: int) -> np.ndarray:
    """Personalized PageRank with GDS's semantics: p = (1 - d)·reset + d·Tᵀp, iterated until the L1 change < tol."""
    p = reset.copy()
    for _ in range(max_iter):
        nxt = (1 - damping) * reset + damping * (transition_t @ p)
        if np.abs(nxt - p).sum() < tol:
            return nxt
        p = nxt
    return p


def short_walk(transition_t: sp.csr_matrix, reset: np.ndarray, damping: float, steps: int) -> np.ndarray:
    """GDS's PageRank stopped after ``steps`` + 1 iterations: (1 - d)·Σ_{j<=steps} dʲ·(Tᵀ)ʲ·reset, the mass of
    every path of up to ``steps`` steps from the reset."""
    term = (1 - damping) * reset
    total = term.copy()
    for _ in range(steps):
        term = damping * (transition_t @ term)
        total += term
    return total


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True) if rows.size else np.ones((len(rows), 1))
    return np.divide(rows, norms, out=np.full_like(rows, np.nan), where=norms > 0)


# ------------------------------------------------------------------------------------ in-process baseline


_TOKEN = re.compile(r"\w+", re.UNICODE)


@dataclass
class InProcess:
    """The retrieval modes in-process over one namespace's graph, read back from Neo4j."""

    ref: ReferenceGraph
    encoder: Any
    phrase_vectors: np.ndarray  # rows aligned with ref.phrases (NaN rows: unusable embeddings)
    passage_vectors: np.ndarray  # rows aligned with ref.passages
    bm25_weights: sp.csc_matrix  # passages x terms
    vocabulary: dict[str, int]
    min_mass: float = 0.0  # the same cut as HippoConfig.ppr_min_mass

    @classmethod
    def load(cls, memory: "HippoRAG") -> "InProcess":
        ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace, hipporag2=True)
        dim = memory.encoder.dimension

        def vectors(records: Sequence[Any], order: dict[str, int]) -> np.ndarray:
            out = np.full((len(order), dim), np.nan, dtype=np.float32)
            for r in records:
                if r["e"] is not None:
                    out[order[r["key"]]] = r["e"]
            return out

        passage_order = {p: i for i, p in enumerate(ref.passages)}
        passages = memory.store.run("passage_embeddings")
        texts = {r["key"]: f"{r['title'] or ''} {r['text'] or ''}" for r in passages}
        weights, vocab = _bm25_matrix([texts[p] for p in ref.passages])
        return cls(
            ref, memory.encoder, vectors(memory.store.run("phrase_embeddings"), ref.phrase_index),
            vectors(passages, passage_order),
            weights, vocab, memory.config.ppr_min_mass,
        )

    def _top(self, scores: np.ndarray, top_k: int, positive: bool = False) -> list[tuple[str, float]]:
        k = min(top_k, len(scores))
        if k == 0:
            return []
        part = np.argpartition(-scores, k - 1)[:k]
        order = part[np.argsort(-scores[part], kind="stable")]
        return [(self.ref.passages[i], float(scores[i])) for i in order if not positive or scores[i] > 0]

    def link(self, entities: Sequence[str]) -> list[str]:
        names = list(dict.fromkeys(normalize_phrase(e) for e in entities if normalize_phrase(e)))
        if not names:
            return []
        sims = np.nan_to_num(self.phrase_vectors, nan=0.0) @ self.encoder.encode(names).T
        return [self.ref.phrases[i] for i in np.argmax(sims, axis=0)]

    def hipporag1(self, entities: Sequence[str], damping: float, top_k: int, tol: float, max_iter: int) -> list[tuple[str, float]]:
        linked = self.link(entities)
        if not linked:
            return self.dense(" ".join(entities), top_k)
        seeds = self.ref.seed_weights(linked)
        mass = self.ref.ppr(seeds, damping, tol=tol, max_iter=max_iter)
        mass = np.where(mass > self.min_mass, mass, 0.0)
        return self._top(self.ref.mentions.T @ mass, top_k, positive=True)

    def hipporag2(self, text: str, config: Any, top_k: int) -> list[tuple[str, float]]:
        found = self.ref.hipporag2(
            self.encoder.encode_queries([text])[0], fact_top_k=config.fact_top_k, top_phrases=config.link_top_phrases,
            passage_weight=config.passage_node_weight, damping=config.damping, top_k=top_k,
            tol=config.ppr_tolerance, max_iter=config.ppr_max_iterations,
        )
        return found["passages"]

    def entity_ppr(self, text: str, entities: Sequence[str], config: Any, top_k: int) -> list[tuple[str, float]]:
        """entity-ppr from the query entities given (each linked to its nearest phrase, 1/|P_i| a link)."""
        seeds: dict[str, float] = {}
        for phrase in self.link(entities):  # a phrase two entities link to is seeded by both
            count = self.ref.passages_per_phrase[self.ref.phrase_index[phrase]]
            if count > 0:
                seeds[phrase] = seeds.get(phrase, 0.0) + 1.0 / count
        found = self.ref.entity_ppr(
            self.encoder.encode_queries([text])[0], seeds, entity_share=config.entity_share,
            damping=config.damping, top_k=top_k, tol=config.ppr_tolerance, max_iter=config.ppr_max_iterations,
            agreement=config.entity_agreement, hop=config.entity_hop, precision=walk_precision(config),
        )
        return found["passages"]

    def dense(self, text: str, top_k: int) -> list[tuple[str, float]]:
        vector = self.encoder.encode_queries([text])[0]
        return self._top(np.nan_to_num(self.passage_vectors, nan=-1.0) @ vector, top_k)

    def bm25(self, text: str, top_k: int) -> list[tuple[str, float]]:
        terms = [self.vocabulary[t] for t in dict.fromkeys(_TOKEN.findall(text.lower())) if t in self.vocabulary]
        if not terms:
            return []
        scores = np.asarray(self.bm25_weights[:, terms].sum(axis=1)).ravel()
        return self._top(scores, top_k)


def _bm25_matrix(texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> tuple[sp.csc_matrix, dict[str, int]]:
    """Per (passage, term) BM25 weights (Lucene's defaults); a query's score is the sum over its terms."""
    vocab: dict[str, int] = {}
    rows, cols, vals, lengths = [], [], [], []
    for i, text in enumerate(texts):
        tokens = _TOKEN.findall(text.lower())
        lengths.append(len(tokens))
        counts: dict[int, int] = {}
        for t in tokens:
            j = vocab.setdefault(t, len(vocab))
            counts[j] = counts.get(j, 0) + 1
        rows += [i] * len(counts)
        cols += list(counts)
        vals += list(counts.values())
    tf = sp.csr_matrix((np.asarray(vals, dtype=float), (rows, cols)), shape=(len(texts), len(vocab)))
    n = len(texts)
    df = np.bincount(cols, minlength=len(vocab)).astype(float)
    idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
    dl = np.asarray(lengths, dtype=float)
    norm = k1 * (1 - b + b * dl / max(dl.mean(), 1e-9))
    coo = tf.tocoo()
    weight = idf[coo.col] * coo.data * (k1 + 1) / (coo.data + norm[coo.row])
    return sp.csc_matrix((weight, (coo.row, coo.col)), shape=tf.shape), vocab
