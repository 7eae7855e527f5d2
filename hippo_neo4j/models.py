"""The data the library takes in and gives back."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, Field, field_validator

from .text import scrub


class Extraction(BaseModel):
    """One passage's OpenIE result, as an extractor or a HippoRAG OpenIE file gives it.

    ``triples`` is kept raw: the indexer validates each one (three non-empty strings) and counts the rest
    as malformed instead of failing.
    """

    named_entities: list[str] = Field(default_factory=list)
    triples: list[Any] = Field(default_factory=list)


def content_hash(title: str, text: str) -> str:
    return hashlib.sha256(f"{title}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


class PassageIn(BaseModel):
    """A passage to index: a stable id (given, or derived from the content), optional title, text."""

    id: str | None = None
    title: str = ""
    text: str
    extraction: Extraction | None = None

    @field_validator("id", "title", "text", mode="before")
    @classmethod
    def _scrub(cls, value: Any) -> Any:
        return scrub(value) if isinstance(value, str) else value

    @property
    def hash(self) -> str:
        return content_hash(self.title, self.text)

    @property
    def passage_id(self) -> str:
        return self.id if self.id else self.hash[:16]

    @property
    def full_text(self) -> str:
        """What is embedded and extracted from (HippoRAG indexes ``title + "\\n" + text``)."""
        return f"{self.title}\n{self.text}" if self.title else self.text
