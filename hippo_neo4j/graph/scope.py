"""The passages a metadata filter leaves in a namespace (:class:`Scope`), read once for a query's modes: the
statements search and walk within them."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Callable

from ..metadata import Filters

if TYPE_CHECKING:
    from .store import GraphStore


# A filter that leaves at most this many passages is searched exactly over them (dense: their cosines,
# cypher/dense_matching.cypher; hipporag2's facts: those they asserted, cypher/fact_neighbours.cypher); one that
# leaves more, through the vector index, with a beam widened by the share it leaves, and exactly when that found
# fewer than top_k. 500 is about where the exact search over the passages stops being faster than the index's
# (bench/users.py; docs/serving.md, Per-user memory in one namespace).
EXACT_WITHIN = 500


class Scope:
    """The passages a filter leaves (``cypher/passages_matching.cypher``): their Neo4j node ids (``nodes``,
    the ``$only`` of the statements), passage ids (``ids``) and content hashes (``hashes``), and how many passages
    the namespace holds (``total``)."""

    def __init__(self, nodes: list[int], total: int, ids: list[str], hashes: list[str] | None = None,
                 passages: list[dict[str, Any]] | None = None, state: tuple[int, int] | None = None) -> None:
        self.nodes, self.total, self.ids = nodes, total, ids
        self.hashes = hashes if hashes is not None else [""] * len(nodes)
        self.passages = passages  # id, title, text and meta of each, when asked for and few pass
        self.state = state  # the namespace's graph version and last re-embedding when read (None: not read)

    @classmethod
    def of(cls, store: "GraphStore", filters: Filters, texts: bool = False) -> "Scope":
        """The passages ``filters`` leave; with ``texts``, also their titles and texts when few pass."""
        found = store.run("passages_matching", filters=filters.parameters(), texts=texts, exactWithin=EXACT_WITHIN)[0]
        return cls(list(found["nodes"]), found["total"], list(found["ids"]), list(found["hashes"]), found["passages"],
                   (found["version"], found["epoch"]))

    def __len__(self) -> int:
        return len(self.nodes)

    def exact(self) -> bool:
        """Whether few enough passages pass to search them exactly (:data:`EXACT_WITHIN`)."""
        return len(self) <= EXACT_WITHIN

    def beam(self, beam: int) -> int:
        """A vector search's beam ``beam`` widened by the share of the namespace that passes, so that as many
        of its hits pass in expectation."""
        return min(self.total, math.ceil(beam * self.total / max(len(self), 1)))

    def search(self, beam: int, top_k: int, through_index: Callable[[int], list[Any]],
               exactly: Callable[[], list[Any]]) -> list[Any]:
        """A vector search's ``top_k`` records within these passages: ``exactly()`` when few pass (:meth:`exact`),
        else ``through_index(k)`` with its ``beam`` widened (:meth:`beam`), and ``exactly()`` when that found
        fewer than ``top_k``."""
        records = [] if self.exact() else through_index(self.beam(beam))
        return records if len(records) >= top_k else exactly()
