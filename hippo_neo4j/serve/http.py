"""``hippo serve``: the library as an HTTP JSON API (FastAPI + uvicorn), its models and projections kept warm.

    POST /index   {"namespace"?, "passages": [{"id"?, "title"?, "text", "extraction"?, "metadata"?}, ...]}
    POST /query   {"query", "namespace"?, "mode"?, "top_k"?, "entities"?, "filter"?, "fresh"?, "filters"?}  -> the
                  result, its explanation and the Cypher statement that draws it in Neo4j Browser
    POST /delete  {"namespace"?, "ids": [...]}
    GET  /stats?namespace=...     GET /modes     GET /health     GET /docs (OpenAPI)

It binds to 127.0.0.1 unless told otherwise; any other address needs ``HIPPO_API_KEY`` (sent as
``Authorization: Bearer <key>`` or ``X-API-Key``), and the server refuses to start without one. A key that is
set is required on loopback too. Errors are ``{"error": "<one line>"}``: 4xx for the request's faults, 5xx for
the server's, never a stack trace.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired
from pydantic import BaseModel, Field, SecretStr
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..config import env_number
from ..errors import ConfigError, HippoError, ServerError
from ..models import DeleteReport, IndexReport, PassageIn, RetrievalResult
from .memories import Memories, UnknownNamespace

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
    max_body_bytes: int = Field(4 * 2**20, ge=1, description="HIPPO_API_MAX_BODY: larger request bodies get 413")
    max_top_k: int = 200

    @classmethod
    def from_env(cls, **overrides: Any) -> "ServeSettings":
        key = os.environ.get("HIPPO_API_KEY") or None
        values: dict[str, Any] = {
            "api_key": SecretStr(key) if key else None,
            "max_body_bytes": env_number("HIPPO_API_MAX_BODY", 4 * 2**20),
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


# ---------------------------------------------------------------------------------------------- the schema


class IndexRequest(BaseModel):
    namespace: str | None = Field(None, description="default: the server's namespace")
    passages: list[PassageIn] = Field(min_length=1, max_length=10_000)


class IndexResponse(IndexReport):
    namespace: str


class QueryRequest(BaseModel):
    query: str = Field(min_length=1, max_length=10_000)
    namespace: str | None = Field(None, description="default: the server's namespace")
    mode: str | None = Field(None, description="a name of GET /modes; default entity-ppr")
    top_k: int = Field(10, ge=1)
    entities: list[str] | None = Field(None, description="query entities, instead of extracting them")
    filter: bool = Field(True, description="hipporag2: the LLM recognition filter (when an LLM is configured)")
    fresh: bool = Field(False, description="graph modes: walk the current graph, waiting for its projection after "
                                           "a write (else the newest projection, which the result's writes_behind "
                                           "says is behind)")
    filters: dict[str, Any] | None = Field(None, description="metadata conditions every passage must pass, e.g. "
                                           '{"user": "u1", "created_at": {">=": "2026-01-01"}, "tag": {"in": ["a", '
                                           '"b"]}} (operators = in < <= > >=); an unknown operator or a value that '
                                           "is not a scalar is a 400 naming the field")


class QueryResponse(RetrievalResult):
    namespace: str
    cypher: str = Field(description="one read-only statement that draws this result in Neo4j Browser")


class DeleteRequest(BaseModel):
    namespace: str | None = None
    ids: list[str] = Field(min_length=1, max_length=100_000)


class DeleteResponse(DeleteReport):
    namespace: str


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
    return 422, f"{'.'.join(loc) or 'body'}: {first.get('msg', 'invalid')}{more}"


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
    from ..retrieve import MODES

    settings = settings or ServeSettings.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if close:
            memories.close()

    app = FastAPI(
        title="hippo-neo4j", version=__version__, lifespan=lifespan,
        description="HippoRAG long-term memory on Neo4j + GDS: index passages, query them with any mode and see "
        "why each passage was retrieved.",
        responses={400: {"model": ErrorBody}, 401: {"model": ErrorBody}, 404: {"model": ErrorBody},
                   413: {"model": ErrorBody}, 422: {"model": ErrorBody}, 500: {"model": ErrorBody}},
    )
    _install_errors(app)
    app.add_middleware(Faults)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    authorised = [Depends(_auth(settings))]

    # the memory endpoints are coroutines on the namespaces' AsyncHippoRAG clients: the library's blocking calls
    # run on their one bounded pool (sized from the cores), so a burst of requests queues there instead of
    # oversubscribing the machine; the event loop only parses, checks and answers

    @app.get("/health", response_model=Health, tags=["service"])
    def health() -> Health:
        return Health(status="ok", version=__version__)

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
        if body.top_k > settings.max_top_k:
            raise ConfigError(f"top_k must be at most {settings.max_top_k}.")
        result, drawing = await memories.aquery(
            body.query, namespace=body.namespace, mode=body.mode, top_k=body.top_k, entities=body.entities,
            filter=body.filter, fresh=body.fresh, filters=body.filters,
        )
        return QueryResponse.model_construct(
            **dict(result), namespace=memories.namespace(body.namespace), cypher=drawing
        )

    @app.post("/delete", response_model=DeleteResponse, dependencies=authorised, tags=["memory"])
    async def delete(body: DeleteRequest) -> DeleteResponse:
        """Remove passages and exactly their contribution to the graph."""
        report = await memories.adelete(body.ids, body.namespace)
        return DeleteResponse(namespace=memories.namespace(body.namespace), **report.model_dump())

    @app.get("/stats", dependencies=authorised, tags=["memory"])
    async def stats(namespace: str | None = Query(None, max_length=200)) -> dict[str, Any]:
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
    memories = memories_factory()
    memories.warm()
    app = create_app(memories, settings, close=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level=log_level, server_header=False)


__all__ = ["ServeSettings", "create_app", "is_loopback", "serve"]
