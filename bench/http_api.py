"""The HTTP API (``hippo serve``) against the library, and under concurrent load with a writer.

    python bench/http_api.py --namespace eval-musique_train-bge-small-en-v1.5 [--queries 60] [--seconds 60]
        [--clients 8] [--json bench/out/http_api.json]

Part 1, latency: p50 ms of ``POST /query`` (a keep-alive client, the JSON parsed) against p50 of
``HippoRAG.query`` in this process, for hipporag1 and hipporag2 on musique_train questions, with the query
entities extracted beforehand and sent the same way to both; library and HTTP calls alternate question by
question (after 3 warm-up queries each), so drift in the machine's load hits both alike.

Part 2, concurrency: ``--clients`` HTTP clients query a scratch namespace for ``--seconds`` while a writer,
also over HTTP, indexes musique_train passages in batches, and after every batch deletes two passages,
toggles a sentinel passage and, every second batch, re-indexes two with new text.
An answer is consistent when

- every passage it returns was written (a text of one of its written versions) and its deletion had not
  committed before the query was sent;
- a sentinel passage, indexed and deleted in turns by the writer, is found by its unique word iff it could
  be indexed at that moment: found only if its indexing began before the answer came and no deletion
  committed before the query was sent; missed only if it was not surely indexed all along;
- ``GET /stats`` counts passages between what was surely committed and what may have been.

Any non-200 answer or exception is an error. The server is a ``hippo serve`` process on the server the
HIPPO_* environment names (the local one by default); the scratch namespace is dropped afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from concurrency import OPENIE, Ledger, percentile, run_for  # noqa: E402

from hippo_neo4j import HippoRAG  # noqa: E402
from hippo_neo4j.corpus import load_openie  # noqa: E402
from hippo_neo4j.evaluation import load_dataset  # noqa: E402
from hippo_neo4j.extract.offline import OfflineExtractor  # noqa: E402

DATASET = ROOT.parent / "shared" / "datasets" / "musique_train"
SENTINEL_WORD = "zqxvortigaunt"


def start_server(port: int, namespace: str) -> subprocess.Popen:
    command = [sys.executable, "-c", "from hippo_neo4j.cli import main; main()", "serve", "--port", str(port),
               "--namespace", namespace, "--extractor", "offline", "--log-level", "warning"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"hippo serve exited with {process.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return process
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    process.terminate()
    raise SystemExit("hippo serve did not come up in 180 s")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------- part 1


def latency(base: str, namespace: str, queries: int, modes: list[str]) -> dict[str, Any]:
    extractor = OfflineExtractor()
    questions = load_dataset(DATASET).questions[:queries]
    asked = [(q.question, extractor.query_entities(q.question)) for q in questions]
    out: dict[str, Any] = {}
    with HippoRAG(namespace=namespace, extractor=extractor) as memory, httpx.Client(base_url=base, timeout=60) as client:
        for mode in modes:
            def library(text: str, entities: list[str]) -> list[str]:
                result = memory.query(text, mode=mode, entities=entities, top_k=10, filter=False)
                return [p.id for p in result.passages]

            def http(text: str, entities: list[str]) -> list[str]:
                response = client.post("/query", json={"query": text, "mode": mode, "entities": entities,
                                                       "top_k": 10, "filter": False})
                response.raise_for_status()
                return [p["id"] for p in response.json()["passages"]]

            for text, entities in asked[:3]:
                library(text, entities), http(text, entities)
            lib_ms, http_ms, same = [], [], 0
            for i, (text, entities) in enumerate(asked):
                ranked = {}
                for side in (("library", "http") if i % 2 == 0 else ("http", "library")):  # neither always first
                    began = time.perf_counter()
                    ranked[side] = (library if side == "library" else http)(text, entities)
                    (lib_ms if side == "library" else http_ms).append((time.perf_counter() - began) * 1000)
                same += ranked["library"] == ranked["http"]
            lib, web = statistics.median(lib_ms), statistics.median(http_ms)
            out[mode] = {"queries": len(asked), "library_p50_ms": round(lib, 1), "http_p50_ms": round(web, 1),
                         "overhead_ms": round(web - lib, 1), "target_met": web <= lib + 5,
                         "same_ranking": same}
    return out


# ---------------------------------------------------------------------------------------------- part 2


def passage_json(doc: Any) -> dict[str, Any]:
    return {"id": doc.passage_id, "title": doc.title, "text": doc.text,
            "extraction": doc.extraction.model_dump() if doc.extraction else None}


class Sentinel:
    """When the sentinel passage's indexing and deletions began and committed (monotonic clock); an event is
    recorded before its request is sent, its commit time (None until then) when the answer came."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[list[Any]] = []  # [kind "add"/"del", began, committed or None]

    def begin(self, kind: str) -> list[Any]:
        event = [kind, time.monotonic(), None]
        with self.lock:
            self.events.append(event)
        return event

    def commit(self, event: list[Any]) -> None:
        with self.lock:
            event[2] = time.monotonic()

    def could_be_there(self, sent: float, answered: float) -> bool:
        """An add began before the answer, and no delete after it committed before the query was sent."""
        with self.lock:
            events = [list(e) for e in self.events]
        adds = [e for e in events if e[0] == "add" and e[1] < answered]
        if not adds:
            return False
        last = max(adds, key=lambda e: e[1])
        return not any(e[0] == "del" and e[1] > last[1] and e[2] is not None and e[2] < sent for e in events)

    def surely_there(self, sent: float, answered: float) -> bool:
        """An add committed before the query was sent, and no delete after it began before the answer."""
        with self.lock:
            events = [list(e) for e in self.events]
        adds = [e for e in events if e[0] == "add" and e[2] is not None and e[2] < sent]
        if not adds:
            return False
        last = max(adds, key=lambda e: e[1])
        return not any(e[0] == "del" and e[1] > last[1] and e[1] < answered for e in events)


