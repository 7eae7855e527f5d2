"""The retriever interface: one method to implement (:meth:`Retriever.get_search_results`) and one typed result
(:class:`~hippo_neo4j.models.RetrievalResult`); :meth:`Retriever.search` wraps it with input checks, the
empty-namespace warning and timing. Modes are named presets of one config (:class:`Preset`), registered in
``retrieve/__init__.py``."""

from __future__ import annotations

import time
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field

from ..config import HippoConfig
from ..errors import ConfigError
from ..graph.passage_vectors import PassageCosines, PassageVectors
from ..graph.projection import Projection
from ..graph.scope import Scope
from ..graph.store import GraphStore, one_query
from ..metadata import Filters, read
from ..models import Contributor, QueryTerms, RetrievalResult, RetrievedPassage, Seed
from ..text import scrub
from .linking import RecognitionFilterLike

if TYPE_CHECKING:
    from ..encode.base import EncoderLike


UNRESTRICTED: dict[str, Any] = {"only": None, "matching": None}  # the walks' $only and $matching without a filter


def deprecated_filter(filter: bool | None, recognition_filter: bool) -> bool:
    """``recognition_filter``, or the value of its deprecated name ``filter`` when that is given (with a
    DeprecationWarning): ``filter`` sat beside ``filters`` (metadata) and meant something else."""
    if filter is None:
        return recognition_filter
    warnings.warn("filter= is deprecated (it will be removed in the next release): use recognition_filter= for "
                  "hipporag2's LLM recognition filter; metadata conditions go in filters=.", DeprecationWarning,
                  stacklevel=3)
    return bool(filter)


class Query(BaseModel):
    """One retrieval request: the text, how many passages, optional query entities (instead of query NER),
    whether hipporag2 may use the LLM recognition filter, and the metadata filter (``hippo_neo4j/metadata.py``;
    :meth:`Retriever.search` finds the passages it leaves, ``scope``, once for the modes a query runs)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    text: str
    top_k: int = 10
    entities: list[str] | None = None
    use_filter: bool = True
    fresh: bool = False  # walk the current graph (waiting for its projection) instead of the newest projection
    filters: Filters | None = None
    scope: Scope | None = Field(None, exclude=True)

    def restriction(self) -> dict[str, Any]:
        """``$only`` and ``$matching`` of the walks' statements: the node ids of the passages the filter leaves
        and how many they are; None without a filter."""
        scope = self.scope
        return UNRESTRICTED if scope is None else {"only": scope.nodes, "matching": len(scope)}


R = TypeVar("R", bound="Retriever")


@dataclass
class RetrievalContext:
    """What retrievers share: the namespace's graph store, the encoder, the reading of a question for linking
    (:class:`~hippo_neo4j.models.QueryTerms`) and the recognition filter (the last two resolved lazily, so that
    modes which need neither never load them)."""

    store: GraphStore
    encoder: EncoderLike
    query_terms: Callable[[str], QueryTerms]
    fact_filter: Callable[[], RecognitionFilterLike | None] = lambda: None
    filler: type["Retriever"] | None = None  # tops up a result short of top_k (dense retrieval); None: no top-up
    _retrievers: dict[type, "Retriever"] = field(default_factory=dict)
    _passage_vectors: PassageVectors | None = None

    def passage_vectors(self) -> PassageVectors:
        """The namespace's passage vectors, read once and kept current (walks that seed every passage)."""
        if self._passage_vectors is None:
            self._passage_vectors = PassageVectors(self.store)
        return self._passage_vectors

    def retriever(self, kind: type[R]) -> R:
        """One retriever of each class per context (retrievers compose: hybrid runs hipporag1 and dense)."""
        found = self._retrievers.get(kind)
        if found is None:
            found = self._retrievers[kind] = kind(self)
        return cast(R, found)  # kept under its own class


TOP_SEEDS = 5  # passage seeds an explanation lists


