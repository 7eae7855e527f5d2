"""The HTTP API (``hippo serve``) against the library: p50 ms of ``POST /query`` and of ``HippoRAG.query`` in this
process (hipporag1 and hipporag2, query entities given to both), alternating question by question; then
``--clients`` HTTP clients on a scratch namespace for ``--seconds`` while a writer, over HTTP too, indexes,
re-indexes, deletes and toggles a sentinel passage, every answer checked against the writer's ledger
(``common.Ledger``). The figures and the checks: docs/serving.md.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import uuid
from typing import Any

import httpx
from common import (ROOT, SENTINEL, LoadStats, Query, Steps, Workload, musique_docs, namespace_questions, run_load,
                    write_json)

from hippo_neo4j import HippoRAG


def start_server(port: int, namespace: str) -> subprocess.Popen:
    command = [sys.executable, "-c", "from hippo_neo4j.cli import main; main()", "serve", "--port", str(port),
               "--namespace", namespace, "--extractor", "offline", "--log-level", "warning"]
    process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL)  # in the checkout: -c imports its library
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


def latency(base: str, namespace: str, extractor: Any, questions: list[Query]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    client = Http(base, namespace)
    with HippoRAG(namespace=namespace, extractor=extractor) as memory:
        for mode in ("hipporag1", "hipporag2"):
            def ranked_by(side: str, q: Query) -> list[str]:
                body = {"query": q.text, "mode": mode, "entities": q.entities, "top_k": 10, "recognition_filter": False}
                if side == "http":
                    return [pid for pid, _, _ in client.ask(body)[0]]
                return [p.id for p in memory.query(body.pop("query"), **body).passages]

            for q in questions[:3]:
                ranked_by("library", q), ranked_by("http", q)
            steps, same = Steps("library", "http"), 0
            for i, q in enumerate(questions):
                order = ("library", "http") if i % 2 == 0 else ("http", "library")  # neither always first
                ranked = {side: steps(side, lambda side=side: ranked_by(side, q)) for side in order}
                same += ranked["library"] == ranked["http"]
            lib, web = steps.medians()["library"], steps.medians()["http"]
            out[mode] = {"queries": len(questions), "library_p50_ms": round(lib, 1), "http_p50_ms": round(web, 1),
                         "overhead_ms": round(web - lib, 1), "target_met": web <= lib + 5, "same_ranking": same}
    return out


class Http:
    """The scratch namespace through ``hippo serve`` (a target of ``common.run_load``), over one keep-alive client."""

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
        self.post("/index", {"passages": [d.model_dump() for d in docs]})

    def delete(self, ids: list[str]) -> None:
        self.post("/delete", {"ids": ids})

    def count(self) -> int:
        return self.request("GET", "/stats", params={"namespace": self.ns})["passages"]

    def ask(self, body: dict[str, Any]) -> tuple[list[tuple[str, str, bool]], int | None]:
        return [(p["id"], p["text"], p["filled"]) for p in self.post("/query", body)["passages"]], None


def concurrency(base: str, extractor: Any, seconds: float, clients: int) -> dict[str, Any]:
    ns = f"bench-http-{uuid.uuid4().hex[:6]}"
    stats = LoadStats(("hipporag1", "dense", "sentinel", "hipporag2", "bm25"))
    workload = Workload(batch=5, update_every=2, delete_every=1, deletes=2, sentinel=SENTINEL)
    report = {"namespace": ns} | run_load(lambda: Http(base, ns), musique_docs(), stats, workload, preload=100,
                                          clients=clients, count_every=11, done=lambda elapsed: elapsed >= seconds,
                                          deadline_s=seconds)
    with HippoRAG(namespace=ns, extractor=extractor) as memory:
        memory.drop_namespace()
    return report


def main() -> None:
    def options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--seconds", type=float, default=60)
        p.add_argument("--clients", type=int, default=8)
        p.add_argument("--skip", choices=["latency", "concurrency"], help="run only the other part")
        p.add_argument("--json", dest="json_path")

    args, extractor, questions = namespace_questions(__doc__, 60, options)
    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = start_server(port, args.namespace)
    base = f"http://127.0.0.1:{port}"
    report: dict[str, Any] = {}
    try:
        if args.skip != "latency":
            report["latency"] = latency(base, args.namespace, extractor, questions)
            print(json.dumps({"latency": report["latency"]}), flush=True)
        if args.skip != "concurrency":
            report["concurrency"] = concurrency(base, extractor, args.seconds, args.clients)
    finally:
        server.terminate()
        server.wait(30)
    print(json.dumps(report, indent=2))
    if args.json_path:
        write_json(args.json_path, report)
    bad = report.get("concurrency", {})
    failed = bad.get("errors") or bad.get("violations") or bad.get("hung_threads")
    failed = failed or not all(m["target_met"] for m in report.get("latency", {}).values())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
