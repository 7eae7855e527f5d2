"""HippoRAG on Neo4j: the facade that wires the rooms together.

    from hippo_neo4j import HippoRAG
    with HippoRAG(namespace="docs") as hippo:
        hippo.index([{"title": "...", "text": "..."}])
        result = hippo.query("Which Stanford professor works on Alzheimer's?")

Indexing runs ``graph.indexing`` (extraction → phrase normalisation → graph writer → synonym linker), queries
go to the retriever of the named mode (``retrieve``), deletion and namespaces to ``graph.namespace``. The graph:
``(:Passage {ns, id, title, text, hash, embedding, meta_<key>...})``, ``(:Phrase {ns, text, embedding})``,
``(:Phrase)-[:RELATION {weight, sources, predicates}]->(:Phrase)``, ``(:Phrase)-[:SYNONYM {score}]->(:Phrase)``,
``(:Phrase)-[:MENTIONED_IN {count}]->(:Passage)`` and ``(:Fact {ns, id, subject, predicate, object, text,
embedding, sources})``. Every statement lives in ``cypher/`` and is parameterised.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Mapping, Sequence

import numpy as np
from neo4j import Driver

from .config import ConnectionSettings, HippoConfig
from .corpus import load_openie
from .db import connect
from .encode import EncoderLike, shared_encoder
from .extract import query_terms
from .extract.base import Extractor
from .errors import ConfigError
from .limits import check_namespace, check_query
from .graph import binding
from .graph import namespace as namespaces
from .graph.documents import DocumentStore
from .graph.facts import FactStore
from .graph.server import Server
from .graph.indexing import Indexer
from .graph.store import GraphStore
from .graph.synonyms import SynonymLinker
from .metadata import Filters
from .models import DeleteReport, FactHit, IndexReport, LinkedEntity, PassageIn, RetrievalResult, read_passage
from .progress import progress_bar
from .retrieve import MODES, DenseRetriever, Query, RetrievalContext, Retriever, default_mode, deprecated_filter
from .retrieve.linking import RecognitionFilterLike, link_entities, link_facts
from .text import scrub

if TYPE_CHECKING:
    from .documents import Document

log = logging.getLogger(__name__)

# Tokens a document's passage may take when the encoder cannot count its own (a word is about 1.3 tokens)
WORDS_AS_TOKENS = 1.3
FALLBACK_PASSAGE_TOKENS = 256


def passage_budget(encoder: object) -> tuple[Callable[[str], int], int]:
    """How a document's passages are measured: the encoder's token count and the most tokens a passage (its
    title and text, as embedded) may take before the encoder truncates it; a word count where the encoder cannot
    say."""
    counter = getattr(encoder, "token_counter", None)
    found = counter() if callable(counter) else None
    if found is not None:
        return found
    return (lambda text: int(len(text.split()) * WORDS_AS_TOKENS) + 1), FALLBACK_PASSAGE_TOKENS


class HippoRAG:
    """A HippoRAG memory living in one namespace of a Neo4j database."""

    def __init__(
        self,
        connection: ConnectionSettings | None = None,
        *,
        namespace: str | None = None,
        encoder: EncoderLike | None = None,
        extractor: Extractor | None = None,
        config: HippoConfig | None = None,
        driver: Driver | None = None,
        fact_filter: RecognitionFilterLike | Literal["auto"] | None = "auto",
    ) -> None:
        self.connection = connection or ConnectionSettings.from_env()
        self.namespace = check_namespace(scrub(namespace if namespace is not None else self.connection.namespace or ""))
        self.database = self.connection.database
        self.config = config or HippoConfig()
        self.encoder: EncoderLike = encoder or shared_encoder()
        self._extractor: Extractor | None = extractor
        self._fact_filter: RecognitionFilterLike | Literal["auto"] | None = fact_filter
        self._owns_driver = driver is None
        self.driver = driver or connect(self.connection)
        # the driver's and database's runtime, shared with every client of them: capabilities, statement forms,
        # projections (probed here, so that a server that cannot serve says so at once)
        self.server = Server.of(self.driver, self.database)
        self.server.capabilities  # noqa: B018
        self.store = GraphStore(self.server, self.namespace)
        self._use_encoder(self.encoder)
        self._bound = False
        self.ensure_schema()

    # -- lifecycle

    def close(self) -> None:
        if self._owns_driver:
            self.server.close()  # a projection under way is kept, not thrown away; what was known goes
            self.driver.close()

    def __enter__(self) -> "HippoRAG":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def extractor(self) -> Extractor:
        if self._extractor is None:
            from .extract import make_extractor

            self._extractor = make_extractor("auto")
        return self._extractor

    @property
    def fact_filter(self) -> RecognitionFilterLike | None:
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
        """Index passages (idempotent: the same id with the same content again is a no-op).

        Each item is a :class:`PassageIn`, a map of its fields, or a string (its text). A bad item raises nothing:
        the rest is indexed, and it is named in ``report.skipped`` with the reason (by its id, or ``#<position>``
        in ``passages``, from 0): not a passage object, an invalid field or metadata, empty text, text or id too
        long, an id the batch has already. ``report.not_indexed`` counts them and the extraction failures."""
        items = [read_passage(p, position) for position, p in enumerate(passages)]
        self.check_encoder()
        if not self.facts_complete():  # indexed before Fact nodes existed: derive them first, once
            log.warning("namespace %r has no Fact nodes yet (indexed by an older version): deriving them", self.namespace)
            self.rebuild_facts()
        # the extractor is resolved only when some passage lacks an extraction
        try:
            report = self.indexer.index(items, self.config, lambda need: self.extractor.extract(need), progress=progress)
        except BaseException:
            self._written()
            raise
        self._written(indexed=True, progress=progress)
        return report

    def import_openie(self, path: str | Path, *, progress: bool = False) -> IndexReport:
        """Index a corpus with the extraction from a HippoRAG OpenIE file (``{"docs": [...]}``)."""
        return self.index(load_openie(path), progress=progress)

    def rebuild_facts(self) -> dict[str, int]:
        """Derive the namespace's Fact nodes from RELATION provenance (idempotent)."""
        return self.facts.rebuild(self.config)

    def facts_complete(self) -> bool:
        """False for a namespace indexed before Fact nodes existed (until :meth:`rebuild_facts`)."""
        return self.facts.complete()

    def reembed(self, encoder: EncoderLike, *, progress: bool = False) -> dict[str, Any]:
        """Embed the namespace's passages, phrases and facts again with ``encoder``, link its synonyms again
        from the new vectors, and bind the namespace to it; this client uses ``encoder`` from then on."""
        linker = SynonymLinker(self.store, getattr(encoder, "synonym_threshold", 0.8))
        report = namespaces.reembed(self.store, encoder, linker, self.config, progress=progress)
        self._use_encoder(encoder)
        return report

    def _use_encoder(self, encoder: EncoderLike) -> None:
        self.encoder = encoder
        self.facts = FactStore(self.store, encoder)
        self.indexer = Indexer(self.store, encoder, self.facts)
        self.retrieval = RetrievalContext(
            self.store, encoder, lambda text: query_terms(self.extractor, text), lambda: self.fact_filter,
            filler=DenseRetriever,
        )
        self._bound = True

    # -- documents

    def index_documents(self, documents: Iterable["Document"], *, passage_tokens: int | None = None,
                        prune: bool = False, present: Iterable[str] = (), progress: bool = False) -> IndexReport:
        """Index documents (:func:`hippo_neo4j.documents.read_folder`), each as the passages
        :func:`~hippo_neo4j.documents.document_passages` cuts it into: along its structure (headings, then
        paragraphs, then sentences; PDF pages) within ``passage_tokens`` of the encoder's tokens (default: as many as
        the encoder reads), each titled by its heading and carrying the document's metadata for filters, and linked
        to a ``Document`` node in reading order (with its heading path on the link).

        Indexing a document again is exact: one whose bytes and budget are unchanged is left as it is; a changed
        one keeps the passages whose text is unchanged (their ids, phrases and edges) and replaces the others,
        as a fresh index of the new version would hold them. ``prune``: the namespace's documents that are neither
        among ``documents`` nor in ``present`` (the ids of files that are there but could not be read this time)
        are removed, with exactly their contribution."""
        from .documents import CUT_VERSION, document_passages

        docs = list(documents)
        count, window = passage_budget(self.encoder)
        budget = min(passage_tokens, window) if passage_tokens else window
        store = DocumentStore(self.store)
        report = IndexReport(documents=len(docs))
        items: list[PassageIn] = []
        plans: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        stale: list[str] = []
        removed: list[str] = []
        with progress_bar(progress, len(docs), "cutting documents") as advance:
            states = store.states([doc.id for doc in docs])
            for doc in docs:
                state = states[doc.id]
                advance(1)
                if state.unchanged(doc.content_hash, budget, CUT_VERSION):
                    report.documents_unchanged += 1
                    continue
                cut = document_passages(doc, count, budget)
                items += [passage for passage, _ in cut]
                stale += state.stale(doc.id, [passage.passage_id for passage, _ in cut])
                properties = {"id": doc.id, "title": doc.title, "format": doc.format, "hash": doc.content_hash,
                              "size": doc.size, "modified": doc.modified, "path": doc.id, "passageTokens": budget,
                              "cut": CUT_VERSION}
                plans.append((properties, [{"id": passage.passage_id, "heading": heading} for passage, heading in cut]))
        if prune:
            keep = {d.id for d in docs} | set(present)
            removed = [listed["id"] for listed in store.listed() if listed["id"] not in keep]
            for document_id, state in store.states(removed).items():
                stale += state.stale(document_id, [])
        if stale:  # first, as an update does: the new passages are linked as a fresh index would link them
            report.passages_removed = self.delete(sorted(set(stale))).deleted
        if items:
            report.merge(self.index(items, progress=progress))
        report.documents_removed = sum(store.delete(document_id) for document_id in removed)
        held = store.write(plans)
        # a passage that failed (its extraction) is missing: the document is cut again next run
        store.write([(properties | {"hash": None}, passages) for properties, passages in plans
                     if held.get(properties["id"], 0) < len(passages)])
        return report

    def documents(self) -> list[dict[str, Any]]:
        """The namespace's documents: id, title, format, content hash and how many passages each holds."""
        return DocumentStore(self.store).listed()

    def delete_document(self, document_id: str) -> DeleteReport:
        """Remove one document (its id: the path relative to the folder it was indexed from) and exactly its
        contribution: :meth:`delete_documents` of that one."""
        return self.delete_documents([document_id])

    def delete_documents(self, document_ids: Sequence[str]) -> DeleteReport:
        """Remove documents and exactly their contribution: their passages, as :meth:`delete` removes them (the
        report counts passages), and their nodes. ``missing`` names the documents the namespace does not hold."""
        store = DocumentStore(self.store)
        ids = list(dict.fromkeys(document_ids))
        passages = [p for document_id, state in store.states(ids).items() for p in state.stale(document_id, [])]
        report = self.delete(passages) if passages else DeleteReport(requested=0, deleted=0)
        report.missing += [document_id for document_id in ids if not store.delete(document_id)]
        return report

    # -- deleting

    def delete(self, passage_ids: Sequence[str]) -> DeleteReport:
        """Remove passages and exactly their contribution to the graph."""
        try:
            return namespaces.delete_passages(self.store, passage_ids, self.config.batch_size)
        finally:
            self._written()

    def _written(self, *, indexed: bool = False, progress: bool = False) -> None:
        """After a write: the projections this client walks are rebuilt in the background, so the next graph
        query need not wait (see :meth:`query`'s ``fresh``). After indexing (``indexed``), the graph the default
        mode walks too (``HippoConfig.prepare_graph``): projected now when the namespace has no projection of it
        yet, so that the first query after indexing does not wait for one, else rebuilt in the background."""
        projections = self.server.projections
        projections.refresh_soon(self.namespace)
        if not (indexed and self.config.prepare_graph):
            return
        preset = MODES[default_mode()]
        for kind in preset.retriever.projections(preset.config(self.config)):
            with progress_bar(progress, 1, f"projecting the {kind} graph of {self.namespace!r}") as advance:
                try:
                    projections.ensure(self.namespace, kind, fresh=False)
                except Exception as exc:  # noqa: BLE001 - what was indexed stays; the first query projects it
                    log.warning("the %s graph of %r was not projected after indexing (the first query that walks it "
                                "will project it): %s", kind, self.namespace, exc)
                advance(1)

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
        recognition_filter: bool = True,
        fresh: bool = False,
        filters: Filters | Mapping[str, Any] | None = None,
        filter: bool | None = None,
    ) -> RetrievalResult:
        """Retrieve the top-k passages for ``text`` with ``mode`` (a name of :data:`~hippo_neo4j.retrieve.MODES`;
        by default :func:`~hippo_neo4j.retrieve.default_mode`: ``entity-ppr``).

        ``entities`` overrides query NER (hipporag1, hybrid, and hipporag2 with entity linking);
        ``recognition_filter=False`` skips hipporag2's LLM recognition filter (it is skipped anyway with no LLM;
        ``filter`` is its deprecated name). The limits of :mod:`hippo_neo4j.limits` hold (a ConfigError names the
        one exceeded); an empty query finds no passages and says so in ``result.warning``.

        Graph modes walk the newest complete GDS projection of the namespace: after a write, that is the one
        before it until the background refresh has built the next (``result.graph_version``,
        ``result.writes_behind`` say which, and how many writes it has not seen); dense and bm25 always read
        the current graph. ``fresh=True`` walks the current graph, waiting for its projection if needed: ask
        for it when the query must reflect a write just made.

        ``filters`` keeps the passages whose metadata passes them (``{"user": "u1", "created_at": {">=":
        "2026-01-01"}, "tag": {"in": ["a", "b"]}}``; :mod:`hippo_neo4j.metadata`): dense and bm25 search only
        those, graph modes walk the whole namespace but seed and return only those, and
        ``result.filtered_passages`` says how many passed.
        """
        mode = mode or default_mode()
        preset = MODES[mode]
        check_query(text, top_k, entities)
        recognition_filter = deprecated_filter(filter, recognition_filter)
        self.check_encoder()
        query = Query(text=text, top_k=top_k, entities=list(entities) if entities is not None else None,
                      use_filter=recognition_filter, fresh=fresh, filters=Filters.parse(filters))
        return self.retriever(mode).search(query, preset.config(self.config))

    def link_entities(self, entities: Sequence[str]) -> list[LinkedEntity]:
        """Each entity's most similar phrase (top-1 cosine), weighted 1/|P_i| and normalised to sum 1."""
        self.check_encoder()
        return link_entities(self.store, self.encoder, entities)

    def link_facts(self, vector: np.ndarray, top_k: int | None = None) -> list[FactHit]:
        """The query's nearest facts of this namespace (cosine), through its fact vector index."""
        self.check_encoder()
        return link_facts(self.store, vector, top_k or self.config.fact_top_k)[0]


