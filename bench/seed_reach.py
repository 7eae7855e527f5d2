"""How much of a namespace's mention graph lies within k steps of a query's phrase seeds: the nodes a walk over the
seeds' neighbourhood would hold (docs/scale.md, "What bounds a graph query"). On a kept scale namespace
(``bench/scale.py --keep``), with the scale run's own questions and their entities, linked as entity-ppr links
them; the steps follow what the mention projection holds (named MENTIONED_IN edges, SYNONYM edges). Prints, per
k, the median and the largest node count over the questions, and the share of the namespace's phrases and passages
that is.

    python bench/seed_reach.py --size 50000 --queries 30
"""

from __future__ import annotations

import json
import statistics

from common import parser
from scale import Corpus, TokenBagEncoder, make_queries

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import HippoConfig

NEXT = """UNWIND $frontier AS n MATCH (a) WHERE id(a) = n
CALL (a) {
  MATCH (a)-[m:MENTIONED_IN]-(b) WHERE coalesce(m.named, true) RETURN b
  UNION
  MATCH (a)-[:SYNONYM]-(b) RETURN b
}
RETURN collect(DISTINCT id(b)) AS reached"""


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--size", type=int, required=True, help="the kept namespace bench-scale-<size>")
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--seed", type=int, default=0, help="the corpus seed of the scale run")
    args = p.parse_args()
    with HippoRAG(namespace=f"bench-scale-{args.size}", encoder=TokenBagEncoder(), config=HippoConfig()) as memory:
        run = memory.driver.execute_query
        stats = memory.stats()
        total = stats["passages"] + stats["phrases"]
        reach: dict[int, list[int]] = {k: [] for k in range(1, args.steps + 1)}
        for q in make_queries(Corpus(seed=args.seed).passages(args.size), args.queries):
            texts = [link.phrase for link in memory.link_entities(list(q.entities or ())) if link.weight > 0]
            frontier = run("UNWIND $texts AS t MATCH (ph:Phrase {ns: $ns, text: t}) RETURN collect(id(ph)) AS ids",
                           texts=texts, ns=memory.namespace, database_=memory.database).records[0]["ids"]
            seen = set(frontier)
            for sizes in reach.values():  # one more step each
                found = run(NEXT, frontier=frontier, database_=memory.database).records[0]["reached"]
                frontier = [n for n in found if n not in seen]
                seen.update(frontier)
                sizes.append(len(seen))
    print(json.dumps({"namespace": f"bench-scale-{args.size}", "nodes": total, "questions": len(reach[1]),
                      "within_steps": {k: {"median": statistics.median(v), "largest": max(v),
                                           "median_share": round(statistics.median(v) / total, 4)}
                                       for k, v in reach.items() if v}}, indent=2))


if __name__ == "__main__":
    main()
