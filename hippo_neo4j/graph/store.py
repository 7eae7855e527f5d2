"""One namespace of a Neo4j database: running the ``cypher/`` statements, versioned writes, the schema, and
nearest-neighbour searches over the namespace's own vector indexes."""

from __future__ import annotations

import contextvars
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, TypeVar

import numpy as np
from neo4j import Driver
from neo4j.exceptions import ClientError, Neo4jError, ResultFailedError

from ..db import NODE_KINDS, cypher, cypher_statements, namespace_key, namespace_labels
from ..errors import ConfigError
from ..text import fold_phrase
from . import projection
from .scope import Scope
from .server import Server

VECTOR_BATCH = 500  # rows per vector-index lookup statement
# A query's reading of its namespace's graph version (by namespace), taken from a statement that returned it beside
# its results (`nsVersion`: the linking statements, which read the seeds in the same snapshot), so the walks
# that follow ask for it no more (one round trip fewer a walk). Set per query (:func:`one_query`), per thread
# or task; outside a query nothing is kept.
_query_versions: ContextVar[dict[tuple[str, str], int] | None] = ContextVar("hippo_query_versions", default=None)


@contextmanager
def one_query() -> Iterator[None]:
    """The scope of one query: versions its statements return (``nsVersion``) serve its walks, then are gone."""
    token = _query_versions.set({})
    try:
        yield
    finally:
        _query_versions.reset(token)


# Work a query does side by side (two walks of one projection, each on one server thread; its encoding while a
# statement runs): a pool as wide as the cores; when every slot is busy (many queries at once, each already
# keeping a core busy) the second part runs after the first in the caller's thread instead of queueing behind
# other queries' work.
_BESIDE_WIDTH = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
_beside_pool = ThreadPoolExecutor(_BESIDE_WIDTH, thread_name_prefix="hippo-beside")
_beside_free = threading.BoundedSemaphore(_BESIDE_WIDTH)
A = TypeVar("A")
B = TypeVar("B")


def together(first: Callable[[], A], second: Callable[[], B]) -> tuple[A, B]:
    """``first()`` and ``second()``: ``second`` in the pool, in the caller's context (the query's versions
    included), while ``first`` runs here; in turn when the pool is busy. An error of ``first`` is raised once
    ``second`` is done, then one of ``second``."""
    if not _beside_free.acquire(blocking=False):
        return first(), second()
    try:
        future = _beside_pool.submit(contextvars.copy_context().run, second)
    except BaseException:
        _beside_free.release()
        raise
    future.add_done_callback(lambda _: _beside_free.release())
    try:
        done = first()
    except BaseException:
        wait([future])  # done before the caller goes on (a retry on another projection, perhaps)
        raise
    return done, future.result()


def side_by_side(first: Callable[[], list[Any]], second: Callable[[], list[Any]]) -> list[Any]:
    """The records of two statements run :func:`together` (each returns one record): ``first``'s, with the
    columns of ``second``'s added. No record when ``first`` returns none."""
    records, other = together(first, second)
    if not records:
        return []
    return [dict(records[0].items()) | (dict(other[0].items()) if other else {})] + list(records[1:])


# Walks of one query before its error is raised: each retry is on the current projection after the one walked was
# dropped (a newer one replaced it: a write landed and its projection was built during the walk). Only a
# namespace written faster than its graph projects loses a walk more than once; this bounds the retries.
WALK_ATTEMPTS = 3


