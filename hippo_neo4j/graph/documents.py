"""Documents in a namespace: a ``Document`` node per file, linked to its passages in reading order
(``(:Passage)-[:FROM_DOCUMENT {index}]->(:Document)``, ``(:Passage)-[:NEXT_PASSAGE]->(:Passage)``), the lexical
graph neo4j-graphrag's tools read with Chunk in place of Passage. The passages are ordinary passages (they carry
their document's metadata for filters); this module keeps the document side: what a document held when it was
indexed (:meth:`DocumentStore.state`), its node and edges (:meth:`DocumentStore.write`), and its removal."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .store import GraphStore


@dataclass(frozen=True)
class DocumentState:
    """What the namespace holds of one document: whether its node exists, the content hash, passage budget and cut
    version (``hippo_neo4j.documents.CUT_VERSION``) it was indexed with, its passages' ids, and whether a passage
    has the document's own id (a folder indexed one file to a passage, before documents were cut)."""

    found: bool
    hash: str | None = None
    passage_tokens: int | None = None
    passages: list[str] = field(default_factory=list)
    legacy: bool = False
    cut: int | None = None

    def unchanged(self, content_hash: str, passage_tokens: int, cut: int) -> bool:
        """Whether indexing the document again would write nothing: the same bytes, cut with the same budget by the
        same version of the readers and splitter."""
        return self.found and self.hash == content_hash and self.passage_tokens == passage_tokens and self.cut == cut

    def stale(self, document_id: str, passage_ids: list[str]) -> list[str]:
        """The passages the document held that its new cut does not (its own id's among them, when legacy)."""
        keep = set(passage_ids)
        held = self.passages + ([document_id] if self.legacy else [])
        return sorted({p for p in held if p not in keep})


class DocumentStore:
    """The statements of the namespace's documents (``cypher/document_states``, ``write_documents``,
    ``namespace_documents``, ``delete_document``), each run over at most :data:`BATCH` documents at once."""

    BATCH = 500

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def states(self, document_ids: list[str]) -> dict[str, DocumentState]:
        """What the namespace holds of each of the documents, by id."""
        found: dict[str, DocumentState] = {}
        for start in range(0, len(document_ids), self.BATCH):
            for rec in self.store.run("document_states", ids=document_ids[start : start + self.BATCH]):
                found[rec["id"]] = DocumentState(rec["found"], rec["hash"], rec["passageTokens"],
                                                 list(rec["passages"]), rec["legacy"], rec["cut"])
        return found

    def state(self, document_id: str) -> DocumentState:
        return self.states([document_id])[document_id]

    def write(self, documents: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> dict[str, int]:
        """Each document's node with its properties (``id`` among them) and its passages' edges in the order
        given (``{id, heading}`` each, the heading path kept on the link); how many of its passages the
        namespace holds, by document id."""
        held: dict[str, int] = {}
        for start in range(0, len(documents), self.BATCH):
            rows = [{"properties": properties, "passages": passages}
                    for properties, passages in documents[start : start + self.BATCH]]
            held.update({r["id"]: int(r["passages"]) for r in self.store.run("write_documents", documents=rows)})
        return held

    def listed(self) -> list[dict[str, Any]]:
        """Every document of the namespace: id, title, format, content hash and passage count, by id."""
        return [dict(r) for r in self.store.run("namespace_documents")]

    def delete(self, document_id: str) -> bool:
        """Remove the document's node (its passages first, by the caller); whether it existed."""
        return bool(self.store.run("delete_document", id=document_id)[0]["found"])
