"""GDS in-memory projections of a namespace's graph, built once and rebuilt lazily after writes.

Three kinds per namespace, each built on first use: ``phrase`` (Phrase nodes, RELATION + SYNONYM edges:
hipporag1), ``passage`` (the same plus Passage nodes and MENTIONED_IN edges of weight 1.0: hipporag2) and
``mentions`` (Phrase and Passage nodes, the MENTIONED_IN edges of named entities and the SYNONYM edges: entity-ppr).

Every write to a namespace bumps ``(:HippoNamespace {name}).version`` in the same transaction. The
projection's name carries that version (and a fingerprint of the statement that builds its kind), so a
query either finds the current snapshot in the GDS catalogue
or projects it (once: concurrent callers in this process wait on a lock, and a concurrent projection by
another process is recognised and reused). Older snapshots of the namespace are dropped afterwards.

A metadata filter's query walks the graph its passages induce (their phrases and the edges among them: the
graph a namespace of those passages alone would hold), projected at the namespace's current version under a
name that adds a digest of the passages (:func:`ensure_within`); this process keeps those it used last within
a share of the server's heap (``FILTER_HEAP_SHARE``) and drops the rest, and the oldest of the catalogue's
beyond that share (clients that ended leave theirs behind).

Every projection and walk (``cypher/``) runs with GDS's progress logging off (``logProgress: false``): it wrote
about a hundred lines to the server's logs for each projection and several for each walk, so that the logs of
a server answering queries turned over every few minutes, and a walk on the musique mention graph is faster
without it (80 walks, each paired with the same walk logged: median ratio 0.88). GDS 2.26 still logs every
PageRank iteration (70-180 lines a graph query); the local server sets GDS's loggers to WARN for that
(``runtime/server.py``, ``QUIET_LOGGERS``); a server of the user's own keeps its log configuration.

Before projecting, GDS's memory estimate for the namespace's node and relationship counts is compared with the
server's free heap (:func:`check_memory`): a projection that cannot fit fails at once with both figures and
the fix, instead of exhausting the heap midway. The catalogue calls (list, exists, drop) are plain Cypher, like
everything else here; the ``graphdatascience`` client is not needed for them (see README, Graph Data Science).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Iterable

from neo4j import Driver
from neo4j.exceptions import ClientError

from .. import capabilities
from ..config import env_number
from ..db import cypher
from ..errors import ServerError
from . import reset

log = logging.getLogger(__name__)
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
# A filter's projections (the graph its passages induce) and their bytes, by (driver, database, namespace, kind,
# digest), the least recently used first. While they hold more than HIPPO_FILTER_HEAP_SHARE (FILTER_HEAP_SHARE) of
# the server's heap (FILTER_BYTES where the server does not say), the oldest is dropped from the catalogue: however
# small the graph, GDS gives a projection about 9 MiB (29 MiB when read by several threads) on a server of
# 200,000 nodes, so a 4 GB heap keeps about 45 of them (15 users' graphs for each of the three graph kinds).
_filtered: "OrderedDict[tuple[str, str, str, str, str], tuple[Projection, int]]" = OrderedDict()
# every filter projection's size in bytes this process has seen in the catalogue (_trim_filtered), by name
_sizes: dict[str, int] = {}
FILTER_HEAP_SHARE = 0.1
FILTER_BYTES = 256 * 2**20
_budgets: dict[tuple[str, str], int] = {}


@functools.cache
def statement_format(kind: str, weighted: bool = True) -> str:
    """A short fingerprint of the statement that projects ``kind`` (in its form for a GDS that does, or does not,
    take weighted sourceNodes: ``graph/reset.py``): part of the projection's name, so a projection built by
    another release's statement (a server that kept running across an upgrade) or form is neither walked nor
    mistaken for the current one, only dropped."""
    return hashlib.sha256(reset.projection(KINDS[kind][1], kind, weighted).encode()).hexdigest()[:8]


def _format(driver: Driver, database: str, kind: str) -> str:
    """The statement format of ``kind`` for ``driver``'s server."""
    return statement_format(kind, capabilities.of(driver, database).weighted_sources)


