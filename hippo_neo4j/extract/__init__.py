"""Extractors turn passages into named entities and (subject, predicate, object) triples.

An extractor has a ``name`` (part of the extraction cache key, e.g. ``"offline:en_core_web_sm-3.8.0:v2"`` or
``"llm:<model>:<prompt version>"``), ``extract(passages)`` returning one ``Extraction | None`` per passage
(None: that passage failed and is reported, never indexed as empty) and ``query_entities(text)`` for retrieval.

Extractors that call a slow service may also offer ``extract_iter(passages)``, yielding
``(index, Extraction | ExtractionFailure)`` as each passage completes, so a cache can store results as they
arrive and an interrupted run loses nothing already paid for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Protocol, Sequence, runtime_checkable

from ..models import Extraction, PassageIn


class Extractor(Protocol):
    name: str

    def extract(self, passages: Sequence[PassageIn]) -> list[Extraction | None]: ...

    def query_entities(self, text: str) -> list[str]: ...


@dataclass(frozen=True)
class ExtractionFailure:
    """One passage that could not be extracted: why, and the raw model output (for debugging)."""

    passage_id: str
    error: str
    raw: str | None = None


@runtime_checkable
class StreamingExtractor(Protocol):
    name: str

    def extract_iter(
        self, passages: Sequence[PassageIn]
    ) -> Iterator[tuple[int, Extraction | ExtractionFailure]]: ...


def make_extractor(kind: str = "auto", cache: object = True, **options: object) -> Extractor:
    """``auto`` | ``llm`` | ``offline``, cached by default; see :func:`hippo_neo4j.extract.factory.make_extractor`.

    Imported lazily so that ``import hippo_neo4j.extract`` loads neither spaCy nor openai.
    """
    from .factory import make_extractor as _make

    return _make(kind, cache, **options)  # type: ignore[arg-type]


__all__ = ["Extractor", "ExtractionFailure", "StreamingExtractor", "make_extractor"]
