"""Graph construction + batched PPR with GDS semantics + evaluation (in-process, numpy/scipy).

Node order in every graph: phrases 0..N-1, then passages N..N+P-1.
PPR: p = (1-d)*s + d*T^T p, T = row-normalised symmetric weighted adjacency (undirected projection; a node
without edges passes nothing on), s unnormalised seed biases (GDS sourceNodes with bias).
"""
import numpy as np
import scipy.sparse as sp

from hippo_neo4j.text import alnum_count


# ----------------------------------------------------------------------------------------- graph
class Graph:
    def __init__(self, phrases, n_passages, mention_counts, pp_edges=None, mention_weight="one"):
        """phrases: list[str]; mention_counts: dict[(phrase_idx, passage_idx)] -> count;
        pp_edges: dict[(i, j)] -> weight (phrase-phrase, i<j; parallel edge types already summed)."""
        self.phrases = phrases
        self.index = {t: i for i, t in enumerate(phrases)}
        self.N, self.P = len(phrases), n_passages
        rows = np.array([k[0] for k in mention_counts], dtype=np.int64)
        cols = np.array([k[1] for k in mention_counts], dtype=np.int64)
        cnt = np.array(list(mention_counts.values()), dtype=np.float64)
        self.M = sp.csr_matrix((cnt, (rows, cols)), shape=(self.N, self.P))  # counts
        self.df = np.asarray((self.M > 0).sum(axis=1)).ravel()  # |P_i|
        if mention_weight == "one":
            w = np.ones_like(cnt)
        elif mention_weight == "count":
            w = cnt
        elif mention_weight == "inv_df":  # 1/|P_i|
            w = 1.0 / self.df[rows]
        elif mention_weight == "idf":  # log(1 + P/|P_i|)
            w = np.log1p(self.P / self.df[rows])
        else:
            raise ValueError(mention_weight)
        self.Mw = sp.csr_matrix((w, (rows, cols)), shape=(self.N, self.P))
        self.pp_edges = pp_edges or {}
        if self.pp_edges:
            er = np.array([k[0] for k in self.pp_edges]); ec = np.array([k[1] for k in self.pp_edges])
            ew = np.array(list(self.pp_edges.values()), dtype=np.float64)
            A = sp.csr_matrix((ew, (er, ec)), shape=(self.N, self.N)); A = A + A.T
        else:
            A = sp.csr_matrix((self.N, self.N))
        self.A = sp.bmat([[A, self.Mw], [self.Mw.T, None]]).tocsr()
        out = np.asarray(self.A.sum(axis=1)).ravel()
        inv = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
        self.TT = (sp.diags(inv) @ self.A).T.tocsr()
        self.degree = np.asarray((self.A > 0).sum(axis=1)).ravel()
        self.strength = out

    def sizes(self):
        return {"phrases": self.N, "mention_edges": int(self.M.nnz), "pp_edges": len(self.pp_edges)}

    def ppr(self, S, d=0.5, tol=1e-10, max_iter=200):
        """S: (N+P) x Q seed matrix (dense). Returns PPR mass, same shape."""
        p = S.copy()
        for _ in range(max_iter):
            nxt = (1 - d) * S + d * (self.TT @ p)
            if np.abs(nxt - p).sum(axis=0).max() < tol * max(1.0, S.sum(axis=0).max()):
                return nxt
            p = nxt
        return p

# ------------------------------------------------------------------------------------ synonyms
def synonym_candidates(vecs, lo, cap=100, min_alnum=3, texts=None, block=2048):
    """All pairs (i<j) with cosine >= lo, each phrase keeping at most `cap` best neighbours (HippoRAG)."""
    ok = np.array([alnum_count(t) >= min_alnum for t in texts]) if texts is not None else np.ones(len(vecs), bool)
    V = vecs.astype(np.float32)
    pairs = {}
    for b in range(0, len(V), block):
        sims = V[b:b + block] @ V.T
        for r in range(sims.shape[0]):
            i = b + r
            if not ok[i]:
                continue
            row = sims[r]
            idx = np.nonzero(row >= lo)[0]
            idx = idx[(idx != i) & ok[idx]]
            if len(idx) > cap:
                idx = idx[np.argsort(-row[idx])[:cap]]
            for j in idx:
                key = (i, j) if i < j else (j, i)
                pairs[key] = float(row[j])
    return pairs

def null_stats(vecs, n=200000, seed=0):
    """Mean/std of cosine between random phrase pairs: the encoder's own null distribution."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(vecs), n); b = rng.integers(0, len(vecs), n)
    m = a != b
    c = np.einsum("ij,ij->i", vecs[a[m]], vecs[b[m]])
    return float(c.mean()), float(c.std())

# ---------------------------------------------------------------------------------------- utils
def minmax(x):
    lo, hi = x.min(axis=0, keepdims=True), x.max(axis=0, keepdims=True)
    return (x - lo) / np.where(hi > lo, hi - lo, 1.0)

def rank_from_scores(scores, fill=None, k=50):
    """Ranking (corpus indices) of one query by score desc; passages with score 0 are filled in
    `fill` order (the dense ranking)."""
    order = np.argsort(-scores, kind="stable")
    pos = order[scores[order] > 0][:k]
    if fill is not None and len(pos) < k:
        seen = set(pos.tolist())
        pos = np.concatenate([pos, [i for i in fill if i not in seen][:k - len(pos)]]).astype(int)
    return pos
