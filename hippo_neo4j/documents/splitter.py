"""Cut documents into passages that fit the encoder's window, along the document's own structure.

Each section (a Markdown or HTML heading's text, a PDF page, a whole text file) is a unit of its own: units are
never merged, so a section that fits the budget is exactly one passage and keeps its heading path. A unit over the
budget is cut by semantic-text-splitter at the highest boundary that fits: blank-line paragraphs, then lines,
then sentences, then words. Passage ids hash the passage text, so an unchanged passage keeps its id when the rest
of its document changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hippo_neo4j.documents.readers import Document
from hippo_neo4j.models import PassageIn

if TYPE_CHECKING:
    import tokenizers

TITLE_SEPARATOR = " › "

# How the readers and this module turn a file's bytes into passages. It changes when the same bytes would give
# other passages (2: Markdown sections as plain text, without marks and link addresses); a document indexed under
# another version is cut again, as a changed document is, though its bytes are the same.
CUT_VERSION = 2


@dataclass(frozen=True)
class DocumentPassage:
    """A passage cut from a document: its text, the headings above it, its PDF page, its place in reading order."""

    text: str
    heading_path: list[str]
    page: int | None
    ordinal: int  # 0-based, in the document's reading order


class TokenCounter:
    """Counts the tokens a tokenizer makes of a text, without special tokens, truncation or padding.

    The encoder adds its special tokens ([CLS], [SEP]) itself; a budget counted without them is the text's share of
    the window. Truncation and padding are turned off on a private copy, so a long text counts in full and the
    caller's tokenizer is left as it was.
    """

    def __init__(self, tokenizer: tokenizers.Tokenizer) -> None:
        import tokenizers

        self.tokenizer: tokenizers.Tokenizer = tokenizers.Tokenizer.from_str(tokenizer.to_str())
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def __call__(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)


def token_counter(tokenizer: str | Path | tokenizers.Tokenizer) -> TokenCounter:
    """A token counter for a `tokenizers` tokenizer, given as the object, its JSON file or a folder holding one.

    A folder is searched for `tokenizer.json`, else a single `*tokenizer.json` (the layout of the cached ONNX
    models).
    """
    import tokenizers

    if isinstance(tokenizer, tokenizers.Tokenizer):
        return TokenCounter(tokenizer)
    path = Path(tokenizer)
    if path.is_dir():
        candidates = [path / "tokenizer.json"] if (path / "tokenizer.json").is_file() else sorted(
            path.glob("*tokenizer.json"))
        if len(candidates) != 1:
            raise FileNotFoundError(f"{path}: expected one tokenizer.json, found {len(candidates)}")
        path = candidates[0]
    return TokenCounter(tokenizers.Tokenizer.from_file(str(path)))


def passages_of(document: Document, count_tokens: Callable[[str], int], max_tokens: int) -> list[DocumentPassage]:
    """The document's passages in reading order, each at most `max_tokens` as counted by `count_tokens`.

    A section within the budget is one passage; a longer one is cut at paragraphs, then lines, sentences and
    words. Whitespace-only sections are skipped, and each passage is trimmed.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, not {max_tokens}")
    splitter: Any = None
    passages: list[DocumentPassage] = []
    for section in document.sections:
        text = section.text.strip()
        if not text:
            continue
        if count_tokens(text) <= max_tokens:
            pieces: Iterable[str] = [text]
        else:
            if splitter is None:
                from semantic_text_splitter import TextSplitter

                splitter = TextSplitter.from_callback(count_tokens, max_tokens, trim=True)
            pieces = splitter.chunks(text)
        for piece in pieces:
            if piece.strip():
                passages.append(DocumentPassage(piece, list(section.heading_path), section.page, len(passages)))
    return passages


def section_title(document: Document, heading_path: Sequence[str]) -> str:
    """A document passage's title: its own heading, else the document's title. The title is embedded and extracted
    with the text, as HippoRAG's passages are; the whole heading path is on the passage's FROM_DOCUMENT link
    (:func:`heading_of`)."""
    return heading_path[-1] if heading_path else document.title


def heading_of(heading_path: Sequence[str]) -> str:
    """The heading path as the FROM_DOCUMENT link keeps it: "Safety › Fire"."""
    return TITLE_SEPARATOR.join(heading_path)


def passage_id(document_id: str, text: str, occurrence: int = 0) -> str:
    """A passage's id: its document's id and the hash of its text, so it stays the same while the text does.

    `occurrence` counts earlier passages of the same document with the same text (0 for the first), keeping
    repeated texts apart.
    """
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    return f"{document_id}#{digest}" if occurrence < 1 else f"{document_id}#{digest}-{occurrence}"


def passage_ids(document_id: str, passages: Iterable[DocumentPassage]) -> list[str]:
    """The ids of a document's passages, in order; a text that recurs gets -1, -2, ... on its later copies."""
    seen: dict[str, int] = {}
    ids: list[str] = []
    for passage in passages:
        occurrence = seen.get(passage.text, 0)
        seen[passage.text] = occurrence + 1
        ids.append(passage_id(document_id, passage.text, occurrence))
    return ids


def document_passages(document: Document, count_tokens: Callable[[str], int], budget: int
                      ) -> list[tuple[PassageIn, str]]:
    """The passages a document is indexed as, in reading order, each with its heading path (:func:`heading_of`):
    cut (:func:`passages_of`) so that its title, a newline and its text, as the encoder reads them, fit ``budget``
    tokens; titled by its heading (:func:`section_title`); its id from its text (:func:`passage_ids`); carrying the
    document's metadata (``document``, ``format``, ``modified``, and a PDF page's ``page``) for filters."""
    titles = {section_title(document, s.heading_path) for s in document.sections}
    room = max(budget - max((count_tokens(t) for t in titles), default=0) - 1, 16)
    parts = passages_of(document, count_tokens, room)
    out: list[tuple[PassageIn, str]] = []
    for pid, part in zip(passage_ids(document.id, parts), parts):
        metadata: dict[str, Any] = {"document": document.id, "format": document.format, "modified": document.modified}
        if part.page is not None:
            metadata["page"] = part.page
        passage = PassageIn(id=pid, title=section_title(document, part.heading_path), text=part.text,
                            metadata=metadata)
        out.append((passage, heading_of(part.heading_path)))
    return out
