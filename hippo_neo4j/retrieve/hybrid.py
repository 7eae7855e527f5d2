"""Hybrid: hipporag1 fused with dense retrieval, λ·minmax(hipporag1) + (1 − λ)·minmax(dense) over both
lists' top ``hybrid_depth`` passages (``hybrid_lambda``)."""

from __future__ import annotations

from typing import Sequence

from ..config import HippoConfig
from ..models import RetrievalResult, RetrievedPassage
from .base import Query, Retriever
from .dense import DenseRetriever
from .hipporag1 import HippoRAG1Retriever


def fuse(graph: Sequence[RetrievedPassage], dense: Sequence[RetrievedPassage], lam: float) -> list[RetrievedPassage]:
    """Hybrid ranking: λ·minmax(graph score) + (1 − λ)·minmax(dense score) over the union of both lists (a
    passage missing from one list scores 0 there)."""

    def minmax(items: Sequence[RetrievedPassage]) -> dict[str, float]:
        if not items:
            return {}
        lo, hi = min(p.score for p in items), max(p.score for p in items)
        return {p.id: (p.score - lo) / (hi - lo) if hi > lo else 1.0 for p in items}

    g, d = minmax(graph), minmax(dense)
    by_id = {p.id: p for p in list(dense) + list(graph)}
    scored = {pid: lam * g.get(pid, 0.0) + (1 - lam) * d.get(pid, 0.0) for pid in by_id}
    order = sorted(scored, key=lambda pid: (-scored[pid], pid))
    return [by_id[pid].model_copy(update={"score": scored[pid]}) for pid in order]


class HybridRetriever(Retriever):
    name = "hybrid"
    graph = True
    links_entities = True

    @classmethod
    def projections(cls, config: HippoConfig) -> tuple[str, ...]:
        return ("phrase",)  # hipporag1's

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        depth = max(query.top_k, config.hybrid_depth)
        graph = self.context.retriever(HippoRAG1Retriever).get_search_results(query.model_copy(update={"top_k": depth}), config)
        dense = graph if graph.fell_back else self.context.retriever(DenseRetriever).rank(query.text, depth, scope=query.scope)
        result = graph.model_copy(update={"mode": self.name, "top_phrases": []})
        result.passages = fuse(graph.passages, dense.passages, config.hybrid_lambda)[: query.top_k]
        return result