def default_workers() -> int:
    """The threads an :class:`AsyncHippoRAG` (and ``hippo serve``) runs calls on: 2 per core. A query spends
    much of its time waiting for the server's walk, so two keep a core busy; more only queue for the GIL, and the
    event loop's thread with them: the loop's heartbeat waits longer, for the same wall time (docs/serving.md).
    A burst queues here instead."""
    return 2 * (os.cpu_count() or 1)


async def offload(executor: ThreadPoolExecutor, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` run on ``executor`` and awaited: the event loop goes on meanwhile."""
    return await asyncio.get_running_loop().run_in_executor(executor, functools.partial(fn, *args, **kwargs))


def _share_between_threads(memory: HippoRAG) -> HippoRAG:
    """``memory`` with an extractor that several threads may call (:func:`~hippo_neo4j.extract.thread_safe`)."""
    from .extract import thread_safe

    memory._extractor = thread_safe(memory.extractor)
    return memory


class AsyncHippoRAG:
    """:class:`HippoRAG` for asyncio applications (FastAPI, MCP servers, agent frameworks): the same methods as
    coroutines, with the same arguments, results and errors.

        async with AsyncHippoRAG(namespace="docs") as hippo:
            await hippo.index([{"title": "...", "text": "..."}])
            results = await asyncio.gather(*(hippo.query(q) for q in questions))

    There is one implementation: each coroutine runs the synchronous client's method on a bounded thread pool
    (``workers``, :func:`default_workers`), so the event loop never waits for Neo4j, the encoder or spaCy, and
    a coroutine's result is the one the synchronous call returns. Calls may overlap: queries run concurrently
    (the driver and the encoder are thread-safe; the spaCy extractor runs one call at a time), writes to the
    namespace (index, delete, reembed, ...) one at a time. The client connects when first awaited (or entered);
    ``memory=`` wraps an open :class:`HippoRAG` instead, ``executor=`` and ``write_lock=`` share a pool and a
    namespace's write lock between clients (``hippo serve`` does)."""

    def __init__(
        self,
        connection: ConnectionSettings | None = None,
        *,
        workers: int | None = None,
        memory: HippoRAG | None = None,
        executor: ThreadPoolExecutor | None = None,
        write_lock: threading.Lock | None = None,
        **options: Any,
    ) -> None:
        if memory is not None and (connection is not None or options):
            raise ConfigError("AsyncHippoRAG takes an open HippoRAG (memory=) or the arguments to open one, not both.")
        self._connection, self._options, self._memory = connection, options, memory
        self._owns_memory = memory is None
        if memory is not None:
            _share_between_threads(memory)
        self._owns_executor = executor is None
        self._executor = executor or ThreadPoolExecutor(workers or default_workers(), thread_name_prefix="hippo")
        self._write = write_lock or threading.Lock()
        self._opening = threading.Lock()

    def _open(self) -> HippoRAG:
        with self._opening:
            if self._memory is None:
                self._memory = _share_between_threads(HippoRAG(self._connection, **self._options))
            return self._memory

    async def _call(self, method: str, *args: Any, write: bool = False, **kwargs: Any) -> Any:
        def run() -> Any:
            memory = self.memory
            if not write:
                return getattr(memory, method)(*args, **kwargs)
            with self._write:
                return getattr(memory, method)(*args, **kwargs)

        return await offload(self._executor, run)

    @property
    def memory(self) -> HippoRAG:
        """The synchronous client (opened on first use)."""
        return self._memory or self._open()

    async def open(self) -> "AsyncHippoRAG":
        await offload(self._executor, self._open)
        return self

    async def warm(self) -> None:
        """Load what a first query loads (the encoder's model, the query NER pipeline, the namespace's passage
        vectors and projection), then take everything loaded out of the garbage collector's full passes
        (``gc.freeze()``, for the process): a full pass over the few hundred thousand objects of spaCy and the
        model otherwise stalls every thread, the event loop's too, now and then."""
        await self._call("query", "warm up")
        gc.freeze()

    async def close(self) -> None:
        memory, self._memory = self._memory, None
        if memory is not None and self._owns_memory:
            await offload(self._executor, memory.close)
        if self._owns_executor:
            self._executor.shutdown(wait=False)

    async def __aenter__(self) -> "AsyncHippoRAG":
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def index(self, passages: Iterable[PassageIn | dict[str, Any] | str], *, progress: bool = False) -> IndexReport:
        return await self._call("index", list(passages), progress=progress, write=True)

    async def import_openie(self, path: str | Path, *, progress: bool = False) -> IndexReport:
        return await self._call("import_openie", path, progress=progress, write=True)

    async def rebuild_facts(self) -> dict[str, int]:
        return await self._call("rebuild_facts", write=True)

    async def facts_complete(self) -> bool:
        return await self._call("facts_complete")

    async def reembed(self, encoder: EncoderLike, *, progress: bool = False) -> dict[str, Any]:
        return await self._call("reembed", encoder, progress=progress, write=True)

    async def delete(self, passage_ids: Sequence[str]) -> DeleteReport:
        return await self._call("delete", list(passage_ids), write=True)

    async def index_documents(self, documents: Iterable["Document"], *, passage_tokens: int | None = None,
                              prune: bool = False, present: Iterable[str] = (), progress: bool = False) -> IndexReport:
        return await self._call("index_documents", list(documents), passage_tokens=passage_tokens, prune=prune,
                                present=list(present), progress=progress, write=True)

    async def delete_document(self, document_id: str) -> DeleteReport:
        return await self._call("delete_document", document_id, write=True)

    async def delete_documents(self, document_ids: Sequence[str]) -> DeleteReport:
        return await self._call("delete_documents", list(document_ids), write=True)

    async def documents(self) -> list[dict[str, Any]]:
        return await self._call("documents")

    async def drop_namespace(self) -> dict[str, int]:
        return await self._call("drop_namespace", write=True)

    async def stats(self) -> dict[str, int]:
        return await self._call("stats")

    async def query(
        self, text: str, *, mode: str | None = None, top_k: int = 10, entities: Sequence[str] | None = None,
        recognition_filter: bool = True, fresh: bool = False, filters: Filters | Mapping[str, Any] | None = None,
        filter: bool | None = None,
    ) -> RetrievalResult:
        """:meth:`HippoRAG.query` (see there)."""
        recognition_filter = deprecated_filter(filter, recognition_filter)
        return await self._call("query", text, mode=mode, top_k=top_k, entities=entities,
                                recognition_filter=recognition_filter, fresh=fresh, filters=filters)

    async def link_entities(self, entities: Sequence[str]) -> list[LinkedEntity]:
        return await self._call("link_entities", list(entities))

    async def encoder_binding(self) -> dict[str, Any] | None:
        return await self._call("encoder_binding")
