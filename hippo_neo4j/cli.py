"""The ``hippo`` command line: a thin shell over the library."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import TYPE_CHECKING, Any

import click
from neo4j.exceptions import ServiceUnavailable, SessionExpired

from . import server
from .config import ConnectionSettings, ServerSettings
from .core import MODES
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
        except (ServiceUnavailable, SessionExpired) as exc:  # the server went away mid-command
            uri = (ctx.obj or {}).get("connection_options", {}).get("uri") or "the Neo4j server"
            click.secho(
                f"Error: lost the connection to {uri} ({type(exc).__name__}). Work committed before this point "
                "is kept; run the same command again once the server is back ('hippo neo4j status').",
                fg="red",
                err=True,
            )
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


# ---------------------------------------------------------------------------------- memory commands


def open_memory(ctx: click.Context, **kwargs: Any) -> "HippoRAG":
    from .core import HippoRAG

    settings = connection_settings(ctx)
    return HippoRAG(settings, **kwargs)


def _report_text(report: "IndexReport") -> str:
    r = report
    lines = [
        f"passages {r.passages}: indexed {r.indexed} (updated {r.updated}), unchanged {r.unchanged}, "
        f"skipped {r.skipped_empty} empty and {r.skipped_duplicate_id} duplicate ids"
        + (f", rejected {len(r.rejected)} too long: {', '.join(r.rejected[:5])}" if getattr(r, "rejected", None) else ""),
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


def extractor_option(f: Any) -> Any:
    return click.option(
        "--extractor",
        "extractor_kind",
        type=click.Choice(["auto", "llm", "offline"]),
        default="auto",
        show_default=True,
        help="auto: the LLM when OPENAI_BASE_URL or OPENAI_API_KEY is set, else offline (spaCy).",
    )(f)


def _extraction_summary(extractor: Any) -> tuple[dict[str, Any], list[str]]:
    """Cache hits, failures and LLM usage of an extractor after a run."""
    data: dict[str, Any] = {"extractor": getattr(extractor, "name", None)}
    lines = [f"extractor {data['extractor']}"]
    counts = getattr(extractor, "counts", None)
    if counts is not None:
        data["cache"] = {"cached": counts.cached, "new": counts.new, "failed": counts.failed}
        data["failures"] = [dataclasses.asdict(f) for f in counts.failures]
        lines.append(counts.summary())
        for failure in counts.failures[:10]:
            lines.append(f"  failed {failure.passage_id}: {failure.error}")
    stats = getattr(getattr(extractor, "inner", extractor), "stats", None)
    if stats is not None and hasattr(stats, "summary"):
        data["llm"] = {
            "calls": stats.calls,
            "retries": stats.retries,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
            "cost_usd": round(stats.cost_usd, 6),
        }
        lines.append(stats.summary())
    return data, lines


@cli.command("index")
@click.argument("corpus", type=click.Path(exists=True))
@extractor_option
@click.option("--dry-run", is_flag=True, help="Estimate LLM calls, tokens and cost; index nothing.")
@json_option
@click.pass_context
def index_cmd(ctx: click.Context, corpus: str, extractor_kind: str, dry_run: bool, as_json: bool) -> None:
    """Index CORPUS: a JSON list of {title, text} (optional id), or a directory of .txt/.md files.

    Extractions are cached (model, prompt version, content hash): an interrupted run resumes where it
    stopped, and re-indexing costs no LLM call. Failed passages are listed at the end and retried next run.
    """
    from .core import load_corpus
    from .extract import make_extractor
    from .extract.factory import resolve_kind

    passages = load_corpus(corpus)
    if dry_run:
        _dry_run(ctx, passages, resolve_kind(extractor_kind))
        return
    extractor = make_extractor(extractor_kind)
    with open_memory(ctx, extractor=extractor) as memory:
        report = memory.index(passages, progress=not as_json)
    extraction, lines = _extraction_summary(extractor)
    emit(ctx, report.model_dump() | {"extraction": extraction}, _report_text(report) + "\n" + "\n".join(lines))
    if report.extraction_failures:
        ctx.exit(2)


def _dry_run(ctx: click.Context, passages: list[Any], kind: str) -> None:
    from .extract.cache import ExtractionCache

    todo = [p for p in passages if p.extraction is None and p.text.strip()]
    if kind == "offline":
        data = {"extractor": "offline", "passages": len(todo), "calls": 0, "cost_usd": 0.0}
        emit(ctx, data, f"{len(todo)} passages would be extracted offline (spaCy): no LLM calls, no cost.")
        return
    from .extract.llm import PROMPT_VERSION, LLMSettings, estimate_cost

    settings = LLMSettings.from_env()
    with ExtractionCache() as cache:  # passages already extracted by this model and prompt cost nothing
        hits = cache.get_many(f"llm:{settings.model}:{PROMPT_VERSION}", [p.hash for p in todo])
    cached = len(hits)
    todo = [p for p in todo if p.hash not in hits]
    estimate = estimate_cost(todo, settings)
    data = dataclasses.asdict(estimate) | {"cached": cached}
    emit(ctx, data, estimate.summary() + (f" ({cached} passages already cached)" if cached else ""))


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
    if result.facts:
        lines.append(f"facts (recognition filter: {result.filter or 'off'}):")
        lines += [
            f"  {'kept   ' if f.kept else 'dropped'} ({f.score:.3f}) {f.subject} | {f.predicate} | {f.object}"
            for f in result.facts
        ]
    if result.phrase_seeds and result.mode == "hipporag2":
        lines.append("phrase seeds: " + ", ".join(f"{s.node} ({s.weight:.3f})" for s in result.phrase_seeds))
    if result.passage_seeds:
        lines.append("largest passage seeds: " + ", ".join(f"{s.node} ({s.weight:.4f})" for s in result.passage_seeds))
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
        lines.append("(no passages)" + (f" - {result.warning}" if result.warning else ""))
    elif result.warning:
        lines.append(f"warning: {result.warning}")
    return "\n".join(lines)


def retrieval_options(max_k: int, top_k_help: str | None = None) -> Any:
    """--mode, --top-k, --entities, --extractor and --json, shared by query and ask."""

    def decorate(f: Any) -> Any:
        for option in reversed([
            click.option("--mode", type=click.Choice(list(MODES)), default="hipporag1", show_default=True,
                         help="hipporag2: facts + passage nodes; hybrid: hipporag1 fused with dense."),
            click.option("--no-filter", is_flag=True, help="hipporag2: skip the LLM recognition filter."),
            click.option("--top-k", type=click.IntRange(1, max_k), default=5, show_default=True, help=top_k_help),
            click.option("--entities", help="Query entities separated by '|' (instead of extracting them)."),
            extractor_option,
            json_option,
        ]):
            f = option(f)
        return f

    return decorate


@cli.command("query")
@click.argument("text")
@retrieval_options(1000)
@click.pass_context
def query_cmd(
    ctx: click.Context, text: str, mode: str, no_filter: bool, top_k: int, entities: str | None,
    extractor_kind: str, as_json: bool,
) -> None:
    """Retrieve the passages that answer TEXT."""
    result = _retrieve(ctx, text, mode, top_k, entities, extractor_kind, no_filter)
    emit(ctx, result.model_dump(), _result_text(result))


def _retrieve(
    ctx: click.Context, text: str, mode: str, top_k: int, entities: str | None, extractor_kind: str,
    no_filter: bool = False,
) -> "RetrievalResult":
    from .extract import make_extractor

    ents = [e.strip() for e in entities.split("|") if e.strip()] if entities is not None else None
    extractor = make_extractor(extractor_kind) if ents is None and mode in ("hipporag1", "hybrid") else None
    with open_memory(ctx, extractor=extractor) as memory:
        return memory.query(text, mode=mode, top_k=top_k, entities=ents, filter=not no_filter)


@cli.command("ask")
@click.argument("question")
@retrieval_options(50, "Passages given to the reader.")
@click.pass_context
def ask_cmd(
    ctx: click.Context, question: str, mode: str, no_filter: bool, top_k: int, entities: str | None,
    extractor_kind: str, as_json: bool,
) -> None:
    """Retrieve, then answer QUESTION from the top passages with the LLM reader."""
    from .extract.llm import llm_configured

    result = _retrieve(ctx, question, mode, top_k, entities, extractor_kind, no_filter)
    data: dict[str, Any] = {"question": question, "retrieval": result.model_dump()}
    if not llm_configured():
        data["answer"] = None
        data["reader"] = "no reader configured (set OPENAI_BASE_URL and/or OPENAI_API_KEY, and HIPPO_LLM_MODEL)"
        emit(ctx, data, _result_text(result) + f"\n\n{data['reader']}; the ranked passages are above.")
        return
    from .reader import Reader

    answer = Reader().answer(question, [f"{p.title}\n{p.text}" if p.title else p.text for p in result.passages])
    data.update(answer=answer.answer, reasoning=answer.reasoning, parsed=answer.parsed)
    used = "\n".join(f"  [{i}] {p.id}  {(p.title or p.text)[:100]}" for i, p in enumerate(result.passages, 1))
    emit(ctx, data, f"Answer: {answer.answer}\n\nReasoning: {answer.reasoning.strip()}\n\nFrom passages:\n{used}")


@cli.command("stats")
@json_option
@click.pass_context
def stats_cmd(ctx: click.Context, as_json: bool) -> None:
    """Passages, phrases, and relation, synonym and mention edge counts of the namespace."""
    with open_memory(ctx) as memory:
        stats = memory.stats()
        namespace = memory.namespace
    emit(ctx, {"namespace": namespace, **stats}, "\n".join([f"namespace {namespace}"] + [f"{k} {v}" for k, v in stats.items()]))


@cli.command("rebuild-facts")
@json_option
@click.pass_context
def rebuild_facts_cmd(ctx: click.Context, as_json: bool) -> None:
    """Derive the namespace's Fact nodes (hipporag2) from its relations: for a namespace indexed before
    facts were stored. Idempotent."""
    with open_memory(ctx) as memory:
        report = memory.rebuild_facts()
    emit(ctx, report, f"{report['facts']} facts, {report['created']} created")


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
    """Index a small multi-hop demo corpus and answer its questions with hipporag1, hipporag2 and dense retrieval."""
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
            for mode in ("hipporag1", "hipporag2", "dense"):
                result = memory.query(q["question"], mode=mode, top_k=3)
                entry[mode] = result.model_dump()
                texts.append(_result_text(result))
            out["questions"].append(entry)
            texts.append("")
    emit(ctx, out, "\n".join(texts))




def _register_evaluation_commands() -> None:
    from .cli_eval import bench_cmd, eval_cmd

    cli.add_command(eval_cmd)
    cli.add_command(bench_cmd)


_register_evaluation_commands()


def main() -> None:
    cli(obj={})


if __name__ == "__main__":
    main()
