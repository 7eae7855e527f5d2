"""How much of a namespace's mention graph lies within k steps of a query's phrase seeds: the nodes a walk over the
seeds' neighbourhood would hold (docs/scale.md, "What bounds a graph query"). On a kept scale namespace
(``bench/scale.py --keep``), with the scale run's own questions and their entities, linked as entity-ppr links
them; the steps follow what the mention projection holds (named MENTIONED_IN edges, SYNONYM edges). Prints, per
k, the median and the largest node count over the questions, and the share of the namespace's phrases and passages
that is. With ``--walk K``, per question also the entity walk (GDS's PageRank from the same phrase seeds, each
weighted by its specificity) over a projection of the K-step neighbourhood alone, built for the question as the
mention projection is built (``cypher/bench_project_neighbourhood.cypher``), against the same walk over the whole
mention projection: the build and the walk's ms, and how many of the whole walk's top-10 passages the
neighbourhood's walk puts in its own top 10 (and whether in the same order).

    python bench/seed_reach.py --size 50000 --queries 30
    python bench/seed_reach.py --size 50000 --queries 30 --walk 3
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
WALK = """UNWIND $seeds AS x MATCH (p:Phrase) WHERE id(p) = x[0] WITH collect([p, x[1]]) AS sources
CALL gds.pageRank.stream($graph, {sourceNodes: sources, dampingFactor: $damping, relationshipWeightProperty: 'weight',
  maxIterations: $maxIterations, tolerance: $tolerance, concurrency: 1})
YIELD nodeId, score
WITH nodeId, score WHERE score > 0 AND nodeId IN $passages
RETURN nodeId ORDER BY score DESC, nodeId LIMIT 10"""
DROP = "CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName"


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--size", type=int, required=True, help="the kept namespace bench-scale-<size>")
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--seed", type=int, default=0, help="the corpus seed of the scale run")
    p.add_argument("--walk", type=int, default=0, help="also walk the neighbourhood of this many steps")
    args = p.parse_args()
    with HippoRAG(namespace=f"bench-scale-{args.size}", encoder=TokenBagEncoder(), config=HippoConfig()) as memory:
        run = memory.driver.execute_query
        stats = memory.stats()
        total = stats["passages"] + stats["phrases"]
        reach: dict[int, list[int]] = {k: [] for k in range(1, args.steps + 1)}
        walks = Steps("build_ms", "walk_ms", "whole_walk_ms", "top10_kept", "same_top10_order")
        if args.walk:
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


if __name__ == "__main__":
    main()
