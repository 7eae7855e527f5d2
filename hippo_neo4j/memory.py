"""HippoRAG on Neo4j: the facade that wires the rooms together.

    from hippo_neo4j import HippoRAG
    with HippoRAG(namespace="docs") as hippo:
        hippo.index([{"title": "...", "text": "..."}])
        result = hippo.query("Which Stanford professor works on Alzheimer's?")

Indexing runs ``graph.indexing`` (extraction → phrase normalisation → graph writer → synonym linker), queries
go to the retriever of the named mode (``retrieve``), deletion and namespaces to ``graph.namespace``. The graph:
``(:Passage {ns, id, title, text, hash, embedding})``, ``(:Phrase {ns, text, embedding})``,
``(:Phrase)-[:RELATION {weight, sources, predicates}]->(:Phrase)``, ``(:Phrase)-[:SYNONYM {score}]->(:Phrase)``,
``(:Phrase)-[:MENTIONED_IN {count}]->(:Passage)`` and ``(:Fact {ns, id, subject, predicate, object, text,
embedding, sources})``. Every statement lives in ``cypher/`` and is parameterised.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
from neo4j import Driver

from .config import ConnectionSettings, HippoConfig
from .corpus import load_openie
from .db import connect
from .encode import Encoder, shared_encoder
from .errors import ConfigError
from .graph import binding, projection
from .graph import namespace as namespaces
from .graph.facts import FactStore
from .graph.indexing import Indexer
from .graph.store import GraphStore
from .graph.synonyms import SynonymLinker
from .models import DeleteReport, FactHit, IndexReport, LinkedEntity, PassageIn, RetrievalResult, as_passage
from .retrieve import MODES, DenseRetriever, Query, RetrievalContext, Retriever, default_mode
from .retrieve.linking import link_entities, link_facts
from .text import scrub

log = logging.getLogger(__name__)


class HippoRAG:
    """A HippoRAG memory living in one namespace of a Neo4j database."""

    def __init__(
        self,
        connection: ConnectionSettings | None = None,
        *,
        namespace: str | None = None,
        encoder: Encoder | None = None,
        extractor: Any = None,
        config: HippoConfig | None = None,
        driver: Driver | None = None,
        fact_filter: Any = "auto",
    ) -> None:
        self.connection = connection or ConnectionSettings.from_env()
        self.namespace = scrub(namespace or self.connection.namespace or "")
        if not self.namespace or len(self.namespace) > 200:
            raise ConfigError("A namespace must be a non-empty string of at most 200 characters.")
        self.database = self.connection.database
        self.config = config or HippoConfig()
        self.encoder = encoder or shared_encoder()
        self._extractor = extractor
        self._fact_filter = fact_filter
        self._owns_driver = driver is None
        self.driver = driver or connect(self.connection)
        self.store = GraphStore(self.driver, self.database, self.namespace)
        self._use_encoder(self.encoder)
        self._bound = False
        self.ensure_schema()

    # -- lifecycle

    def close(self) -> None:
        if self._owns_driver:
            projection.wait_for_refreshes(self.driver)  # a projection under way is kept, not thrown away
            self.driver.close()

    def __enter__(self) -> "HippoRAG":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def extractor(self) -> Any:
        if self._extractor is None:
            from .extract import make_extractor

            self._extractor = make_extractor("auto")
        return self._extractor

    @property
    def fact_filter(self) -> Any:
        """hipporag2's recognition filter: the LLM one when an LLM is configured ("auto"), else None."""
        if self._fact_filter == "auto":
            from .llm.settings import llm_configured

            if llm_configured():
                from .reader import RecognitionFilter

                self._fact_filter = RecognitionFilter()
            else:
                self._fact_filter = None
        return self._fact_filter

    def ensure_schema(self) -> None:
        """Constraints and indexes (idempotent), then wait until every index is online."""
        self.store.ensure_schema(self.encoder.dimension, self.encoder.name)

    def check_encoder(self) -> None:
        """The namespace's vectors come from this client's encoder, else a ConfigError naming both and the fix
        (once per client; a namespace indexed for the first time is bound to the encoder then)."""
        if not self._bound:
            binding.check(self.store, self.encoder)
            self._bound = True

    def encoder_binding(self) -> dict[str, Any] | None:
        """The encoder the namespace is bound to (name, dimension, fingerprint), or None if unbound."""
        return binding.recorded(self.store)

    # -- indexing

    def index(self, passages: Iterable[PassageIn | dict[str, Any] | str], *, progress: bool = False) -> IndexReport:
        """Index passages (idempotent: the same id with the same content again is a no-op)."""
        items = [as_passage(p) for p in passages]
        self.check_encoder()
        if not self.facts_complete():  # indexed before Fact nodes existed: derive them first, once
            log.warning("namespace %r has no Fact nodes yet (indexed by an older version): deriving them", self.namespace)
            self.rebuild_facts()
        # the extractor is resolved only when some passage lacks an extraction
        try:
            return self.indexer.index(items, self.config, lambda need: self.extractor.extract(need), progress=progress)
        finally:
            self._written()

    def import_openie(self, path: str | Path, *, progress: bool = False) -> IndexReport:
        """Index a corpus with the extraction from a HippoRAG OpenIE file (``{"docs": [...]}``)."""
        return self.index(load_openie(path), progress=progress)

    def rebuild_facts(self) -> dict[str, int]:
        """Derive the namespace's Fact nodes from RELATION provenance (idempotent)."""
        return self.facts.rebuild(self.config)

    def facts_complete(self) -> bool:
        """False for a namespace indexed before Fact nodes existed (until :meth:`rebuild_facts`)."""
        return self.facts.complete()

    def reembed(self, encoder: Encoder, *, progress: bool = False) -> dict[str, Any]:
        """Embed the namespace's passages, phrases and facts again with ``encoder``, link its synonyms again
        from the new vectors, and bind the namespace to it; this client uses ``encoder`` from then on."""
        linker = SynonymLinker(self.store, getattr(encoder, "synonym_threshold", 0.8))
        report = namespaces.reembed(self.store, encoder, linker, self.config, progress=progress)
        self._use_encoder(encoder)
        return report

    def _use_encoder(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.facts = FactStore(self.store, encoder)
        self.indexer = Indexer(self.store, encoder, self.facts)
        self.retrieval = RetrievalContext(
            self.store, encoder, lambda text: self.extractor.query_entities(text), lambda: self.fact_filter,
            filler=DenseRetriever,
        )
        self._bound = True

    # -- deleting

    def delete(self, passage_ids: Sequence[str]) -> DeleteReport:
        """Remove passages and exactly their contribution to the graph."""
        try:
            return namespaces.delete_passages(self.store, passage_ids, self.config.batch_size)
        finally:
            self._written()

    def _written(self) -> None:
        """After a write: the projections this client walks are rebuilt in the background, so the next graph
        query need not wait (see :meth:`query`'s ``fresh``)."""
        projection.refresh_soon(self.driver, self.database, self.namespace)

    def drop_namespace(self) -> dict[str, int]:
        """Delete every node of this namespace, its projections and its indexes (made again if this client
        indexes or queries the namespace afterwards)."""
        return namespaces.drop_namespace(self.store)

    # -- reading

    def stats(self) -> dict[str, int]:
        return namespaces.stats(self.store)

    def retriever(self, mode: str) -> Retriever:
        """The retriever that runs ``mode`` (a name of :data:`~hippo_neo4j.retrieve.MODES`)."""
        return self.retrieval.retriever(MODES[mode].retriever)

    def query(
        self,
        text: str,
        *,
        mode: str | None = None,
        top_k: int = 10,
        entities: Sequence[str] | None = None,
        filter: bool = True,
        fresh: bool = False,
    ) -> RetrievalResult:
        """Retrieve the top-k passages for ``text`` with ``mode`` (a name of :data:`~hippo_neo4j.retrieve.MODES`;
        by default :func:`~hippo_neo4j.retrieve.default_mode`: ``entity-ppr``).

        ``entities`` overrides query NER (hipporag1, hybrid, and hipporag2 with entity linking);
        ``filter=False`` skips hipporag2's LLM recognition filter (it is skipped anyway with no LLM).

        Graph modes walk the newest complete GDS projection of the namespace: after a write, that is the one
        before it until the background refresh has built the next (``result.graph_version``,
        ``result.writes_behind`` say which, and how many writes it has not seen); dense and bm25 always read
        the current graph. ``fresh=True`` walks the current graph, waiting for its projection if needed: ask
        for it when the query must reflect a write just made.
        """
        mode = mode or default_mode()
        preset = MODES[mode]
        self.check_encoder()
        query = Query(text=text if isinstance(text, str) else "", top_k=top_k,
                      entities=list(entities) if entities is not None else None, use_filter=filter, fresh=fresh)
        return self.retriever(mode).search(query, preset.config(self.config))

    def link_entities(self, entities: Sequence[str]) -> list[LinkedEntity]:
        """Each entity's most similar phrase (top-1 cosine), weighted 1/|P_i| and normalised to sum 1."""
        self.check_encoder()
        return link_entities(self.store, self.encoder, entities)

    def link_facts(self, vector: np.ndarray, top_k: int | None = None) -> list[FactHit]:
        """The query's nearest facts of this namespace (cosine), through its fact vector index."""
        self.check_encoder()
        return link_facts(self.store, vector, top_k or self.config.fact_top_k)[0]

