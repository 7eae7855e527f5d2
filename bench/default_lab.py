"""The experiments behind the default mode, on the graphs `hippo eval` indexed: per question, the walks that
entity-ppr's reset is made of, computed in process over the namespace's mention graph read back from Neo4j.

PPR is linear in its reset vector, so entity-ppr with any split λ of the reset mass is λ·E + (1 − λ)·P, where
E is the walk from the query's linked phrases alone (seeds 1/|P_i|, sum 1) and P the walk from the passages
alone (positive z-scores of the query cosine, sum 1). `export` stores E, P and the cosines; `variants` scores
every fusion or split rule tried on them, on every exported set, and prints R@1/R@2/R@5/R@10/AR@2/AR@5.

    python bench/default_lab.py export ../shared/datasets/musique_train --no-openie
    python bench/default_lab.py export ../shared/datasets/2wikimultihopqa --no-openie
    python bench/default_lab.py export ../shared/datasets/musique_train
    python bench/default_lab.py export ../shared/datasets/case_study_university --no-openie
    python bench/default_lab.py export-demo          # after `hippo demo`: its namespace and questions
    python bench/default_lab.py variants [--only TEXT]

`variants` prints R@1/R@2/R@5/R@10/AR@2/AR@5 per set, the mean R@5 over the sets but the case study and the
demo, and whether both gold passages of the demo's first question are in the top 3.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

OUT = Path(__file__).resolve().parent / "out" / "lab"


def export(dataset_dir: str, no_openie: bool, namespace: str = "") -> Path:
    from hippo_neo4j import HippoRAG
    from hippo_neo4j.evaluation.datasets import default_namespace, load_dataset
    from hippo_neo4j.evaluation.reference import ReferenceGraph, walk

    dataset = load_dataset(dataset_dir, use_openie=not no_openie)
    with HippoRAG(namespace="default") as probe:
        encoder = probe.encoder.name
    ns = namespace or default_namespace(dataset, encoder=encoder, offline=no_openie or dataset.openie is None)
    with HippoRAG(namespace=ns) as memory:
        if not memory.store.has_passages():
            sys.exit(f"namespace {ns!r} is empty: run `hippo eval {dataset_dir}` first")
        ref = ReferenceGraph.load(memory.driver, memory.database, ns, hipporag2=True)
        n, m = len(ref.phrases), len(ref.passages)
        pindex = {p: i for i, p in enumerate(ref.passages)}
        config = memory.config
        members = ref.mentions.tocsr()
        rows: dict[str, list] = {"E": [], "P": [], "cos": [], "gold": [], "links": [], "qid": []}
        for q in dataset.questions:
            vector = memory.encoder.encode_queries([q.question])[0]
            linked = memory.link_entities(list(memory.extractor.query_entities(q.question)))
            cos = np.nan_to_num(ref.passage_vectors @ (vector / np.linalg.norm(vector)), nan=-1.0)
            links, walks = [], []
            for link in linked:  # one walk per linked phrase (a phrase two entities link to, once)
                if link.passages == 0 or any(x["phrase"] == link.phrase for x in links):
                    continue
                reset = np.zeros(n + m)
                reset[ref.phrase_index[link.phrase]] = 1.0
                walks.append(walk(ref.mention_transition_t, reset, config.damping, 1e-12, 200)[n:])
                i = ref.phrase_index[link.phrase]
                links.append({"phrase": link.phrase, "similarity": link.similarity, "passages": link.passages,
                              "members": members.indices[members.indptr[i]:members.indptr[i + 1]].tolist(),
                              "entities": sum(x.phrase == link.phrase for x in linked)})
            z = np.where(cos > cos.mean(), (cos - cos.mean()) / cos.std(), 0.0)
            reset = np.zeros(n + m)
            reset[n:] = z / z.sum()
            rows["P"].append(walk(ref.mention_transition_t, reset, config.damping, 1e-12, 200)[n:])
            rows["E"].append(np.array(walks).reshape(len(walks), m))
            rows["cos"].append(cos)
            rows["gold"].append([pindex[g] for g in q.gold if g in pindex])
            rows["links"].append(links)
            rows["qid"].append(q.id)
        print(f"{ns}: {len(rows['qid'])} questions", file=sys.stderr)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{ns}.npz"
    sp.save_npz(OUT / f"{ns}.graph.npz", ref.mention_transition_t)
    np.savez_compressed(
        path, P=np.array(rows["P"]), cos=np.array(rows["cos"], dtype=np.float64),
        E=np.concatenate(rows["E"]), E_rows=np.array([len(e) for e in rows["E"]]),
        gold=json.dumps(rows["gold"]), links=json.dumps(rows["links"]), qid=json.dumps(rows["qid"]),
        phrases=n,
    )
    return path


def export_demo() -> Path:
    """The demo's corpus and questions (hippo_neo4j/demo) in the layout `export` reads, then `export` of the
    namespace `hippo demo` indexes."""
    import tempfile

    demo = Path(__file__).resolve().parent.parent / "hippo_neo4j" / "demo"
    corpus = json.loads((demo / "corpus.json").read_text())
    by_id = {p["id"]: p for p in corpus}
    questions = [{"id": str(i), "question": q["question"], "paragraphs": [
        {"title": by_id[g]["title"], "text": by_id[g]["text"], "is_supporting": True} for g in q["gold"]]}
        for i, q in enumerate(json.loads((demo / "questions.json").read_text()))]
    root = Path(tempfile.mkdtemp()) / "demo"
    root.mkdir()
    (root / "corpus.json").write_text(json.dumps(corpus))
    (root / "questions.json").write_text(json.dumps(questions))
    return export(str(root), True, "demo")


# ------------------------------------------------------------------------------------------------ variants
DEPTH = 10


def top(score: np.ndarray, k: int = DEPTH) -> list[int]:
    """Indexes of the ``k`` largest scores, ties by passage order (the server breaks them by id)."""
    part = np.argpartition(-score, k)[: k + 1] if len(score) > k + 1 else np.arange(len(score))
    return sorted(part.tolist(), key=lambda i: (-score[i], i))[:k]


def merged(*lists: list[int], k: int = DEPTH) -> list[int]:
    out: list[int] = []
    for lst in lists:
        for i in lst:
            if i not in out:
                out.append(i)
    return out[:k]


def load(out: Path) -> dict[str, list[dict]]:
    """Every exported set: per question the walk of each linked phrase (``walks``, passages only), the
    passage walk ``P``, the cosines, the gold passages and the links; ``E``: entity-ppr's entity walk."""
    sets = {}
    for path in sorted(out.glob("*.npz")):
        if path.name.endswith(".graph.npz"):
            continue
        z = np.load(path)
        gold, links = json.loads(str(z["gold"])), json.loads(str(z["links"]))
        bounds = np.concatenate([[0], np.cumsum(z["E_rows"])])
        qs = []
        for i in range(len(gold)):
            walks = z["E"][bounds[i]:bounds[i + 1]]
            q = {"walks": walks, "P": z["P"][i], "cos": z["cos"][i], "gold": gold[i], "links": links[i]}
            q["E"] = entity_walk(q, [x["entities"] / x["passages"] for x in links[i]])
            qs.append(q)
        graph = path.with_name(path.stem + ".graph.npz")
        if graph.exists():  # for walks the variants run themselves (from the passages placed first)
            t, n = sp.load_npz(graph).tocsr(), int(z["phrases"])
            for q in qs:
                q["graph"], q["phrases"] = t, n
        sets[path.stem] = qs
    return sets