def _projection_gone(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from) says the projection walked, or a seed in it, is gone."""
    seen: BaseException | None = exc
    while seen is not None:
        if any(m in str(seen) for m in ("not found", "does not exist", "do not exist")):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def usable(vector: np.ndarray) -> bool:
    """A vector the cosine vector indexes accept: finite and not all zeros."""
    return bool(np.isfinite(vector).all() and np.abs(vector).sum() > 0)


def finite_or_none(vector: np.ndarray) -> list[float] | None:
    return vector.tolist() if usable(vector) else None


# Candidates a query-time search reads from a vector index (passages for dense, facts for hipporag2) before
# keeping its top: the HNSW search's beam is this k, so it sets how close the index's top nodes come to the
# exact ones: at 400 the passage and fact indexes find (nearly) every exact top-5 node of musique_train's
# questions with several namespaces of that corpus in one index (docs/design.md, "Vector-index searches").
VECTOR_CANDIDATES = 400
# A search for more results than that reads this many candidates per result: passages (dense) and facts
# (hipporag2, whose passages each assert several facts that crowd each other near a query).
CANDIDATES_PER_PASSAGE = 4
CANDIDATES_PER_FACT = 20


def vector_beam(top_k: int, per_result: int) -> int:
    """The candidates a vector-index search for ``top_k`` results reads (:data:`VECTOR_CANDIDATES` at least)."""
    return max(per_result * top_k, VECTOR_CANDIDATES)

MISSING_INDEX = re.compile(r"no such (vector|fulltext) schema index", re.I)  # a namespace without its indexes
KINDS = NODE_KINDS  # the node kinds with an embedding: a vector index each per namespace


class GraphStore:
    """The statements of ``cypher/`` run against one namespace (``$ns``) of one database."""

    def __init__(self, server: Server, namespace: str) -> None:
        self.server = server
        self.namespace = namespace
        key = namespace_key(namespace)
        self.labels = namespace_labels(namespace)  # its indexes cover them
        self.indexes = {kind: f"hippo_{kind}_embedding_{key}" for kind in KINDS} | {"text": f"hippo_passage_text_{key}"}
        self.dimension: int | None = None  # of the namespace's vector indexes (the client's encoder)
        self.indexed = False  # whether this client saw or made the namespace's indexes

    @property
    def driver(self) -> Driver:
        return self.server.driver

    @property
    def database(self) -> str:
        return self.server.database

    @property
    def projections(self) -> projection.Projections:
        return self.server.projections

    @property
    def scope(self) -> dict[str, Any]:
        """The parameters every statement gets: ``$ns``, ``$labels`` and ``$indexes`` (by node kind)."""
        return {"ns": self.namespace, "labels": self.labels, "indexes": self.indexes}

    def run(self, name: str, **params: Any) -> list[Any]:
        """Run ``cypher/<name>.cypher`` with ``$ns`` bound to this namespace (and its ``$labels`` and
        ``$indexes``); the records. A PPR statement takes the form the server's GDS runs (:meth:`Server.statement`)."""
        text = self.server.statement(name)
        records = lambda: self._seen(self.driver.execute_query(text, **self.scope, database_=self.database, **params).records)  # noqa: E731
        try:
            try:
                return records()
            except ClientError as exc:
                # no index of the namespace: nothing written to it yet (nothing to find), or it was dropped (by this
                # client or another) and written again: its indexes, once more
                if self.dimension is None or not MISSING_INDEX.search(str(exc)):
                    raise
                if not self.has_passages():
                    return []
                self.create_indexes(self.dimension)
                return records()
        except Neo4jError as exc:  # the server's error, with the statement that met it
            exc.add_note(f"in statement cypher/{name}.cypher")
            raise

    def write(self, work: Callable[[Any], None]) -> int:
        """One write transaction that also bumps the namespace's graph version (stale projections); the
        version it wrote.

        ``work(tx)`` runs through ``execute_write``: a transient failure (a deadlock between concurrent
        writers, a leader switch) rolls back and runs it again, so it must only issue its statements.
        """

        def unit(tx: Any) -> int:
            # first: the namespace node's write lock orders the namespace's writes, and the statements read
            # the new version (the `since` of the nodes they create)
            version = projection.bump_version(tx, self.namespace)
            work(tx)
            return version

        with self.driver.session(database=self.database) as session:
            return session.execute_write(unit)

    def write_statement(self, name: str, **params: Any) -> int:
        """One statement of ``cypher/`` in its own versioned write transaction; the version it wrote."""
        return self.write(lambda tx: tx.run(cypher(name), **self.scope, **params).consume())

    def ensure_schema(self, dimension: int, encoder_name: str) -> None:
        """The database's constraints and indexes (idempotent) and the namespace's own: checked when it has
        them (and its nodes that lack their namespace label, written by an older client, labelled), made for a
        namespace written before it had indexes of its own (labelled first), and left for the first write
        (:meth:`ensure_indexes`) when nothing was written to it yet, so reading a namespace never creates one."""
        for statement in cypher_statements("schema"):
            self.driver.execute_query(statement, database_=self.database)
        self.dimension = dimension
        found = self.index_dimension()
        if found is not None and found != dimension:
            raise ConfigError(
                f"Namespace {self.namespace!r} holds {found}-d vectors but encoder {encoder_name!r} produces "
                f"{dimension}-d ones. Use the encoder the namespace was built with, or re-embed it "
                f"(`hippo reembed`) with the new one."
            )
        if found is not None:
            self.indexed = True
            if self.run("namespace_unlabelled")[0]["missing"]:  # an older client indexed into it after its labelling
                self.label_nodes()
        elif self.has_passages():
            self.label_nodes()
            self.create_indexes(dimension)
        if found is not None or self.indexed:
            self.fold_phrases()

    def fold_phrases(self) -> None:
        """Give the phrases of a namespace written before phrases carried their key without accents that key
        (``cypher/unfolded_phrases.cypher``, ``cypher/set_folds.cypher``): once, the namespace then says so."""
        found = self.run("unfolded_phrases")
        if found:
            rows = [{"text": t, "fold": fold_phrase(t)} for t in found[0]["texts"]]
            self.run("set_folds", rows=[r for r in rows if r["fold"] != r["text"]])

    def label_nodes(self) -> None:
        """Give every node of the namespace its namespace label (``cypher/label_namespace.cypher``)."""
        with self.driver.session(database=self.database) as session:
            session.run(cypher("label_namespace"), **self.scope).consume()

    def ensure_indexes(self) -> None:
        """The namespace's indexes before a write adds nodes to it (once a client, unless they were dropped)."""
        if not self.indexed and self.dimension is not None:
            self.create_indexes(self.dimension)

    def index_dimension(self) -> int | None:
        """The dimension of the namespace's phrase vector index; None if it has none yet."""
        found = self.driver.execute_query(
            "SHOW VECTOR INDEXES YIELD name, options WHERE name = $name "
            "RETURN options.indexConfig['vector.dimensions'] AS dim",
            name=self.indexes["phrase"], database_=self.database,
        ).records
        return int(found[0]["dim"]) if found else None

    def create_indexes(self, dimension: int) -> None:
        """The namespace's vector indexes (``dimension``-d) and full-text index, if missing; waits until online."""
        self.dimension, self.indexed = dimension, True
        names = {f"${kind}Index": f"`{name}`" for kind, name in self.indexes.items()}
        names |= {f"${kind}Label": f"`{label}`" for kind, label in self.labels.items()} | {"$dim": str(int(dimension))}
        for statement in cypher_statements("namespace_schema"):
            for token, value in names.items():
                statement = statement.replace(token, value)
            self.driver.execute_query(statement, database_=self.database)
        self.driver.execute_query("CALL db.awaitIndexes(300)", database_=self.database)

    def drop_indexes(self, kinds: tuple[str, ...] = (*KINDS, "text")) -> None:
        """Drop the namespace's own indexes of ``kinds`` (a dropped namespace, or vectors of a new dimension)."""
        for kind in kinds:
            self.driver.execute_query(f"DROP INDEX `{self.indexes[kind]}` IF EXISTS", database_=self.database)
        self.indexed = False

    def phrase_neighbours(self, rows: list[dict[str, Any]], k: int) -> dict[Any, Any]:
        """The ``k`` nearest phrases of the namespace per row ({key, embedding}), through its phrase vector
        index: the record per key (``hits``, and ``passages``, |P_i| of the nearest hit)."""
        return self.search("phrase_neighbours", "rows", rows, k=k)

    def _seen(self, records: list[Any]) -> list[Any]:
        """Keep the namespace's graph version that ``records`` carry (``nsVersion``) for the query's walks."""
        versions = _query_versions.get()
        if versions is not None and records and "nsVersion" in records[0].keys():
            versions[(self.database, self.namespace)] = records[0]["nsVersion"]
        return records

    def search(
        self, statement: str, param: str, rows: list[Any], *, chunk: int = VECTOR_BATCH, **params: Any,
    ) -> dict[Any, Any]:
        """The record per row of a vector-index search ``statement`` run on ``rows`` (bound to ``$param``,
        ``chunk`` rows per statement), by the row's ``key``."""
        results: dict[Any, Any] = {}
        for i in range(0, len(rows), chunk):
            for rec in self.run(statement, **{param: rows[i : i + chunk]}, **params):
                results[rec["key"]] = rec
        return results

    def walk(
        self, statement: str, kind: str, *, fresh: bool = True, needs: int = 0,
        prepare: Callable[[projection.Projection], dict[str, Any]] | None = None,
        scope: Scope | None = None,
        beside: Callable[[dict[str, Any]], list[Any]] | None = None, **params: Any,
    ) -> tuple[list[Any], projection.Projection]:
        """Run a PPR statement (``$graph``, ``$graphVersion``) on a projection of ``kind``: the current one
        (``fresh``, projected first if needed) or the newest complete one, refreshed in the background when
        it is behind (:meth:`~projection.Projections.ensure`); with ``scope`` (a filter's passages, and the
        namespace's state when they were read, asked again on a retry) the projection of the graph they induce
        (:meth:`~projection.Projections.ensure_within`). ``prepare(projection)``
        gives the parameters that depend on the projection walked (its passage seeds). ``beside``: more work on the
        same projection, given the statement's parameters (``$graph``, ``$graphVersion`` among them), run at the
        same time; the columns of the one record it returns are added to the first record (:func:`side_by_side`).
        The records, and the projection they came from."""
        def run(graph: projection.Projection) -> list[Any]:
            more = prepare(graph) if prepare is not None else {}
            args = {"graph": graph.name, "graphVersion": graph.version, **params, **more}
            if beside is None:
                return self.run(statement, **args)
            return side_by_side(lambda: self.run(statement, **args), lambda: beside(args))

        def current(fresh: bool, retry: bool = False) -> projection.Projection:
            if scope is not None:
                return self.projections.ensure_within(self.namespace, kind, scope,
                                                      state=None if retry else scope.state)
            versions = _query_versions.get()
            seen = None if retry or versions is None else versions.get((self.database, self.namespace))
            return self.projections.ensure(self.namespace, kind, fresh=fresh, version=seen)

        graph = current(fresh)
        if graph.version < needs:  # a seed is newer than this projection
            graph = current(True, retry=True)
        if scope is not None and not graph.nodes:  # the filter's passages make no graph of this kind
            return [], graph
        attempts = 1
        while True:
            try:
                return run(graph), graph
            except (ClientError, ResultFailedError) as exc:
                # the projection was dropped meanwhile (a newer one replaced it), or a seed is not in it (a node
                # of a namespace written before nodes recorded `since`: "sourceNodes ... do not exist"): use the
                # current projection. (A walk beside another reports the error as the driver's ResultFailedError,
                # GDS's in its causes.)
                if attempts == WALK_ATTEMPTS or not _projection_gone(exc):
                    raise
            attempts += 1
            self.projections.forget(self.namespace)
            graph = current(True, retry=True)

    def has_passages(self) -> bool:
        return bool(self.run("namespace_has_passages")[0]["any"])

    def has_facts(self) -> bool:
        return bool(self.run("namespace_has_facts")[0]["any"])
