"""HippoRAG retrieval as a neo4j-graphrag-python ``Retriever``: drop it into ``GraphRAG`` on your own Neo4j.

    from neo4j import GraphDatabase
    from neo4j_graphrag.generation import GraphRAG
    from neo4j_graphrag.llm import OpenAILLM
    from hippo_neo4j.integrations.graphrag import HippoRetriever

    driver = GraphDatabase.driver("bolt://localhost:7687", auth=("neo4j", "..."))
    retriever = HippoRetriever(driver, namespace="docs", mode="hipporag2")
    rag = GraphRAG(retriever=retriever, llm=OpenAILLM(model_name="gpt-4o-mini"))
    print(rag.search("Which Stanford professor works on Alzheimer's?", retriever_config={"top_k": 5}).answer)

Each item's content is the passage (title, then text); its metadata holds the id, score, the phrases that
carried the walk's mass to it and the passage's own metadata (``metadata``); ``filters`` (metadata conditions,
:meth:`HippoRAG.query`), given to the retriever or to a search, keep only the passages that pass them. The result's metadata holds the mode, the explanation and the Cypher statement
that draws it in Neo4j Browser. Needs the extra: ``pip install 'hippo-neo4j[neo4j-graphrag]'``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import neo4j

try:
    from neo4j_graphrag.retrievers.base import Retriever
    from neo4j_graphrag.types import RawSearchResult, RetrieverResultItem
except ImportError as exc:  # the extra is not installed
    raise ImportError(f"HippoRetriever needs neo4j-graphrag ({exc}): pip install 'hippo-neo4j[neo4j-graphrag]'") from exc

from ..config import ConnectionSettings
from ..drawing import drawing_cypher
from ..memory import HippoRAG
from ..metadata import Filters


class HippoRetriever(Retriever):
    """Passages of one hippo-neo4j namespace, ranked by a HippoRAG mode (:data:`hippo_neo4j.retrieve.MODES`).

    Args:
        driver: the user's Neo4j driver (GDS installed), holding a namespace indexed by hippo-neo4j.
        namespace: the namespace to retrieve from.
        mode: the retrieval mode; None: the library's default (entity-ppr).
        top_k: passages per search unless ``search(top_k=...)`` says otherwise.
        filters: metadata conditions every passage must pass unless ``search(filters=...)`` gives others.
        memory: an open :class:`~hippo_neo4j.memory.HippoRAG` to use instead of opening one on ``driver``.
        extractor: the query NER for modes that link entities (default: the library's choice).
        result_formatter: turns each record (id, title, text, score, via) into a ``RetrieverResultItem``.
    """

    def __init__(
        self,
        driver: neo4j.Driver,
        namespace: str = "default",
        mode: str | None = None,
        top_k: int = 5,
        neo4j_database: Optional[str] = None,
        *,
        memory: HippoRAG | None = None,
        extractor: Any = None,
        result_formatter: Optional[Callable[[neo4j.Record], RetrieverResultItem]] = None,
        filters: Optional[dict[str, Any]] = None,
    ) -> None:
        super().__init__(driver, neo4j_database)  # checks the server's version
        from ..retrieve import MODES

        if mode is not None:
            MODES[mode]  # an unknown mode fails here, not at the first question
        self.mode = mode
        self.top_k = top_k
        self.filters = Filters.parse(filters)  # a bad filter fails here, not at the first question
        self.result_formatter = result_formatter
        self.memory = memory or HippoRAG(
            ConnectionSettings.from_env(database=neo4j_database or "neo4j", namespace=namespace),
            namespace=namespace, driver=driver, extractor=extractor,
        )

    def get_search_results(
        self,
        query_text: str,
        top_k: int | None = None,
        mode: str | None = None,
        entities: Sequence[str] | None = None,
        filters: Optional[dict[str, Any]] = None,
    ) -> RawSearchResult:
        """The passages for ``query_text``, best first, as records (id, title, text, score, via, filled, metadata)."""
        result = self.memory.query(query_text, mode=mode or self.mode, top_k=top_k or self.top_k, entities=entities,
                                   filters=self.filters if filters is None else filters)
        records = [
            neo4j.Record({"id": p.id, "title": p.title, "text": p.text, "score": p.score,
                          "via": [c.phrase for c in p.contributors[:3]], "filled": p.filled, "metadata": p.metadata})
            for p in result.passages
        ]
        explanation = result.model_dump(include={"entities", "linked", "facts", "phrase_seeds", "top_phrases",
                                                 "fell_back", "fallback_reason", "warning", "filtered_passages"})
        return RawSearchResult(records=records, metadata={
            "mode": result.mode, "namespace": self.memory.namespace, "explanation": explanation,
            "cypher": drawing_cypher(result, self.memory.namespace),
        })

    def default_record_formatter(self, record: neo4j.Record) -> RetrieverResultItem:
        title = record.get("title")
        content = f"{title}\n{record['text']}" if title else record["text"]
        return RetrieverResultItem(content=content, metadata={k: record.get(k) for k in ("id", "title", "score", "via", "filled",
                                                                                     "metadata")})


__all__ = ["HippoRetriever"]
