"""LLM extraction through any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp, ...).

HippoRAG's two steps per passage: a 1-shot named-entity prompt (``{"named_entities": [...]}``), then a 1-shot
OpenIE prompt given those entities (``{"triples": [[s, p, o], ...]}``), temperature 0.

Response formats are negotiated per endpoint and model: a strict JSON schema first, then llama.cpp's
``json_object`` + ``schema`` extension, then plain JSON mode, then none. A server that refuses a format is
recognised by its error message whatever the status code (OpenAI and vLLM answer 400, some servers 422,
llama-cpp-python 500), and the next format is tried at once, without retrying. What an endpoint accepted is
remembered in a small JSON file next to the extraction cache (``llm-endpoints.json``), so later runs do not
negotiate again. Lists are bounded (``maxItems`` scaled to the passage) and every call has a token budget
(``max_tokens``, or ``max_completion_tokens`` where the server wants that) sized to those bounds.

Robustness: tolerant parsing (``<think>`` blocks, code fences, a bare top-level array, truncated JSON repaired
with ``json_repair``); an answer cut off at the token budget keeps what was complete, and one that holds
nothing usable is asked once more with four times the budget, then recorded as a failure; bounded
concurrency; retries with exponential backoff on 429, 5xx, timeouts and connection errors, each one logged.
An unusable endpoint raises :class:`~hippo_neo4j.errors.LLMError` with a one-line message naming the URL and
the model (never the key). A passage whose answer cannot be parsed is a failure (:class:`ExtractionFailure`,
with the raw answer), never an empty extraction.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
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
from .cache import default_cache_path

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
    # None: a budget per call, sized to the step's list bounds; a number: exactly that budget for every call
    max_tokens: int | None = None
    # where negotiated response formats are remembered: None = llm-endpoints.json next to the extraction
    # cache; "" or "off" = not remembered
    negotiation_file: str | None = None
    price_in: float = DEFAULT_PRICE_IN
    price_out: float = DEFAULT_PRICE_OUT

    @classmethod
    def from_env(cls, **overrides: Any) -> "LLMSettings":
        """Settings from OPENAI_BASE_URL, OPENAI_API_KEY, HIPPO_LLM_MODEL, HIPPO_LLM_CONCURRENCY, HIPPO_LLM_TIMEOUT,
        HIPPO_LLM_MAX_TOKENS, HIPPO_LLM_NEGOTIATION_FILE and HIPPO_LLM_PRICE_*.

        Explicit ``overrides`` (not None) win over the environment.
        """
        values: dict[str, Any] = {
            "model": os.environ.get("HIPPO_LLM_MODEL") or DEFAULT_MODEL,
            "base_url": os.environ.get("OPENAI_BASE_URL") or None,
            "concurrency": env_number("HIPPO_LLM_CONCURRENCY", 8),
            "timeout": env_number("HIPPO_LLM_TIMEOUT", 120.0, float),
            "max_tokens": env_number("HIPPO_LLM_MAX_TOKENS", 0) or None,
            "negotiation_file": os.environ.get("HIPPO_LLM_NEGOTIATION_FILE"),
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
        if settings.max_tokens is not None and settings.max_tokens < 1:
            raise ConfigError("HIPPO_LLM_MAX_TOKENS must be at least 1.")
        return settings

    @property
    def url(self) -> str:
        return (self.base_url or DEFAULT_BASE_URL).rstrip("/")

    @property
    def negotiation_path(self) -> Path | None:
        """The file that remembers what endpoints accepted, or None when nothing is remembered."""
        if self.negotiation_file is None:
            return default_cache_path().parent / "llm-endpoints.json"
        if self.negotiation_file.strip().lower() in ("", "off", "none", "0"):
            return None
        return Path(self.negotiation_file).expanduser()

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
    truncated: int = 0  # answers cut off at the token budget
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
    json_at = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
    if fence and (json_at < 0 or fence.start() < json_at):
        # a fence that opens before the JSON holds it; one that opens later is inside or after the JSON
        # (small models write "```" into a string and ramble on)
        s = fence.group(1)
    starts = [i for i in (s.find("{"), s.find("[")) if i >= 0]
    if not starts:
        raise ResponseParseError("no JSON object or array in the answer")
    s = s[min(starts) :]
    repaired = False
    try:
        # strict=False: raw newlines and tabs inside strings, which grammar-constrained servers let through
        obj, _ = json.JSONDecoder(strict=False).raw_decode(s)
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


class _Rejected(Exception):
    """The server refused one option of the request (``what``): the caller drops it and asks again."""

    def __init__(self, what: str, status: int, detail: str) -> None:
        super().__init__(f"{what} rejected (HTTP {status}): {detail}")
        self.what, self.status, self.detail = what, status, detail


# The response formats tried, strongest first. "json_object+schema" is llama-cpp-python's extension
# ({"type": "json_object", "schema": ...}, enforced by a grammar); servers that do not know the extra key
# ignore it and give plain JSON mode.
FORMAT_MODES = ("json_schema", "json_object+schema", "json_object", "none")
_FORMAT_MODES = FORMAT_MODES
_NO_FORMAT = len(FORMAT_MODES) - 1
TOKEN_PARAMS = ("max_tokens", "max_completion_tokens", "none")
NEGOTIATION_TTL = 30 * 24 * 3600.0  # a remembered negotiation is redone after 30 days (servers get upgraded)
# what servers say when they do not support a response_format: OpenAI / vLLM "response_format ... not
# supported", llama-cpp-python "Input should be 'text' or 'json_object'" (HTTP 500), guided-decoding errors
_FORMAT_ERROR = re.compile(
    r"response_format|response format|json_schema|json_object|structured output|guided|grammar", re.IGNORECASE
)
# how servers say that a parameter (not its value) is unsupported: OpenAI "Unsupported parameter: 'max_tokens'
# ... Use 'max_completion_tokens' instead", "Unsupported value: 'temperature' does not support 0", pydantic
# "Extra inputs are not permitted"
_UNSUPPORTED = re.compile(
    r"unsupported|not supported|does not support|unknown|unrecogni[sz]ed|not permitted|not allowed|extra (inputs|fields)"
    r"|use '?max_completion_tokens"
)
_SECRETISH = re.compile(r"\b(sk-[A-Za-z0-9_\-]{2})[A-Za-z0-9_\-]{4,}")
# llama-cpp-python's grammar honours string lengths; an upper bound keeps a rambling model from filling the
# budget with one endless string (of the 52,306 strings in GPT-3.5's MuSiQue triples, 99.9% have at most 75
# characters and one has more than 200)
_SCHEMA_STRING_MAX = 200


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


def _body_text(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text or ""
    except Exception:  # noqa: BLE001 - the body may be unreadable (closed stream)
        return ""


def _body_detail(exc: openai.APIStatusError) -> tuple[str, str | None, bool]:
    """(short detail, error code, body is HTML) of an HTTP error response."""
    text = _body_text(exc)
    if re.search(r"<(!doctype|html|head|body)\b", text[:500], re.IGNORECASE):
        return "an HTML page", None, True
    try:
        body = json.loads(text)
    except ValueError:
        return (text.strip().splitlines() or [""])[0][:160], None, False
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        code = error.get("code") or error.get("type")
        return " ".join(str(error.get("message") or error).split())[:200], str(code) if code else None, False
    return " ".join(str(error).split())[:200], None, False


def _rejected_option(exc: BaseException, kwargs: dict[str, Any]) -> str | None:
    """Which option of the request the server refused, judged by its error message, or None.

    ``response_format`` is recognised on any 4xx or 5xx status (llama-cpp-python answers an unknown format
    with 500); ``temperature``, ``max_tokens`` and ``max_completion_tokens`` on 400 and 422 only.
    """
    if not isinstance(exc, openai.APIStatusError):
        return None
    status = exc.status_code
    if status in (401, 403, 404, 408, 409, 429) or status < 400:
        return None
    text = _body_text(exc)
    if re.search(r"<(!doctype|html|head|body)\b", text[:500], re.IGNORECASE):
        return None  # a proxy's error page says nothing about our request
    if "response_format" in kwargs and _FORMAT_ERROR.search(text):
        return "response_format"
    if status not in (400, 422):
        return None
    lowered = text.lower()
    if not _UNSUPPORTED.search(lowered):
        return None  # e.g. "max_tokens is too large": a bad value for this request, not an unknown option
    for option in ("max_completion_tokens", "max_tokens", "temperature"):
        if option in kwargs and option in lowered:
            return option
    return None


def _limit_strings(schema: Any) -> Any:
    """A copy of ``schema`` whose strings are 1 to _SCHEMA_STRING_MAX characters long."""
    if isinstance(schema, dict):
        out = {k: _limit_strings(v) for k, v in schema.items()}
        if out.get("type") == "string":
            out.setdefault("minLength", 1)
            out.setdefault("maxLength", _SCHEMA_STRING_MAX)
        return out
    if isinstance(schema, list):
        return [_limit_strings(v) for v in schema]
    return schema


def response_format_for(mode: str, schema: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The ``response_format`` request field of a format mode (None for "none")."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if mode == "json_object+schema":
        return {"type": "json_object", "schema": _limit_strings(schema)}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


@dataclass(frozen=True)
class ChatResult:
    """One answer: its text, why generation stopped, and what the request carried."""

    text: str
    finish_reason: str | None
    response_format: str  # one of FORMAT_MODES
    max_tokens: int | None

    @property
    def truncated(self) -> bool:
        """The answer was cut off at the token budget."""
        return self.finish_reason == "length"


@dataclass
class EndpointProfile:
    """What one endpoint + model accepts; learnt by negotiation, remembered in the negotiation file."""

    response_format: str = FORMAT_MODES[0]
    temperature: bool = True
    token_param: str = TOKEN_PARAMS[0]
    verified: bool = False  # a structured call succeeded with this response_format
    rejected: dict[str, str] = field(default_factory=dict)  # option -> the server's words
    updated_at: float = 0.0

    @classmethod
    def from_record(cls, record: Any) -> "EndpointProfile | None":
        if not isinstance(record, dict):
            return None
        profile = cls()
        if record.get("response_format") in FORMAT_MODES:
            profile.response_format = record["response_format"]
        if record.get("token_param") in TOKEN_PARAMS:
            profile.token_param = record["token_param"]
        profile.temperature = bool(record.get("temperature", True))
        profile.verified = bool(record.get("verified", False))
        rejected = record.get("rejected")
        profile.rejected = {str(k): str(v) for k, v in rejected.items()} if isinstance(rejected, dict) else {}
        try:
            profile.updated_at = float(record.get("updated_at", 0.0))
        except (TypeError, ValueError):
            profile.updated_at = 0.0
        return profile


class NegotiationStore:
    """Endpoint profiles by ``"<base url> <model>"`` in one small JSON file (written atomically).

    Several processes may share the file: each write re-reads it and replaces only its own entry, so the
    worst a race can do is lose one entry, which is then negotiated again. Errors are logged, never raised.
    """

    _lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    def key(url: str, model: str) -> str:
        return f"{url} {model}"

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable LLM negotiation file %s (%s)", self.path, exc)
            return {}
        endpoints = data.get("endpoints") if isinstance(data, dict) else None
        return endpoints if isinstance(endpoints, dict) else {}

    def get(self, url: str, model: str) -> EndpointProfile | None:
        with self._lock:
            profile = EndpointProfile.from_record(self._read().get(self.key(url, model)))
        if profile is not None and time.time() - profile.updated_at > NEGOTIATION_TTL:
            return None
        return profile

    def put(self, url: str, model: str, profile: EndpointProfile) -> None:
        with self._lock:
            try:
                endpoints = self._read()
                endpoints[self.key(url, model)] = asdict(profile)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=".llm-endpoints.", dir=self.path.parent)
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump({"version": 1, "endpoints": endpoints}, out, indent=1, sort_keys=True)
                os.replace(tmp, self.path)
            except OSError as exc:
                log.warning("cannot write the LLM negotiation file %s (%s)", self.path, exc)


class ChatClient:
    """One OpenAI-compatible chat endpoint: retries, response-format negotiation, clear errors, usage stats.

    Negotiation: a structured call sends the strongest response_format the endpoint has not refused (see
    FORMAT_MODES), plus temperature 0 and a token budget. When the server refuses one of those options (its
    error message names it; for response_format any 4xx/5xx status counts), the option is dropped or
    weakened and the call is sent again at once; transient errors are retried with backoff as before. What
    the endpoint accepted is kept for the client's life and, unless disabled, in the negotiation file, which
    a new client reads before its first call.
    """

    def __init__(self, settings: LLMSettings, client: openai.OpenAI | None = None) -> None:
        self.settings = settings
        self._client = client
        self.stats = LLMStats(price_in=settings.price_in, price_out=settings.price_out)
        self._lock = threading.Lock()
        path = settings.negotiation_path
        self._store = NegotiationStore(path) if path is not None else None
        self._profile: EndpointProfile | None = None  # loaded on the first call
        self.remembered = False  # the profile came from the negotiation file

    @property
    def client(self) -> openai.OpenAI:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = self.settings.make_client()
        return self._client

    @property
    def profile(self) -> EndpointProfile:
        """What this endpoint + model accepts (as remembered, or as negotiated so far)."""
        if self._profile is None:
            with self._lock:
                if self._profile is None:
                    stored = self._store.get(self.settings.url, self.settings.model) if self._store else None
                    self.remembered = stored is not None
                    self._profile = stored or EndpointProfile()
                    if stored is not None:
                        log.info("%s: using the remembered response_format %s", self._where(), stored.response_format)
        return self._profile

    @property
    def format_mode(self) -> str:
        """The response_format this endpoint ended up accepting: one of FORMAT_MODES."""
        return self.profile.response_format

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
        max_tokens: int | None = None,
    ) -> str:
        """The assistant's answer text. Raises LLMError (endpoint unusable) or CallFailed (this call only)."""
        return self.chat(messages, schema, schema_name, abort, max_tokens).text

    def chat(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None = None,
        schema_name: str = "result",
        abort: threading.Event | None = None,
        max_tokens: int | None = None,
    ) -> ChatResult:
        """The answer with its finish reason. ``schema`` asks for structured output (negotiated);
        ``max_tokens`` is the budget (``settings.max_tokens``, when set, wins). Raises LLMError or CallFailed."""
        budget = self.settings.max_tokens or max_tokens
        profile = self.profile
        # each turn of the loop drops or weakens one option, so it ends; the bound is a second safeguard
        for _ in range(len(FORMAT_MODES) + len(TOKEN_PARAMS) + 2):
            with self._lock:
                mode = profile.response_format if schema is not None else FORMAT_MODES[_NO_FORMAT]
                send_temperature, token_param = profile.temperature, profile.token_param
            kwargs: dict[str, Any] = {"model": self.settings.model, "messages": messages}
            if send_temperature:
                kwargs["temperature"] = 0
            if budget and token_param != "none":
                kwargs[token_param] = budget
            response_format = response_format_for(mode, schema, schema_name) if schema is not None else None
            if response_format is not None:
                kwargs["response_format"] = response_format
            try:
                text, finish_reason = self._call(kwargs, abort)
            except _Rejected as rejected:
                if not self._drop(rejected, mode, send_temperature, token_param):
                    raise CallFailed(
                        f"HTTP {rejected.status} from {self._where()}: {self.scrub(rejected.detail)}"
                    ) from None
                continue
            if schema is not None and not profile.verified:
                self._remember(verified=mode)
            return ChatResult(text, finish_reason, mode, kwargs.get(token_param) if budget else None)
        raise CallFailed(f"{self._where()} kept refusing the request's options")  # pragma: no cover

    def _drop(self, rejected: _Rejected, mode: str, sent_temperature: bool, sent_param: str) -> bool:
        """Weaken the refused option (unless another thread already did); False when nothing is left."""
        profile = self.profile
        detail = self.scrub(rejected.detail)
        with self._lock:
            if rejected.what == "response_format":
                if mode == FORMAT_MODES[_NO_FORMAT]:
                    return False
                if profile.response_format == mode:
                    following = FORMAT_MODES[FORMAT_MODES.index(mode) + 1]
                    profile.response_format, profile.verified = following, False
                    profile.rejected[mode] = f"HTTP {rejected.status}: {detail}"
                    log.warning(
                        "%s rejected response_format %s (HTTP %d: %s); falling back to %s",
                        self._where(), mode, rejected.status, detail, following,
                    )
            elif rejected.what == "temperature":
                if profile.temperature == sent_temperature and sent_temperature:
                    profile.temperature = False
                    profile.rejected["temperature"] = f"HTTP {rejected.status}: {detail}"
                    log.warning("%s rejected temperature 0; using its default", self._where())
            else:  # max_tokens or max_completion_tokens
                if sent_param == "none":
                    return False
                if profile.token_param == sent_param:
                    following = TOKEN_PARAMS[TOKEN_PARAMS.index(sent_param) + 1]
                    profile.token_param = following
                    profile.rejected[sent_param] = f"HTTP {rejected.status}: {detail}"
                    log.warning(
                        "%s rejected %s; %s", self._where(), sent_param,
                        "sending no token budget" if following == "none" else f"using {following}",
                    )
        self._remember()
        return True

    def _remember(self, verified: str | None = None) -> None:
        profile = self.profile
        with self._lock:
            if verified is not None:
                if profile.response_format != verified or profile.verified:
                    return
                profile.verified = True
            profile.updated_at = time.time()
            snapshot = EndpointProfile(**{**asdict(profile), "rejected": dict(profile.rejected)})
        if self._store is not None:
            self._store.put(self.settings.url, self.settings.model, snapshot)

    def _call(self, kwargs: dict[str, Any], abort: threading.Event | None) -> tuple[str, str | None]:
        stop = stop_after_attempt(self.settings.max_attempts)
        if abort is not None:
            stop = stop | stop_when_event_set(abort)
        retrying = Retrying(
            stop=stop,
            wait=self._wait,
            retry=retry_if_exception(lambda exc: _is_transient(exc) and _rejected_option(exc, kwargs) is None),
            before_sleep=self._log_retry,
            reraise=True,
        )
        try:
            return retrying(self._create, kwargs, abort)
        except openai.APIStatusError as exc:
            option = _rejected_option(exc, kwargs)
            if option is not None:
                raise _Rejected(option, exc.status_code, _body_detail(exc)[0]) from None
            raise self._status_error(exc) from None
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
        except ValueError as exc:  # a body that claims to be JSON but is not
            raise LLMError(
                f"{self._where(True)} answered with a body that is not JSON ({exc}); "
                "check OPENAI_BASE_URL (OpenAI-compatible servers usually end in /v1)."
            ) from None

    def _status_error(self, exc: openai.APIStatusError) -> Exception:
        """The LLMError (endpoint unusable) or CallFailed (this call only) for an HTTP error."""
        detail, code, html = _body_detail(exc)
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return LLMError(
                f"{self._where(True)} refused the API key (HTTP {exc.status_code}); check OPENAI_API_KEY."
            )
        if isinstance(exc, openai.NotFoundError):
            if not html and (code == "model_not_found" or "model" in detail.lower()):
                return LLMError(
                    f"{self._where(True)}: the server has no such model (HTTP 404: "
                    f"{self.scrub(detail)}); set HIPPO_LLM_MODEL to a model it serves."
                )
            return LLMError(
                f"{self._where(True)} has no chat-completions API (HTTP 404, {detail}); "
                "check OPENAI_BASE_URL (OpenAI-compatible servers usually end in /v1)."
            )
        if _is_transient(exc):
            return CallFailed(
                f"HTTP {exc.status_code} from {self._where()} after {self.settings.max_attempts} attempts: "
                f"{self.scrub(detail)}"
            )
        return CallFailed(f"HTTP {exc.status_code} from {self._where()}: {self.scrub(detail)}")

    def _create(self, kwargs: dict[str, Any], abort: threading.Event | None) -> tuple[str, str | None]:
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
        choice = choices[0]
        message = choice.message
        content = getattr(message, "content", None) or ""
        if not content:
            # some local servers put the whole answer in a separate reasoning field
            content = getattr(message, "reasoning_content", None) or ""
        finish_reason = getattr(choice, "finish_reason", None)
        if finish_reason == "length":
            self.stats.add(truncated=1)
        return content, finish_reason

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