def entity_walk(q: dict, weights: list[float]) -> np.ndarray:
    """The walk from the linked phrases with these seed weights (scaled to sum 1), by linearity."""
    w = np.asarray(weights, dtype=float)
    if not len(w) or w.sum() <= 0:
        return np.zeros(len(q["P"]))
    return (w / w.sum()) @ q["walks"]


def scores(rankings: list[list[int]], qs: list[dict]) -> list[float]:
    row = []
    for k in (1, 2, 5, 10):
        row.append(100 * np.mean([len(set(r[:k]) & set(q["gold"])) / len(q["gold"]) for r, q in zip(rankings, qs)]))
    for k in (2, 5):
        row.append(100 * np.mean([set(q["gold"]) <= set(r[:k]) for r, q in zip(rankings, qs)]))
    return row


def mix(q: dict, lam: float) -> np.ndarray:
    return q["P"] if q["E"].sum() == 0 else lam * q["E"] + (1 - lam) * q["P"]


def ranks(score: np.ndarray) -> np.ndarray:
    order = np.lexsort((np.arange(len(score)), -score))
    r = np.empty(len(score))
    r[order] = np.arange(1, len(score) + 1)
    return r


VARIANTS: dict = {}


def variant(name: str):
    def put(f):
        VARIANTS[name] = f
        return f
    return put


