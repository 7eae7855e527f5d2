"""HippoRAG 2: the query embedding → its nearest facts (optionally kept by the LLM recognition filter) →
phrase seeds fact score / |P_i| (averaged, the largest kept) plus every passage seeded with
``passage_node_weight`` × its min-max normalised dense score → one PPR over phrases and passages in GDS →
passages ranked by their own mass (``cypher/ppr2_passages.cypher``). No fact kept: dense retrieval."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..config import HippoConfig
from ..models import FactHit, RetrievalResult, Seed
from ..graph.passage_vectors import PassageCosines
from ..graph.scope import Scope
from .base import Query, Retriever, by_score, to_passages
from .dense import DenseRetriever
from .hipporag1 import HippoRAG1Retriever, ppr_parameters
from .linking import fact_seeds, link_facts, newest_seed, recognise


def ppr2_parameters(config: HippoConfig, seeds: dict[str, float], top_k: int) -> dict[str, Any]:
    """The parameters of ``cypher/ppr2_passages.cypher`` but those that depend on the projection walked
    (``$graph``, ``$graphVersion``, ``$passageSources``: :func:`passage_seeds`) and ``$ns``."""
    return {k: v for k, v in ppr_parameters(config, seeds, top_k).items() if k not in ("minMass", "topPhrases")}


def mass_floor(weights: np.ndarray, top_k: int, damping: float) -> float:
    """A lower bound on the PPR mass of the ``top_k``-th passage of a walk whose passage seeds are ``weights``:
    GDS starts each source at (1 - damping) x its bias and only adds to it, so the ``top_k`` passages with the
    largest seeds end with at least (1 - damping) x the ``top_k``-th largest seed (``$massFloor`` of
    ``cypher/ppr2_passages.cypher``; slightly lowered against rounding). 0 when fewer passages are seeded."""
    positive = weights[weights > 0]
    if top_k < 1 or len(positive) < top_k:
        return 0.0
    kth = float(np.partition(positive, len(positive) - top_k)[len(positive) - top_k])
    return (1.0 - damping) * kth * (1.0 - 1e-9)


def passage_seeds(config: HippoConfig, cosines: PassageCosines, given: list[dict[str, Any]] | None) -> np.ndarray:
    """Each passage's seed: ``passage_node_weight`` x its min-max normalised cosine (0 at the minimum), or
    with ``given`` (:meth:`HippoRAG2Retriever.passage_seed_rows`) those rows' weights, 0 for the rest."""
    weights = np.zeros(len(cosines.ids))
    if config.passage_node_weight <= 0 or not len(weights):
        return weights
    if given is not None:
        where = {pid: i for i, pid in enumerate(cosines.ids)}
        for row in given:
            if row["id"] in where:
                weights[where[row["id"]]] = row["weight"]
        return weights
    c = cosines.cosine
    lo, hi = c.min(), c.max()
    if hi > lo:
        weights = config.passage_node_weight * (c - lo) / (hi - lo)
    return weights


