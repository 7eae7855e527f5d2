"""What the Bolt driver's packstream costs for vectors: sending 5,000 random 384-d vectors in one parameter
(the server only counts them) and reading one namespace's passage embeddings back. Run it with the driver's
Rust extension installed (a default dependency, ``neo4j-rust-ext``) and again after ``pip uninstall
neo4j-rust-ext``, which leaves the pure-Python packstream.

    python bench/bolt_vectors.py --namespace eval-musique_train-bge-small-en-v1.5

Prints the medians of 5 runs (ms) and which packstream ran, as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from hippo_neo4j import HippoRAG


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--vectors", type=int, default=5000)
    args = parser.parse_args()
    try:
        import neo4j._rust  # noqa: F401

        packstream = "rust"
    except ImportError:
        packstream = "python"
    rows = [{"id": str(i), "embedding": v.tolist()}
            for i, v in enumerate(np.random.default_rng(0).normal(size=(args.vectors, 384)).astype(np.float32))]
    with HippoRAG(namespace=args.namespace) as memory:
        run = lambda statement, **p: memory.driver.execute_query(statement, database_=memory.database, **p)  # noqa: E731
        timings: dict[str, list[float]] = {"send_ms": [], "read_ms": []}
        for _ in range(5):
            began = time.perf_counter()
            run("UNWIND $rows AS r RETURN count(*) AS n", rows=rows)
            timings["send_ms"].append((time.perf_counter() - began) * 1000)
            began = time.perf_counter()
            read = run("MATCH (p:Passage {ns: $ns}) RETURN p.embedding AS e", ns=args.namespace).records
            timings["read_ms"].append((time.perf_counter() - began) * 1000)
    print(json.dumps({"packstream": packstream, "vectors_sent": args.vectors, "vectors_read": len(read)}
                     | {k: round(statistics.median(v)) for k, v in timings.items()}))


if __name__ == "__main__":
    main()
