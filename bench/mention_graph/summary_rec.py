"""Recommended mode (D1) and its co-occurrence option (D2): musique metrics, case-study top 5, graph sizes.
    EMB_READONLY=1 python bench/mention_graph/summary_rec.py   -> results/summary_rec.jsonl"""
import exp, json
from run_offline import case_top5, OUT
from data import fmt
D1 = {"mix": "lam:0.5", "pseed": "zpos", "dedupe": True}
D2 = {**D1, "cooc": 1.0, "pron": True}
VARS = {"D1": D1, "D2 (D1 + sentence co-occurrence + pronoun->title)": D2, "D1 + syn z:7": {**D1, "syn": "z:7"},
        "D1 on GPT-3.5 mention graph": {**D1, "source": "gpt"}}
with (OUT / "summary_rec.jsonl").open("a") as f:
    for enc in ("bge", "minilm"):
        print(enc, "dense", fmt(exp.dense_eval(enc, "musique_train")[0]))
        for n, o in VARS.items():
            m, r, g = exp.evaluate(enc, "musique_train", o, return_rank=True)
            ct, ok = case_top5(enc, {**o, "source": "offline"})
            gc = exp.build(enc, "case_study_university", {**exp.DEFAULT, **o, "source": "offline"}).info
            print(f"{enc} {n:50s}{fmt(m)}\n   graph {g.info}\n   case {ok} {ct} case-graph {gc}", flush=True)
            f.write(json.dumps({"enc": enc, "variant": n, "opts": o, "metrics": m, "graph": g.info, "case_top5": ct, "case_ok": ok}) + "\n")
