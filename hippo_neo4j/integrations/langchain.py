"""HippoRAG retrieval as a LangChain retriever (extra ``langchain``).

    from hippo_neo4j import HippoRAG
    from hippo_neo4j.integrations.langchain import HippoLangChainRetriever

    retriever = HippoLangChainRetriever(memory=HippoRAG(namespace="docs"), mode="hipporag2", top_k=5,
                                        filters={"user": "u1"})
    docs = retriever.invoke("Which Stanford professor works on Alzheimer's?")

Each ``Document`` holds the passage (title, then text); its metadata the id, score, the phrases that carried the
walk's mass to it, the passage's own metadata (``metadata``), the mode and the Cypher statement that draws the
result in Neo4j Browser. ``filters`` (metadata conditions, :meth:`HippoRAG.query`) hold for every query.
"""

from __future__ import annotations

from typing import Any

try:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
except ImportError as exc:  # the extra is not installed
    raise ImportError(f"HippoLangChainRetriever needs langchain-core ({exc}): pip install 'hippo-neo4j[langchain]'") from exc

from .passages import passage_entries


class HippoLangChainRetriever(BaseRetriever):
    """The top ``top_k`` passages of ``memory`` (an open HippoRAG) for a query, by ``mode``."""

    memory: Any
    mode: str | None = None
    top_k: int = 5
    filters: dict[str, Any] | None = None

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        result = self.memory.query(query, mode=self.mode, top_k=self.top_k, filters=self.filters)
        return [Document(page_content=content, metadata=metadata)
                for content, metadata in passage_entries(result, self.memory.namespace)]


__all__ = ["HippoLangChainRetriever"]
