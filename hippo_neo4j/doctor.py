"""``hippo doctor``: what the configured server is and can do, and the fix for every problem found.

One report (a dict; the CLI prints it as one screen or as JSON): Neo4j's version and edition, GDS and its
capabilities (``graph/capabilities.py``), whether ``gds.*`` procedures may run, heap and page cache, the free heap
against the largest namespace's projection estimate, the vector indexes (dimension, state), each namespace with
its size and encoder, how the graph modes run on this server, and ``problems``: each with its fix.
"""

from __future__ import annotations

from typing import Any

from neo4j import Driver
from neo4j.exceptions import ClientError

from .db import cypher
from .graph.server import Server

# The lines the test suite runs against (README, "Using an existing Neo4j"): Neo4j line -> the GDS it was tested with.
TESTED = {"2026.01": "2.26", "5.26": "2.13"}
SETTINGS = ("server.memory.heap.max_size", "server.memory.pagecache.size",
            "dbms.security.procedures.unrestricted", "dbms.security.procedures.allowlist")
GRAPH_MODES = ("entity-ppr", "hipporag1", "hipporag2", "hybrid")


def _records(driver: Driver, database: str, statement: str, **params: Any) -> list[Any] | None:
    try:
        return driver.execute_query(statement, database_=database, **params).records
    except ClientError:
        return None


def _line(version: str) -> str | None:
    return next((line for line in TESTED if version.startswith(line + ".") or version == line), None)


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:,.0f} MiB"


def diagnose(driver: Driver, database: str = "neo4j") -> dict[str, Any]:
    """The doctor's report for ``driver``'s server and ``database``."""
    server = Server.of(driver, database)
    caps = server.probe_again()  # what the server can do now, not what it could when this driver first asked
    problems: list[dict[str, str]] = []

    def problem(what: str, fix: str, severity: str = "error") -> None:
        problems.append({"severity": severity, "problem": what, "fix": fix})

    rows = _records(driver, database, "SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value",
                    names=list(SETTINGS))
    settings = {r["name"]: r["value"] for r in rows} if rows is not None else {}
    line = _line(caps.neo4j_version)
    if caps.gds_version is None:
        problem("Graph Data Science is not installed (gds.version() is unknown): no graph mode can run, only dense "
                "and bm25.", "Install the GDS plugin built for this Neo4j (2.13.x for 5.26, 2.26 for 2026.01) into its "
                "plugins/ folder and restart; or use the local server: hippo neo4j start.")
    elif not caps.gds_allowed:
        problem(f"GDS procedures may not run here: {caps.problems.get('weighted_sources', 'refused')}",
                "Allow them in neo4j.conf: dbms.security.procedures.unrestricted=gds.* (and add gds.* to "
                "dbms.security.procedures.allowlist if that is set), then restart Neo4j.")
    elif line is None or not (caps.gds_version or "").startswith(TESTED[line] + "."):
        problem(f"Neo4j {caps.neo4j_version} with GDS {caps.gds_version} is not a tested combination (tested: "
                + ", ".join(f"Neo4j {k}.x + GDS {v}.x" for k, v in TESTED.items()) + ").",
                "Run a tested line (README, 'Using an existing Neo4j'), or check it with make test-compat.", "warning")
    if caps.gds_allowed and not caps.weighted_sources:
        problem("This GDS takes no weighted sourceNodes: each graph mode sums walks from unweighted sources (the "
                "same rankings and scores, several walks a query).",
                "For one walk a query, run GDS 2.17+ (Neo4j 2025.x or 2026.x).", "notice")
    if caps.gds_allowed and not caps.sys_info:
        problem(f"gds.debug.sysInfo does not answer ({caps.problems.get('sys_info', '')}): projections are not "
                "checked against the free heap.", "Install the GDS build that matches this Neo4j and Java (its "
                "proc-sysinfo module), or watch the heap yourself.", "warning")
    if not caps.vector_procedures and not caps.search_clause:
        problem("No vector index search (db.index.vector.queryNodes or SEARCH): linking and dense retrieval fail.",
                "Use Neo4j 5.26 or later.")
    heap = server.projections.server_heap() if caps.gds_allowed else {"available_heap": None, "max_heap": None}

    namespaces = []
    for rec in _records(driver, database, "MATCH (n:HippoNamespace) RETURN n.name AS name, n.encoder AS encoder, "
                        "n.encoderDimension AS dimension ORDER BY name") or []:
        sizes = dict(driver.execute_query(cypher("stats"), ns=rec["name"], database_=database).records[0])
        namespaces.append({"name": rec["name"], "encoder": rec["encoder"], "dimension": rec["dimension"], **sizes})
    largest = max(namespaces, key=lambda n: n["passages"] + n["phrases"], default=None)
    estimate = None
    if largest is not None and caps.gds_allowed:
        estimate = server.projections.estimate(largest["name"], "passage") | {"namespace": largest["name"]}
        free = heap["available_heap"]
        if free is not None and estimate["bytes_min"] > free:
            problem(f"Projecting the largest namespace {largest['name']!r} needs at least {_mib(estimate['bytes_min'])} "
                    f"by GDS's estimate; the server has {_mib(free)} of heap free.",
                    "Raise server.memory.heap.max_size (HIPPO_NEO4J_HEAP for the local server), drop projections "
                    "no longer needed (CALL gds.graph.list()), or split the corpus into smaller namespaces.")

    indexes = []
    for rec in _records(driver, database, "SHOW VECTOR INDEXES YIELD name, state, populationPercent, options "
                        "RETURN name, state, populationPercent, options.indexConfig['vector.dimensions'] AS dimension "
                        "ORDER BY name") or []:
        indexes.append({"name": rec["name"], "state": rec["state"], "population": rec["populationPercent"],
                        "dimension": rec["dimension"]})
        if rec["state"] != "ONLINE":
            problem(f"Vector index {rec['name']} is {rec['state']} ({rec['populationPercent']:.0f} % populated).",
                    "Wait for it to come online (SHOW VECTOR INDEXES); a FAILED one: DROP INDEX it and run "
                    "hippo index again, which recreates it.", "warning" if rec["state"] == "POPULATING" else "error")
    hippo_dims = {i["dimension"] for i in indexes if i["name"].startswith("hippo_") and i["dimension"]}
    for ns in namespaces:
        if ns["dimension"] and hippo_dims and ns["dimension"] not in hippo_dims:
            problem(f"Namespace {ns['name']!r} holds {ns['dimension']}-d vectors, and no hippo vector index has that "
                    "dimension.", f"hippo reembed --namespace {ns['name']} --encoder <an encoder of "
                    f"{'/'.join(str(d) for d in sorted(hippo_dims))} dimensions>.")
    if settings and "gds" not in settings.get("dbms.security.procedures.unrestricted", "") and caps.gds_allowed:
        problem("dbms.security.procedures.unrestricted does not name gds.*, yet GDS runs (it is allowed another way).",
                "Nothing to do while it runs; a DBA who tightens the setting must keep gds.* in it.", "notice")

    how = ("unavailable (no GDS that may run)" if not caps.gds_allowed else
           "one walk a query (weighted sourceNodes)" if caps.weighted_sources else
           "each walk as a sum of walks from unweighted sources (graph/reset.py)")
    modes = {"graph": list(GRAPH_MODES), "how": how}
    return {
        "server": {"neo4j": caps.neo4j_version, "edition": caps.edition, "cypher": caps.cypher_versions,
                   "tested_line": line},
        "gds": {"version": caps.gds_version, "allowed": caps.gds_allowed, "weighted_sources": caps.weighted_sources,
                "sys_info": caps.sys_info},
        "vector": {"procedures": caps.vector_procedures, "search_clause": caps.search_clause,
                   "values": caps.vector_values},
        "settings": settings or None,
        "memory": {**heap, "heap_setting": settings.get("server.memory.heap.max_size"),
                   "pagecache_setting": settings.get("server.memory.pagecache.size"),
                   "largest_projection": estimate},
        "vector_indexes": indexes,
        "namespaces": namespaces,
        "modes": modes,
        "problems": problems,
    }


