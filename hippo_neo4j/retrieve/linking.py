"""Linking a query to the graph: the question's words to the namespace's phrases (:func:`link_question`, whatever
the question's casing), query entities given by the caller to their nearest phrases (HippoRAG: top-1, node
specificity 1/|P_i|), the query to its nearest facts (HippoRAG 2), the phrase seeds of those facts, and the
optional LLM recognition filter over them."""

from __future__ import annotations

import logging
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

import numpy as np

from ..graph.store import CANDIDATES_PER_FACT, GraphStore, usable, vector_beam
from ..models import FactHit, LinkedEntity, QueryTerms
from ..text import alnum_count, fold_phrase, normalize_phrase
from ..graph.scope import Scope

if TYPE_CHECKING:
    from ..encode.base import EncoderLike

log = logging.getLogger(__name__)


class RecognitionFilterLike(Protocol):
    """hipporag2's recognition filter (:func:`recognise`; the LLM one is :class:`hippo_neo4j.reader.RecognitionFilter`):
    the indices of the retrieved facts, (subject, predicate, object) each, that it keeps for the question. Its
    ``name``, if it has one, is what the result reports (else its class's name)."""

    def select(self, question: str, triples: Sequence[tuple[str, str, str]]) -> Iterable[int]: ...


# The beam of the phrase search that links each query entity (its top 1 is kept): the HNSW search comes closer
# to the exact nearest phrase with a larger one.
LINK_CANDIDATES = 100


def link_entities(store: GraphStore, encoder: EncoderLike, entities: Sequence[str],
                  scope: Scope | None = None) -> list[LinkedEntity]:
    """Each entity's most similar phrase (top-1 cosine), weighted 1/|P_i| and normalised to sum 1; with ``scope``
    (a filter's passages) the most similar of the phrases they mention."""
    names = list(dict.fromkeys(e for e in entities if isinstance(e, str) and normalize_phrase(e)))
    if not names or (scope is not None and not len(scope)):
        return []
    vectors = encoder.encode([normalize_phrase(e) for e in names])
    rows = [{"key": e, "embedding": v.tolist()} for e, v in zip(names, vectors) if usable(v)]
    found = store.phrase_neighbours(rows, LINK_CANDIDATES) if scope is None else phrases_within(store, rows, scope)
    links = [
        LinkedEntity(entity=e, phrase=rec["hits"][0]["text"], similarity=float(rec["hits"][0]["cosine"]),
                     passages=rec["passages"], since=rec["hits"][0]["since"])
        for e, rec in found.items() if rec["hits"]
    ]
    weights = {link.phrase: 1.0 / link.passages for link in links if link.passages > 0}
    total = sum(weights.values())
    for link in links:
        link.weight = weights.get(link.phrase, 0.0) / total if total else 0.0
    return links


# The longest run of a question's words looked up among the namespace's phrases (a bound on the work a question
# costs; a longer name is found through the question's names, by embedding).
MAX_RUN = 12
# cypher/phrase_stats.cypher counts the passages whose text holds a phrase's words up to this many: a phrase that
# common links with confidence at most named / OCCURS_LIMIT, a seed of at most 1/OCCURS_LIMIT of what a name of
# one passage gets, so counting further changes no ranking worth the work.
OCCURS_LIMIT = 1000


def word_runs(terms: QueryTerms) -> list[tuple[int, int, str]]:
    """The runs of the question's words that may name a phrase, as (start, end, words joined by spaces): up to
    :data:`MAX_RUN` words, holding a noun, proper noun or number and a word that is not a stop word."""
    words, runs = terms.words, []
    for start in range(len(words)):
        for end in range(start + 1, min(len(words), start + MAX_RUN) + 1):
            if any(terms.nominal[start:end]) and not all(terms.stop[start:end]):
                runs.append((start, end, " ".join(words[start:end])))
    return runs


