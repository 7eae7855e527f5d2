"""Encoder throughput on a dataset's texts: passages, phrases and facts (texts/s), one-query latency (p50 ms),
cold load time (a fresh process: import, load, first vector), and dense passage recall of the questions; phrases
are the OpenIE file's normalised entities and facts its triples, 3,000 of each (fixed seed). The figures and how
they are measured: docs/encoders.md.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
from common import MUSIQUE, ROOT, Steps, default_datasets_dir, parser, table, write_json

from hippo_neo4j.encode import load_encoder
from hippo_neo4j.encode.onnx import available_cores
from hippo_neo4j.evaluation import load_dataset, percentile
from hippo_neo4j.text import normalize_phrase

ENCODERS = ("bge-small-en-v1.5", "bge-small-en-v1.5-q", "all-MiniLM-L6-v2", "all-MiniLM-L6-v2-q")


def load_texts(dataset: Path, sample: int = 3000, seed: int = 0) -> dict:
    data = load_dataset(dataset)
    docs = json.loads(data.openie.read_text())["docs"]
    phrases = sorted({normalize_phrase(e) for d in docs for e in d.get("extracted_entities", [])} - {""})
    facts = sorted({" ".join(map(str, t)) for d in docs for t in d.get("extracted_triples", []) if t})
    rng = random.Random(seed)
    index = {p.passage_id: i for i, p in enumerate(data.passages)}
    return {
        "passages": [p.full_text for p in data.passages],
        "phrases": rng.sample(phrases, min(sample, len(phrases))),
        "facts": rng.sample(facts, min(sample, len(facts))),
        "queries": [q.question for q in data.questions],
        "gold": [{index[pid] for pid in q.gold} for q in data.questions],
        "sizes": {"phrases_distinct": len(phrases), "facts_distinct": len(facts)},
    }


def cold_load(name: str, repeats: int) -> float:
    """Median seconds for a fresh process to import the encoder, load it and embed one text."""
    code = ("import time; t = time.perf_counter(); from hippo_neo4j.encode import load_encoder; "
            f"load_encoder({name!r}).encode(['warm up']); print(time.perf_counter() - t)")
    runs = []
    for _ in range(repeats):  # in the checkout: ``-c`` imports its library
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
        runs.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(runs)


def recall(query_vectors: np.ndarray, passage_vectors: np.ndarray, gold: list[set[int]], k: int) -> float:
    scores = np.nan_to_num(query_vectors) @ np.nan_to_num(passage_vectors).T
    top = np.argsort(-scores, axis=1)[:, :k]
    return float(np.mean([len(g & set(row.tolist())) / len(g) for g, row in zip(gold, top) if g]))


def bench(name: str, texts: dict, repeats: int) -> dict:
    encoder = load_encoder(name)
    encoder.encode(["fetch and warm up"] * 4)  # fetched once, outside the timings
    result: dict = {"encoder": name, "dimension": encoder.dimension, "fingerprint": encoder.fingerprint}
    result["load_s"] = cold_load(name, repeats)
    steps, kinds = Steps(), ("passages", "phrases", "facts")
    vectors = {kind: steps(kind, lambda kind=kind: encoder.encode(texts[kind])) for kind in kinds}
    for kind in vectors:
        result[f"{kind}_per_s"] = len(texts[kind]) / steps.samples[kind][0] * 1000
        result[f"{kind}_n"] = len(texts[kind])
    encoder.encode_queries(texts["queries"][:3])
    queries = np.vstack([steps("query", lambda q=q: encoder.encode_queries([q])[0]) for q in texts["queries"]])
    result["query_p50_ms"], result["query_p90_ms"] = (percentile(steps.samples["query"], q) for q in (50, 90))
    for k in (2, 5):
        result[f"recall@{k}"] = recall(queries, vectors["passages"], texts["gold"], k)
    result["passage_vectors"] = vectors["passages"]
    print(f"{name}: done", file=sys.stderr, flush=True)
    return result


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--dataset", default=str(default_datasets_dir() / MUSIQUE))
    p.add_argument("--encoders", default=",".join(ENCODERS), help="comma-separated encoder names")
    p.add_argument("--st", action="store_true", help="also sentence-transformers all-MiniLM-L6-v2 (torch)")
    p.add_argument("--json", default=str(ROOT / "bench" / "out" / "encoders.json"))
    args = p.parse_args()
    texts = load_texts(Path(args.dataset))
    names = [n for n in args.encoders.split(",") if n] + (["st:all-MiniLM-L6-v2"] if args.st else [])
    load_before = os.getloadavg()[0]
    results = [bench(name, texts, repeats=3) for name in names]
    by_name = {r["encoder"]: r.pop("passage_vectors") for r in results}
    agreement = {}
    for variant, vectors in by_name.items():  # int8 and sentence-transformers against the ONNX fp32 model
        full = variant.removeprefix("st:").removesuffix("-q")
        if full != variant and full in by_name:
            cosines = (vectors * by_name[full]).sum(axis=1)
            agreement[f"{variant} vs {full}"] = {"mean": float(cosines.mean()), "min": float(cosines.min())}
    print("\n".join(table(
        ["encoder", "passages/s", "phrases/s", "facts/s", "query p50 ms", "load s", "recall@2", "recall@5"],
        ([r["encoder"], f"{r['passages_per_s']:.0f}", f"{r['phrases_per_s']:.0f}", f"{r['facts_per_s']:.0f}",
          f"{r['query_p50_ms']:.1f}", f"{r['load_s']:.2f}", f"{r['recall@2']:.3f}", f"{r['recall@5']:.3f}"]
         for r in results))))
    print(f"\n{len(texts['passages'])} passages, {len(texts['phrases'])} phrases, {len(texts['facts'])} facts, "
          f"{len(texts['queries'])} queries; {available_cores()} cores; "
          f"load average {load_before:.1f} -> {os.getloadavg()[0]:.1f}")
    for pair, cos in agreement.items():
        print(f"passage cosine {pair}: mean {cos['mean']:.5f}, min {cos['min']:.5f}")
    out = write_json(args.json, {
        "dataset": args.dataset, "sample": 3000, "seed": 0, "cores": available_cores(),
        "load_average": [load_before, os.getloadavg()[0]], "sizes": texts["sizes"],
        "results": results, "passage_agreement": agreement})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
