"""Synonym edges (HippoRAG's dense links between similar phrases): for new phrases only, never all-vs-all, so
adding passages never recomputes the whole graph.

A new phrase's candidates are the namespace's phrases nearest to it. Two ways find them, with one rule:

- the server's phrase vector index (HNSW, shared by every namespace, so each search widens until enough of
  its own namespace's phrases are seen): for small writes into a large namespace;
- the client, exactly, from the namespace's phrase vectors held for a bulk run (:class:`PhraseVectors`): one
  matrix product per batch instead of a vector-index search per phrase. On musique_train's 1,890 passages
  the server's searches took about 50 s of a 186 s index, competing for the CPU with the encoder; reading a
  phrase's stored vector costs about a fortieth of searching for it, and a passage brings several new
  phrases, so a run holds the vectors when the namespace has at most ``HELD_PHRASES_PER_PASSAGE`` phrases per
  passage it indexes, and while they fit in ``HIPPO_PASSAGE_VECTORS_MB``.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

import numpy as np

from ..config import HippoConfig
from ..db import cypher
from ..text import alnum_count
from .passage_vectors import memory_limit_mb, unit_rows, vector_rows
from .store import GraphStore

log = logging.getLogger(__name__)

SYNONYM_BATCH = 2000  # new phrases per candidate search statement (each row returns only its few candidates)
HELD_PHRASES_PER_PASSAGE = 100  # a run holds the phrase vectors when the namespace has at most this many per passage to index
FETCH_BATCH = 5000  # phrases per vector read
BLOCK_ELEMENTS = 1 << 24  # cosines computed at once (64 MB of float32)

Hits = list[tuple[str, float]]  # (phrase, cosine), nearest first


def fits_in_memory(phrases: int, dimension: int) -> bool:
    """Whether ``phrases`` vectors of ``dimension`` float32 fit in ``HIPPO_PASSAGE_VECTORS_MB``."""
    return phrases * dimension * 4 / 1e6 <= memory_limit_mb()


class PhraseVectors:
    """A namespace's phrase vectors held by the client: unit float32 rows keyed by phrase text, and the graph
    version they reflect. :meth:`follow` keeps them current across a run's writes; another writer's change
    in between (the version moved by more than the run's own write) or a replaced passage (whose phrases may
    have gone) makes it re-read the phrase texts and fetch only the vectors it lacks."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.texts: list[str] = []
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.version = 0

    @property
    def size(self) -> int:
        return len(self.texts)

    @classmethod
    def read(cls, store: GraphStore) -> PhraseVectors:
        held = cls()
        rec = store.run("phrase_vectors", vectors=True)[0]
        held.add(rec["texts"], rec["embeddings"])
        held.version = rec["version"]
        return held

    def add(self, texts: Iterable[str], vectors: Iterable[Any]) -> None:
        """Hold ``vectors`` (None: unusable, skipped) under ``texts``; a text held already gets the new row.
        New texts are appended in text order, whatever order the server returned them in: a phrase's row, and so
        the float32 rounding of its cosines, depends only on what was added, and when."""
        pairs = sorted(((t, v) for t, v in zip(texts, vectors) if v is not None), key=lambda pair: pair[0])
        if not pairs:
            return
        rows, keep = unit_rows(vector_rows([v for _, v in pairs]))
        rows = rows[keep]
        pairs = [p for p, k in zip(pairs, keep) if k]
        if self.matrix.size == 0:
            self.matrix = np.zeros((max(1024, 2 * len(rows)), rows.shape[1]), dtype=np.float32)
        for (text, _), row in zip(pairs, rows):
            at = self.index.get(text)
            if at is None:
                at = len(self.texts)
                if at == len(self.matrix):
                    self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])
                self.index[text] = at
                self.texts.append(text)
            self.matrix[at] = row

    def keep_only(self, present: set[str]) -> None:
        """Drop the phrases not in ``present`` (deleted from the namespace)."""
        gone = [t for t in self.texts if t not in present]
        if not gone:
            return
        rows = [self.index[t] for t in self.texts if t in present]
        self.texts = [self.texts[i] for i in rows]
        self.matrix = np.concatenate([self.matrix[rows], np.zeros((max(1024, len(rows)), self.matrix.shape[1]), np.float32)])
        self.index = {t: i for i, t in enumerate(self.texts)}

    def follow(self, store: GraphStore, version: int, rows: list[dict[str, Any]], replaced: bool) -> None:
        """After a write of the run at graph ``version`` that created the phrases ``rows`` ({text, embedding})
        and, if ``replaced``, removed earlier passages."""
        self.add((r["text"] for r in rows), (r["embedding"] for r in rows))
        if version == self.version + 1 and not replaced:
            self.version = version
            return
        rec = store.run("phrase_vectors", vectors=False)[0]
        present = set(rec["texts"])
        self.keep_only(present)
        lacking = [t for t in rec["texts"] if t not in self.index]
        for start in range(0, len(lacking), FETCH_BATCH):
            found = store.run("phrase_vectors_of", texts=lacking[start : start + FETCH_BATCH])
            self.add((r["text"] for r in found), (r["embedding"] for r in found))
        self.version = rec["version"]

    def wrote(self, version: int) -> None:
        """A write of the run that changed no phrase (its synonym edges) reached graph ``version``."""
        if version == self.version + 1:
            self.version = version

    def nearest(self, texts: list[str], top_k: int, tau: float) -> dict[str, Hits]:
        """Per phrase of ``texts`` (held ones), the first ``top_k`` other phrases by cosine, of those only the
        ones with cosine >= ``tau``: the rule of the server's search, computed exactly."""
        at = np.asarray([self.index[t] for t in texts if t in self.index], dtype=np.int64)
        found: dict[str, Hits] = {}
        if not len(at):
            return found
        matrix = self.matrix[: self.size]
        block = max(1, BLOCK_ELEMENTS // self.size)
        for start in range(0, len(at), block):
            rows = at[start : start + block]
            cosines = matrix[rows] @ matrix.T
            cosines[np.arange(len(rows)), rows] = -np.inf  # not the phrase itself
            for i, row in enumerate(rows):
                line = cosines[i]
                close = np.flatnonzero(line >= tau)
                if len(close) > top_k:  # only the top_k nearest can be candidates
                    close = close[np.argpartition(-line[close], top_k - 1)[:top_k]]
                order = close[np.argsort(-line[close], kind="stable")]
                found[self.texts[row]] = [(self.texts[j], float(line[j])) for j in order]
        return found


def synonym_tau(default_tau: float, config: HippoConfig) -> float:
    """τ, the cosine at or above which two phrases are synonyms: the config's, else ``default_tau`` (the encoder's
    calibrated τ). Linking a question's name by embedding takes the same."""
    return default_tau if config.synonym_threshold is None else config.synonym_threshold


class SynonymLinker:
    """SYNONYM {score} edges between a new phrase and every phrase of the namespace with cosine >= tau among
    its ``synonym_top_k`` nearest; phrases of at most two alphanumeric characters get none."""

    def __init__(self, store: GraphStore, default_tau: float = 0.8) -> None:
        self.store = store
        self.default_tau = default_tau  # the encoder's calibrated τ, used when the config sets none

    def tau(self, config: HippoConfig) -> float:
        return synonym_tau(self.default_tau, config)

    def hold(self, passages: int, dimension: int) -> PhraseVectors | None:
        """The namespace's phrase vectors (``dimension``-d), for a run indexing ``passages`` passages, if
        holding them pays off (see the module's docstring); else None (the server's vector index finds the
        candidates)."""
        most = HELD_PHRASES_PER_PASSAGE * passages
        phrases = self.store.run("phrase_count", cap=most + 1)[0]["phrases"]  # reads at most that many: a small write stays cheap
        if phrases > most or not fits_in_memory(phrases, dimension):
            return None
        return PhraseVectors.read(self.store)

    @staticmethod
    def within_memory(held: PhraseVectors | None) -> PhraseVectors | None:
        """``held`` while it fits in the memory limit, else None (the rest of the run searches the server)."""
        if held is not None and held.size and not fits_in_memory(held.size, held.matrix.shape[1]):
            log.info("phrase vectors past HIPPO_PASSAGE_VECTORS_MB (%d phrases): synonyms from the vector index", held.size)
            return None
        return held

    def link(
        self, new_phrases: list[dict[str, Any]], config: HippoConfig, seal: list[dict[str, Any]] | None = None,
        held: PhraseVectors | None = None,
    ) -> int:
        """Write the edges of ``new_phrases`` ({text, embedding}: phrases of the graph holding that embedding);
        the number of pairs. Candidates come from ``held`` (which must hold the namespace's phrases, these
        among them) or else from the server's vector index.

        ``seal`` ({id, hash} rows) marks the batch's passages complete in the same transaction.
        """
        ns = self.store.namespace
        eligible = [r["text"] for r in new_phrases if r["embedding"] is not None and alnum_count(r["text"]) > 2]
        top_k, tau = config.synonym_top_k, self.tau(config)
        found = (held.nearest(eligible, top_k, tau) if held is not None else self.search(eligible, top_k, tau)) if eligible else {}
        pairs: dict[tuple[str, str], float] = {}
        for phrase, hits in found.items():
            for text, cosine in hits:  # the first top_k other than the phrase, with cosine >= tau
                if alnum_count(text) > 2:
                    a, b = sorted((phrase, text))
                    pairs[(a, b)] = max(pairs.get((a, b), -1.0), cosine)
        rows = [{"a": a, "b": b, "score": s} for (a, b), s in pairs.items()]

        def write(tx: Any) -> None:
            if rows:
                tx.run(cypher("write_synonyms"), ns=ns, pairs=rows).consume()
            if seal:
                tx.run(cypher("seal_passages"), ns=ns, passages=seal).consume()

        if rows or seal:
            version = self.store.write(write)
            if held is not None:
                held.wrote(version)
        return len(pairs)

    def search(self, eligible: list[str], top_k: int, tau: float) -> dict[str, Hits]:
        """The candidates of ``eligible`` from the server's phrase vector index."""

        # the search starts from each phrase's stored embedding (just written, the same vector) and only the
        # hits that can become edges come back: no vectors sent, little read
        found = self.store.search(
            "synonym_candidates", "keys", eligible, chunk=SYNONYM_BATCH, k=top_k + 1, top_k=top_k, tau=tau,
        )
        return {phrase: [(h["text"], float(h["cosine"])) for h in rec["hits"]] for phrase, rec in found.items()}
