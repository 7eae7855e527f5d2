"""GDS's PageRank with more threads (``HippoConfig.ppr_concurrency``) on one indexed namespace's projection: per
thread count, the median of GDS's own ``computeMillis`` and whether two runs give every node the same mass to the
last bit, and the largest difference from one thread's masses; beside GDS's compute, the wall ms of the same walk
as a statement that only counts (``stats``) and as one that streams every node's mass and keeps the top 10 (as the
library's statements read a walk): what handing the masses to Cypher costs. Each walk starts from ``--seeds``
phrases of the namespace (weight 1 each), to tolerance, as the library's walks run (docs/scale.md, "What bounds a
graph query").

    python bench/walk_threads.py --namespace bench-scale-50000 --kind mentions
    python bench/walk_threads.py --namespace bench-scale-50000 --kind phrase
"""

from __future__ import annotations

import functools
import json
import statistics

import numpy as np
from common import Steps, parser

from hippo_neo4j import HippoRAG

SEEDS = "MATCH (p:Phrase {ns: $ns}) WITH p ORDER BY p.text SKIP $skip LIMIT $n RETURN collect(id(p)) AS ids"
def walk(mode: str, tail: str) -> str:
    """The walk from ``$ids`` (weight 1 each) as ``gds.pageRank.<mode>``, then ``tail``."""
    return f"""MATCH (p:Phrase) WHERE id(p) IN $ids WITH collect([p, 1.0]) AS sources
CALL gds.pageRank.{mode}($graph, {{sourceNodes: sources, dampingFactor: $damping, relationshipWeightProperty: 'weight',
  maxIterations: $maxIterations, tolerance: $tolerance, concurrency: $threads}})
{tail}"""


WALK = walk("stream", "YIELD nodeId, score RETURN nodeId, score ORDER BY nodeId")
STATS = walk("stats", "YIELD computeMillis, ranIterations RETURN computeMillis, ranIterations")
TOP = walk("stream", "YIELD nodeId, score WITH nodeId, score WHERE score > 0 "
                     "RETURN nodeId, score ORDER BY score DESC, nodeId LIMIT 10")


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--namespace", required=True)
    p.add_argument("--kind", default="mentions", help="the projection: phrase (hipporag1), passage, mentions")
    p.add_argument("--threads", default="1,2,4")
    p.add_argument("--walks", type=int, default=10, help="walks per thread count, each from other seeds")
    p.add_argument("--seeds", type=int, default=3)
    args = p.parse_args()
    with HippoRAG(namespace=args.namespace) as memory:
        cfg, run = memory.config, memory.driver.execute_query
        graph = memory.server.projections.ensure(memory.namespace, args.kind)
        base = {"graph": graph.name, "damping": cfg.damping, "maxIterations": cfg.ppr_max_iterations,
                "tolerance": cfg.ppr_tolerance, "database_": memory.database}
        seeds = [run(SEEDS, ns=memory.namespace, skip=997 * i, n=args.seeds, database_=memory.database).records[0]["ids"]
                 for i in range(args.walks)]

        def masses(ids: list[int], threads: int) -> np.ndarray:
            return np.array([r["score"] for r in run(WALK, ids=ids, threads=threads, **base).records])

        out: dict[str, dict[str, object]] = {}
        for threads in (int(t) for t in args.threads.split(",")):
            walls = Steps("stats_ms", "stream_top10_ms")
            stats = [walls("stats_ms", functools.partial(run, STATS, ids=ids, threads=threads, **base)).records[0]
                     for ids in seeds]
            for ids in seeds:
                walls("stream_top10_ms", functools.partial(run, TOP, ids=ids, threads=threads, **base))
            same, apart = True, 0.0
            for ids in seeds:
                one, first, second = masses(ids, 1), masses(ids, threads), masses(ids, threads)
                same = same and bool(np.array_equal(first, second))
                apart = max(apart, float(np.abs(first - one).max()))
            out[str(threads)] = {"compute_ms_p50": statistics.median(s["computeMillis"] for s in stats),
                                 "iterations_p50": statistics.median(s["ranIterations"] for s in stats),
                                 **{f"{k}_p50": round(v, 1) for k, v in walls.medians().items() if v is not None},
                                 "repeatable": same, "largest_difference_from_one_thread": apart}
    print(json.dumps({"namespace": args.namespace, "kind": args.kind, "threads": out}, indent=2))


if __name__ == "__main__":
    main()
