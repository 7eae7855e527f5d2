"""Query-time LLM work: the reader (an LLM answers a question from retrieved passages, with SQuAD-style
EM / F1 scoring) and hipporag2's recognition filter (an LLM keeps the retrieved facts relevant to a question).

Like HippoRAG's reader, the model reasons step by step and ends with a line ``Answer: ...``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import string
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import openai

from .extract.llm import triples_schema
from .llm.client import ChatClient
from .llm.negotiation import CallFailed
from .llm.parsing import parse_json_list
from .llm.settings import LLMSettings
from .models import PassageIn
from .text import normalize_phrase

log = logging.getLogger(__name__)

READER_PROMPT_VERSION = "r1"
# token budget of the reader's answer (reasoning + answer line) unless HIPPO_LLM_MAX_TOKENS sets one
READER_MAX_TOKENS = 1024

READER_SYSTEM = (
    "You answer questions using only the numbered passages the user gives. Think it through step by "
    "step, connecting facts across passages when the question needs more than one. Then finish with a "
    "final line of the form 'Answer: <answer>', where the answer is as short as possible (a name, a date, "
    "a number or a short phrase). If the passages do not contain the answer, give your best guess on "
    "that line anyway."
)

# "Answer: X", and the forms small models write instead: "The answer is: X", "So the final answer is: X"
_ANSWER_LINE = re.compile(
    r"^[\s*#>_-]*(?:(?:so\s+)?the\s+(?:final\s+)?answer\s+is|(?:final\s+)?answer)\s*[*_]*\s*[:：]\s*(.*)$",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class ReaderAnswer:
    """The parsed answer, the reasoning before it, and the raw model output."""

    answer: str
    reasoning: str
    raw: str
    parsed: bool  # False when the model wrote no "Answer:" line (the answer is then its last line)
    truncated: bool = False  # the model was cut off at the token budget


def parse_answer(text: str) -> ReaderAnswer:
    """The text after the last ``Answer:`` line (markdown emphasis and a trailing period removed)."""
    raw = text or ""
    cleaned = re.sub(r"<think>.*?</think>", "", raw, flags=re.DOTALL | re.IGNORECASE).strip()
    matches = list(_ANSWER_LINE.finditer(cleaned))
    if matches:
        last = matches[-1]
        answer, reasoning, parsed = last.group(1), cleaned[: last.start()].strip(), True
    else:
        lines = [line for line in cleaned.splitlines() if line.strip()]
        answer = lines[-1] if lines else ""
        reasoning, parsed = "\n".join(lines[:-1]), False
    answer = answer.strip().strip("*_`").strip()
    if answer.endswith(".") and not re.search(r"\b[A-Z]\.$", answer):
        answer = answer[:-1].rstrip()
    return ReaderAnswer(answer=answer, reasoning=reasoning, raw=raw, parsed=parsed)


def reader_messages(question: str, passages: Sequence[str | PassageIn]) -> list[dict[str, str]]:
    """The reader conversation: numbered passages, then the question."""
    blocks = []
    for n, passage in enumerate(passages, 1):
        text = passage.full_text if isinstance(passage, PassageIn) else str(passage)
        blocks.append(f"[{n}] {text}")
    user = "Passages:\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}\nThink step by step, then give the final line 'Answer: ...'."
    return [{"role": "system", "content": READER_SYSTEM}, {"role": "user", "content": user}]


class Reader:
    """Answers questions from passages with the configured LLM (same settings as the LLM extractor)."""

    def __init__(self, settings: LLMSettings | None = None, *, client: openai.OpenAI | None = None) -> None:
        self.settings = settings or LLMSettings.from_env()
        self.chat = ChatClient(self.settings, client)
        self.name = f"reader:{self.settings.model}:{READER_PROMPT_VERSION}"

    def answer(self, question: str, passages: Sequence[str | PassageIn]) -> ReaderAnswer:
        """Ask the model; raises LLMError if the endpoint is unusable, CallFailed if this call failed."""
        result = self.chat.chat(reader_messages(question, passages), max_tokens=READER_MAX_TOKENS)
        answer = parse_answer(result.text)
        if result.truncated:
            log.warning("the reader's answer was cut off at max_tokens=%s", result.max_tokens)
            answer = dataclasses.replace(answer, truncated=True)
        return answer

    def next_sentence(
        self, question: str, passages: Sequence[str | PassageIn], sentences: Sequence[str] = ()
    ) -> "ReasoningStep":
        """One step of iterative retrieval: the next reasoning sentence given the passages so far and the
        sentences already written. Raises LLMError (endpoint unusable) or CallFailed (this call failed)."""
        before = (self.chat.stats.prompt_tokens, self.chat.stats.completion_tokens)
        result = self.chat.chat(step_messages(question, passages, sentences), max_tokens=STEP_MAX_TOKENS)
        sentence, answer = parse_step(result.text)
        if result.truncated:
            log.warning("a reasoning step was cut off at max_tokens=%s", result.max_tokens)
        return ReasoningStep(
            sentence=sentence, answer=answer, raw=result.text, truncated=result.truncated,
            prompt_tokens=self.chat.stats.prompt_tokens - before[0],
            completion_tokens=self.chat.stats.completion_tokens - before[1],
        )


# -- iterative retrieval: one reasoning sentence per step ----------------------------------------------------

# token budget of one reasoning step (one sentence is asked for; the rest of a longer answer is dropped)
STEP_MAX_TOKENS = 160

STEP_SYSTEM = (
    "You work out the answer to a question that may need several facts chained together. You are given "
    "numbered passages found so far and the reasoning sentences already written. Write only the next "
    "sentence of the reasoning: one new fact taken from the passages, or one inference from the facts "
    "already stated, that moves closer to the answer. Name the people, places and things it is about, so "
    "the sentence can be used to search for more passages. When the reasoning is complete, write instead "
    "one sentence that ends with 'So the answer is: <answer>.', where the answer is as short as possible."
)

# "So the answer is: X" (colon optional), or a reader-style "Answer: X" line
# "So the answer is: X" (colon optional) or "The answer is: X" (colon required); the last one on its line wins
_STEP_ANSWER = re.compile(
    r"\b(?:so\s+the\s+(?:final\s+)?answer\s+is\s*[:：]?|the\s+(?:final\s+)?answer\s+is\s*[:：])\s*(.*)",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])|\n+")
STEP_SENTENCE_MAX_CHARS = 400


@dataclass(frozen=True)
class ReasoningStep:
    """One reasoning sentence: what the model wrote, the sentence kept, and the answer if it gave one."""

    sentence: str  # the first sentence (or the sentence that gives the answer), "" if the model wrote nothing
    answer: str | None  # the text after "So the answer is:" (or an "Answer:" line), else None
    raw: str
    truncated: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _clean_answer(text: str) -> str:
    answer = text.strip().splitlines()[0].strip() if text.strip() else ""
    answer = answer.strip().strip("*_`\"'").strip()
    if answer.endswith(".") and not re.search(r"\b[A-Z]\.$", answer):
        answer = answer[:-1].rstrip()
    return answer


def parse_step(text: str) -> tuple[str, str | None]:
    """(sentence, answer) of a reasoning step: the sentence that carries "So the answer is: ..." (or an
    "Answer:" line) with its answer, else the first sentence and None."""
    cleaned = re.sub(r"<think>.*?(</think>|$)", "", text or "", flags=re.DOTALL | re.IGNORECASE).strip()
    marker = _STEP_ANSWER.search(cleaned)
    while marker is not None and _STEP_ANSWER.match(cleaned, marker.start(1)):  # "The answer is: The answer is: X"
        marker = _STEP_ANSWER.match(cleaned, marker.start(1))
    if marker is None:
        line = _ANSWER_LINE.search(cleaned)
        if line is not None and _clean_answer(line.group(1)):
            before = cleaned[: line.start()].strip()
            sentence = (_SENTENCE_END.split(before)[-1].strip() + " " if before else "") + line.group(0).strip()
            return sentence.strip()[:STEP_SENTENCE_MAX_CHARS], _clean_answer(line.group(1))
    if marker is not None:
        answer = _clean_answer(marker.group(1))
        if answer:
            start = 0
            for boundary in _SENTENCE_END.finditer(cleaned):
                if boundary.end() > marker.start():
                    break
                start = boundary.end()
            end = cleaned.find("\n", marker.start())
            sentence = cleaned[start: end if end >= 0 else len(cleaned)].strip()
            return sentence[:STEP_SENTENCE_MAX_CHARS], answer
    parts = [p.strip() for p in _SENTENCE_END.split(cleaned) if p.strip()]
    sentence = parts[0] if parts else ""
    return sentence.strip("*_` ")[:STEP_SENTENCE_MAX_CHARS], None


def step_messages(question: str, passages: Sequence[str | PassageIn], sentences: Sequence[str]) -> list[dict[str, str]]:
    """The step conversation: numbered passages, the question, and the reasoning so far."""
    blocks = []
    for n, passage in enumerate(passages, 1):
        text = passage.full_text if isinstance(passage, PassageIn) else str(passage)
        blocks.append(f"[{n}] {text}")
    so_far = "\n".join(f"{n}. {s}" for n, s in enumerate(sentences, 1)) if sentences else "(none yet)"
    user = (
        "Passages:\n" + ("\n\n".join(blocks) or "(none found)") + f"\n\nQuestion: {question}\n\n"
        f"Reasoning so far:\n{so_far}\n\nWrite the next sentence only."
    )
    return [{"role": "system", "content": STEP_SYSTEM}, {"role": "user", "content": user}]


FILTER_PROMPT_VERSION = "f1"

FILTER_SYSTEM = (
    "You check facts retrieved from a memory against a question. Each fact is a [subject, predicate, object] "
    "triple. Keep only the facts that help answer the question, directly or as one step of a chain of "
    "reasoning; drop the others. Copy the kept facts exactly as given. Answer with JSON only: "
    '{"triples": [[subject, predicate, object], ...]}, an empty list if none helps.'
)


def filter_messages(question: str, triples: Sequence[tuple[str, str, str]]) -> list[dict[str, str]]:
    user = f"Question: {question}\n\nFacts:\n{json.dumps({'triples': [list(t) for t in triples]}, ensure_ascii=False)}"
    return [{"role": "system", "content": FILTER_SYSTEM}, {"role": "user", "content": user}]


class RecognitionFilter:
    """hipporag2's recognition memory: the LLM keeps the retrieved facts relevant to the question."""

    def __init__(self, settings: LLMSettings | None = None, *, client: openai.OpenAI | None = None) -> None:
        self.settings = settings or LLMSettings.from_env()
        self.chat = ChatClient(self.settings, client)
        self.name = f"llm:{self.settings.model}:{FILTER_PROMPT_VERSION}"

    def select(self, question: str, triples: Sequence[tuple[str, str, str]]) -> list[int]:
        """Indices of the kept triples. A returned triple that matches no candidate (after normalisation)
        is ignored: the filter chooses among the retrieved facts, it never adds one. Raises LLMError,
        CallFailed or ResponseParseError when the model's answer is unusable."""
        messages = filter_messages(question, triples)
        # it copies at most every candidate back: about a token per 4 characters of the facts, doubled
        budget = 64 + len(messages[-1]["content"]) // 2
        schema = triples_schema(max(1, len(triples)))
        raw = self.chat.complete(messages, schema, "triples", max_tokens=budget)
        answer, _ = parse_json_list(raw, "triples")
        key = lambda t: tuple(normalize_phrase(str(x)) for x in t)  # noqa: E731
        index = {key(t): i for i, t in reversed(list(enumerate(triples)))}
        kept = []
        for item in answer:
            if isinstance(item, (list, tuple)) and len(item) == 3:
                i = index.get(key(item))
                if i is not None and i not in kept:
                    kept.append(i)
        return sorted(kept)


