"""entity-ppr and hipporag2 with the passage cosines computed by the client (from the vectors it holds) and
by the server (a scan of every passage's embedding, as when a namespace exceeds HIPPO_PASSAGE_VECTORS_MB),
on one indexed namespace: how many rankings are equal, the largest score difference, and p50 latency.

    python bench/passage_seeds.py --namespace eval-musique_train-offline-bge-small-en-v1.5 --queries 100

The two clients alternate per question, so a loaded machine slows each alike. Prints JSON.
"""

from __future__ import annotations

import json
import statistics
import time

from hippo_neo4j import HippoRAG
from hippo_neo4j.graph.passage_vectors import PassageVectors

from suite import namespace_questions

MODES = ("entity-ppr", "hipporag2")


def main() -> None:
    args, extractor, questions = namespace_questions(__doc__, 100)
    out: dict[str, dict] = {}
    with HippoRAG(namespace=args.namespace, extractor=extractor) as client:
        server = HippoRAG(namespace=args.namespace, extractor=extractor, driver=client.driver)
        server.retrieval._passage_vectors = PassageVectors(server.store, limit_mb=0)  # the server scores
        for mode in MODES:
            times: dict[str, list[float]] = {"client": [], "server": []}
            equal, largest = 0, 0.0
            for text, entities in ((q.text, q.entities) for q in questions[:3]):  # warm-up: the client reads the vectors once
                for memory in (client, server):
                    memory.query(text, mode=mode, entities=entities, filter=False)
            for text, entities in ((q.text, q.entities) for q in questions):
                ranked = {}
                for name, memory in (("client", client), ("server", server)):
                    began = time.perf_counter()
                    ranked[name] = memory.query(text, mode=mode, entities=entities, top_k=10, filter=False).passages
                    times[name].append((time.perf_counter() - began) * 1000)
                a, b = ranked["client"], ranked["server"]
                equal += [p.id for p in a] == [p.id for p in b]
                largest = max([largest] + [abs(x.score - y.score) for x, y in zip(a, b)])
            out[mode] = {"rankings equal": f"{equal}/{len(questions)}", "largest score difference": largest,
                         "p50 ms, client cosines": round(statistics.median(times["client"]), 1),
                         "p50 ms, server cosines": round(statistics.median(times["server"]), 1)}
        assert server.retrieval.passage_vectors().server_side
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
