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
    sent_of = {}
    for si, s in enumerate(doc.sents):
        for t in s:
            sent_of[t.i] = si
    kept = [(n, e) for n, e in enumerate(doc.ents) if e.label_ not in _DROP_ENTITY_LABELS]
    ent_id = {i: n for n, e in kept for i in range(e.start, e.end)}

    def inside_entity(chunk):  # a noun chunk inside one entity is that entity again (as in doc_entities)
        owners = {ent_id.get(t.i, -1 - t.i) for t in chunk if t.tag_ not in _LEADING_JUNK_TAGS}
        return len(owners) == 1 and min(owners) >= 0

    spans = [(e, "ner", e.label_, _clean(e, allow_number=e.label_ in _NUMERIC_LABELS)) for _, e in kept]
    spans += [(c, "chunk", "", _clean(c)) for c in doc.noun_chunks if not inside_entity(c)]
    out = [{"t": text, "label": label, "kind": kind, "propn": any(t.pos_ == "PROPN" for t in span), "part": part,
            "sent": sent_of[span.start]} for span, kind, label, text in spans if text]
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
