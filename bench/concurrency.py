"""Concurrency benchmark (docs/results.md, Concurrency): query clients read while a writer indexes, re-indexes
(update = delete + add) and deletes musique_train passages in the same namespace. Each client loops over
``MODES``, every 10th request a passage count, and checks every answer against what the writer had committed
(``common.Ledger``): every passage returned was written, with a text it was written with, and not after its
deletion committed before the query began; the passage count lies between what was surely committed and what
may have been. Any exception counts as an error. The run lasts ``seconds``, or ``events`` (:func:`run`)."""

from __future__ import annotations

import functools
import json
import sys
import uuid
from typing import Any

from common import LoadStats, Workload, musique_docs, parser, run_load, write_json

from hippo_neo4j import HippoConfig, HippoRAG
from hippo_neo4j.config import ConnectionSettings
from hippo_neo4j.db import connect
from hippo_neo4j.evaluation import percentile
from hippo_neo4j.graph.server import Server

MODES = ("hipporag1", "dense", "hipporag2", "bm25", "entity-ppr")


class Library(HippoRAG):
    """The namespace through the library (a target of ``common.run_load``)."""

    def count(self) -> int:
        return self.stats()["passages"]

    def ask(self, body: dict[str, Any]) -> tuple[list[tuple[str, str, bool]], int | None]:
        result = self.query(body.pop("query"), **body)
        behind = result.writes_behind if result.graph_version is not None else None
        return [(p.id, p.text, p.filled) for p in result.passages], behind


def warm(target: Library) -> None:
    """The encoder and the projections loaded once, before the clock starts."""
    for mode in ("hipporag1", "hipporag2", "entity-ppr"):
        target.query("warm up", mode=mode, entities=["warm up"], recognition_filter=False)


def run(connection: ConnectionSettings | None = None, *, seconds: float = 60, events: dict[str, int] | None = None,
        deadline: float = 600, clients: int = 8, preload: int = 100, batch: int = 10) -> dict[str, Any]:
    """The report of one run. ``events`` (instead of ``seconds``): run until the writer has written at least
    ``batches`` batches, ``updates`` updated and ``deletes`` deleted passages, and the clients have made
    ``count_checks`` passage counts and ``queries_per_mode`` queries of every mode, or ``deadline`` seconds have
    passed (``reached`` says which)."""
    connection = connection or ConnectionSettings.from_env()
    ns = f"bench-concurrency-{uuid.uuid4().hex[:6]}"
    driver = connect(connection)
    # every passage carries its extraction and every query its entities: no extractor runs
    memory = functools.partial(Library, connection, namespace=ns, driver=driver, config=HippoConfig(batch_size=batch))
    stats = LoadStats(MODES)

    def enough(elapsed: float) -> bool:
        if events is None:
            return elapsed >= seconds
        with stats.lock:
            seen = {"count_checks": len(stats.latencies["count"]),
                    "queries_per_mode": min(len(stats.latencies[m]) for m in MODES)}
        seen |= {k: stats.wrote[k] for k in ("batches", "updates", "deletes")}
        return all(seen[k] >= n for k, n in events.items())

    workload = Workload(batch=batch, update_every=3, delete_every=5, deletes=3)
    report = {"namespace": ns} | run_load(memory, musique_docs(), stats, workload, preload=preload,
                                          clients=clients, count_every=10, done=enough,
                                          deadline_s=seconds if events is None else deadline, warm=warm)
    Server.of(driver, connection.database).projections.wait_for_refreshes(timeout=deadline)
    # graph queries walk the newest complete projection: how many writes it had not seen, and the projections
    # left once the refreshes are done (one per kind: the older ones are dropped)
    report["writes_behind"] = {"median": percentile(stats.behind, 50), "max": max(stats.behind, default=0)}
    report["projections_left"] = sorted(Server.of(driver, connection.database).projections.existing(ns))
    memory().drop_namespace()
    driver.close()
    return report


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--batch", type=int, default=10, help="passages per write (smaller: more writes, more projections)")
    p.add_argument("--json", dest="json_path", help="also write the report to this file")
    args = p.parse_args()
    report = run(seconds=args.seconds, clients=args.clients, batch=args.batch)
    print(json.dumps(report, indent=2))
    if args.json_path:
        write_json(args.json_path, report)
    sys.exit(1 if report["errors"] or report["violations"] or report["hung_threads"] else 0)


if __name__ == "__main__":
    main()
