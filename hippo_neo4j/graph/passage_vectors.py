"""The namespace's passage embeddings, held by the client for the walks that seed every passage by its
cosine to the query (entity-ppr's z-scores, hipporag2's min-max normalised scores).

Computing those cosines in Cypher reads every passage's embedding from the store on every query (time linear
in the namespace). The client instead reads the vectors
once and computes the cosines with one matrix product, then hands GDS the seeds as Neo4j node ids. After a
write (the namespace's graph version moved), the next query re-reads the passages' node ids and content
hashes, without their vectors, and fetches the vectors of the passages that are new or changed only; a
deleted passage drops out. A namespace whose vectors exceed ``HIPPO_PASSAGE_VECTORS_MB`` (default 1024 MB)
is scored by the server instead (``cypher/passage_cosines.cypher``), with the same result. So is a client's
first query: a one-shot process (``hippo query``) would read every vector to score one query, where the
server reads each embedding once as well but sends back one number per passage.

Which passages a walk seeds is decided per query: those of the projection's graph version or older
(``since``), as the statements did. Every one of them must be in the projection (GDS refuses a source node it
does not hold), so the cache is read again when it was read before the projection was first seen: a projection
is named by the version read before it was built, and a passage deleted meanwhile is not in it, while a cache
read in between, at that version, still holds it.

The product is numpy's ``einsum``, not BLAS: OpenBLAS hands a product this large to worker threads that then spin,
waiting for more work, for a while after it returns, on the cores a walk on a server on the same machine needs
next: entity-ppr, whose walks run side by side, was slower with the BLAS product although the product itself is
faster (docs/design.md, "Passage seeds are scored by the client"). (Limiting BLAS to one thread around the
product would change a process-wide setting, which threadpoolctl lets one thread set.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from neo4j.vector import Vector

from ..config import env_number

if TYPE_CHECKING:
    from .projection import Projection
    from .store import GraphStore


def memory_limit_mb() -> float:
    return env_number("HIPPO_PASSAGE_VECTORS_MB", 1024.0, float)


def vector_rows(values: Sequence[Any]) -> np.ndarray:
    """Embeddings as a statement returned them, as one float32 matrix, a row each: lists of floats, or VECTOR values
    (where the server sends them: ``db.packed_embeddings``), whose bytes are read in one piece. Every row has the
    same dimension."""
    if not len(values):
        return np.zeros((0, 0), dtype=np.float32)
    if isinstance(values[0], Vector):
        packed = b"".join(v.raw(byteorder="little") for v in values)
        return np.frombuffer(packed, dtype="<f4").reshape(len(values), -1).astype(np.float32)
    return np.asarray(values, dtype=np.float32).reshape(len(values), -1)


def unit_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` scaled to unit length (a row of norm 0 stays zeros), and which rows had a length."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0), norms[:, 0] > 0


@dataclass
class PassageCosines:
    """The cosine of a query and each passage a walk may seed: ``nodes`` (Neo4j node ids), ``ids`` (passage
    ids) and ``cosine``, in the same order."""

    nodes: np.ndarray
    ids: list[str]
    cosine: np.ndarray

    def sources(self, weights: np.ndarray) -> np.ndarray:
        """GDS source rows [node id, weight] of the passages with a positive weight (one per passage, in this
        order), as one float64 array that the driver sends as a list of pairs; the statements read each id back
        with ``toInteger`` (exact below 2^53). Not a Python list: the driver formats its debug line of every
        statement's parameters whether it logs it or not, and a list of a pair per passage costs far more to format
        than numpy's summary of an array."""
        positive = weights > 0
        return np.column_stack([self.nodes[positive].astype(np.float64), weights[positive].astype(np.float64)])

    def within(self, nodes: list[int]) -> "PassageCosines":
        """The cosines of the passages among ``nodes`` (Neo4j node ids: a filter's passages), in this order."""
        keep = np.isin(self.nodes, np.asarray(nodes, dtype=np.int64))
        return PassageCosines(self.nodes[keep], [pid for pid, k in zip(self.ids, keep) if k], self.cosine[keep])

    def ranks(self, ids: list[str]) -> dict[str, int | None]:
        """The rank by cosine of each passage of ``ids`` (1: the most like the query; None: not scored here)."""
        where = {pid: i for i, pid in enumerate(self.ids)}
        return {pid: int((self.cosine > self.cosine[where[pid]]).sum()) + 1 if pid in where else None for pid in ids}

    def top(self, weights: np.ndarray, n: int) -> list[dict[str, Any]]:
        """The ``n`` largest of ``weights`` (one per passage, in this order) with their passage ids."""
        k = min(n, len(weights))
        if k <= 0:
            return []
        candidates = np.argpartition(-weights, k - 1)[:k]
        order = sorted(candidates.tolist(), key=lambda i: (-weights[i], self.ids[i]))
        return [{"id": self.ids[i], "weight": float(weights[i])} for i in order]


