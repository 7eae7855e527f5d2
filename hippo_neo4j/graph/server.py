"""One Neo4j database as this process uses it: what its server can do (:mod:`.capabilities`), the statements of
``cypher/`` in the forms that server runs (:mod:`.reset`), and the GDS projections of its namespaces
(:class:`~hippo_neo4j.graph.projection.Projections`).

Every client of a driver and database shares one :class:`Server` (:meth:`Server.of`), as they share the
server's catalogue: a projection one namespace's client built is found by the next, one build of a namespace
runs at a time, and the filter projections of all of them share one budget of the server's heap.
:meth:`Server.close` waits for its background work and forgets it all; a driver that is garbage collected
takes its servers with it.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import TYPE_CHECKING

from neo4j import Driver

from ..db import packed_embeddings
from ..errors import ServerError
from . import reset
from .capabilities import Capabilities, probe

if TYPE_CHECKING:
    from .projection import Projections

log = logging.getLogger(__name__)

_servers: "weakref.WeakKeyDictionary[Driver, dict[str, Server]]" = weakref.WeakKeyDictionary()
_servers_guard = threading.Lock()


class Server:
    """A driver and one of its databases: capabilities probed once, statement forms, projections."""

    def __init__(self, driver: Driver, database: str = "neo4j") -> None:
        from .projection import Projections

        self._driver = weakref.ref(driver)  # the driver's clients hold it; the registry must not
        self.database = database
        self._capabilities: Capabilities | None = None
        self._guard = threading.Lock()
        self._noticed: set[str] = set()
        self.projections: Projections = Projections(self)

    @classmethod
    def of(cls, driver: Driver, database: str = "neo4j") -> "Server":
        """The :class:`Server` of ``driver`` and ``database`` that every client of them shares."""
        with _servers_guard:
            by_database = _servers.setdefault(driver, {})
            server = by_database.get(database)
            if server is None:
                server = by_database[database] = cls(driver, database)
            return server

    @property
    def driver(self) -> Driver:
        driver = self._driver()
        if driver is None:
            raise ServerError("The Neo4j driver of this client was closed and collected: open a new client.")
        return driver

    # -- what the server can do

    @property
    def capabilities(self) -> Capabilities:
        """What the server can do, probed on first use (:func:`~hippo_neo4j.graph.capabilities.probe`)."""
        found = self._capabilities
        if found is None:
            found = probe(self.driver, self.database)
            with self._guard:
                self._capabilities = found
        return found

    def probe_again(self) -> Capabilities:
        """What the server can do now (a plugin installed or a setting changed since the first probe)."""
        with self._guard:
            self._capabilities = None
        return self.capabilities

    def notice_once(self, what: str, message: str) -> None:
        """Log ``message`` once for this server and kind of notice (``what``)."""
        with self._guard:
            if what in self._noticed:
                return
            self._noticed.add(what)
        log.warning(message)

    # -- statements

    def statement(self, name: str) -> str:
        """``cypher/<name>.cypher`` in the form this server runs (a PPR walk's weighted sources where GDS takes
        node ids only: :func:`~hippo_neo4j.graph.reset.statement`; embeddings read in bulk packed where the server
        sends VECTOR values: :func:`~hippo_neo4j.db.packed_embeddings`)."""
        text = reset.statement(name, self.capabilities.weighted_sources)
        return packed_embeddings(text) if self.capabilities.vector_values else text

    def projection_statement(self, name: str, kind: str) -> str:
        """The projection statement ``cypher/<name>.cypher`` of ``kind`` in the form this server runs."""
        return reset.projection(name, kind, self.capabilities.weighted_sources)

    # -- life cycle

    def close(self, timeout: float = 60.0) -> None:
        """Wait for the background projections under way (they are kept, not thrown away), forget the
        projections this process knew, and leave the registry: the next client of the driver starts afresh."""
        self.projections.close(timeout)
        driver = self._driver()
        with _servers_guard:
            by_database = _servers.get(driver) if driver is not None else None
            if by_database is not None and by_database.get(self.database) is self:
                del by_database[self.database]


def close_servers(driver: Driver, timeout: float = 60.0) -> None:
    """Close every :class:`Server` of ``driver`` (before closing the driver)."""
    with _servers_guard:
        servers = list(_servers.get(driver, {}).values())
    for server in servers:
        server.close(timeout)
