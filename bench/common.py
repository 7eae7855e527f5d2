"""What the benchmarks share: where the datasets are, the command line of a benchmark over one indexed
namespace, timing and percentiles, timed indexing, the local server's memory, and the ledger that checks
answers given during concurrent writes against what the writer had committed."""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's library, also when run with another interpreter
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hippo_neo4j import HippoRAG  # noqa: E402
from hippo_neo4j.config import ConnectionSettings, ServerSettings  # noqa: E402
from hippo_neo4j.evaluation import load_dataset, percentile  # noqa: E402
from hippo_neo4j.models import IndexReport, PassageIn  # noqa: E402
from hippo_neo4j.runtime import server  # noqa: E402

MUSIQUE = "musique_train"
WIKI = "2wikimultihopqa"
Say = Callable[[str], None]


def default_datasets_dir() -> Path:
    """``$HIPPO_DATASETS``, else ``../shared/datasets`` next to the project (or the working directory)."""
    env = os.environ.get("HIPPO_DATASETS")
    if env:
        return Path(env)
    for base in (Path.cwd(), ROOT):
        candidate = base.parent / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    return Path.cwd().parent / "shared" / "datasets"


def musique_openie() -> Path:
    return default_datasets_dir() / MUSIQUE / "openie_gpt-3.5-turbo-1106.json"


def musique_docs() -> list[PassageIn]:
    """musique_train's passages with their recorded OpenIE extraction, with stable ids m0, m1, ..."""
    from hippo_neo4j.corpus import load_openie

    docs = load_openie(musique_openie())
    for i, d in enumerate(docs):
        d.id = f"m{i}"
    return docs


@dataclass
class Query:
    text: str
    entities: list[str]


def namespace_parser(doc: str) -> argparse.ArgumentParser:
    """The command line of a benchmark over one indexed namespace: ``--namespace`` (required) and ``--dataset``
    (its questions; default musique_train). ``doc``: the script's docstring."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--namespace", required=True)
    parser.add_argument("--dataset", default=str(default_datasets_dir() / MUSIQUE))
    return parser


def namespace_questions(doc: str, queries: int, more: Callable[[argparse.ArgumentParser], None] = lambda p: None
                        ) -> tuple[argparse.Namespace, Any, list[Query]]:
    """:func:`namespace_parser` with ``--queries`` (default ``queries``) and the options ``more`` adds, parsed;
    the offline extractor; and the dataset's first questions with their query entities."""
    from hippo_neo4j.extract import make_extractor

    parser = namespace_parser(doc)
    parser.add_argument("--queries", type=int, default=queries)
    more(parser)
    args = parser.parse_args()
    extractor = make_extractor("offline")
    questions = [Query(q.question, list(extractor.query_entities(q.question)))
                 for q in load_dataset(args.dataset).questions[: args.queries]]
    return args, extractor, questions


# ---------------------------------------------------------------------------------------------- timing


def timed(fn: Callable[[], Any]) -> float:
    """Milliseconds ``fn()`` took."""
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


def p50_p95(samples: Sequence[float]) -> dict[str, float | None]:
    return {"p50": percentile(samples, 50), "p95": percentile(samples, 95)}


