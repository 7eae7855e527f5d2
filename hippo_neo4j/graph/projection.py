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
name that adds a digest of the passages (:meth:`Projections.ensure_within`); this process keeps those it used last within
a share of the server's heap (``FILTER_HEAP_SHARE``) and drops the rest, and the oldest of the catalogue's
beyond that share (clients that ended leave theirs behind).

Every projection and walk (``cypher/``) runs with GDS's progress logging off (``logProgress: false``): it wrote
about a hundred lines to the server's logs for each projection and several for each walk, so that the logs of
a server answering queries turned over every few minutes, and a walk on the musique mention graph is faster
without it (80 walks, each paired with the same walk logged: median ratio 0.88). GDS 2.26 still logs every
PageRank iteration (70-180 lines a graph query); the local server sets GDS's loggers to WARN for that
(``runtime/server.py``, ``QUIET_LOGGERS``); a server of the user's own keeps its log configuration.

Before projecting, GDS's memory estimate for the namespace's node and relationship counts is compared with the
server's free heap (:meth:`Projections.check_memory`): a projection that cannot fit fails at once with both figures and
the fix, instead of exhausting the heap midway. The catalogue calls (list, exists, drop) are plain Cypher, like
everything else here; the ``graphdatascience`` client is not needed for them (see README, Graph Data Science).

What this process knows of a server's projections (those it found complete, the filters' it keeps, the builds
under way) is the state of one :class:`Projections`, held by that server's
:class:`~hippo_neo4j.graph.server.Server` and forgotten when it closes.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Iterable, cast

from neo4j.exceptions import ClientError, Neo4jError

from ..config import env_number
from ..db import cypher, namespace_labels
from ..errors import ServerError
from . import reset

if TYPE_CHECKING:
    from .scope import Scope
    from .server import Server

log = logging.getLogger(__name__)

PREFIX = "hippo"
KINDS = {
    "phrase": ("", "project_phrase_graph"),
    "passage": (":passages", "project_passage_graph"),
    "mentions": (":mentions", "project_mention_graph"),
}
# Each kind's node kinds and relationship types (for GDS's estimate of its memory, cypher/graph_estimate.cypher).
SHAPES = {
    "phrase": (("phrase",), ("RELATION", "SYNONYM")),
    "passage": (("phrase", "passage"), ("RELATION", "SYNONYM", "MENTIONED_IN")),
    "mentions": (("phrase", "passage"), ("MENTIONED_IN", "SYNONYM")),
}
# Each kind's relationship properties: every kind's weight, and the mention graph's path weight (the entity walk's,
# cypher/project_mention_graph.cypher).
PROPERTIES = {"phrase": ("weight",), "passage": ("weight",), "mentions": ("weight", "path")}
# A filter's projections (the graph its passages induce) are kept while they hold at most HIPPO_FILTER_HEAP_SHARE
# (FILTER_HEAP_SHARE) of the server's heap (FILTER_BYTES where the server does not say); beyond it the least
# recently used is dropped from the catalogue: however small the graph, GDS gives a projection about 9 MiB (29 MiB
# when read by several threads) on a server of 200,000 nodes, so a 4 GB heap keeps about 45 of them (15 users'
# graphs for each of the three graph kinds).
FILTER_HEAP_SHARE = 0.1
FILTER_BYTES = 256 * 2**20
REFRESH_DELAY_S = 0.1  # debounce: a burst of writes (an agent storing several facts) costs one projection


@functools.cache
def statement_format(kind: str, weighted: bool = True) -> str:
    """A short fingerprint of the statement that projects ``kind`` (in its form for a GDS that does, or does not,
    take weighted sourceNodes: ``graph/reset.py``): part of the projection's name, so a projection built by
    another release's statement (a server that kept running across an upgrade) or form is neither walked nor
    mistaken for the current one, only dropped."""
    return hashlib.sha256(reset.projection(KINDS[kind][1], kind, weighted).encode()).hexdigest()[:8]


def graph_name(ns: str, version: int, kind: str = "phrase", weighted: bool = True) -> str:
    return f"{PREFIX}:{ns}:v{version}.{statement_format(kind, weighted)}{KINDS[kind][0]}"


def parse_name(name: str, ns: str) -> tuple[int, str, str, str] | None:
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


def version_of(name: str, ns: str) -> int | None:
    """The graph version of one of this namespace's projection names, or None if it is another's."""
    parsed = parse_name(name, ns)
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


