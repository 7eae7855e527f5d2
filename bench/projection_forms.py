"""Each graph kind of an indexed namespace in two forms, taking turns in one process: as the library projects it,
from Cypher rows (``Projections.ensure``, memory check included), and as a GDS native projection of the
namespace's labels defined here (GDS's estimate of it, then the projection; one relationship type per Neo4j type,
each with its weight property, undirected). GDS cannot load a boolean, so for the mention graph the benchmark
gives the namespace's mentions a numeric copy of `named` (``benchNamed``, removed afterwards) and projects every
mention weighted by it: the unnamed ones at weight 0, which a walk does not follow. Per kind: each build's median
ms over ``--builds`` turns, and PageRank's ``computeMillis`` on each form from the same weighted sources
(``--walks`` turns; a few phrases and half the passages, as entity-ppr's walk seeds; phrases only for the phrase
graph) with the median of the paired ratios native / rows (docs/scale.md, "Native projections, the memory check,
and the first query"). Prints JSON.
"""

from __future__ import annotations

import json
import random
import statistics

from common import parser, timed

from hippo_neo4j import HippoRAG

WALK = ("UNWIND $sources AS s MATCH (n) WHERE id(n) = s[0] WITH collect([n, s[1]]) AS seeds "
        "CALL gds.pageRank.stats($graph, {sourceNodes: seeds, dampingFactor: 0.5, tolerance: 1e-7, maxIterations: 100, "
        "relationshipWeightProperty: 'weight', concurrency: 1, logProgress: false}) "
        "YIELD computeMillis RETURN computeMillis")
DROP = "CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName"
MARK = ("MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->() "
        "CALL (m) { SET m.benchNamed = CASE WHEN coalesce(m.named, true) THEN 1.0 ELSE 0.0 END } IN TRANSACTIONS")
UNMARK = "MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->() CALL (m) { REMOVE m.benchNamed } IN TRANSACTIONS"


def typed(property_of: dict[str, tuple[str, float]]) -> dict[str, dict]:
    """A native relationship projection: each type undirected, its weight from ``property_of[type]`` (the property
    and the value where it is missing)."""
    return {t: {"orientation": "UNDIRECTED", "properties": {"weight": {"property": p, "defaultValue": d}}}
            for t, (p, d) in property_of.items()}


# per kind: the node kinds and the relationship projection of the native form (a mention's weight: 1.0 in the
# passage graph, a property no mention has; its numeric `named` in the mention graph)
NATIVE = {
    "phrase": (("phrase",), typed({"RELATION": ("weight", 1.0), "SYNONYM": ("score", 1.0)})),
    "passage": (("phrase", "passage"),
                typed({"RELATION": ("weight", 1.0), "SYNONYM": ("score", 1.0), "MENTIONED_IN": ("weight", 1.0)})),
    "mentions": (("phrase", "passage"), typed({"MENTIONED_IN": ("benchNamed", 1.0), "SYNONYM": ("score", 1.0)})),
}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--namespace", required=True)
    p.add_argument("--builds", type=int, default=3)
    p.add_argument("--walks", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    rng = random.Random(args.seed)
    out: dict[str, dict[str, float]] = {}
    with HippoRAG(namespace=args.namespace) as memory:
        ns, projections = memory.namespace, memory.server.projections
        run = lambda statement, **params: memory.driver.execute_query(  # noqa: E731
            statement, database_=memory.database, **params).records
        ids = lambda label: [r["n"] for r in run(f"MATCH (x:{label} {{ns: $ns}}) RETURN id(x) AS n", ns=ns)]  # noqa: E731
        phrases, passages = ids("Phrase"), ids("Passage")
        with memory.driver.session(database=memory.database) as session:  # CALL ... IN TRANSACTIONS: implicit
            session.run(MARK, ns=ns).consume()
        try:
            for kind, (node_kinds, relationships) in NATIVE.items():
                native_graph = f"bench-native:{ns}:{kind}"
                labels = [memory.store.labels[k] for k in node_kinds]

                def library() -> None:
                    projections.drop(ns, kind=kind)
                    projections.ensure(ns, kind)

                def native() -> None:
                    run(DROP, graph=native_graph)
                    run("CALL gds.graph.project.estimate($labels, $types) YIELD bytesMin RETURN bytesMin",
                        labels=labels, types=relationships)
                    run("CALL gds.graph.project($graph, $labels, $types, {logProgress: false}) YIELD nodeCount "
                        "RETURN nodeCount", graph=native_graph, labels=labels, types=relationships)

                builds: dict[str, list[float]] = {"native": [], "rows": []}
                for turn in range(args.builds):
                    for form, build in sorted({"native": native, "rows": library}.items(), reverse=bool(turn % 2)):
                        builds[form].append(timed(build))
                graphs = {"native": native_graph, "rows": projections.ensure(ns, kind).name}
                ratios, computed = [], {"native": [], "rows": []}
                for turn in range(args.walks):
                    seeds = rng.sample(phrases, 4) + (rng.sample(passages, len(passages) // 2) if kind != "phrase" else [])
                    sources = [[n, rng.random()] for n in seeds]
                    took = {form: run(WALK, graph=graphs[form], sources=sources)[0]["computeMillis"]
                            for form in sorted(graphs, reverse=bool(turn % 2))}
                    for form, value in took.items():
                        computed[form].append(value)
                    ratios.append(took["native"] / max(took["rows"], 1))
                run(DROP, graph=native_graph)
                out[kind] = {"native_build_ms": round(statistics.median(builds["native"])),
                             "rows_build_ms": round(statistics.median(builds["rows"])),
                             "native_walk_compute_ms": statistics.median(computed["native"]),
                             "rows_walk_compute_ms": statistics.median(computed["rows"]),
                             "walk_ratio_native_over_rows": round(statistics.median(ratios), 3)}
        finally:
            with memory.driver.session(database=memory.database) as session:
                session.run(UNMARK, ns=ns).consume()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
