"""hipporag2 top-of-ranking anatomy (GPT-3.5 graph): where does the top-1 passage come from?
    python bench/mention_graph/diag_hr2.py minilm|bge"""
import hr2, exp, sys
import numpy as np
from collections import defaultdict
enc = sys.argv[1]
m, ranks, g, S, p = hr2.hipporag2(enc, {}, return_rank=True)
qs, dense, _ = exp.query_data(enc, "musique_train")
st = exp.store(enc)
qv = st.queries([q for q, _ in qs]); fc = g.fact_vecs @ qv.T
src = defaultdict(set)
for j, d in enumerate(exp.gpt_docs()):
    for t in exp.valid_triples(d.get("extracted_triples")):
        src[t].add(j)
rows = []
for q, (_, gold) in enumerate(qs):
    order = np.argsort(-fc[:, q])[:5]
    f_src = [src[g.facts[f]] for f in order]
    top = ranks[q][0]; dtop = int(np.argmax(dense[:, q]))
    seeded = np.nonzero(S[:g.N, q])[0]
    seed_pass = set(g.M[seeded].nonzero()[1])
    rows.append(dict(h_gold=top in gold, d_gold=dtop in gold, top_is_fact1_src=top in f_src[0],
                     top_in_seed_passages=top in seed_pass, fact1_src_gold=bool(f_src[0] & set(gold)),
                     facts_gold_share=np.mean([bool(s & set(gold)) for s in f_src]),
                     n_seed_passages=len(seed_pass), top_df_min=int(min(g.df[seeded])) if len(seeded) else -1))
import pandas as pd
df = pd.DataFrame(rows)
print(df.mean(numeric_only=True).round(3).to_string())
print("hr2 top-1 gold but dense not:", int((df.h_gold & ~df.d_gold).sum()), " dense gold but hr2 not:", int((~df.h_gold & df.d_gold).sum()))
lost = df[~df.h_gold & df.d_gold]
print("on lost questions: top is fact1 source", lost.top_is_fact1_src.mean(), " fact1 source gold", lost.fact1_src_gold.mean(), "top in seed passages", lost.top_in_seed_passages.mean())
