"""GPT-3.5 OpenIE setting on musique_train: hipporag1/hipporag2 (repo formulas), the hipporag2 diagnosis and
fixes, and the mention-graph mode built from the file (named entities + triple arguments + title).

    python bench/mention_graph/run_gpt.py minilm|bge   -> results/gpt_<enc>.jsonl
"""
import json, sys
import numpy as np
import exp, hr2
from data import fmt, HEADER, OUT


def diagnose(enc, o=None):
    """Top-1 anatomy: share of questions whose top-1 passage receives most of its mass from phrase seeds
    (inflow) rather than its own dense seed, gold rate of top-1 by that split, and mean degree of top-1."""
    m, ranks, g, S, p = hr2.hipporag2(enc, o, return_rank=True)
    qs, dense, _ = exp.query_data(enc, "musique_train")
    d = 0.5
    own = (1 - d) * S[g.N:]
    mass = p[g.N:]
    rows = []
    for q, (_, gold) in enumerate(qs):
        top = ranks[q][0]
        graph_share = 1 - own[top, q] / mass[top, q]
        drank = int(np.where(np.argsort(-dense[:, q]) == top)[0][0])
        rows.append((graph_share > 0.5, top in gold, g.degree[g.N + top], drank,
                     int(np.argmax(dense[:, q])) in gold))
    rows = np.array(rows, dtype=float)
    mean_deg = float(np.mean(g.degree[g.N:]))
    graph_led = rows[:, 0] == 1
    return {
        "top1_graph_led_share": 100 * graph_led.mean(),
        "top1_gold_when_graph_led": 100 * rows[graph_led, 1].mean() if graph_led.any() else None,
        "top1_gold_when_dense_led": 100 * rows[~graph_led, 1].mean() if (~graph_led).any() else None,
        "dense_top1_gold_on_graph_led_questions": 100 * rows[graph_led, 4].mean() if graph_led.any() else None,
        "top1_mean_degree": float(rows[:, 2].mean()), "corpus_mean_passage_degree": mean_deg,
        "top1_median_dense_rank": float(np.median(rows[:, 3])),
        "max_phrase_seed_mean": float(S[:g.N].max(0).mean()), "max_passage_seed_mean": float(S[g.N:].max(0).mean()),
        "phrase_seed_total_mean": float(S[:g.N].sum(0).mean()), "passage_seed_total_mean": float(S[g.N:].sum(0).mean()),
    }

HR2 = [
    ("hipporag2 (repo defaults: pweight .05)", {}),
    ("hr2 pweight 0.1", {"pweight": 0.1}), ("hr2 pweight 0.2", {"pweight": 0.2}), ("hr2 pweight 0.5", {"pweight": 0.5}),
    ("hr2 pweight 1", {"pweight": 1.0}),
    ("hr2 rank mass/degree", {"rank": "mass_deg"}),
    ("hr2 no specificity", {"spec": False}),
    ("hr2 lam0.5 sum-norm", {"mix": "lam:0.5"}),
    ("hr2 max-parity (pweight = max phrase seed)", {"mix": "parity"}),
    ("hr2 max-parity, no specificity", {"mix": "parity", "spec": False}),
    ("hr2 pseed zpos pweight .05", {"pseed": "zpos"}),
    ("hr2 top-3 phrases", {"top_phrases": 3}),
    ("hr2 lam0.5 sum-norm, pseed zpos", {"mix": "lam:0.5", "pseed": "zpos"}),
    ("hr2 lam0.2 sum-norm, pseed zpos", {"mix": "lam:0.2", "pseed": "zpos"}),
    ("hr2 lam0.5 zpos, no specificity", {"mix": "lam:0.5", "pseed": "zpos", "spec": False}),
    ("hr2 max-parity, pseed zpos", {"mix": "parity", "pseed": "zpos"}),
]

def run(enc):
    path = OUT / f"gpt_{enc}.jsonl"
    with path.open("a") as f:
        def log(name, m, extra=None):
            print(f"{name[:50]:50s}{fmt(m)} {extra or ''}", flush=True)
            f.write(json.dumps({"enc": enc, "variant": name, "metrics": m, **({"extra": extra} if extra else {})}) + "\n")
        print(f"{'variant':50s}{HEADER}")
        log("dense", exp.dense_eval(enc, "musique_train")[0])
        log("hipporag1 (repo)", hr2.hipporag1(enc))
        for name, o in HR2:
            log(name, hr2.hipporag2(enc, o))
        for name, o in [("diag repo", {}), ("diag max-parity", {"mix": "parity"})]:
            d = diagnose(enc, o)
            print(name, json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in d.items()}))
            f.write(json.dumps({"enc": enc, "variant": name, "diag": d}) + "\n")
        g = hr2.triple_graph(enc)
        print("triple graph", g.info)
        f.write(json.dumps({"enc": enc, "variant": "triple graph size", "graph": g.info}) + "\n")
        # mention graph from the GPT file
        for name, o in MENTION:
            m, r, gg = exp.evaluate(enc, "musique_train", {"source": "gpt", **o}, return_rank=True)
            log("mention-graph(gpt) " + name, m, gg.info)

REC = {"mix": "lam:0.5", "pseed": "zpos", "syn": "z:7"}
MENTION = [("E0-style raw, no syn", {}), ("raw, syn tau0.8", {"syn": "tau:0.8"}),
           ("lam0.5 zpos, no syn", {"mix": "lam:0.5", "pseed": "zpos"}),
           ("REC: lam0.5 zpos syn z:7", REC),
           ("REC + relations (GPT triples)", {**REC, "relations": True}),
           ("REC + passage-level cooc 1", {**REC, "cooc": 1.0}),
           ("REC no specificity", {**REC, "spec": False}),
           ("REC mention idf", {**REC, "mention_weight": "idf"})]

if __name__ == "__main__":
    run(sys.argv[1])
