"""One namespace of a Neo4j database: running the ``cypher/`` statements, versioned writes, the schema, and
nearest-neighbour searches over the vector indexes that all namespaces share."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np
from neo4j import Driver
from neo4j.exceptions import ClientError

from .. import capabilities
from ..db import cypher, cypher_statements
from ..errors import ConfigError
from . import projection, reset

VECTOR_BATCH = 500  # rows per vector-index lookup statement


def usable(vector: np.ndarray) -> bool:
    """A vector the cosine vector indexes accept: finite and not all zeros."""
    return bool(np.isfinite(vector).all() and np.abs(vector).sum() > 0)


def finite_or_none(vector: np.ndarray) -> list[float] | None:
    return vector.tolist() if usable(vector) else None


# Candidates a query-time search reads from a shared vector index (passages for dense, facts for hipporag2)
# before keeping its namespace's: the HNSW search's beam is this k, so it sets how close the index's top
# nodes come to the exact ones. On musique_train, with three namespaces of that corpus on the server, the
# passage index missed 14 of the 500 exact top-5 passages of 100 questions at k 50, 2 at 200 and 1 at 400
# (3.1, 2.5, 2.8 ms a search), and the fact index 16 at k 100, 10 at 200 and none at 400 (3.3, 4.0, 5.6 ms):
# `bench/vector_candidates.py`, docs/results.md.
VECTOR_CANDIDATES = 400


def widening(first: int, cap: int = 100_000) -> Iterator[int]:
    """k, 10k, 100k, ... up to ``cap``: how far a search over a shared index reads."""
    k = max(1, first)
    while True:
        yield k
        if k >= cap:
            return
        k = min(k * 10, cap)


class GraphStore:
    """The statements of ``cypher/`` run against one namespace (``$ns``) of one database."""

    def __init__(self, driver: Driver, database: str, namespace: str) -> None:
        self.driver = driver
        self.database = database
        self.namespace = namespace

    def run(self, name: str, **params: Any) -> list[Any]:
        """Run ``cypher/<name>.cypher`` with ``$ns`` bound to this namespace; the records. A PPR statement takes the
        form the server's GDS runs (``graph/reset.py``)."""
        text = reset.statement(name, capabilities.of(self.driver, self.database).weighted_sources)
        return self.driver.execute_query(text, ns=self.namespace, database_=self.database, **params).records

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
        return self.write(lambda tx: tx.run(cypher(name), ns=self.namespace, **params).consume())

    def ensure_schema(self, dimension: int, encoder_name: str) -> None:
        """Constraints and indexes (idempotent), then wait until every index is online."""
        for statement in cypher_statements("schema"):
            self.driver.execute_query(statement.replace("$dim", str(int(dimension))), database_=self.database)
        found = self.driver.execute_query(
            "SHOW VECTOR INDEXES YIELD name, options WHERE name = 'hippo_phrase_embedding' "
            "RETURN options.indexConfig['vector.dimensions'] AS dim",
            database_=self.database,
        ).records
        if found and found[0]["dim"] != dimension:
            raise ConfigError(
                f"The database's phrase vector index has dimension {found[0]['dim']} but encoder "
                f"{encoder_name!r} produces {dimension}. Use the encoder the graph was built with, or another database."
            )
        self.driver.execute_query("CALL db.awaitIndexes(300)", database_=self.database)

    def phrase_neighbours(
        self, rows: list[dict[str, Any]], first_k: int, done: Callable[[list[dict[str, Any]], int, int, float | None], bool]
    ) -> dict[Any, Any]:
        """Nearest phrases of this namespace per row ({key, embedding}), through the shared vector index: the
        record per key (``hits``, and ``passages``, |P_i| of the nearest hit).

        The index spans all namespaces, so each row's search widens (k x 10) until ``done(row_hits, seen, k,
        last_cosine)`` says enough of this namespace's phrases were seen.
        """
        return self.widening_search(
            "phrase_neighbours", "rows", rows, first_k, lambda rec, k: done(rec["hits"], rec["seen"], k, rec["last"])
        )

    def widening_search(
        self, statement: str, param: str, rows: list[Any], first_k: int, done: Callable[[Any, int], bool],
        *, chunk: int = VECTOR_BATCH, key: Callable[[Any], Any] = lambda row: row["key"], **params: Any,
    ) -> dict[Any, Any]:
        """The last record per row of a vector-index search ``statement`` run on ``rows`` (bound to ``$param``,
        ``chunk`` rows per statement) with ``$k`` = first_k, then widened (k x 10) for the rows that
        ``done(record, k)`` does not accept yet. Records carry the row's ``key``."""
        results: dict[Any, Any] = {}
        pending = rows
        for k in widening(first_k):
            still = []
            for i in range(0, len(pending), chunk):
                part = pending[i : i + chunk]
                by_key = {key(r): r for r in part}
                for rec in self.run(statement, **{param: part}, k=k, **params):
                    results[rec["key"]] = rec
                    if not done(rec, k):
                        still.append(by_key[rec["key"]])
            pending = still
            if not pending:
                break
        return results

    def walk(
        self, statement: str, kind: str, *, fresh: bool = True, needs: int = 0,
        prepare: Callable[[projection.Projection], dict[str, Any]] | None = None, **params: Any,
    ) -> tuple[list[Any], projection.Projection]:
        """Run a PPR statement (``$graph``, ``$graphVersion``) on a projection of ``kind``: the current one
        (``fresh``, projected first if needed) or the newest complete one, refreshed in the background when
        it is behind (:func:`projection.ensure`). ``prepare(projection)`` gives the parameters that depend on
        the projection walked (its passage seeds). The records, and the projection they came from."""
        def run(graph: projection.Projection) -> list[Any]:
            more = prepare(graph) if prepare is not None else {}
            return self.run(statement, graph=graph.name, graphVersion=graph.version, **params, **more)

        graph = projection.ensure(self.driver, self.database, self.namespace, kind, fresh=fresh)
        if graph.version < needs:  # a seed is newer than this projection
            graph = projection.ensure(self.driver, self.database, self.namespace, kind, fresh=True)
        try:
            return run(graph), graph
        except ClientError as exc:
            # the projection was dropped meanwhile (a newer one replaced it), or a seed is not in it (a node of
            # a namespace written before nodes recorded `since`: "sourceNodes ... do not exist"): use the
            # current projection, once
            if not any(m in str(exc) for m in ("not found", "does not exist", "do not exist")):
                raise
            projection.forget(self.driver, self.database, self.namespace)
            graph = projection.ensure(self.driver, self.database, self.namespace, kind, fresh=True)
            return run(graph), graph

    def has_passages(self) -> bool:
        return bool(self.run("namespace_has_passages")[0]["any"])

    def has_facts(self) -> bool:
        return bool(self.run("namespace_has_facts")[0]["any"])
