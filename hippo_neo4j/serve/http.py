"""``hippo serve``: the library as an HTTP JSON API (FastAPI + uvicorn), its models and projections kept warm.

    POST /index   {"namespace"?, "passages": [{"id"?, "title"?, "text", "extraction"?, "metadata"?}, ...]}
    POST /query   {"query", "namespace"?, "mode"?, "top_k"?, "entities"?, "recognition_filter"?, "fresh"?,
                   "filters"?}  -> the result, its explanation and the Cypher statement that draws it in Neo4j Browser
    POST /delete  {"namespace"?, "ids": [...]}
    POST /documents         {"namespace"?, "documents": [{"id", "text" | "base64"}, ...], "prune"?, "passage_tokens"?}
    POST /documents/delete  {"namespace"?, "ids": [document ids]}
    GET  /stats?namespace=...     GET /modes     GET /health     GET /openapi.json (also at /docs)

It binds to 127.0.0.1 unless told otherwise; any other address needs ``HIPPO_API_KEY`` (sent as
``Authorization: Bearer <key>`` or ``X-API-Key``), and the server refuses to start without one. A key that is
set is required on loopback too. On loopback it answers only requests whose ``Host`` is a loopback name (a web
page that rebinds its own name to 127.0.0.1 gets 421), elsewhere only the names in ``HIPPO_API_ALLOWED_HOSTS``
when set; browsers' cross-origin calls only from ``HIPPO_API_CORS_ORIGINS``. The limits of
:mod:`hippo_neo4j.limits` hold. Errors are ``{"error": "<one line>"}``: 4xx for the request's faults, 5xx for
the server's, never a stack trace.
"""

from __future__ import annotations

import binascii
import hmac
import ipaddress
import logging
import os
import socket
from base64 import b64decode
from contextlib import asynccontextmanager
from typing import Annotated, Any, AsyncIterator, Awaitable, Callable

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, RedirectResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired
from pydantic import AfterValidator, BaseModel, Field, SecretStr, WithJsonSchema, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..config import env_number
from ..documents.readers import SUPPORTED_SUFFIXES, Document, UnreadableDocument, read_bytes
from ..errors import ConfigError, HippoError, ServerError, UnknownNamespace
from ..limits import (BODY_BYTES, DOCUMENT_ID_CHARS, ENTITIES, ENTITY_CHARS, IDS_PER_REQUEST, NAMESPACE_CHARS,
                      NAMESPACE_PATTERN, PASSAGES_PER_REQUEST, QUERY_CHARS, TOP_K, check_namespace)
from ..metadata import FILTERS_SCHEMA
from ..memory import offload
from ..models import DeleteReport, IndexReport, PassageIn, RetrievalResult, SkippedItem, item_name
from ..retrieve import MODES
from ..text import scrub
from .memories import Memories

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
MIN_KEY_LENGTH = 16


# ---------------------------------------------------------------------------------------------- settings


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


