"""Encode every text set once per encoder (cached in <cache>/emb_<enc>.*; needs extract.py's output).

    python bench/mention_graph/prep_embed.py minilm|bge [stage]
stage 'base' (default): passages + queries + GPT-3.5 phrases/facts; 'passages': passages + queries; 'gpt': the
GPT-3.5 phrases/facts; 'names': query entities + offline names; 'offline': those + every offline phrase.
"""
import json, sys

from hippo_neo4j.text import normalize_phrase
from data import load_corpus, load_questions, passage_string, CACHE, DS
from enc import Store

def gpt_sets():
    docs = json.loads((DS / "musique_train" / "openie_gpt-3.5-turbo-1106.json").read_text())["docs"]
    phrases, facts = set(), set()
    for d in docs:
        for e in d.get("extracted_entities") or []:
            if isinstance(e, str): phrases.add(normalize_phrase(e))
        phrases.add(normalize_phrase(d["title"]))
        for t in d.get("extracted_triples") or []:
            if isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t):
                s, p, o = (normalize_phrase(x) for x in t)
                phrases |= {s, o}
                facts.add(" ".join(x for x in (s, p, o) if x))
    phrases.discard("")
    return sorted(phrases), sorted(facts)

def offline_phrases(ds, names_only=False):
    ex = json.loads((CACHE / f"extract_{ds}.json").read_text())
    c = load_corpus(ds)
    ph = {normalize_phrase(p["title"]) for p in c}
    for e in ex:
        ph |= {normalize_phrase(m["t"]) for m in e["mentions"] if not names_only or m["kind"] == "ner" or m["propn"]}
        if names_only:
            continue
        ph |= {normalize_phrase(x) for t in e["triples"] for x in (t[0], t[2])}
    ph.discard("")
    return sorted(ph)

def query_entities(ds):
    p = CACHE / f"qents_{ds}.json"
    if p.exists():
        return json.loads(p.read_text())
    from hippo_neo4j.extract.offline import OfflineExtractor
    ex = OfflineExtractor()
    out = [ex.query_entities(q) for q, _ in load_questions(ds)]
    p.write_text(json.dumps(out))
    return out

if __name__ == "__main__":
    st = Store(sys.argv[1]); stage = sys.argv[2] if len(sys.argv) > 2 else "base"
    for ds in ("case_study_university", "musique_train"):
        if stage in ("base", "passages"):
            st([passage_string(p) for p in load_corpus(ds)])
            st.queries([q for q, _ in load_questions(ds)])
            st([q for q, _ in load_questions(ds)])
        elif stage in ("offline", "names"):
            st(sorted({normalize_phrase(e) for es in query_entities(ds) for e in es} - {""}))
            st(offline_phrases(ds, names_only=True))
            if stage == "offline":
                st(offline_phrases(ds))
    if stage in ("base", "gpt"):
        ph, facts = gpt_sets()
        print("gpt phrases", len(ph), "facts", len(facts))
        st(ph); st(facts)
