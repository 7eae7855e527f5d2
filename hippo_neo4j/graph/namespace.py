"""Namespaces and deletion: removing passages with exactly their contribution to the graph, dropping a whole
namespace with its projections, and its sizes."""

from __future__ import annotations

from typing import Sequence

from ..db import cypher
from ..models import DeleteReport
from ..text import scrub
from . import projection
from .store import GraphStore


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
    projection.drop(store.driver, store.database, store.namespace)
    return before
