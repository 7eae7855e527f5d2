"""The HTTP API (``hippo serve``) against the library, and under concurrent load with a writer.

    python bench/http_api.py --namespace eval-musique_train-bge-small-en-v1.5 [--queries 60] [--seconds 60]
        [--clients 8] [--json bench/out/http_api.json]

Part 1, latency: p50 ms of ``POST /query`` (a keep-alive client, the JSON parsed) against p50 of
``HippoRAG.query`` in this process, for hipporag1 and hipporag2 on musique_train questions, with the query
entities extracted beforehand and sent the same way to both; library and HTTP calls alternate question by
question (after 3 warm-up queries each), so drift in the machine's load hits both alike.

Part 2, concurrency: ``--clients`` HTTP clients query a scratch namespace for ``--seconds`` while a writer,
also over HTTP, indexes musique_train passages in batches of 5 (after 100 preloaded), and after every batch
deletes two passages, toggles a sentinel passage and, every second batch, re-indexes two with new text.
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

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from typing import Any, Sequence

import httpx
from common import (MUSIQUE, ROOT, LoadStats, Sentinel, Steps, Workload, default_datasets_dir, ms, musique_docs, parser,
                    run_load, write_json)

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


def latency(base: str, namespace: str, queries: int, modes: Sequence[str]) -> dict[str, Any]:
    extractor = OfflineExtractor()
    asked = [(q.question, extractor.query_entities(q.question))
             for q in load_dataset(default_datasets_dir() / MUSIQUE).questions[:queries]]
    out: dict[str, Any] = {}
    with HippoRAG(namespace=namespace, extractor=extractor) as memory, \
            httpx.Client(base_url=base, timeout=60) as client:
        for mode in modes:
            def library(text: str, entities: list[str]) -> list[str]:
                result = memory.query(text, mode=mode, entities=entities, top_k=10, filter=False)
                return [p.id for p in result.passages]

            def http(text: str, entities: list[str]) -> list[str]:
                response = client.post("/query", json={"query": text, "mode": mode, "entities": entities,
                                                       "top_k": 10, "filter": False})
                response.raise_for_status()
                return [p["id"] for p in response.json()["passages"]]

            sides = {"library": library, "http": http}
            for text, entities in asked[:3]:
                library(text, entities), http(text, entities)
            steps, same = Steps("library", "http"), 0
            for i, (text, entities) in enumerate(asked):
                order = ("library", "http") if i % 2 == 0 else ("http", "library")  # neither always first
                ranked = {side: steps(side, lambda side=side: sides[side](text, entities)) for side in order}
                same += ranked["library"] == ranked["http"]
            lib, web = steps.medians()["library"], steps.medians()["http"]
            out[mode] = {"queries": len(asked), "library_p50_ms": round(lib, 1), "http_p50_ms": round(web, 1),
                         "overhead_ms": round(web - lib, 1), "target_met": web <= lib + 5, "same_ranking": same}
    return out


class Http:
    """The scratch namespace through ``hippo serve`` (``common.Target``), over one keep-alive client."""

    def __init__(self, base: str, ns: str) -> None:
        self.client, self.ns = httpx.Client(base_url=base, timeout=120), ns

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self.client.request(method, path, **kwargs)
        if response.status_code != 200:
            raise RuntimeError(f"{path} {response.status_code}: {response.text[:200]}")
        return response.json()

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", path, json={"namespace": self.ns, **body})

    def index(self, docs: list) -> None:
        self.post("/index", {"passages": [{"id": d.passage_id, "title": d.title, "text": d.text, "extraction":
                                           d.extraction.model_dump() if d.extraction else None} for d in docs]})

    def delete(self, ids: list[str]) -> None:
        self.post("/delete", {"ids": ids})

    def count(self) -> int:
        return self.request("GET", "/stats", params={"namespace": self.ns})["passages"]

    def query(self, body: dict[str, Any]) -> tuple[list[tuple[str, str, bool]], int | None]:
        return [(p["id"], p["text"], p["filled"]) for p in self.post("/query", body)["passages"]], None


def ask(kind: str, doc: Any) -> dict[str, Any]:
    if kind == "sentinel":
        return {"query": f"{SENTINEL_WORD} gate", "mode": "bm25", "top_k": 3}
    if kind in ("hipporag1", "hipporag2"):
        entities = [e for e in doc.extraction.named_entities if e.strip()][:4] or [doc.title]
        return {"query": doc.text[:300], "mode": kind, "top_k": 5, "entities": entities, "filter": False}
    return {"query": doc.text[:300], "mode": kind, "top_k": 5}


def concurrency(base: str, seconds: float, clients: int) -> dict[str, Any]:
    ns = f"bench-http-{uuid.uuid4().hex[:6]}"
    sentinel = Sentinel(as_passage({
        "id": "sentinel", "title": "Sentinel", "text": f"The {SENTINEL_WORD} guards the gate.",
        "extraction": {"named_entities": [SENTINEL_WORD], "triples": [[SENTINEL_WORD, "guards", "gate"]]}}))
    stats = LoadStats(("hipporag1", "dense", "sentinel", "hipporag2", "bm25"))
    workload = Workload(batch=5, update_every=2, delete_every=1, deletes=2, sentinel=sentinel)
    wall, _, hung = run_load(lambda: Http(base, ns), musique_docs(), stats, workload, ask, preload=100,
                             clients=clients, count_every=11, done=lambda elapsed: elapsed >= seconds,
                             deadline_s=seconds)
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
    p = parser(__doc__)
    p.add_argument("--namespace", default="eval-musique_train-bge-small-en-v1.5",
                   help="an indexed musique_train namespace, for part 1 (read only)")
    p.add_argument("--queries", type=int, default=60)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--skip", choices=["latency", "concurrency"], help="run only the other part")
    p.add_argument("--json", dest="json_path")
    args = p.parse_args()
    port = free_port()
    server = start_server(port, args.namespace)
    base = f"http://127.0.0.1:{port}"
    report: dict[str, Any] = {}
    try:
        if args.skip != "latency":
            report["latency"] = latency(base, args.namespace, args.queries, ("hipporag1", "hipporag2"))
            print(json.dumps({"latency": report["latency"]}), flush=True)
        if args.skip != "concurrency":
            report["concurrency"] = concurrency(base, args.seconds, args.clients)
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
