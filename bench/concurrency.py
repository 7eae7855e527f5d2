"""Concurrency benchmark: query clients read while an indexing job writes into the same namespace.

    .venv/bin/python bench/concurrency.py --seconds 60 --clients 8 [--json bench/out/concurrency.json]

The writer indexes musique_train passages (with their OpenIE extraction) in small batches, re-indexes 2
passages with new text every 3rd batch (update = delete + add) and deletes 3 every 5th. Each client loops over
hipporag1 / dense / hipporag2 / bm25 / entity-ppr queries, every 10th request a passage count, and checks every
answer against what the writer had committed (``common.Ledger``):

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
import sys
import threading
import uuid
from typing import Any

from common import Ledger, LoadStats, Workload, ms, musique_docs, query_loop, run_until, write_json, write_loop

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


class Library:
    """The namespace through the library (``common.Target``)."""

    def __init__(self, memory: HippoRAG) -> None:
        self.memory = memory

    def index(self, docs: list) -> None:
        self.memory.index(docs)

    def delete(self, ids: list[str]) -> None:
        self.memory.delete(ids)

    def count(self) -> int:
        return self.memory.stats()["passages"]

    def query(self, body: dict[str, Any]) -> tuple[list[tuple[str, str, bool]], int | None]:
        result = self.memory.query(body.pop("query"), **body)
        return [(p.id, p.text, p.filled) for p in result.passages], result.writes_behind if result.graph_version is not None else None


def ask(mode: str, doc: Any) -> dict[str, Any]:
    if mode in ("hipporag1", "entity-ppr"):
        entities = [e for e in doc.extraction.named_entities if e.strip()][:4] or [doc.title]
        return {"query": doc.text, "mode": mode, "top_k": 5, "entities": entities}
    return {"query": doc.text[:300], "mode": mode, "top_k": 5, "filter": False}


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
    ``count_checks`` passage counts and ``queries_per_mode`` queries of every mode, or ``deadline`` seconds have
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
    stats = LoadStats(MODES)
    workload = Workload(batch=batch, update_every=3, delete_every=5, deletes=3)
    by_id = {d.passage_id: d for d in docs}
    threads = [threading.Thread(target=write_loop, args=(Library(memory()), stream, by_id, ledger, workload, stop, stats),
                                name="writer")]
    threads += [threading.Thread(target=query_loop, args=(Library(memory()), docs[: preload + 200], ledger, stats, ask, 10,
                                                          stop, k), name=f"client-{k}") for k in range(clients)]

    def enough(elapsed: float) -> bool:
        if events is None:
            return elapsed >= seconds
        with stats.lock:
            seen = {"count_checks": len(stats.latencies["count"]),
                    "queries_per_mode": min(len(stats.latencies[m]) for m in MODES)}
        seen |= {k: stats.wrote[k] for k in ("batches", "updates", "deletes")}
        return all(seen[k] >= n for k, n in events.items())

    wall, reached, hung = run_until(threads, stop, enough, seconds if events is None else deadline)
    projection.wait_for_refreshes(driver, timeout=deadline)
    left = sorted(projection._existing(driver, connection.database, ns))

    all_lat = [x for m in MODES for x in stats.latencies[m]]
    report = {
        "namespace": ns, "seconds": round(wall, 1), "reached": reached, "clients": clients,
        "queries": len(all_lat), "queries_per_s": round(len(all_lat) / wall, 1),
        "p50_ms": ms(all_lat, 50), "p95_ms": ms(all_lat, 95),
        "per_mode": {m: {"queries": len(stats.latencies[m]), "p50_ms": ms(stats.latencies[m], 50),
                         "p95_ms": ms(stats.latencies[m], 95)} for m in MODES},
        "count_checks": len(stats.latencies["count"]),
        "errors": len(stats.errors), "error_samples": stats.errors[:10],
        "violations": len(stats.violations), "violation_samples": stats.violations[:10],
        "hung_threads": hung,
        # graph queries walk the newest complete projection: how many writes it had not seen, and the
        # projections left once the refreshes are done (one per kind: the older ones are dropped)
        "writes_behind": {"median": percentile(stats.behind, 50), "max": max(stats.behind, default=0)},
        "projections_left": left,
        "writer": {k: v for k, v in stats.wrote.items() if k != "sentinel_toggles"},
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
