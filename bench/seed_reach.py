"""How much of a namespace's mention graph lies within k steps of a query's phrase seeds: the nodes a walk over the
seeds' neighbourhood would hold (docs/scale.md, "What bounds a graph query"). On a kept scale namespace
(``bench/scale.py --keep``), with the scale run's own questions and their entities, linked as entity-ppr links
them; the steps follow what the mention projection holds (named MENTIONED_IN edges, SYNONYM edges). Prints, per
k, the median and the largest node count over the questions, and the share of the namespace's phrases and passages
that is. With ``--walk K``, per question also the entity walk (GDS's PageRank from the same phrase seeds, each
weighted by its specificity) over a projection of the K-step neighbourhood alone, built for the question as the
mention projection is built (``cypher/bench_project_neighbourhood.cypher``), against the same walk over the whole
mention projection: the build and the walk's ms, and how many of the whole walk's top-10 passages the
neighbourhood's walk puts in its own top 10 (and whether in the same order). With ``--mark K``, per question also
what marking the K-step neighbourhood on the shared mention projection costs, as a walk whose graph follows the seeds
without a projection of its own would need: GDS's PageRank from the same seeds stopped after K + 1 iterations, in
mutate mode (after i iterations exactly the nodes within i - 1 steps hold mass, which it checks against the steps
counted here), against the whole walk to tolerance in the same mode; the property is dropped again.

    python bench/seed_reach.py --size 50000 --queries 30
    python bench/seed_reach.py --size 50000 --queries 30 --walk 3
    python bench/seed_reach.py --size 50000 --queries 10 --mark 3
"""

from __future__ import annotations

import json
import statistics
from typing import Any

from common import Steps, parser
from scale import Corpus, TokenBagEncoder, make_queries

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import HippoConfig
from hippo_neo4j.db import cypher
from hippo_neo4j.retrieve.entity_ppr import specificity

NEXT = """UNWIND $frontier AS n MATCH (a) WHERE id(a) = n
CALL (a) {
  MATCH (a)-[m:MENTIONED_IN]-(b) WHERE coalesce(m.named, true) RETURN b
  UNION
  MATCH (a)-[:SYNONYM]-(b) RETURN b
}
RETURN collect(DISTINCT id(b)) AS reached"""
def walk(mode: str, more: str, tail: str) -> str:
    """The entity walk from ``$seeds`` ([node id, weight]) as ``gds.pageRank.<mode>`` with the settings ``more``
    besides the library's, then ``tail``."""
    return f"""UNWIND $seeds AS x MATCH (p:Phrase) WHERE id(p) = x[0] WITH collect([p, x[1]]) AS sources
CALL gds.pageRank.{mode}($graph, {{sourceNodes: sources, dampingFactor: $damping, relationshipWeightProperty: 'weight',
  maxIterations: $maxIterations, tolerance: $tolerance, concurrency: 1{more}}})
{tail}"""


