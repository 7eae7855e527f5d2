"""Synonym edges (HippoRAG's dense links between similar phrases): for new phrases only, from the phrase
vector index's nearest neighbours, never all-vs-all, so adding passages never recomputes the whole graph."""

from __future__ import annotations

from typing import Any

from ..config import HippoConfig
from ..db import cypher
from ..text import alnum_count
from .store import GraphStore

SYNONYM_BATCH = 2000  # new phrases per candidate search statement (each row returns only its few candidates)


class SynonymLinker:
    """SYNONYM {score} edges between a new phrase and every phrase of the namespace with cosine >= tau among
    its ``synonym_top_k`` nearest; phrases of at most two alphanumeric characters get none."""

    def __init__(self, store: GraphStore, default_tau: float = 0.8) -> None:
        self.store = store
        self.default_tau = default_tau  # the encoder's calibrated τ, used when the config sets none

    def tau(self, config: HippoConfig) -> float:
        return self.default_tau if config.synonym_threshold is None else config.synonym_threshold

    def link(self, new_phrases: list[dict[str, Any]], config: HippoConfig, seal: list[dict[str, Any]] | None = None) -> int:
        """Write the edges of ``new_phrases`` ({text, embedding}: phrases of the graph holding that embedding);
        the number of pairs.

        ``seal`` ({id, hash} rows) marks the batch's passages complete in the same transaction.
        """
        ns = self.store.namespace
        eligible = [r["text"] for r in new_phrases if r["embedding"] is not None and alnum_count(r["text"]) > 2]
        if not eligible:
            if seal:
                self.store.write_statement("seal_passages", passages=seal)
            return 0
        top_k, tau = config.synonym_top_k, self.tau(config)

        def done(rec: Any, k: int) -> bool:
            # enough candidates of this namespace, the index is exhausted, or no further hit can reach tau
            return rec["kept"] > top_k or rec["seen"] < k or rec["last"] is None or rec["last"] < tau

        # the search starts from each phrase's stored embedding (just written, the same vector) and only the
        # hits that can become edges come back: no vectors sent, little read
        found = self.store.widening_search(
            "synonym_candidates", "keys", eligible, top_k + 1, done,
            chunk=SYNONYM_BATCH, key=lambda key: key, top_k=top_k, tau=tau,
        )
        pairs: dict[tuple[str, str], float] = {}
        for phrase, rec in found.items():
            for hit in rec["hits"]:  # the first top_k other than the phrase, with cosine >= tau
                if alnum_count(hit["text"]) > 2:
                    a, b = sorted((phrase, hit["text"]))
                    pairs[(a, b)] = max(pairs.get((a, b), -1.0), float(hit["cosine"]))
        rows = [{"a": a, "b": b, "score": s} for (a, b), s in pairs.items()]

        def write(tx: Any) -> None:
            if rows:
                tx.run(cypher("write_synonyms"), ns=ns, pairs=rows).consume()
            if seal:
                tx.run(cypher("seal_passages"), ns=ns, passages=seal).consume()

        if rows or seal:
            self.store.write(write)
        return len(pairs)