class HippoRAG2Retriever(Retriever):
    name = "hipporag2"
    graph = True

    @classmethod
    def needs_entities(cls, config: HippoConfig) -> bool:
        return config.linking == "entity"

    @classmethod
    def projections(cls, config: HippoConfig) -> tuple[str, ...]:
        return ("passage",) if config.passage_nodes else ("phrase",)

    def facts(self, vector: np.ndarray, config: HippoConfig, scope: Scope | None = None) -> tuple[list[FactHit], bool]:
        """The query's nearest facts (of those a filter's passages asserted, with ``scope``), and whether the
        namespace has Fact nodes for all its passages."""
        return link_facts(self.store, vector, config.fact_top_k, scope)

    def fact_seeds(self, facts: list[FactHit], config: HippoConfig) -> dict[str, float]:
        return fact_seeds(facts, config.link_top_phrases)

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        text, top_k, cfg = query.text, query.top_k, config
        vector = self.encoder.encode_queries([text])[0] if text.strip() else None
        result = RetrievalResult(query=text, mode=self.name)
        if cfg.linking == "entity":
            result.entities, result.linked = self.context.retriever(HippoRAG1Retriever).link_query(query, cfg)
            seeds: dict[str, float] = {}
            for link in result.linked:  # the link's similarity (times its confidence) stands in for the fact score
                if link.passages > 0:
                    seeds[link.phrase] = max(seeds.get(link.phrase, 0.0), link.similarity * link.confidence / link.passages)
            seeds = dict(sorted(seeds.items(), key=lambda x: (-x[1], x[0]))[: cfg.link_top_phrases])
            reason = "no query entity links to a phrase in this namespace"
        else:
            result.facts, complete = self.facts(vector, cfg, query.scope) if vector is not None else ([], True)
            result.recognition_filter = recognise(self.context.fact_filter() if query.use_filter else None, text, result.facts)
            seeds = self.fact_seeds(result.facts, cfg)
            if not complete:
                result.warning = (
                    f"namespace {self.store.namespace!r} was indexed before Fact nodes existed and has facts for new "
                    "passages only: run `hippo rebuild-facts` (or index into it) to derive the rest"
                )
            if any(f.kept for f in result.facts):
                reason = "no retrieved fact is similar to the query"  # every kept fact has cosine <= 0
            elif result.facts:
                reason = "the recognition filter kept no fact"
            elif vector is None or self.store.has_facts():
                reason = "no fact links to the query"
            else:
                reason = "no fact in this namespace"
        result.phrase_seeds = [Seed(node=t, weight=w) for t, w in seeds.items()]
        if not seeds:
            fallback = self.context.retriever(DenseRetriever).rank(text, top_k, vector, query.scope)
            result.passages, result.fell_back, result.fallback_reason = fallback.passages, True, reason
            return result
        newest = newest_seed(seeds, result.linked, result.facts)
        (kind,) = self.projections(cfg)  # phrase or passage
        if not cfg.passage_nodes:  # ablation: phrases only, passages scored as in hipporag1
            records = self.walk(result, query, "ppr_passages", kind, needs=newest, **ppr_parameters(cfg, seeds, top_k))
            result.top_phrases = records[0]["topPhrases"] if records else []
            result.passages = to_passages(records)
            return result
        given = self.passage_seed_rows(text, vector, cfg, query.scope)
        seeding = self.passage_seeding(vector, lambda cosines: passage_seeds(cfg, cosines, given), query.scope)
        floor = [0.0]  # the statement sorts only the nodes at or above it, unless that left it short of top_k

        def floored(graph: Any) -> dict[str, Any]:
            more = seeding(graph)
            floor[0] = mass_floor(seeding.weights, top_k, cfg.damping)
            return more | {"massFloor": floor[0]}

        params = ppr2_parameters(cfg, seeds, top_k)
        records = self.walk(result, query, "ppr2_passages", kind, needs=newest, prepare=floored, **params)
        if records and len(records[0]["ranked"]) < top_k and floor[0] > 0:
            # a seeded passage is gone since the projection was built: rank every node
            records = self.walk(result, query, "ppr2_passages", kind, needs=newest, prepare=seeding, massFloor=0.0, **params)
        if records:
            # (which of the passages tied at the k-th place comes back is still the server's order)
            result.passages = to_passages(by_score(records[0]["ranked"]))
            result.passage_seeds = seeding.largest()
        return result

    def passage_seed_rows(self, text: str, vector: np.ndarray | None, config: HippoConfig,
                          scope: Scope | None = None) -> list[dict[str, Any]] | None:
        """With ``passage_seed_top_n``: the passage seeds of the top-N dense passages (of ``scope``, a filter's,
        when given; min-max over them)."""
        n, weight = config.passage_seed_top_n, config.passage_node_weight
        if n is None or weight <= 0:
            return None
        top = self.context.retriever(DenseRetriever).rank(text, n, vector, scope).passages
        if not top:
            return []
        lo, hi = min(p.score for p in top), max(p.score for p in top)
        return [{"id": p.id, "weight": weight * (p.score - lo) / (hi - lo)} for p in top if p.score > lo]
