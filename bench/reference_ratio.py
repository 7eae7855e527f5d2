"""Steady query p50 of every mode against the in-process reference on one indexed namespace (the latency step
of ``make bench``, ``common.measure_latency``), once per block size: the two paths take turns in blocks of that
many queries. With ``--profile``, then the step medians of a hipporag2 query (``common.profile_hipporag2``).

    python bench/reference_ratio.py --namespace eval-musique_train-bge-small-en-v1.5 --blocks 1,10,100,1,10,100
    python bench/reference_ratio.py --namespace eval-musique_train-bge-small-en-v1.5 --blocks 10 --profile

Prints one JSON line per block size: per mode, [p50 ms, in-process p50 ms, ratio]; then the profile's line.
"""

from __future__ import annotations

import json

from common import measure_latency, namespace_questions, profile_hipporag2

from hippo_neo4j import HippoRAG


def main() -> None:
    def options(parser):  # noqa: ANN001, ANN202
        parser.add_argument("--blocks", default="10")
        parser.add_argument("--profile", action="store_true", help="then hipporag2's step medians")

    args, extractor, queries = namespace_questions(__doc__, 100, options)
    with HippoRAG(namespace=args.namespace, extractor=extractor) as memory:
        for block in (int(b) for b in args.blocks.split(",")):
            latency = measure_latency(memory, queries, block=block)
            print(json.dumps({"block": block, "modes": {
                mode: [round(v["p50"], 1), round(v["inprocess_p50"], 1), round(v["p50"] / v["inprocess_p50"], 2)]
                for mode, v in latency.items()}}), flush=True)
        if args.profile:
            steps = profile_hipporag2(memory, queries)
            print(json.dumps({"hipporag2 step p50 ms": {k: round(v, 1) for k, v in steps.items() if v is not None}}))


if __name__ == "__main__":
    main()
