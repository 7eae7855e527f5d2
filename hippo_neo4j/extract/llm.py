"""LLM extraction through any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...).

HippoRAG's two steps per passage: a 1-shot named-entity prompt (``{"named_entities": [...]}``), then a 1-shot
OpenIE prompt given those entities (``{"triples": [[s, p, o], ...]}``), temperature 0.

The endpoint is reached through :class:`~hippo_neo4j.llm.client.ChatClient`, which negotiates the response
format (``hippo_neo4j.llm.negotiation``) and retries transient errors. Lists are bounded (``maxItems`` scaled
to the passage) and every call has a token budget sized to those bounds; an answer cut off at the budget keeps
what was complete, and one that holds nothing usable is asked once more with four times the budget, then
recorded as a failure. Passages are extracted with bounded concurrency. A passage whose answer cannot be
parsed is a failure (:class:`ExtractionFailure`, with the raw answer), never an empty extraction.
"""

from __future__ import annotations

import json
import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import openai

from ..errors import LLMError
from ..llm.client import ChatClient
from ..llm.negotiation import CallFailed
from ..llm.parsing import ResponseParseError, parse_entities, parse_triples
from ..llm.settings import LLMSettings, LLMStats
from ..models import Extraction, PassageIn
from .base import ExtractionFailure

log = logging.getLogger(__name__)

PROMPT_VERSION = "p1"


def extractor_name(settings: LLMSettings) -> str:
    """The LLM extractor's name for ``settings``: its model and prompt version, the key of its cached extractions."""
    return f"llm:{settings.model}:{PROMPT_VERSION}"


@dataclass(frozen=True)
class CostEstimate:
    """What an extraction run would cost, estimated without calling anything."""

    model: str
    passages: int
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float

    def summary(self) -> str:
        return (
            f"{self.passages} passages -> {self.calls} LLM calls to {self.model}, about "
            f"{self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion tokens, "
            f"estimated cost ${self.cost_usd:.4f}"
        )


# -- prompts (our own text; bump PROMPT_VERSION whenever it changes) ------------------------------------------

NER_SYSTEM = (
    "You are a careful information-extraction system. List the named entities that appear in the "
    "passage the user gives: people, organisations, places, creative works, events, dates, quantities "
    "and other proper names. Copy each entity exactly as it is written in the passage and list each "
    "one once. Reply with a single JSON object of the form "
    '{"named_entities": ["entity", ...]} and nothing else.'
)

OPENIE_SYSTEM = (
    "You are a careful information-extraction system that builds a knowledge graph. From the passage "
    "the user gives, write every fact it states as a [subject, predicate, object] triple. Use the listed "
    "named entities as subjects and objects wherever they fit, so that facts about one entity connect; "
    "replace pronouns with the entity they stand for. Keep predicates short. Only write facts the "
    "passage states. Reply with a single JSON object of the form "
    '{"triples": [["subject", "predicate", "object"], ...]} and nothing else.'
)

_EXAMPLE_PASSAGE = (
    "Lake Baikal\n"
    "Lake Baikal is a rift lake in southern Siberia, Russia, between Irkutsk Oblast and the Republic of "
    "Buryatia. Holding about 23,600 cubic kilometres of water, it is the deepest lake in the world. "
    "It was declared a UNESCO World Heritage Site in 1996."
)
_EXAMPLE_ENTITIES = [
    "Lake Baikal",
    "Siberia",
    "Russia",
    "Irkutsk Oblast",
    "Republic of Buryatia",
    "23,600 cubic kilometres",
    "UNESCO World Heritage Site",
    "1996",
]
_EXAMPLE_TRIPLES = [
    ["Lake Baikal", "is a", "rift lake"],
    ["Lake Baikal", "located in", "Siberia"],
    ["Siberia", "part of", "Russia"],
    ["Lake Baikal", "lies between", "Irkutsk Oblast"],
    ["Lake Baikal", "lies between", "Republic of Buryatia"],
    ["Lake Baikal", "holds", "23,600 cubic kilometres"],
    ["Lake Baikal", "is", "deepest lake in the world"],
    ["Lake Baikal", "declared", "UNESCO World Heritage Site"],
    ["Lake Baikal", "declared World Heritage Site in", "1996"],
]

def ner_schema(max_items: int | None = None) -> dict[str, Any]:
    """The NER answer's JSON schema; ``max_items`` bounds the list (so a looping model cannot run on)."""
    entities: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
    if max_items:
        entities["maxItems"] = max_items
    return {
        "type": "object",
        "properties": {"named_entities": entities},
        "required": ["named_entities"],
        "additionalProperties": False,
    }