class PassageSeeding:
    """One walk's passage seeds, computed for the projection it walks: pass it as ``prepare`` to
    :meth:`Retriever.walk`. ``weigh`` turns the passages' cosines to the query into their seeds."""

    def __init__(self, vectors: PassageVectors, vector: Any, weigh: Callable[[PassageCosines], Any],
                 scope: Scope | None = None) -> None:
        self.vectors, self.vector, self.weigh, self.scope = vectors, vector, weigh, scope
        self.cosines: PassageCosines | None = None
        self.weights: Any = None

    def __call__(self, graph: Projection) -> dict[str, Any]:
        self.cosines = self.vectors.cosines(self.vector, graph)
        if self.scope is not None:  # a filter: only its passages are seeded, weighed among themselves
            self.cosines = self.cosines.within(self.scope.nodes)
        self.weights = self.weigh(self.cosines)
        return {"passageSources": self.cosines.sources(self.weights)}

    def largest(self, scale: float = 1.0) -> list[Seed]:
        """The walk's largest passage seeds (explanations), each weight times ``scale``."""
        if self.cosines is None:
            return []
        top = self.cosines.top(self.weights, TOP_SEEDS)
        return [Seed(node=x["id"], weight=scale * x["weight"]) for x in top if x["weight"] > 0]


class Retriever(ABC):
    """A retrieval strategy over one namespace."""

    name: ClassVar[str]
    graph: ClassVar[bool] = False  # walks the graph (and may fall back to dense retrieval)
    links_entities: ClassVar[bool] = False  # links query entities to phrases
    reads_passages: ClassVar[bool] = False  # scores a filter's passages itself: Scope.of reads them when few pass

    def __init__(self, context: RetrievalContext) -> None:
        self.context = context
        self.store = context.store
        self.encoder = context.encoder

    @classmethod
    def needs_entities(cls, config: HippoConfig) -> bool:
        """Whether this retriever links query entities under ``config`` (so they are extracted beforehand)."""
        return cls.links_entities

    @classmethod
    def projections(cls, config: HippoConfig) -> tuple[str, ...]:
        """The kinds of projection (``graph/projection.py``) this retriever walks under ``config`` (its walks take
        them from here; indexing prepares the default mode's: ``HippoConfig.prepare_graph``)."""
        return ()

    @abstractmethod
    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        """The ranked passages for ``query``, with the explanation of how they were found."""

    def search(self, query: Query, config: HippoConfig) -> RetrievalResult:
        began = time.perf_counter()
        if query.top_k < 1:
            raise ConfigError("top_k must be at least 1.")
        text = scrub(query.text) if isinstance(query.text, str) else ""
        entities = [scrub(e) for e in query.entities if isinstance(e, str)] if query.entities is not None else None
        update: dict[str, Any] = {"text": text, "entities": entities}
        if query.filters is not None and query.scope is None:
            update["scope"] = Scope.of(self.store, query.filters, texts=self.reads_passages)
        query = query.model_copy(update=update)
        if not text.strip() and not entities:  # every mode alike: nothing to look for
            return RetrievalResult(query=text, mode=self.name, elapsed_ms=(time.perf_counter() - began) * 1000,
                                   warning="the query is empty: nothing to retrieve")
        with one_query():  # a graph version the linking statement read serves the walks (graph/store.py)
            result = self.get_search_results(query, config)
        if len(result.passages) < query.top_k:
            self.fill(result, query)
        if query.scope is not None:
            result.filtered_passages = len(query.scope)
        if not result.passages and not self.store.has_passages():
            result.warning = f"namespace {self.store.namespace!r} has no passages (index into it, or check the namespace)"
        elif not result.passages and query.scope is not None and not len(query.scope):
            result.warning = "no passage of the namespace passes the filters"
        result.elapsed_ms = (time.perf_counter() - began) * 1000
        return result

    def passage_seeding(self, vector: Any, weigh: Callable[[PassageCosines], Any],
                        scope: Scope | None = None) -> PassageSeeding:
        """The passage seeds of a walk from the query's ``vector`` (see :class:`PassageSeeding`), of the
        passages of ``scope`` only when given (a filter's)."""
        return PassageSeeding(self.context.passage_vectors(), vector, weigh, scope)

    def walk(
        self, result: RetrievalResult, query: Query, statement: str, kind: str, *, needs: int = 0,
        prepare: Callable[[Projection], dict[str, Any]] | None = None, **params: Any,
    ) -> list[Any]:
        """Run a PPR statement on the namespace's projection of ``kind`` (see :meth:`GraphStore.walk`) and
        record in ``result`` which graph version it walked and how many writes that version has not seen.

        ``needs``: the graph version that created the newest seed phrase. A projection older than that lacks
        the seed, so the walk waits for the current one: a query about what was just written is answered
        from it; an older projection serves only queries whose seeds it holds. With a filter, the walk runs on
        the graph its passages induce (:meth:`~hippo_neo4j.graph.projection.Projections.ensure_within`: as a namespace of
        those passages alone would) and the statement returns only them (:meth:`Query.restriction`)."""
        records, graph = self.store.walk(statement, kind, fresh=query.fresh, needs=needs, prepare=prepare,
                                         scope=query.scope, **(params | query.restriction()))
        result.graph_version, result.writes_behind = graph.version, graph.behind
        return records

    def fill(self, result: RetrievalResult, query: Query) -> None:
        """Top ``result`` up to ``query.top_k`` passages from the context's filler (dense retrieval, within the
        query's filter), marked ``filled`` and scored 0, when the mode itself found fewer: a walk reaches only passages
        connected to its seeds, BM25 only those sharing a term."""
        filler, top_k = self.context.filler, query.top_k
        if filler is None or isinstance(self, filler):
            return
        have = {p.id for p in result.passages}
        asked = Query(text=result.query, top_k=top_k + len(have), filters=query.filters, scope=query.scope)
        extra = self.context.retriever(filler).get_search_results(asked, HippoConfig())
        # the mode gave them no score of its own: 0, below every passage it found (its scores are not negative)
        more = [p.model_copy(update={"filled": True, "score": 0.0}) for p in extra.passages if p.id not in have]
        result.passages += more[: top_k - len(result.passages)]