def walk_top(q: dict) -> np.ndarray:
    return q["E"] + 1e-12 * q["P"]  # the entity walk; ties (no mass) by the passage walk


def z_plus(q: dict) -> np.ndarray:
    c = q["cos"]
    return np.maximum((c - c.mean()) / c.std(), 0.0)


def relevance_walk(q: dict) -> np.ndarray:
    """The entity walk with each phrase's seed also times the mean positive z-score of its passages."""
    z = z_plus(q)
    return entity_walk(q, [x["entities"] / x["passages"] * (z[x["members"]].mean() if x["members"] else 0.0)
                           for x in q["links"]])


def agreed(q: dict, a: int, b: int, entity: np.ndarray | None = None) -> list[int]:
    """Dense's top ``a`` that the entity walk ranks in its top ``b``, in dense's order."""
    entity = q["E"] if entity is None else entity
    confirmed = {i for i in top(entity, b) if entity[i] > 0}  # as the server: a passage the walk reaches
    return [i for i in top(q["cos"], a) if i in confirmed]


def with_relevance(q: dict) -> np.ndarray:
    e = relevance_walk(q)
    return q["P"] if e.sum() == 0 else 0.5 * e + 0.5 * q["P"]


def hop_walk(q: dict, passages: list[int]) -> np.ndarray:
    """The walk from these passages alone (equal seeds), passages only: where their entities lead."""
    from hippo_neo4j.evaluation.reference import walk

    n, m = q["phrases"], len(q["P"])
    reset = np.zeros(n + m)
    reset[[n + i for i in passages]] = 1.0 / len(passages)
    return walk(q["graph"], reset, 0.5, 1e-12, 200)[n:]


def after_placed(q: dict, rest) -> list[int]:
    """Agreement 3/10 first; then the passages by ``rest(hop)``, the scores made with the walk from the passages
    placed (``hop``); the walk's order alone when none is placed."""
    first = agreed(q, 3, 10)
    if not first:
        return top(mix(q, 0.5))
    return merged(first, top(rest(hop_walk(q, first))))


def unreached_too(q: dict, floor: float) -> list[int]:
    """Dense's top 3 that the entity walk confirms, or gives no more mass than ``floor``, then the walk."""
    reached = q["E"].sum() > 0
    return merged([i for i in top(q["cos"], 3) if i in agreed(q, 3, 10) or (reached and q["E"][i] <= floor)],
                  top(mix(q, 0.5)))


def interleave(*lists: list[int]) -> list[int]:
    return merged(*zip(*lists))


V = variant
V("dense")(lambda q: top(q["cos"]))
for _lam in (0.5, 0.3, 0.2, 0.1):
    V(f"the walk, entity share {_lam}" + (" (entity-ppr-walk)" if _lam == 0.5 else ""))(lambda q, lam=_lam: top(mix(q, lam)))
V("the passage walk alone")(lambda q: top(q["P"]))
V("the entity walk alone")(lambda q: top(walk_top(q)))
V("dense top 1, then the walk")(lambda q: merged(top(q["cos"], 1), top(mix(q, 0.5))))
V("dense top 2, then the walk")(lambda q: merged(top(q["cos"], 2), top(mix(q, 0.5))))
V("interleave dense / walk")(lambda q: interleave(top(q["cos"]), top(mix(q, 0.5))))
for _k in (5, 60):
    V(f"reciprocal rank fusion k {_k}")(lambda q, k0=_k: top(1 / (k0 + ranks(q["cos"])) + 1 / (k0 + ranks(mix(q, 0.5)))))
