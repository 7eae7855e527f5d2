"""Iterative retrieval (IRCoT) over any mode: retrieval and reasoning take turns.

Step 0 retrieves with the question. Each later step asks the reader for the next sentence of reasoning,
given the question, the best passages so far and the sentences already written; unless that sentence gives
the answer ("So the answer is: ..."), it becomes the next query of the same mode, and the passages it finds
join the pool (each passage once, with the best score it got and the step and rank where it first came).
The loop stops at an answer, at an empty sentence, after ``steps`` sentences, or when the LLM fails (the
result is then partial and says why). So a run costs at most ``steps`` LLM calls and ``steps + 1``
retrievals.

    from hippo_neo4j import HippoRAG
    from hippo_neo4j.iterative import IterativeRetrieval

    with HippoRAG(namespace="docs") as memory:
        result = IterativeRetrieval(memory, mode="hipporag1", steps=3).run("Which ...?", top_k=5)
        for step in result.steps:
            print(step.step, step.sentence, step.query, step.added)
        print(result.answer, [p.id for p in result.passages], result.llm_calls)

It wraps :meth:`HippoRAG.query` and so works with every preset of :data:`~hippo_neo4j.retrieve.MODES`; the
reader is :class:`~hippo_neo4j.reader.Reader` (the LLM of the environment unless one is given).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable, Literal, Sequence

from pydantic import BaseModel, Field

from .errors import ConfigError, LLMError
from .models import RetrievalResult, RetrievedPassage
from .retrieve import MODES, default_mode
from .retrieve.base import deprecated_filter

if TYPE_CHECKING:
    from .memory import HippoRAG
    from .reader import Reader

MAX_STEPS = 10
DEFAULT_STEPS = 3
NO_LLM = (
    "iterative retrieval needs an LLM to write its reasoning: set OPENAI_BASE_URL (a local server such as "
    "llama.cpp, Ollama or vLLM) or OPENAI_API_KEY, and HIPPO_LLM_MODEL"
)


class IterativeStep(BaseModel):
    """One turn of the loop: the sentence written (none at step 0), the query it became, and what it found."""

    step: int
    sentence: str | None = None  # the reasoning sentence written at this step (None at step 0)
    raw: str | None = None  # the model's whole output at this step
    answer: str | None = None  # set when the sentence gives the answer (no retrieval follows)
    query: str | None = None  # the retrieval query of this step (None when it answered or failed)
    retrieved: list[str] = Field(default_factory=list)  # passage ids this query returned, best first
    added: list[str] = Field(default_factory=list)  # those not in the pool before
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_ms: float = 0.0
    retrieval_ms: float = 0.0
    truncated: bool = False  # the sentence was cut off at the token budget
    retrieval: RetrievalResult | None = None  # the full explanation of this step's retrieval


StopReason = Literal["answer", "max_steps", "no_sentence", "no_llm_steps", "error"]


class IterativeResult(BaseModel):
    """The pooled passages (best first), every step, why the loop stopped, and what the LLM cost."""

    question: str
    mode: str
    steps: list[IterativeStep]
    passages: list[RetrievedPassage]
    answer: str | None = None  # the answer the reasoning reached, if it did
    stopped: StopReason
    error: str | None = None  # set (with stopped == "error") when the LLM failed: the result is partial
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fell_back: bool = False  # some step's retrieval fell back to dense retrieval
    elapsed_ms: float = 0.0

    @property
    def partial(self) -> bool:
        return self.stopped == "error"

    @property
    def sentences(self) -> list[str]:
        return [s.sentence for s in self.steps if s.sentence]


class _Pool:
    """Passages from every step, each once: its best score, and the step and rank where it first came."""

    def __init__(self) -> None:
        self.best: dict[str, RetrievedPassage] = {}
        self.first: dict[str, tuple[int, int]] = {}

    def add(self, step: int, passages: Sequence[RetrievedPassage]) -> list[str]:
        added = []
        for rank, p in enumerate(passages):
            kept = self.best.get(p.id)
            if kept is None:
                self.best[p.id], self.first[p.id] = p, (step, rank)
                added.append(p.id)
            elif p.score > kept.score:
                self.best[p.id] = p
        return added

    def ranked(self, order: str) -> list[RetrievedPassage]:
        key: Callable[[str], tuple[Any, ...]]
        if order == "score":  # best score first; ties by where they first came
            key = lambda pid: (-self.best[pid].score, self.first[pid])  # noqa: E731
        else:  # "rank": by first rank, then by step (every step's top passage before any second one)
            key = lambda pid: (self.first[pid][1], self.first[pid][0])  # noqa: E731
        return [self.best[pid] for pid in sorted(self.best, key=key)]


def _passage_text(p: RetrievedPassage) -> str:
    return f"{p.title}\n{p.text}" if p.title else p.text


class IterativeRetrieval:
    """IRCoT over a mode of ``memory``: ``IterativeRetrieval(memory, mode="hipporag1", steps=3).run(q, top_k)``.

    ``steps`` bounds the reasoning sentences (LLM calls), 0 to 10; ``context`` is how many of the pooled
    passages the reader sees at each step (default: ``top_k``); ``order`` ranks the pool by best score
    ("score", the default) or by the rank where each passage first came ("rank", for modes whose scores are
    not comparable across queries, such as bm25).
    """

    def __init__(
        self,
        memory: "HippoRAG",
        *,
        mode: str | None = None,
        steps: int = DEFAULT_STEPS,
        reader: "Reader | None" = None,
        context: int | None = None,
        order: Literal["score", "rank"] = "score",
    ) -> None:
        mode = mode or default_mode()
        MODES[mode]  # an unknown name is a ConfigError that lists the modes
        if isinstance(steps, bool) or not isinstance(steps, int) or not 0 <= steps <= MAX_STEPS:
            raise ConfigError(f"steps must be an integer from 0 to {MAX_STEPS}, not {steps!r}.")
        if context is not None and (isinstance(context, bool) or not isinstance(context, int) or context < 1):
            raise ConfigError(f"context must be a positive integer, not {context!r}.")
        if order not in ("score", "rank"):
            raise ConfigError(f"order must be 'score' or 'rank', not {order!r}.")
        self.memory = memory
        self.mode = mode
        self.steps = steps
        self.context = context
        self.order = order
        self._reader = reader

    @property
    def reader(self) -> "Reader":
        if self._reader is None:
            from .llm.settings import llm_configured
            from .reader import Reader

            if not llm_configured():
                raise ConfigError(NO_LLM + ".")
            self._reader = Reader()
        return self._reader

    def run(
        self,
        question: str,
        top_k: int = 5,
        *,
        entities: Sequence[str] | None = None,
        recognition_filter: bool = True,
        keep_retrievals: bool = True,
        filters: Any = None,
        filter: bool | None = None,
    ) -> IterativeResult:
        """Retrieve, reason a sentence, retrieve with it, ... (see the module). ``top_k`` passages per step
        and in the result; ``entities`` replaces query NER at step 0 only (later queries are the model's
        sentences); ``keep_retrievals=False`` leaves out each step's full retrieval explanation; ``filters``
        (metadata, :meth:`HippoRAG.query`) hold at every step."""
        from .llm.negotiation import CallFailed

        if not isinstance(question, str) or not question.strip():
            raise ConfigError("The question must be a non-empty string.")
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ConfigError(f"top_k must be a positive integer, not {top_k!r}.")
        recognition_filter = deprecated_filter(filter, recognition_filter)
        reader = self.reader if self.steps else None
        began = time.perf_counter()
        pool = _Pool()
        steps: list[IterativeStep] = []
        fell_back = False

        def retrieve(step: IterativeStep, query: str, ents: Sequence[str] | None) -> None:
            nonlocal fell_back
            t0 = time.perf_counter()
            result = self.memory.query(query, mode=self.mode, top_k=top_k, entities=ents, recognition_filter=recognition_filter,
                                       filters=filters)
            step.retrieval_ms = (time.perf_counter() - t0) * 1000
            step.query = query
            step.retrieved = [p.id for p in result.passages]
            step.added = pool.add(step.step, result.passages)
            step.retrieval = result if keep_retrievals else None
            fell_back = fell_back or result.fell_back

        first = IterativeStep(step=0)
        retrieve(first, question, entities)
        steps.append(first)
        stopped: StopReason = "no_llm_steps" if not self.steps else "max_steps"
        answer: str | None = None
        error: str | None = None
        for n in range(1, self.steps + 1):
            assert reader is not None
            context = pool.ranked(self.order)[: self.context or top_k]
            step = IterativeStep(step=n)
            t0 = time.perf_counter()
            try:
                written = reader.next_sentence(question, [_passage_text(p) for p in context], [s.sentence for s in steps if s.sentence])
            except (LLMError, CallFailed) as exc:
                step.llm_ms = (time.perf_counter() - t0) * 1000
                steps.append(step)
                stopped, error = "error", f"step {n}: {exc}"
                break
            step.llm_ms = (time.perf_counter() - t0) * 1000
            step.sentence, step.raw, step.answer = written.sentence, written.raw, written.answer
            step.prompt_tokens, step.completion_tokens = written.prompt_tokens, written.completion_tokens
            step.truncated = written.truncated
            steps.append(step)
            if written.answer is not None:
                stopped, answer = "answer", written.answer
                break
            if not written.sentence:
                stopped = "no_sentence"
                break
            retrieve(step, written.sentence, None)
        llm_steps = [s for s in steps if s.step > 0 and s.raw is not None]
        return IterativeResult(
            question=question,
            mode=self.mode,
            steps=steps,
            passages=pool.ranked(self.order)[:top_k],
            answer=answer,
            stopped=stopped,
            error=error,
            llm_calls=len(llm_steps),
            prompt_tokens=sum(s.prompt_tokens for s in llm_steps),
            completion_tokens=sum(s.completion_tokens for s in llm_steps),
            fell_back=fell_back,
            elapsed_ms=(time.perf_counter() - began) * 1000,
        )

    def explain(self, result: IterativeResult) -> str:
        """The loop as text: each step's sentence, query and the passages it added."""
        return explain(result)