def render(report: dict[str, Any], uri: str) -> str:
    """The report as one screen of text."""
    s, g, v, m = report["server"], report["gds"], report["vector"], report["memory"]
    yes = lambda b: "yes" if b else "no"  # noqa: E731
    lines = [
        f"server      {uri}: Neo4j {s['neo4j']} {s['edition']} (Cypher {', '.join(s['cypher'])}; "
        f"tested line: {s['tested_line'] or 'none'})",
        f"gds         {g['version'] or 'not installed'}: allowed {yes(g['allowed'])}, weighted sourceNodes "
        f"{yes(g['weighted_sources'])}, sysInfo {yes(g['sys_info'])}",
        f"vector      db.index.vector procedures {yes(v['procedures'])}, SEARCH clause {yes(v['search_clause'])}, "
        f"VECTOR values {yes(v['values'])}",
        f"heap        {_mib(m['available_heap'])} free of {_mib(m['max_heap'])} (setting {m['heap_setting'] or '-'}); "
        f"page cache {m['pagecache_setting'] or '-'}",
    ]
    if m["largest_projection"]:
        p = m["largest_projection"]
        lines.append(f"projection  largest namespace {p['namespace']!r}: {p['nodes']:,} nodes, {p['relationships']:,} "
                     f"relationships, {_mib(p['bytes_min'])} to {_mib(p['bytes_max'])} by GDS's estimate")
    lines.append(f"modes       {', '.join(report['modes']['graph'])}: {report['modes']['how']}; dense, bm25: no GDS")
    lines.append(f"indexes     {len(report['vector_indexes'])} vector")
    lines += [f"  {i['name']}  {i['dimension']}-d  {i['state']}" for i in report["vector_indexes"]]
    lines.append(f"namespaces  {len(report['namespaces'])}")
    lines += [f"  {n['name']}  {n['passages']:,} passages, {n['phrases']:,} phrases, {n['facts']:,} facts; "
              f"{n['encoder'] or 'no encoder recorded'}" + (f" ({n['dimension']}-d)" if n["dimension"] else "")
              for n in report["namespaces"]]
    if report["problems"]:
        lines.append(f"problems    {len(report['problems'])}")
        for p in report["problems"]:
            lines += [f"  [{p['severity']}] {p['problem']}", f"      fix: {p['fix']}"]
    else:
        lines.append("problems    none")
    return "\n".join(lines)
