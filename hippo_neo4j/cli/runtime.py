"""``hippo neo4j start|stop|status``: the local Neo4j + GDS server."""

from __future__ import annotations

import dataclasses

import click

from ..config import ServerSettings
from ..runtime import server
from .common import emit, json_option


@click.group("neo4j")
def neo4j_group() -> None:
    """Run the local Neo4j + GDS server (assembled from Maven Central)."""


def _status_text(st: server.Status) -> str:
    rows = [
        ("state", st.message),
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
@json_option
@click.pass_context
def neo4j_start(ctx: click.Context, as_json: bool) -> None:
    """Start the server in the background; wait until Bolt and GDS answer."""
    settings = ServerSettings.from_env()
    say = (lambda m: click.echo(m, err=True)) if not as_json else (lambda m: None)
    st = server.start(settings, say=say)
    data = dataclasses.asdict(st) | {"password_file": str(settings.password_file) if settings.auth else None}
    emit(ctx, data, _status_text(st))


@neo4j_group.command("stop")
@json_option
@click.pass_context
def neo4j_stop(ctx: click.Context, as_json: bool) -> None:
    """Stop the server gracefully."""
    message = server.stop(ServerSettings.from_env())
    emit(ctx, {"message": message}, message)


@neo4j_group.command("status")
@json_option
@click.pass_context
def neo4j_status(ctx: click.Context, as_json: bool) -> None:
    """Print Neo4j and GDS versions, URI, data directory and pid."""
    settings = ServerSettings.from_env()
    st = server.status(settings)
    data = dataclasses.asdict(st) | {
        "runtime": str(server.runtime_home(settings)),
        "password_file": str(settings.password_file) if settings.auth else None,
    }
    emit(ctx, data, _status_text(st) + f"\nhome    {data['runtime']}")
    if not st.running:
        ctx.exit(3)