def graph_name(ns: str, version: int, kind: str = "phrase", weighted: bool = True) -> str:
    return f"{PREFIX}:{ns}:v{version}.{statement_format(kind, weighted)}{KINDS[kind][0]}"


def _parse(name: str, ns: str) -> tuple[int, str, str, str] | None:
    """(graph version, kind, statement format, filter digest) of one of this namespace's projection names (the
    format is '' for names from before formats were recorded, the digest '' for the namespace's own graph), or
    None if the name is another namespace's."""
    if not name.startswith(f"{PREFIX}:{ns}:v"):
        return None
    rest, _, digest = name[len(f"{PREFIX}:{ns}:v") :].partition("@")
    head, _, suffix = rest.partition(":")
    number, _, fmt = head.partition(".")
    kind = next((k for k, (s, _) in KINDS.items() if s == (f":{suffix}" if suffix else "")), None)
    if not number.isdigit() or kind is None or (fmt and not (len(fmt) == 8 and fmt.isalnum())) \
            or (digest and not (len(digest) == 16 and digest.isalnum())):
        return None  # namespace "a" must not claim the projections of namespace "a:v1"
    return int(number), kind, fmt, digest


def _version_of(name: str, ns: str) -> int | None:
    """The graph version of one of this namespace's projection names, or None if it is another's."""
    parsed = _parse(name, ns)
    return parsed[0] if parsed else None


@dataclass(frozen=True)
class Projection:
    """A complete projection in the GDS catalogue: graph version ``version`` of the namespace, whose current
    version (when it was looked up) is ``current``. ``seen``: when this process first found it complete
    (``time.monotonic()``). Its name's version is read before it is built, so it holds that version's graph
    or a newer one: a write that commits meanwhile is in it too. What was read from the database after
    ``seen`` is at least as new as the projection (``graph/passage_vectors.py`` relies on that)."""

    name: str
    version: int
    nodes: int
    relationships: int
    created: bool
    current: int = 0
    seen: float = field(default_factory=time.monotonic)

    @property
    def behind(self) -> int:
        """Writes (graph versions) made since this projection's version."""
        return max(self.current - self.version, 0)


def namespace_version(driver: Driver, database: str, ns: str) -> int:
    return namespace_state(driver, database, ns)[0]


def namespace_state(driver: Driver, database: str, ns: str) -> tuple[int, int]:
    """The namespace's graph version and the version of its last re-embedding (``cypher/namespace_version``)."""
    rec = driver.execute_query(cypher("namespace_version"), ns=ns, database_=database).records[0]
    return rec["version"], rec["epoch"]


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


def drop(driver: Driver, database: str, ns: str, keep_version: int | None = None, kind: str | None = None) -> list[str]:
    """Drop this namespace's projections: all of them, or (``keep_version``) those of other graph versions or
    statement formats (of ``kind`` only, when given)."""
    if keep_version is None:
        forget(driver, database, ns, cancel=True)
    dropped = []
    with _locks_guard:
        held = {found.name for found, _ in _filtered.values()} if keep_version is not None else set()
    for name in _existing(driver, database, ns):
        version, its_kind, fmt, digest = _parse(name, ns)  # type: ignore[misc] - _existing keeps this namespace's names
        # a filter's projection stays valid across versions (ensure_within): this process's are kept, others'
        # (perhaps of a process that has ended) go, and a process still walking one projects it again
        keep = (version == keep_version or (digest and name in held)) and fmt == _format(driver, database, its_kind)
        if not keep and kind in (None, its_kind):
            _drop(driver, database, name)
            dropped.append(name)
    _unlist(dropped)  # a filter's projection dropped here is projected again when next used
    return dropped


def _drop(driver: Driver, database: str, name: str) -> None:
    driver.execute_query("CALL gds.graph.drop($name, false) YIELD graphName RETURN graphName", name=name,
                         database_=database)


def _unlist(names: Iterable[str]) -> None:
    """Forget this process's filter projections of ``names`` (dropped from the catalogue)."""
    gone = set(names)
    with _locks_guard:
        for key in [k for k, (found, _) in _filtered.items() if found.name in gone]:
            del _filtered[key]


