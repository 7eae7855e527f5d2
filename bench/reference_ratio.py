"""Steady query p50 of every mode against the in-process reference on one indexed namespace (``make bench``'s
latency step), per block size: the two paths take turns in blocks of that many queries. ``--profile``: then
hipporag2's, hipporag1's and entity-ppr's step medians (each beside GDS PageRank alone on the same seeds).
``--async-calls N``: then, per ``--rounds``, N queries (every mode in turn) through AsyncHippoRAG in one event loop,
then through HippoRAG on a thread pool as wide: wall times, their ratio, the longest wait of a heartbeat coroutine
(5 ms ticks), whether the passages are the same, the largest score gap.

    python bench/reference_ratio.py --namespace eval-musique_train-bge-small-en-v1.5 --blocks 1,10,100,1,10,100
    python bench/reference_ratio.py --namespace eval-musique_train-bge-small-en-v1.5 --blocks 10 --profile
    python bench/reference_ratio.py --namespace eval-musique_train-bge-small-en-v1.5 --blocks 0 --async-calls 50
"""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor

from common import measure_latency, namespace_questions, profile_entity_ppr, profile_hipporag1, profile_hipporag2

from hippo_neo4j import AsyncHippoRAG, HippoRAG
from hippo_neo4j.memory import default_workers
from hippo_neo4j.retrieve import MODES


async def concurrently(hippo: AsyncHippoRAG, calls: list) -> tuple[list, float]:
    """The calls' passages (ids, scores) as coroutines in this loop, and the heartbeat's longest wait (ms)."""
    waits, done = [0.0], asyncio.Event()

    async def heartbeat() -> None:
        while not done.is_set():
            began = time.perf_counter()
            await asyncio.sleep(0.005)
            waits.append((time.perf_counter() - began) * 1000 - 5)

    beat = asyncio.create_task(heartbeat())
    found = await asyncio.gather(*(hippo.query(q.text, mode=m, entities=q.entities) for q, m in calls))
    done.set()
    await beat
    return [[(p.id, p.score) for p in r.passages] for r in found], max(waits)


def main() -> None:
    def options(parser):  # noqa: ANN001, ANN202
        parser.add_argument("--blocks", default="10")
        parser.add_argument("--profile", action="store_true", help="then the graph modes' step medians")
        parser.add_argument("--async-calls", type=int, default=0, help="then AsyncHippoRAG against the sync client")
        parser.add_argument("--rounds", type=int, default=3)

    args, extractor, queries = namespace_questions(__doc__, 100, options)
    with HippoRAG(namespace=args.namespace, extractor=extractor) as memory:
        for block in (int(b) for b in args.blocks.split(",") if int(b) > 0):
            latency = measure_latency(memory, queries, block=block)
            print(json.dumps({"block": block, "modes": {
                mode: [round(v["p50"], 1), round(v["inprocess_p50"], 1), round(v["p50"] / v["inprocess_p50"], 2)]
                for mode, v in latency.items()}}), flush=True)
        if args.profile:
            steps = profile_hipporag2(memory, queries)
            print(json.dumps({"hipporag2 step p50 ms": {k: round(v, 1) for k, v in steps.items() if v is not None}}))
            steps = profile_hipporag1(memory, queries)
            print(json.dumps({"hipporag1 step p50 ms": {k: round(v, 1) for k, v in steps.items() if v is not None}}))
            steps = profile_entity_ppr(memory, queries)
            print(json.dumps({"entity-ppr step p50 ms": {k: round(v, 1) for k, v in steps.items() if v is not None}}))
        calls = [(queries[i % len(queries)], m) for i, m in enumerate(MODES.names() * args.async_calls)][: args.async_calls]
        ids = lambda runs: [[x[0] for x in r] for r in runs]  # noqa: E731
        one = lambda c: [(p.id, p.score) for p in memory.query(c[0].text, mode=c[1], entities=c[0].entities).passages]  # noqa: E731
        expected, width = [one(c) for c in calls], default_workers()  # (a first pass: warm, as the rounds)
        with ThreadPoolExecutor(width) as pool, ThreadPoolExecutor(width) as lane:
            asyncio.run(AsyncHippoRAG(memory=memory, executor=lane).warm()) if calls else None
            for _ in range(args.rounds if calls else 0):
                t0 = time.perf_counter()
                found, wait = asyncio.run(concurrently(AsyncHippoRAG(memory=memory, executor=lane), calls))
                t1, same, t2 = time.perf_counter(), list(pool.map(one, calls)), time.perf_counter()
                print(json.dumps({"calls": len(calls), "width": width, "async_s": round(t1 - t0, 2), "sync_s": round(
                    t2 - t1, 2), "ratio": round((t1 - t0) / (t2 - t1), 2), "heartbeat_max_wait_ms": round(wait, 1),
                    "same_passages": ids(found) == ids(same) == ids(expected), "max_score_diff": max(
                        abs(x[1] - y[1]) for a, b in zip(found, expected) for x, y in zip(a, b))}), flush=True)


if __name__ == "__main__":
    main()
