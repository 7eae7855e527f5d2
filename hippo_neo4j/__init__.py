"""hippo-neo4j: HippoRAG long-term memory for LLM applications, native to Neo4j and GDS.

The names below are imported on first use, so that ``import hippo_neo4j`` (and every ``hippo`` command) pays
only for what it touches.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "ConnectionSettings": "config",
    "HippoConfig": "config",
    "ServerSettings": "config",
    "HippoRAG": "memory",
    "AsyncHippoRAG": "memory",
    "Extraction": "models",
    "IndexReport": "models",
    "PassageIn": "models",
    "RetrievalResult": "models",
}

__all__ = [
    "AsyncHippoRAG", "ConnectionSettings", "Extraction", "HippoConfig", "HippoRAG", "IndexReport", "PassageIn", "RetrievalResult",
    "ServerSettings",
]

if TYPE_CHECKING:
    from .config import ConnectionSettings, HippoConfig, ServerSettings
    from .memory import AsyncHippoRAG, HippoRAG
    from .models import Extraction, IndexReport, PassageIn, RetrievalResult


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hippo_neo4j' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
