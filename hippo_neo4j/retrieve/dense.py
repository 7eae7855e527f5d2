"""Dense retrieval (the baseline): passages by cosine to the query embedding, through the passage vector index;
within a filter's passages, by exact cosines when few pass (the index's nearest may hold none of them)."""

from __future__ import annotations

import numpy as np

from ..config import HippoConfig
from ..graph.store import CANDIDATES_PER_PASSAGE, usable, vector_beam
from ..models import RetrievalResult
from ..graph.scope import Scope
from .base import Query, Retriever, to_passages


class DenseRetriever(Retriever):
    name = "dense"

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        return self.rank(query.text, query.top_k, scope=query.scope)

    def rank(self, text: str, top_k: int, vector: np.ndarray | None = None, scope: Scope | None = None) -> RetrievalResult:
        """The ``top_k`` passages nearest to ``text`` (or to its ``vector``, when already encoded), of ``scope``
        only when given (a filter's passages)."""
        if not text.strip() or (scope is not None and not len(scope)):
            return RetrievalResult(query=text, mode=self.name)
        if vector is None:
            vector = self.encoder.encode_queries([text])[0]
        if not usable(vector):
            return RetrievalResult(query=text, mode=self.name)
        beam = vector_beam(top_k, CANDIDATES_PER_PASSAGE)  # the index is approximate (HNSW)
        if scope is None:
            records = self.store.run("dense_passages", embedding=vector.tolist(), k=beam, topK=top_k)
            return RetrievalResult(query=text, mode=self.name, passages=to_passages(records))
        embedding = vector.tolist()
        records = scope.search(
            beam, top_k,
            lambda k: self.store.run("dense_passages_within", embedding=embedding, k=k, topK=top_k, nodes=scope.nodes),
            lambda: self.store.run("dense_matching", embedding=embedding, topK=top_k, nodes=scope.nodes))
        return RetrievalResult(query=text, mode=self.name, passages=to_passages(records))
