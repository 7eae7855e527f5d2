"""The ``hippo`` command line: a thin shell over the library."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import TYPE_CHECKING, Any

import click

from . import server
from .config import ConnectionSettings, ServerSettings
from .errors import HippoError

if TYPE_CHECKING:
    from .core import HippoRAG, IndexReport, RetrievalResult


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


# ---------------------------------------------------------------------------------- memory commands


def open_memory(ctx: click.Context, **kwargs: Any) -> "HippoRAG":
    from .core import HippoRAG

    settings = connection_settings(ctx)
    return HippoRAG(settings, **kwargs)


def _report_text(report: "IndexReport") -> str:
    r = report
    lines = [
        f"passages {r.passages}: indexed {r.indexed} (updated {r.updated}), unchanged {r.unchanged}, "
        f"skipped {r.skipped_empty} empty and {r.skipped_duplicate_id} duplicate ids",
        f"triples {r.triples} kept, {r.malformed_triples} malformed and {r.self_loop_triples} self-loops skipped; "
        f"{r.no_triples} passages without triples (still found by dense and bm25)",
        f"phrases {r.new_phrases} new, synonym edges {r.synonym_edges} new",
        "time " + ", ".join(f"{k[:-2]} {v:.1f}s" for k, v in r.timings.items()),
    ]
    if r.extraction_failures:
        lines.append(
            f"extraction failed for {len(r.extraction_failures)} passages (not indexed; re-run to retry): "
            + ", ".join(r.extraction_failures[:10])
            + (" ..." if len(r.extraction_failures) > 10 else "")
        )
    return "\n".join(lines)


@cli.command("index")
@click.argument("corpus", type=click.Path(exists=True))
@json_option
@click.pass_context
def index_cmd(ctx: click.Context, corpus: str, as_json: bool) -> None:
    """Index CORPUS: a JSON list of {title, text} (optional id), or a directory of .txt/.md files."""
    from .core import load_corpus

    passages = load_corpus(corpus)
    with open_memory(ctx) as memory:
        report = memory.index(passages, progress=not as_json)
    emit(ctx, report.model_dump(), _report_text(report))


@cli.command("import-openie")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@json_option
@click.pass_context
def import_openie_cmd(ctx: click.Context, file: str, as_json: bool) -> None:
    """Index a corpus with the extraction from a HippoRAG OpenIE file (openie_*.json)."""
    with open_memory(ctx) as memory:
        report = memory.import_openie(file, progress=not as_json)
    emit(ctx, report.model_dump(), _report_text(report))


def _result_text(result: "RetrievalResult") -> str:
    lines = [f"mode {result.mode}  ({result.elapsed_ms:.0f} ms)"]
    if result.entities or result.mode == "hipporag1":
        lines.append("query entities: " + (", ".join(result.entities) or "(none)"))
    for link in result.linked:
        lines.append(
            f"  {link.entity!r} -> phrase {link.phrase!r} (cosine {link.similarity:.3f}, "
            f"in {link.passages} passages, seed weight {link.weight:.3f})"
        )
    if result.fell_back:
        lines.append(f"fell back to dense retrieval: {result.fallback_reason}")
    if result.top_phrases:
        lines.append("top phrases by PPR mass: " + ", ".join(f"{p['phrase']} ({p['mass']:.3f})" for p in result.top_phrases[:5]))
    for rank, p in enumerate(result.passages, 1):
        title = f"{p.title}: " if p.title else ""
        text = (title + p.text).replace("\n", " ")
        lines.append(f"{rank:>2}. [{p.score:.4f}] {p.id}  {text[:160]}{'...' if len(text) > 160 else ''}")
        if p.contributors:
            lines.append("      via " + ", ".join(f"{c.phrase} ({c.contribution:.3f})" for c in p.contributors[:3]))
    if not result.passages:
        lines.append("(no passages)")
    return "\n".join(lines)


@cli.command("query")
@click.argument("text")
@click.option("--mode", type=click.Choice(["hipporag1", "dense", "bm25"]), default="hipporag1", show_default=True)
@click.option("--top-k", type=click.IntRange(1, 1000), default=5, show_default=True)
@click.option("--entities", help="Query entities separated by '|' (instead of extracting them from TEXT).")
@json_option
@click.pass_context
def query_cmd(ctx: click.Context, text: str, mode: str, top_k: int, entities: str | None, as_json: bool) -> None:
    """Retrieve the passages that answer TEXT."""
    ents = [e.strip() for e in entities.split("|") if e.strip()] if entities is not None else None
    with open_memory(ctx) as memory:
        result = memory.query(text, mode=mode, top_k=top_k, entities=ents)
    emit(ctx, result.model_dump(), _result_text(result))


@cli.command("stats")
@json_option
@click.pass_context
def stats_cmd(ctx: click.Context, as_json: bool) -> None:
    """Passages, phrases, and relation, synonym and mention edge counts of the namespace."""
    with open_memory(ctx) as memory:
        stats = memory.stats()
        namespace = memory.namespace
    emit(ctx, {"namespace": namespace, **stats}, "\n".join([f"namespace {namespace}"] + [f"{k} {v}" for k, v in stats.items()]))


@cli.command("delete")
@click.argument("ids", nargs=-1, required=True)
@json_option
@click.pass_context
def delete_cmd(ctx: click.Context, ids: tuple[str, ...], as_json: bool) -> None:
    """Delete passages by id, with exact cleanup of the graph."""
    with open_memory(ctx) as memory:
        report = memory.delete(list(ids))
    text = f"deleted {report.deleted} of {report.requested}" + (
        f"; not found: {', '.join(report.missing)}" if report.missing else ""
    )
    emit(ctx, report.model_dump(), text)


@cli.command("drop-namespace")
@click.argument("namespace")
@click.option("--yes", is_flag=True, help="Confirm: delete every passage and phrase of NAMESPACE.")
@json_option
@click.pass_context
def drop_namespace_cmd(ctx: click.Context, namespace: str, yes: bool, as_json: bool) -> None:
    """Remove NAMESPACE entirely (its nodes, edges and GDS projections)."""
    if not yes:
        raise click.UsageError(f"This deletes everything in namespace {namespace!r}; add --yes to confirm.")
    from .core import HippoRAG

    with HippoRAG(connection_settings(ctx), namespace=namespace) as memory:
        before = memory.drop_namespace()
    emit(ctx, {"namespace": namespace, "removed": before}, f"dropped namespace {namespace!r}: {before}")


@cli.command("demo")
@click.option("--namespace", "demo_ns", default="demo", show_default=True)
@json_option
@click.pass_context
def demo_cmd(ctx: click.Context, demo_ns: str, as_json: bool) -> None:
    """Index a small multi-hop demo corpus and answer its questions with hipporag1 and dense retrieval."""
    from importlib import resources

    from .core import HippoRAG, as_passage

    root = resources.files("hippo_neo4j").joinpath("demo")
    corpus = [as_passage(d) for d in json.loads(root.joinpath("corpus.json").read_text(encoding="utf-8"))]
    questions = json.loads(root.joinpath("questions.json").read_text(encoding="utf-8"))
    out: dict[str, Any] = {"namespace": demo_ns, "questions": []}
    with HippoRAG(connection_settings(ctx), namespace=demo_ns) as memory:
        report = memory.index(corpus)
        out["index"] = report.model_dump()
        texts = [f"Indexed the demo corpus into namespace {demo_ns!r}:", _report_text(report), ""]
        for q in questions:
            entry: dict[str, Any] = {"question": q["question"], "gold": q["gold"]}
            texts.append(f"Q: {q['question']}   (gold: {', '.join(q['gold'])})")
            for mode in ("hipporag1", "dense"):
                result = memory.query(q["question"], mode=mode, top_k=3)
                entry[mode] = result.model_dump()
                texts.append(_result_text(result))
            out["questions"].append(entry)
            texts.append("")
    emit(ctx, out, "\n".join(texts))


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
