"""GDS in-memory projections of a namespace's graph, built once and rebuilt lazily after writes.

Three kinds per namespace, each built on first use: ``phrase`` (Phrase nodes, RELATION + SYNONYM edges:
hipporag1), ``passage`` (the same plus Passage nodes and MENTIONED_IN edges of weight 1.0: hipporag2) and
``mentions`` (Phrase and Passage nodes, the MENTIONED_IN edges of named entities only: entity-ppr).

Every write to a namespace bumps ``(:HippoNamespace {name}).version`` in the same transaction. The
projection's name carries that version, so a query either finds the current snapshot in the GDS catalogue
or projects it (once: concurrent callers in this process wait on a lock, and a concurrent projection by
another process is recognised and reused). Older snapshots of the namespace are dropped afterwards.

Before projecting, GDS's memory estimate for the namespace's node and relationship counts is compared with the
server's free heap (:func:`check_memory`): a projection that cannot fit fails at once with both figures and
the fix, instead of exhausting the heap midway. The catalogue calls (list, exists, drop) are plain Cypher, like
everything else here; the ``graphdatascience`` client is not needed for them (see README, Graph Data Science).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from neo4j import Driver
from neo4j.exceptions import ClientError

from ..db import cypher
from ..errors import ServerError

_locks: dict[tuple[str, str, str], threading.Lock] = {}
_locks_guard = threading.Lock()
# Projections this process has seen in the catalogue, so a query at an unchanged version skips
# gds.graph.list (one round trip less). A projection dropped behind our back is handled by the caller
# with forget() and a retry.
_known: dict[tuple[str, str, str, str], Projection] = {}

PREFIX = "hippo"
KINDS = {
    "phrase": ("", "project_phrase_graph"),
    "passage": (":passages", "project_passage_graph"),
    "mentions": (":mentions", "project_mention_graph"),
}


def graph_name(ns: str, version: int, kind: str = "phrase") -> str:
    return f"{PREFIX}:{ns}:v{version}{KINDS[kind][0]}"


def _version_of(name: str, ns: str) -> int | None:
    """The graph version of one of this namespace's projection names, or None if it is another's."""
    rest = name[len(f"{PREFIX}:{ns}:v") :]
    number, _, suffix = rest.partition(":")
    if not number.isdigit() or (suffix and f":{suffix}" not in {s for s, _ in KINDS.values()}):
        return None  # namespace "a" must not claim the projections of namespace "a:v1"
    return int(number)


@dataclass(frozen=True)
class Projection:
    name: str
    version: int
    nodes: int
    relationships: int
    created: bool


def namespace_version(driver: Driver, database: str, ns: str) -> int:
    return driver.execute_query(cypher("namespace_version"), ns=ns, database_=database).records[0]["version"]


def bump_version(tx, ns: str) -> int:  # noqa: ANN001 - a neo4j ManagedTransaction
    """Call inside every write transaction that changes a namespace's graph."""
    return tx.run(cypher("bump_namespace_version"), ns=ns).single()["version"]


def _lock(driver: Driver, database: str, ns: str) -> threading.Lock:
    key = (str(id(driver)), database, ns)
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def _existing(driver: Driver, database: str, ns: str) -> dict[str, tuple[int, int]]:
    records = driver.execute_query(
        "CALL gds.graph.list() YIELD graphName, nodeCount, relationshipCount, database "
        "WHERE database = $database AND graphName STARTS WITH $prefix "
        "RETURN graphName, nodeCount, relationshipCount",
        database=database,
        prefix=f"{PREFIX}:{ns}:v",
        database_=database,
    ).records
    return {
        r["graphName"]: (r["nodeCount"], r["relationshipCount"])
        for r in records
        if _version_of(r["graphName"], ns) is not None
    }


def drop(driver: Driver, database: str, ns: str, keep_version: int | None = None) -> list[str]:
    """Drop this namespace's projections (all, or all but those of graph version ``keep_version``)."""
    if keep_version is None:
        forget(driver, database, ns)
    dropped = []
    for name in _existing(driver, database, ns):
        if _version_of(name, ns) != keep_version:
            driver.execute_query(
                "CALL gds.graph.drop($name, false) YIELD graphName RETURN graphName", name=name, database_=database
            )
            dropped.append(name)
    return dropped


