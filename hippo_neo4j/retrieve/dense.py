"""Dense retrieval (the baseline): passages by cosine to the query embedding, through the passage vector index."""

from __future__ import annotations

import numpy as np

from ..config import HippoConfig
from ..graph.store import VECTOR_CANDIDATES, usable
from ..models import RetrievalResult
from .base import Query, Retriever, to_passages


class DenseRetriever(Retriever):
    name = "dense"

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        return self.rank(query.text, query.top_k)

    def rank(self, text: str, top_k: int, vector: np.ndarray | None = None) -> RetrievalResult:
        """The ``top_k`` passages nearest to ``text`` (or to its ``vector``, when already encoded)."""
        if not text.strip():
            return RetrievalResult(query=text, mode=self.name)
        if vector is None:
            vector = self.encoder.encode_queries([text])[0]
        if not usable(vector):
            return RetrievalResult(query=text, mode=self.name)
        # the index is approximate (HNSW): its beam, see VECTOR_CANDIDATES
        records = self.store.run("dense_passages", embedding=vector.tolist(), k=max(4 * top_k, VECTOR_CANDIDATES), topK=top_k)
        return RetrievalResult(query=text, mode=self.name, passages=to_passages(records))
