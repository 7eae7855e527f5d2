"""Steady query p50 of every mode against the in-process reference on one indexed namespace (the latency step
of ``make bench``, ``suite.measure_latency``), once per block size: the two paths take turns in blocks of that
many queries.

    python bench/reference_ratio.py --namespace eval-musique_train-bge-small-en-v1.5 --blocks 1,10,100,1,10,100

Prints one JSON line per block size: per mode, [p50 ms, in-process p50 ms, ratio].
"""

from __future__ import annotations

import json

from hippo_neo4j import HippoRAG
from suite import measure_latency, namespace_questions


def main() -> None:
    args, extractor, queries = namespace_questions(__doc__, 100, lambda p: p.add_argument("--blocks", default="10"))
    with HippoRAG(namespace=args.namespace, extractor=extractor) as memory:
        for block in (int(b) for b in args.blocks.split(",")):
            latency = measure_latency(memory, queries, block=block)
            print(json.dumps({"block": block, "modes": {
                mode: [round(v["p50"], 1), round(v["inprocess_p50"], 1), round(v["p50"] / v["inprocess_p50"], 2)]
                for mode, v in latency.items()}}), flush=True)


if __name__ == "__main__":
    main()
