"""HippoRAG retrieval as a LlamaIndex retriever (extra ``llama-index``).

    from hippo_neo4j import HippoRAG
    from hippo_neo4j.integrations.llama_index import HippoLlamaIndexRetriever

    retriever = HippoLlamaIndexRetriever(memory=HippoRAG(namespace="docs"), mode="hipporag2", top_k=5)
    nodes = retriever.retrieve("Which Stanford professor works on Alzheimer's?")

    # or in a query engine:
    from llama_index.core.query_engine import RetrieverQueryEngine
    engine = RetrieverQueryEngine.from_args(retriever, llm=...)

Each ``NodeWithScore`` holds the passage's score and a ``TextNode`` whose id is the passage id and whose text is
the passage (title, then text), as LangChain's ``Document`` holds it; its metadata is the LangChain retriever's:
the id, title, score, the phrases that carried the walk's mass to it (``via``), whether dense retrieval filled it
in (``filled``), the passage's own metadata (``metadata``), the mode and the Cypher statement that draws the result in Neo4j Browser (``cypher``). The
metadata is kept out of the text that LlamaIndex gives an LLM or an embedder: they see the passage alone.
Needs the extra: ``pip install 'hippo-neo4j[llama-index]'``.
"""

from __future__ import annotations

import asyncio
from typing import Any

try:
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.retrievers import BaseRetriever
    from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
except ImportError as exc:  # the extra is not installed
    raise ImportError(f"HippoLlamaIndexRetriever needs llama-index-core ({exc}): pip install 'hippo-neo4j[llama-index]'") from exc

from ..config import ConnectionSettings
from ..errors import ConfigError
from ..memory import HippoRAG
from ..metadata import Filters
from .passages import passage_entries


class HippoLlamaIndexRetriever(BaseRetriever):
    """The top ``top_k`` passages of a hippo-neo4j namespace for a query, by ``mode``, as ``NodeWithScore``s.

    Args:
        memory: an open :class:`~hippo_neo4j.memory.HippoRAG` (as for the LangChain retriever); it stays the
            caller's to close.
        mode: the retrieval mode (:data:`hippo_neo4j.retrieve.MODES`); None: the library's default (entity-ppr).
        top_k: passages per query.
        filters: metadata conditions every passage must pass (:meth:`HippoRAG.query`), for every query.
        namespace, connection, extractor: with no ``memory``, the retriever opens its own HippoRAG on
            ``connection`` (default: the environment, as the CLI connects) and ``namespace``, with ``extractor``
            as its query NER; :meth:`close` closes it.
        callback_manager, verbose: LlamaIndex's own options of a retriever.

    ``aretrieve`` runs the synchronous HippoRAG query in a worker thread (``asyncio.to_thread``): the event loop
    is not blocked, and the nodes are those of ``retrieve``.
    """

    def __init__(
        self,
        memory: HippoRAG | None = None,
        *,
        mode: str | None = None,
        top_k: int = 5,
        filters: dict[str, Any] | None = None,
        namespace: str | None = None,
        connection: ConnectionSettings | None = None,
        extractor: Any = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        from ..retrieve import MODES

        if mode is not None:
            MODES[mode]  # an unknown mode fails here, not at the first question
        if memory is not None and (namespace is not None or connection is not None or extractor is not None):
            raise ConfigError("Give either an open HippoRAG (memory) or the namespace, connection and extractor "
                              "to open one, not both.")
        self.mode = mode
        self.top_k = top_k
        self.filters = Filters.parse(filters)  # a bad filter fails here, not at the first question
        self._owns_memory = memory is None
        self.memory = memory or HippoRAG(connection, namespace=namespace, extractor=extractor)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.memory.query(query_bundle.query_str, mode=self.mode, top_k=self.top_k, filters=self.filters)
        return [
            NodeWithScore(
                node=TextNode(id_=metadata["id"], text=content, metadata=metadata,
                              excluded_embed_metadata_keys=list(metadata), excluded_llm_metadata_keys=list(metadata)),
                score=metadata["score"],
            )
            for content, metadata in passage_entries(result, self.memory.namespace)
        ]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)

    def close(self) -> None:
        """Close the HippoRAG this retriever opened (one it was given stays open)."""
        if self._owns_memory:
            self.memory.close()


__all__ = ["HippoLlamaIndexRetriever"]