__all__ = ["Reader", "RecognitionFilter", "ReaderAnswer", "ReasoningStep", "parse_answer", "parse_step", "qa_scores", "exact_match", "f1", "normalize_answer", "CallFailed"]


# -- SQuAD evaluation -----------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation and the articles a/an/the, collapse whitespace."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _golds(golds: str | Iterable[str]) -> list[str]:
    return [golds] if isinstance(golds, str) else [g for g in golds if isinstance(g, str)]


def exact_match(pred: str, golds: str | Iterable[str]) -> float:
    """1.0 if the normalised prediction equals any normalised gold answer (or alias), else 0.0."""
    p = normalize_answer(pred)
    return float(any(p == normalize_answer(g) for g in _golds(golds)))


def _f1_one(pred: str, gold: str) -> float:
    p_tokens = normalize_answer(pred).split()
    g_tokens = normalize_answer(gold).split()
    if not p_tokens or not g_tokens:
        return float(p_tokens == g_tokens)
    common = Counter(p_tokens) & Counter(g_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(p_tokens), same / len(g_tokens)
    return 2 * precision * recall / (precision + recall)


def f1(pred: str, golds: str | Iterable[str]) -> float:
    """Token-level F1 of the normalised prediction, maximised over gold answers (aliases)."""
    return max((_f1_one(pred, g) for g in _golds(golds)), default=0.0)


def qa_scores(pred: str | None, golds: str | Iterable[str]) -> dict[str, float]:
    """``{"em", "f1"}`` of a prediction against the gold answer and its aliases (no prediction scores 0)."""
    if pred is None:
        return {"em": 0.0, "f1": 0.0}
    return {"em": exact_match(pred, golds), "f1": f1(pred, golds)}
