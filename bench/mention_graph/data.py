"""Datasets, metrics, and the dense baseline helpers shared by every experiment script."""
import json, os
from pathlib import Path
import numpy as np

REPO = Path(__file__).resolve().parents[2]
# caches (extraction, embeddings, query entities, null statistics) and results: outside the source tree
CACHE = Path(os.environ.get("HIPPO_BENCH_CACHE") or REPO / "bench" / "out" / "mention_graph")
OUT = CACHE / "results"
OUT.mkdir(parents=True, exist_ok=True)
# the datasets: $HIPPO_DATASETS, else ../shared/datasets next to the repository (as bench/suite.py)
DS = Path(os.environ.get("HIPPO_DATASETS") or REPO.parent / "shared" / "datasets")

def load_corpus(ds):
    return json.loads((DS / ds / "corpus.json").read_text())

def passage_string(p):
    return p["title"] + "\n" + p["text"]

def load_questions(ds):
    """[(question, [gold corpus indices])]; gold = supporting paragraphs matched by title+text."""
    corpus = load_corpus(ds)
    key = {}
    for i, p in enumerate(corpus):
        key.setdefault((p["title"], p["text"]), i)
    out = []
    for q in json.loads((DS / ds / "questions.json").read_text()):
        gold = []
        for para in q["paragraphs"]:
            if para.get("is_supporting"):
                txt = para.get("paragraph_text", para.get("text"))
                k = (para["title"], txt)
                assert k in key, k
                gold.append(key[k])
        out.append((q["question"], sorted(set(gold))))
    return out

KS = (1, 2, 5, 10)

def metrics(rankings, questions):
    """rankings: list of arrays of corpus indices (best first)."""
    r = {k: [] for k in KS}; ar = {2: [], 5: []}
    for rank, (_, gold) in zip(rankings, questions):
        g = set(gold)
        for k in KS:
            r[k].append(len(g & set(rank[:k])) / len(g))
        for k in ar:
            ar[k].append(float(g <= set(rank[:k])))
    out = {f"R@{k}": 100 * np.mean(v) for k, v in r.items()}
    out.update({f"AR@{k}": 100 * np.mean(v) for k, v in ar.items()})
    return out

def fmt(m):
    return " ".join(f"{m[k]:5.1f}" for k in ("R@1", "R@2", "R@5", "R@10", "AR@2", "AR@5"))
HEADER = "  R@1   R@2   R@5  R@10  AR@2  AR@5"
