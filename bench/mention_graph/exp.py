"""Experiment harness: mention graphs (offline spaCy or GPT-3.5 OpenIE) + query seeds + PPR, both encoders.

Each variant is a dict of options (see DEFAULT); `evaluate(enc, ds, opts)` returns metrics (+ rankings).
"""
import json, itertools
from collections import Counter, defaultdict
from functools import lru_cache
import numpy as np

from hippo_neo4j.text import normalize_phrase
from data import load_corpus, load_questions, passage_string, metrics, CACHE, DS
from enc import Store
from lib import Graph, synonym_candidates, null_stats, minmax, rank_from_scores

NUMERIC = {"DATE", "TIME", "MONEY", "QUANTITY", "PERCENT"}
DEFAULT = dict(
    source="offline",        # offline | gpt
    phrases="names",         # names (NER + proper-noun chunks + title) | all (+ every noun chunk) | names_nonum | ner
    mention_weight="one",    # one | count | inv_df | idf
    syn="none",              # none | tau:<cos> | z:<z-score over the encoder's null> | knn:<k>:<z>
    cooc=0.0,                # weight of same-sentence co-occurrence edges (0 = off)
    pron=False,              # pronoun-subject sentences also co-mention the title entity (for cooc)
    relations=False,         # add RELATION edges from (offline or GPT) triples, weight = count
    link="top1",             # top1 | topk:<k> (weights cos/cos_top1) | none (dense only seeds)
    spec=True,               # node specificity 1/|P_i| on phrase seeds
    mix="raw",               # raw: phrase 1/|P_i| + passage minmax unscaled | lam:<λ> sum-normalised groups
    pseed="minmax",          # minmax | zpos (positive z-scores) | top:<n> (minmax restricted to top n)
    pweight=1.0,             # raw mode: multiplier on passage seeds
    damping=0.5,
    rank="mass",             # mass | mass_deg (mass / weighted degree) | mass_minus_seed
)

_stores = {}
def store(enc):
    if enc not in _stores:
        _stores[enc] = Store(enc)
    return _stores[enc]

@lru_cache(None)
def extraction(ds):
    return json.loads((CACHE / f"extract_{ds}.json").read_text())

@lru_cache(None)
def gpt_docs():
    return json.loads((DS / "musique_train" / "openie_gpt-3.5-turbo-1106.json").read_text())["docs"]

def valid_triples(ts):
    for t in ts or []:
        if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t):
            s, p, o = normalize_phrase(t[0]), normalize_phrase(t[1]), normalize_phrase(t[2])
            if s and o:
                yield s, p, o

def passage_mentions(ds, o):
    """Per passage: Counter(phrase -> count), list of sentence phrase-sets (for co-occurrence), triples."""
    corpus = load_corpus(ds)
    out = []
    if o["source"] == "gpt":
        assert ds == "musique_train"
        docs = gpt_docs()
        for p, d in zip(corpus, docs):
            assert d["title"] == p["title"]
            c = Counter()
            c[normalize_phrase(p["title"])] += 1
            for e in d.get("extracted_entities") or []:
                if isinstance(e, str) and normalize_phrase(e):
                    c[normalize_phrase(e)] += 1
            trs = list(valid_triples(d.get("extracted_triples")))
            for s, _, ob in trs:
                for x in (s, ob):
                    if x not in c:
                        c[x] += 1
            out.append((c, [set(c)], trs))  # no sentence info: whole passage is one "sentence"
        return out
    ex = extraction(ds)
    for p, e in zip(corpus, ex):
        title = normalize_phrase(p["title"])
        c = Counter({title: 1})
        sents = defaultdict(set)
        for m in e["mentions"]:
            if o["phrases"] in ("names", "names_nonum") and not (m["kind"] == "ner" or m["propn"]):
                continue
            if o["phrases"] == "names_nonum" and m["label"] in NUMERIC:
                continue
            if o["phrases"] == "ner" and m["kind"] != "ner":
                continue
            t = normalize_phrase(m["t"])
            if not t:
                continue
            if m["part"] == 0 and t == title:
                continue  # the title already counted once
            c[t] += 1
            sents[(m["part"], m["sent"])].add(t)
        if o["pron"]:
            for part, flags in enumerate(e["pron_sents"]):
                for si, f in enumerate(flags):
                    if f and (part, si) in sents:
                        sents[(part, si)].add(title)
        trs = [(normalize_phrase(t[0]), normalize_phrase(t[1]), normalize_phrase(t[2])) for t in e["triples"]]
        trs = [t for t in trs if t[0] and t[2]]
        if o["relations"]:
            for s, _, ob in trs:
                for x in (s, ob):
                    if x not in c:
                        c[x] += 1
        out.append((c, list(sents.values()), trs))
    return out

