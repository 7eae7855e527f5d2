"""The chat client every LLM caller shares (extraction, the reader, hipporag2's recognition filter): one
OpenAI-compatible endpoint with retries and backoff on transient errors, response-format negotiation
(``negotiation.py``), clear errors naming the URL and the model (never the key), and usage stats."""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import asdict
from typing import Any

import openai
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_when_event_set,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

from ..errors import LLMError
from .negotiation import (
    _NO_FORMAT,
    _SECRETISH,
    FORMAT_MODES,
    TOKEN_PARAMS,
    CallFailed,
    ChatResult,
    EndpointProfile,
    NegotiationStore,
    _Aborted,
    _body_detail,
    _is_transient,
    _Rejected,
    _rejected_option,
    _retry_after,
    response_format_for,
)
from .settings import PLACEHOLDER_KEY, LLMSettings, LLMStats

log = logging.getLogger(__name__)

log = logging.getLogger(__name__)

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
        stop: stop_base = stop_after_attempt(self.settings.max_attempts)
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


