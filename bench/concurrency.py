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

import json
import sys
import uuid
from typing import Any

from common import LoadStats, Workload, ms, musique_docs, parser, run_load, write_json

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
        behind = result.writes_behind if result.graph_version is not None else None
        return [(p.id, p.text, p.filled) for p in result.passages], behind


def ask(mode: str, doc: Any) -> dict[str, Any]:
    if mode in ("hipporag1", "entity-ppr"):
        entities = [e for e in doc.extraction.named_entities if e.strip()][:4] or [doc.title]
        return {"query": doc.text, "mode": mode, "top_k": 5, "entities": entities}
    return {"query": doc.text[:300], "mode": mode, "top_k": 5, "filter": False}


def warm(target: Library) -> None:
    """The encoder and the projections loaded once, before the clock starts."""
    for mode in ("hipporag1", "hipporag2", "entity-ppr"):
        target.memory.query("warm up", mode=mode, entities=["warm up"], filter=False)


def run(connection: ConnectionSettings | None = None, *, seconds: float = 60, events: dict[str, int] | None = None,
        deadline: float = 600, clients: int = 8, preload: int = 100, batch: int = 10) -> dict[str, Any]:
    """The report of one run. ``events`` (instead of ``seconds``): run until the writer has written at least
    ``batches`` batches, ``updates`` updated and ``deletes`` deleted passages, and the clients have made
    ``count_checks`` passage counts and ``queries_per_mode`` queries of every mode, or ``deadline`` seconds have
    passed (``reached`` says which)."""
    connection = connection or ConnectionSettings.from_env()
    ns = f"bench-concurrency-{uuid.uuid4().hex[:6]}"
    driver = connect(connection)
    config = HippoConfig(batch_size=batch)

    def memory() -> HippoRAG:
        return HippoRAG(connection, namespace=ns, driver=driver, extractor=GivenEntities(), config=config)

    stats = LoadStats(MODES)

    def enough(elapsed: float) -> bool:
        if events is None:
            return elapsed >= seconds
        with stats.lock:
            seen = {"count_checks": len(stats.latencies["count"]),
                    "queries_per_mode": min(len(stats.latencies[m]) for m in MODES)}
        seen |= {k: stats.wrote[k] for k in ("batches", "updates", "deletes")}
        return all(seen[k] >= n for k, n in events.items())

    wall, reached, hung = run_load(lambda: Library(memory()), musique_docs(), stats,
                                   Workload(batch=batch, update_every=3, delete_every=5, deletes=3), ask,
                                   preload=preload, clients=clients, count_every=10, done=enough,
                                   deadline_s=seconds if events is None else deadline, warm=warm)
    projection.wait_for_refreshes(driver, timeout=deadline)
    left = sorted(projection._existing(driver, connection.database, ns))
    every = [x for m in MODES for x in stats.latencies[m]]
    report = {
        "namespace": ns, "seconds": round(wall, 1), "reached": reached, "clients": clients,
        "queries": len(every), "queries_per_s": round(len(every) / wall, 1),
        "p50_ms": ms(every, 50), "p95_ms": ms(every, 95),
        "per_mode": {m: {"queries": len(v), "p50_ms": ms(v, 50), "p95_ms": ms(v, 95)}
                     for m, v in stats.latencies.items() if m != "count"},
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
    memory().drop_namespace()
    driver.close()
    return report


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--json", dest="json_path", help="also write the report to this file")
    args = p.parse_args()
    report = run(seconds=args.seconds, clients=args.clients)
    print(json.dumps(report, indent=2))
    if args.json_path:
        write_json(args.json_path, report)
    sys.exit(1 if report["errors"] or report["violations"] or report["hung_threads"] else 0)


if __name__ == "__main__":
    main()
