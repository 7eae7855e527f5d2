"""Phrase normalisation (HippoRAG: lower-case, non-alphanumerics to space, whitespace collapsed)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex

_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)


def normalize_phrase(text: object) -> str:
    """Normalised phrase text; Unicode letters and digits are kept (so 'Südhof' stays 'südhof')."""
    if not isinstance(text, str):
        return ""
    text = unicodedata.normalize("NFC", text)
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def fold_phrase(text: object) -> str:
    """A phrase's key for matching words as people type them: :func:`normalize_phrase` without accents or other
    combining marks, and compatibility characters in their plain form ('aschenbrödel' -> 'aschenbrodel',
    'ﬁlm' -> 'film'). Phrases keep their text; the key of one whose text it changes is stored beside it
    (``Phrase.fold``)."""
    text = normalize_phrase(text)
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return " ".join("".join(ch for ch in decomposed if not unicodedata.combining(ch)).split())


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


_WORD_BOUNDARY = regex.compile(r"\b", flags=regex.WORD | regex.V1)  # Unicode word boundaries (UAX #29)
_HAS_ALNUM = regex.compile(r"[\p{L}\p{N}]")
MAX_LUCENE_TOKEN = 255  # StandardTokenizer's longest token; a longer word is cut into pieces of this length


# The terms of the texts a process scored last are kept: a filter's passages are scored again on each of its
# queries, and analysing a few hundred passages again would cost more than the query's own statements
@lru_cache(maxsize=2048)
def lucene_terms(text: str | None) -> tuple[str, ...]:
    """The terms Neo4j's default full-text analyzer (``standard-no-stop-words``: Lucene's StandardTokenizer, then
    LowerCaseFilter) makes of ``text``: its words by the Unicode word-break rules (UAX #29: "don't", "3.5" and
    "u.s.a" are one word each, "foo-bar" two, every Han or Hiragana character one), lower-cased a character at a
    time. A Thai or Lao run, one token in Lucene, is cut into its characters here."""
    if not text:
        return ()
    terms: list[str] = []
    for word in _WORD_BOUNDARY.split(text):
        if _HAS_ALNUM.search(word):
            word = word.replace("\u0130", "i").lower()  # Java lower-cases a code point to one code point
            terms.extend(word[i:i + MAX_LUCENE_TOKEN] for i in range(0, len(word), MAX_LUCENE_TOKEN))
    return tuple(terms)


CONTROL = r"\x00-\x1f\x7f-\x9f"  # the control characters (C0, DEL, C1), as a regular expression's class
_UNPRINTABLE = re.compile(f"[{CONTROL}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """``text`` safe to print on one terminal line: control characters (``\\n``, ``\\x00``, ``\\x07``, ...),
    line and paragraph separators and bidirectional overrides escaped as in ``repr`` (``\\n``, ``\\x07``,
    ``\\u202e``); everything else, backslashes included, as it is."""
    return _UNPRINTABLE.sub(lambda m: _ESCAPES.get(m.group()) or repr(m.group())[1:-1], text)