def bump_version(tx: Any, ns: str) -> int:
    """Call inside every write transaction (a neo4j ManagedTransaction) that changes a namespace's graph."""
    return tx.run(cypher("bump_namespace_version"), ns=ns).single()["version"]


class Projections:
    """The projections of one server's namespaces as this process knows them (:class:`~.server.Server`
    holds one): the complete ones it found (so a query at an unchanged version skips ``gds.graph.list``, one
    round trip less; one dropped behind its back is handled by the caller with :meth:`forget` and a retry), the
    filters' it keeps within their budget, the locks its callers wait on, and the background builds under way
    (one at a time: a write starts a refresh of every kind in use, and three builds at once take every core of
    a small server from the queries that go on meanwhile; a query that needs the current graph projects it
    itself and does not wait for them)."""

    def __init__(self, server: "Server") -> None:
        self.server = server
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._known: dict[tuple[str, str], Projection] = {}  # by (namespace, kind)
        # a filter's projections and their bytes, by (namespace, kind, digest), the least recently used first
        self._filtered: OrderedDict[tuple[str, str, str], tuple[Projection, int]] = OrderedDict()
        self._sizes: dict[str, int] = {}  # every filter projection's bytes seen in the catalogue, by name
        self._budget: int | None = None
        self._refreshing: dict[tuple[str, str], _Refresh] = {}
        self._building = threading.Semaphore(1)

    def _run(self, statement: str, **params: Any) -> list[Any]:
        return self.server.driver.execute_query(statement, database_=self.server.database, **params).records

    # -- names and versions

    def _format(self, kind: str) -> str:
        """The statement format of ``kind`` for this server."""
        return statement_format(kind, self.server.capabilities.weighted_sources)

    def graph_name(self, ns: str, version: int, kind: str = "phrase") -> str:
        """The name of the namespace's projection of ``kind`` at graph ``version`` on this server."""
        return graph_name(ns, version, kind, self.server.capabilities.weighted_sources)

    def namespace_version(self, ns: str) -> int:
        return self.namespace_state(ns)[0]

    def namespace_state(self, ns: str) -> tuple[int, int]:
        """The namespace's graph version and the version of its last re-embedding (``cypher/namespace_version``)."""
        rec = self._run(cypher("namespace_version"), ns=ns)[0]
        return rec["version"], rec["epoch"]

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    # -- the catalogue

    def existing(self, ns: str) -> dict[str, tuple[int, int]]:
        """The namespace's projections in the catalogue: nodes and relationships by name."""
        records = self._run(
            "CALL gds.graph.list() YIELD graphName, nodeCount, relationshipCount, database "
            "WHERE database = $database AND graphName STARTS WITH $prefix "
            "RETURN graphName, nodeCount, relationshipCount",
            database=self.server.database,
            prefix=f"{PREFIX}:{ns}:v",
        )
        return {
            r["graphName"]: (r["nodeCount"], r["relationshipCount"])
            for r in records
            if version_of(r["graphName"], ns) is not None
        }

    def drop(self, ns: str, keep_version: int | None = None, kind: str | None = None) -> list[str]:
        """Drop this namespace's projections: all of them, or (``keep_version``) those of other graph versions or
        statement formats (of ``kind`` only, when given)."""
        if keep_version is None:
            self.forget(ns)
            self._settle(ns)  # and its background refreshes
        dropped = []
        with self._guard:
            held = {found.name for found, _ in self._filtered.values()} if keep_version is not None else set()
        for name in self.existing(ns):
            version, its_kind, fmt, digest = cast("tuple[int, str, str, str]", parse_name(name, ns))  # existing: this namespace's
            # a filter's projection stays valid across versions (ensure_within): this process's are kept, others'
            # (perhaps of a process that has ended) go, and a process still walking one projects it again
            keep = (version == keep_version or (digest and name in held)) and fmt == self._format(its_kind)
            if not keep and kind in (None, its_kind):
                self._drop(name)
                dropped.append(name)
        self._unlist(dropped)  # a filter's projection dropped here is projected again when next used
        return dropped

    def _drop(self, name: str) -> None:
        self._run("CALL gds.graph.drop($name, false) YIELD graphName RETURN graphName", name=name)

    def _unlist(self, names: Iterable[str]) -> None:
        """Forget this process's filter projections of ``names`` (dropped from the catalogue)."""
        gone = set(names)
        with self._guard:
            for key in [k for k, (found, _) in self._filtered.items() if found.name in gone]:
                del self._filtered[key]

    def forget(self, ns: str) -> None:
        """Drop what this process remembers of the namespace's projections (e.g. after 'graph not found')."""
        with self._guard:
            for key in [k for k in self._filtered if k[0] == ns]:
                del self._filtered[key]
        for kind in KINDS:
            self._known.pop((ns, kind), None)

    def _settle(self, ns: str, timeout: float = 60.0) -> None:
        """Cancel the namespace's background refreshes and wait for those building a projection to finish it, so
        that none adds one to the catalogue after the namespace's were dropped (one not yet building never will)."""
        with self._guard:
            running = [thread for (name, _), thread in self._refreshing.items() if name == ns]
        for thread in running:
            if thread.cancel() and thread is not threading.current_thread():
                thread.join(timeout)

    def known(self, ns: str, kind: str) -> Projection | None:
        """The complete projection of ``kind`` this process last found for the namespace, if any."""
        return self._known.get((ns, kind))

    # -- the namespace's own graph

    def ensure(self, ns: str, kind: str = "phrase", *, fresh: bool = True, version: int | None = None) -> Projection:
        """A projection of the namespace's graph of ``kind``.

        ``fresh``: the projection of the current graph version, projected now (and waited for) if needed.
        Otherwise the newest complete projection of ``kind``, however old: when it is behind, a background refresh
        (:meth:`refresh_soon`) builds the current one and the caller does not wait for it; only a namespace with
        no projection of ``kind`` at all is projected while the caller waits. ``version``: the namespace's graph
        version as the caller's query read it (asked here otherwise)."""
        version = version if version is not None else self.namespace_version(ns)
        key = (ns, kind)
        known = self._known.get(key)
        if known is not None and known.version >= version:  # newer: a write since the caller read, projected already
            return replace(known, current=known.version, created=False)
        if not fresh:
            older = known if known is not None and known.version < version else self._newest(ns, kind, version)
            if older is not None:
                self._known[key] = older
                self.refresh_soon(ns, kinds=(kind,))
                return replace(older, current=version, created=False)
        found = self._ensure(ns, version, kind)
        self._known[key] = found
        return found

    def _newest(self, ns: str, kind: str, below: int) -> Projection | None:
        """The newest projection of ``kind`` in the catalogue older than graph version ``below``, if any."""
        best: Projection | None = None
        for name, (nodes, rels) in self.existing(ns).items():
            version, its_kind, fmt, digest = cast("tuple[int, str, str, str]", parse_name(name, ns))  # existing: this namespace's
            if its_kind == kind and not digest and fmt == self._format(kind) and version < below \
                    and (best is None or version > best.version):
                best = Projection(name, version, nodes, rels, created=False, current=version)
        return best

    def _ensure(self, ns: str, version: int, kind: str) -> Projection:
        name = self.graph_name(ns, version, kind)
        existing = self.existing(ns)
        if name in existing:
            return Projection(name, version, *existing[name], created=False, current=version)
        with self._lock(ns):
            with self.server.driver.session(database=self.server.database) as session:
                rec = session.execute_write(self._project, ns, kind, name)
            if rec is None:  # projected meanwhile by another client (this process or another)
                existing = self.existing(ns)
                return Projection(name, version, *existing.get(name, (0, 0)), created=False, current=version)
            if not rec:  # the namespace has no phrases: nothing to project
                return Projection(name, version, 0, 0, created=False, current=version)
            self.drop(ns, keep_version=version, kind=kind)
            return Projection(name, version, rec["nodes"], rec["relationships"], created=True, current=version)

    def _project(self, tx: Any, ns: str, kind: str, name: str) -> dict[str, Any] | None:
        """Project ``name`` unless it exists, holding the namespace's projection lock for ``kind`` (a node, so the
        lock spans processes and dies with the transaction): one projection of a namespace and kind at a time,
        and a client that waited for another's finds it done without estimating it again. ``tx`` is a neo4j
        ManagedTransaction. None: it existed; {}: nothing to project."""
        tx.run(cypher("projection_lock"), ns=ns, kind=kind).consume()
        if tx.run("RETURN gds.graph.exists($name) AS found", name=name).single()["found"]:
            return None
        try:
            self.check_memory(ns, kind)
        except Neo4jError as exc:  # the server's error, with what met it
            exc.add_note(f"in the memory estimate of projection {name}")
            raise
        try:
            statement = self.server.projection_statement(KINDS[kind][1], kind)
            rec = tx.run(statement, graph=name, ns=ns, only=None).single()
        except ClientError as exc:
            if "already exists" in str(exc):
                return None
            exc.add_note(f"in statement cypher/{KINDS[kind][1]}.cypher, projecting {name}")
            raise
        return dict(rec) if rec else {}

    # -- a filter's projections

    def _filter_budget(self) -> int:
        """The bytes this process's filter projections may hold on the server (:data:`FILTER_HEAP_SHARE`)."""
        if self._budget is None:
            heap = self.server_heap()["max_heap"]
            share = env_number("HIPPO_FILTER_HEAP_SHARE", FILTER_HEAP_SHARE, float)
            self._budget = int(share * heap) if heap else int(share / FILTER_HEAP_SHARE * FILTER_BYTES)
        return self._budget

    def ensure_within(self, ns: str, kind: str, scope: "Scope", *, state: tuple[int, int] | None = None) -> Projection:
        """The projection of ``kind`` of the graph that a filter's passages (``scope``: their Neo4j node ids,
        passage ids and content hashes) induce (``cypher/project_*_graph_within.cypher``): the graph a namespace
        of those passages alone would hold, so that a walk from the filter's seeds stays among them. It is keyed
        by the passages, their contents and the namespace's last re-embedding, not by its graph version: what
        other passages' writes change is outside it (they add phrases those passages do not mention and synonym
        edges to those only, and remove phrases no passage mentions), so one user's write does not make every
        other user's graph project again. Its name is the namespace projection's at the version it was made,
        with ``@`` and that key's digest, so another process with the same filter reuses it; it is walked as the
        current version's. No node passes, or the passages hold none of this kind: a projection of 0 nodes, not
        in the catalogue. ``state``: the namespace's graph version and last re-embedding as the caller read them
        with the passages (:meth:`namespace_state` otherwise)."""
        nodes, ids = scope.nodes, scope.ids
        current, epoch = state if state is not None else self.namespace_state(ns)
        statement = self.server.projection_statement(f"{KINDS[kind][1]}_within", kind)
        passages = sorted(zip(nodes, scope.hashes))
        digest = hashlib.sha256(f"{statement}\n{epoch}\n{passages}".encode()).hexdigest()[:16]
        key = (ns, kind, digest)
        name = f"{self.graph_name(ns, current, kind)}@{digest}"
        if not nodes:
            return Projection(name, current, 0, 0, created=False, current=current)

        def listed(tx: Any) -> dict[str, Any] | None:
            found = tx.run("CALL gds.graph.list($name) YIELD nodeCount, relationshipCount, sizeInBytes "
                           "RETURN nodeCount AS nodes, relationshipCount AS relationships, sizeInBytes AS bytes",
                           name=name).single()
            return dict(found) if found is not None else None

        def project(tx: Any) -> tuple[dict[str, Any] | None, bool]:
            found = listed(tx)
            if found is not None:
                return found, False
            if tx.run(statement, graph=name, ns=ns, only=nodes, ids=ids).single()["graph"] is None:
                return None, False  # no row: GDS made no graph
            return listed(tx), True

        with self._lock(f"{ns}@{digest}"):  # this process's callers wait for one projection
            with self._guard:
                known = self._filtered.get(key)
                if known is not None:
                    self._filtered.move_to_end(key)
            if known is not None:
                return replace(known[0], version=current, current=current, created=False)
            with self.server.driver.session(database=self.server.database) as session:
                try:
                    rec, created = session.execute_write(project)
                except ClientError as exc:  # projected meanwhile by another process
                    if "already exists" not in str(exc):
                        raise
                    rec, created = session.execute_read(listed), False
        if rec is None:
            return Projection(name, current, 0, 0, created=False, current=current)
        found = Projection(name, current, rec["nodes"], rec["relationships"], created=created, current=current)
        budget = self._filter_budget()
        with self._guard:
            self._filtered[key] = (found, rec["bytes"])
            self._sizes[name] = rec["bytes"]
            self._filtered.move_to_end(key)
            evicted = []
            while len(self._filtered) > 1 and sum(size for _, size in self._filtered.values()) > budget:
                evicted.append(self._filtered.popitem(last=False)[1][0])
        for old in evicted:
            self._drop(old.name)
        if created:
            self._trim_filtered(budget, keep=name)
        return found

    def _trim_filtered(self, budget: int, keep: str) -> None:
        """Drop the oldest filter projections in the server's catalogue (every client's, of every namespace) while
        they hold more than ``budget`` bytes, ``keep`` aside: a client that ended (a CLI call, a worker that was
        stopped) leaves its projections behind, and only this bounds them. A client still walking one it lost
        projects it again."""
        names = [r["graphName"] for r in self._run(
            "CALL gds.graph.list() YIELD graphName, creationTime, database "
            "WHERE database = $database AND graphName STARTS WITH $prefix AND graphName CONTAINS '@' "
            "RETURN graphName ORDER BY creationTime DESC",
            database=self.server.database, prefix=f"{PREFIX}:")]
        with self._guard:
            known = {name: self._sizes[name] for name in names if name in self._sizes}
        unknown = [name for name in names if name not in known]
        if unknown:  # other clients' (GDS measures each graph it lists: about 0.6 ms a graph, so only those)
            for r in self._run("UNWIND $names AS name CALL gds.graph.list(name) YIELD graphName, sizeInBytes "
                               "RETURN graphName, sizeInBytes", names=unknown):
                known[r["graphName"]] = r["sizeInBytes"]
        held, dropped = 0, []
        for name in names:
            held += known.get(name, 0)
            if held > budget and name != keep:
                self._drop(name)
                dropped.append(name)
        with self._guard:  # a projection's size never changes; those no longer listed are forgotten
            for name in (set(self._sizes) - set(names)) | set(dropped):
                self._sizes.pop(name, None)
            self._sizes.update((name, size) for name, size in known.items() if name not in dropped)
        self._unlist(dropped)

    # -- background refresh

    def refresh_soon(self, ns: str, kinds: Iterable[str] | None = None) -> None:
        """Build the current projection of ``kinds`` (default: those this process has used) in the background."""
        for kind in kinds if kinds is not None else [k for k in KINDS if (ns, k) in self._known]:
            key = (ns, kind)
            with self._guard:
                running = self._refreshing.get(key)
                if running is not None:
                    running.again.set()
                    continue
                self._refreshing[key] = _Refresh(self, ns, kind)
                self._refreshing[key].start()

    def wait_for_refreshes(self, timeout: float = 60.0) -> None:
        """Wait for the background refreshes to finish (before closing the driver)."""
        with self._guard:
            running = list(self._refreshing.values())
        for thread in running:
            thread.join(timeout)

    def close(self, timeout: float = 60.0) -> None:
        """Wait for the background refreshes, then forget everything this process knew of the projections."""
        self.wait_for_refreshes(timeout)
        with self._guard:
            self._known.clear()
            self._filtered.clear()
            self._sizes.clear()
            self._locks.clear()
            self._budget = None

    # -- size and memory

    def size(self, ns: str, kind: str = "phrase") -> tuple[int, int]:
        """Nodes and relationships a projection of ``kind`` will hold (undirected: each edge twice), counted."""
        counts = self._run(cypher("stats"), ns=ns)[0]
        edges = counts["relation_edges"] + counts["synonym_edges"]
        if kind == "phrase":
            return counts["phrases"], 2 * edges
        own = edges + counts["mention_edges"] if kind == "passage" else counts["synonym_edges"] + counts["mention_edges"]
        nodes, relationships = counts["phrases"] + counts["passages"], 2 * own  # mentions: at most (the named ones)
        if not self.server.capabilities.weighted_sources:  # and the passages' feeders (graph/reset.py)
            nodes += reset.FEEDERS * counts["passages"] + 3  # the feeders, the sink and two nodes of their own
            relationships += (2 * reset.FEEDERS - 1) * counts["passages"] + 2
        return nodes, relationships

    def estimate(self, ns: str, kind: str = "phrase") -> dict[str, int]:
        """The namespace's counts for a projection of ``kind`` and GDS's estimate of the heap it needs: of the same
        graph as a native projection of the namespace's labels (``cypher/graph_estimate.cypher``, from the
        database's count store), or, for a graph with the passages' feeders, for the namespace's counts."""
        if self.server.capabilities.weighted_sources or kind == "phrase":
            labels, (node_kinds, types) = namespace_labels(ns), SHAPES[kind]
            weighted = {"orientation": "UNDIRECTED",
                        "properties": {p: {"property": "weight", "defaultValue": 1.0} for p in PROPERTIES[kind]}}
            rec = self._run(cypher("graph_estimate"), nodes=[labels[k] for k in node_kinds],
                            relationships={t: weighted for t in types})[0]
            return {"nodes": rec["nodes"], "relationships": rec["relationships"], "bytes_min": rec["bytesMin"],
                    "bytes_max": rec["bytesMax"]}
        nodes, relationships = self.size(ns, kind)
        rec = self._run(cypher("projection_estimate"), nodes=nodes, relationships=relationships,
                        properties=list(PROPERTIES[kind]))[0]
        return {"nodes": nodes, "relationships": relationships, "bytes_min": rec["bytesMin"], "bytes_max": rec["bytesMax"]}

    def server_heap(self) -> dict[str, int | None]:
        """The server's free and maximum heap (``gds.debug.sysInfo``); None for both where sysInfo does not answer."""
        if not self.server.capabilities.sys_info:
            return {"available_heap": None, "max_heap": None}
        rec = self._run(cypher("server_heap"))[0]
        return {"available_heap": rec["availableHeap"], "max_heap": rec["maxHeap"]}

    def check_memory(self, ns: str, kind: str = "phrase", available: int | None = None) -> dict[str, Any]:
        """GDS's estimate for projecting the namespace against the server's free heap (or ``available`` bytes);
        raises :class:`ServerError` with both figures and the fix when the estimate's lower bound does not fit. A
        server whose ``gds.debug.sysInfo`` does not answer is not checked (a one-line notice, once a server)."""
        figures: dict[str, Any] = self.estimate(ns, kind) | self.server_heap()
        if available is not None:
            figures["available_heap"] = available
        free = figures["available_heap"]
        if free is None:
            self.server.notice_once("sys_info", (
                "gds.debug.sysInfo does not answer on this server, so projections are not checked against its free "
                f"heap ({self.server.capabilities.problems.get('sys_info', 'no reason given')}); `hippo doctor` "
                "tells more."))
        elif figures["bytes_min"] > free:
            mib = lambda b: f"{b / 2**20:,.0f} MiB"  # noqa: E731
            raise ServerError(
                f"Projecting namespace {ns!r} for PageRank ({figures['nodes']:,} nodes, {figures['relationships']:,} "
                f"relationships) needs at least {mib(figures['bytes_min'])} of heap by GDS's estimate, and the server "
                f"has {mib(free)} free of {mib(figures['max_heap'] or 0)}. Raise the server's heap "
                "(server.memory.heap.max_size; HIPPO_NEO4J_HEAP for the local server), drop projections you no longer "
                "need (CALL gds.graph.list()), or split the corpus into smaller namespaces."
            )
        return figures


