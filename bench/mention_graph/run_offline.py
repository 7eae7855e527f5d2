"""Every offline (no-LLM) variant on musique_train (+ the case study), per encoder.

    python bench/mention_graph/run_offline.py minilm|bge ['{json base options}'] [group ...]   -> results/offline_<enc>.jsonl
"""
import json, sys, time
import exp
from data import fmt, HEADER, load_corpus, OUT

E0 = dict(syn="tau:0.8")  # the earlier experiment (MiniLM tau 0.8): names, mention 1, top-1, 1/|P_i|, raw mix
GROUPS = {
    "base": [("E0 earlier experiment (syn tau0.8)", E0), ("E0 no synonyms", {"syn": "none"})],
    "syn": [("syn z:7 (= MiniLM tau0.8)", {"syn": "z:7"}), ("syn z:6", {"syn": "z:6"}), ("syn z:8", {"syn": "z:8"}),
            ("syn tau0.8", {"syn": "tau:0.8"}), ("syn tau0.9", {"syn": "tau:0.9"})],
    "mention": [("mention count", {"mention_weight": "count"}), ("mention idf", {"mention_weight": "idf"}),
                ("mention inv_df", {"mention_weight": "inv_df"})],
    "link": [("link top3 cos-weighted", {"link": "topk:3"}), ("no specificity", {"spec": False}),
             ("no phrase seeds (dense-only PPR)", {"link": "none"})],
    "mix": [("pweight 0.05 (hipporag2)", {"pweight": 0.05}), ("pweight 0.2", {"pweight": 0.2}), ("pweight 5", {"pweight": 5.0}),
            ("max-parity (phrase seeds / their max)", {"mix": "parity"}),
            ("lam 0.5 sum-norm", {"mix": "lam:0.5"}), ("lam 0.2 sum-norm", {"mix": "lam:0.2"}),
            ("lam 0.1 sum-norm", {"mix": "lam:0.1"}), ("lam 0.05 sum-norm", {"mix": "lam:0.05"}),
            ("lam 0.01 sum-norm", {"mix": "lam:0.01"}),
            ("raw, pseed zpos", {"pseed": "zpos"}), ("lam 0.5, pseed zpos", {"mix": "lam:0.5", "pseed": "zpos"}),
            ("lam 0.2, pseed zpos", {"mix": "lam:0.2", "pseed": "zpos"}),
            ("lam 0.5, pseed top50", {"mix": "lam:0.5", "pseed": "top:50"}),
            ("lam 0.5, pseed softmax_z", {"mix": "lam:0.5", "pseed": "softmax_z"})],
    "damping": [("damping 0.3", {"damping": 0.3}), ("damping 0.7", {"damping": 0.7}), ("damping 0.85", {"damping": 0.85})],
    "edges": [("cooc 1", {"cooc": 1.0}), ("cooc 1 + pronoun->title", {"cooc": 1.0, "pron": True}),
              ("cooc 0.2", {"cooc": 0.2}),
              ("relations (SVO) on top", {"relations": True})],
    "rank": [("rank mass/degree", {"rank": "mass_deg"})],
    "phrases": [("phrases: no numeric NER", {"phrases": "names_nonum"}), ("phrases: NER only (+title)", {"phrases": "ner"}),
                ("phrases: all noun chunks", {"phrases": "all"})],
}

def case_top5(enc, opts):
    c = load_corpus("case_study_university")
    m, r, g = exp.evaluate(enc, "case_study_university", opts, return_rank=True)
    top = r[0][:5]
    gold_ok = {"sudhof": bool({0, 1} & set(top)), "malenka": bool({2, 3} & set(top))}
    return [c[i]["title"] + f"#{i}" for i in top], gold_ok

def run(enc, groups, base=None):
    base = base or {}
    path = OUT / f"offline_{enc}.jsonl"
    m, _ = exp.dense_eval(enc, "musique_train")
    print(f"{'variant':45s}{HEADER}")
    print(f"{'dense':45s}{fmt(m)}")
    with path.open("a") as f:
        f.write(json.dumps({"enc": enc, "variant": "dense", "metrics": m}) + "\n")
        for gname in groups:
            for name, opts in GROUPS[gname]:
                o = {**base, **opts}
                t = time.time()
                try:
                    m, r, g = exp.evaluate(enc, "musique_train", o, return_rank=True)
                    ct, ok = case_top5(enc, o)
                except AssertionError as e:
                    print(name, "skipped", e); continue
                print(f"{name[:45]:45s}{fmt(m)}  case={'OK' if all(ok.values()) else ok} {g.info} {time.time()-t:.0f}s", flush=True)
                f.write(json.dumps({"enc": enc, "group": gname, "variant": name, "opts": o, "metrics": m, "graph": g.info,
                                    "case_top5": ct, "case_ok": ok}) + "\n")

if __name__ == "__main__":
    enc = sys.argv[1]
    groups = sys.argv[2:] or list(GROUPS)
    base = {}
    if groups and groups[0].startswith("{"):
        base = json.loads(groups[0]); groups = groups[1:] or list(GROUPS)
    run(enc, groups, base)
