"""What the HTTP API and the MCP server share: one :class:`~hippo_neo4j.memory.HippoRAG` per namespace, kept
open between requests over one driver, one encoder and one extractor, and the thread safety around them.

Queries run concurrently: the driver is thread-safe, onnxruntime sessions and tokenizers may be called from
several threads, retrievers keep no per-query state, and projections are built once per graph version under
their server's lock (graph/server.py). What is not shared freely:

- the offline extractor (a spaCy pipeline, whose tokenizer cache is mutated by every call) runs one call at a
  time (:class:`LockedExtractor`);
- writes to one namespace (index, delete, index_documents, delete_documents) run one at a time, so that two
  batches naming the same phrases do not race each other's synonym linking; queries do not wait for them (each
  write is one transaction).
"""

from __future__ import annotations

import gc
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Sequence

from ..config import ConnectionSettings
from ..errors import UnknownNamespace
from ..extract import LockedExtractor, thread_safe
from ..graph.server import close_servers
from ..memory import offload
from ..limits import check_namespace, check_query
from ..metadata import Filters
from ..text import scrub

if TYPE_CHECKING:
    from ..documents import Document
    from ..memory import HippoRAG
    from ..models import DeleteReport, IndexReport, PassageIn, RetrievalResult

log = logging.getLogger(__name__)