def forget(driver: Driver, database: str, ns: str) -> None:
    """Drop what this process remembers of the namespace's projections (e.g. after 'graph not found')."""
    for kind in KINDS:
        _known.pop((str(id(driver)), database, ns, kind), None)


def ensure(driver: Driver, database: str, ns: str, kind: str = "phrase") -> Projection:
    """The projection of the namespace's current graph version, projecting it if needed."""
    version = namespace_version(driver, database, ns)
    key = (str(id(driver)), database, ns, kind)
    known = _known.get(key)
    if known is not None and known.version == version:
        return Projection(known.name, version, known.nodes, known.relationships, created=False)
    found = _ensure(driver, database, ns, version, kind)
    _known[key] = found
    return found


def _ensure(driver: Driver, database: str, ns: str, version: int, kind: str) -> Projection:
    name = graph_name(ns, version, kind)
    existing = _existing(driver, database, ns)
    if name in existing:
        return Projection(name, version, *existing[name], created=False)
    with _lock(driver, database, ns):
        existing = _existing(driver, database, ns)
        if name in existing:
            return Projection(name, version, *existing[name], created=False)
        check_memory(driver, database, ns, kind)
        try:
            rec = driver.execute_query(
                cypher(KINDS[kind][1]), graph=name, ns=ns, database_=database
            ).records
        except ClientError as exc:
            if "already exists" not in str(exc):
                raise
            existing = _existing(driver, database, ns)
            return Projection(name, version, *existing[name], created=False)
        if not rec:  # the namespace has no phrases: nothing to project
            return Projection(name, version, 0, 0, created=False)
        drop(driver, database, ns, keep_version=version)
        return Projection(name, version, rec[0]["nodes"], rec[0]["relationships"], created=True)


def size(driver: Driver, database: str, ns: str, kind: str = "phrase") -> tuple[int, int]:
    """Nodes and relationships a projection of ``kind`` will hold (undirected: each edge twice)."""
    counts = driver.execute_query(cypher("stats"), ns=ns, database_=database).records[0]
    edges = counts["relation_edges"] + counts["synonym_edges"]
    if kind == "passage":
        return counts["phrases"] + counts["passages"], 2 * (edges + counts["mention_edges"])
    if kind == "mentions":  # at most: the named mentions are a part of them
        return counts["phrases"] + counts["passages"], 2 * counts["mention_edges"]
    return counts["phrases"], 2 * edges


def check_memory(driver: Driver, database: str, ns: str, kind: str = "phrase", available: int | None = None) -> dict[str, int]:
    """GDS's estimate for projecting the namespace against the server's free heap (or ``available`` bytes);
    raises :class:`ServerError` with both figures and the fix when the estimate's lower bound does not fit."""
    nodes, relationships = size(driver, database, ns, kind)
    rec = driver.execute_query(
        cypher("projection_estimate"), nodes=nodes, relationships=relationships, database_=database
    ).records[0]
    free = rec["availableHeap"] if available is None else available
    figures = {"nodes": nodes, "relationships": relationships, "bytes_min": rec["bytesMin"],
               "bytes_max": rec["bytesMax"], "available_heap": free, "max_heap": rec["maxHeap"]}
    if free is not None and rec["bytesMin"] > free:
        mib = lambda b: f"{b / 2**20:,.0f} MiB"  # noqa: E731
        raise ServerError(
            f"Projecting namespace {ns!r} for PageRank ({nodes:,} nodes, {relationships:,} relationships) needs at "
            f"least {mib(rec['bytesMin'])} of heap by GDS's estimate, and the server has {mib(free)} free of "
            f"{mib(rec['maxHeap'] or 0)}. Raise the server's heap (server.memory.heap.max_size; HIPPO_NEO4J_HEAP "
            "for the local server), drop projections you no longer need (CALL gds.graph.list()), or split the "
            "corpus into smaller namespaces."
        )
    return figures
