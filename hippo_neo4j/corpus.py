"""Reading corpora (a JSON list of {title, text}, or a folder of .txt/.md files) and HippoRAG OpenIE files."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .errors import HippoError
from .models import Extraction, PassageIn, read_passage

log = logging.getLogger(__name__)


def load_openie(path: str | Path) -> list[PassageIn | Any]:
    """Passages with their extraction from a HippoRAG OpenIE file; a doc that is not an object is kept as it is,
    in its place, for :meth:`HippoRAG.index <hippo_neo4j.memory.HippoRAG.index>` to name (as :func:`load_corpus`)."""
    try:
        data = json.loads(_read_utf8(path))
    except (OSError, ValueError) as exc:
        raise HippoError(f"Cannot read OpenIE file {path}: {exc}") from None
    docs = data.get("docs") if isinstance(data, dict) else None
    if not isinstance(docs, list):
        raise HippoError(f"{path} is not a HippoRAG OpenIE file: expected an object with a 'docs' list.")
    passages = []
    for doc in docs:
        if not isinstance(doc, dict):
            passages.append(doc)
            continue
        title, body = doc.get("title") or "", doc.get("text")
        if body is None:  # older files only carry "passage" = title + "\n" + text
            body = doc.get("passage") or ""
        passages.append(
            PassageIn(
                title=title,
                text=body,
                extraction=Extraction(
                    named_entities=[e for e in doc.get("extracted_entities") or [] if isinstance(e, str)],
                    triples=doc.get("extracted_triples") or [],
                ),
            )
        )
    return passages


def _read_utf8(path: str | Path) -> str:
    """A file's text; bytes that are not UTF-8 become U+FFFD, with a warning that says where."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        log.warning(
            "%s is not valid UTF-8 (first bad byte at offset %d): %d invalid sequences replaced with U+FFFD",
            path, exc.start, text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd"),
        )
        return text


def load_corpus(path: str | Path) -> list[PassageIn | Any]:
    """A HippoRAG corpus JSON list of {title, text} (optional id), or a directory of .txt/.md files.

    Each item of the list that is no passage (not an object, a field or the metadata invalid) is kept as it is,
    in its place: :meth:`HippoRAG.index <hippo_neo4j.memory.HippoRAG.index>` names it, with its position and the
    reason, in the report's ``skipped``."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in {".txt", ".md"} and p.is_file())
        return [
            PassageIn(id=str(f.relative_to(path)), title=f.stem, text=f.read_text(encoding="utf-8", errors="replace"))
            for f in files
        ]
    try:
        data = json.loads(_read_utf8(path))
    except (OSError, ValueError) as exc:
        raise HippoError(f"Cannot read corpus {path}: {exc}") from None
    if not isinstance(data, list):
        raise HippoError(f"{path}: a corpus is a JSON list of {{\"title\", \"text\"}} objects.")
    return [_passage_or_item(d) for d in data]


def _passage_or_item(item: Any) -> PassageIn | Any:
    passage = read_passage(item, 0)
    return passage if isinstance(passage, PassageIn) else item