def triples_schema(max_items: int | None = None) -> dict[str, Any]:
    """The OpenIE answer's JSON schema: a list (at most ``max_items``) of exactly three strings each."""
    triple = {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3}
    triples: dict[str, Any] = {"type": "array", "items": triple}
    if max_items:
        triples["maxItems"] = max_items
    return {
        "type": "object",
        "properties": {"triples": triples},
        "required": ["triples"],
        "additionalProperties": False,
    }


NER_SCHEMA: dict[str, Any] = ner_schema()
TRIPLES_SCHEMA: dict[str, Any] = triples_schema()

# List bounds and token budgets per step, from the passage's length in words. On the 1,890 MuSiQue passages
# that GPT-3.5 extracted for HippoRAG (68 words median, 300 at most) the answers held at most 0.46 entities
# and 0.48 triples per word, always within these bounds; the budgets leave room for every allowed item at
# about twice the usual item length (an entity is 14 JSON characters median, a triple 54).
MAX_BUDGET = 16384


def ner_limits(text: str) -> tuple[int, int]:
    """(maxItems, max_tokens) for the NER answer of ``text``."""
    items = min(96, 8 + len(text.split()) // 2)
    return items, 48 + 10 * items


def openie_limits(text: str) -> tuple[int, int]:
    """(maxItems, max_tokens) for the OpenIE answer of ``text``."""
    items = min(128, 8 + len(text.split()) // 2)
    return items, 48 + 24 * items


def _user_passage(text: str) -> str:
    return f"Passage:\n{text}"


def _user_openie(text: str, entities: list[str]) -> str:
    return f"{_user_passage(text)}\n\nNamed entities: {json.dumps({'named_entities': entities}, ensure_ascii=False)}"


def ner_messages(text: str) -> list[dict[str, str]]:
    """The 1-shot NER conversation for a passage (or a query)."""
    return [
        {"role": "system", "content": NER_SYSTEM},
        {"role": "user", "content": _user_passage(_EXAMPLE_PASSAGE)},
        {"role": "assistant", "content": json.dumps({"named_entities": _EXAMPLE_ENTITIES})},
        {"role": "user", "content": _user_passage(text)},
    ]


def openie_messages(text: str, entities: list[str]) -> list[dict[str, str]]:
    """The 1-shot OpenIE conversation for a passage, given its named entities."""
    return [
        {"role": "system", "content": OPENIE_SYSTEM},
        {"role": "user", "content": _user_openie(_EXAMPLE_PASSAGE, _EXAMPLE_ENTITIES)},
        {"role": "assistant", "content": json.dumps({"triples": _EXAMPLE_TRIPLES})},
        {"role": "user", "content": _user_openie(text, entities)},
    ]



# -- the extractor --------------------------------------------------------------------------------------------


class LLMExtractor:
    """HippoRAG's LLM NER + OpenIE over an OpenAI-compatible endpoint (see module docstring)."""

    def __init__(self, settings: LLMSettings | None = None, *, client: openai.OpenAI | None = None) -> None:
        self.settings = settings or LLMSettings.from_env()
        self.chat = ChatClient(self.settings, client)
        self.name = extractor_name(self.settings)
        self.failures: list[ExtractionFailure] = []

    @property
    def stats(self) -> LLMStats:
        return self.chat.stats

    def extract(self, passages: Sequence[PassageIn]) -> list[Extraction | None]:
        """One result per passage; None where it failed (details in ``self.failures``)."""
        results: list[Extraction | None] = [None] * len(passages)
        self.failures = []
        for i, outcome in self.extract_iter(passages):
            if isinstance(outcome, ExtractionFailure):
                self.failures.append(outcome)
            else:
                results[i] = outcome
        return results

    def extract_iter(
        self, passages: Sequence[PassageIn]
    ) -> Iterator[tuple[int, Extraction | ExtractionFailure]]:
        """Yield ``(index, outcome)`` as passages complete, ``settings.concurrency`` at a time.

        An :class:`LLMError` (endpoint unusable) stops the run: pending passages are cancelled, passages
        in flight stop retrying, and the error propagates after what had completed was yielded.
        """
        if not passages:
            return
        abort = threading.Event()
        pool = ThreadPoolExecutor(max_workers=self.settings.concurrency, thread_name_prefix="hippo-llm")
        futures: dict[Future[Extraction | ExtractionFailure], int] = {}
        yielded: set[int] = set()
        try:
            futures = {pool.submit(self._extract_one, p, abort): i for i, p in enumerate(passages)}
            for future in as_completed(futures):
                outcome = future.result()
                yielded.add(futures[future])
                yield futures[future], outcome
        except LLMError:
            abort.set()
            pool.shutdown(wait=True, cancel_futures=True)
            # passages that finished while the run was stopping were paid for: hand them over too
            for future, i in futures.items():
                if i not in yielded and future.done() and not future.cancelled() and future.exception() is None:
                    yield i, future.result()
            raise
        except BaseException:
            abort.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _extract_one(self, passage: PassageIn, abort: threading.Event) -> Extraction | ExtractionFailure:
        text = passage.full_text
        pid = passage.passage_id
        items, budget = ner_limits(text)
        ner = self._step(pid, "NER", ner_messages(text), ner_schema(items), "named_entities", budget,
                         parse_entities, abort)
        if isinstance(ner, ExtractionFailure):
            return ner
        entities, repaired = ner
        items, budget = openie_limits(text)
        ie = self._step(pid, "OpenIE", openie_messages(text, entities), triples_schema(items), "triples", budget,
                        parse_triples, abort)
        if isinstance(ie, ExtractionFailure):
            return ie
        triples, repaired_ie = ie
        self.stats.add(repaired=int(repaired) + int(repaired_ie))
        return Extraction(named_entities=entities, triples=triples)

    def _step(
        self,
        pid: str,
        step: str,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        name: str,
        budget: int,
        parse: Any,
        abort: threading.Event,
    ) -> tuple[list[Any], bool] | ExtractionFailure:
        """(items, repaired) of one step's answer, or the passage's failure (with the raw answer).

        An answer cut off at the budget keeps its complete items (it counts as repaired); one that holds
        nothing usable is asked once more with four times the budget (unless settings fix the budget),
        then recorded as a failure.
        """
        for attempt in (1, 2):
            try:
                result = self.chat.chat(messages, schema, name, abort, budget)
            except CallFailed as exc:
                return ExtractionFailure(pid, f"{step} call failed: {exc}")
            try:
                items, repaired = parse(result.text)
                if result.truncated and not items:
                    raise ResponseParseError("no complete item before the cut")
            except ResponseParseError as exc:
                bigger = min(MAX_BUDGET, budget * 4)
                if result.truncated and attempt == 1 and not self.settings.max_tokens and bigger > budget:
                    log.warning(
                        "%s answer for %s cut off at max_tokens=%d with nothing usable; asking once more "
                        "with %d", step, pid, budget, bigger,
                    )
                    budget = bigger
                    continue
                self.stats.add(parse_failures=1)
                cut = f" (cut off at max_tokens={result.max_tokens})" if result.truncated else ""
                return ExtractionFailure(pid, f"{step} answer not parseable: {exc}{cut}", result.text)
            if result.truncated:
                log.warning(
                    "%s answer for %s cut off at max_tokens=%s; kept its %d complete items",
                    step, pid, result.max_tokens, len(items),
                )
                repaired = True
            return items, repaired
        raise AssertionError("unreachable")  # pragma: no cover

    def query_entities(self, text: str) -> list[str]:
        """Named entities of a query, through the same NER prompt; [] (logged) if the answer is unusable."""
        items, budget = ner_limits(text)
        try:
            result = self.chat.chat(ner_messages(text), ner_schema(items), "named_entities", max_tokens=budget)
            return parse_entities(result.text)[0]
        except (CallFailed, ResponseParseError) as exc:
            log.warning("query NER failed (%s); continuing without query entities", exc)
            return []

    def dry_run_estimate(self, passages: Sequence[PassageIn]) -> CostEstimate:
        """Calls and tokens an extraction of ``passages`` would take (chars/4 heuristic), calling nothing."""
        return estimate_cost(passages, self.settings)


def _tokens(chars: int) -> int:
    return (chars + 3) // 4


_NER_FIXED_CHARS = sum(len(m["content"]) for m in ner_messages(""))
_OPENIE_FIXED_CHARS = sum(len(m["content"]) for m in openie_messages("", []))
# answer size relative to the passage, measured on GPT-3.5's MuSiQue extractions (0.33 and 1.12 chars/char)
_NER_OUT_RATIO = 0.35
_TRIPLES_OUT_RATIO = 1.15
_PER_MESSAGE_TOKENS = 4


def estimate_cost(passages: Sequence[PassageIn], settings: LLMSettings | None = None) -> CostEstimate:
    """Dry-run estimate of an LLM extraction: two calls per passage, tokens from characters / 4."""
    settings = settings or LLMSettings.from_env()
    prompt = completion = 0
    for passage in passages:
        n = len(passage.full_text)
        ner_out = int(n * _NER_OUT_RATIO) + 24
        triples_out = int(n * _TRIPLES_OUT_RATIO) + 16
        prompt += _tokens(_NER_FIXED_CHARS + n) + _tokens(_OPENIE_FIXED_CHARS + n + ner_out)
        prompt += 8 * _PER_MESSAGE_TOKENS
        completion += _tokens(ner_out) + _tokens(triples_out)
    cost = (prompt * settings.price_in + completion * settings.price_out) / 1e6
    return CostEstimate(settings.model, len(passages), 2 * len(passages), prompt, completion, cost)

