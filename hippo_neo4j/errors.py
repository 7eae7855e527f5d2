"""Errors that reach users. Each message says what went wrong and how to fix it."""

from __future__ import annotations


class HippoError(Exception):
    """Base class: the CLI prints the message (no traceback) and exits with status 1."""


class ConfigError(HippoError):
    pass


class RuntimeSetupError(HippoError):
    """The local Neo4j + GDS runtime could not be assembled or started."""


class JavaNotFoundError(RuntimeSetupError):
    pass


class ServerError(HippoError):
    """The Neo4j server is unreachable, refused the credentials, or lacks GDS."""


USE_EXISTING_HINT = (
    "To use an existing Neo4j (with Graph Data Science) instead, set HIPPO_NEO4J_URI, "
    "HIPPO_NEO4J_USER, HIPPO_NEO4J_PASSWORD and HIPPO_NEO4J_DATABASE (see README, "
    "'Using an existing Neo4j')."
)
