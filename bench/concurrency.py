"""Concurrency benchmark: query clients read while an indexing job writes into the same namespace.

    .venv/bin/python bench/concurrency.py --seconds 60 --clients 8 [--json bench/out/concurrency.json]

The writer indexes musique_train passages (with their OpenIE extraction) in small batches, re-indexes
some passages with new text (update = delete + add) and deletes others. Each client loops over
hipporag1 / dense / hipporag2 / bm25 / entity-ppr queries and checks every answer against what the writer had committed:

- every returned passage id was written (committed, or its write in flight) by the time the answer came;
- its text is a version of that passage that was written;
- no passage is returned whose deletion committed before the query began;
- the namespace's passage count lies between what was surely committed and what may have been.

Any exception in a client or the writer counts as an error. Connection: the HIPPO_* environment (the
local server by default), like the ``hippo`` command.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hippo_neo4j import HippoConfig, HippoRAG  # noqa: E402
from hippo_neo4j.config import ConnectionSettings  # noqa: E402
from hippo_neo4j.corpus import load_openie  # noqa: E402
from hippo_neo4j.db import connect  # noqa: E402
from hippo_neo4j.graph import projection  # noqa: E402

DATASETS = Path(os.environ.get("HIPPO_DATASETS", ROOT.parent / "shared" / "datasets"))
OPENIE = DATASETS / "musique_train" / "openie_gpt-3.5-turbo-1106.json"


class GivenEntities:
    """Every passage carries its extraction and every query its entities: no extractor runs."""

    name = "none"

    def extract(self, passages):  # noqa: ANN001, ANN201
        raise RuntimeError("the benchmark supplies every extraction")

    def query_entities(self, text):  # noqa: ANN001, ANN201
        raise RuntimeError("the benchmark supplies every query's entities")


@dataclass
class Ledger:
    """What the writer has begun and committed, with monotonic timestamps."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    versions: dict[str, set[str]] = field(default_factory=dict)  # id -> texts ever written
    deleted_at: dict[str, float] = field(default_factory=dict)  # id -> when its deletion committed
    adds_begun: int = 0
    adds_committed: int = 0
    deletes_begun: int = 0
    deletes_committed: int = 0

    def bounds_before(self) -> int:
        with self.lock:
            return self.adds_committed - self.deletes_begun

    def bounds_after(self) -> int:
        with self.lock:
            return self.adds_begun - self.deletes_committed

    def add(self, docs: list, write: Any) -> None:
        """Record ``docs`` as begun, ``write()`` them, record them as committed."""
        with self.lock:
            for d in docs:
                self.versions.setdefault(d.passage_id, set()).add(d.text)
            self.adds_begun += len(docs)
        write()
        with self.lock:
            self.adds_committed += len(docs)

    def delete(self, ids: list[str], write: Any) -> None:
        """Record the deletion of ``ids`` as begun, ``write()`` it, record when it committed."""
        with self.lock:
            self.deletes_begun += len(ids)
        write()
        now = time.monotonic()
        with self.lock:
            self.deletes_committed += len(ids)
            for pid in ids:
                self.deleted_at[pid] = now


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(
        default_factory=lambda: {m: [] for m in ("hipporag1", "dense", "hipporag2", "bm25", "entity-ppr")}
    )
    behind: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    count_checks: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def writer(memory: HippoRAG, docs: list, ledger: Ledger, stop: threading.Event, out: dict[str, Any], batch: int) -> None:
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
                ids = rng.sample(live, 2)
                updates = []
                for pid in ids:
                    doc = by_id[pid]
                    new = doc.model_copy(update={"text": f"{doc.text} (revision {rounds})"})
                    updates.append(new)
                    with ledger.lock:
                        ledger.versions[pid].add(new.text)
                memory.index(updates)
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


by_id: dict[str, Any] = {}


def client(memory: HippoRAG, docs: list, ledger: Ledger, stop: threading.Event, stats: Stats, seed: int) -> None:
    rng = random.Random(seed)
    modes = ["hipporag1", "dense", "hipporag2", "bm25", "entity-ppr"]
    n = 0
    while not stop.is_set():
        n += 1
        mode = modes[n % len(modes)]
        doc = rng.choice(docs)
        began = time.monotonic()
        try:
            if n % 10 == 0:  # passage count within what was surely / possibly committed
                low = ledger.bounds_before()
                count = memory.stats()["passages"]
                high = ledger.bounds_after()
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
            if result.graph_version is not None:
                with stats.lock:
                    stats.behind.append(result.writes_behind)
            elapsed = time.monotonic() - began
            with ledger.lock:
                for p in result.passages:
                    texts = ledger.versions.get(p.id)
                    if texts is None:
                        stats.violations.append(f"{mode}: {p.id} was never written")
                    elif p.text not in texts:
                        stats.violations.append(f"{mode}: {p.id} has a text that was never written")
                    elif p.id in ledger.deleted_at and ledger.deleted_at[p.id] < began:
                        stats.violations.append(f"{mode}: {p.id} returned after its deletion committed")
            with stats.lock:
                stats.latencies[mode].append(elapsed)
        except Exception as exc:  # noqa: BLE001
            with stats.lock:
                stats.errors.append(f"{mode}: {type(exc).__name__}: {exc}"[:500])


