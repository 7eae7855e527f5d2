"""The statement forms of the PPR walks and projections for the server at hand: a GDS that takes weighted
``sourceNodes`` runs the statements of ``cypher/`` as they are; on one that takes node ids only (GDS 2.13, for
Neo4j 5.26) each weighted ``gds.pageRank.stream`` call is replaced by ``cypher/weighted_reset.cypher``, the same
reset as a sum of walks from unweighted sources (GDS's PageRank is linear in its reset): a walk per distinct
phrase weight, and one from the passages' feeders, nodes that the projections holding passages get for that
(``cypher/passage_feeders.cypher``). The same rankings and scores."""

from __future__ import annotations

import functools
import re

from ..db import cypher

# A weighted PPR call as the statements of cypher/ write it: sourceNodes first (an expression, which may hold commas),
# then dampingFactor, tolerance among the settings.
CALL = re.compile(
    r"CALL gds\.pageRank\.stream\(\$graph, \{\s*sourceNodes: (?P<sources>.+?),\s*(?P<config>dampingFactor:.*?)\s*\}\)"
    r"\s*YIELD nodeId, score",
    re.S,
)
TOLERANCE = re.compile(r"tolerance: (?P<tolerance>[^,}]+?)\s*(?:,\s*|$)", re.S)


FEEDERS = 36  # feeder nodes per passage (cypher/passage_feeders.cypher)

# A projection statement of a graph that holds passages, as cypher/project_*_graph.cypher write it: its rows
# from one subquery, every relationship undirected, its properties (weight, and any other) each a column of the
# rows. In its fed form its own relationships are LINK (undirected) and the feeders' FEEDS (directed), each of a
# feeder's properties its weight; one LINK between two virtual nodes that nothing seeds or reaches keeps the
# type in a graph that has no relationship of its own (GDS refuses an undirected type it did not project).
PROJECTION = re.compile(
    r"^CALL \(\) \{\n(?P<rows>.*?)\n\}\nWITH gds\.graph\.project\(\n  \$graph, s, t,\n"
    r"  \{relationshipProperties: CASE WHEN t IS NULL THEN null ELSE "
    r"\{(?P<properties>weight: \w+(?:, \w+: \w+)*)\} END\},\n"
    r"  \{undirectedRelationshipTypes: \['\*'\](?P<settings>[^}\n]*)\}\n\) AS g",
    re.S | re.M,
)
FED = """CALL () {
  CALL () {
ROWS
  }
  RETURN s, t, COLUMNS, 'LINK' AS type
  UNION ALL
FEEDERS
  UNION ALL
  RETURN 4503599627370496 AS s, 4503599627370497 AS t, ONES, 'LINK' AS type
}
WITH gds.graph.project(
  $graph, s, t,
  {relationshipType: type, relationshipProperties: CASE WHEN t IS NULL THEN null ELSE {PROPERTIES} END},
  {undirectedRelationshipTypes: ['LINK']SETTINGS}
) AS g"""


@functools.cache
def fed_projection(name: str) -> str:
    """``cypher/<name>.cypher`` (a projection with passages) with the passages' feeders
    (``cypher/passage_feeders.cypher``) beside its own rows, which stay undirected."""
    text = cypher(name)
    feeders = "\n".join("  " + line for line in cypher("passage_feeders").splitlines() if not line.startswith("//"))

    def fed_form(m: re.Match[str]) -> str:
        properties = [p.split(": ") for p in m.group("properties").split(", ")]  # [name, column]
        names = [n for n, _ in properties]
        own = ", ".join(f"{column} AS {n}" for n, column in properties)
        fed_feeders = feeders.replace("edge[1] AS weight,", ", ".join(f"edge[1] AS {n}" for n in names) + ",")
        return (FED.replace("ROWS", m.group("rows")).replace("COLUMNS", own).replace("FEEDERS", fed_feeders)
                .replace("ONES", ", ".join(f"1.0 AS {n}" for n in names))
                .replace("PROPERTIES", ", ".join(f"{n}: {n}" for n in names)).replace("SETTINGS", m.group("settings")))

    fed, done = PROJECTION.subn(fed_form, text)
    if done != 1:
        raise ValueError(f"cypher/{name}.cypher is not in the form reset.py gives feeders")
    return fed


def projection(name: str, kind: str, weighted_sources: bool) -> str:
    """The projection statement ``name`` of ``kind`` for a server that does (or does not) take weighted
    ``sourceNodes``: the graphs that hold passages get their feeders where they are not taken."""
    return cypher(name) if weighted_sources or kind == "phrase" else fed_projection(name)


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
