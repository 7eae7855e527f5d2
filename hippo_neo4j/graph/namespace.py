"""Namespaces and deletion: removing passages with exactly their contribution to the graph, dropping a whole
namespace with its projections, its sizes, and re-embedding it with another encoder."""

from __future__ import annotations

from typing import Any, Sequence

from ..config import HippoConfig
from ..db import cypher
from ..models import DeleteReport
from ..text import scrub
from . import binding
from ..progress import progress_bar
from .store import KINDS, GraphStore, finite_or_none
from .synonyms import PhraseVectors, SynonymLinker, fits_in_memory


def delete_passages(store: GraphStore, passage_ids: Sequence[str], batch_size: int) -> DeleteReport:
    """Remove passages and exactly their contribution (mentions, relation and fact provenance, orphans)."""
    ids = list(dict.fromkeys(scrub(str(i)) for i in passage_ids))
    found = {r["id"] for r in store.run("passage_hashes", ids=ids)}
    size = max(1, batch_size)
    present = [i for i in ids if i in found]
    for start in range(0, len(present), size):
        store.write_statement("delete_passages", ids=present[start : start + size])
    return DeleteReport(requested=len(ids), deleted=len(present), missing=[i for i in ids if i not in found])


def stats(store: GraphStore) -> dict[str, int]:
    """Passages, phrases, facts and relation, synonym and mention edges of the namespace."""
    return dict(store.run("stats")[0])


def drop_namespace(store: GraphStore) -> dict[str, int]:
    """Delete every node of the namespace and its projections; the sizes it had."""
    before = stats(store)
    with store.driver.session(database=store.database) as session:
        session.run(cypher("drop_namespace"), ns=store.namespace).consume()
        session.run("MATCH (n:HippoNamespace {name: $ns}) DELETE n", ns=store.namespace).consume()
    store.projections.drop(store.namespace)
    store.drop_indexes()
    return before


def reembed(store: GraphStore, encoder: Any, linker: SynonymLinker, config: HippoConfig, *, progress: bool = False) -> dict[str, Any]:
    """Embed every passage, phrase and fact of the namespace with ``encoder``, rebuild its SYNONYM edges from the
    new vectors (τ of ``config``), and bind the namespace to ``encoder``. The graph then equals a fresh index
    made with ``encoder``. Vectors of another dimension get new vector indexes (the namespace's own)."""
    resized = store.index_dimension() != encoder.dimension
    if resized:
        store.drop_indexes(KINDS)  # an index of the old dimension would leave the new vectors out
    rows = store.run("embedding_texts")
    counts = {"passage": 0, "phrase": 0, "fact": 0}
    size = max(1, config.batch_size)
    phrases: list[dict[str, Any]] = []
    with progress_bar(progress, len(rows), f"re-embedding {store.namespace!r} with {encoder.name}") as advance:
        for kind in counts:
            todo = [r for r in rows if r["kind"] == kind]
            for start in range(0, len(todo), size):
                chunk = todo[start : start + size]
                vectors = encoder.encode([r["text"] for r in chunk])
                batch = [{"key": r["key"], "embedding": finite_or_none(v)} for r, v in zip(chunk, vectors)]
                store.write_statement(f"set_{kind}_embeddings", rows=batch)
                if kind == "phrase":
                    phrases += [{"text": b["key"], "embedding": b["embedding"]} for b in batch if b["embedding"] is not None]
                counts[kind] += len(chunk)
                advance(len(chunk))
    if resized:
        store.create_indexes(encoder.dimension)
    version = store.write_statement("delete_synonyms")
    held: PhraseVectors | None = None  # every phrase's new vector: the candidates computed in the client
    if fits_in_memory(len(phrases), encoder.dimension):  # else the vector index finds them
        held = PhraseVectors()
        held.add((p["text"] for p in phrases), (p["embedding"] for p in phrases))
        held.version = version
    for start in range(0, len(phrases), size):
        linker.link(phrases[start : start + size], config, held=held)
    store.write(lambda tx: binding.bind(tx, store.namespace, encoder, replace=True))
    return {"namespace": store.namespace, "encoder": encoder.name, "passages": counts["passage"],
            "phrases": counts["phrase"], "facts": counts["fact"], "synonym_edges": stats(store)["synonym_edges"]}
