"""Tolerant parsing of model output: ``<think>`` blocks, code fences, a bare top-level array, truncated JSON
repaired with ``json_repair``."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import json_repair


log = logging.getLogger(__name__)

# -- tolerant parsing -----------------------------------------------------------------------------------------


class ResponseParseError(ValueError):
    """A model answer that holds no usable JSON for the step."""


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


def parse_json_list(text: str | None, key: str) -> tuple[list[Any], bool]:
    """The list under ``key`` in a model answer, and whether the JSON had to be repaired.

    Tolerates ``<think>`` blocks, code fences, prose around the JSON, a bare top-level array (taken as the
    list itself) and truncated JSON (repaired). Raises :class:`ResponseParseError` when nothing usable is
    found.
    """
    s = _THINK.sub("", text or "")
    if "</think>" in s.lower():  # the opening tag was part of the prompt template
        s = re.split(r"</think>", s, flags=re.IGNORECASE)[-1]
    if re.match(r"\s*<think>", s, re.IGNORECASE):
        raise ResponseParseError("the answer ends inside a <think> block")
    fence = _FENCE.search(s)
    json_at = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
    if fence and (json_at < 0 or fence.start() < json_at):
        # a fence that opens before the JSON holds it; one that opens later is inside or after the JSON
        # (small models write "```" into a string and ramble on)
        s = fence.group(1)
    starts = [i for i in (s.find("{"), s.find("[")) if i >= 0]
    if not starts:
        raise ResponseParseError("no JSON object or array in the answer")
    s = s[min(starts) :]
    repaired = False
    try:
        # strict=False: raw newlines and tabs inside strings, which grammar-constrained servers let through
        obj, _ = json.JSONDecoder(strict=False).raw_decode(s)
    except ValueError:
        obj = json_repair.loads(s)
        repaired = True
    if isinstance(obj, dict):
        if key in obj:
            value = obj[key]
        else:
            lists = [v for v in obj.values() if isinstance(v, list)]
            if len(lists) != 1:
                raise ResponseParseError(f"no {key!r} list in the JSON answer")
            value = lists[0]
    else:
        value = obj
    if not isinstance(value, list):
        raise ResponseParseError(f"{key!r} is not a list")
    if repaired and value:
        # a truncated answer may end mid-string ("Fra" for "France"): drop an item whose last string
        # never appears closed in the source
        last = value[-1][-1] if isinstance(value[-1], list) and value[-1] else value[-1]
        if isinstance(last, str) and json.dumps(last, ensure_ascii=False) not in s:
            value = value[:-1]
    return value, repaired


def parse_entities(text: str | None) -> tuple[list[str], bool]:
    """Named entities from an NER answer: strings (numbers become strings), stripped, first occurrence kept."""
    items, repaired = parse_json_list(text, "named_entities")
    out: list[str] = []
    for item in items:
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            item = str(item)
        if isinstance(item, str) and item.strip() and item.strip() not in out:
            out.append(item.strip())
    return out, repaired


def parse_triples(text: str | None) -> tuple[list[Any], bool]:
    """Triples from an OpenIE answer, kept raw (the indexer counts malformed ones)."""
    return parse_json_list(text, "triples")