class ServeSettings(BaseModel):
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    api_key: SecretStr | None = Field(None, description="HIPPO_API_KEY: required for any non-loopback bind")
    max_body_bytes: int = Field(BODY_BYTES, ge=1, description="HIPPO_API_MAX_BODY: larger request bodies get 413")
    allowed_hosts: list[str] = Field(default_factory=list, description="HIPPO_API_ALLOWED_HOSTS (comma-separated): "
                                     "the Host names served besides loopback's; off loopback, none: any")
    cors_origins: list[str] = Field(default_factory=list, description="HIPPO_API_CORS_ORIGINS (comma-separated): "
                                    "the web origins whose pages may call the API; none: no cross-origin call")

    @classmethod
    def from_env(cls, **overrides: Any) -> "ServeSettings":
        key = os.environ.get("HIPPO_API_KEY") or None
        names = lambda var: [x.strip() for x in os.environ.get(var, "").split(",") if x.strip()]  # noqa: E731
        values: dict[str, Any] = {
            "api_key": SecretStr(key) if key else None,
            "max_body_bytes": env_number("HIPPO_API_MAX_BODY", BODY_BYTES),
            "allowed_hosts": names("HIPPO_API_ALLOWED_HOSTS"),
            "cors_origins": names("HIPPO_API_CORS_ORIGINS"),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def check(self) -> None:
        """Refuse a bind that would expose the memory without a key (a ConfigError naming the fix)."""
        if self.api_key is not None and len(self.api_key.get_secret_value()) < MIN_KEY_LENGTH:
            raise ConfigError(f"HIPPO_API_KEY is shorter than {MIN_KEY_LENGTH} characters; use a long random key "
                              "(python -c 'import secrets; print(secrets.token_urlsafe(32))').")
        if not is_loopback(self.host) and self.api_key is None:
            raise ConfigError(
                f"Refusing to listen on {self.host} without an API key: set HIPPO_API_KEY (clients send it as "
                "'Authorization: Bearer <key>' or 'X-API-Key'), or bind to 127.0.0.1."
            )

    def serves_host(self, header: str) -> bool:
        """Whether a request with this ``Host`` header is for this server: on a loopback bind, a loopback name
        (or one of ``allowed_hosts``); elsewhere one of ``allowed_hosts``, or any when none are set (a key is
        required there)."""
        name = host_name(header)
        if name in {host_name(h) for h in self.allowed_hosts}:
            return True
        if is_loopback(self.host):
            return bool(name) and is_loopback(name)
        return not self.allowed_hosts


def host_name(header: str) -> str:
    """The name of a ``Host`` header, lower-case, without its port (``[::1]:8765`` -> ``::1``)."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def check_port(host: str, port: int) -> None:
    """A ConfigError naming the fix when ``host:port`` cannot be bound (in use, or not an address here): checked
    before the models load."""
    address = host.strip("[]")
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((address, port))
        except OSError as exc:
            raise ConfigError(f"Cannot listen on {host}:{port} ({exc.strerror or exc}): another process holds the "
                              "port (choose another with --port) or the address is not this machine's.") from None


# ---------------------------------------------------------------------------------------------- the schema


def _namespace(name: str) -> str:
    try:
        return check_namespace(name)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None


# a namespace's name as every surface checks it (hippo_neo4j/limits.py), its rule in the schema too
Namespace = Annotated[str, AfterValidator(_namespace), WithJsonSchema(
    {"type": "string", "minLength": 1, "maxLength": NAMESPACE_CHARS, "pattern": NAMESPACE_PATTERN})]


def namespace_field() -> Any:
    return Field(None, description="default: the server's namespace")


class IndexRequest(BaseModel):
    namespace: Namespace | None = namespace_field()
    passages: list[PassageIn] = Field(min_length=1, max_length=PASSAGES_PER_REQUEST)


class IndexResponse(IndexReport):
    namespace: str


class QueryRequest(BaseModel):
    query: str = Field(max_length=QUERY_CHARS, description="an empty query finds nothing (the result's warning says so)")
    namespace: Namespace | None = namespace_field()
    mode: Annotated[str, WithJsonSchema({"type": "string", "enum": MODES.names()})] | None = Field(
        None, description="a name of GET /modes; default entity-ppr")
    top_k: int = Field(10, ge=1, le=TOP_K)
    entities: list[Annotated[str, Field(max_length=ENTITY_CHARS)]] | None = Field(
        None, max_length=ENTITIES, description="query entities, instead of extracting them")
    recognition_filter: bool = Field(True, description="hipporag2: the LLM recognition filter (when an LLM is "
                                                       "configured)")
    filter: Annotated[Any, WithJsonSchema({"type": "boolean"})] = Field(
        None, deprecated=True, description="the deprecated name of recognition_filter (removed in the next release)")
    fresh: bool = Field(False, description="graph modes: walk the current graph, waiting for its projection after "
                                           "a write (else the newest projection, which the result's writes_behind "
                                           "says is behind)")
    filters: Annotated[dict[str, Any], WithJsonSchema(FILTERS_SCHEMA)] | None = Field(None, description="metadata conditions every passage must pass, e.g. "
                                           '{"user": "u1", "created_at": {">=": "2026-01-01"}, "tag": {"in": ["a", '
                                           '"b"]}} (operators = in < <= > >=); an unknown operator or a value that '
                                           "is not a scalar is a 400 naming the field")


    @model_validator(mode="after")
    def _deprecated_filter(self) -> "QueryRequest":
        if self.filter is not None:
            if not isinstance(self.filter, bool):
                raise ValueError("filter is the deprecated name of recognition_filter, a boolean (hipporag2's LLM "
                                 "recognition filter); metadata conditions go in filters, e.g. {\"user\": \"u1\"}")
            self.recognition_filter = self.filter
        return self


class QueryResponse(RetrievalResult):
    namespace: str
    cypher: str = Field(description="one read-only statement that draws this result in Neo4j Browser")


class DeleteRequest(BaseModel):
    namespace: Namespace | None = namespace_field()
    ids: list[str] = Field(min_length=1, max_length=IDS_PER_REQUEST)


class DeleteResponse(DeleteReport):
    namespace: str


_SUFFIXES = ", ".join(sorted(SUPPORTED_SUFFIXES))


class DocumentIn(BaseModel):
    """One document, sent whole: its id names it (and its suffix gives its format), its content is text or bytes."""

    model_config = {"json_schema_extra": {"oneOf": [{"required": ["text"]}, {"required": ["base64"]}]}}

    id: str = Field(max_length=DOCUMENT_ID_CHARS, description=f"the document's name, a relative POSIX path such as "
                    f"'handbook.md' or 'wiki/setup.html' (no '..', absolute path, backslash or control character); "
                    f"its suffix gives the format ({_SUFFIXES}); its passages carry it as metadata 'document'")
    text: Annotated[str | None, WithJsonSchema({"type": "string"})] = Field(
        None, description="the content as text: Markdown, plain text or HTML")
    base64: Annotated[str | None, WithJsonSchema({"type": "string"})] = Field(
        None, description="the file's bytes, base64-encoded (white space ignored): a PDF, or any of the formats; "
        "content that does not decode is named in the answer's skipped")

    @model_validator(mode="after")
    def _one_content(self) -> "DocumentIn":
        if (self.text is None) == (self.base64 is None):
            raise ValueError("give exactly one of text (Markdown, plain text, HTML) and base64 (the file's bytes: a "
                             "PDF, or any format)")
        return self

    def data(self) -> bytes:
        """The document's bytes: the text as UTF-8 (a lone surrogate kept, so the reader names it), or the decoded
        base64 (:class:`UnreadableDocument` when it does not decode)."""
        if self.base64 is not None:
            try:
                return b64decode("".join(self.base64.split()), validate=True)
            except (binascii.Error, ValueError) as exc:  # outside the alphabet, not ASCII, bad padding
                raise UnreadableDocument(self.id, f"not valid base64 ({exc})") from None
        return (self.text or "").encode("utf-8", "surrogatepass")


class DocumentsRequest(BaseModel):
    namespace: Namespace | None = namespace_field()
    documents: list[DocumentIn] = Field(min_length=1, max_length=PASSAGES_PER_REQUEST)
    prune: bool = Field(False, description="also remove the namespace's documents that are not in this request "
                        "(those sent but unreadable are kept)")
    passage_tokens: int | None = Field(None, ge=16, le=100_000, description="the most encoder tokens a passage "
                                       "holds (hippo index --passage-tokens); default: the encoder's window")


def read_sent(sent: list[DocumentIn]) -> tuple[list[Document], list[tuple[str, str, int]]]:
    """The documents of a request read (:func:`~hippo_neo4j.documents.readers.read_bytes`), and the (id, reason,
    position) of those that cannot be: an id that is not a relative path, an unsupported suffix, no readable text,
    an id the request has already."""
    documents: list[Document] = []
    unreadable: list[tuple[str, str, int]] = []
    seen: set[str] = set()
    for position, item in enumerate(sent):
        if item.id in seen:
            unreadable.append((item.id, "a document id the request has already", position))
            continue
        seen.add(item.id)
        try:
            documents.append(read_bytes(item.id, item.data()))
        except UnreadableDocument as exc:
            unreadable.append((item.id, exc.reason, position))
    return documents, unreadable


class DocumentsDeleteRequest(BaseModel):
    namespace: Namespace | None = namespace_field()
    ids: list[Annotated[str, Field(max_length=DOCUMENT_ID_CHARS)]] = Field(
        min_length=1, max_length=PASSAGES_PER_REQUEST, description="document ids")


class Mode(BaseModel):
    name: str
    description: str


class Health(BaseModel):
    status: str
    version: str


class ErrorBody(BaseModel):
    error: str


# ---------------------------------------------------------------------------------------------- limits and errors


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets 413, by its Content-Length or as it streams in."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict]], send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await _too_large(self.limit)(scope, receive, send)
            return
        seen, refused = 0, False

        async def counted() -> dict:
            nonlocal seen, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                seen += len(message.get("body", b""))
                if seen > self.limit:  # answer now; the app sees the client go away
                    refused = True
                    await _too_large(self.limit)(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def guarded(message: dict) -> None:
            if not refused:
                await send(message)

        try:
            await self.app(scope, counted, guarded)
        except Exception:
            if not refused:
                raise


def _too_large(limit: int) -> JSONResponse:
    return JSONResponse({"error": f"request body larger than {limit} bytes (HIPPO_API_MAX_BODY)"}, status_code=413)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())[:500]}, status_code=status)


def _validation_line(exc: RequestValidationError) -> tuple[int, str]:
    errors = exc.errors()
    first = errors[0] if errors else {}
    loc = [str(x) for x in first.get("loc", ()) if x != "body"]
    if first.get("type") == "json_invalid":
        return 400, f"request body is not valid JSON ({first.get('ctx', {}).get('error', 'parse error')})"
    if first.get("type") == "missing" and not loc:
        return 400, "empty request body: send a JSON object"
    if first.get("type") == "model_attributes_type" and not loc:
        return 400, "request body must be a JSON object"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return 422, f"{'.'.join(loc) or 'body'}: {first.get('msg', 'invalid').removeprefix('Value error, ')}{more}"


def _install_errors(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(*_validation_line(exc))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        response = _error(exc.status_code, exc.detail)
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        return response

    @app.exception_handler(UnknownNamespace)
    async def unknown_namespace(request: Request, exc: UnknownNamespace) -> JSONResponse:
        return _error(404, str(exc))

    @app.exception_handler(ServerError)
    async def server_down(request: Request, exc: ServerError) -> JSONResponse:
        return _error(503, str(exc))

    @app.exception_handler(HippoError)
    async def refused(request: Request, exc: HippoError) -> JSONResponse:  # ConfigError: unknown mode, top_k, ...
        return _error(400, str(exc))

    @app.exception_handler(ServiceUnavailable)
    @app.exception_handler(SessionExpired)
    async def lost(request: Request, exc: Exception) -> JSONResponse:
        return _error(503, f"the Neo4j server is unreachable ({type(exc).__name__}); try again once it is back")


class KnownHosts:
    """ASGI middleware: a request whose ``Host`` header this server does not serve (:meth:`ServeSettings.serves_host`)
    gets 421 before anything else runs: a web page that rebinds its own name to 127.0.0.1 reaches nothing."""

    def __init__(self, app: Any, settings: ServeSettings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            header = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1")
            if not self.settings.serves_host(header):
                served = "a loopback name (127.0.0.1, localhost, [::1])" if is_loopback(self.settings.host) else \
                    "one of HIPPO_API_ALLOWED_HOSTS"
                await _error(421, f"Host {header[:100]!r} is not served here: send {served}, or add the name to "
                             "HIPPO_API_ALLOWED_HOSTS")(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Faults:
    """ASGI middleware: any exception no handler took becomes a 500 with one line, logged by type (and Neo4j's
    status code) only: the message may quote data or a secret. Answering here, instead of in Starlette's
    outermost error middleware, which re-raises, keeps the client's keep-alive connection open."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: dict) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            code = exc.code if isinstance(exc, Neo4jError) else ""
            log.error("%s %s failed: %s %s", scope.get("method"), scope.get("path"), type(exc).__name__, code or "")
            log.debug("the failure", exc_info=True)
            if not started:
                await _error(500, "internal server error (the server log names the cause)")(scope, receive, send)


# ---------------------------------------------------------------------------------------------- the app


def _auth(settings: ServeSettings) -> Callable[..., None]:
    bearer = HTTPBearer(auto_error=False, description="HIPPO_API_KEY")
    header = APIKeyHeader(name="X-API-Key", auto_error=False, description="HIPPO_API_KEY")
    expected = settings.api_key.get_secret_value().encode() if settings.api_key is not None else None

    def check(
        credentials: HTTPAuthorizationCredentials | None = Depends(bearer), key: str | None = Depends(header)
    ) -> None:
        if expected is None:
            return
        given = key if key is not None else (credentials.credentials if credentials is not None else "")
        if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected):
            raise StarletteHTTPException(401, "missing or wrong API key (HIPPO_API_KEY)",
                                         headers={"WWW-Authenticate": "Bearer"})

    return check