class PassageVectors:
    """A read cache of one namespace's passage vectors (unit rows, float32), current as of graph version
    ``version`` of the namespace."""

    def __init__(self, store: "GraphStore", limit_mb: float | None = None) -> None:
        self.store = store
        self.limit_mb = memory_limit_mb() if limit_mb is None else limit_mb
        self.version: int | None = None  # the namespace's graph version the cache was read at
        self.read_at = float("-inf")  # when the cache's last read began (time.monotonic())
        self.server_side = False  # too large for the limit: the server computes the cosines
        self.asked = 0  # queries answered
        self._lock = threading.Lock()
        self._clear()

    def _clear(self) -> None:
        self.nodes = np.zeros(0, dtype=np.int64)
        self.ids = np.zeros(0, dtype=object)
        self.since = np.zeros(0, dtype=np.int64)
        self.hashes = np.zeros(0, dtype=object)
        self.matrix = np.zeros((0, 0), dtype=np.float32)

    def cosines(self, vector: np.ndarray, graph: "Projection") -> PassageCosines:
        """The cosine of ``vector`` and every passage with an embedding in ``graph``'s version (``since``)."""
        query = np.asarray(vector, dtype=np.float32)
        with self._lock:
            self.asked += 1
            # the first query: see the module's docstring; a projection seen after the cache was read may lack
            # a cached passage (deleted meanwhile)
            if self.asked > 1 and (self.version != graph.current or self.read_at < graph.seen):
                self._refresh(graph.current, len(query))
            if self.asked > 1 and not self.server_side:
                norm = float(np.linalg.norm(query))
                every = len(self.nodes)
                cosine = np.einsum("ij,j->i", self.matrix, query / norm) if norm > 0 and every \
                    else np.zeros(every, np.float32)
                if every and self.since.max() > graph.version:  # passages newer than the projection walked
                    keep = self.since <= graph.version
                    return PassageCosines(self.nodes[keep], list(self.ids[keep]), cosine[keep].astype(np.float64))
                return PassageCosines(self.nodes, list(self.ids), cosine.astype(np.float64))
        found = self.store.run("passage_cosines", embedding=query.astype(float).tolist(), graphVersion=graph.version)[0]
        return PassageCosines(np.array(found["nodes"], dtype=np.int64), list(found["ids"]),
                              np.array(found["cosines"], dtype=np.float64))

    def _refresh(self, version: int, dimension: int) -> None:
        """Bring the cache to the namespace's graph version ``version``, read before this call (a write that
        lands meanwhile moves the version again, and the next query refreshes once more): the node ids and
        hashes of every passage, then the vectors of those not cached with the same hash (a passage not yet
        sealed has none, and is read again)."""
        self.read_at = time.monotonic()
        stamps = self.store.run("passage_vectors", vectors=False)[0]
        self.version = version
        if len(stamps["nodes"]) * dimension * 4 / 2**20 > self.limit_mb:
            self._clear()
            self.server_side = True
            return
        self.server_side = False
        known = {int(n): (h, i) for i, (n, h) in enumerate(zip(self.nodes, self.hashes))}
        keep: list[int] = []
        fetch: list[int] = []
        for node, digest in zip(stamps["nodes"], stamps["hashes"]):
            cached = known.get(node)
            if cached is not None and digest and cached[0] == digest:
                keep.append(cached[1])
            else:
                fetch.append(node)
        if not keep:  # nothing to reuse: every vector in one statement
            self._set(self.store.run("passage_vectors", vectors=True)[0])
            return
        if not fetch and keep == list(range(len(self.nodes))):  # the same passages, in the same order
            return
        fetched = self.store.run("passage_vectors_of", nodes=fetch)[0] if fetch else None
        self._set(fetched, keep)

    def _set(self, fetched: Any, keep: list[int] | None = None) -> None:
        """The cached rows ``keep`` (indexes; None: none), then the passages of ``fetched`` (a record of
        parallel lists, with embeddings) if any."""
        keep = keep or []
        new = fetched["embeddings"] if fetched is not None else []
        rows = vector_rows(new) if len(new) else None
        if rows is not None:  # unit rows, so that one product gives the cosines
            rows = unit_rows(rows)[0]
        blocks = ([self.matrix[keep]] if keep else []) + ([rows] if rows is not None else [])

        def column(key: str, dtype: Any) -> np.ndarray:
            old = getattr(self, key)[keep]
            return np.concatenate([old, np.array(fetched[key], dtype=dtype)]) if fetched is not None else old

        # one block is the matrix itself (np.vstack would copy the whole matrix again)
        self.matrix = (blocks[0] if len(blocks) == 1 else np.vstack(blocks)) if blocks \
            else np.zeros((0, 0), dtype=np.float32)
        self.nodes, self.since = column("nodes", np.int64), column("since", np.int64)
        self.ids, self.hashes = column("ids", object), column("hashes", object)
