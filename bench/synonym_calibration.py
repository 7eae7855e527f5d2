"""The synonym threshold τ of each encoder, calibrated on the encoder's own similarity scale.

HippoRAG links two phrases with a SYNONYM edge when their cosine is at least τ = 0.8, a value chosen for one
encoder. Cosine scales differ between encoders (bge-small's cosines between unrelated phrases run far higher
than MiniLM's), so the same 0.8 means a much looser link under bge. Here τ is carried over as a z-score: for
each encoder, the mean μ and standard deviation σ of the cosine between random pairs of phrases (its null
distribution), and τ = μ + z·σ with z = (0.8 − μ_MiniLM) / σ_MiniLM. Nothing here looks at questions.

    python bench/synonym_calibration.py --json bench/out/synonym_calibration.json
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import numpy as np

from hippo_neo4j.encode import KNOWN_MODELS, load_encoder
from hippo_neo4j.text import normalize_phrase

REFERENCE, REFERENCE_TAU = "all-MiniLM-L6-v2", 0.8


def phrases(openie: Path, n: int, seed: int = 0) -> list[str]:
    """``n`` distinct normalised entity phrases of a HippoRAG OpenIE file, sampled with a fixed seed."""
    docs = json.loads(openie.read_text(encoding="utf-8"))["docs"]
    found = sorted({normalize_phrase(e) for d in docs for e in d.get("extracted_entities") or [] if isinstance(e, str)})
    found = [p for p in found if sum(c.isalnum() for c in p) > 2]
    return random.Random(seed).sample(found, min(n, len(found)))


def null_stats(vectors: np.ndarray, pairs: int = 200_000, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, len(vectors), pairs), rng.integers(0, len(vectors), pairs)
    keep = a != b
    cos = np.einsum("ij,ij->i", vectors[a[keep]], vectors[b[keep]])
    return float(cos.mean()), float(cos.std())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--openie", default="../shared/datasets/musique_train/openie_gpt-3.5-turbo-1106.json")
    parser.add_argument("--phrases", type=int, default=4000)
    parser.add_argument("--json", dest="json_out", default="bench/out/synonym_calibration.json")
    args = parser.parse_args()
    sample = phrases(Path(args.openie), args.phrases)
    stats = {}
    for name in KNOWN_MODELS:
        vectors = load_encoder(name).encode(sample)
        stats[name] = null_stats(np.nan_to_num(vectors))
        print(f"{name}: null cosine mean {stats[name][0]:.4f}, sd {stats[name][1]:.4f}", flush=True)
    mu, sd = stats[REFERENCE]
    z = (REFERENCE_TAU - mu) / sd
    rows = {name: {"mean": m, "sd": s, "tau": m + z * s} for name, (m, s) in stats.items()}
    print(f"\nz = (0.8 - mean) / sd of {REFERENCE} = {z:.2f}\n\n| encoder | null mean | null sd | τ at z |\n|---|---:|---:|---:|")
    for name, row in rows.items():
        print(f"| {name} | {row['mean']:.4f} | {row['sd']:.4f} | {row['tau']:.3f} |")
    out = Path(args.json_out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"z": z, "phrases": len(sample), "encoders": rows}, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
