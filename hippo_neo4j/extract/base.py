"""What an extractor is (:class:`Extractor`, :class:`StreamingExtractor`) and what it reports of a passage it
could not read (:class:`ExtractionFailure`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Protocol, Sequence, runtime_checkable

from ..models import Extraction, PassageIn


@runtime_checkable
class Extractor(Protocol):
    """Passages in, one :class:`~hippo_neo4j.models.Extraction` (or None: failed) each out; a question's entities."""

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
