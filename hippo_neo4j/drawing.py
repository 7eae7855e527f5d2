"""Explanations that draw themselves: one read-only Cypher statement per retrieval result which, pasted into
Neo4j Browser, draws the query's seed phrases, the phrases that carried most PPR mass, the edges between
them and the retrieved passages.

    from hippo_neo4j.drawing import drawing_cypher
    print(drawing_cypher(hippo.query("Which Stanford professor works on Alzheimer's?"), hippo.namespace))

Browser takes no parameters with a pasted statement, so the values of ``cypher/draw_explanation.cypher`` are
written in as Cypher string literals (:func:`cypher_string`): whatever a phrase or passage id holds, it stays
inside its literal.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Sequence

from .db import cypher
from .models import RetrievalResult

TOP_PHRASES = 10  # phrases by PPR mass drawn beside the seeds

# printable ASCII that means nothing special inside a single-quoted Cypher string (and to Browser's editor,
# which splits pasted text on ';')
_PLAIN = frozenset(chr(c) for c in range(0x20, 0x7F)) - {"\\", "'", '"', ";", "`"}
_SHORT = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def cypher_string(value: str) -> str:
    """``value`` as a single-quoted Cypher string literal.

    Backslash, quote, newline, carriage return and tab get their short escapes; letters, digits and marks
    outside ASCII are kept as they are (a readable statement); every other character (controls, separators
    such as U+2028, quotes, backticks, ';', surrogates) is written as ``\\uXXXX`` (UTF-16 units, as Neo4j's
    strings hold them), so no character of the value can end the literal or be read as anything but itself.
    """
    out = []
    for ch in value:
        if ch in _PLAIN:
            out.append(ch)
        elif ch in _SHORT:
            out.append(_SHORT[ch])
        elif ord(ch) > 0x7F and unicodedata.category(ch)[0] in "LNM":
            out.append(ch)
        else:
            data = ch.encode("utf-16-be", "surrogatepass")
            out.extend(f"\\u{int.from_bytes(data[i:i + 2], 'big'):04X}" for i in range(0, len(data), 2))
    return "'" + "".join(out) + "'"


def cypher_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(cypher_string(v) for v in values) + "]"


def drawing_values(result: RetrievalResult, namespace: str, top_phrases: int = TOP_PHRASES) -> dict[str, Any]:
    """The parameters of ``cypher/draw_explanation.cypher`` for ``result``: seeds, top-mass phrases, passage ids."""
    seeds = list(dict.fromkeys(text for text, _ in result.seeds))
    phrases = list(dict.fromkeys(p["phrase"] for p in result.top_phrases[:top_phrases] if p.get("phrase") is not None))
    return {
        "ns": namespace,
        "question": result.query,
        "seeds": seeds,
        "phrases": [p for p in phrases if p not in seeds],
        "ids": list(dict.fromkeys(p.id for p in result.passages)),
    }


def drawing_cypher(result: RetrievalResult, namespace: str, top_phrases: int = TOP_PHRASES) -> str:
    """One read-only statement that draws ``result`` in Neo4j Browser (values written in as literals)."""
    values = drawing_values(result, namespace, top_phrases)

    def literal(match: re.Match[str]) -> str:
        value = values[match.group(1)]
        return cypher_list(value) if isinstance(value, list) else cypher_string(value)

    # the template's comments name its parameters: keep only the first line, as a title
    body = "\n".join(line for line in cypher("draw_explanation").splitlines() if not line.lstrip().startswith("//"))
    mode = re.sub(r"[^A-Za-z0-9._-]", "", result.mode)
    title = f"// hippo-neo4j: why these passages were retrieved ({mode}), to paste into Neo4j Browser\n"
    return title + re.sub(r"\$(ns|question|seeds|phrases|ids)\b", literal, body)


__all__ = ["cypher_list", "cypher_string", "drawing_cypher", "drawing_values"]
