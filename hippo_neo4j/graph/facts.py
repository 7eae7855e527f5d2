"""Fact nodes (HippoRAG 2): one per distinct normalised (subject, predicate, object), embedded for
query-to-fact linking, with a ``sources`` list holding one entry per extraction so deletion stays exact."""

from __future__ import annotations

import hashlib
from typing import Any

from ..config import HippoConfig
from ..text import normalize_phrase
from .store import GraphStore, finite_or_none

FactRows = dict[str, dict[str, Any]]


def add_fact(facts: FactRows, subject: str, predicate: str, obj: str, passage: str) -> None:
    """Record one extracted triple (normalised subject and object) as an assertion of its Fact by ``passage``.

    A fact is the normalised (subject, predicate, object); its text, which is embedded, is the three joined
    by spaces; its id is a hash of the three (keys of any length fit the uniqueness constraint).
    """
    pred = normalize_phrase(predicate)
    fid = hashlib.sha256(f"{subject}\t{pred}\t{obj}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    fact = facts.get(fid)
    if fact is None:
        text = " ".join(x for x in (subject, pred, obj) if x)
        fact = facts[fid] = {"id": fid, "subject": subject, "predicate": pred, "object": obj, "text": text, "sources": []}
    fact["sources"].append(passage)


class FactStore:
    """Embedding new facts, and deriving the Fact nodes of a namespace indexed before they existed."""

    def __init__(self, store: GraphStore, encoder: Any) -> None:
        self.store = store
        self.encoder = encoder

    def embed_new(self, facts: FactRows, replacing: list[str]) -> tuple[list[dict[str, Any]], int]:
        """The fact rows to write, and how many are new: those the namespace does not hold yet (or that only
        the passages in ``replacing`` assert) get an embedding, the others keep theirs."""
        new = self.new_facts(facts, replacing)
        return self.rows(facts, new, self.encoder.encode([f["text"] for f in new])), len(new)

    def new_facts(self, facts: FactRows, replacing: list[str]) -> list[dict[str, Any]]:
        """The facts the namespace does not hold yet, or that only the passages in ``replacing`` assert."""
        existing = {r["id"] for r in self.store.run("existing_facts", ids=sorted(facts), replacing=replacing)}
        return [f for fid, f in facts.items() if fid not in existing]

    @staticmethod
    def rows(facts: FactRows, new: list[dict[str, Any]], vectors: Any) -> list[dict[str, Any]]:
        """The rows of ``write_facts``: the new facts (of ``facts``) with their ``vectors``, the others without."""
        for f, vec in zip(new, vectors):
            f["embedding"] = finite_or_none(vec)
        return [f | {"embedding": f.get("embedding")} for f in facts.values()]

    def rebuild(self, config: HippoConfig) -> dict[str, int]:
        """Derive the namespace's Fact nodes from RELATION provenance (idempotent).

        For namespaces indexed before facts were stored: every triple is recorded on its RELATION edge, so the
        facts (and their sources) follow exactly; missing facts are created and embedded, existing ones get
        their sources recomputed.
        """
        facts: FactRows = {}
        for r in self.store.run("relation_facts"):
            add_fact(facts, r["subject"], r["predicate"], r["object"], r["passage"])
        rows, created = self.embed_new(facts, [])
        size = max(1, config.batch_size) * 4
        for start in range(0, len(rows), size):
            self.store.write_statement("rebuild_facts", facts=rows[start : start + size])
        ns = self.store.namespace
        self.store.write(lambda tx: tx.run("MATCH (n:HippoNamespace {name: $ns}) SET n.facts = true", ns=ns).consume())
        return {"facts": len(rows), "created": created}

    def complete(self) -> bool:
        """False for a namespace indexed before Fact nodes existed (until :meth:`rebuild`)."""
        return bool(self.store.run("facts_complete")[0]["complete"])
