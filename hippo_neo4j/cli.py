"""The ``hippo`` command line: a thin shell over the library."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import click

from . import server
from .config import ConnectionSettings, ServerSettings
from .errors import HippoError


def emit(ctx: click.Context, data: Any, text: str) -> None:
    """Print ``text`` for people, or ``data`` as JSON with --json."""
    if ctx.find_root().params.get("as_json") or ctx.params.get("as_json"):
        click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))
    else:
        click.echo(text)


def json_option(f: Any) -> Any:
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(f)


class HippoGroup(click.Group):
    """Turns library errors into a one-line message and exit status 1, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except HippoError as exc:
            click.secho(f"Error: {exc}", fg="red", err=True)
            sys.exit(1)


@click.group(cls=HippoGroup)
@click.option("--uri", envvar="HIPPO_NEO4J_URI", help="Bolt URI [env HIPPO_NEO4J_URI; default: the local server].")
@click.option("--user", envvar="HIPPO_NEO4J_USER", help="Neo4j user [env HIPPO_NEO4J_USER; default neo4j].")
@click.option(
    "--password", envvar="HIPPO_NEO4J_PASSWORD", help="Neo4j password [env HIPPO_NEO4J_PASSWORD].", show_envvar=False
)
@click.option("--database", envvar="HIPPO_NEO4J_DATABASE", help="Database [env HIPPO_NEO4J_DATABASE; default neo4j].")
@click.option("--namespace", envvar="HIPPO_NAMESPACE", help="Corpus namespace [env HIPPO_NAMESPACE; default 'default'].")
@click.pass_context
def cli(ctx: click.Context, **options: Any) -> None:
    """hippo-neo4j: HippoRAG long-term memory on Neo4j + Graph Data Science."""
    ctx.ensure_object(dict)
    ctx.obj["connection_options"] = options


def connection_settings(ctx: click.Context) -> ConnectionSettings:
    return ConnectionSettings.from_env(**ctx.find_root().obj["connection_options"])


# ------------------------------------------------------------------------------------ hippo neo4j


@cli.group("neo4j")
def neo4j_group() -> None:
    """Run the local Neo4j + GDS server (assembled from Maven Central)."""


def _status_text(st: server.Status) -> str:
    rows = [
        ("state", st.message),
        ("uri", st.uri),
        ("neo4j", f"{st.neo4j_version or '-'} {st.edition or ''}".strip()),
        ("gds", st.gds_version or "-"),
        ("pid", str(st.pid or "-")),
        ("data", st.data_dir),
        ("log", st.log),
        ("auth", "on" if st.auth else "off (HIPPO_NEO4J_AUTH=false)"),
    ]
    return "\n".join(f"{k:<6} {v}" for k, v in rows)


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
    emit(ctx, data, _status_text(st) + f"\nhome   {data['runtime']}")
    if not st.running:
        ctx.exit(3)


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
