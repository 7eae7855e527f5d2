"""Concurrency benchmark: query clients read while an indexing job writes into the same namespace.

    .venv/bin/python bench/concurrency.py --seconds 60 --clients 8 [--json bench/out/concurrency.json]

The writer indexes musique_train passages (with their OpenIE extraction) in small batches, re-indexes
some passages with new text (update = delete + add) and deletes others. Each client loops over
hipporag1 / dense / hipporag2 / bm25 / entity-ppr queries and checks every answer against what the writer had
committed (:class:`common.Ledger`):

- every returned passage id was written (committed, or its write in flight) by the time the answer came;
- its text is a version of that passage that was written;
- no passage is returned whose deletion committed before the query began;
- the namespace's passage count lies between what was surely committed and what may have been.

Any exception in a client or the writer counts as an error. The run lasts ``seconds``, or (``events``, as the
test suite runs it) until the writer and the clients have done at least so much of each, under a deadline that
only guards against a hang. Connection: the HIPPO_* environment (the local server by default), like ``hippo``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from common import Ledger, ms, musique_docs, run_until, write_json

from hippo_neo4j import HippoConfig, HippoRAG
from hippo_neo4j.config import ConnectionSettings
from hippo_neo4j.db import connect
from hippo_neo4j.evaluation import percentile
from hippo_neo4j.graph import projection

MODES = ("hipporag1", "dense", "hipporag2", "bm25", "entity-ppr")


class GivenEntities:
    """Every passage carries its extraction and every query its entities: no extractor runs."""

    name = "none"

    def extract(self, passages):  # noqa: ANN001, ANN201
        raise RuntimeError("the benchmark supplies every extraction")

    def query_entities(self, text):  # noqa: ANN001, ANN201
        raise RuntimeError("the benchmark supplies every query's entities")


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in MODES})
    behind: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    count_checks: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def writer(memory: HippoRAG, docs: list, by_id: dict[str, Any], ledger: Ledger, stop: threading.Event,
           out: dict[str, Any], batch: int) -> None:
    rng = random.Random(1)
    live: list[str] = list(ledger.versions)
    i, rounds = 0, 0
    try:
        while not stop.is_set() and i < len(docs):
            rounds += 1
            chunk = docs[i : i + batch]
            i += batch
            ledger.add(chunk, lambda: memory.index(chunk))
            live += [d.passage_id for d in chunk]
            out["passages"] += len(chunk)
            if rounds % 3 == 0 and len(live) > 20:  # update: same id, new text, same extraction
                updates = [by_id[pid].model_copy(update={"text": f"{by_id[pid].text} (revision {rounds})"})
                           for pid in rng.sample(live, 2)]
                ledger.update(updates, lambda: memory.index(updates))
                out["updates"] += len(updates)
            if rounds % 5 == 0 and len(live) > 40:  # delete
                ids = rng.sample(live, 3)
                for pid in ids:
                    live.remove(pid)
                ledger.delete(ids, lambda: memory.delete(ids))
                out["deletes"] += len(ids)
            out["batches"] += 1
    except Exception as exc:  # noqa: BLE001
        out["errors"].append(f"{type(exc).__name__}: {exc}"[:500])


def client(memory: HippoRAG, docs: list, ledger: Ledger, stop: threading.Event, stats: Stats, seed: int) -> None:
    rng = random.Random(seed)
    n = 0
    while not stop.is_set():
        n += 1
        mode = MODES[n % len(MODES)]
        doc = rng.choice(docs)
        began = time.monotonic()
        try:
            if n % 10 == 0:  # passage count within what was surely / possibly committed
                low = ledger.surely_and_possibly()[0]
                count = memory.stats()["passages"]
                high = ledger.surely_and_possibly()[1]
                with stats.lock:
                    stats.count_checks += 1
                    if not low <= count <= high:
                        stats.violations.append(f"passage count {count} outside [{low}, {high}]")
                continue
            if mode in ("hipporag1", "entity-ppr"):
                entities = [e for e in doc.extraction.named_entities if e.strip()][:4] or [doc.title]
                result = memory.query(doc.text, mode=mode, top_k=5, entities=entities)
            else:
                result = memory.query(doc.text[:300], mode=mode, top_k=5, filter=False)
            elapsed = time.monotonic() - began
            wrong = ledger.violations(mode, [(p.id, p.text) for p in result.passages], began)
            with stats.lock:
                if result.graph_version is not None:
                    stats.behind.append(result.writes_behind)
                stats.violations += wrong
                stats.latencies[mode].append(elapsed)
        except Exception as exc:  # noqa: BLE001
            with stats.lock:
                stats.errors.append(f"{mode}: {type(exc).__name__}: {exc}"[:500])


def run(
    connection: ConnectionSettings | None = None,
    *,
    seconds: float = 60,
    events: dict[str, int] | None = None,
    deadline: float = 600,
    clients: int = 8,
    preload: int = 100,
    batch: int = 10,
    namespace: str | None = None,
    keep: bool = False,
) -> dict[str, Any]:
    """The report of one run. ``events`` (instead of ``seconds``): run until the writer has written at least
    ``batches`` batches, ``updates`` updated and ``deletes`` deleted passages, and the clients have made
    ``count_checks`` count checks and ``queries_per_mode`` queries of every mode, or ``deadline`` seconds have
    passed (``reached`` says which)."""
    connection = connection or ConnectionSettings.from_env()
    ns = namespace or f"bench-concurrency-{uuid.uuid4().hex[:6]}"
    docs = musique_docs()
    driver = connect(connection)
    config = HippoConfig(batch_size=batch)

    def memory() -> HippoRAG:
        return HippoRAG(connection, namespace=ns, driver=driver, extractor=GivenEntities(), config=config)

    ledger = Ledger()
    seed_docs, stream = docs[:preload], docs[preload:]
    setup = memory()
    setup.index(seed_docs)
    ledger.preloaded(seed_docs)
    for mode in ("hipporag1", "hipporag2", "entity-ppr"):  # load the encoder and the projections once
        setup.query("warm up", mode=mode, entities=["warm up"], filter=False)

    stop = threading.Event()
    stats = Stats()
    wrote: dict[str, Any] = {"batches": 0, "passages": 0, "updates": 0, "deletes": 0, "errors": []}
    by_id = {d.passage_id: d for d in docs}
    threads = [threading.Thread(target=writer, args=(memory(), stream, by_id, ledger, stop, wrote, batch), name="writer")]
    threads += [
        threading.Thread(target=client, args=(memory(), docs[: preload + 200], ledger, stop, stats, k), name=f"client-{k}")
        for k in range(clients)
    ]

    def enough(elapsed: float) -> bool:
        if events is None:
            return elapsed >= seconds
        with stats.lock:
            seen = {"count_checks": stats.count_checks,
                    "queries_per_mode": min(len(v) for v in stats.latencies.values())}
        seen |= {k: wrote[k] for k in ("batches", "updates", "deletes")}
        return all(seen[k] >= n for k, n in events.items())

    wall, reached, hung = run_until(threads, stop, enough, seconds if events is None else deadline)
    projection.wait_for_refreshes(driver, timeout=deadline)
    left = sorted(projection._existing(driver, connection.database, ns))

    all_lat = [x for values in stats.latencies.values() for x in values]
    report = {
        "namespace": ns, "seconds": round(wall, 1), "reached": reached, "clients": clients,
        "queries": len(all_lat), "queries_per_s": round(len(all_lat) / wall, 1),
        "p50_ms": ms(all_lat, 50), "p95_ms": ms(all_lat, 95),
        "per_mode": {mode: {"queries": len(v), "p50_ms": ms(v, 50), "p95_ms": ms(v, 95)}
                     for mode, v in stats.latencies.items()},
        "count_checks": stats.count_checks,
        "errors": len(stats.errors) + len(wrote["errors"]),
        "error_samples": (stats.errors + wrote["errors"])[:10],
        "violations": len(stats.violations),
        "violation_samples": stats.violations[:10],
        "hung_threads": hung,
        # graph queries walk the newest complete projection: how many writes it had not seen, and the
        # projections left once the refreshes are done (one per kind: the older ones are dropped)
        "writes_behind": {"median": percentile(stats.behind, 50), "max": max(stats.behind, default=0)},
        "projections_left": left,
        "writer": {k: v for k, v in wrote.items() if k != "errors"},
    }
    if not keep:
        setup.drop_namespace()
    driver.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--preload", type=int, default=100, help="passages indexed before the clock starts")
    parser.add_argument("--batch", type=int, default=10, help="passages per write batch")
    parser.add_argument("--namespace", help="default: a fresh bench-concurrency-* namespace, dropped afterwards")
    parser.add_argument("--keep", action="store_true", help="keep the namespace afterwards")
    parser.add_argument("--json", dest="json_path", help="also write the report to this file")
    args = parser.parse_args()
    report = run(seconds=args.seconds, clients=args.clients, preload=args.preload, batch=args.batch,
                 namespace=args.namespace, keep=args.keep)
    print(json.dumps(report, indent=2))
    if args.json_path:
        write_json(args.json_path, report)
    sys.exit(1 if report["errors"] or report["violations"] or report["hung_threads"] else 0)


if __name__ == "__main__":
    main()