def forget(driver: Driver, database: str, ns: str, *, cancel: bool = False) -> None:
    """Drop what this process remembers of the namespace's projections (e.g. after 'graph not found');
    ``cancel``: and its pending background refreshes (the namespace was dropped)."""
    with _locks_guard:
        for key in [k for k in _filtered if k[:3] == (str(id(driver)), database, ns)]:
            del _filtered[key]
    for kind in KINDS:
        key = (str(id(driver)), database, ns, kind)
        _known.pop(key, None)
        if cancel:
            with _locks_guard:
                running = _refreshing.get(key)
            if running is not None:
                running.cancelled = True


def ensure(driver: Driver, database: str, ns: str, kind: str = "phrase", *, fresh: bool = True,
           version: int | None = None) -> Projection:
    """A projection of the namespace's graph of ``kind``.

    ``fresh``: the projection of the current graph version, projected now (and waited for) if needed.
    Otherwise the newest complete projection of ``kind``, however old: when it is behind, a background refresh
    (:func:`refresh_soon`) builds the current one and the caller does not wait for it; only a namespace with
    no projection of ``kind`` at all is projected while the caller waits. ``version``: the namespace's graph
    version as the caller's query read it (asked here otherwise)."""
    version = version if version is not None else namespace_version(driver, database, ns)
    key = (str(id(driver)), database, ns, kind)
    known = _known.get(key)
    if known is not None and known.version >= version:  # newer: a write since the caller read, projected already
        return replace(known, current=known.version, created=False)
    if not fresh:
        older = known if known is not None and known.version < version else _newest(driver, database, ns, kind, version)
        if older is not None:
            _known[key] = older
            refresh_soon(driver, database, ns, kinds=(kind,))
            return replace(older, current=version, created=False)
    found = _ensure(driver, database, ns, version, kind)
    _known[key] = found
    return found


def _newest(driver: Driver, database: str, ns: str, kind: str, below: int) -> Projection | None:
    """The newest projection of ``kind`` in the catalogue older than graph version ``below``, if any."""
    best: Projection | None = None
    for name, (nodes, rels) in _existing(driver, database, ns).items():
        version, its_kind, fmt, digest = _parse(name, ns)  # type: ignore[misc] - _existing keeps this namespace's names
        if its_kind == kind and not digest and fmt == _format(driver, database, kind) and version < below \
                and (best is None or version > best.version):
            best = Projection(name, version, nodes, rels, created=False, current=version)
    return best


def _ensure(driver: Driver, database: str, ns: str, version: int, kind: str) -> Projection:
    name = graph_name(ns, version, kind, capabilities.of(driver, database).weighted_sources)
    existing = _existing(driver, database, ns)
    if name in existing:
        return Projection(name, version, *existing[name], created=False, current=version)
    with _lock(driver, database, ns):
        with driver.session(database=database) as session:
            rec = session.execute_write(_project, driver, database, ns, kind, name)
        if rec is None:  # projected meanwhile by another client (this process or another)
            existing = _existing(driver, database, ns)
            return Projection(name, version, *existing.get(name, (0, 0)), created=False, current=version)
        if not rec:  # the namespace has no phrases: nothing to project
            return Projection(name, version, 0, 0, created=False, current=version)
        drop(driver, database, ns, keep_version=version, kind=kind)
        return Projection(name, version, rec["nodes"], rec["relationships"], created=True, current=version)


def _project(tx, driver: Driver, database: str, ns: str, kind: str, name: str):  # noqa: ANN001, ANN202
    """Project ``name`` unless it exists, holding the namespace's projection lock for ``kind`` (a node, so the
    lock spans processes and dies with the transaction): one projection of a namespace and kind at a time,
    and a client that waited for another's finds it done without estimating it again. ``tx`` is a neo4j
    ManagedTransaction. None: it existed; {}: nothing to project."""
    tx.run(cypher("projection_lock"), ns=ns, kind=kind).consume()
    if tx.run("RETURN gds.graph.exists($name) AS found", name=name).single()["found"]:
        return None
    check_memory(driver, database, ns, kind)
    try:
        statement = reset.projection(KINDS[kind][1], kind, capabilities.of(driver, database).weighted_sources)
        rec = tx.run(statement, graph=name, ns=ns, only=None).single()
    except ClientError as exc:
        if "already exists" in str(exc):
            return None
        raise
    return dict(rec) if rec else {}


