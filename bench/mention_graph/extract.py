"""Run the package's offline spaCy extraction once over musique_train + case_study_university and cache it.

Reproduces OfflineExtractor.extract (title and body parsed as separate docs, doc_entities(names_only=True) +
doc_triples, same dedupe) with a single parse, and also records per-mention detail for the graph variants:
for every NER entity / noun chunk (the names and the generic chunks): cleaned text, label, kind (ner|chunk),
has_propn, part (0 title, 1 body), sentence index; and per sentence whether it has a pronoun subject. The
graph variants read only the mentions and the triples.

    python bench/mention_graph/extract.py [dataset ...]   # -> <cache>/extract_<ds>.json
"""
import json, sys, time

from hippo_neo4j.extract.offline import (OfflineExtractor, _clean, _dedupe, _dedupe_triples, _DROP_ENTITY_LABELS,
                                         _NUMERIC_LABELS, _LEADING_JUNK_TAGS)
from data import load_corpus, CACHE

def mentions_of(doc, part):
    out = []
    sent_of = {}
    for si, s in enumerate(doc.sents):
        for t in s:
            sent_of[t.i] = si
    ent_id = {}
    for n, ent in enumerate(doc.ents):
        if ent.label_ in _DROP_ENTITY_LABELS:
            continue
        ent_id.update((i, n) for i in range(ent.start, ent.end))
        text = _clean(ent, allow_number=ent.label_ in _NUMERIC_LABELS)
        if text:
            out.append({"t": text, "label": ent.label_, "kind": "ner", "propn": any(t.pos_ == "PROPN" for t in ent), "part": part, "sent": sent_of[ent.start]})
    for chunk in doc.noun_chunks:
        owners = {ent_id.get(t.i, -1 - t.i) for t in chunk if t.tag_ not in _LEADING_JUNK_TAGS}
        if len(owners) == 1 and min(owners) >= 0:
            continue
        text = _clean(chunk)
        if text:
            out.append({"t": text, "label": "", "kind": "chunk", "propn": any(t.pos_ == "PROPN" for t in chunk), "part": part, "sent": sent_of[chunk.start]})
    pron = []
    for s in doc.sents:
        pron.append(any(t.dep_ in {"nsubj", "nsubjpass"} and t.pos_ == "PRON" and t.lower_ in {"he", "she", "it", "they", "his", "her", "its", "their"} for t in s))
    return out, pron

def run(ds):
    ex = OfflineExtractor()
    nlp = ex.nlp
    corpus = load_corpus(ds)
    texts, owners = [], []
    for i, p in enumerate(corpus):
        for part, s in enumerate((p["title"], p["text"])):
            if s.strip():
                texts.append((s, part)); owners.append(i)
    ents = [[] for _ in corpus]; trips = [[] for _ in corpus]; ments = [[] for _ in corpus]; prons = [[[], []] for _ in corpus]
    t0 = time.time()
    for k, (owner, doc) in enumerate(zip(owners, nlp.pipe([t for t, _ in texts], batch_size=64))):
        part = texts[k][1]
        ents[owner].extend(ex.doc_entities(doc, names_only=True))
        trips[owner].extend([list(t) for t in ex.doc_triples(doc)])
        m, pr = mentions_of(doc, part)
        ments[owner].extend(m); prons[owner][part] = pr
        if k % 500 == 0:
            print(ds, k, len(texts), round(time.time() - t0), flush=True)
    out = [{"entities": _dedupe(e), "triples": _dedupe_triples(t), "mentions": m, "pron_sents": pr} for e, t, m, pr in zip(ents, trips, ments, prons)]
    (CACHE / f"extract_{ds}.json").write_text(json.dumps(out))
    print("done", ds, time.time() - t0)

if __name__ == "__main__":
    for ds in sys.argv[1:] or ["case_study_university", "musique_train"]:
        run(ds)
