"""``hippo serve`` (the HTTP API) and ``hippo mcp`` (the MCP server): long-running processes that keep the
encoder, the extractor and the driver loaded between requests. Both need the ``serve`` extra, imported only
when the command runs (``hippo --help`` stays fast)."""

from __future__ import annotations

import importlib.util
from typing import Any

import click

from ..errors import ConfigError
from .common import connection_options, connection_settings, extractor_option

SERVE_EXTRA = "pip install 'hippo-neo4j[serve]'"


def require(*modules: str) -> None:
    """A ConfigError naming the install command when a module of the ``serve`` extra is missing."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(f"This command needs {', '.join(missing)}, from the serve extra: {SERVE_EXTRA}")


def _memories(ctx: click.Context, extractor_kind: str) -> Any:
    from ..serve.memories import Memories

    return Memories(connection_settings(ctx), extractor=extractor_kind)


@click.command("serve")
@connection_options()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any but loopback needs HIPPO_API_KEY.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@extractor_option
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True)
@click.pass_context
def serve_cmd(ctx: click.Context, host: str, port: int, extractor_kind: str, log_level: str) -> None:
    """Serve the HTTP JSON API (index, query, delete, stats, health; OpenAPI document at /openapi.json).

    --namespace is the default of requests that name none; HIPPO_API_MAX_BODY caps request bodies (bytes);
    HIPPO_API_ALLOWED_HOSTS names the Host headers served besides loopback's, HIPPO_API_CORS_ORIGINS the web
    origins whose pages may call it.
    """
    require("fastapi", "uvicorn")
    from ..serve.http import ServeSettings, serve

    settings = ServeSettings.from_env(host=host, port=port)
    settings.check()  # before connecting: a refused bind fails at once (and serve() checks the port)
    click.echo(f"hippo-neo4j API on http://{host}:{port} (OpenAPI: /openapi.json)", err=True)
    serve(settings, lambda: _memories(ctx, extractor_kind), log_level=log_level)


@click.command("mcp")
@connection_options()
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio: the client starts this process; http: streamable HTTP at http://HOST:PORT/mcp.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="--transport http: address to listen on; any but loopback needs HIPPO_API_KEY.")
@click.option("--port", type=click.IntRange(1, 65535), default=8766, show_default=True)
@extractor_option
@click.pass_context
def mcp_cmd(ctx: click.Context, transport: str, host: str, port: int, extractor_kind: str) -> None:
    """Serve the memory to agents over MCP: tools remember, recall, forget and describe.

    --namespace is the default of tool calls that name none.
    """
    require("mcp", "uvicorn")
    from ..serve.http import ServeSettings, check_port
    from ..serve.mcp import run

    settings = ServeSettings.from_env(host=host, port=port)
    if transport == "http":
        settings.check()
        check_port(host, port)  # before the models load
    memories = _memories(ctx, extractor_kind)
    memories.warm()
    key = settings.api_key.get_secret_value() if settings.api_key is not None else None
    try:
        run(memories, "stdio" if transport == "stdio" else "streamable-http", host=host, port=port, api_key=key)
    finally:
        memories.close()
