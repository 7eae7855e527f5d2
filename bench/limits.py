"""The most one request may cost: ``POST /query`` of ``hippo serve`` at every limit of ``hippo_neo4j/limits.py`` at
once (a question of the most characters, made of words of the corpus so that every run of them is looked up among
the phrases; the most entities, each of the most characters; the largest top_k), with every mode, without and with
the entities; the slowest answer of each mode in seconds. And what just over a limit costs: the refusal's
milliseconds. The figures: docs/serving.md ("Limits").

    python bench/limits.py --namespace eval-musique_train-offline-bge-small-en-v1.5
"""

from __future__ import annotations

import json
import random
import time

import httpx
from common import musique_docs, parser
from http_api import start_server

from hippo_neo4j import limits


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--namespace", required=True, help="an indexed namespace of musique_train")
    p.add_argument("--port", type=int, default=18770)
    args = p.parse_args()
    rng = random.Random(1)
    words = " ".join(d.text for d in musique_docs()[:400]).split()
    text = ""
    while len(text) < limits.QUERY_CHARS:
        text += rng.choice(words) + " "
    text = text[: limits.QUERY_CHARS]
    entities = [" ".join(rng.choice(words) for _ in range(100))[: limits.ENTITY_CHARS] for _ in range(limits.ENTITIES)]
    server = start_server(args.port, args.namespace)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{args.port}", timeout=600) as client:
            modes = [m["name"] for m in client.get("/modes").json()]
            worst: dict[str, float] = {}
            for mode in modes:
                for extra in ({}, {"entities": entities}):
                    began = time.perf_counter()
                    answer = client.post("/query", json={"query": text, "mode": mode, "top_k": limits.TOP_K} | extra)
                    assert answer.status_code == 200, answer.text[:300]
                    worst[mode] = max(worst.get(mode, 0.0), time.perf_counter() - began)
            refused: dict[str, float] = {}
            for name, body in (("query characters + 1", {"query": text + "x"}),
                               ("10,000 entities", {"query": "x", "entities": [f"e{i}" for i in range(10_000)]}),
                               ("top_k + 1", {"query": "x", "top_k": limits.TOP_K + 1})):
                began = time.perf_counter()
                answer = client.post("/query", json=body)
                assert 400 <= answer.status_code < 500, answer.text[:300]
                refused[name] = round((time.perf_counter() - began) * 1000, 1)
    finally:
        server.terminate()
        server.wait(60)
    print(json.dumps({"slowest answer at the limits, s": {m: round(s, 2) for m, s in worst.items()},
                      "refused just over a limit, ms": refused}, indent=2))


if __name__ == "__main__":
    main()
