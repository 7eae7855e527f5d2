"""What the connected server can do, probed once per :class:`~hippo_neo4j.graph.server.Server` (a driver and
database) and kept there: the statement forms are chosen from these capabilities, never from version strings.

- ``weighted_sources``: GDS PageRank takes weighted ``sourceNodes`` ([[node, weight], ...]; GDS 2.17+). Without
  them (GDS 2.13, built for Neo4j 5.26) the walks give the same weighted reset another way
  (``graph/reset.py``).
- ``sys_info``: ``gds.debug.sysInfo`` answers (the free heap the memory check compares a projection with);
  without it the check is skipped, with a one-line notice.
- ``vector_procedures`` (``db.index.vector.queryNodes``) and ``search_clause`` (Cypher 25's ``SEARCH``).
- ``vector_values``: a Cypher 25 ``VECTOR`` value reaches this client as one (Bolt 6): the statements that read
  embeddings in bulk then send them packed, four bytes a float, not as lists of floats (``db.packed_embeddings``).
- ``gds_allowed``: GDS procedures run (``dbms.security.procedures.unrestricted`` lets ``gds.*`` through).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from neo4j import Driver
from neo4j.exceptions import ClientError, CypherSyntaxError, DriverError, Neo4jError
from neo4j.vector import Vector

from ..db import cypher


@dataclass(frozen=True)
class Capabilities:
    neo4j_version: str
    edition: str
    gds_version: str | None
    gds_allowed: bool
    weighted_sources: bool
    sys_info: bool
    vector_procedures: bool
    search_clause: bool
    vector_values: bool = False
    cypher_versions: list[str] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  # capability -> the server's own words, when it failed

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _answer(driver: Driver, database: str, statement: str, **params: Any) -> tuple[list[Any] | None, str | None]:
    """The records of ``statement``, or None and the server's message when it fails."""
    try:
        return driver.execute_query(statement, database_=database, **params).records, None
    except ClientError as exc:
        return None, (exc.message or str(exc)).splitlines()[0][:300]


def probe(driver: Driver, database: str = "neo4j") -> Capabilities:
    """Ask the server what it can do (one statement per capability; none writes)."""
    components, _ = _answer(driver, database, "CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition")
    kernel = next((r for r in components or [] if r["name"] == "Neo4j Kernel"), None)
    cypher_row = next((r for r in components or [] if r["name"] == "Cypher"), None)
    problems: dict[str, str] = {}
    gds, problem = _answer(driver, database, "RETURN gds.version() AS v")
    if problem:
        problems["gds"] = problem
    weighted, problem = _answer(driver, database, cypher("probe_weighted_sources"))
    if problem:
        problems["weighted_sources"] = problem
    info, problem = _answer(driver, database, cypher("server_heap"))
    if problem:
        problems["sys_info"] = problem
    vector, _ = _answer(driver, database, "SHOW PROCEDURES YIELD name WHERE name = 'db.index.vector.queryNodes' RETURN name")
    search_clause = _search_clause(driver, database)
    ran = weighted is not None or "sourceNodes" in problems.get("weighted_sources", "")  # the procedure itself ran
    return Capabilities(
        neo4j_version=kernel["versions"][0] if kernel else "unknown",
        edition=kernel["edition"] if kernel else "unknown",
        gds_version=gds[0]["v"] if gds else None,
        gds_allowed=gds is not None and ran,
        weighted_sources=weighted is not None,
        sys_info=info is not None,
        vector_procedures=bool(vector),
        search_clause=search_clause,
        vector_values=_vector_values(driver, database),
        cypher_versions=list(cypher_row["versions"]) if cypher_row else ["5"],
        problems=problems,
    )


def _search_clause(driver: Driver, database: str) -> bool:
    """Whether the planner knows Cypher 25's SEARCH clause (EXPLAIN of a search on an index that does not exist:
    "no such index" means it parsed)."""
    try:
        driver.execute_query(
            "EXPLAIN CYPHER 25 MATCH (n:HippoProbe) SEARCH n IN (VECTOR INDEX hippo_probe FOR [1.0, 0.0] LIMIT 1) "
            "RETURN n", database_=database)
        return True
    except CypherSyntaxError:
        return False
    except ClientError as exc:
        return "index" in str(exc).lower() and "cypher version" not in str(exc).lower()


def _vector_values(driver: Driver, database: str) -> bool:
    """Whether the server builds a Cypher 25 VECTOR value and this connection receives it as one (any failure,
    the server's or the driver's, is a no: the statements then read lists, as on every server)."""
    try:
        found, _ = _answer(driver, database, "CYPHER 25 RETURN vector([1.0, 2.0], 2, FLOAT32) AS v")
    except (Neo4jError, DriverError):
        return False
    return found is not None and len(found) == 1 and isinstance(found[0]["v"], Vector)
