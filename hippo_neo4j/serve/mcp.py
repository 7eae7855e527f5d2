"""``hippo mcp``: the memory as an MCP server (the official ``mcp`` SDK), over stdio or streamable HTTP.

Tools: ``remember`` (index passages), ``recall`` (query with a mode and top_k: the passages, how each was
found, and the Cypher statement that draws it in Neo4j Browser), ``forget`` (delete passages by id),
``remember_document`` (index a Markdown, text or HTML document, cut into passages along its headings),
``forget_document`` (delete a document and its passages) and ``describe`` (the namespace's sizes and the modes).
Every tool takes ``namespace``; left out, the server's namespace (``--namespace`` / ``HIPPO_NAMESPACE``) is used.

Over HTTP the same rule as ``hippo serve`` holds: 127.0.0.1 by default, and any other address only with
``HIPPO_API_KEY``, which clients then send as ``Authorization: Bearer <key>``.
"""

from __future__ import annotations

import hmac
import logging
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from ..documents.readers import UnreadableDocument, read_bytes
from ..errors import HippoError
from ..limits import DOCUMENT_ID_CHARS, IDS_PER_REQUEST, PASSAGES_PER_REQUEST, TOP_K
from ..memory import offload
from ..models import PassageIn
from .memories import Memories

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "A HippoRAG long-term memory on Neo4j. Store passages with `remember` (or whole documents with "
    "`remember_document`), retrieve the passages relevant to a question with `recall` (multi-hop questions: the "
    "default mode walks the graph of phrases and passages), remove passages with `forget` (documents with "
    "`forget_document`), and see what is stored with `describe`."
)


class Recalled(BaseModel):
    """One recalled passage and why: the phrases whose PPR mass reached it."""

    id: str
    title: str | None = None
    text: str
    score: float
    via: list[str] = Field(default_factory=list, description="phrases that carried the most mass to it")
    filled: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict, description="the passage's metadata, as remembered")


class Recall(BaseModel):
    namespace: str
    mode: str
    passages: list[Recalled]
    filtered_passages: int | None = Field(None, description="with filters: how many passages passed them")
    explanation: dict[str, Any] = Field(description="query entities, linked phrases, facts, seeds, top PPR phrases")
    cypher: str = Field(description="paste into Neo4j Browser to draw seeds, phrases, edges and passages")


def _fail(exc: HippoError) -> ToolError:
    return ToolError(str(exc))


