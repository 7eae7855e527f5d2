"""The synonym threshold τ of each encoder, calibrated on the encoder's own similarity scale (docs/encoders.md):
per encoder, the mean μ and deviation σ of the cosine between random pairs of phrases, and τ = μ + z·σ with
z = (0.8 − μ_MiniLM) / σ_MiniLM, HippoRAG's 0.8 carried over as a z-score. Nothing here looks at questions.

    python bench/synonym_calibration.py --json bench/out/synonym_calibration.json
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
from common import MUSIQUE, default_datasets_dir, parser, table, write_json

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
    p = parser(__doc__)
    p.add_argument("--json", dest="json_out", default="bench/out/synonym_calibration.json")
    args = p.parse_args()
    sample = phrases(default_datasets_dir() / MUSIQUE / "openie_gpt-3.5-turbo-1106.json", 4000)
    stats = {}
    for name in KNOWN_MODELS:
        stats[name] = null_stats(np.nan_to_num(load_encoder(name).encode(sample)))
        print(f"{name}: null cosine mean {stats[name][0]:.4f}, sd {stats[name][1]:.4f}", flush=True)
    mu, sd = stats[REFERENCE]
    z = (REFERENCE_TAU - mu) / sd
    rows = {name: {"mean": m, "sd": s, "tau": m + z * s} for name, (m, s) in stats.items()}
    print(f"\nz = (0.8 - mean) / sd of {REFERENCE} = {z:.2f}\n")
    print("\n".join(table(["encoder", "null mean", "null sd", "τ at z"], (
        [name, f"{r['mean']:.4f}", f"{r['sd']:.4f}", f"{r['tau']:.3f}"] for name, r in rows.items()))))
    write_json(args.json_out, {"z": z, "phrases": len(sample), "encoders": rows})


if __name__ == "__main__":
    main()