def run_for(threads: list[threading.Thread], seconds: float, stop: threading.Event) -> tuple[float, list[str]]:
    """Start ``threads``, let them run ``seconds``, set ``stop`` and join them: the wall time and the names of
    the threads still alive two minutes later."""
    began = time.monotonic()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    hung = []
    for t in threads:
        t.join(120)
        if t.is_alive():
            hung.append(t.name)
    return time.monotonic() - began, hung


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def run(
    connection: ConnectionSettings | None = None,
    *,
    seconds: float = 60,
    clients: int = 8,
    preload: int = 100,
    batch: int = 10,
    namespace: str | None = None,
    keep: bool = False,
) -> dict[str, Any]:
    connection = connection or ConnectionSettings.from_env()
    ns = namespace or f"bench-concurrency-{uuid.uuid4().hex[:6]}"
    docs = load_openie(OPENIE)
    for i, d in enumerate(docs):
        d.id = f"m{i}"
        by_id[d.id] = d
    driver = connect(connection)
    config = HippoConfig(batch_size=batch)

    def memory() -> HippoRAG:
        return HippoRAG(connection, namespace=ns, driver=driver, extractor=GivenEntities(), config=config)

    ledger = Ledger()
    seed_docs, stream = docs[:preload], docs[preload:]
    setup = memory()
    setup.index(seed_docs)
    for d in seed_docs:
        ledger.versions[d.passage_id] = {d.text}
    ledger.adds_begun = ledger.adds_committed = len(seed_docs)
    for mode in ("hipporag1", "hipporag2", "entity-ppr"):  # load the encoder and the projections once
        setup.query("warm up", mode=mode, entities=["warm up"], filter=False)

    stop = threading.Event()
    stats = Stats()
    wrote: dict[str, Any] = {"batches": 0, "passages": 0, "updates": 0, "deletes": 0, "errors": []}
    threads = [threading.Thread(target=writer, args=(memory(), stream, ledger, stop, wrote, batch), name="writer")]
    threads += [
        threading.Thread(target=client, args=(memory(), docs[: preload + 200], ledger, stop, stats, k), name=f"client-{k}")
        for k in range(clients)
    ]
    wall, hung = run_for(threads, seconds, stop)
    projection.wait_for_refreshes(driver)
    left = sorted(projection._existing(driver, connection.database, ns))

    all_lat = [x for values in stats.latencies.values() for x in values]
    report = {
        "namespace": ns,
        "seconds": round(wall, 1),
        "clients": clients,
        "queries": len(all_lat),
        "queries_per_s": round(len(all_lat) / wall, 1),
        "p50_ms": round(percentile(all_lat, 0.5) * 1000, 1),
        "p95_ms": round(percentile(all_lat, 0.95) * 1000, 1),
        "per_mode": {
            mode: {
                "queries": len(v),
                "p50_ms": round(percentile(v, 0.5) * 1000, 1),
                "p95_ms": round(percentile(v, 0.95) * 1000, 1),
            }
            for mode, v in stats.latencies.items()
        },
        "count_checks": stats.count_checks,
        "errors": len(stats.errors) + len(wrote["errors"]),
        "error_samples": (stats.errors + wrote["errors"])[:10],
        "violations": len(stats.violations),
        "violation_samples": stats.violations[:10],
        "hung_threads": hung,
        # graph queries walk the newest complete projection: how many writes it had not seen, and the
        # projections left once the refreshes are done (one per kind: the older ones are dropped)
        "writes_behind": {"median": percentile(stats.behind, 0.5), "max": max(stats.behind, default=0)},
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
    report = run(
        seconds=args.seconds, clients=args.clients, preload=args.preload, batch=args.batch,
        namespace=args.namespace, keep=args.keep,
    )
    text = json.dumps(report, indent=2)
    print(text)
    if args.json_path:
        Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_path).write_text(text + "\n")
    sys.exit(1 if report["errors"] or report["violations"] or report["hung_threads"] else 0)


if __name__ == "__main__":
    main()
