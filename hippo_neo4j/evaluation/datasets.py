"""Multi-hop QA datasets laid out like the HippoRAG release: ``questions.json`` (gold passages are the paragraphs
with ``is_supporting: true``), ``corpus.json`` and an optional ``openie_*.json`` whose extraction is imported
instead of running an extractor. Gold ids are computed exactly as the indexer computes a corpus entry's id
(``PassageIn.passage_id``), so they match the indexed passages."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..corpus import load_openie
from ..errors import ConfigError, HippoError
from ..models import PassageIn, as_passage, content_hash

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Question:
    id: str
    question: str
    gold: tuple[str, ...]  # passage ids
    answers: tuple[str, ...] = ()  # the gold answer, then its aliases (``answer`` and ``answer_aliases``)


@dataclass
class Dataset:
    name: str
    root: Path
    passages: list[PassageIn]
    questions: list[Question]
    openie: Path | None = None
    unmatched_gold: list[tuple[str, str]] = field(default_factory=list)  # (question id, paragraph title)

    def subset(self, n: int | None) -> "Dataset":
        """The first ``n`` questions (all passages)."""
        if n is None:
            return self
        return Dataset(self.name, self.root, self.passages, self.questions[:n], self.openie, self.unmatched_gold)

    def variant(self, name: str) -> "Dataset":
        """The same questions and gold passages, as written (``as-written``) or in lower case (``lower``: as people
        type a question into a chat box); the corpus is the same, so both are evaluated on one index."""
        if name not in VARIANTS:
            raise ConfigError(f"Unknown question variant {name!r}; choose one of {', '.join(VARIANTS)}.")
        if name == "as-written":
            return self
        questions = [replace(q, question=q.question.lower()) for q in self.questions]
        return Dataset(self.name, self.root, self.passages, questions, self.openie, self.unmatched_gold)


# How hippo eval can ask each question: as the dataset writes it, or in lower case.
VARIANTS = ("as-written", "lower")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HippoError(f"Cannot read {path}: {exc}") from None


def find_openie(root: Path) -> Path | None:
    """The dataset's OpenIE file (``openie_*.json``), if it has one."""
    found = sorted(root.glob("openie_*.json"))
    if len(found) > 1:
        log.warning("%s has several OpenIE files; using %s", root, found[0].name)
    return found[0] if found else None


def gold_answers(item: dict[str, Any]) -> tuple[str, ...]:
    """A question's gold answer and its aliases: ``answer`` (a string, or a list as in the sample dataset) then
    ``answer_aliases``, non-empty strings only, each once, in that order."""
    found: list[str] = []
    for key in ("answer", "answer_aliases"):
        value = item.get(key)
        for a in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            if isinstance(a, str) and a.strip() and a.strip() not in found:
                found.append(a.strip())
    return tuple(found)


def load_dataset(path: str | Path, *, use_openie: bool = True) -> Dataset:
    """Corpus (with the OpenIE file's extraction attached where it has the passage) and questions."""
    root = Path(path)
    if not root.is_dir():
        raise HippoError(f"{root} is not a dataset directory (expected questions.json and corpus.json).")
    corpus_file, questions_file = root / "corpus.json", root / "questions.json"
    for f in (corpus_file, questions_file):
        if not f.is_file():
            raise HippoError(f"{root} has no {f.name}.")
    raw_corpus = _read_json(corpus_file)
    if not isinstance(raw_corpus, list):
        raise HippoError(f"{corpus_file}: a corpus is a JSON list of {{\"title\", \"text\"}} objects.")
    passages = [as_passage(d) for d in raw_corpus if isinstance(d, (dict, str))]

    openie = find_openie(root) if use_openie else None
    if openie is not None:
        extraction = {p.hash: p.extraction for p in load_openie(openie) if isinstance(p, PassageIn)}
        passages = [p.model_copy(update={"extraction": extraction.get(p.hash)}) for p in passages]
        missing = sum(p.extraction is None for p in passages)
        if missing:
            log.warning("%s lacks %d corpus passages; the extractor will process them", openie.name, missing)

    by_hash = {p.hash: p.passage_id for p in passages}
    raw_questions = _read_json(questions_file)
    if not isinstance(raw_questions, list):
        raise HippoError(f"{questions_file}: expected a JSON list of questions.")
    questions, unmatched = [], []
    for n, q in enumerate(raw_questions):
        if not isinstance(q, dict) or not isinstance(q.get("question"), str):
            continue
        qid = str(q.get("id", n))
        gold: list[str] = []
        for para in q.get("paragraphs") or []:
            if not isinstance(para, dict) or not para.get("is_supporting"):
                continue
            title = para.get("title") or ""
            text = para.get("paragraph_text", para.get("text")) or ""
            pid = by_hash.get(content_hash(title, text))
            if pid is None:
                unmatched.append((qid, title))
            elif pid not in gold:
                gold.append(pid)
        questions.append(Question(qid, q["question"], tuple(gold), gold_answers(q)))
    if unmatched:
        log.warning("%d gold paragraphs match no corpus passage (they count as misses)", len(unmatched))
    return Dataset(root.name, root, passages, questions, openie, unmatched)


def default_namespace(
    dataset: Dataset | str, synonym_threshold: float | None = None, *, encoder: str | None = None, offline: bool = False
) -> str:
    """``eval-<dataset dir>``, then ``-offline`` when the dataset's OpenIE file is ignored, ``-<encoder>`` when one
    is named, and ``-tau<τ>`` when τ is set (not the encoder's): each shapes the index, so each gets its own namespace."""
    name = dataset.name if isinstance(dataset, Dataset) else str(dataset)
    parts = [name] + (["offline"] if offline else []) + ([encoder] if encoder else [])
    base = "eval-" + "-".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", p) for p in parts)
    return tau_namespace(base, synonym_threshold)


def tau_namespace(base: str, synonym_threshold: float | None) -> str:
    return base if synonym_threshold is None else f"{base}-tau{synonym_threshold:g}"
