"""What one call may ask for: the limits every surface enforces alike (the Python client, the CLI, ``hippo serve``
and ``hippo mcp``), each error naming the limit and its value.

========================  =========  ==========================================================================
limit                     value      why
========================  =========  ==========================================================================
query characters          10,000     linking reads every run of the question's words; 10,000 characters is a
                                     page (bench/limits.py measures a request at every limit at once)
entities per query        64         each is encoded and linked (a vector search)
entity characters         500        a name, not a passage
top_k                     200        passages returned, each with its text and explanation
filter conditions         32         each is one facet seek
values of one ``in``      10,000     :data:`hippo_neo4j.metadata.MAX_IN`
namespace characters      200        a name
passage characters        100,000    ``HippoConfig.max_passage_chars`` (``HIPPO_MAX_PASSAGE_CHARS``): longer
                                     passages are named in the index report, not indexed
id characters             1,000      ids and phrases are range-index keys (:data:`graph.indexing.MAX_KEY_CHARS`)
document id characters    900        a document's passages are keyed by its id, ``#``, 12 hex digits and, for a
                                     repeated text, ``-<n>`` (``hippo serve`` / ``hippo mcp``)
passages per request      10,000     ``hippo serve`` / ``hippo mcp`` (the library and ``hippo index`` stream any
                                     number)
ids per delete request    100,000    ``hippo serve`` / ``hippo mcp``
request body bytes        4 MiB      ``hippo serve`` (``HIPPO_API_MAX_BODY``)
========================  =========  ==========================================================================
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from .errors import ConfigError
from .text import CONTROL

QUERY_CHARS = 10_000
ENTITIES = 64
ENTITY_CHARS = 500
TOP_K = 200
FILTER_CONDITIONS = 32
NAMESPACE_CHARS = 200
PASSAGES_PER_REQUEST = 10_000
IDS_PER_REQUEST = 100_000
DOCUMENT_ID_CHARS = 900
BODY_BYTES = 4 * 2**20

_CONTROL = re.compile(f"[{CONTROL}]")
# check_namespace's rule as a regular expression, for schemas (the HTTP API's OpenAPI document)
NAMESPACE_PATTERN = f"^[^{CONTROL}]*[^\\s{CONTROL}][^{CONTROL}]*$"


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (a newline, NUL, BEL, ...)."""
    return _CONTROL.search(text) is not None


def check_namespace(name: Any) -> str:
    """A namespace's name as given, checked: 1 to :data:`NAMESPACE_CHARS` characters, not only white space, no
    control characters (a ConfigError naming the rule otherwise). The same rule holds on every surface."""
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"A namespace must be a non-empty name, not {name!r}: 1 to {NAMESPACE_CHARS} characters, "
                          "not only white space.")
    if len(name) > NAMESPACE_CHARS:
        raise ConfigError(f"A namespace has at most {NAMESPACE_CHARS} characters, not {len(name):,}.")
    if has_control(name):
        raise ConfigError(f"A namespace may not hold control characters: {name!r}.")
    return name


def check_query(text: Any, top_k: Any, entities: Sequence[Any] | None) -> None:
    """A query's text, top_k and entities against the limits (a ConfigError naming the limit otherwise). An
    empty text is allowed: it finds no passages, and the result says so."""
    if not isinstance(text, str):
        raise ConfigError(f"The query must be a string, not {type(text).__name__}.")
    if len(text) > QUERY_CHARS:
        raise ConfigError(f"The query has {len(text):,} characters; the limit is {QUERY_CHARS:,}: ask a question, "
                          "not a document (index long text instead).")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= TOP_K:
        raise ConfigError(f"top_k must be an integer from 1 to {TOP_K}, not {top_k!r}.")
    if entities is None:
        return
    if isinstance(entities, str) or not isinstance(entities, Sequence):
        raise ConfigError(f"entities must be a list of strings, not {type(entities).__name__}.")
    if len(entities) > ENTITIES:
        raise ConfigError(f"{len(entities):,} query entities; the limit is {ENTITIES} a query.")
    for entity in entities:
        if not isinstance(entity, str):
            raise ConfigError(f"A query entity must be a string, not {entity!r}.")
        if len(entity) > ENTITY_CHARS:
            raise ConfigError(f"A query entity has {len(entity):,} characters; the limit is {ENTITY_CHARS}.")


def check_conditions(count: int) -> None:
    if count > FILTER_CONDITIONS:
        raise ConfigError(f"The filter has {count} conditions; the limit is {FILTER_CONDITIONS}.")


__all__ = ["BODY_BYTES", "ENTITIES", "ENTITY_CHARS", "FILTER_CONDITIONS", "IDS_PER_REQUEST", "NAMESPACE_CHARS",
           "NAMESPACE_PATTERN",
           "PASSAGES_PER_REQUEST", "QUERY_CHARS", "TOP_K", "check_conditions", "check_namespace", "check_query",
           "has_control"]