def concurrency(base: str, seconds: float, clients: int, preload: int, batch: int) -> dict[str, Any]:
    ns = f"bench-http-{uuid.uuid4().hex[:6]}"
    docs = load_openie(OPENIE)
    for i, d in enumerate(docs):
        d.id = f"m{i}"
    by_id = {d.id: d for d in docs}
    sentinel_doc = {"id": "sentinel", "title": "Sentinel", "text": f"The {SENTINEL_WORD} guards the gate.",
                    "extraction": {"named_entities": [SENTINEL_WORD], "triples": [[SENTINEL_WORD, "guards", "gate"]]}}
    ledger, sentinel = Ledger(), Sentinel()
    errors: list[str] = []
    violations: list[str] = []
    latencies: dict[str, list[float]] = {m: [] for m in ("hipporag1", "hipporag2", "dense", "bm25", "sentinel", "stats")}
    lock = threading.Lock()
    stop = threading.Event()
    wrote = {"batches": 0, "passages": 0, "updates": 0, "deletes": 0, "sentinel_toggles": 0}
    sentinel_seen = {"found": 0, "missed": 0}

    admin = httpx.Client(base_url=base, timeout=120)
    seed = docs[:preload]
    admin.post("/index", json={"namespace": ns, "passages": [passage_json(d) for d in seed]}).raise_for_status()
    for d in seed:
        ledger.versions[d.passage_id] = {d.text}
    ledger.adds_begun = ledger.adds_committed = len(seed)
    ledger.versions["sentinel"] = {sentinel_doc["text"]}
    stream = docs[preload:]

    def post(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = client.post(path, json={"namespace": ns, **body})
        if response.status_code != 200:
            raise RuntimeError(f"{path} {response.status_code}: {response.text[:200]}")
        return response.json()

    def writer() -> None:
        rng = random.Random(1)
        live = [d.passage_id for d in seed]
        i, rounds, sentinel_in = 0, 0, False
        with httpx.Client(base_url=base, timeout=120) as client:
            try:
                while not stop.is_set() and i < len(stream):
                    rounds += 1
                    chunk = stream[i : i + batch]
                    i += batch
                    ledger.add(chunk, lambda: post(client, "/index", {"passages": [passage_json(d) for d in chunk]}))
                    live += [d.passage_id for d in chunk]
                    wrote["passages"] += len(chunk)
                    if rounds % 2 == 0 and len(live) > 20:  # update: same id, new text
                        updates = []
                        for pid in rng.sample(live, 2):
                            new = by_id[pid].model_copy(update={"text": f"{by_id[pid].text} (revision {rounds})"})
                            updates.append(new)
                            with ledger.lock:
                                ledger.versions[pid].add(new.text)
                        post(client, "/index", {"passages": [passage_json(d) for d in updates]})
                        wrote["updates"] += len(updates)
                    if len(live) > 40:  # delete
                        ids = rng.sample(live, 2)
                        for pid in ids:
                            live.remove(pid)
                        ledger.delete(ids, lambda: post(client, "/delete", {"ids": ids}))
                        wrote["deletes"] += len(ids)
                    # the sentinel: in, then out, then in ... (every round)
                    event = sentinel.begin("del" if sentinel_in else "add")
                    if sentinel_in:
                        post(client, "/delete", {"ids": ["sentinel"]})
                    else:
                        post(client, "/index", {"passages": [sentinel_doc]})
                    sentinel.commit(event)
                    sentinel_in = not sentinel_in
                    wrote["sentinel_toggles"] += 1
                    wrote["batches"] += 1
            except Exception as exc:  # noqa: BLE001
                with lock:
                    errors.append(f"writer: {type(exc).__name__}: {exc}"[:300])

    def client_loop(k: int) -> None:
        rng = random.Random(k)
        modes = ["hipporag1", "dense", "sentinel", "hipporag2", "bm25"]
        n = 0
        with httpx.Client(base_url=base, timeout=120) as client:
            while not stop.is_set():
                n += 1
                kind = "stats" if n % 11 == 0 else modes[n % len(modes)]
                doc = rng.choice(docs[: preload + 200])
                sent = time.monotonic()
                try:
                    if kind == "stats":
                        with ledger.lock:
                            surely_added, maybe_deleted = ledger.adds_committed, ledger.deletes_begun
                            surely_deleted = ledger.deletes_committed
                        response = client.get("/stats", params={"namespace": ns})
                        with ledger.lock:  # deletions may begin, and adds begin, until the answer
                            maybe_deleted, maybe_added = ledger.deletes_begun, ledger.adds_begun
                        low, high = surely_added - maybe_deleted, maybe_added - surely_deleted
                        if response.status_code != 200:
                            raise RuntimeError(f"/stats {response.status_code}: {response.text[:200]}")
                        count = response.json()["passages"]
                        slack = 1  # the sentinel, when it is in
                        if not low <= count <= high + slack:
                            with lock:
                                violations.append(f"stats: {count} passages outside [{low}, {high + slack}]")
                        with lock:
                            latencies[kind].append(time.monotonic() - sent)
                        continue
                    if kind == "sentinel":
                        body = {"query": f"{SENTINEL_WORD} gate", "mode": "bm25", "top_k": 3}
                    elif kind in ("hipporag1", "hipporag2"):
                        entities = [e for e in doc.extraction.named_entities if e.strip()][:4] or [doc.title]
                        body = {"query": doc.text[:300], "mode": kind, "top_k": 5, "entities": entities, "filter": False}
                    else:
                        body = {"query": doc.text[:300], "mode": kind, "top_k": 5}
                    result = post(client, "/query", body)
                    answered = time.monotonic()
                    with ledger.lock:
                        for p in result["passages"]:
                            texts = ledger.versions.get(p["id"])
                            if texts is None:
                                violations.append(f"{kind}: {p['id']} was never written")
                            elif p["text"] not in texts:
                                violations.append(f"{kind}: {p['id']} has a text that was never written")
                            elif p["id"] in ledger.deleted_at and ledger.deleted_at[p["id"]] < sent:
                                violations.append(f"{kind}: {p['id']} returned after its deletion committed")
                    if kind == "sentinel":
                        found = any(p["id"] == "sentinel" and not p["filled"] for p in result["passages"])
                        with lock:
                            sentinel_seen["found" if found else "missed"] += 1
                        if found and not sentinel.could_be_there(sent, answered):
                            with lock:
                                violations.append("sentinel found while it could not be indexed")
                        if not found and sentinel.surely_there(sent, answered):
                            with lock:
                                violations.append("sentinel missed while it was surely indexed")
                    with lock:
                        latencies[kind].append(answered - sent)
                except Exception as exc:  # noqa: BLE001
                    with lock:
                        errors.append(f"{kind}: {type(exc).__name__}: {exc}"[:300])

    threads = [threading.Thread(target=writer, name="writer")]
    threads += [threading.Thread(target=client_loop, args=(k,), name=f"client-{k}") for k in range(clients)]
    wall, hung = run_for(threads, seconds, stop)
    admin.close()
    with HippoRAG(namespace=ns, extractor=OfflineExtractor()) as memory:
        memory.drop_namespace()

    queries = [x for kind, v in latencies.items() if kind != "stats" for x in v]
    everything = [x for v in latencies.values() for x in v]
    return {
        "namespace": ns, "seconds": round(wall, 1), "clients": clients,
        "requests": len(everything), "queries": len(queries), "requests_per_s": round(len(everything) / wall, 1),
        "p50_ms": round(percentile(queries, 0.5) * 1000, 1), "p95_ms": round(percentile(queries, 0.95) * 1000, 1),
        "per_kind": {k: {"requests": len(v), "p50_ms": round(percentile(v, 0.5) * 1000, 1),
                         "p95_ms": round(percentile(v, 0.95) * 1000, 1)} for k, v in latencies.items()},
        "errors": len(errors), "error_samples": errors[:10],
        "inconsistent": len(violations), "inconsistent_samples": violations[:10],
        "hung_threads": hung, "writer": wrote, "sentinel_answers": sentinel_seen,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespace", default="eval-musique_train-bge-small-en-v1.5",
                        help="an indexed musique_train namespace, for part 1 (read only)")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--modes", default="hipporag1,hipporag2")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--preload", type=int, default=100)
    parser.add_argument("--batch", type=int, default=5, help="passages per write batch")
    parser.add_argument("--skip", choices=["latency", "concurrency"], help="run only the other part")
    parser.add_argument("--json", dest="json_path")
    args = parser.parse_args()
    port = free_port()
    server = start_server(port, args.namespace)
    base = f"http://127.0.0.1:{port}"
    report: dict[str, Any] = {}
    try:
        if args.skip != "latency":
            report["latency"] = latency(base, args.namespace, args.queries, args.modes.split(","))
            print(json.dumps({"latency": report["latency"]}), flush=True)
        if args.skip != "concurrency":
            report["concurrency"] = concurrency(base, args.seconds, args.clients, args.preload, args.batch)
    finally:
        server.terminate()
        server.wait(30)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json_path:
        Path(args.json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json_path).write_text(text + "\n")
    bad = report.get("concurrency", {})
    failed = bad.get("errors") or bad.get("inconsistent") or bad.get("hung_threads")
    failed = failed or not all(m["target_met"] for m in report.get("latency", {}).values())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