# ----------------------------------------------------------------------------------- a filter's projections

def _within_statement(driver: Driver, database: str, kind: str) -> str:
    return reset.projection(f"{KINDS[kind][1]}_within", kind, capabilities.of(driver, database).weighted_sources)


def _filter_budget(driver: Driver, database: str) -> int:
    """The bytes this process's filter projections may hold on ``driver``'s server (:data:`FILTER_HEAP_SHARE`)."""
    key = (str(id(driver)), database)
    if key not in _budgets:
        heap = server_heap(driver, database)["max_heap"]
        share = env_number("HIPPO_FILTER_HEAP_SHARE", FILTER_HEAP_SHARE, float)
        _budgets[key] = int(share * heap) if heap else int(share / FILTER_HEAP_SHARE * FILTER_BYTES)
    return _budgets[key]


def ensure_within(driver: Driver, database: str, ns: str, kind: str, nodes: list[int], ids: list[str],
                  hashes: list[str], state: tuple[int, int] | None = None) -> Projection:
    """The projection of ``kind`` of the graph that a filter's passages (``nodes``: their Neo4j node ids,
    ``ids``: their passage ids, ``hashes``: their content hashes) induce (``cypher/project_*_graph_within.cypher``):
    the graph a namespace of those passages alone would hold, so that a walk from the filter's seeds stays among
    them. It is keyed by the passages, their contents and the namespace's last re-embedding, not by its graph
    version: what other passages' writes change is outside it (they add phrases those passages do not mention and
    synonym edges to those only, and remove phrases no passage mentions), so one user's write does not make every
    other user's graph project again. Its name is the namespace projection's at the version it was made, with
    ``@`` and that key's digest, so another process with the same filter reuses it; it is walked as the current
    version's. No node passes, or the passages hold none of this kind: a projection of 0 nodes, not in the
    catalogue. ``state``: the namespace's graph version and last re-embedding as the caller read them with the
    passages (:func:`namespace_state` otherwise)."""
    current, epoch = state if state is not None else namespace_state(driver, database, ns)
    statement = _within_statement(driver, database, kind)
    passages = sorted(zip(nodes, hashes))
    digest = hashlib.sha256(f"{statement}\n{epoch}\n{passages}".encode()).hexdigest()[:16]
    key = (str(id(driver)), database, ns, kind, digest)
    name = f"{graph_name(ns, current, kind, capabilities.of(driver, database).weighted_sources)}@{digest}"
    if not nodes:
        return Projection(name, current, 0, 0, created=False, current=current)

    def listed(tx) -> dict | None:  # noqa: ANN001 - a neo4j ManagedTransaction
        found = tx.run("CALL gds.graph.list($name) YIELD nodeCount, relationshipCount, sizeInBytes "
                       "RETURN nodeCount AS nodes, relationshipCount AS relationships, sizeInBytes AS bytes",
                       name=name).single()
        return dict(found) if found is not None else None

    def project(tx):  # noqa: ANN001, ANN202
        found = listed(tx)
        if found is not None:
            return found, False
        if tx.run(statement, graph=name, ns=ns, only=nodes, ids=ids).single()["graph"] is None:
            return None, False  # no row: GDS made no graph
        return listed(tx), True

    with _lock(driver, database, f"{ns}@{digest}"):  # this process's callers wait for one projection
        with _locks_guard:
            known = _filtered.get(key)
            if known is not None:
                _filtered.move_to_end(key)
        if known is not None:
            return replace(known[0], version=current, current=current, created=False)
        with driver.session(database=database) as session:
            try:
                rec, created = session.execute_write(project)
            except ClientError as exc:  # projected meanwhile by another process
                if "already exists" not in str(exc):
                    raise
                rec, created = session.execute_read(listed), False
    if rec is None:
        return Projection(name, current, 0, 0, created=False, current=current)
    found = Projection(name, current, rec["nodes"], rec["relationships"], created=created, current=current)
    budget = _filter_budget(driver, database)
    with _locks_guard:
        _filtered[key] = (found, rec["bytes"])
        _sizes[name] = rec["bytes"]
        _filtered.move_to_end(key)
        evicted = []
        while len(_filtered) > 1 and sum(size for _, size in _filtered.values()) > budget:
            evicted.append(_filtered.popitem(last=False)[1][0])
    for old in evicted:
        _drop(driver, database, old.name)
    if created:
        _trim_filtered(driver, database, budget, keep=name)
    return found