class Memories:
    """The namespaces a server answers for, each a warm :class:`HippoRAG` on the same driver and encoder."""

    def __init__(
        self,
        connection: ConnectionSettings | None = None,
        *,
        namespace: str | None = None,
        extractor: Any = "auto",
        encoder: Any = None,
    ) -> None:
        from ..db import connect
        from ..encode import shared_encoder

        self.connection = connection or ConnectionSettings.from_env()
        self.default_namespace = check_namespace(scrub(namespace or self.connection.namespace or "default"))
        self.driver = connect(self.connection)
        self.encoder = encoder or shared_encoder()
        self._extractor_spec = extractor
        self._extractor: Any = None
        self._memories: dict[str, HippoRAG] = {}
        self._writers: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    # -- lifecycle

    def warm(self) -> None:
        """Load the encoder and the extractor, and open the default namespace, before the first request."""
        self.encoder.encode(["warm up"])  # loads the model (and its first-call allocations)
        inner = self.extractor
        while hasattr(inner, "inner"):  # LockedExtractor, CachedExtractor
            inner = inner.inner
        if hasattr(inner, "nlp"):
            inner.nlp  # noqa: B018 - loads the spaCy pipeline
        self.memory(self.default_namespace, must_exist=False)
        gc.freeze()  # what was loaded stays out of the collector's full passes, which would stall every request

    def close(self) -> None:
        with self._guard:
            self._memories.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        close_servers(self.driver)  # as HippoRAG.close: a projection under way is kept
        self.driver.close()

    def __enter__(self) -> "Memories":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- parts

    @property
    def extractor(self) -> Any:
        with self._guard:
            if self._extractor is None:
                spec = self._extractor_spec
                if isinstance(spec, str):
                    from ..extract import make_extractor

                    spec = make_extractor(spec)
                self._extractor = thread_safe(spec)
            return self._extractor

    def namespace(self, name: str | None) -> str:
        """The namespace a request names (checked as every surface checks it), or the server's when it names
        none."""
        return check_namespace(scrub(name)) if name is not None else self.default_namespace

    def memory(self, namespace: str | None = None, *, must_exist: bool = True) -> "HippoRAG":
        """The namespace's open memory; with ``must_exist``, an :class:`UnknownNamespace` for one holding no
        passages (checked when it is first opened; a namespace emptied later answers with a warning)."""
        from ..memory import HippoRAG

        ns = self.namespace(namespace)
        found = self._memories.get(ns)
        if found is not None:
            return found
        extractor = self.extractor
        with self._guard:
            found = self._memories.get(ns)
            if found is None:
                candidate = HippoRAG(self.connection, namespace=ns, driver=self.driver, encoder=self.encoder,
                                     extractor=extractor)
                if must_exist and not candidate.store.has_passages():
                    raise UnknownNamespace(ns)
                found = self._memories[ns] = candidate
            return found

    def writer(self, namespace: str | None) -> threading.Lock:
        """The namespace's write lock (its writes run one at a time)."""
        ns = self.namespace(namespace)
        with self._guard:
            return self._writers.setdefault(ns, threading.Lock())

    @property
    def executor(self) -> ThreadPoolExecutor:
        """The bounded pool the coroutines below run on (:func:`~hippo_neo4j.memory.default_workers`)."""
        from ..memory import default_workers

        with self._guard:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(default_workers(), thread_name_prefix="hippo-serve")
            return self._executor

    # -- the operations every front end offers (each also as a coroutine, for hippo serve and hippo mcp)

    def index(self, passages: Sequence["PassageIn"], namespace: str | None = None) -> "IndexReport":
        memory = self.memory(namespace, must_exist=False)
        with self.writer(memory.namespace):
            return memory.index(passages)

    def delete(self, ids: Sequence[str], namespace: str | None = None) -> "DeleteReport":
        memory = self.memory(namespace)
        with self.writer(memory.namespace):
            return memory.delete(ids)

    def index_documents(
        self, documents: Sequence["Document"], namespace: str | None = None, *, passage_tokens: int | None = None,
        prune: bool = False, present: Sequence[str] = (),
    ) -> "IndexReport":
        """:meth:`HippoRAG.index_documents <hippo_neo4j.memory.HippoRAG.index_documents>` (documents read by
        :func:`~hippo_neo4j.documents.readers.read_bytes`); ``present``: the ids of documents sent but unreadable,
        which ``prune`` keeps."""
        memory = self.memory(namespace, must_exist=False)
        with self.writer(memory.namespace):
            return memory.index_documents(documents, passage_tokens=passage_tokens, prune=prune, present=present)

    def delete_documents(self, document_ids: Sequence[str], namespace: str | None = None) -> "DeleteReport":
        memory = self.memory(namespace)
        with self.writer(memory.namespace):
            return memory.delete_documents([scrub(d) for d in document_ids])

    def query(
        self, text: str, *, namespace: str | None = None, mode: str | None = None, top_k: int = 10,
        entities: Sequence[str] | None = None, recognition_filter: bool = True, fresh: bool = False,
        filters: dict[str, Any] | None = None,
    ) -> tuple["RetrievalResult", str]:
        """The result and its drawing statement (:func:`~hippo_neo4j.drawing.drawing_cypher`)."""
        from ..drawing import drawing_cypher
        from ..retrieve import MODES

        if mode is not None:
            MODES[mode]  # an unknown mode fails before the namespace is opened
        check_query(text, top_k, entities)  # and so do the limits
        parsed = Filters.parse(filters)  # and a filter that is not one
        memory = self.memory(namespace)
        result = memory.query(text, mode=mode, top_k=top_k, entities=entities, recognition_filter=recognition_filter,
                              fresh=fresh, filters=parsed)
        return result, drawing_cypher(result, memory.namespace)

    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        memory = self.memory(namespace)
        return {"namespace": memory.namespace, **memory.stats(), "encoder": memory.encoder.name}

    # the same as coroutines, each run on the server's bounded pool (as AsyncHippoRAG runs a client's calls):
    # hippo serve and hippo mcp await them, so their event loop never waits for Neo4j, the encoder or spaCy

    async def aindex(self, passages: Sequence["PassageIn"], namespace: str | None = None) -> "IndexReport":
        return await offload(self.executor, self.index, passages, namespace)

    async def adelete(self, ids: Sequence[str], namespace: str | None = None) -> "DeleteReport":
        return await offload(self.executor, self.delete, ids, namespace)

    async def aindex_documents(
        self, documents: Sequence["Document"], namespace: str | None = None, *, passage_tokens: int | None = None,
        prune: bool = False, present: Sequence[str] = (),
    ) -> "IndexReport":
        return await offload(self.executor, self.index_documents, documents, namespace, passage_tokens=passage_tokens,
                             prune=prune, present=present)

    async def adelete_documents(self, document_ids: Sequence[str], namespace: str | None = None) -> "DeleteReport":
        return await offload(self.executor, self.delete_documents, document_ids, namespace)

    async def aquery(self, text: str, **options: Any) -> tuple["RetrievalResult", str]:
        """:meth:`query`, with the same keyword arguments."""
        return await offload(self.executor, self.query, text, **options)

    async def astats(self, namespace: str | None = None) -> dict[str, Any]:
        return await offload(self.executor, self.stats, namespace)


__all__ = ["LockedExtractor", "Memories", "UnknownNamespace"]
