"""Combinations around the recommended design (named variants), both encoders, musique + case study.
    EMB_READONLY=1 python bench/mention_graph/run_combo.py minilm|bge [NAME ...]   -> results/combo_<enc>.jsonl"""
import json, sys, time
import exp
from run_offline import case_top5, OUT
from data import fmt, HEADER

REC = {"mix": "lam:0.5", "pseed": "zpos", "syn": "z:7", "cooc": 1.0, "pron": True}
COMBOS = {
    "REC": REC,
    "REC no syn": {**REC, "syn": "none"},
    "REC no cooc": {**REC, "cooc": 0.0, "pron": False},
    "REC no pron": {**REC, "pron": False},
    "REC cooc 0.5": {**REC, "cooc": 0.5},
    "REC no specificity": {**REC, "spec": False},
    "REC pseed minmax": {**REC, "pseed": "minmax"},
    "REC lam 0.2": {**REC, "mix": "lam:0.2"},
    "REC lam 0.8": {**REC, "mix": "lam:0.8"},
    "REC damping 0.3": {**REC, "damping": 0.3},
    "REC damping 0.7": {**REC, "damping": 0.7},
    "REC rank mass/degree": {**REC, "rank": "mass_deg"},
    "REC mention idf": {**REC, "mention_weight": "idf"},
    "REC mention count": {**REC, "mention_weight": "count"},
    "REC syn z:8": {**REC, "syn": "z:8"},
    "REC syn z:6": {**REC, "syn": "z:6"},
    "REC + relations": {**REC, "relations": True},
    "REC phrases no numeric": {**REC, "phrases": "names_nonum"},
    "REC phrases NER only": {**REC, "phrases": "ner"},
    "REC phrases all chunks": {**REC, "phrases": "all"},
    "REC raw mix (E0 style)": {**REC, "mix": "raw", "pseed": "minmax"},
    "REC pweight .05 raw": {**REC, "mix": "raw", "pseed": "minmax", "pweight": 0.05},
    "REC link top3": {**REC, "link": "topk:3"},
}

if __name__ == "__main__":
    enc = sys.argv[1]; names = sys.argv[2:] or list(COMBOS)
    m, _ = exp.dense_eval(enc, "musique_train")
    print(f"{'variant':30s}{HEADER}\n{'dense':30s}{fmt(m)}")
    with (OUT / f"combo_{enc}.jsonl").open("a") as f:
        for n in names:
            o = COMBOS[n]; t = time.time()
            try:
                m, r, g = exp.evaluate(enc, "musique_train", o, return_rank=True); ct, ok = case_top5(enc, o)
            except AssertionError as e:
                print(n, "skipped:", e); continue
            print(f"{n:30s}{fmt(m)} case={'OK' if all(ok.values()) else ok} {ct} {g.info} {time.time()-t:.0f}s", flush=True)
            f.write(json.dumps({"enc": enc, "variant": n, "opts": o, "metrics": m, "graph": g.info, "case_top5": ct, "case_ok": ok}) + "\n")