def _trim_filtered(driver: Driver, database: str, budget: int, keep: str) -> None:
    """Drop the oldest filter projections in the server's catalogue (every client's, of every namespace) while
    they hold more than ``budget`` bytes, ``keep`` aside: a client that ended (a CLI call, a worker that was
    stopped) leaves its projections behind, and only this bounds them. A client still walking one it lost
    projects it again."""
    names = [r["graphName"] for r in driver.execute_query(
        "CALL gds.graph.list() YIELD graphName, creationTime, database "
        "WHERE database = $database AND graphName STARTS WITH $prefix AND graphName CONTAINS '@' "
        "RETURN graphName ORDER BY creationTime DESC",
        database=database, prefix=f"{PREFIX}:", database_=database).records]
    with _locks_guard:
        known = {name: _sizes[name] for name in names if name in _sizes}
    unknown = [name for name in names if name not in known]
    if unknown:  # other clients' (GDS measures each graph it lists: about 0.6 ms a graph, so only those)
        for r in driver.execute_query("UNWIND $names AS name CALL gds.graph.list(name) YIELD graphName, sizeInBytes "
                                      "RETURN graphName, sizeInBytes", names=unknown, database_=database).records:
            known[r["graphName"]] = r["sizeInBytes"]
    held, dropped = 0, []
    for name in names:
        held += known.get(name, 0)
        if held > budget and name != keep:
            _drop(driver, database, name)
            dropped.append(name)
    with _locks_guard:  # a projection's size never changes; those no longer listed are forgotten
        for name in (set(_sizes) - set(names)) | set(dropped):
            _sizes.pop(name, None)
        _sizes.update((name, size) for name, size in known.items() if name not in dropped)
    _unlist(dropped)


# ----------------------------------------------------------------------------------- background refresh

_refreshing: dict[tuple[str, str, str, str], "_Refresh"] = {}
REFRESH_DELAY_S = 0.1  # debounce: a burst of writes (an agent storing several facts) costs one projection
# One background build at a time in a process: a write starts a refresh of every kind in use, and three builds
# at once take every core of a small server from the queries that go on meanwhile. A query that needs the
# current graph (fresh) projects it itself and does not wait for this.
_building = threading.Semaphore(1)


class _Refresh(threading.Thread):
    """Builds the current projection of one namespace and kind in the background, again if writes arrive
    meanwhile, then ends. At most one per namespace and kind in a process (and one projection at a time
    across processes, by the projection lock)."""

    def __init__(self, driver: Driver, database: str, ns: str, kind: str) -> None:
        super().__init__(name=f"hippo-refresh-{ns}-{kind}", daemon=True)
        self.args = (driver, database, ns, kind)
        self.again = threading.Event()
        self.again.set()
        self.cancelled = False

    def run(self) -> None:
        driver, database, ns, kind = self.args
        key = (str(id(driver)), database, ns, kind)
        try:
            while True:
                time.sleep(REFRESH_DELAY_S)
                if self.cancelled:
                    return
                self.again.clear()
                try:
                    with _building:
                        if self.cancelled:
                            return
                        ensure(driver, database, ns, kind, fresh=True)
                except Exception as exc:  # noqa: BLE001 - a failed refresh leaves the old projection in use
                    closed = "closed" in str(exc).lower()  # the client closed its driver: nothing to refresh for
                    log.log(logging.DEBUG if closed else logging.WARNING,
                            "background projection of %r (%s) failed: %s", ns, kind, exc)
                    return
                with _locks_guard:
                    if not self.again.is_set():
                        return
        finally:
            with _locks_guard:
                if _refreshing.get(key) is self:
                    del _refreshing[key]


def refresh_soon(driver: Driver, database: str, ns: str, kinds: Iterable[str] | None = None) -> None:
    """Build the current projection of ``kinds`` (default: those this process has used) in the background."""
    for kind in kinds if kinds is not None else [k for k in KINDS if (str(id(driver)), database, ns, k) in _known]:
        key = (str(id(driver)), database, ns, kind)
        with _locks_guard:
            running = _refreshing.get(key)
            if running is not None:
                running.again.set()
                continue
            _refreshing[key] = _Refresh(driver, database, ns, kind)
            _refreshing[key].start()