def explain(result: IterativeResult) -> str:
    titles = {p.id: p.title or p.text[:60] for s in result.steps if s.retrieval for p in s.retrieval.passages}
    lines = [f"iterative {result.mode}: {len(result.steps) - 1} reasoning step(s), stopped: {result.stopped}"
             f" ({result.llm_calls} LLM calls, {result.prompt_tokens} + {result.completion_tokens} tokens,"
             f" {result.elapsed_ms:.0f} ms)"]
    for s in result.steps:
        head = f"step {s.step}"
        if s.step == 0:
            lines.append(f"{head}: query = the question")
        elif s.sentence is None:
            lines.append(f"{head}: no sentence")
        else:
            lines.append(f"{head}: wrote {s.sentence!r}" + (f"  -> answer {s.answer!r}" if s.answer is not None else ""))
        if s.query is not None:
            added = ", ".join(f"{pid} ({titles.get(pid, '')})" if titles.get(pid) else pid for pid in s.added)
            lines.append(f"  retrieved {len(s.retrieved)}, added {len(s.added)}" + (f": {added}" if added else ""))
    if result.error:
        lines.append(f"partial result: {result.error}")
    return "\n".join(lines)


__all__ = ["DEFAULT_STEPS", "IterativeResult", "IterativeRetrieval", "IterativeStep", "MAX_STEPS", "explain"]
