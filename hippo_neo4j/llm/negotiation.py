"""Response-format negotiation: which ``response_format``, temperature and token parameter an endpoint + model
accepts, recognised from the server's error message whatever the status code (OpenAI and vLLM answer 400,
some servers 422, llama-cpp-python 500), and remembered across runs in a small JSON file next to the
extraction cache (``llm-endpoints.json``)."""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import openai


log = logging.getLogger(__name__)

log = logging.getLogger(__name__)

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


