"""What the framework retrievers make of a :class:`~hippo_neo4j.models.RetrievalResult`: for each passage, best
first, its content (title, then text) and its metadata (id, title, score, the phrases that carried the walk's mass
to it, whether dense retrieval filled it in, the passage's own metadata as indexed, the mode, and the Cypher
statement that draws the result in Neo4j Browser). LangChain's ``Document`` and LlamaIndex's ``TextNode`` are both made from these."""

from __future__ import annotations

from typing import Any

from ..drawing import drawing_cypher
from ..models import RetrievalResult

VIA = 3  # contributors named in a passage's metadata


def passage_entries(result: RetrievalResult, namespace: str) -> list[tuple[str, dict[str, Any]]]:
    """(content, metadata) of each passage of ``result``, in its order."""
    drawing = drawing_cypher(result, namespace)
    return [
        (f"{p.title}\n{p.text}" if p.title else p.text,
         {"id": p.id, "title": p.title, "score": p.score, "via": [c.phrase for c in p.contributors[:VIA]],
          "filled": p.filled, "metadata": p.metadata, "mode": result.mode, "cypher": drawing})
        for p in result.passages
    ]
