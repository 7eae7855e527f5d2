"""Extractors turn passages into named entities and (subject, predicate, object) triples.

An extractor has a ``name`` (part of the extraction cache key, e.g. ``"offline:en_core_web_sm-3.8.0:v2"`` or
``"llm:<model>:<prompt version>"``), ``extract(passages)`` returning one ``Extraction | None`` per passage
(None: that passage failed and is reported, never indexed as empty) and ``query_entities(text)`` for retrieval.

Extractors that call a slow service may also offer ``extract_iter(passages)``, yielding
``(index, Extraction | ExtractionFailure)`` as each passage completes, so a cache can store results as they
arrive and an interrupted run loses nothing already paid for.
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from ..models import QueryTerms
from .base import ExtractionFailure, Extractor, StreamingExtractor


def make_extractor(kind: str = "auto", cache: object = True, **options: object) -> Extractor:
    """``auto`` | ``llm`` | ``offline``, cached by default; see :func:`hippo_neo4j.extract.factory.make_extractor`.

    Imported lazily so that ``import hippo_neo4j.extract`` loads neither spaCy nor openai.
    """
    from .factory import make_extractor as _make

    return _make(kind, cache, **options)  # type: ignore[arg-type]


class LockedExtractor:
    """An extractor whose calls run one at a time (spaCy pipelines are not safe to share across threads)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self._lock = threading.Lock()

    def extract(self, passages: Sequence[Any]) -> Any:
        with self._lock:
            return self.inner.extract(passages)

    def query_entities(self, text: str) -> list[str]:
        with self._lock:
            return self.inner.query_entities(text)

    def query_terms(self, text: str) -> QueryTerms:
        with self._lock:
            return self.inner.query_terms(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def thread_safe(extractor: Any) -> Any:
    """``extractor`` as several threads may call it: the offline (spaCy) one, whose tokenizer cache every call
    mutates, behind a lock (:class:`LockedExtractor`); the others (LLM, given extractions) as they are."""
    from .offline import OfflineExtractor

    inner = extractor
    while hasattr(inner, "inner"):  # CachedExtractor, LockedExtractor wrap the real one
        if isinstance(inner, LockedExtractor):
            return extractor
        inner = inner.inner
    return LockedExtractor(extractor) if isinstance(inner, OfflineExtractor) else extractor


_READER: LockedExtractor | None = None
_READER_LOCK = threading.Lock()


def query_terms(extractor: Any, text: str) -> QueryTerms:
    """The question as the linking reads it (:class:`~hippo_neo4j.models.QueryTerms`): ``extractor``'s own reading
    when it reads questions (the offline one), else the offline reader's words with ``extractor``'s query
    entities of the lower-cased question as the names (an LLM's, say)."""
    if hasattr(extractor, "query_terms"):
        return extractor.query_terms(text)
    global _READER
    with _READER_LOCK:
        if _READER is None:
            from .offline import OfflineExtractor

            _READER = LockedExtractor(OfflineExtractor())
    terms = _READER.query_terms(text)
    terms.names = list(extractor.query_entities(text.lower()))
    return terms


__all__ = ["Extractor", "ExtractionFailure", "LockedExtractor", "StreamingExtractor", "make_extractor", "query_terms", "thread_safe"]
