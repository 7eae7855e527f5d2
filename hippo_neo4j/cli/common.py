"""What every ``hippo`` command shares: output (text, or JSON with --json), errors as one line, and the connection
options, which are accepted before or after the command name (``hippo query "..." --namespace demo``)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click
from neo4j.exceptions import ServiceUnavailable, SessionExpired

from ..config import ConnectionSettings
from ..errors import HippoError

if TYPE_CHECKING:
    from ..memory import HippoRAG


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
        except (ServiceUnavailable, SessionExpired) as exc:  # the server went away mid-command
            uri = (ctx.obj or {}).get("connection_options", {}).get("uri") or "the Neo4j server"
            click.secho(
                f"Error: lost the connection to {uri} ({type(exc).__name__}). Work committed before this point "
                "is kept; run the same command again once the server is back ('hippo neo4j status').",
                fg="red",
                err=True,
            )
            sys.exit(1)


# (name, flag, environment variable, help): the root group reads the environment; the same flags after a
# command name override it (and the root's flags)
CONNECTION_OPTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("uri", "--uri", "HIPPO_NEO4J_URI", "Bolt URI [env HIPPO_NEO4J_URI; default: the local server]."),
    ("user", "--user", "HIPPO_NEO4J_USER", "Neo4j user [env HIPPO_NEO4J_USER; default neo4j]."),
    ("password", "--password", "HIPPO_NEO4J_PASSWORD", "Neo4j password [env HIPPO_NEO4J_PASSWORD]."),
    ("database", "--database", "HIPPO_NEO4J_DATABASE", "Database [env HIPPO_NEO4J_DATABASE; default neo4j]."),
    ("namespace", "--namespace", "HIPPO_NAMESPACE", "Corpus namespace [env HIPPO_NAMESPACE; default 'default']."),
)


def root_connection_options(f: Any) -> Any:
    """The connection options of the root group, read from the environment when not given."""
    for name, flag, env, text in reversed(CONNECTION_OPTIONS):
        f = click.option(flag, name, envvar=env, help=text, show_envvar=False)(f)
    return f


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is not None:
        ctx.find_root().ensure_object(dict).setdefault("connection_options", {})[param.name] = value


def connection_options(*skip: str) -> Any:
    """The connection options after a command name (all but ``skip``, which the command defines itself)."""

    def decorate(f: Any) -> Any:
        for name, flag, _env, text in reversed(CONNECTION_OPTIONS):
            if name not in skip:
                f = click.option(flag, name, expose_value=False, callback=_remember, help=text)(f)
        return f

    return decorate


def connection_settings(ctx: click.Context) -> ConnectionSettings:
    return ConnectionSettings.from_env(**ctx.find_root().obj["connection_options"])


def open_memory(ctx: click.Context, **kwargs: Any) -> "HippoRAG":
    from ..memory import HippoRAG

    return HippoRAG(connection_settings(ctx), **kwargs)


def no_recognition_filter_option(text: str) -> Any:
    """``--no-recognition-filter`` (the ``no_filter`` argument), and its deprecated name ``--no-filter``, which sat
    beside ``--filter`` (metadata) and meant something else: still read, with a warning, until the next release."""

    def old(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if not value:
            return
        click.secho("Warning: --no-filter is deprecated (removed in the next release): use --no-recognition-filter "
                    "(--filter is for metadata).", fg="yellow", err=True)
        if "no_filter" in ctx.params:
            ctx.params["no_filter"] = True
        else:
            ctx.meta["hippo.no_filter"] = True

    def new(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
        return value or ctx.meta.pop("hippo.no_filter", False)

    def decorate(f: Any) -> Any:
        f = click.option("--no-filter", "old_no_filter", is_flag=True, hidden=True, expose_value=False, callback=old)(f)
        return click.option("--no-recognition-filter", "no_filter", is_flag=True, callback=new, help=text)(f)

    return decorate


def extractor_option(f: Any) -> Any:
    return click.option(
        "--extractor",
        "extractor_kind",
        type=click.Choice(["auto", "llm", "offline"]),
        default="auto",
        show_default=True,
        help="auto: the LLM when OPENAI_BASE_URL or OPENAI_API_KEY is set, else offline (spaCy).",
    )(f)