WALK = walk("stream", "", """YIELD nodeId, score
WITH nodeId, score WHERE score > 0 AND nodeId IN $passages
RETURN nodeId ORDER BY score DESC, nodeId LIMIT 10""")
DROP = "CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName"
MARK = walk("mutate", ", mutateProperty: $property", "YIELD ranIterations RETURN ranIterations")
MARKED = """CALL gds.graph.nodeProperty.stream($graph, $property) YIELD propertyValue
WITH propertyValue WHERE propertyValue > 0 RETURN count(*) AS marked"""
UNMARK = """CALL gds.graph.nodeProperties.drop($graph, [$property], {failIfMissing: false}) YIELD propertiesRemoved
RETURN propertiesRemoved"""


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--size", type=int, required=True, help="the kept namespace bench-scale-<size>")
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--seed", type=int, default=0, help="the corpus seed of the scale run")
    p.add_argument("--walk", type=int, default=0, help="also walk the neighbourhood of this many steps")
    p.add_argument("--mark", type=int, default=0, help="also mark the neighbourhood of this many steps on the projection")
    args = p.parse_args()
    with HippoRAG(namespace=f"bench-scale-{args.size}", encoder=TokenBagEncoder(), config=HippoConfig()) as memory:
        run = memory.driver.execute_query
        stats = memory.stats()
        total = stats["passages"] + stats["phrases"]
        reach: dict[int, list[int]] = {k: [] for k in range(1, args.steps + 1)}
        walks = Steps("build_ms", "walk_ms", "whole_walk_ms", "top10_kept", "same_top10_order")
        marks = Steps("mark_ms", "whole_walk_mutate_ms")
        marked_as_counted = 0
        if args.walk or args.mark:
            whole = memory.server.projections.ensure(memory.namespace, "mentions").name
            passages = [r["n"] for r in run("MATCH (p:Passage {ns: $ns}) RETURN id(p) AS n", ns=memory.namespace,
                                             database_=memory.database).records]
            settings = {"damping": memory.config.damping, "maxIterations": memory.config.ppr_max_iterations,
                        "tolerance": memory.config.ppr_tolerance, "passages": passages, "database_": memory.database}
        for q in make_queries(Corpus(seed=args.seed).passages(args.size), args.queries):
            weights = specificity(memory.link_entities(list(q.entities or ())))
            found = run("UNWIND $texts AS t MATCH (ph:Phrase {ns: $ns, text: t}) RETURN t AS text, id(ph) AS n",
                        texts=list(weights), ns=memory.namespace, database_=memory.database).records
            sources = [[r["n"], weights[r["text"]]] for r in found]  # the entity walk's seeds, by specificity
            frontier = [r["n"] for r in found]
            seen = set(frontier)
            for k, sizes in reach.items():  # one more step each
                found = run(NEXT, frontier=frontier, database_=memory.database).records[0]["reached"]
                frontier = [n for n in found if n not in seen]
                seen.update(frontier)
                sizes.append(len(seen))
                if k == args.walk and sources:
                    walk_neighbourhood(memory, seen, sources, whole, settings, walks)
                if k == args.mark and sources:
                    marked_as_counted += mark_neighbourhood(memory, sources, whole, settings, k, marks) == len(seen)
    if args.mark:
        print(json.dumps({f"mark within {args.mark} steps": {k: round(v, 1) for k, v in marks.medians().items() if v is not None},
                          "questions marked": len(marks.samples["mark_ms"]),
                          "marked as many nodes as counted": marked_as_counted}, indent=2))
    if args.walk:
        print(json.dumps({f"walk within {args.walk} steps": {k: v for k, v in walks.medians().items() if v is not None},
                          "questions walked": len(walks.samples["walk_ms"])}, indent=2))
    print(json.dumps({"namespace": f"bench-scale-{args.size}", "nodes": total, "questions": len(reach[1]),
                      "within_steps": {k: {"median": statistics.median(v), "largest": max(v),
                                           "median_share": round(statistics.median(v) / total, 4)}
                                       for k, v in reach.items() if v}}, indent=2))


def walk_neighbourhood(memory: HippoRAG, nodes: set[int], sources: list[list[float]], whole: str,
                       settings: dict[str, Any], walks: Steps) -> None:
    """The entity walk from ``sources`` ([node id, weight]) over a projection of ``nodes`` alone against the same walk
    over ``whole``, into ``walks``."""
    run = memory.driver.execute_query
    name = f"bench-neighbourhood-{memory.namespace}"
    run(DROP, graph=name, database_=memory.database)
    walks("build_ms", lambda: run(cypher("bench_project_neighbourhood"), graph=name, nodes=sorted(nodes),
                                  database_=memory.database))
    try:
        local = walks("walk_ms", lambda: [r["nodeId"] for r in run(WALK, graph=name, seeds=sources, **settings).records])
        full = walks("whole_walk_ms", lambda: [r["nodeId"] for r in run(WALK, graph=whole, seeds=sources, **settings).records])
    finally:
        run(DROP, graph=name, database_=memory.database)
    walks.samples["top10_kept"].append(len(set(local) & set(full)))
    walks.samples["same_top10_order"].append(float(local == full))


def mark_neighbourhood(memory: HippoRAG, sources: list[list[float]], whole: str, settings: dict[str, Any], steps: int,
                       marks: Steps) -> int:
    """Marks the nodes within ``steps`` steps of ``sources`` on ``whole`` (a walk stopped after ``steps`` + 1
    iterations, in mutate mode), and runs the whole walk in the same mode, into ``marks``; returns how many nodes the
    mark holds."""
    run, db = memory.driver.execute_query, memory.database
    walk = {k: settings[k] for k in ("damping", "maxIterations", "tolerance")}
    prop = "bench_mark"
    run(UNMARK, graph=whole, property=prop, database_=db)
    try:
        marks("mark_ms", lambda: run(MARK, graph=whole, seeds=sources, property=prop, database_=db,
                                     **(walk | {"maxIterations": steps + 1, "tolerance": 0.0})))
        marked = run(MARKED, graph=whole, property=prop, database_=db).records[0]["marked"]
        run(UNMARK, graph=whole, property=prop, database_=db)
        marks("whole_walk_mutate_ms", lambda: run(MARK, graph=whole, seeds=sources, property=prop, database_=db, **walk))
    finally:
        run(UNMARK, graph=whole, property=prop, database_=db)
    return marked


if __name__ == "__main__":
    main()
