"""BM25 (the lexical baseline): Neo4j's full-text (Lucene) index over passage titles and texts; within a filter's
passages, every hit of the index, those passages kept (``cypher/bm25_matching.cypher``)."""

from __future__ import annotations

import re

from neo4j.exceptions import ClientError

from ..config import HippoConfig
from ..models import RetrievalResult
from ..text import lucene_escape
from .base import Query, Retriever, to_passages

MAX_BM25_TERMS = 512  # Lucene refuses queries of more than 1024 clauses


class BM25Retriever(Retriever):
    name = "bm25"

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        text = query.text
        words = list(re.finditer(r"\w+", text))
        cut = text if len(words) <= MAX_BM25_TERMS else text[: words[MAX_BM25_TERMS - 1].end()]
        lucene = lucene_escape(cut).strip()
        if not lucene or not words or (query.scope is not None and not len(query.scope)):
            return RetrievalResult(query=text, mode=self.name)
        while True:
            try:
                records = (self.store.run("bm25_passages", query=lucene, topK=query.top_k) if query.scope is None else
                           self.store.run("bm25_matching", query=lucene, topK=query.top_k, nodes=query.scope.nodes,
                                          limit=query.scope.total))
                break
            except ClientError as exc:  # more clauses than Lucene allows (e.g. CJK: a clause per character)
                if "TooManyClauses" not in str(exc) or len(cut) < 2:
                    raise
                cut = cut[: len(cut) // 2]
                lucene = lucene_escape(cut).strip()
        return RetrievalResult(query=text, mode=self.name, passages=to_passages(records))