def ms(seconds: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of durations in seconds, in ms (one decimal); None without samples."""
    value = percentile(seconds, q)
    return None if value is None else round(value * 1000, 1)


def fmt(value: Any, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def write_json(path: str | Path, data: Any) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return out


# -------------------------------------------------------------------------------------------- indexing


def timed_index(memory: HippoRAG, passages: Sequence[PassageIn]) -> tuple[IndexReport, float]:
    """Index ``passages`` (the encoder loaded beforehand); the report and the wall-clock seconds minus extraction."""
    memory.encoder.encode(["warm up"])
    began = time.perf_counter()
    report = memory.index(passages, progress=True)
    return report, time.perf_counter() - began - report.timings.get("extract_s", 0.0)


def throughput(report: IndexReport, index_s: float) -> dict[str, float]:
    """Passages per second of wall-clock indexing time (extraction excluded), and where the time went:
    ``embed_s`` is the encoder's (in its worker thread, overlapping the writes), ``encode_wait_s`` the time
    the writes waited for it."""
    t = report.timings
    return {"passages_per_s": report.indexed / index_s if index_s else math.nan, "index_s": index_s,
            **{k: t.get(k, 0.0) for k in ("encode_wait_s", "embed_s", "write_s", "synonym_s", "extract_s")},
            "passages": report.indexed}


def add_one_ms(memory: HippoRAG, candidates: Sequence[PassageIn], repeats: int = 5) -> dict[str, Any]:
    """Median time to index one new passage (its extraction supplied); each is deleted again afterwards so
    the graph keeps its size."""
    samples = []
    for p in candidates[:repeats]:
        samples.append(timed(lambda p=p: memory.index([p])))
        memory.delete([p.passage_id])
    return {"median": statistics.median(samples), "samples": samples}


def server_rss_mb(settings: ConnectionSettings) -> float | None:
    """VmRSS of the local server process (the one ``hippo neo4j`` manages at this URI), if it is local."""
    local = ServerSettings.from_env()
    pid = server.running_pid(local) if settings.uri.rstrip("/") == local.uri else None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines() if pid else []:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


# ------------------------------------------------------------------------------------ concurrent writes


@dataclass
class Ledger:
    """What a writer has begun and committed (monotonic timestamps), against which the answers of concurrent
    readers are checked."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    versions: dict[str, set[str]] = field(default_factory=dict)  # id -> texts ever written
    deleted_at: dict[str, float] = field(default_factory=dict)  # id -> when its deletion committed
    adds_begun: int = 0
    adds_committed: int = 0
    deletes_begun: int = 0
    deletes_committed: int = 0

    def preloaded(self, docs: Sequence[PassageIn]) -> None:
        for d in docs:
            self.versions[d.passage_id] = {d.text}
        self.adds_begun = self.adds_committed = len(docs)

    def add(self, docs: Sequence[PassageIn], write: Callable[[], Any]) -> None:
        """Record ``docs`` as begun, ``write()`` them, record them as committed (an update: its new text)."""
        with self.lock:
            for d in docs:
                self.versions.setdefault(d.passage_id, set()).add(d.text)
            self.adds_begun += len(docs)
        write()
        with self.lock:
            self.adds_committed += len(docs)

    def update(self, docs: Sequence[PassageIn], write: Callable[[], Any]) -> None:
        """New texts of passages already counted: recorded before ``write()``, no change to the counts."""
        with self.lock:
            for d in docs:
                self.versions[d.passage_id].add(d.text)
        write()

    def delete(self, ids: list[str], write: Callable[[], Any]) -> None:
        """Record the deletion of ``ids`` as begun, ``write()`` it, record when it committed."""
        with self.lock:
            self.deletes_begun += len(ids)
        write()
        now = time.monotonic()
        with self.lock:
            self.deletes_committed += len(ids)
            for pid in ids:
                self.deleted_at[pid] = now

    def surely_and_possibly(self) -> tuple[int, int]:
        """Passages surely committed (adds committed minus deletions begun) and possibly committed."""
        with self.lock:
            return self.adds_committed - self.deletes_begun, self.adds_begun - self.deletes_committed

    def violations(self, label: str, passages: Sequence[tuple[str, str]], sent: float) -> list[str]:
        """What is wrong with an answer holding ``passages`` (id, text) to a query sent at ``sent``: a passage
        never written, a text never written, or a passage whose deletion committed before the query."""
        out = []
        with self.lock:
            for pid, text in passages:
                texts = self.versions.get(pid)
                if texts is None:
                    out.append(f"{label}: {pid} was never written")
                elif text not in texts:
                    out.append(f"{label}: {pid} has a text that was never written")
                elif pid in self.deleted_at and self.deleted_at[pid] < sent:
                    out.append(f"{label}: {pid} returned after its deletion committed")
        return out


def run_until(threads: list[threading.Thread], stop: threading.Event, done: Callable[[float], bool],
              deadline_s: float, join_s: float = 120.0) -> tuple[float, bool, list[str]]:
    """Start ``threads``; set ``stop`` as soon as ``done(elapsed seconds)`` holds, a thread has ended (a writer
    that failed or ran out of passages) or ``deadline_s`` has passed; join them. The wall time, whether ``done``
    held, and the names of the threads still alive ``join_s`` after the stop."""
    began = time.monotonic()
    for t in threads:
        t.start()
    while not done(time.monotonic() - began) and all(t.is_alive() for t in threads) \
            and time.monotonic() - began < deadline_s:
        time.sleep(0.02)
    reached = done(time.monotonic() - began)
    stop.set()
    hung = []
    for t in threads:
        t.join(join_s)
        if t.is_alive():
            hung.append(t.name)
    return time.monotonic() - began, reached, hung
