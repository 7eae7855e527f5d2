"""Every namespace is bound to the encoder that embedded it (model name, dimension, fingerprint of the
weights), recorded on its ``HippoNamespace`` node when it is first indexed. Vectors of two models live in
different spaces, so indexing or querying a namespace with another model is refused with both names and the
fix (``hippo reembed``). A namespace indexed before encoders were recorded is all-MiniLM-L6-v2's, the only
encoder there was."""

from __future__ import annotations

import logging
from typing import Any

from ..db import cypher
from ..errors import ConfigError
from .store import GraphStore

log = logging.getLogger(__name__)

LEGACY_ENCODER = {"name": "all-MiniLM-L6-v2", "dimension": 384, "fingerprint": None, "legacy": True}


def model_id(name: str) -> str:
    """The model behind an encoder name: ``st:all-MiniLM-L6-v2`` and ``all-MiniLM-L6-v2`` are one model on two
    backends (their vectors agree to a cosine of 0.99999), so they may share a namespace."""
    return name[3:] if name.startswith("st:") else name


def recorded(store: GraphStore) -> dict[str, Any] | None:
    """The namespace's encoder ({name, dimension, fingerprint, legacy}), or None for a namespace never indexed."""
    rec = store.run("namespace_encoder")[0]
    if rec["name"] is not None:
        return {"name": rec["name"], "dimension": rec["dimension"], "fingerprint": rec["fingerprint"], "legacy": False}
    return dict(LEGACY_ENCODER) if rec["indexed"] else None


def check(store: GraphStore, encoder: Any) -> dict[str, Any] | None:
    """Refuse ``encoder`` for a namespace bound to another model or dimension; the binding, if any."""
    bound = recorded(store)
    if bound is None:
        return None
    if model_id(bound["name"]) != model_id(encoder.name) or bound["dimension"] != encoder.dimension:
        since = " (indexed before encoders were recorded)" if bound["legacy"] else ""
        raise ConfigError(
            f"Namespace {store.namespace!r} was embedded with encoder {bound['name']!r} ({bound['dimension']}-d)"
            f"{since}, but this client uses {encoder.name!r} ({encoder.dimension}-d): their vectors cannot be "
            f"compared. Use HIPPO_ENCODER={bound['name']} for this namespace, or re-embed it with "
            f"`hippo reembed --namespace {store.namespace} --encoder {encoder.name}`."
        )
    if bound["fingerprint"] and bound["fingerprint"] != encoder.fingerprint:
        log.warning(
            "namespace %r was embedded with other weights of %s (fingerprint %s, this encoder %s); results may drift",
            store.namespace, bound["name"], bound["fingerprint"][:12], encoder.fingerprint[:12],
        )
    return bound


def bind(tx: Any, ns: str, encoder: Any, replace: bool = False) -> None:
    """Record ``encoder`` as the namespace's inside the write transaction ``tx`` (kept when one is recorded,
    unless ``replace``)."""
    tx.run(cypher("bind_encoder"), ns=ns, name=encoder.name, dimension=encoder.dimension,
           fingerprint=encoder.fingerprint, replace=replace).consume()