def create_app(memories: Memories, settings: ServeSettings | None = None, *, close: bool = False) -> FastAPI:
    """The API over ``memories`` (closed with the app when ``close``)."""
    settings = settings or ServeSettings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if close:
            memories.close()

    app = FastAPI(
        title="hippo-neo4j", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
        description="HippoRAG long-term memory on Neo4j + GDS: index passages, query them with any mode and see "
        "why each passage was retrieved.",
        responses={400: {"model": ErrorBody}, 401: {"model": ErrorBody}, 404: {"model": ErrorBody},
                   413: {"model": ErrorBody}, 421: {"model": ErrorBody}, 422: {"model": ErrorBody},
                   500: {"model": ErrorBody}, 503: {"model": ErrorBody}},
    )
    _install_errors(app)
    app.add_middleware(Faults)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    if settings.cors_origins:  # closed unless configured: a page from another origin cannot read the answers
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "X-API-Key", "Content-Type"])
    app.add_middleware(KnownHosts, settings=settings)  # the outermost: before the body is read
    authorised = [Depends(_auth(settings))]

    # the memory endpoints are coroutines on the namespaces' AsyncHippoRAG clients: the library's blocking calls
    # run on their one bounded pool (sized from the cores), so a burst of requests queues there instead of
    # oversubscribing the machine; the event loop only parses, checks and answers

    @app.get("/health", response_model=Health, tags=["service"])
    def health() -> Health:
        return Health(status="ok", version=__version__)

    @app.get("/docs", include_in_schema=False)
    def docs() -> RedirectResponse:  # the OpenAPI document itself: a UI page would load its assets from a CDN
        return RedirectResponse("/openapi.json")

    @app.get("/modes", response_model=list[Mode], dependencies=authorised, tags=["service"])
    def modes() -> list[Mode]:
        return [Mode(name=name, description=MODES[name].description) for name in MODES]

    @app.post("/index", response_model=IndexResponse, dependencies=authorised, tags=["memory"])
    async def index(body: IndexRequest) -> IndexResponse:
        """Index passages (idempotent: the same id with the same content again is a no-op)."""
        report = await memories.aindex(body.passages, body.namespace)
        return IndexResponse(namespace=memories.namespace(body.namespace), **report.model_dump())

    @app.post("/query", response_model=QueryResponse, dependencies=authorised, tags=["memory"])
    async def query(body: QueryRequest) -> QueryResponse:
        """The top-k passages, how they were found (entities, links, facts, seeds, PPR mass, contributors), and
        the Cypher statement that draws it."""
        result, drawing = await memories.aquery(
            body.query, namespace=body.namespace, mode=body.mode, top_k=body.top_k, entities=body.entities,
            recognition_filter=body.recognition_filter, fresh=body.fresh, filters=body.filters,
        )
        return QueryResponse.model_construct(
            **dict(result), namespace=memories.namespace(body.namespace), cypher=drawing
        )

    @app.post("/delete", response_model=DeleteResponse, dependencies=authorised, tags=["memory"])
    async def delete(body: DeleteRequest) -> DeleteResponse:
        """Remove passages and exactly their contribution to the graph."""
        report = await memories.adelete(body.ids, body.namespace)
        return DeleteResponse(namespace=memories.namespace(body.namespace), **report.model_dump())

    @app.post("/documents", response_model=IndexResponse, dependencies=authorised, tags=["memory"])
    async def documents(body: DocumentsRequest) -> IndexResponse:
        """Index documents (Markdown, text, HTML, PDF): each is cut into passages along its headings and
        paragraphs (PDF: pages), linked to a Document node; sending one again replaces only the passages whose text
        changed. A document that cannot be read is named in ``skipped`` with the reason, and the rest indexed;
        with ``prune``, the namespace's documents not in the request are removed."""
        read, unreadable = await offload(memories.executor, read_sent, body.documents)  # PDF and HTML parsing
        report = await memories.aindex_documents(read, body.namespace, passage_tokens=body.passage_tokens,
                                                 prune=body.prune, present=[d for d, _, _ in unreadable])
        report.skipped += [SkippedItem(item=item_name(scrub(d), position), reason=reason)
                           for d, reason, position in unreadable]
        return IndexResponse(namespace=memories.namespace(body.namespace), **report.model_dump())

    @app.post("/documents/delete", response_model=DeleteResponse, dependencies=authorised, tags=["memory"])
    async def delete_documents(body: DocumentsDeleteRequest) -> DeleteResponse:
        """Remove documents (by id) and exactly their contribution: their passages, as /delete removes them, and
        their nodes. ``requested`` and ``deleted`` count passages; ``missing`` names the documents the namespace
        does not hold."""
        report = await memories.adelete_documents(body.ids, body.namespace)
        return DeleteResponse(namespace=memories.namespace(body.namespace), **report.model_dump())

    @app.get("/stats", dependencies=authorised, tags=["memory"])
    async def stats(namespace: Namespace | None = Query(None)) -> dict[str, Any]:
        """Passages, phrases, facts and edges of the namespace."""
        return await memories.astats(namespace)

    return app


def serve(
    settings: ServeSettings, memories_factory: Callable[[], Memories], *, log_level: str = "info",
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Check the bind, open and warm the memories, and run uvicorn until interrupted."""
    import uvicorn

    settings.check()
    check_port(settings.host, settings.port)
    memories = memories_factory()
    memories.warm()
    app = create_app(memories, settings, close=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=log_level, server_header=False)


__all__ = ["ServeSettings", "check_port", "create_app", "host_name", "is_loopback", "serve"]