_syn_cache = {}
def reference_null(enc):
    """The encoder's null cosine distribution (mean, std over random pairs of a fixed generic phrase sample:
    the musique_train offline names), so that a z-threshold becomes one cosine per encoder, independent of
    the corpus being indexed (a small topical corpus has a skewed null)."""
    p = CACHE / f"null_{enc}.json"
    if not p.exists():
        g = build(enc, "musique_train", {**DEFAULT, "syn": "none"})
        p.write_text(json.dumps(null_stats(g.vecs)))
    return tuple(json.loads(p.read_text()))
def syn_pairs(enc, phrases, vecs, spec):
    """Synonym edges for a spec; candidates computed once per (enc, phrase set) at the loosest bound."""
    key = (enc, len(phrases), hash(tuple(phrases[:50])))
    if key not in _syn_cache:
        mu, sd = reference_null(enc)
        lo = min(0.75 if enc == "minilm" else 0.8, mu + 4 * sd)
        _syn_cache[key] = (synonym_candidates(vecs, lo, texts=phrases), mu, sd, lo)
    cand, mu, sd, lo = _syn_cache[key]
    kind, *args = spec.split(":")
    if kind == "tau":
        th = float(args[0])
    elif kind == "z":
        th = mu + float(args[0]) * sd
    else:
        raise ValueError(spec)
    assert th >= lo - 1e-9, (th, lo)
    return {k: v for k, v in cand.items() if v >= th}, th

_graph_cache = {}
def build(enc, ds, o):
    gkey = (enc, ds, o["source"], o["phrases"], o["mention_weight"], o["syn"], o["cooc"], o["pron"], o["relations"])
    if gkey in _graph_cache:
        return _graph_cache[gkey]
    pm = passage_mentions(ds, o)
    phrases = sorted(set().union(*(set(c) for c, _, _ in pm)))
    idx = {t: i for i, t in enumerate(phrases)}
    mc = {}
    for j, (c, _, _) in enumerate(pm):
        for t, n in c.items():
            mc[(idx[t], j)] = n
    pp = Counter()
    info = {}
    st = store(enc)
    missing = sum(t not in st.index for t in phrases)
    assert missing < 500, f"{missing} phrases not encoded yet"
    vecs = st(phrases)
    if o["syn"] != "none":
        syn, th = syn_pairs(enc, phrases, vecs, o["syn"])
        for k, v in syn.items():
            pp[k] += v
        info["syn_edges"] = len(syn); info["syn_threshold"] = round(th, 4)
    if o["cooc"]:
        co = Counter()
        for _, sents, _ in pm:
            for s in sents:
                for a, b in itertools.combinations(sorted(idx[t] for t in s), 2):
                    co[(a, b)] += 1
        for k, v in co.items():
            pp[k] += o["cooc"] * v
        info["cooc_edges"] = len(co)
    if o["relations"]:
        rel = Counter()
        for _, _, trs in pm:
            for s, _, ob in trs:
                if s != ob:
                    a, b = sorted((idx[s], idx[ob])); rel[(a, b)] += 1
        for k, v in rel.items():
            pp[k] += v
        info["relation_edges"] = len(rel)
    g = Graph(phrases, len(pm), mc, dict(pp), o["mention_weight"])
    g.vecs = vecs
    g.info = {**g.sizes(), **info}
    _graph_cache[gkey] = g
    return g

@lru_cache(None)
def query_data(enc, ds):
    st = store(enc)
    qs = load_questions(ds)
    pv = st([passage_string(p) for p in load_corpus(ds)])
    qv = st.queries([q for q, _ in qs])
    dense = pv @ qv.T  # P x Q
    qents = json.loads((CACHE / f"qents_{ds}.json").read_text())
    return qs, dense, qents

