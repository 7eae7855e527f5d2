"""Encoders with a persistent text -> vector store per encoder (<cache>/emb_<enc>.npy + .json).

minilm: all-MiniLM-L6-v2, bge: bge-small-en-v1.5, both the package's ONNX encoders
(``hippo_neo4j.encode.load_encoder``; MiniLM equals sentence-transformers' to 1e-5). Queries go through
``Store.queries`` (``encode_queries``: bge's query prefix); the store keys a query by the prefixed string.
"""
import json, os
import numpy as np
from hippo_neo4j.encode import load_encoder
from data import CACHE

ENCODERS = {"minilm": "all-MiniLM-L6-v2", "bge": "bge-small-en-v1.5"}

class Store:
    def __init__(self, name):
        self.name = name
        self.pj, self.pn = CACHE / f"emb_{name}.json", CACHE / f"emb_{name}.npy"
        self.texts = json.loads(self.pj.read_text()) if self.pj.exists() else []
        self.vecs = np.load(self.pn) if self.pn.exists() else np.zeros((0, 384), np.float32)
        n = min(len(self.texts), len(self.vecs)); self.texts, self.vecs = self.texts[:n], self.vecs[:n]  # concurrent writer
        # side stores written by parallel encoders (EMB_SUFFIX): only their new rows, merged on load
        extra_t, extra_v = [], []
        for pj in sorted(CACHE.glob(f"emb_{name}_*.json")):
            extra_t += json.loads(pj.read_text()); extra_v.append(np.load(pj.with_suffix(".npy")))
        self.index = {t: i for i, t in enumerate(self.texts)}
        if extra_t:
            keep = [k for k, t in enumerate(extra_t) if t not in self.index]
            allv = np.vstack(extra_v)
            seen = set()
            keep = [k for k in keep if not (extra_t[k] in seen or seen.add(extra_t[k]))]
            self.vecs = np.vstack([self.vecs, allv[keep]]) if keep else self.vecs
            for k in keep:
                self.index[extra_t[k]] = len(self.texts); self.texts.append(extra_t[k])
        self.suffix = os.environ.get("EMB_SUFFIX")
        self.new_texts = []
        self.encoder = load_encoder(ENCODERS[name])  # loads nothing until the first encode
    def queries(self, qs):
        """Query vectors (searching passages or facts), keyed by the prefixed string."""
        return self(list(qs), query=True)
    def __call__(self, texts, query=False):
        pre = self.encoder.query_prefix if query else ""
        keys = [pre + t for t in texts]
        new = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in self.index))
        embed = self.encoder.encode_queries if query else self.encoder.encode
        for b in range(0, len(new), 1024):  # saved after every chunk: the machine is slow and shared
            chunk = new[b:b + 1024]
            self.vecs = np.vstack([self.vecs, embed(chunk).astype(np.float32)])
            for t in chunk:
                self.index[pre + t] = len(self.texts); self.texts.append(pre + t)
            print(f"[{self.name}] encoded {min(b + 1024, len(new))}/{len(new)}", flush=True)
            self.new_texts += [pre + t for t in chunk]
            if self.suffix:
                sj = CACHE / f"emb_{self.name}_{self.suffix}.json"
                np.save(sj.with_suffix(".npy"), self.vecs[[self.index[t] for t in self.new_texts]]); sj.write_text(json.dumps(self.new_texts))
            elif not os.environ.get("EMB_READONLY"):
                np.save(self.pn, self.vecs); self.pj.write_text(json.dumps(self.texts))
        return self.vecs[[self.index[k] for k in keys]] if texts else np.zeros((0, 384), np.float32)
