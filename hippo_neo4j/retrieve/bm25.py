"""BM25 (the lexical baseline): Neo4j's full-text (Lucene) index over passage titles and texts.

Within a filter that leaves few passages (:meth:`Scope.exact`), the passages, read with the filter
(``cypher/passages_matching.cypher``), are scored here as a full-text index holding them alone scores them, term
statistics and all (:func:`lucene_bm25`): the ranking a namespace of those passages would give. Within one that leaves many, every hit of the namespace's index, those
passages kept (``cypher/bm25_matching.cypher``), with the namespace's term statistics."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any, Iterable, Sequence

import numpy as np
from neo4j.exceptions import ClientError

from ..config import HippoConfig
from ..models import RetrievalResult
from ..text import lucene_escape, lucene_terms
from .base import Query, Retriever, by_score, to_passages

MAX_BM25_TERMS = 512  # Lucene refuses queries of more than 1024 clauses
MAX_CLAUSES = 1024
FIELDS = ("title", "text")  # the full-text index's fields (cypher/namespace_schema.cypher); a term is a clause of each
K1, B = np.float32(1.2), np.float32(0.75)  # Lucene's BM25Similarity defaults, Neo4j's full-text indexes' similarity


def _int4(value: int) -> int:
    """Lucene's SmallFloat.longToInt4: 4 significant bits and the shift."""
    bits = value.bit_length()
    if bits < 4:
        return value
    shift = bits - 4
    return ((value >> shift) & 0x07) | ((shift + 1) << 3)


def _from_int4(encoded: int) -> int:
    shift = (encoded >> 3) - 1
    return encoded & 0x07 if shift == -1 else ((encoded & 0x07) | 0x08) << shift


_EXACT_LENGTHS = 255 - _int4(2**31 - 1)  # lengths below this are stored exactly


def stored_length(length: int) -> int:
    """A field's length in terms as Lucene's norms keep it (one byte, SmallFloat.intToByte4 and back): exact
    below 24 terms, then rounded down to 4 significant bits."""
    if length < _EXACT_LENGTHS:
        return length
    return _EXACT_LENGTHS + _from_int4(_int4(length - _EXACT_LENGTHS))


def lucene_bm25(terms: Sequence[str], documents: Sequence[dict[str, Any]]) -> list[float]:
    """Each document's score for the query ``terms`` (one clause per term and field, summed) as Lucene's
    BM25Similarity gives it in an index holding ``documents`` alone: per field, idf from the documents that have
    the field and those of them with the term, the field's length as its norm stores it against the field's
    mean length, in float32 as Lucene computes it."""
    scores = np.zeros(len(documents))
    for name in FIELDS:
        fields = [Counter(lucene_terms(d.get(name))) for d in documents]
        lengths = [sum(f.values()) for f in fields]
        count = sum(1 for n in lengths if n)
        if not count:
            continue
        mean = np.float32(sum(lengths) / count)
        inverse = [np.float32(1) / (K1 * ((np.float32(1) - B) + B * np.float32(stored_length(n)) / mean)) for n in lengths]
        for term in terms:
            having = [i for i, f in enumerate(fields) if term in f]
            if not having:
                continue
            idf = np.float32(math.log(1 + (count - len(having) + 0.5) / (len(having) + 0.5)))
            for i in having:
                scores[i] += float(idf - idf / (np.float32(1) + np.float32(fields[i][term]) * inverse[i]))
    return [float(np.float32(s)) for s in scores]


def _ranked(records: Iterable[Any], terms: Sequence[str], top_k: int) -> list[dict[str, Any]]:
    """The ``top_k`` of ``records`` by :func:`lucene_bm25`, those that match a term; equal scores in the order of
    the passage ids, as the full-text statements order them."""
    rows = [dict(r) for r in records]
    for row, score in zip(rows, lucene_bm25(terms, rows)):
        row["score"] = score
    return by_score(r for r in rows if r["score"] > 0)[:top_k]


class BM25Retriever(Retriever):
    name = "bm25"
    reads_passages = True

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        text = query.text
        words = list(re.finditer(r"\w+", text))
        cut = text if len(words) <= MAX_BM25_TERMS else text[: words[MAX_BM25_TERMS - 1].end()]
        lucene = lucene_escape(cut).strip()
        scope = query.scope
        if not lucene or not words or (scope is not None and not len(scope)):
            return RetrievalResult(query=text, mode=self.name)
        if scope is not None and scope.passages is not None:  # few pass: read with the filter (Scope.of)
            while len(cut) >= 2 and len(FIELDS) * len(lucene_terms(cut)) > MAX_CLAUSES:  # as Lucene refuses below
                cut = cut[: len(cut) // 2]
            records = _ranked(scope.passages, lucene_terms(cut), query.top_k)
            return RetrievalResult(query=text, mode=self.name, passages=to_passages(records))
        while True:
            try:
                records = (self.store.run("bm25_passages", query=lucene, topK=query.top_k) if scope is None else
                           self.store.run("bm25_matching", query=lucene, topK=query.top_k, nodes=scope.nodes,
                                          limit=scope.total))
                break
            except ClientError as exc:  # more clauses than Lucene allows (e.g. CJK: a clause per character)
                if "TooManyClauses" not in str(exc) or len(cut) < 2:
                    raise
                cut = cut[: len(cut) // 2]
                lucene = lucene_escape(cut).strip()
        return RetrievalResult(query=text, mode=self.name, passages=to_passages(records))
