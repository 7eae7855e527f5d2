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


class UnknownNamespace(HippoError):
    """A read of a namespace that holds no passages (every surface refuses it alike: the CLI exits 1, hippo serve
    answers 404, hippo mcp a tool error)."""

    def __init__(self, namespace: str) -> None:
        super().__init__(f"namespace {namespace!r} has no passages (index into it first, or check the name: "
                         "hippo stats --namespace NAME)")


class ServerError(HippoError):
    """The Neo4j server is unreachable, refused the credentials, or lacks GDS."""


USE_EXISTING_HINT = (
    "To use an existing Neo4j (with Graph Data Science) instead, set HIPPO_NEO4J_URI, "
    "HIPPO_NEO4J_USER, HIPPO_NEO4J_PASSWORD and HIPPO_NEO4J_DATABASE (see README, "
    "'Using an existing Neo4j')."
)


class ExtractionError(HippoError):
    """Entity / triple extraction could not run (as opposed to one passage failing to parse)."""


class LLMError(ExtractionError):
    """The LLM endpoint is unusable: down, not OpenAI-compatible, unknown model, or the key was refused.

    Messages name the endpoint URL and the model, never the API key.
    """