def build_server(memories: Memories) -> MCPServer:
    """The MCP server and its six tools over ``memories``: coroutines on the namespaces' AsyncHippoRAG clients,
    so that the server's event loop never waits for Neo4j, the encoder or spaCy."""
    from ..retrieve import MODES, default_mode

    server = MCPServer("hippo-neo4j", instructions=INSTRUCTIONS)
    modes = ", ".join(MODES.names())

    @server.tool(description="Store passages in long-term memory (idempotent per id). Each passage: text, optional "
                 "id, title and metadata (a map of strings, numbers, booleans, ISO dates and lists of strings, e.g. "
                 "source, user, created_at, that recall can filter on). Returns what was indexed, and in `skipped` "
                 "each passage that was not (empty, too long, a repeated id) with the reason.")
    async def remember(passages: Annotated[list[PassageIn], Field(max_length=PASSAGES_PER_REQUEST)],
                       namespace: str | None = None) -> dict[str, Any]:
        try:
            report = await memories.aindex(passages, namespace)
        except HippoError as exc:
            raise _fail(exc) from None
        return {"namespace": memories.namespace(namespace),
                **report.model_dump(include={"passages", "indexed", "unchanged", "updated", "metadata_updated", "rejected",
                                             "skipped_empty", "skipped", "new_phrases", "new_facts", "synonym_edges"})}

    @server.tool(description=f"Retrieve the passages that answer a query, with why each was found and a Cypher "
                 f"statement that draws it in Neo4j Browser. mode: one of {modes} (default {default_mode()}). "
                 "filters: only passages whose metadata passes every condition, e.g. {\"user\": \"u1\", "
                 "\"created_at\": {\">=\": \"2026-01-01\"}, \"tag\": {\"in\": [\"a\", \"b\"]}} (operators = in < <= > >=).")
    async def recall(query: str, mode: str | None = None, top_k: Annotated[int, Field(ge=1, le=TOP_K)] = 5,
               namespace: str | None = None, filters: dict[str, Any] | None = None) -> Recall:
        try:
            result, drawing = await memories.aquery(query, namespace=namespace, mode=mode, top_k=top_k, filters=filters)
        except HippoError as exc:
            raise _fail(exc) from None
        explanation = result.model_dump(include={"entities", "linked", "facts", "phrase_seeds", "passage_seeds",
                                                 "top_phrases", "fell_back", "fallback_reason", "warning"})
        return Recall(
            namespace=memories.namespace(namespace), mode=result.mode, cypher=drawing, explanation=explanation,
            filtered_passages=result.filtered_passages,
            passages=[Recalled(id=p.id, title=p.title, text=p.text, score=p.score, filled=p.filled,
                               via=[c.phrase for c in p.contributors[:3]], metadata=p.metadata)
                      for p in result.passages],
        )

    @server.tool(description="Remove passages (by id) from memory, with exactly their contribution to the graph.")
    async def forget(ids: Annotated[list[str], Field(max_length=IDS_PER_REQUEST)], namespace: str | None = None) -> dict[str, Any]:
        try:
            report = await memories.adelete(ids, namespace)
        except HippoError as exc:
            raise _fail(exc) from None
        return {"namespace": memories.namespace(namespace), **report.model_dump()}

    @server.tool(description="Store a document (Markdown, text or HTML, by its name's suffix) in long-term memory: "
                 "it is cut into passages along its headings and paragraphs; storing it again replaces only the "
                 "passages whose text changed. id: the document's name, a relative path such as 'handbook.md' or "
                 "'wiki/setup.html' (.md, .markdown, .txt, .html, .htm); its passages carry it as metadata "
                 "'document', which recall can filter on. Returns how many passages were indexed, unchanged and "
                 "removed, and in `skipped` each passage that was not indexed, with the reason.")
    async def remember_document(id: Annotated[str, Field(max_length=DOCUMENT_ID_CHARS)], text: str,
                                namespace: str | None = None) -> dict[str, Any]:
        try:
            memories.namespace(namespace)  # a bad name fails before the document is read
            if id.lower().endswith(".pdf"):
                raise UnreadableDocument(id, "a PDF cannot be sent as text: index it with hippo index, or send its "
                                             "bytes as base64 to hippo serve's POST /documents")
            # read on the pool: HTML parsing is the server's work, not its event loop's
            document = await offload(memories.executor, read_bytes, id, text.encode("utf-8", "surrogatepass"))
            report = await memories.aindex_documents([document], namespace)
        except HippoError as exc:
            raise _fail(exc) from None
        return {"namespace": memories.namespace(namespace),
                **report.model_dump(include={"documents", "documents_unchanged", "passages", "indexed", "unchanged",
                                             "passages_removed", "skipped"})}

    @server.tool(description="Remove a document (by the id it was remembered with) from memory: its passages, with "
                 "exactly their contribution to the graph, and its node. `missing` names it when memory holds no "
                 "such document.")
    async def forget_document(id: Annotated[str, Field(max_length=DOCUMENT_ID_CHARS)],
                              namespace: str | None = None) -> dict[str, Any]:
        try:
            report = await memories.adelete_documents([id], namespace)
        except HippoError as exc:
            raise _fail(exc) from None
        return {"namespace": memories.namespace(namespace), **report.model_dump()}

    @server.tool(description="Describe the memory: passages, phrases, facts and edges in the namespace, and the "
                 "retrieval modes recall accepts.")
    async def describe(namespace: str | None = None) -> dict[str, Any]:
        try:
            sizes = await memories.astats(namespace)
        except HippoError as exc:
            raise _fail(exc) from None
        return {**sizes, "default_namespace": memories.default_namespace, "default_mode": default_mode(),
                "modes": {name: MODES[name].description for name in MODES}}

    return server


class KeyRequired:
    """ASGI middleware for the streamable HTTP transport: ``Authorization: Bearer <key>`` or 401."""

    def __init__(self, app: Any, key: str) -> None:
        self.app = app
        self.expected = f"Bearer {key}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                from starlette.responses import JSONResponse

                response = JSONResponse({"error": "missing or wrong API key (HIPPO_API_KEY)"}, status_code=401)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def run(memories: Memories, transport: str = "stdio", *, host: str = "127.0.0.1", port: int = 8766,
        api_key: str | None = None) -> None:
    """Serve the tools over stdio, or streamable HTTP at ``http://host:port/mcp``."""
    server = build_server(memories)
    if transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app: Any = server.streamable_http_app(host=host)
    if api_key:
        app = KeyRequired(app, api_key)
    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False)


__all__ = ["build_server", "run"]
