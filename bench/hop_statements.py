"""entity-ppr's second hop statement (``cypher/entity_ppr_hop.cypher``) against another text of it (``--before FILE``,
e.g. an earlier commit's: ``git show HEAD~1:cypher/entity_ppr_hop.cypher > /tmp/hop_before.cypher``), from the same
random source sets (``--sets`` of ``--sources`` passages each, weights drawn at random and scaled to sum 1, seeded),
the two taking turns: on each namespace, how many sets give the same window in the same order, the largest
relative difference of a passage's mass, and each statement's median ms. Prints JSON, a line per namespace.

    python bench/hop_statements.py --before /tmp/hop_before.cypher --namespace bench-scale-50000 --sources 1000
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time

from common import parser

from hippo_neo4j import HippoRAG
from hippo_neo4j.db import cypher
from hippo_neo4j.retrieve.entity_ppr import WINDOW


def main() -> int:
    p = parser(__doc__)
    p.add_argument("--before", required=True, help="the other text of the hop's statement")
    p.add_argument("--namespace", action="append", required=True)
    p.add_argument("--sources", type=int, default=20)
    p.add_argument("--sets", type=int, default=6)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    with open(args.before, encoding="utf-8") as f:
        texts = {"before": f.read(), "now": cypher("entity_ppr_hop")}
    draw = random.Random(args.seed)
    for ns in args.namespace:
        with HippoRAG(namespace=ns) as memory:
            run = lambda text, **params: memory.driver.execute_query(
                text, database_=memory.database, **params).records
            nodes = [r[0] for r in run("MATCH (p:Passage {ns: $ns}) RETURN id(p)", ns=ns)]
            took: dict[str, list[float]] = {name: [] for name in texts}
            same, worst = 0, 0.0
            for turn in range(args.sets):
                weights = [(float(n), draw.random()) for n in draw.sample(nodes, min(args.sources, len(nodes)))]
                total = sum(w for _, w in weights)
                sources = [[n, w / total] for n, w in weights]
                windows = {}
                for name in (list(texts) if turn % 2 == 0 else list(reversed(texts))):
                    began = time.perf_counter()
                    windows[name] = run(texts[name], sources=sources, damping=memory.config.damping, only=None,
                                        window=WINDOW)[0]["window"]
                    took[name].append((time.perf_counter() - began) * 1000)
                before, now = ({n: m for n, m in windows[k]} for k in texts)
                same += [n for n, _ in windows["before"]] == [n for n, _ in windows["now"]]
                worst = max([worst] + [abs(before[n] - now.get(n, 0.0)) / before[n] for n in before])
            print(json.dumps({"namespace": ns, "sets": args.sets, "sources": args.sources, "same_window": same,
                              "largest_relative_difference": worst,
                              "p50_ms": {k: round(statistics.median(v), 1) for k, v in took.items()}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
