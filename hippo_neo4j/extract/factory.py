"""Choosing an extractor: ``make_extractor("auto" | "llm" | "offline", cache=True)``.

The LLM extractor (and with it the openai client) is imported only when it is chosen.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import ConfigError
from .base import Extractor
from .cache import CachedExtractor, ExtractionCache
from ..llm.settings import llm_configured
from .offline import OfflineExtractor

if TYPE_CHECKING:
    from ..llm.settings import LLMSettings

def resolve_kind(kind: str) -> Literal["llm", "offline"]:
    """``auto`` means the LLM when OPENAI_BASE_URL or OPENAI_API_KEY is set, else the offline extractor."""
    if kind == "auto":
        return "llm" if llm_configured() else "offline"
    if kind not in ("llm", "offline"):
        raise ConfigError(f"Unknown extractor {kind!r}; use auto, llm or offline.")
    return kind  # type: ignore[return-value]


def make_extractor(
    kind: str = "auto",
    cache: bool | ExtractionCache = True,
    *,
    settings: LLMSettings | None = None,
    cache_path: str | Path | None = None,
) -> Extractor:
    """An extractor of the requested kind, wrapped in the persistent cache unless ``cache`` is False.

    ``cache`` may also be an open :class:`ExtractionCache`; ``cache_path`` overrides
    ``$HIPPO_EXTRACTION_CACHE`` and the default ``~/.cache/hippo-neo4j/extractions.sqlite``.
    """
    resolved = resolve_kind(kind)
    inner: Extractor
    if resolved == "llm":
        from ..llm.settings import LLMSettings
        from .llm import LLMExtractor

        inner = LLMExtractor(settings or LLMSettings.from_env())
    else:
        inner = OfflineExtractor()
    if cache is False:
        return inner
    store = cache if isinstance(cache, ExtractionCache) else ExtractionCache(cache_path)
    return CachedExtractor(inner, store)