def longest(matched: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The runs that no longer matched run holds ("bubye river", not "river")."""
    return [m for m in matched
            if not any(o[0] <= m[0] and m[1] <= o[1] and o[1] - o[0] > m[1] - m[0] for o in matched)]


def _inside(words: tuple[str, ...], spans: list[tuple[str, ...]]) -> bool:
    return any(words == span[i:i + len(words)] for span in spans for i in range(len(span) - len(words) + 1))


def link_question(store: GraphStore, encoder: EncoderLike, terms: QueryTerms, tau: float,
                  scope: Scope | None = None) -> list[LinkedEntity]:
    """The namespace's phrases the question names, read from its words, not from their capital letters:

    - every run of its words (:func:`word_runs`) that is a phrase of the namespace (its text, or its key without
      accents: ``cypher/phrase_matches.cypher``), the longest where runs overlap (:func:`longest`);
    - each of its names (``terms.names``) that no such run holds, linked to its nearest phrase by embedding when
      that phrase is as similar as a synonym (cosine >= ``tau``, the encoder's SYNONYM threshold): a name written
      otherwise than the phrase ("aschenbrodel", "tikhaya sosna").

    Only phrases that some passage names are linked (a phrase known only as a triple's argument names no entity).
    Each link is weighed by node specificity times its confidence (:data:`LinkedEntity.confidence`, how surely
    the words name the phrase: of the passages whose text holds them, the share that name its entity, in these
    words or a synonym's;
    ``cypher/phrase_stats.cypher``), ``confidence / |P_i|``, normalised to sum 1 over the links; a phrase is linked
    once. With ``scope`` (a filter's passages) only the phrases they mention, counted among them."""
    if scope is not None and not len(scope):
        return []
    only = scope.nodes if scope is not None else None
    runs = word_runs(terms)
    phrases: dict[str, list[str]] = {}
    if runs:
        for r in store.run("phrase_matches", grams=sorted({g for _, _, g in runs}), only=only):
            phrases.setdefault(r["gram"], []).append(r["text"])
    found = longest([run for run in runs if run[2] in phrases])
    spans = [tuple(terms.words[s:e]) for s, e, _ in found]
    names = [n for n in dict.fromkeys(terms.names) if fold_phrase(n) and not _inside(tuple(fold_phrase(n).split()), spans)]
    matched = {t for _, _, g in found for t in phrases[g]}
    near: dict[str, LinkedEntity] = {}  # one link a phrase
    for link in link_entities(store, encoder, names, scope):
        if link.similarity >= tau and link.phrase not in matched:
            near.setdefault(link.phrase, link)
    texts = list(dict.fromkeys([t for _, _, g in found for t in phrases[g]] + list(near)))
    limit = OCCURS_LIMIT if scope is None else scope.beam(OCCURS_LIMIT)
    stats = {r["text"]: r for r in store.run("phrase_stats", texts=texts, limit=limit, only=only)} if texts else {}
    links = [LinkedEntity(entity=g, phrase=t, similarity=1.0, passages=0) for _, _, g in found for t in phrases[g]
             if alnum_count(g) > 1]
    kept: list[LinkedEntity] = []
    for link in links + list(near.values()):
        row = stats.get(link.phrase)
        if row is None or row["named"] == 0 or any(k.phrase == link.phrase for k in kept):
            continue  # a phrase no passage names, or one the question names twice
        link.passages, link.since = row["passages"], row["since"]
        link.confidence = min(1.0, row["namedAs"] / max(row["occurs"], row["named"]))
        kept.append(link)
    total = sum(link.confidence / link.passages for link in kept)
    for link in kept:
        link.weight = link.confidence / link.passages / total
    return kept


def phrases_within(store: GraphStore, rows: list[dict[str, Any]], scope: Scope) -> dict[Any, Any]:
    """The nearest phrase of each row among those ``scope``'s passages mention (``cypher/phrase_neighbours_within
    .cypher``): exactly when few pass, else of the index's nearest with a widened beam, exactly again for a row
    none of whose hits passed."""
    found: dict[Any, Any] = {}
    if not scope.exact():
        found = store.search("phrase_neighbours_within", "rows", rows, k=scope.beam(LINK_CANDIDATES), exact=False,
                             only=scope.nodes)
    missing = [row for row in rows if row["key"] not in found]
    if missing:
        found |= store.search("phrase_neighbours_within", "rows", missing, k=0, exact=True, only=scope.nodes)
    return found


def link_facts(store: GraphStore, vector: np.ndarray, top_k: int,
               scope: Scope | None = None) -> tuple[list[FactHit], bool]:
    """The query's ``top_k`` nearest facts of this namespace (cosine), through its fact vector index, and
    whether the namespace has Fact nodes for all its passages. With ``scope`` (a filter's passages) only the
    facts they asserted: exactly when few pass, else of the index's nearest with a widened beam, exactly again
    when that found fewer than ``top_k`` (``cypher/fact_neighbours.cypher``)."""
    if not usable(vector):
        return [], True
    beam, embedding = vector_beam(top_k, CANDIDATES_PER_FACT), vector.tolist()  # the index is approximate (HNSW)
    if scope is None:
        records = store.run("fact_neighbours", embedding=embedding, k=beam, topK=top_k, nodes=None, ids=None)
    else:
        records = scope.search(
            beam, top_k,
            lambda k: store.run("fact_neighbours", embedding=embedding, k=k, topK=top_k, nodes=None, ids=scope.ids),
            lambda: store.run("fact_neighbours", embedding=embedding, k=0, topK=top_k, nodes=scope.nodes,
                              ids=scope.ids))
    hits = [
        FactHit(
            subject=r["subject"], predicate=r["predicate"], object=r["object"], score=float(r["score"]),
            subject_passages=r["subjectPassages"], object_passages=r["objectPassages"], since=r["since"] or 0,
        )
        for r in records
    ]
    return hits, bool(records[0]["complete"]) if records else bool(store.run("facts_complete")[0]["complete"])


def fact_seeds(facts: Sequence[FactHit], top_n: int) -> dict[str, float]:
    """Phrase seeds of the kept facts: each subject and object gets fact score / |P_i|, averaged over the
    kept facts that mention it; the ``top_n`` largest are kept."""
    total: dict[str, float] = {}
    count: Counter[str] = Counter()
    for fact in facts:
        if not fact.kept:
            continue
        for phrase, passages in ((fact.subject, fact.subject_passages), (fact.object, fact.object_passages)):
            if passages > 0:
                total[phrase] = total.get(phrase, 0.0) + fact.score / passages
                count[phrase] += 1
    averaged = {t: w / count[t] for t, w in total.items() if w > 0}
    top = sorted(averaged.items(), key=lambda x: (-x[1], x[0]))[:top_n]
    return dict(top)


def newest_seed(seeds: dict[str, float], links: Sequence[LinkedEntity] = (), facts: Sequence[FactHit] = ()) -> int:
    """The graph version that created the newest seed phrase (a projection older than that lacks it): of the
    links whose phrase seeds the walk, and of the kept facts the phrase seeds come from."""
    return max([link.since for link in links if link.phrase in seeds] + [f.since for f in facts if f.kept], default=0)


def recognise(fact_filter: RecognitionFilterLike | None, text: str, facts: list[FactHit]) -> str:
    """Apply the recognition filter to ``facts`` (sets ``kept``); returns what the result reports."""
    if fact_filter is None or not facts:
        return "off"
    try:
        keep = set(fact_filter.select(text, [f.triple for f in facts]))
    except Exception as exc:  # noqa: BLE001 - an unusable LLM must not fail retrieval: all facts stay
        log.warning("recognition filter failed (%s); keeping all %d facts", exc, len(facts))
        return f"failed: {exc}"
    for i, fact in enumerate(facts):
        fact.kept = i in keep
    return getattr(fact_filter, "name", type(fact_filter).__name__)
