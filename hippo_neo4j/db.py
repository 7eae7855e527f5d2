"""Connections to Neo4j, and the Cypher files in ``cypher/`` that the library runs."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from neo4j import Driver, GraphDatabase
from neo4j.exceptions import AuthError, ClientError, ServiceUnavailable

from .config import ConnectionSettings
from .errors import ServerError

CYPHER_DIR = Path(__file__).resolve().parent / "cypher"
NODE_KINDS = ("phrase", "passage", "fact")


def namespace_key(namespace: str) -> str:
    """The hexadecimal digest that names a namespace's labels and indexes (any namespace name gives a valid,
    fixed-length identifier; DDL cannot take it as a parameter, and hex digits need no quoting)."""
    return hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:16]


def namespace_labels(namespace: str) -> dict[str, str]:
    """The labels every Phrase, Passage and Fact node of the namespace carries (by node kind): its indexes cover
    them, and the projections of its graph read them."""
    key = namespace_key(namespace)
    return {kind: f"Hippo{kind.capitalize()}_{key}" for kind in NODE_KINDS}


@lru_cache(maxsize=None)
def cypher(name: str) -> str:
    """The text of ``cypher/<name>.cypher`` (one statement)."""
    return (CYPHER_DIR / f"{name}.cypher").read_text(encoding="utf-8").strip().rstrip(";")


# an embedding that a statement collects into its `embeddings` column: `collect(p.embedding) AS embeddings`, or
# `collect(CASE WHEN $vectors THEN p.embedding END) AS embeddings`
_COLLECTED_EMBEDDING = re.compile(r"\b(\w+)\.embedding(?=(?: END)?\) AS embeddings\b)")


@lru_cache(maxsize=None)  # Server.statement calls it for every statement a query runs
def packed_embeddings(text: str) -> str:
    """A statement that collects embeddings (``cypher/passage_vectors.cypher``, ``passage_vectors_of``,
    ``phrase_vectors``) in its form for a server that sends Cypher 25 VECTOR values: each embedding as a FLOAT32
    vector, which the driver receives as four bytes a float (a list of floats arrives as one Python float
    each, several times slower to read: docs/scale.md); other statements unchanged."""
    if not _COLLECTED_EMBEDDING.search(text):
        return text
    return "CYPHER 25 " + _COLLECTED_EMBEDDING.sub(lambda m: f"vector({m[0]}, size({m[0]}), FLOAT32)", text)


def cypher_statements(name: str) -> list[str]:
    """The statements of a multi-statement ``.cypher`` file, comments dropped, split on ';'."""
    text = (CYPHER_DIR / f"{name}.cypher").read_text(encoding="utf-8")
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    return [s.strip() for s in text.split(";") if s.strip()]


def connect_driver(uri: str, auth: tuple[str, str] | None, **kwargs: Any) -> Driver:
    """A driver whose connectivity is verified, with errors that say what to do."""
    kwargs.setdefault("notifications_min_severity", "OFF")
    driver = GraphDatabase.driver(uri, auth=auth, **kwargs)
    try:
        driver.verify_connectivity()
    except AuthError:
        driver.close()
        raise ServerError(
            f"Neo4j at {uri} refused the credentials for user {auth[0] if auth else '(none)'!r}. "
            "Set HIPPO_NEO4J_USER / HIPPO_NEO4J_PASSWORD (or --user/--password); for the local server the "
            "password is generated into the file named by 'hippo neo4j status'."
        ) from None
    except (ServiceUnavailable, OSError) as exc:
        driver.close()
        raise ServerError(
            f"Cannot reach Neo4j at {uri} ({type(exc).__name__}). Start the local server with "
            "'hippo neo4j start', or point HIPPO_NEO4J_URI at a running Neo4j."
        ) from None
    except Exception:
        driver.close()
        raise
    return driver


def connect(settings: ConnectionSettings) -> Driver:
    """A driver to ``settings``' server, whose Graph Data Science answers in ``settings.database``."""
    driver = connect_driver(settings.uri, settings.auth)
    try:
        driver.execute_query("RETURN gds.version() AS v", database_=settings.database)
    except ClientError as exc:
        driver.close()
        if "gds.version" in str(exc) or "Unknown function" in str(exc):
            raise ServerError(
                f"Neo4j at {settings.uri} has no Graph Data Science plugin (gds.version() is unknown). "
                "Install GDS there, or use the local server: unset HIPPO_NEO4J_URI and run 'hippo neo4j start'."
            ) from None
        if "database" in str(exc).lower():
            raise ServerError(
                f"Database {settings.database!r} is not available on {settings.uri}: {exc.message}"
            ) from None
        raise
    return driver