def seeds(enc, ds, g, o):
    qs, dense, qents = query_data(enc, ds)
    st = store(enc)
    Q = len(qs)
    phi = np.zeros((g.N, Q))
    for q, ents in enumerate(qents):
        names = list(dict.fromkeys(normalize_phrase(e) for e in ents if normalize_phrase(e)))
        if not names or o["link"] == "none":
            continue
        ev = st(names)
        sims = ev @ g.vecs.T
        for r in range(len(names)):
            if o["link"] == "top1":
                picks = [(int(np.argmax(sims[r])), 1.0)]
            else:
                k = int(o["link"].split(":")[1])
                top = np.argsort(-sims[r])[:k]
                picks = [(int(i), float(sims[r, i] / sims[r, top[0]])) for i in top]
            for i, w in picks:
                v = w / (g.df[i] if o["spec"] else 1.0)
                phi[i, q] = max(phi[i, q], v) if o.get("dedupe") else phi[i, q] + v
    if o.get("gate"):  # dense-gated phrase seeds: x the best min-max dense score among the phrase's passages
        mm = minmax(dense)
        for q in range(Q):
            for i in np.nonzero(phi[:, q])[0]:
                js = g.M[i].indices
                phi[i, q] *= mm[js, q].max() if len(js) else 0.0
    if o["pseed"] == "minmax":
        pi = minmax(dense)
    elif o["pseed"] == "zpos":
        z = (dense - dense.mean(0, keepdims=True)) / dense.std(0, keepdims=True)
        pi = np.maximum(z, 0)
    elif o["pseed"].startswith("top:"):
        n = min(int(o["pseed"].split(":")[1]), dense.shape[0])
        pi = minmax(dense)
        cut = -np.sort(-dense, axis=0)[n - 1:n, :]
        pi = np.where(dense >= cut, pi, 0.0)
    elif o["pseed"] == "softmax_z":
        z = (dense - dense.mean(0, keepdims=True)) / dense.std(0, keepdims=True)
        pi = np.exp(z - z.max(0, keepdims=True))
    else:
        raise ValueError(o["pseed"])
    if o["mix"] == "raw":
        pi = o["pweight"] * pi
    elif o["mix"] == "parity":  # each group scaled to max 1 (scale-free), passage group x pweight
        phi = phi / np.maximum(phi.max(0, keepdims=True), 1e-300)
        pi = o["pweight"] * pi / np.maximum(pi.max(0, keepdims=True), 1e-300)
    else:
        lam = float(o["mix"].split(":")[1])
        ps = phi.sum(0, keepdims=True)
        has = ps > 0
        phi = np.where(has, lam * phi / np.where(has, ps, 1), 0)
        pi = np.where(has, 1 - lam, 1.0) * pi / pi.sum(0, keepdims=True)
    return np.vstack([phi, pi]), dense

def evaluate(enc, ds, opts, return_rank=False):
    o = {**DEFAULT, **opts}
    g = build(enc, ds, o)
    S, dense = seeds(enc, ds, g, o)
    qs = query_data(enc, ds)[0]
    p = g.ppr(S, o["damping"])
    mass = p[g.N:]
    if o["rank"] == "mass_deg":
        mass = mass / np.maximum(g.strength[g.N:, None], 1.0)
    elif o["rank"] == "mass_minus_seed":
        mass = mass - (1 - o["damping"]) * S[g.N:]
    ranks = []
    for q in range(len(qs)):
        fill = np.argsort(-dense[:, q], kind="stable")
        if S[:g.N, q].sum() == 0 and o["link"] != "none":
            ranks.append(fill[:50])  # no entity linked: dense retrieval
        else:
            ranks.append(rank_from_scores(mass[:, q], fill))
    m = metrics(ranks, qs)
    return (m, ranks, g) if return_rank else m

def dense_eval(enc, ds):
    qs, dense, _ = query_data(enc, ds)
    ranks = [np.argsort(-dense[:, q], kind="stable")[:50] for q in range(len(qs))]
    return metrics(ranks, qs), ranks