class _Refresh(threading.Thread):
    """Builds the current projection of one namespace and kind in the background, again if writes arrive
    meanwhile, then ends. At most one per namespace and kind in a :class:`Projections` (and one projection at a
    time across processes, by the projection lock)."""

    def __init__(self, projections: Projections, ns: str, kind: str) -> None:
        super().__init__(name=f"hippo-refresh-{ns}-{kind}", daemon=True)
        self.projections, self.ns, self.kind = projections, ns, kind
        self.again = threading.Event()
        self.again.set()
        self.cancelled = False
        self.building = False
        self._state = threading.Lock()

    def cancel(self) -> bool:
        """Stop before the next build; whether a build is under way (it finishes first)."""
        with self._state:
            self.cancelled = True
            return self.building

    def run(self) -> None:
        projections, key = self.projections, (self.ns, self.kind)
        try:
            while True:
                time.sleep(REFRESH_DELAY_S)
                if self.cancelled:
                    return
                self.again.clear()
                try:
                    with projections._building:
                        with self._state:
                            if self.cancelled:
                                return
                            self.building = True
                        try:
                            projections.ensure(self.ns, self.kind, fresh=True)
                        finally:
                            with self._state:
                                self.building = False
                except Exception as exc:  # noqa: BLE001 - a failed refresh leaves the old projection in use
                    closed = "closed" in str(exc).lower()  # the client closed its driver: nothing to refresh for
                    log.log(logging.DEBUG if closed else logging.WARNING,
                            "background projection of %r (%s) failed: %s", self.ns, self.kind, exc)
                    return
                with projections._guard:
                    if not self.again.is_set():
                        return
        finally:
            with projections._guard:
                if projections._refreshing.get(key) is self:
                    del projections._refreshing[key]
