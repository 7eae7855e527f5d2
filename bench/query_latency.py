"""Query latency per mode on one indexed namespace: p50 ms of ``HippoRAG.query`` over musique_train questions,
with the query entities extracted beforehand (as ``make bench`` does), after 3 warm-up queries per mode.

    python bench/query_latency.py --namespace eval-musique_train --queries 60

To compare two versions of the library in one run, alternate it between checkouts (``PYTHONPATH=<checkout>``),
each run printing one JSON line; only the installed package differs between the runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from hippo_neo4j import HippoRAG
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.extract.offline import OfflineExtractor


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--dataset", default=str(Path(__file__).resolve().parents[2] / "shared/datasets/musique_train"))
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--modes", default="hipporag1,hipporag2,dense")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    extractor = OfflineExtractor()
    questions = load_dataset(args.dataset).questions[: args.queries]
    queries = [(q.question, extractor.query_entities(q.question)) for q in questions]
    out: dict[str, float] = {}
    with HippoRAG(namespace=args.namespace, extractor=extractor) as memory:
        for mode in args.modes.split(","):
            for text, entities in queries[:3]:
                memory.query(text, mode=mode, entities=entities, top_k=10, filter=False)
            samples = []
            for text, entities in queries:
                began = time.perf_counter()
                memory.query(text, mode=mode, entities=entities, top_k=10, filter=False)
                samples.append((time.perf_counter() - began) * 1000)
            out[mode] = round(statistics.median(samples), 1)
    print(json.dumps({"label": args.label, "p50_ms": out}), flush=True)


if __name__ == "__main__":
    main()
