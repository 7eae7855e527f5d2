"""Settings of an OpenAI-compatible LLM endpoint (the environment names it), and its usage and cost."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, SecretStr

from ..config import default_cache_path, env_number
from ..errors import ConfigError, LLMError

if TYPE_CHECKING:  # the client is imported when one is made: the offline path never loads openai
    import openai

log = logging.getLogger(__name__)

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
        import openai

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