def wait_for_refreshes(driver: Driver | None = None, timeout: float = 60.0) -> None:
    """Wait for the background refreshes (of ``driver``'s namespaces, or all) to finish (before closing it)."""
    with _locks_guard:
        running = [t for k, t in _refreshing.items() if driver is None or k[0] == str(id(driver))]
    for thread in running:
        thread.join(timeout)


def size(driver: Driver, database: str, ns: str, kind: str = "phrase") -> tuple[int, int]:
    """Nodes and relationships a projection of ``kind`` will hold (undirected: each edge twice)."""
    counts = driver.execute_query(cypher("stats"), ns=ns, database_=database).records[0]
    edges = counts["relation_edges"] + counts["synonym_edges"]
    if kind == "phrase":
        return counts["phrases"], 2 * edges
    own = edges + counts["mention_edges"] if kind == "passage" else counts["synonym_edges"] + counts["mention_edges"]
    nodes, relationships = counts["phrases"] + counts["passages"], 2 * own  # mentions: at most (the named ones)
    if not capabilities.of(driver, database).weighted_sources:  # and the passages' feeders (graph/reset.py)
        nodes += reset.FEEDERS * counts["passages"] + 3  # the feeders, the sink and two nodes of their own
        relationships += (2 * reset.FEEDERS - 1) * counts["passages"] + 2
    return nodes, relationships


def estimate(driver: Driver, database: str, ns: str, kind: str = "phrase") -> dict[str, int]:
    """The namespace's counts for a projection of ``kind`` and GDS's estimate of the heap it needs."""
    nodes, relationships = size(driver, database, ns, kind)
    rec = driver.execute_query(
        cypher("projection_estimate"), nodes=nodes, relationships=relationships, database_=database
    ).records[0]
    return {"nodes": nodes, "relationships": relationships, "bytes_min": rec["bytesMin"], "bytes_max": rec["bytesMax"]}


def server_heap(driver: Driver, database: str) -> dict[str, int | None]:
    """The server's free and maximum heap (``gds.debug.sysInfo``); None for both where sysInfo does not answer."""
    if not capabilities.of(driver, database).sys_info:
        return {"available_heap": None, "max_heap": None}
    rec = driver.execute_query(cypher("server_heap"), database_=database).records[0]
    return {"available_heap": rec["availableHeap"], "max_heap": rec["maxHeap"]}


def check_memory(driver: Driver, database: str, ns: str, kind: str = "phrase", available: int | None = None) -> dict[str, int]:
    """GDS's estimate for projecting the namespace against the server's free heap (or ``available`` bytes);
    raises :class:`ServerError` with both figures and the fix when the estimate's lower bound does not fit. A
    server whose ``gds.debug.sysInfo`` does not answer is not checked (a one-line notice, once a connection)."""
    figures = estimate(driver, database, ns, kind) | server_heap(driver, database)
    if available is not None:
        figures["available_heap"] = available
    free = figures["available_heap"]
    if free is None:
        capabilities.notice_once(driver, "sys_info", (
            "gds.debug.sysInfo does not answer on this server, so projections are not checked against its free heap "
            f"({capabilities.of(driver, database).problems.get('sys_info', 'no reason given')}); `hippo doctor` tells more."))
    elif figures["bytes_min"] > free:
        mib = lambda b: f"{b / 2**20:,.0f} MiB"  # noqa: E731
        raise ServerError(
            f"Projecting namespace {ns!r} for PageRank ({figures['nodes']:,} nodes, {figures['relationships']:,} "
            f"relationships) needs at least {mib(figures['bytes_min'])} of heap by GDS's estimate, and the server has "
            f"{mib(free)} free of {mib(figures['max_heap'] or 0)}. Raise the server's heap "
            "(server.memory.heap.max_size; HIPPO_NEO4J_HEAP for the local server), drop projections you no longer need "
            "(CALL gds.graph.list()), or split the corpus into smaller namespaces."
        )
    return figures
