"""The namespace's passage embeddings, held by the client for the walks that seed every passage by its
cosine to the query (entity-ppr's z-scores, hipporag2's min-max normalised scores).

Computing those cosines in Cypher reads every passage's embedding from the store on every query (about
30 ms on musique_train's 1,890 passages, linear in the namespace). The client instead reads the vectors
once and computes the cosines with one matrix product, then hands GDS the seeds as Neo4j node ids. After a
write (the namespace's graph version moved), the next query re-reads the passages' node ids and content
hashes, without their vectors, and fetches the vectors of the passages that are new or changed only; a
deleted passage drops out. A namespace whose vectors exceed ``HIPPO_PASSAGE_VECTORS_MB`` (default 1024 MB)
is scored by the server instead (``cypher/passage_cosines.cypher``), with the same result.

Which passages a walk seeds is decided per query: those of the projection's graph version or older
(``since``), as the statements did.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..config import env_number

if TYPE_CHECKING:
    from .projection import Projection
    from .store import GraphStore


def memory_limit_mb() -> float:
    return env_number("HIPPO_PASSAGE_VECTORS_MB", 1024.0, float)


@dataclass
class PassageCosines:
    """The cosine of a query and each passage a walk may seed: ``nodes`` (Neo4j node ids), ``ids`` (passage
    ids) and ``cosine``, in the same order."""

    nodes: np.ndarray
    ids: list[str]
    cosine: np.ndarray

    def top(self, weights: np.ndarray, n: int) -> list[dict[str, Any]]:
        """The ``n`` largest of ``weights`` (one per passage, in this order) with their passage ids."""
        order = sorted(range(len(weights)), key=lambda i: (-weights[i], self.ids[i]))[:n]
        return [{"id": self.ids[i], "weight": float(weights[i])} for i in order]


class PassageVectors:
    """A read cache of one namespace's passage vectors (unit rows, float32), current as of graph version
    ``version`` of the namespace."""

    def __init__(self, store: "GraphStore", limit_mb: float | None = None) -> None:
        self.store = store
        self.limit_mb = memory_limit_mb() if limit_mb is None else limit_mb
        self.version: int | None = None  # the namespace's graph version the cache was read at
        self.server_side = False  # too large for the limit: the server computes the cosines
        self._lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self.nodes = np.zeros(0, dtype=np.int64)
        self.ids: list[str] = []
        self.since = np.zeros(0, dtype=np.int64)
        self.hashes: list[str | None] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)

    def cosines(self, vector: np.ndarray, graph: "Projection") -> PassageCosines:
        """The cosine of ``vector`` and every passage with an embedding in ``graph``'s version (``since``)."""
        query = np.asarray(vector, dtype=np.float32)
        with self._lock:
            if self.version != graph.current:
                self._refresh(graph.current, len(query))
            if not self.server_side:
                keep = self.since <= graph.version
                norm = float(np.linalg.norm(query))
                rows = self.matrix[keep]
                cosine = rows @ (query / norm) if norm > 0 and len(rows) else np.zeros(len(rows), np.float32)
                ids = [i for i, k in zip(self.ids, keep) if k]
                return PassageCosines(self.nodes[keep], ids, cosine.astype(np.float64))
        rows = self.store.run("passage_cosines", embedding=query.astype(float).tolist(), graphVersion=graph.version)
        return PassageCosines(
            np.array([r["node"] for r in rows], dtype=np.int64), [r["id"] for r in rows],
            np.array([r["cosine"] for r in rows], dtype=np.float64),
        )

    def _refresh(self, version: int, dimension: int) -> None:
        """Bring the cache to the namespace's graph version ``version``, read before this call (a write that
        lands meanwhile moves the version again, and the next query refreshes once more): the node ids and
        hashes of every passage, then the vectors of those not cached with the same hash."""
        stamps = self.store.run("passage_vectors", nodes=None, vectors=False)
        self.version = version
        if len(stamps) * dimension * 4 / 2**20 > self.limit_mb:
            self._clear()
            self.server_side = True
            return
        self.server_side = False
        known = {int(n): (h, i) for i, (n, h) in enumerate(zip(self.nodes, self.hashes))}
        keep: list[int] = []
        fetch: list[int] = []
        for r in stamps:
            cached = known.get(r["node"])
            if cached is not None and r["hash"] is not None and cached[0] == r["hash"]:
                keep.append(cached[1])
            else:
                fetch.append(r["node"])
        if not keep:  # nothing to reuse: every vector in one statement
            self._set(self.store.run("passage_vectors", nodes=None, vectors=True))
            return
        fetched = self.store.run("passage_vectors", nodes=fetch, vectors=True) if fetch else []
        reused = [{"node": int(self.nodes[i]), "id": self.ids[i], "since": int(self.since[i]), "hash": self.hashes[i]}
                  for i in keep]
        self._set(reused + list(fetched), kept=self.matrix[keep])

    def _set(self, rows: list[Any], kept: np.ndarray | None = None) -> None:
        """Rows carrying ``embedding`` are new vectors; the first ``len(kept)`` rows reuse ``kept``."""
        first = 0 if kept is None else len(kept)
        fresh = [np.asarray(r["embedding"], dtype=np.float32) for r in rows[first:]]
        blocks = ([kept] if kept is not None else []) + ([np.vstack(fresh)] if fresh else [])
        matrix = np.vstack(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
        if fresh:  # unit rows, so that one product gives the cosines
            tail = matrix[first:]
            norms = np.linalg.norm(tail, axis=1, keepdims=True)
            matrix[first:] = np.divide(tail, norms, out=np.zeros_like(tail), where=norms > 0)
        self.matrix = matrix
        self.nodes = np.array([r["node"] for r in rows], dtype=np.int64)
        self.ids = [r["id"] for r in rows]
        self.since = np.array([r["since"] for r in rows], dtype=np.int64)
        self.hashes = [r["hash"] for r in rows]
