"""The statement forms of the PPR walks for the server at hand: a GDS that takes weighted ``sourceNodes`` runs
the statements of ``cypher/`` as they are; on one that takes node ids only (GDS 2.13, for Neo4j 5.26) each
weighted ``gds.pageRank.stream`` call is replaced by ``cypher/weighted_reset.cypher``, the same reset as a sum
of walks from unweighted sources (GDS's PageRank is linear in its reset): the same rankings and scores."""

from __future__ import annotations

import functools
import re

from ..db import cypher

# A weighted PPR call as the statements of cypher/ write it: sourceNodes first, tolerance among the settings.
CALL = re.compile(
    r"CALL gds\.pageRank\.stream\(\$graph, \{\s*sourceNodes: (?P<sources>[^,]+?),\s*(?P<config>.*?)\s*\}\)\s*"
    r"YIELD nodeId, score",
    re.S,
)
TOLERANCE = re.compile(r"tolerance: (?P<tolerance>[^,}]+?)\s*(?:,\s*|$)", re.S)


def _fragment() -> str:
    text = cypher("weighted_reset")
    return text[text.index("CALL (*) {"):]


def _replace(match: re.Match[str]) -> str:
    settings = match.group("config")
    tolerance = TOLERANCE.search(settings)
    if tolerance is None:
        raise ValueError(f"a weighted PPR call without a tolerance: {match.group(0)!r}")
    others = (settings[: tolerance.start()] + settings[tolerance.end():]).strip().rstrip(",")
    return (
        _fragment()
        .replace("SOURCES", match.group("sources").strip())
        .replace("TOLERANCE", tolerance.group("tolerance").strip())
        .replace("CONFIG", " ".join(others.split()))
    )


@functools.cache
def unweighted_form(name: str) -> str:
    """``cypher/<name>.cypher`` with every weighted PPR call given as walks from unweighted sources."""
    text = cypher(name)
    calls = text.count("gds.pageRank.stream(")
    rewritten, done = CALL.subn(_replace, text)
    if done != calls:
        raise ValueError(f"cypher/{name}.cypher: {calls - done} PageRank call(s) not in the form reset.py rewrites")
    return rewritten


def statement(name: str, weighted_sources: bool) -> str:
    """The text of ``cypher/<name>.cypher`` for a server that does (or does not) take weighted ``sourceNodes``:
    as written, but for a PPR statement where they are not taken."""
    text = cypher(name)
    return text if weighted_sources or "gds.pageRank.stream(" not in text else unweighted_form(name)