def by_score(rows: Iterable[Any], field: str = "score") -> list[Any]:
    """``rows`` (each with ``id`` and ``field``) by ``field``, highest first, equal ones by id: the same order on
    any index of the same corpus. A row without an id (its node was deleted while the statement read it) is
    left out."""
    return sorted((r for r in rows if r["id"] is not None), key=lambda r: (-r[field], r["id"]))


def to_passages(records: Iterable[Any]) -> list[RetrievedPassage]:
    """Records with id, title, text, score (and contributors) as results; each keeps its 5 largest contributors.
    A passage deleted while the statement read it (no id or text) is left out, and so is a phrase deleted so
    (no text) among the contributors."""
    return [
        RetrievedPassage(
            id=r["id"],
            title=r["title"],
            text=r["text"],
            score=float(r["score"]),
            metadata=read(r.get("meta")),
            contributors=[
                Contributor(**c)
                for c in sorted((c for c in r.get("contributors") or [] if c["phrase"] is not None),
                                key=lambda c: (-c["contribution"], c["phrase"]))[:5]
            ],
        )
        for r in records
        if r["id"] is not None and r["text"] is not None
    ]


@dataclass(frozen=True)
class Preset:
    """A named retrieval mode: a retriever and the config fields it overrides."""

    name: str
    retriever: type[Retriever]
    overrides: dict[str, Any]
    description: str = ""

    def config(self, base: HippoConfig) -> HippoConfig:
        return base.model_copy(update=self.overrides) if self.overrides else base


class Registry:
    """Modes by name, in registration order: ``hippo query --mode``, ``hippo eval --mode`` and
    :meth:`HippoRAG.query` all look them up here."""

    def __init__(self) -> None:
        self._presets: dict[str, Preset] = {}

    def register(self, name: str, retriever: type[Retriever], description: str = "", **overrides: Any) -> Preset:
        unknown = set(overrides) - set(HippoConfig.model_fields)
        if unknown:
            raise ValueError(f"preset {name!r} overrides unknown settings {sorted(unknown)}")
        preset = self._presets[name] = Preset(name, retriever, overrides, description)
        return preset

    def __getitem__(self, name: str) -> Preset:
        preset = self._presets.get(name) if isinstance(name, str) else None
        if preset is None:
            raise ConfigError(f"Unknown mode {name!r}; choose one of {', '.join(self._presets)}.")
        return preset

    def __contains__(self, name: object) -> bool:
        return name in self._presets

    def __iter__(self):  # noqa: ANN204 - names, in registration order
        return iter(self._presets)

    def names(self) -> list[str]:
        return list(self._presets)