V("walk mass x passage walk mass")(lambda q: top(mix(q, 0.5) * q["P"]))
V("walk mass x positive z")(lambda q: top(mix(q, 0.5) * z_plus(q) + 1e-12 * q["cos"]))
V("walk mass x exp z")(lambda q: top(mix(q, 0.5) * np.exp((q["cos"] - q["cos"].mean()) / q["cos"].std())))
V("sqrt(entity walk x passage walk)")(lambda q: top(np.sqrt(q["E"] * q["P"]) + 1e-9 * q["P"]))
V("rank product dense x entity walk")(lambda q: top(-(ranks(q["cos"]) * ranks(walk_top(q)) + 1e-6 * ranks(mix(q, 0.5)))))
V("consensus dense / entity walk (worse rank)")(
    lambda q: top(-(np.maximum(ranks(q["cos"]), ranks(walk_top(q))) + 1e-6 * np.minimum(ranks(q["cos"]), ranks(walk_top(q))))))
V("interleave rank product / walk")(lambda q: interleave(
    top(-(ranks(q["cos"]) * ranks(walk_top(q)))), top(mix(q, 0.5))))
V("entity seeds x relevance (entity-ppr-relevance walk)")(lambda q: top(with_relevance(q)))
V("dense top 2 confirmed by the walk (not the entity walk) top 10")(
    lambda q: merged(agreed(q, 2, 10, mix(q, 0.5)), top(mix(q, 0.5))))
for _a in (1, 2, 3, 4, 5):
    for _b in (5, 10, 20, 50):
        V(f"agreement: dense top {_a} in the entity walk's top {_b}, then the walk"
          + (" (entity-ppr before)" if (_a, _b) == (3, 10) else ""))(lambda q, a=_a, b=_b: merged(agreed(q, a, b), top(mix(q, 0.5))))
for _a, _b in ((2, 10), (3, 10), (3, 20)):
    V(f"agreement {_a}/{_b}, then the relevance-weighted walk" + (" (entity-ppr-relevance)" if (_a, _b) == (3, 10) else ""))(
        lambda q, a=_a, b=_b: merged(agreed(q, a, b), top(with_relevance(q))))
for _w in (0.25, 0.5, 1.0):
    V(f"agreement 3/10, then the walk with {_w} of its reset on the passages placed")(
        lambda q, w=_w: after_placed(q, lambda hop: (1 - w) * mix(q, 0.5) + w * hop))
V("agreement 3/10, dense top 1 also first when the entity walk does not reach it")(lambda q: merged(
    agreed(q, 3, 10) if q["E"][top(q["cos"], 1)[0]] > 0 or q["E"].sum() == 0 else top(q["cos"], 1) + agreed(q, 3, 10),
    top(mix(q, 0.5))))

for _a in (1, 2, 3):
    V(f"rank product dense x entity walk, its top {_a}, then the walk")(lambda q, a=_a: merged(
        top(-(ranks(q["cos"]) * ranks(walk_top(q)) + 1e-6 * ranks(mix(q, 0.5))), a), top(mix(q, 0.5))))
V("agreement 3/10 both ways (then the entity walk's top 3 that dense ranks in its top 10), then the walk (entity-ppr-first-hop)")(
    lambda q: merged(agreed(q, 3, 10), [i for i in top(walk_top(q), 3) if i in top(q["cos"], 10) and q["E"][i] > 0],
                     top(mix(q, 0.5))))

V("agreement 3/10, each of dense's top 3 also first when the entity walk does not reach it")(
    lambda q: unreached_too(q, 0.0))

for _lam in (0.6, 0.7, 0.8, 0.9, 1.0):
    V(f"agreement 3/10, then the walk with entity share {_lam}")(lambda q, lam=_lam: merged(
        agreed(q, 3, 10), top(mix(q, lam) + 1e-12 * q["P"])))
V("agreement 3/10, then reciprocal rank fusion (k 60) of the walk and the entity walk")(lambda q: merged(
    agreed(q, 3, 10), top(1 / (60 + ranks(mix(q, 0.5))) + 1 / (60 + ranks(walk_top(q))))))



for _lam in (0.5, 0.25):  # (a passage is placed only with entity-walk mass, so the entity walk is there)
    V(f"agreement 3/10, then a walk from the entities ({_lam}) and the passages placed")(
        lambda q, lam=_lam: after_placed(q, lambda hop: lam * q["E"] + (1 - lam) * hop + 1e-12 * q["P"]))
