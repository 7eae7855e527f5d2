"""The memory of the walks that seed passages (entity-ppr's walk, hipporag2's), as the server's PROFILE reports it
(``GlobalMemory``), with the namespace's first ``--sources`` passages as sources, on an indexed namespace: a
statement whose memory grows with its sources holds them with every row it sorts (docs/scale.md, "entity-ppr at
50,000 passages"). Prints MB per statement and source count as JSON.
"""

from __future__ import annotations

import json

from common import parser

from hippo_neo4j import HippoRAG
from hippo_neo4j.retrieve.entity_ppr import entity_ppr_parameters
from hippo_neo4j.retrieve.hipporag2 import ppr2_parameters


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--namespace", required=True)
    p.add_argument("--sources", default="1000,4000", help="passage source counts, e.g. 1000,4000")
    args = p.parse_args()
    counts = [int(n) for n in args.sources.split(",")]
    out: dict[str, dict[int, float]] = {}
    with HippoRAG(namespace=args.namespace) as memory:
        config, server = memory.config, memory.server
        nodes = [r["n"] for r in memory.driver.execute_query(
            "MATCH (p:Passage {ns: $ns}) RETURN id(p) AS n ORDER BY n LIMIT $most", ns=memory.namespace,
            most=max(counts), database_=memory.database).records]
        statements = {
            "entity_ppr_passages": ("mentions", entity_ppr_parameters(config)),
            "ppr2_passages": ("passage", ppr2_parameters(config, {}, 10) | {"massFloor": 0.0, "only": None}),
        }
        for name, (kind, params) in statements.items():
            graph = server.projections.ensure(memory.namespace, kind)
            for n in counts:
                given = params | {"graph": graph.name, "graphVersion": graph.version, "seeds": [],
                                  "passageSources": [[float(node), 1.0 / n] for node in nodes[:n]]}
                with memory.driver.session(database=memory.database) as session:
                    summary = session.run("PROFILE " + server.statement(name), **memory.store.scope, **given).consume()
                out.setdefault(name, {})[n] = round(summary.profile["args"]["GlobalMemory"] / 2**20, 1)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
