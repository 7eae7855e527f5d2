"""A graph kind's projection statement as the library has it against another text of it (``--before FILE``, e.g.
an earlier commit's: ``git show HEAD~1:cypher/project_mention_graph.cypher > /tmp/before.cypher``), built in turns
on one indexed namespace, each build dropped afterwards: the median ms of each over ``--builds`` turns, and the
nodes, relationships and GDS memory (``gds.graph.list``'s memoryUsage) each holds. Prints JSON.

    python bench/projection_statements.py --namespace bench-scale-50000 --kind mentions --before /tmp/before.cypher
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from common import parser

from hippo_neo4j import HippoRAG
from hippo_neo4j.db import cypher
from hippo_neo4j.graph.projection import KINDS

DROP = "CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName"
MEMORY = "CALL gds.graph.list($graph) YIELD memoryUsage RETURN memoryUsage"


def main() -> int:
    p = parser(__doc__)
    p.add_argument("--namespace", required=True)
    p.add_argument("--kind", choices=sorted(KINDS), default="mentions")
    p.add_argument("--before", required=True, help="the other text of the kind's statement")
    p.add_argument("--builds", type=int, default=5)
    args = p.parse_args()
    with open(args.before, encoding="utf-8") as f:
        texts = {"before": f.read(), "now": cypher(KINDS[args.kind][1])}
    took: dict[str, list[float]] = {name: [] for name in texts}
    held: dict[str, dict[str, object]] = {}
    with HippoRAG(namespace=args.namespace) as memory:
        for turn in range(args.builds):
            for name in (list(texts) if turn % 2 == 0 else list(reversed(texts))):
                graph = f"bench-statement-{name}"
                memory.driver.execute_query(DROP, graph=graph, database_=memory.database)
                began = time.perf_counter()
                record = memory.driver.execute_query(texts[name], graph=graph, ns=args.namespace,
                                                     database_=memory.database).records[0]
                took[name].append((time.perf_counter() - began) * 1000)
                used = memory.driver.execute_query(MEMORY, graph=graph, database_=memory.database).records[0][0]
                memory.driver.execute_query(DROP, graph=graph, database_=memory.database)
                held[name] = {"nodes": record["nodes"], "relationships": record["relationships"], "memory": used}
    print(json.dumps({"namespace": args.namespace, "kind": args.kind, "builds": args.builds,
                      "build ms (median)": {name: round(statistics.median(v), 1) for name, v in took.items()},
                      "held": held}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
