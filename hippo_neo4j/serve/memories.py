"""What the HTTP API and the MCP server share: one :class:`~hippo_neo4j.memory.HippoRAG` per namespace, kept
open between requests over one driver, one encoder and one extractor, and the thread safety around them.

Queries run concurrently: the driver is thread-safe, onnxruntime sessions and tokenizers may be called from
several threads, retrievers keep no per-query state, and projections are built once per graph version under
the projection module's lock. What is not shared freely:

- the offline extractor (a spaCy pipeline, whose tokenizer cache is mutated by every call) runs one call at a
  time (:class:`LockedExtractor`);
- writes to one namespace (index, delete) run one at a time, so that two batches naming the same phrases do
  not race each other's synonym linking; queries do not wait for them (each write is one transaction).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Sequence

from ..config import ConnectionSettings
from ..errors import HippoError
from ..graph import projection
from ..text import scrub

if TYPE_CHECKING:
    from ..memory import HippoRAG
    from ..models import DeleteReport, IndexReport, PassageIn, RetrievalResult

log = logging.getLogger(__name__)


class UnknownNamespace(HippoError):
    """A read of a namespace that holds no passages."""


class LockedExtractor:
    """An extractor whose calls run one at a time (spaCy pipelines are not safe to share across threads)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self._lock = threading.Lock()

    def extract(self, passages: Sequence[Any]) -> Any:
        with self._lock:
            return self.inner.extract(passages)

    def query_entities(self, text: str) -> list[str]:
        with self._lock:
            return self.inner.query_entities(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _needs_lock(extractor: Any) -> bool:
    from ..extract.offline import OfflineExtractor

    while hasattr(extractor, "inner"):  # CachedExtractor wraps the real one
        extractor = extractor.inner
    return isinstance(extractor, OfflineExtractor)


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
        self.default_namespace = scrub(namespace or self.connection.namespace or "default")
        self.driver = connect(self.connection)
        self.encoder = encoder or shared_encoder()
        self._extractor_spec = extractor
        self._extractor: Any = None
        self._memories: dict[str, HippoRAG] = {}
        self._writers: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

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

    def close(self) -> None:
        with self._guard:
            self._memories.clear()
        projection.wait_for_refreshes(self.driver)  # as HippoRAG.close: a projection under way is kept
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
                self._extractor = LockedExtractor(spec) if _needs_lock(spec) else spec
            return self._extractor

    def namespace(self, name: str | None) -> str:
        return scrub(name) if name else self.default_namespace

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
                    raise UnknownNamespace(f"namespace {ns!r} has no passages (index into it first)")
                found = self._memories[ns] = candidate
            return found

    def writer(self, namespace: str | None) -> threading.Lock:
        ns = self.namespace(namespace)
        with self._guard:
            return self._writers.setdefault(ns, threading.Lock())

    # -- the operations every front end offers

    def index(self, passages: Sequence["PassageIn"], namespace: str | None = None) -> "IndexReport":
        memory = self.memory(namespace, must_exist=False)
        with self.writer(memory.namespace):
            return memory.index(passages)

    def delete(self, ids: Sequence[str], namespace: str | None = None) -> "DeleteReport":
        memory = self.memory(namespace)
        with self.writer(memory.namespace):
            return memory.delete(ids)

    def query(
        self, text: str, *, namespace: str | None = None, mode: str | None = None, top_k: int = 10,
        entities: Sequence[str] | None = None, filter: bool = True, fresh: bool = False,
    ) -> tuple["RetrievalResult", str]:
        """The result and its drawing statement (:func:`~hippo_neo4j.drawing.drawing_cypher`)."""
        from ..drawing import drawing_cypher
        from ..retrieve import MODES

        if mode is not None:
            MODES[mode]  # an unknown mode fails before the namespace is opened
        memory = self.memory(namespace)
        result = memory.query(text, mode=mode, top_k=top_k, entities=entities, filter=filter, fresh=fresh)
        return result, drawing_cypher(result, memory.namespace)

    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        memory = self.memory(namespace)
        return {"namespace": memory.namespace, **memory.stats(), "encoder": memory.encoder.name}


__all__ = ["LockedExtractor", "Memories", "UnknownNamespace"]
