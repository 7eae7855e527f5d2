"""hippo-neo4j: HippoRAG long-term memory for LLM applications, native to Neo4j and GDS."""

__version__ = "0.1.0"

from .config import ConnectionSettings, HippoConfig, ServerSettings  # noqa: E402
from .memory import HippoRAG  # noqa: E402
from .models import Extraction, IndexReport, PassageIn, RetrievalResult  # noqa: E402

__all__ = [
    "ConnectionSettings",
    "Extraction",
    "HippoConfig",
    "HippoRAG",
    "IndexReport",
    "PassageIn",
    "RetrievalResult",
    "ServerSettings",
]
