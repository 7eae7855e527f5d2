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
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

import httpx
from common import (MUSIQUE, ROOT, Ledger, LoadStats, Sentinel, Workload, default_datasets_dir, ms, musique_docs, query_loop,
                    run_until, write_json, write_loop)

from hippo_neo4j import HippoRAG
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.extract.offline import OfflineExtractor
from hippo_neo4j.models import as_passage

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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------- part 1


def latency(base: str, namespace: str, queries: int, modes: list[str]) -> dict[str, Any]:
    extractor = OfflineExtractor()
    questions = load_dataset(default_datasets_dir() / MUSIQUE).questions[:queries]
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


class Http:
    """The scratch namespace through ``hippo serve`` (``common.Target``), over one keep-alive client."""

    def __init__(self, base: str, ns: str) -> None:
        self.client, self.ns = httpx.Client(base_url=base, timeout=120), ns

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.client.post(path, json={"namespace": self.ns, **body})
        if response.status_code != 200:
            raise RuntimeError(f"{path} {response.status_code}: {response.text[:200]}")
        return response.json()

    def index(self, docs: list) -> None:
        self.post("/index", {"passages": [passage_json(d) for d in docs]})

    def delete(self, ids: list[str]) -> None:
        self.post("/delete", {"ids": ids})

    def count(self) -> int:
        response = self.client.get("/stats", params={"namespace": self.ns})
        if response.status_code != 200:
            raise RuntimeError(f"/stats {response.status_code}: {response.text[:200]}")
        return response.json()["passages"]

    def query(self, body: dict[str, Any]) -> tuple[list[tuple[str, str, bool]], int | None]:
        return [(p["id"], p["text"], p["filled"]) for p in self.post("/query", body)["passages"]], None


def ask(kind: str, doc: Any) -> dict[str, Any]:
    if kind == "sentinel":
        return {"query": f"{SENTINEL_WORD} gate", "mode": "bm25", "top_k": 3}
    if kind in ("hipporag1", "hipporag2"):
        entities = [e for e in doc.extraction.named_entities if e.strip()][:4] or [doc.title]
        return {"query": doc.text[:300], "mode": kind, "top_k": 5, "entities": entities, "filter": False}
    return {"query": doc.text[:300], "mode": kind, "top_k": 5}


def concurrency(base: str, seconds: float, clients: int, preload: int, batch: int) -> dict[str, Any]:
    ns = f"bench-http-{uuid.uuid4().hex[:6]}"
    docs = musique_docs()
    sentinel = Sentinel(as_passage({"id": "sentinel", "title": "Sentinel", "text": f"The {SENTINEL_WORD} guards the gate.",
                                    "extraction": {"named_entities": [SENTINEL_WORD],
                                                   "triples": [[SENTINEL_WORD, "guards", "gate"]]}}))
    ledger, stats, stop = Ledger(), LoadStats(("hipporag1", "dense", "sentinel", "hipporag2", "bm25")), threading.Event()
    admin = Http(base, ns)
    seed, stream = docs[:preload], docs[preload:]
    admin.index(seed)
    ledger.preloaded(seed)
    ledger.versions["sentinel"] = {sentinel.doc.text}
    workload = Workload(batch=batch, update_every=2, delete_every=1, deletes=2, sentinel=sentinel)
    by_id = {d.passage_id: d for d in docs}
    threads = [threading.Thread(target=write_loop, args=(Http(base, ns), stream, by_id, ledger, workload, stop, stats),
                                name="writer")]
    threads += [threading.Thread(target=query_loop, args=(Http(base, ns), docs[: preload + 200], ledger, stats, ask, 11,
                                                          stop, k, sentinel), name=f"client-{k}") for k in range(clients)]
    wall, _, hung = run_until(threads, stop, lambda elapsed: elapsed >= seconds, seconds)
    admin.client.close()
    with HippoRAG(namespace=ns, extractor=OfflineExtractor()) as memory:
        memory.drop_namespace()

    latencies = {("stats" if k == "count" else k): v for k, v in stats.latencies.items()}
    queries = [x for kind, v in latencies.items() if kind != "stats" for x in v]
    everything = [x for v in latencies.values() for x in v]
    return {
        "namespace": ns, "seconds": round(wall, 1), "clients": clients,
        "requests": len(everything), "queries": len(queries), "requests_per_s": round(len(everything) / wall, 1),
        "p50_ms": ms(queries, 50), "p95_ms": ms(queries, 95),
        "per_kind": {k: {"requests": len(v), "p50_ms": ms(v, 50), "p95_ms": ms(v, 95)} for k, v in latencies.items()},
        "errors": len(stats.errors), "error_samples": stats.errors[:10],
        "inconsistent": len(stats.violations), "inconsistent_samples": stats.violations[:10],
        "hung_threads": hung, "writer": stats.wrote, "sentinel_answers": stats.sentinel,
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
    print(json.dumps(report, indent=2))
    if args.json_path:
        write_json(args.json_path, report)
    bad = report.get("concurrency", {})
    failed = bad.get("errors") or bad.get("inconsistent") or bad.get("hung_threads")
    failed = failed or not all(m["target_met"] for m in report.get("latency", {}).values())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
