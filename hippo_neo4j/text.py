"""Phrase normalisation (HippoRAG: lower-case, non-alphanumerics to space, whitespace collapsed)."""

from __future__ import annotations

import re
import unicodedata

_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)


def normalize_phrase(text: object) -> str:
    """Normalised phrase text; Unicode letters and digits are kept (so 'Südhof' stays 'südhof')."""
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFC", text)
    return _NON_ALNUM.sub(" ", text.lower()).strip()


_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """Lone surrogates (from ``\\udXXX`` escapes in JSON, or bytes decoded with surrogateescape) cannot be
    encoded as UTF-8 for Neo4j or the tokenizer: each becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def alnum_count(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


def lucene_escape(text: str) -> str:
    """Escape user text for a Lucene full-text query: every term matches literally, OR-ed together."""
    escaped = _LUCENE_SPECIAL.sub(r"\\\1", text)
    # AND / OR / NOT are operators only in upper case; lower-casing them keeps them as plain words
    return re.sub(r"\b(AND|OR|NOT)\b", lambda m: m.group(1).lower(), escaped)
