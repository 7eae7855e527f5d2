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
    from llama_index.core.vector_stores.types import FilterCondition, FilterOperator, MetadataFilters
except ImportError as exc:  # the extra is not installed
    raise ImportError(f"HippoLlamaIndexRetriever needs llama-index-core ({exc}): pip install 'hippo-neo4j[llama-index]'") from exc

from ..config import ConnectionSettings
from ..errors import ConfigError
from ..memory import HippoRAG
from ..metadata import Condition, Filters, check_key, condition
from .passages import passage_entries

# LlamaIndex's filter operators that hippo-neo4j's filters express (hippo_neo4j/metadata.py): on a list of
# strings, "=" holds when the list holds the value and "in" when it shares one of the values, which is what
# LlamaIndex's `contains` and `any` mean; `all` is one `=` per value.
OPERATORS = {FilterOperator.EQ: "=", FilterOperator.GT: ">", FilterOperator.LT: "<", FilterOperator.GTE: ">=",
             FilterOperator.LTE: "<=", FilterOperator.IN: "in", FilterOperator.CONTAINS: "=",
             FilterOperator.ANY: "in", FilterOperator.ALL: "="}


def from_metadata_filters(filters: MetadataFilters) -> Filters | None:
    """LlamaIndex's ``MetadataFilters`` as a hippo-neo4j filter: conditions joined by ``and`` (nested ones too),
    with the operators of :data:`OPERATORS`. Another operator, or ``or`` / ``not``, is a ConfigError naming it
    (a filter that cannot be honoured is refused, not dropped). One condition under ``or`` is that condition."""
    conditions: list[Condition] = []

    def add(group: MetadataFilters) -> None:
        if group.condition == FilterCondition.NOT or (group.condition == FilterCondition.OR and len(group.filters) > 1):
            raise ConfigError(f"MetadataFilters condition {group.condition.value!r} is not supported: hippo-neo4j "
                              "filters join their conditions with 'and'.")
        for item in group.filters:
            if isinstance(item, MetadataFilters):
                add(item)
                continue
            op = OPERATORS.get(item.operator)
            if op is None:
                raise ConfigError(f"filter {item.key!r}: LlamaIndex operator {item.operator.value!r} is not supported; "
                                  f"use one of {', '.join(o.value for o in OPERATORS)}.")
            values = item.value if item.operator == FilterOperator.ALL else [item.value]
            if not isinstance(values, list) or not values:
                raise ConfigError(f"filter {item.key!r} all: give a non-empty list of values, not {item.value!r}.")
            conditions.extend(condition(check_key(item.key, "filter"), op, value) for value in values)

    add(filters)
    return Filters(conditions=conditions) if conditions else None


class HippoLlamaIndexRetriever(BaseRetriever):
    """The top ``top_k`` passages of a hippo-neo4j namespace for a query, by ``mode``, as ``NodeWithScore``s.

    Args:
        memory: an open :class:`~hippo_neo4j.memory.HippoRAG` (as for the LangChain retriever); it stays the
            caller's to close.
        mode: the retrieval mode (:data:`hippo_neo4j.retrieve.MODES`); None: the library's default (entity-ppr).
        top_k: passages per query.
        filters: metadata conditions every passage must pass, for every query: hippo-neo4j's map
            (:meth:`HippoRAG.query`) or LlamaIndex's ``MetadataFilters`` (``and`` of ``==``, ``>``, ``<``,
            ``>=``, ``<=``, ``in``, ``contains``, ``any``, ``all``; :func:`from_metadata_filters`).
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
        filters: dict[str, Any] | MetadataFilters | None = None,
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
        # a bad filter fails here, not at the first question
        self.filters = (from_metadata_filters(filters) if isinstance(filters, MetadataFilters)
                        else Filters.parse(filters))
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


__all__ = ["HippoLlamaIndexRetriever", "from_metadata_filters"]