V("agreement 3/10, then a walk from the entities, the passages placed and the passages like the query (1/3 each)")(
    lambda q: after_placed(q, lambda hop: (q["E"] + q["P"] + hop) / 3))

V("agreement 3/10, each of dense's top 3 also first when the entity walk gives it no more mass than its "
  "tolerance 1e-8")(lambda q: unreached_too(q, 1e-8))


# ----------------------------------------------------------------- the third round: the second hop (entity-ppr now)
def placed(q: dict) -> list[int]:
    """entity-ppr's agreement, both ways: dense's top 3 the entity walk confirms, then its top 3 dense confirms."""
    return merged(agreed(q, 3, 10), [i for i in top(walk_top(q), 3) if i in top(q["cos"], 10) and q["E"][i] > 0],
                  k=10**6)


def led(q: dict, first: list[int]) -> np.ndarray:
    """The walk from the placed passages alone, the placed ones at 0."""
    h = hop_walk(q, first).copy()
    h[first] = 0
    return h


def second_round(q: dict, h_top: int, depth: int, by: str = "either") -> list[int]:
    """The agreement, then the walk from the placed passages' top ``h_top`` that ``by`` ranks in its top ``depth``
    (the walk, dense, either, or the entity walk), in that walk's order; then the walk."""
    first, w = placed(q), mix(q, 0.5)
    if not first:
        return top(w)
    confirm = {"walk": {i for i in top(w, depth) if w[i] > 0}, "dense": set(top(q["cos"], depth)),
               "entity": {i for i in top(walk_top(q), depth) if q["E"][i] > 0}}
    confirm["either"] = confirm["walk"] | confirm["dense"]
    return merged(first, [i for i in top(led(q, first), h_top) if i in confirm[by]], top(w))


def rest_by(q: dict, score) -> list[int]:
    """The agreement, then the rest by ``score(walk, walk from the placed passages)``."""
    first, w = placed(q), mix(q, 0.5)
    return merged(first, top(score(w, hop_walk(q, first)))) if first else top(w)


for _h in (1, 2, 3, 5):
    for _d in (5, 10, 20):
        V(f"second hop: the placed passages' walk's top {_h} that the walk or dense ranks in its top {_d}"
          + (" (entity-ppr)" if (_h, _d) == (2, 10) else ""))(lambda q, h=_h, d=_d: second_round(q, h, d))
for _by in ("walk", "dense", "entity"):
    for _h, _d in ((3, 10), (3, 20), (5, 10)):
        V(f"second hop {_h}/{_d}, confirmed by the {_by} alone")(lambda q, h=_h, d=_d, by=_by: second_round(q, h, d, by))
V("agreement, then the walk x the placed passages' walk")(lambda q: rest_by(q, lambda w, h: w * h + 1e-15 * w))
V("agreement, then reciprocal rank fusion (k 60) of the walk and the placed passages' walk")(
    lambda q: rest_by(q, lambda w, h: 1 / (60 + ranks(w)) + 1 / (60 + ranks(h))))
V("agreement, then reciprocal rank fusion (k 10) of the walk and the placed passages' walk")(
    lambda q: rest_by(q, lambda w, h: 1 / (10 + ranks(w)) + 1 / (10 + ranks(h))))
V("agreement, then the entity walk x the placed passages' walk")(lambda q: rest_by(q, lambda w, h: walk_top(q) * h + 1e-15 * w))


def meeting(q: dict) -> np.ndarray | None:
    """Where the query's entities meet: the geometric mean of the linked phrases' walks (weights 1/|P_i|)."""
    walks = q["walks"]
    if len(walks) < 2:
        return None
    w = np.array([x["entities"] / x["passages"] for x in q["links"]])
    with np.errstate(divide="ignore"):
        g = np.exp(((w / w.sum())[:, None] * np.log(np.maximum(walks, 0))).sum(0))
    g[~np.isfinite(g)] = 0
    return g if g.max() > 0 else None


def meeting_first(q: dict, k: int, where: str) -> list[int]:
    w, g = mix(q, 0.5), meeting(q)
    confirmed = set(top(q["cos"], 10)) | {i for i in top(w, 10) if w[i] > 0}
    meet = [i for i in top(g, k) if g[i] > 0 and i in confirmed] if g is not None else []
    first = merged(meet, placed(q), k=10**6) if where == "before" else merged(placed(q), meet, k=10**6)
    h = led(q, first) if first else None
    second = [i for i in top(h, 2) if i in confirmed and i not in first] if h is not None else []
    return merged(first, second, top(w))


