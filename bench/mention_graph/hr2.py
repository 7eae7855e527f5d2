"""HippoRAG 1/2 as the repo implements them (reference.py formulas) on the GPT-3.5 OpenIE graph, and the
hipporag2 fixes. Graph: phrases = normalised triple subjects/objects; RELATION edge per phrase pair (weight =
number of extractions), SYNONYM edges cos >= tau (cap 100, phrases with <= 2 alnum chars skipped),
MENTIONED_IN phrase->passage (count; weight 1 in the hipporag2 graph)."""
from collections import Counter
from functools import lru_cache
import numpy as np
import scipy.sparse as sp

from hippo_neo4j.text import normalize_phrase
from data import load_corpus, metrics
from lib import Graph, synonym_candidates, minmax, rank_from_scores
import exp

@lru_cache(None)
def triple_graph(enc, tau=0.8, source="gpt", relations=True):
    docs = exp.gpt_docs() if source == "gpt" else None
    ex = exp.extraction("musique_train") if source == "offline" else None
    n = len(load_corpus("musique_train"))
    facts, fact_src = {}, []
    ment = Counter(); rel = Counter()
    per_passage = []
    for j in range(n):
        trs = list(exp.valid_triples(docs[j].get("extracted_triples"))) if source == "gpt" else \
            [t for t in ((normalize_phrase(a), normalize_phrase(b), normalize_phrase(c)) for a, b, c in ex[j]["triples"]) if t[0] and t[2]]
        per_passage.append(trs)
    phrases = sorted({x for trs in per_passage for s, _, o in trs for x in (s, o)})
    idx = {t: i for i, t in enumerate(phrases)}
    for j, trs in enumerate(per_passage):
        for s, p, o in trs:
            ment[(idx[s], j)] += 1; ment[(idx[o], j)] += 1
            if s != o:
                a, b = sorted((idx[s], idx[o])); rel[(a, b)] += 1
            facts.setdefault((s, p, o), len(facts))
    st = exp.store(enc)
    vecs = st(phrases)
    cand = synonym_candidates(vecs, tau, texts=phrases) if tau else {}
    pp = Counter(rel) if relations else Counter()
    for k, v in cand.items():
        pp[k] += v
    g = Graph(phrases, n, dict(ment), dict(pp), "one")
    g.vecs = vecs
    g.info = {**g.sizes(), "relation_edges": len(rel), "syn_edges": len(cand)}
    flist = sorted(facts, key=facts.get)
    g.facts = flist
    g.fact_vecs = st([" ".join(x for x in f if x) for f in flist])
    # hipporag1 phrase-only transition
    er = np.array([k[0] for k in pp]); ec = np.array([k[1] for k in pp]); ew = np.array(list(pp.values()), float)
    A = sp.csr_matrix((ew, (er, ec)), shape=(g.N, g.N)); A = A + A.T
    out = np.asarray(A.sum(1)).ravel(); inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    g.TT1 = (sp.diags(inv) @ A).T.tocsr()
    return g

def hipporag2(enc, o=None, return_rank=False, source="gpt"):
    o = o or {}
    gkw = {k: o[k] for k in ("tau", "relations") if k in o}
    """o: fact_top_k 5, top_phrases 5, pweight 0.05, mix raw|lam:x, rank mass|mass_deg, spec True, damping .5"""
    o = {"fact_top_k": 5, "top_phrases": 5, "pweight": 0.05, "mix": "raw", "rank": "mass", "spec": True,
         "damping": 0.5, "pseed": "minmax", **(o or {})}
    g = triple_graph(enc, source=source, **gkw)
    qs, dense, _ = exp.query_data(enc, "musique_train")
    st = exp.store(enc)
    qv = st.queries([q for q, _ in qs])
    fc = g.fact_vecs @ qv.T
    Q = len(qs)
    phi = np.zeros((g.N, Q))
    for q in range(Q):
        order = np.argsort(-fc[:, q], kind="stable")[:o["fact_top_k"]]
        sums, cnt = Counter(), Counter()
        for f in order:
            s, _, ob = g.facts[f]
            for ph in (s, ob):
                i = g.index[ph]
                sums[i] += fc[f, q] / (g.df[i] if o["spec"] else 1); cnt[i] += 1
        sc = sorted(((i, sums[i] / cnt[i]) for i in sums), key=lambda x: -x[1])[:o["top_phrases"]]
        for i, w in sc:
            phi[i, q] = w
    if o.get("gate"):  # dense-gated phrase seeds: x the best min-max dense score among the phrase's passages
        mm = minmax(dense)
        best = np.asarray(g.M.astype(bool).multiply(1.0).max(axis=1).todense()).ravel()  # placeholder shape check
        for q in range(Q):
            nz = np.nonzero(phi[:, q])[0]
            for i in nz:
                js = g.M[i].indices
                phi[i, q] *= mm[js, q].max() if len(js) else 0.0
    pi = minmax(dense) * (dense > dense.min(0, keepdims=True))
    if o["pseed"] == "zpos":
        z = (dense - dense.mean(0, keepdims=True)) / dense.std(0, keepdims=True); pi = np.maximum(z, 0)
    if o["mix"] == "raw":
        pi = o["pweight"] * pi
    elif o["mix"] == "parity":  # both groups scaled to max 1: the best phrase seed weighs as much as the best passage
        phi = phi / np.maximum(phi.max(0, keepdims=True), 1e-300)
        pi = pi / np.maximum(pi.max(0, keepdims=True), 1e-300)
    else:
        lam = float(o["mix"].split(":")[1])
        phi = lam * phi / phi.sum(0, keepdims=True)
        pi = (1 - lam) * pi / pi.sum(0, keepdims=True)
    S = np.vstack([phi, pi])
    p = g.ppr(S, o["damping"])
    mass = p[g.N:]
    if o["rank"] == "mass_deg":
        mass = mass / np.maximum(g.strength[g.N:, None], 1.0)
    ranks = [rank_from_scores(mass[:, q], np.argsort(-dense[:, q], kind="stable")) for q in range(Q)]
    m = metrics(ranks, qs)
    return (m, ranks, g, S, p) if return_rank else m

def hipporag1(enc, source="gpt"):
    """Query entities (offline spaCy query_entities) top-1 linked, 1/|P_i|, phrase-graph PPR, score = M^T p."""
    g = triple_graph(enc, source=source)
    qs, dense, qents = exp.query_data(enc, "musique_train")
    st = exp.store(enc)
    ranks = []
    for q, ents in enumerate(qents):
        names = list(dict.fromkeys(normalize_phrase(e) for e in ents if normalize_phrase(e)))
        fill = np.argsort(-dense[:, q], kind="stable")
        if not names:
            ranks.append(fill[:50]); continue
        sims = st(names) @ g.vecs.T
        s = np.zeros(g.N)
        for r in range(len(names)):
            i = int(np.argmax(sims[r])); s[i] += 1 / g.df[i]
        s /= s.sum()
        p = s.copy()
        for _ in range(200):
            p = 0.5 * s + 0.5 * (g.TT1 @ p)
        ranks.append(rank_from_scores(g.M.T @ p, fill))
    return metrics(ranks, qs)
