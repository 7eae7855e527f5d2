"""LLM extraction through any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...).

HippoRAG's two steps per passage: a 1-shot named-entity prompt (``{"named_entities": [...]}``), then a 1-shot
OpenIE prompt given those entities (``{"triples": [[s, p, o], ...]}``), temperature 0.

Robustness: ``response_format`` with a JSON schema, falling back to JSON mode and then to none when the
endpoint rejects it; tolerant parsing (``<think>`` blocks, code fences, a bare top-level array, truncated JSON
repaired with ``json_repair``); bounded concurrency; retries with exponential backoff on 429, 5xx, timeouts and
connection errors, each one logged. An unusable endpoint raises :class:`~hippo_neo4j.errors.LLMError` with a
one-line message naming the URL and the model (never the key). A passage whose answer cannot be parsed is a
failure (:class:`ExtractionFailure`, with the raw answer), never an empty extraction.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import json_repair
import openai
from pydantic import BaseModel, SecretStr
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_when_event_set,
    wait_exponential_jitter,
)

from ..config import env_number
from ..errors import ConfigError, LLMError
from ..models import Extraction, PassageIn
from . import ExtractionFailure

log = logging.getLogger(__name__)

PROMPT_VERSION = "p1"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "sk-no-key-required"
# USD per 1M tokens for gpt-4o-mini (input, output); override with HIPPO_LLM_PRICE_IN / HIPPO_LLM_PRICE_OUT
DEFAULT_PRICE_IN = 0.15
DEFAULT_PRICE_OUT = 0.60


# -- settings -------------------------------------------------------------------------------------------------


def llm_configured() -> bool:
    """True when the environment names an LLM endpoint or key (``OPENAI_BASE_URL`` or ``OPENAI_API_KEY``)."""
    return bool(os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY"))


class LLMSettings(BaseModel):
    """Which endpoint and model to call, how hard to push it, and what it costs."""

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: SecretStr | None = None
    concurrency: int = 8
    timeout: float = 120.0
    max_attempts: int = 5
    backoff_initial: float = 1.0
    backoff_max: float = 60.0
    max_tokens: int | None = None
    price_in: float = DEFAULT_PRICE_IN
    price_out: float = DEFAULT_PRICE_OUT

    @classmethod
    def from_env(cls, **overrides: Any) -> "LLMSettings":
        """Settings from OPENAI_BASE_URL, OPENAI_API_KEY, HIPPO_LLM_MODEL, HIPPO_LLM_CONCURRENCY, HIPPO_LLM_PRICE_*.

        Explicit ``overrides`` (not None) win over the environment.
        """
        values: dict[str, Any] = {
            "model": os.environ.get("HIPPO_LLM_MODEL") or DEFAULT_MODEL,
            "base_url": os.environ.get("OPENAI_BASE_URL") or None,
            "concurrency": env_number("HIPPO_LLM_CONCURRENCY", 8),
            "timeout": env_number("HIPPO_LLM_TIMEOUT", 120.0, float),
            "price_in": env_number("HIPPO_LLM_PRICE_IN", DEFAULT_PRICE_IN, float),
            "price_out": env_number("HIPPO_LLM_PRICE_OUT", DEFAULT_PRICE_OUT, float),
        }
        key = overrides.pop("api_key", None) or os.environ.get("OPENAI_API_KEY")
        values.update({k: v for k, v in overrides.items() if v is not None})
        if key:
            values["api_key"] = key if isinstance(key, SecretStr) else SecretStr(key)
        elif values.get("base_url"):
            values["api_key"] = SecretStr(PLACEHOLDER_KEY)  # local servers need some key, not a real one
        settings = cls(**values)
        if settings.concurrency < 1:
            raise ConfigError("HIPPO_LLM_CONCURRENCY must be at least 1.")
        return settings

    @property
    def url(self) -> str:
        return (self.base_url or DEFAULT_BASE_URL).rstrip("/")

    def make_client(self) -> openai.OpenAI:
        """The official client; its own retries are off (ours are logged and honour Retry-After)."""
        if self.api_key is None:
            raise LLMError(
                f"No API key for the LLM endpoint at {self.url} (model {self.model}): set OPENAI_API_KEY, "
                "or OPENAI_BASE_URL for a local server that needs none."
            )
        return openai.OpenAI(
            base_url=self.url,
            api_key=self.api_key.get_secret_value(),
            timeout=self.timeout,
            max_retries=0,
        )


# -- usage and cost -------------------------------------------------------------------------------------------


@dataclass
class LLMStats:
    """Calls, retries, tokens and estimated cost, accumulated over the life of a client (thread-safe)."""

    price_in: float = DEFAULT_PRICE_IN
    price_out: float = DEFAULT_PRICE_OUT
    calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    parse_failures: int = 0
    repaired: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, **counts: int) -> None:
        with self._lock:
            for key, value in counts.items():
                setattr(self, key, getattr(self, key) + value)

    @property
    def cost_usd(self) -> float:
        return (self.prompt_tokens * self.price_in + self.completion_tokens * self.price_out) / 1e6

    def summary(self) -> str:
        return (
            f"{self.calls} LLM calls ({self.retries} retries), {self.prompt_tokens:,} prompt + "
            f"{self.completion_tokens:,} completion tokens, estimated cost ${self.cost_usd:.4f}"
        )


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

NER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"named_entities": {"type": "array", "items": {"type": "string"}}},
    "required": ["named_entities"],
    "additionalProperties": False,
}
TRIPLES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "triples": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}
    },
    "required": ["triples"],
    "additionalProperties": False,
}


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


# -- tolerant parsing -----------------------------------------------------------------------------------------


class ResponseParseError(ValueError):
    """A model answer that holds no usable JSON for the step."""


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


def parse_json_list(text: str | None, key: str) -> tuple[list[Any], bool]:
    """The list under ``key`` in a model answer, and whether the JSON had to be repaired.

    Tolerates ``<think>`` blocks, code fences, prose around the JSON, a bare top-level array (taken as the
    list itself) and truncated JSON (repaired). Raises :class:`ResponseParseError` when nothing usable is
    found.
    """
    s = _THINK.sub("", text or "")
    if "</think>" in s.lower():  # the opening tag was part of the prompt template
        s = re.split(r"</think>", s, flags=re.IGNORECASE)[-1]
    if re.match(r"\s*<think>", s, re.IGNORECASE):
        raise ResponseParseError("the answer ends inside a <think> block")
    fence = _FENCE.search(s)
    if fence:
        s = fence.group(1)
    starts = [i for i in (s.find("{"), s.find("[")) if i >= 0]
    if not starts:
        raise ResponseParseError("no JSON object or array in the answer")
    s = s[min(starts) :]
    repaired = False
    try:
        obj, _ = json.JSONDecoder().raw_decode(s)
    except ValueError:
        obj = json_repair.loads(s)
        repaired = True
    if isinstance(obj, dict):
        if key in obj:
            value = obj[key]
        else:
            lists = [v for v in obj.values() if isinstance(v, list)]
            if len(lists) != 1:
                raise ResponseParseError(f"no {key!r} list in the JSON answer")
            value = lists[0]
    else:
        value = obj
    if not isinstance(value, list):
        raise ResponseParseError(f"{key!r} is not a list")
    if repaired and value:
        # a truncated answer may end mid-string ("Fra" for "France"): drop an item whose last string
        # never appears closed in the source
        last = value[-1][-1] if isinstance(value[-1], list) and value[-1] else value[-1]
        if isinstance(last, str) and json.dumps(last, ensure_ascii=False) not in s:
            value = value[:-1]
    return value, repaired


def parse_entities(text: str | None) -> tuple[list[str], bool]:
    """Named entities from an NER answer: strings (numbers become strings), stripped, first occurrence kept."""
    items, repaired = parse_json_list(text, "named_entities")
    out: list[str] = []
    for item in items:
        if isinstance(item, (int, float)) and not isinstance(item, bool):
            item = str(item)
        if isinstance(item, str) and item.strip() and item.strip() not in out:
            out.append(item.strip())
    return out, repaired


def parse_triples(text: str | None) -> tuple[list[Any], bool]:
    """Triples from an OpenIE answer, kept raw (the indexer counts malformed ones)."""
    return parse_json_list(text, "triples")


# -- the chat client ------------------------------------------------------------------------------------------


class CallFailed(Exception):
    """One call failed for this input only (e.g. rate-limited after every retry); other inputs may succeed."""


class _Aborted(Exception):
    pass


_FORMAT_MODES = ("json_schema", "json_object", "none")
_SECRETISH = re.compile(r"\b(sk-[A-Za-z0-9_\-]{2})[A-Za-z0-9_\-]{4,}")


def _is_transient(exc: BaseException) -> bool:
    """Worth retrying: connection errors, timeouts, 408/409/429 and 5xx."""
    if isinstance(exc, openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= 500
    return False


def _retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), if it said."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    for header, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = response.headers.get(header)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                return None
    return None


def _body_detail(exc: openai.APIStatusError) -> tuple[str, str | None, bool]:
    """(short detail, error code, body is HTML) of an HTTP error response."""
    try:
        text = exc.response.text or ""
    except Exception:  # noqa: BLE001 - the body may be unreadable (closed stream)
        text = ""
    if re.search(r"<(!doctype|html|head|body)\b", text[:500], re.IGNORECASE):
        return "an HTML page", None, True
    try:
        body = json.loads(text)
    except ValueError:
        return (text.strip().splitlines() or [""])[0][:160], None, False
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        code = error.get("code") or error.get("type")
        return str(error.get("message") or error)[:200], str(code) if code else None, False
    return str(error)[:200], None, False


class ChatClient:
    """One OpenAI-compatible chat endpoint: retries, response_format fallback, clear errors, usage stats."""

    def __init__(self, settings: LLMSettings, client: openai.OpenAI | None = None) -> None:
        self.settings = settings
        self._client = client
        self.stats = LLMStats(price_in=settings.price_in, price_out=settings.price_out)
        self._mode = 0  # index into _FORMAT_MODES: the strongest response_format the endpoint accepted
        self._send_temperature = True
        self._lock = threading.Lock()

    @property
    def client(self) -> openai.OpenAI:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self.settings.make_client()
        return self._client

    @property
    def format_mode(self) -> str:
        """The response_format this endpoint ended up accepting: json_schema, json_object or none."""
        return _FORMAT_MODES[self._mode]

    def scrub(self, text: str) -> str:
        """Text with the API key (and anything shaped like one) masked."""
        key = self.settings.api_key.get_secret_value() if self.settings.api_key else ""
        if key and key != PLACEHOLDER_KEY:
            text = text.replace(key, "***")
        return _SECRETISH.sub(r"\1***", text)

    def _where(self, capital: bool = False) -> str:
        return f"{'The' if capital else 'the'} LLM endpoint at {self.settings.url} (model {self.settings.model})"

    def complete(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None = None,
        schema_name: str = "result",
        abort: threading.Event | None = None,
    ) -> str:
        """The assistant's answer text. Raises LLMError (endpoint unusable) or CallFailed (this call only)."""
        while True:
            mode = self._mode if schema is not None else len(_FORMAT_MODES) - 1
            send_temperature = self._send_temperature
            kwargs: dict[str, Any] = {"model": self.settings.model, "messages": messages}
            if send_temperature:
                kwargs["temperature"] = 0
            if self.settings.max_tokens:
                kwargs["max_tokens"] = self.settings.max_tokens
            if _FORMAT_MODES[mode] == "json_schema":
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": schema, "strict": True},
                }
            elif _FORMAT_MODES[mode] == "json_object":
                kwargs["response_format"] = {"type": "json_object"}
            try:
                return self._call(kwargs, abort)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                detail, _, _ = _body_detail(exc)
                lowered = detail.lower()
                if "response_format" in kwargs and re.search(
                    r"response_format|json_schema|json_object|structured output|guided", lowered
                ):
                    with self._lock:
                        if self._mode == mode:
                            self._mode = mode + 1
                            log.warning(
                                "%s rejected response_format %s (%s); falling back to %s",
                                self._where(), _FORMAT_MODES[mode], self.scrub(detail),
                                _FORMAT_MODES[mode + 1],
                            )
                    continue
                if send_temperature and "temperature" in lowered:
                    with self._lock:
                        self._send_temperature = False
                    log.warning("%s rejected temperature 0; using its default", self._where())
                    continue
                raise CallFailed(
                    f"HTTP {exc.status_code} from {self._where()}: {self.scrub(detail)}"
                ) from None

    def _call(self, kwargs: dict[str, Any], abort: threading.Event | None) -> str:
        stop = stop_after_attempt(self.settings.max_attempts)
        if abort is not None:
            stop = stop | stop_when_event_set(abort)
        retrying = Retrying(
            stop=stop,
            wait=self._wait,
            retry=retry_if_exception(_is_transient),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(self._create, kwargs, abort)
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise LLMError(
                f"{self._where(True)} refused the API key (HTTP {exc.status_code}); "
                "check OPENAI_API_KEY."
            ) from None
        except openai.NotFoundError as exc:
            detail, code, html = _body_detail(exc)
            if not html and (code == "model_not_found" or "model" in detail.lower()):
                raise LLMError(
                    f"{self._where(True)}: the server has no such model (HTTP 404: "
                    f"{self.scrub(detail)}); set HIPPO_LLM_MODEL to a model it serves."
                ) from None
            raise LLMError(
                f"{self._where(True)} has no chat-completions API (HTTP 404, {detail}); "
                "check OPENAI_BASE_URL (OpenAI-compatible servers usually end in /v1)."
            ) from None
        except openai.APITimeoutError:
            raise CallFailed(
                f"{self._where()} did not answer within {self.settings.timeout:g}s "
                f"({self.settings.max_attempts} attempts)"
            ) from None
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise LLMError(
                f"Cannot reach {self._where()}: {self.scrub(str(cause)) or type(cause).__name__}; "
                "is the server running and OPENAI_BASE_URL right?"
            ) from None
        except (openai.RateLimitError, openai.InternalServerError) as exc:
            detail, _, _ = _body_detail(exc)
            raise CallFailed(
                f"HTTP {exc.status_code} from {self._where()} after {self.settings.max_attempts} attempts: "
                f"{self.scrub(detail)}"
            ) from None
        except ValueError as exc:  # a body that claims to be JSON but is not
            raise LLMError(
                f"{self._where(True)} answered with a body that is not JSON ({exc}); "
                "check OPENAI_BASE_URL (OpenAI-compatible servers usually end in /v1)."
            ) from None

    def _create(self, kwargs: dict[str, Any], abort: threading.Event | None) -> str:
        if abort is not None and abort.is_set():
            raise _Aborted()
        response: Any = self.client.chat.completions.create(**kwargs)
        if isinstance(response, str):  # the openai client hands back non-JSON bodies as text
            kind = "an HTML page" if re.search(r"<html|<!doctype", response[:500], re.I) else "non-JSON text"
            raise LLMError(
                f"{self._where(True)} answered with {kind} instead of an OpenAI API response; "
                "check OPENAI_BASE_URL (OpenAI-compatible servers usually end in /v1)."
            )
        choices = getattr(response, "choices", None)
        if not choices:
            raise LLMError(
                f"{self._where(True)} answered with JSON that is not a chat completion; "
                "check OPENAI_BASE_URL."
            )
        usage = getattr(response, "usage", None)
        self.stats.add(
            calls=1,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        )
        message = choices[0].message
        content = getattr(message, "content", None) or ""
        if not content:
            # some local servers put the whole answer in a separate reasoning field
            content = getattr(message, "reasoning_content", None) or ""
        return content

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        after = _retry_after(exc) if exc is not None else None
        if after is not None:
            return min(after, self.settings.backoff_max)
        backoff = wait_exponential_jitter(
            multiplier=self.settings.backoff_initial,
            max=self.settings.backoff_max,
            jitter=self.settings.backoff_initial,
        )
        return backoff(state)

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        status = getattr(exc, "status_code", None)
        if status:
            what = f"HTTP {status}"
        elif exc is not None and exc.__cause__ is not None:
            what = f"{type(exc).__name__} ({self.scrub(str(exc.__cause__)) or type(exc.__cause__).__name__})"
        else:
            what = type(exc).__name__
        delay = state.next_action.sleep if state.next_action else 0.0
        self.stats.add(retries=1)
        log.warning(
            "%s: %s (attempt %d of %d); retrying in %.2fs",
            self._where(), what, state.attempt_number, self.settings.max_attempts, delay,
        )


# -- the extractor --------------------------------------------------------------------------------------------


class LLMExtractor:
    """HippoRAG's LLM NER + OpenIE over an OpenAI-compatible endpoint (see module docstring)."""

    def __init__(self, settings: LLMSettings | None = None, *, client: openai.OpenAI | None = None) -> None:
        self.settings = settings or LLMSettings.from_env()
        self.chat = ChatClient(self.settings, client)
        self.name = f"llm:{self.settings.model}:{PROMPT_VERSION}"
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
        try:
            raw = self.chat.complete(ner_messages(text), NER_SCHEMA, "named_entities", abort)
        except CallFailed as exc:
            return ExtractionFailure(pid, f"NER call failed: {exc}")
        try:
            entities, repaired = parse_entities(raw)
        except ResponseParseError as exc:
            self.stats.add(parse_failures=1)
            return ExtractionFailure(pid, f"NER answer not parseable: {exc}", raw)
        try:
            raw = self.chat.complete(openie_messages(text, entities), TRIPLES_SCHEMA, "triples", abort)
        except CallFailed as exc:
            return ExtractionFailure(pid, f"OpenIE call failed: {exc}")
        try:
            triples, repaired_ie = parse_triples(raw)
        except ResponseParseError as exc:
            self.stats.add(parse_failures=1)
            return ExtractionFailure(pid, f"OpenIE answer not parseable: {exc}", raw)
        self.stats.add(repaired=int(repaired) + int(repaired_ie))
        return Extraction(named_entities=entities, triples=triples)

    def query_entities(self, text: str) -> list[str]:
        """Named entities of a query, through the same NER prompt; [] (logged) if the answer is unusable."""
        try:
            raw = self.chat.complete(ner_messages(text), NER_SCHEMA, "named_entities")
            return parse_entities(raw)[0]
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
