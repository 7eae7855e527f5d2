"""The client's bulk reads of embeddings, as lists of floats against packed VECTOR values (``db.packed_embeddings``,
where the server sends them): ``cypher/passage_vectors.cypher`` (every passage vector, as the passage-vector cache
reads them on a client's second graph query) and ``cypher/phrase_vectors.cypher`` (every phrase vector, as a bulk
run's synonym linking holds them), each read and turned into one float32 matrix, the two forms taking turns; and the
passage cosines of a client's second graph query, which reads the cache (``PassageVectors.cosines``, a new cache each
time, its first call answered by the server as a client's first query is); medians (ms), and whether both forms give
the same matrix and cosines to the bit (docs/scale.md).

    python bench/vector_reads.py --namespace bench-scale-50000 --rounds 3
"""

from __future__ import annotations

import dataclasses
import functools
import json

import numpy as np
from common import Steps, parser

from hippo_neo4j import HippoRAG
from hippo_neo4j.graph.passage_vectors import PassageVectors, vector_rows

READS = ("passage_vectors", "phrase_vectors")


def read(memory: HippoRAG, name: str) -> np.ndarray:
    return vector_rows(memory.store.run(name, vectors=True)[0]["embeddings"])


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--namespace", required=True)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    with HippoRAG(namespace=args.namespace) as memory:
        server = memory.store.server
        probed = server.capabilities
        if not probed.vector_values:
            raise SystemExit(f"the server at {memory.connection.uri} sends no VECTOR values (Neo4j {probed.neo4j_version})")
        steps, last = Steps(), {}
        graph = server.projections.ensure(memory.namespace, "mentions")
        for _ in range(args.rounds):
            for packed in (False, True):
                server._capabilities = dataclasses.replace(probed, vector_values=packed)
                form = "packed" if packed else "lists"
                for name in READS:
                    last[(name, form)] = steps(f"{name} {form} ms", functools.partial(read, memory, name))
                dimension = last[("passage_vectors", form)].shape[1]
                query = np.random.default_rng(0).standard_normal(dimension).astype(np.float32)  # the same each round
                cache = PassageVectors(memory.store)
                cache.cosines(query, graph)  # a client's first query: the server's cosines
                last[("cosines", form)] = steps(f"second query's cosines {form} ms",
                                                lambda: cache.cosines(query, graph).cosine)  # noqa: B023 - called now
        server._capabilities = probed
    print(json.dumps({"namespace": args.namespace, "rounds": args.rounds,
                      **{k: round(v, 1) for k, v in steps.medians().items() if v is not None},
                      **{f"{name} rows": len(last[(name, "packed")]) for name in READS},
                      "same matrices and cosines": all(np.array_equal(last[(n, "lists")], last[(n, "packed")])
                                                       for n in [*READS, "cosines"])},
                     indent=2))


if __name__ == "__main__":
    main()
