"""``hippo neo4j start|stop|status``: the local Neo4j + GDS server."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import click

from ..config import NEO4J_LINES, ServerSettings
from ..runtime import server
from .common import emit, json_option


@click.group("neo4j")
def neo4j_group() -> None:
    """Run the local Neo4j + GDS server (assembled from Maven Central)."""


def line_option(f: Any) -> Any:
    return click.option(
        "--line", type=click.Choice(NEO4J_LINES), default=None,
        help=f"Neo4j line [env HIPPO_NEO4J_LINE; default {NEO4J_LINES[0]}]; each line has its own data directory.",
    )(f)


def _settings(line: str | None) -> ServerSettings:
    """The local server's settings, for ``line`` when given (as HIPPO_NEO4J_LINE would)."""
    if line:
        os.environ["HIPPO_NEO4J_LINE"] = line  # this process's own environment: the clients it opens see the line too
    return ServerSettings.from_env()


def _status_text(st: server.Status) -> str:
    rows = [
        ("state", st.message),
        ("line", st.line),
        ("uri", st.uri),
        ("browser", st.browser or "off (HIPPO_NEO4J_HTTP_PORT=0)"),
        ("neo4j", f"{st.neo4j_version or '-'} {st.edition or ''}".strip()),
        ("gds", st.gds_version or "-"),
        ("pid", str(st.pid or "-")),
        ("data", st.data_dir),
        ("log", st.log),
        ("auth", "on" if st.auth else "off (HIPPO_NEO4J_AUTH=false)"),
    ]
    return "\n".join(f"{k:<7} {v}" for k, v in rows)


@neo4j_group.command("start")
@line_option
@json_option
@click.pass_context
def neo4j_start(ctx: click.Context, line: str | None, as_json: bool) -> None:
    """Start the server in the background; wait until Bolt and GDS answer."""
    settings = _settings(line)
    say = (lambda m: click.echo(m, err=True)) if not as_json else (lambda m: None)
    st = server.start(settings, say=say)
    data = dataclasses.asdict(st) | {"password_file": str(settings.password_file) if settings.auth else None}
    emit(ctx, data, _status_text(st))


@neo4j_group.command("stop")
@line_option
@json_option
@click.pass_context
def neo4j_stop(ctx: click.Context, line: str | None, as_json: bool) -> None:
    """Stop the server gracefully."""
    message = server.stop(_settings(line))
    emit(ctx, {"message": message}, message)


@neo4j_group.command("status")
@line_option
@json_option
@click.pass_context
def neo4j_status(ctx: click.Context, line: str | None, as_json: bool) -> None:
    """Print Neo4j and GDS versions, URI, data directory and pid."""
    settings = _settings(line)
    st = server.status(settings)
    data = dataclasses.asdict(st) | {
        "runtime": str(server.runtime_home(settings)),
        "password_file": str(settings.password_file) if settings.auth else None,
    }
    emit(ctx, data, _status_text(st) + f"\nhome    {data['runtime']}")
    if not st.running:
        ctx.exit(3)
