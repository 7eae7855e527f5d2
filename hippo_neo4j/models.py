"""The data the library takes in and gives back: passages in, index reports and retrieval results out."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, Field, ValidationError, WithJsonSchema, field_validator

from .errors import ConfigError
from .metadata import METADATA_SCHEMA, check_metadata
from .text import printable, scrub


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
    """A passage to index: a stable id (given, or derived from the content), optional title, text, and
    metadata (``hippo_neo4j/metadata.py``: not part of the content, so changing it alone re-indexes nothing)."""

    id: str | None = None
    title: str = ""
    text: str
    extraction: Extraction | None = None
    metadata: Annotated[dict[str, Any], WithJsonSchema(METADATA_SCHEMA)] = Field(
        default_factory=dict, description="scalars, dates and lists of strings, by identifier: what queries can "
        "filter on")

    @field_validator("id", "title", "text", mode="before")
    @classmethod
    def _scrub(cls, value: Any) -> Any:
        return scrub(value) if isinstance(value, str) else value

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> Any:
        return check_metadata(value)  # a ConfigError, not a ValueError: it reaches the caller as it is

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


def as_passage(item: PassageIn | dict[str, Any] | str) -> PassageIn:
    """A passage from a :class:`PassageIn`, a map of its fields (HippoRAG's ``extracted_triples`` and
    ``extracted_entities`` too), or a string (its text). Anything else is a TypeError ("not a passage object:
    int 42"); invalid fields a ValidationError, invalid metadata a ConfigError. A :class:`PassageIn` is copied:
    indexing fills in the copy's extraction, never the caller's (the same objects indexed again, into another
    namespace or with another extractor, are extracted again)."""
    if isinstance(item, PassageIn):
        return item.model_copy()
    if isinstance(item, str):
        return PassageIn(text=item)
    if not isinstance(item, Mapping):
        raise TypeError(f"not a passage object: {_kind(item)}")
    data = dict(item)
    if "extraction" not in data and ("extracted_triples" in data or "triples" in data):
        data["extraction"] = Extraction(
            named_entities=data.get("extracted_entities") or data.get("named_entities") or [],
            triples=data.get("extracted_triples") or data.get("triples") or [],
        )
    return PassageIn(
        id=str(data["id"]) if data.get("id") not in (None, "") else None,
        title=data.get("title") or "",
        text=data.get("text") if data.get("text") is not None else "",
        extraction=data.get("extraction"),
        metadata=data.get("metadata"),
    )


def _kind(item: Any) -> str:
    """What a non-passage item is, in a few words: 'null', 'a list', 'int 42'."""
    if item is None:
        return "null"
    if isinstance(item, (list, tuple)):
        return f"a list ({len(item)} items)" if len(item) != 1 else "a list (1 item)"
    if isinstance(item, (bool, int, float)):
        return f"{type(item).__name__} {item!r}"
    return f"a {type(item).__name__}"


SHOWN_ID_CHARS = 100  # a skipped item's id is shown up to this length


class SkippedItem(BaseModel):
    """An input item that was not indexed, updated or found unchanged, and why (one line)."""

    item: str = Field(description="the passage's id (its first 100 characters and '…' when longer), or '#<position>' "
                      "(0-based, in the input) when it has none")
    reason: str


def item_name(passage_id: Any, position: int) -> str:
    """How :class:`SkippedItem` names an item: its id if it has one, else its position in the input."""
    if passage_id in (None, ""):
        return f"#{position}"
    text = str(passage_id)
    return text if len(text) <= SHOWN_ID_CHARS else text[:SHOWN_ID_CHARS] + "…"


def read_passage(item: Any, position: int) -> PassageIn | SkippedItem:
    """``item`` (the ``position``-th of an input) as a passage (:func:`as_passage`), or, if it is none, a
    :class:`SkippedItem` saying why: never an exception for a bad item."""
    try:
        return as_passage(item)
    except (TypeError, ValueError, ConfigError) as exc:  # pydantic's ValidationError is a ValueError
        given = item.get("id") if isinstance(item, Mapping) else None
        return SkippedItem(item=item_name(given, position), reason=_one_line(exc))


def _one_line(exc: Exception, limit: int = 300) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        first: Any = errors[0] if errors else {}
        where = ".".join(str(x) for x in first.get("loc", ())) or "passage"
        text = f"invalid {where}: {first.get('msg', 'invalid')}"
        text += f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    else:
        text = str(exc) or type(exc).__name__
    text = printable(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------------------------------- results


class IndexReport(BaseModel):
    documents: int = Field(0, description="documents read (HippoRAG.index_documents): each cut into passages")
    documents_unchanged: int = Field(0, description="documents whose bytes and passage budget were indexed already")
    documents_removed: int = Field(0, description="documents removed with their passages (prune)")
    passages_removed: int = Field(0, description="passages a document no longer holds, removed exactly")
    passages: int = 0
    indexed: int = 0
    unchanged: int = 0
    updated: int = 0
    metadata_updated: int = Field(0, description="passages whose metadata alone changed: written, not re-indexed")
    skipped_empty: int = 0
    skipped_duplicate_id: int = 0
    rejected: list[str] = Field(default_factory=list, description="ids refused: text or id too long (named in skipped)")
    skipped: list[SkippedItem] = Field(
        default_factory=list, description="every input item not indexed, updated or unchanged, with the reason: not a "
        "passage object, invalid fields or metadata, empty text (skipped_empty), text or id too long (rejected), an id "
        "the batch has already (skipped_duplicate_id)")
    extraction_failures: list[str] = Field(default_factory=list, description="passages the extractor failed on: not "
                                           "indexed, retried on the next run")
    no_triples: int = 0
    triples: int = 0
    malformed_triples: int = 0
    self_loop_triples: int = 0
    new_phrases: int = 0
    new_facts: int = 0
    synonym_edges: int = 0
    timings: dict[str, float] = Field(default_factory=lambda: {"extract_s": 0.0, "embed_s": 0.0, "write_s": 0.0, "synonym_s": 0.0})

    @property
    def not_indexed(self) -> int:
        """Input items left out of the namespace: the skipped ones and the extraction failures (0: every item is
        indexed, updated or unchanged)."""
        return len(self.skipped) + len(self.extraction_failures)

    def merge(self, other: "IndexReport") -> None:
        for name, value in other:
            if name == "timings":
                for k, v in value.items():
                    self.timings[k] = self.timings.get(k, 0.0) + v
            elif isinstance(value, list):
                getattr(self, name).extend(value)
            else:
                setattr(self, name, getattr(self, name) + value)


class QueryTerms(BaseModel):
    """A question as the linking reads it, whatever its casing: its words (lower-case, normalised and without
    accents, ``text.fold_phrase``), whether each is a noun, proper noun or number (``nominal``) or a stop word
    (``stop``) in the parse of the lower-cased question, and the extractor's query entities of the lower-cased
    question (``names``: linked by embedding where no phrase of the namespace is found among the words)."""

    words: list[str] = Field(default_factory=list)
    nominal: list[bool] = Field(default_factory=list)
    stop: list[bool] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)


class LinkedEntity(BaseModel):
    entity: str
    phrase: str
    similarity: float
    passages: int
    weight: float = 0.0
    confidence: float = Field(1.0, description="how surely the words name the phrase's entity: of the passages "
                              "whose text holds the phrase, the share that name it or a synonym of it (1.0 for "
                              "entities given)")
    since: int = Field(0, exclude=True)  # the graph version that created the phrase


class Contributor(BaseModel):
    phrase: str
    contribution: float


class FactHit(BaseModel):
    """A fact the query linked to: its triple, cosine to the query, |P| of its subject and object, and
    whether the recognition filter kept it."""

    subject: str
    predicate: str
    object: str
    score: float
    subject_passages: int = 0
    object_passages: int = 0
    kept: bool = True
    since: int = Field(0, exclude=True)  # the newest graph version that created its subject or object phrase

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


class Seed(BaseModel):
    """A PPR seed: a phrase (by text) or a passage (by id) and its reset weight."""

    node: str
    weight: float


class RetrievedPassage(BaseModel):
    id: str
    title: str | None = None
    text: str
    score: float = Field(description="the mode's score, non-increasing down a result: entity-ppr, its evidence "
                         "(-log10 of a chance); hipporag1 and hipporag2, PPR mass; dense, cosine; bm25, BM25; hybrid, "
                         "the fused score; 0 for a passage filled from dense retrieval")
    contributors: list[Contributor] = Field(default_factory=list)
    filled: bool = Field(False, description="not found by the mode itself: added from dense retrieval to reach top_k")
    metadata: dict[str, Any] = Field(default_factory=dict, description="the passage's metadata, as indexed")
    signals: dict[str, Any] = Field(
        default_factory=dict,
        description="entity-ppr: why the passage is here: `placed`, the evidence that ranks it ('agreement': dense and "
                    "the entity walk both rank it high; 'hop': the walk from the agreed passages leads to it and the "
                    "walk or dense ranks it high; 'walk', 'entity', 'dense': that signal alone ranks it high), "
                    "`evidence` (each kind's -log10 "
                    "chance; `score` is the largest), `dense_rank`, `entity_walk_rank`, `walk_rank`, `hop_rank` (None: "
                    "not ranked; passages a signal scores alike share the last place they hold) and, "
                    "for a 'hop' passage, `via`: the agreed passage and the phrase the hop reached it through (`self`: the "
                    "passage is agreed itself and the hop leads back to it)",
    )


class RetrievalResult(BaseModel):
    query: str
    mode: str
    entities: list[str] = Field(default_factory=list)
    linked: list[LinkedEntity] = Field(default_factory=list)
    top_phrases: list[dict[str, Any]] = Field(default_factory=list)
    facts: list[FactHit] = Field(default_factory=list, description="hipporag2: facts retrieved (kept or not)")
    recognition_filter: str | None = Field(None, description="hipporag2: the LLM recognition filter used, 'off', or "
                                           "why it failed")
    phrase_seeds: list[Seed] = Field(default_factory=list)
    passage_seeds: list[Seed] = Field(default_factory=list, description="hipporag2: the largest passage seeds")
    passages: list[RetrievedPassage] = Field(default_factory=list)
    filtered_passages: int | None = Field(None, description="with filters: the namespace's passages that pass them "
                                          "(the only ones seeded and returned); None: no filter")
    graph_version: int | None = Field(None, description="graph modes: the namespace graph version the walk ran on")
    writes_behind: int = Field(0, description="graph modes: writes made since that version (a refresh is under way)")
    fell_back: bool = False
    fallback_reason: str | None = None
    warning: str | None = None
    elapsed_ms: float = 0.0

    @property
    def filter(self) -> str | None:
        """Deprecated name of :attr:`recognition_filter` (removed in the next release)."""
        warnings.warn("RetrievalResult.filter is deprecated: use recognition_filter.", DeprecationWarning, stacklevel=2)
        return self.recognition_filter

    @property
    def seeds(self) -> list[tuple[str, float]]:
        """The phrase seeds of the walk (hipporag1: linked entities; hipporag2: phrases of kept facts)."""
        if self.phrase_seeds:
            return [(s.node, s.weight) for s in self.phrase_seeds]
        return [(link.phrase, link.weight) for link in self.linked if link.weight > 0]


class DeleteReport(BaseModel):
    requested: int
    deleted: int
    missing: list[str] = Field(default_factory=list)
