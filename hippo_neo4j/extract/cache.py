"""A persistent extraction cache (one SQLite file) and an extractor wrapper that uses it.

Entries are keyed by (extractor name, passage content hash); the extractor name carries the model and the
prompt version, so a new model or prompt never reuses old answers. Successes are stored as JSON; failures
go to a separate table with the raw answer and the error, are never returned as successes, and are retried
on the next run. Every result is committed as soon as it arrives, so a run killed half-way loses nothing
already paid for. The file is opened in WAL mode and is safe for several threads and processes.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..config import default_cache_path
from ..models import Extraction, PassageIn
from .base import ExtractionFailure, Extractor, StreamingExtractor

SCHEMA = """
CREATE TABLE IF NOT EXISTS extractions (
    extractor  TEXT NOT NULL,
    hash       TEXT NOT NULL,
    result     TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (extractor, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failures (
    extractor  TEXT NOT NULL,
    hash       TEXT NOT NULL,
    passage_id TEXT NOT NULL,
    error      TEXT NOT NULL,
    raw        TEXT,
    attempts   INTEGER NOT NULL DEFAULT 1,
    last_at    REAL NOT NULL,
    PRIMARY KEY (extractor, hash)
) WITHOUT ROWID;
"""


@dataclass(frozen=True)
class FailureRecord:
    """A stored failure: which passage, why, the raw model answer and how many runs have failed on it."""

    extractor: str
    hash: str
    passage_id: str
    error: str
    raw: str | None
    attempts: int


class ExtractionCache:
    """Extractions by (extractor name, content hash) in one SQLite file; thread-safe, commit per write."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path).expanduser() if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # autocommit (isolation_level=None): every statement is its own committed transaction
        self._db = sqlite3.connect(
            self.path, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=30000")
        with self._lock:
            self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> "ExtractionCache":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, extractor: str, content_hash: str) -> Extraction | None:
        return self.get_many(extractor, [content_hash]).get(content_hash)

    def get_many(self, extractor: str, hashes: Iterable[str]) -> dict[str, Extraction]:
        """Stored successes among ``hashes`` (failures are never returned)."""
        wanted = list(dict.fromkeys(hashes))
        out: dict[str, Extraction] = {}
        with self._lock:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT hash, result FROM extractions WHERE extractor = ? AND hash IN ({marks})",
                    [extractor, *chunk],
                ).fetchall()
                for h, result in rows:
                    out[h] = Extraction.model_validate_json(result)
        return out

    def put(self, extractor: str, content_hash: str, extraction: Extraction) -> None:
        """Store a success (and forget any earlier failure of the same passage)."""
        payload = extraction.model_dump_json()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO extractions (extractor, hash, result, created_at) VALUES (?, ?, ?, ?)",
                    (extractor, content_hash, payload, time.time()),
                )
                self._db.execute(
                    "DELETE FROM failures WHERE extractor = ? AND hash = ?", (extractor, content_hash)
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def put_failure(self, extractor: str, content_hash: str, failure: ExtractionFailure) -> None:
        """Record a failure with its raw answer; it is retried (not served) on the next run."""
        with self._lock:
            self._db.execute(
                """INSERT INTO failures (extractor, hash, passage_id, error, raw, attempts, last_at)
                   VALUES (?, ?, ?, ?, ?, 1, ?)
                   ON CONFLICT (extractor, hash) DO UPDATE SET passage_id = excluded.passage_id,
                     error = excluded.error, raw = excluded.raw, attempts = failures.attempts + 1,
                     last_at = excluded.last_at""",
                (extractor, content_hash, failure.passage_id, failure.error, failure.raw, time.time()),
            )

    def failures(self, extractor: str | None = None) -> list[FailureRecord]:
        """Stored failures, newest first (optionally for one extractor)."""
        query = "SELECT extractor, hash, passage_id, error, raw, attempts FROM failures"
        args: tuple[str, ...] = ()
        if extractor is not None:
            query += " WHERE extractor = ?"
            args = (extractor,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY last_at DESC", args).fetchall()
        return [FailureRecord(*row) for row in rows]

    def count(self, extractor: str | None = None) -> int:
        """Number of stored successes (optionally for one extractor)."""
        with self._lock:
            if extractor is None:
                return int(self._db.execute("SELECT count(*) FROM extractions").fetchone()[0])
            return int(
                self._db.execute(
                    "SELECT count(*) FROM extractions WHERE extractor = ?", (extractor,)
                ).fetchone()[0]
            )


@dataclass
class CacheCounts:
    """What a cached extractor did: passages served from the cache, newly extracted, and failed."""

    cached: int = 0
    new: int = 0
    failures: list[ExtractionFailure] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return len(self.failures)

    def summary(self) -> str:
        return f"{self.cached} extractions from cache, {self.new} new, {self.failed} failed"


class CachedExtractor:
    """An :class:`Extractor` that asks ``inner`` only for passages the cache does not hold.

    Results are written as they arrive (per passage for streaming extractors, per ``chunk_size`` passages
    otherwise). ``counts`` accumulates over the wrapper's life; ``reset_counts()`` starts afresh.
    """

    def __init__(self, inner: Extractor, cache: ExtractionCache, chunk_size: int = 64) -> None:
        self.inner = inner
        self.cache = cache
        self.chunk_size = chunk_size
        self.name = inner.name
        self.counts = CacheCounts()

    def reset_counts(self) -> None:
        self.counts = CacheCounts()

    def query_entities(self, text: str) -> list[str]:
        return self.inner.query_entities(text)

    def __getattr__(self, name: str) -> Any:  # what else the extractor offers (the offline one's query_terms)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def extract(self, passages: Sequence[PassageIn]) -> list[Extraction | None]:
        hashes = [p.hash for p in passages]
        found = self.cache.get_many(self.name, hashes)
        results: list[Extraction | None] = [found.get(h) for h in hashes]
        self.counts.cached += sum(r is not None for r in results)
        # one call per distinct missing content, even if the batch repeats a passage
        todo: dict[str, PassageIn] = {}
        for passage, h, result in zip(passages, hashes, results):
            if result is None and h not in todo:
                todo[h] = passage
        missing = list(todo.values())
        done: dict[str, Extraction] = {}
        for passage, outcome in self._run(missing):
            h = passage.hash
            if isinstance(outcome, ExtractionFailure):
                self.cache.put_failure(self.name, h, outcome)
                self.counts.failures.append(outcome)
            else:
                self.cache.put(self.name, h, outcome)
                done[h] = outcome
                self.counts.new += 1
        return [r if r is not None else done.get(h) for r, h in zip(results, hashes)]

    def _run(self, passages: list[PassageIn]) -> Iterable[tuple[PassageIn, Extraction | ExtractionFailure]]:
        if not passages:
            return
        if isinstance(self.inner, StreamingExtractor):
            for i, outcome in self.inner.extract_iter(passages):
                yield passages[i], outcome
            return
        for start in range(0, len(passages), self.chunk_size):
            chunk = passages[start : start + self.chunk_size]
            for passage, result in zip(chunk, self.inner.extract(chunk)):
                yield passage, result if result is not None else ExtractionFailure(
                    passage.passage_id, "the extractor returned no result"
                )