for _k in (1, 2, 3):
    for _where in ("before", "after"):
        V(f"where the entities' walks meet (geometric mean), its top {_k} {_where} the agreement, then the second hop")(
            lambda q, k=_k, where=_where: meeting_first(q, k, where))


# ------------------------------------------------------- the fourth round: what a signal can confirm or veto
def reach(score: np.ndarray) -> int:
    """How many passages a signal ranks at all (positive mass; every passage for dense)."""
    return int((score > 0).sum())


def pipeline(q: dict, half: bool = False, blind: bool = False, h_top: int = 2, depth: int = 10,
             reached: bool = True, by_entity: bool = False) -> list[int]:
    """entity-ppr (agreement both ways, then the second hop, then the walk), with two changes to what confirms.

    ``half``: a signal confirms at depth min(``depth``, half the passages it ranks): a top 10 out of 10 passages
    confirms nothing. ``blind``: when the entity walk reaches fewer passages than the depth (its seeds sit in a
    small component of the graph), a dense top passage outside that reach is not vetoed by it: the walk
    cannot see it."""
    e, w, cos = q["E"], mix(q, 0.5), q["cos"]
    n = len(cos)
    d_e = min(depth, (reach(e) if reached else n) // 2) if half else depth
    d_d = min(depth, n // 2) if half else depth
    d_w = d_d  # the walk, like dense, ranks the namespace's passages
    e_top = [i for i in top(walk_top(q), max(d_e, 1)) if e[i] > 0][:d_e]
    d_top = top(cos, d_d)
    small = 0 < reach(e) < d_e
    by_dense = [i for i in d_top[:3] if i in e_top or (blind and small and e[i] == 0)]
    first = merged(by_dense, [i for i in e_top[:3] if i in d_top], k=10**6) if e.sum() > 0 else []
    if not first:
        return top(w)
    confirm = {i for i in top(w, d_w) if w[i] > 0} | set(d_top) | (set(e_top) if by_entity else set())
    second = [i for i in top(led(q, first), h_top) if i in confirm]
    return merged(first, second, top(w))


V("fourth round: entity-ppr as it is (the lab's own pipeline)")(lambda q: pipeline(q))
V("fourth round: confirmation no deeper than half of what a signal ranks")(lambda q: pipeline(q, half=True))
V("fourth round: a small entity reach does not veto dense's top 3")(lambda q: pipeline(q, blind=True))
V("fourth round: both")(lambda q: pipeline(q, half=True, blind=True))
V("fourth round: confirmation no deeper than half of the namespace's passages")(
    lambda q: pipeline(q, half=True, reached=False))
V("fourth round: confirmation no deeper than half of the namespace's passages, and a small entity reach does not veto")(
    lambda q: pipeline(q, half=True, reached=False, blind=True))


def each_hop(q: dict, h_top: int = 2, per: int = 1, depth: int = 10, confirm: bool = True) -> list[int]:
    """entity-ppr (namespace half depth, a small entity reach does not veto), with the second hop taken from one
    walk per placed passage: in turn, each placed passage's next passage (its own walk's order, confirmed by the
    walk or dense at ``depth``), at most ``per`` each and ``h_top`` in all."""
    e, w, cos = q["E"], mix(q, 0.5), q["cos"]
    n = len(cos)
    d = min(depth, n // 2)
    e_top = [i for i in top(walk_top(q), d) if e[i] > 0]
    d_top = top(cos, d)
    small = 0 < reach(e) < d
    by_dense = [i for i in d_top[:3] if i in e_top or (small and e[i] == 0)]
    first = merged(by_dense, [i for i in e_top[:3] if i in d_top], k=10**6) if e.sum() > 0 else []
    if not first:
        return top(w)
    ok = ({i for i in top(w, d) if w[i] > 0} | set(d_top)) if confirm else None
    queues = []
    for p in first:
        h = hop_walk(q, [p]).copy()
        h[first] = 0
        queues.append([i for i in top(h, 50) if h[i] > 0 and (ok is None or i in ok)][:per])
    second: list[int] = []
    for r in range(per):
        for qu in queues:
            if r < len(qu) and qu[r] not in second and len(second) < h_top:
                second.append(qu[r])
    return merged(first, second, top(w))


for _h in (2, 3):
    V(f"fourth round: half the namespace, small reach, the second hop's top {_h} confirmed by the walk, dense or the "
      "entity walk")(lambda q, h=_h: pipeline(q, half=True, reached=False, blind=True, h_top=h, by_entity=True))
for _h, _per in ((2, 1), (3, 1), (4, 1), (6, 1), (4, 2)):
    V(f"fourth round: the second hop from each placed passage, {_per} each, {_h} in all")(
        lambda q, h=_h, per=_per: each_hop(q, h, per))
V("fourth round: the second hop from each placed passage, 1 each, 2 in all, depth 20")(lambda q: each_hop(q, 2, 1, 20))


def fifth(q: dict, mode: str) -> list[int]:
    e, w, cos = q["E"], mix(q, 0.5), q["cos"]
    n = len(cos)
    d = min(10, n // 2)
    e_top = [i for i in top(walk_top(q), d) if e[i] > 0]
    d_top = top(cos, d)
    small = 0 < reach(e) < d
    by_dense = [i for i in d_top[:3] if i in e_top or (small and e[i] == 0)]
    first = merged(by_dense, [i for i in e_top[:3] if i in d_top], k=10**6) if e.sum() > 0 else []
    if not first:
        return top(w)
    confirm = {i for i in top(w, d) if w[i] > 0} | set(d_top)
    hop = top(led(q, first), 10)
    if mode == "A":
        h = max(2, len(first))
        second = [i for i in hop[:h] if i in confirm]
    elif mode == "C":
        second = [i for i in hop[:2] if i in confirm or i == hop[0]]
    elif mode == "D":
        wide = {i for i in top(w, 20) if w[i] > 0} | set(top(cos, 20))
        second = [i for i in hop[:2] if i in confirm or (i == hop[0] and i in wide)]
    elif mode == "E":  # hop candidates confirmed at depth 10, taken from the hop walk's top 3, at most 2
        second = [i for i in hop[:3] if i in confirm][:2]
    return merged(first, second, top(w))

for _m, _t in (("A", "as many hop passages as placed ones, at least 2"), ("C", "the hop walk's top 1 placed unconfirmed"),
               ("D", "the hop walk's top 1 confirmed at depth 20"), ("E", "2 of the hop walk's top 3 confirmed")):
    V(f"fifth: {_t}")(lambda q, m=_m: fifth(q, m))
V("fifth: the default")(lambda q: pipeline(q, half=True, reached=False, blind=True))


def run(out: Path, only: str = "") -> None:
    sets = load(out)
    names = [n for n in sets if n != "demo"] + [n for n in sets if n == "demo"]
    print("| variant | " + " | ".join(names) + " | mean R@5 | demo question 1, both gold in the top 3 |")
    print("|---|" + "---|" * (len(names) + 2))
    for name, f in VARIANTS.items():
        if only not in name:
            continue
        cells, r5, demo = [], [], "-"
        for s in names:
            ranked = [f(q) for q in sets[s]]
            row = scores(ranked, sets[s])
            if s != "demo" and "case_study" not in s:
                r5.append(row[2])
            if s == "demo":
                demo = "yes" if set(sets[s][0]["gold"]) <= set(ranked[0][:3]) else "no"
            cells.append("/".join(f"{x:.1f}" if j < 4 else f"{x:.0f}" for j, x in enumerate(row)))
        print(f"| {name} | " + " | ".join(cells) + f" | {np.mean(r5):.1f} | {demo} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("dataset")
    e.add_argument("--no-openie", action="store_true")
    e.add_argument("--namespace", default="")
    sub.add_parser("export-demo")
    v = sub.add_parser("variants")
    v.add_argument("--only", default="", help="only the variants whose name holds this text")
    args = parser.parse_args()
    if args.cmd == "export":
        print(export(args.dataset, args.no_openie, args.namespace))
    elif args.cmd == "export-demo":
        print(export_demo())
    else:
        run(OUT, args.only)


if __name__ == "__main__":
    main()
