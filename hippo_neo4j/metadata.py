"""A passage's metadata, and filters over it.

Metadata is a flat map of scalars: strings, integers, floats, booleans, dates (``datetime.date`` /
``datetime.datetime``, stored as their ISO 8601 strings, an aware datetime in UTC) and lists of strings. Each key is an identifier
(``[A-Za-z_][A-Za-z0-9_]*``, at most 64 characters) and is stored as the Passage node's property
``meta_<key>``. Dates are compared as strings: write them in one form and time zone (ISO 8601, UTC), so that
string order is time order (``"2026-01-02" > "2026-01-01T23:00:00Z"`` holds, an offset other than UTC does not
sort).

A filter maps keys to conditions, all of which must hold (``and``)::

    {"user": "u1"}                                   # equality (a list of strings: contains)
    {"tag": {"in": ["a", "b"]}}                      # one of (a list of strings: shares one)
    {"created_at": {">=": "2026-01-01", "<": "2026-02-01"}, "year": {">": 2020}}   # ranges

It compiles to parameters only (:meth:`Filters.parameters`): ``cypher/passages_matching.cypher`` is one fixed
statement that reads each condition's key, operator and value from ``$filters``; no key or value is ever
spliced into Cypher. Each value is also a facet node, ``(:HippoFacet {ns, key, value})-[:DESCRIBES]->(passage)``
(:func:`facets`), so that a condition is an index seek, not a scan of the namespace's passages.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Any, Literal, Mapping, Union

from pydantic import BaseModel

from .errors import ConfigError
from .limits import FILTER_CONDITIONS, check_conditions

PREFIX = "meta_"  # a metadata key's property on the Passage node: meta_<key>
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
MAX_IN = 10_000  # values of one `in` condition
# what check_metadata accepts, as a JSON schema (the HTTP API's OpenAPI document): dates travel as ISO strings
METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "propertyNames": {"pattern": f"^{KEY.pattern}$"},
    "additionalProperties": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "number"},
                                       {"type": "boolean"}, {"type": "array", "items": {"type": "string"}}]},
}

_SCALAR_SCHEMA: list[dict[str, Any]] = [{"type": "string"}, {"type": "integer"}, {"type": "number"},
                                        {"type": "boolean"}]
# what Filters.parse accepts, as a JSON schema: key -> a value (equality) or {operator: value}, `in` a list
FILTERS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "propertyNames": {"pattern": f"^{KEY.pattern}$"},
    "maxProperties": FILTER_CONDITIONS,
    "additionalProperties": {"anyOf": [*_SCALAR_SCHEMA, {
        "type": "object", "minProperties": 1, "additionalProperties": False,
        "properties": {"in": {"type": "array", "minItems": 1, "maxItems": MAX_IN, "items": {"anyOf": _SCALAR_SCHEMA}},
                       **{op: {"anyOf": _SCALAR_SCHEMA} for op in ("=", "<", "<=", ">", ">=")}},
    }]},
}

Scalar = Union[bool, int, float, str]
Op = Literal["=", "in", "<", "<=", ">", ">="]
OPERATORS: tuple[str, ...] = ("=", "in", "<", "<=", ">", ">=")


def check_key(key: Any, where: str) -> str:
    if not isinstance(key, str) or not KEY.fullmatch(key):
        raise ConfigError(f"{where} key {key!r} is not an identifier: use letters, digits and '_' (not first), "
                          "at most 64 characters.")
    return key


def scalar(value: Any, where: str) -> Scalar:
    """``value`` as stored or compared: a bool, int, finite float or string; a date as its ISO 8601 string (a
    datetime with a time zone in UTC). ``where`` names the field in the error."""
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).isoformat()
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    raise ConfigError(f"{where}: {value!r} is not a string, number, boolean or date.")


def metadata_value(key: str, value: Any) -> Scalar | list[str]:
    if isinstance(value, (list, tuple)):
        if not all(isinstance(x, str) for x in value):
            raise ConfigError(f"metadata {key!r}: a list may hold strings only, not {value!r}.")
        return list(value)
    if value is None or isinstance(value, (dict, set)):
        raise ConfigError(f"metadata {key!r}: {value!r} is not a string, number, boolean, date or list of strings "
                          "(leave the key out instead of None).")
    return scalar(value, f"metadata {key!r}")


def check_metadata(metadata: Any) -> dict[str, Scalar | list[str]]:
    """The passage's metadata, checked (a ConfigError naming the field otherwise)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ConfigError(f"metadata must be a map of keys to values, not {type(metadata).__name__}.")
    return {check_key(k, "metadata"): metadata_value(k, v) for k, v in metadata.items()}


def stored(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The Passage node's properties for ``metadata``."""
    return {PREFIX + k: v for k, v in metadata.items()}


def facets(metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The passage's facets ({key: the property, value}), which filters seek: one per value, a list's one per
    element (``cypher/passages_matching.cypher``)."""
    return [{"key": PREFIX + k, "value": x} for k, v in metadata.items() for x in (v if isinstance(v, list) else [v])]


def read(pairs: Any) -> dict[str, Any]:
    """Metadata from a statement's ``[[property, value], ...]`` (the node's ``meta_`` properties), by key."""
    return {k[len(PREFIX):]: v for k, v in sorted(pairs or [])}


class Condition(BaseModel):
    """One condition on one key: ``key op value``."""

    key: str
    op: Op
    value: Union[Scalar, list[Scalar]]


class Filters(BaseModel):
    """The conditions of a filter, every one of which a passage's metadata must pass."""

    conditions: list[Condition]

    @classmethod
    def parse(cls, filters: "Filters | Mapping[str, Any] | None") -> "Filters | None":
        """A filter from its map (module docstring); None for no filter (None, or no condition). A ConfigError
        names a bad field."""
        if filters is None or isinstance(filters, Filters):
            return filters if filters is None or filters.conditions else None
        if not isinstance(filters, Mapping):
            raise ConfigError(f"filters must be a map of metadata keys to conditions, not {type(filters).__name__}.")
        conditions: list[Condition] = []
        for key, spec in filters.items():
            check_key(key, "filter")
            if isinstance(spec, Mapping):
                if not spec:
                    raise ConfigError(f"filter {key!r}: no condition; use one of {', '.join(OPERATORS)}.")
                conditions += [condition(key, op, value) for op, value in spec.items()]
            else:
                conditions.append(condition(key, "=", spec))
        check_conditions(len(conditions))
        return cls(conditions=conditions) if conditions else None  # {}: no filter

    def parameters(self) -> list[dict[str, Any]]:
        """``$filters`` of ``cypher/passages_matching.cypher``: one {key (the property), op, value} a condition."""
        return [{"key": PREFIX + c.key, "op": c.op, "value": c.value} for c in self.conditions]


def condition(key: str, op: Any, value: Any) -> Condition:
    if op not in OPERATORS:
        raise ConfigError(f"filter {key!r}: unknown operator {op!r}; use one of {', '.join(OPERATORS)}.")
    what = f"filter {key!r} {op}"
    if op == "in":
        if not isinstance(value, (list, tuple)) or not value or len(value) > MAX_IN:
            raise ConfigError(f"{what}: give a non-empty list of at most {MAX_IN:,} values, not {value!r}.")
        return Condition(key=key, op=op, value=[scalar(v, what) for v in value])
    if isinstance(value, (list, tuple, dict, set)):
        hint = " (for one of several values: {'in': [...]})" if op == "=" else ""
        raise ConfigError(f"{what}: {value!r} is not a string, number, boolean or date{hint}.")
    return Condition(key=key, op=op, value=scalar(value, what))
