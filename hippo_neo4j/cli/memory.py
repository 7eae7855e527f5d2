"""The memory commands: index, import-openie, stats, reembed, rebuild-facts, delete, drop-namespace and demo."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..text import printable
from .common import connection_options, connection_settings, emit, extractor_option, json_option, open_memory
from .query import _result_text

if TYPE_CHECKING:
    from ..models import IndexReport


SHOWN_SKIPPED = 10  # skipped items the text summary names; --json lists them all


def _report_text(report: "IndexReport") -> str:
    r = report
    lines = [
        f"documents {r.documents}: unchanged {r.documents_unchanged}, removed {r.documents_removed}; "
        f"passages removed {r.passages_removed}",
    ] if r.documents or r.documents_removed else []
    lines += [
        f"passages {r.passages}: indexed {r.indexed} (updated {r.updated}), unchanged {r.unchanged}, "
        f"skipped {r.skipped_empty} empty and {r.skipped_duplicate_id} duplicate ids"
        + (f", rejected {len(r.rejected)} too long" if r.rejected else ""),
        f"triples {r.triples} kept, {r.malformed_triples} malformed and {r.self_loop_triples} self-loops skipped; "
        f"{r.no_triples} passages without triples (still found by dense and bm25)",
        f"phrases {r.new_phrases} new, synonym edges {r.synonym_edges} new",
        "time " + ", ".join(f"{k[:-2]} {v:.1f}s" for k, v in r.timings.items()),
    ]
    if r.extraction_failures:
        lines.append(
            f"extraction failed for {len(r.extraction_failures)} passages (not indexed; re-run to retry): "
            + ", ".join(printable(i) for i in r.extraction_failures[:10])
            + (" ..." if len(r.extraction_failures) > 10 else "")
        )
    if r.skipped:
        lines.append(f"not indexed {len(r.skipped)} of {r.passages} items:")
        lines += [f"  {printable(s.item)}: {printable(s.reason)}" for s in r.skipped[:SHOWN_SKIPPED]]
        if len(r.skipped) > SHOWN_SKIPPED:
            lines.append(f"  ... and {len(r.skipped) - SHOWN_SKIPPED} more")
    return "\n".join(lines)


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


@click.command("index")
@connection_options()
@click.argument("corpus", type=click.Path(exists=True))
@extractor_option
@click.option("--prune", is_flag=True,
              help="For a folder: remove the documents indexed from it before that are no longer there.")
@click.option("--passage-tokens", type=click.IntRange(16, 100_000), default=None,
              help="For documents: the most tokens of the encoder a passage may take [default: the encoder's window].")
@click.option("--dry-run", is_flag=True, help="Estimate LLM calls, tokens and cost; index nothing.")
@json_option
@click.pass_context
def index_cmd(ctx: click.Context, corpus: str, extractor_kind: str, prune: bool, passage_tokens: int | None,
              dry_run: bool, as_json: bool) -> None:
    """Index CORPUS: a folder of documents (.md, .txt, .html, .pdf), one such file, or a JSON list of
    {title, text} (optional id).

    Documents are cut into passages along their headings, paragraphs and PDF pages, within the encoder's window
    (--passage-tokens), and linked to a Document node each; indexing a folder again replaces only the passages
    whose text changed, and --prune removes the documents no longer in it.

    Extractions are cached (model, prompt version, content hash): an interrupted run resumes where it
    stopped, and re-indexing costs no LLM call. Failed passages are listed at the end and retried next run.

    Every item that is not indexed (an unreadable document, not a passage object, invalid metadata, empty, too
    long, a repeated id) is named with the reason; the rest is indexed, then the command exits with status 1 (2
    when only extractions failed).
    """
    from ..documents import SUPPORTED_SUFFIXES
    from ..extract import make_extractor
    from ..extract.factory import resolve_kind

    path = Path(corpus)
    if path.is_dir() or path.suffix.lower() in SUPPORTED_SUFFIXES:
        if prune and not path.is_dir():
            raise click.UsageError("--prune removes the documents no longer in a folder: give the folder.")
        _index_documents(ctx, path, extractor_kind, prune, passage_tokens, dry_run, as_json)
        return
    if prune or passage_tokens:
        raise click.UsageError("--prune and --passage-tokens are for documents: give a folder (or a .md, .txt, "
                               ".html or .pdf file), not a JSON corpus.")
    from ..corpus import load_corpus

    passages = load_corpus(corpus)
    if dry_run:
        _dry_run(ctx, passages, resolve_kind(extractor_kind))
        return
    extractor = make_extractor(extractor_kind)
    with open_memory(ctx, extractor=extractor) as memory:
        report = memory.index(passages, progress=not as_json)
    _index_summary(ctx, report, extractor)


def _index_documents(ctx: click.Context, path: Path, extractor_kind: str, prune: bool, passage_tokens: int | None,
                     dry_run: bool, as_json: bool) -> None:
    from ..documents import SUPPORTED_SUFFIXES, read_folder
    from ..extract import make_extractor
    from ..extract.factory import resolve_kind
    from ..models import SkippedItem

    documents, unreadable = read_folder(path, progress=not as_json)
    if not documents and not unreadable:
        click.secho(f"Error: no document under {path}: hippo index reads {', '.join(sorted(SUPPORTED_SUFFIXES))} "
                    "files, and JSON corpus files.", fg="red", err=True)
        ctx.exit(1)
    if dry_run:
        from ..documents import document_passages
        from ..encode import shared_encoder
        from ..memory import passage_budget

        count, window = passage_budget(shared_encoder())
        budget = min(passage_tokens or window, window)
        passages = [passage for d in documents for passage, _ in document_passages(d, count, budget)]
        _dry_run(ctx, passages, resolve_kind(extractor_kind))
        return
    extractor = make_extractor(extractor_kind)
    with open_memory(ctx, extractor=extractor) as memory:
        report = memory.index_documents(documents, passage_tokens=passage_tokens, prune=prune,
                                        present=[item for item, _ in unreadable], progress=not as_json)
    report.skipped += [SkippedItem(item=item, reason=reason) for item, reason in unreadable]
    _index_summary(ctx, report, extractor)


def _index_summary(ctx: click.Context, report: "IndexReport", extractor: Any) -> None:
    extraction, lines = _extraction_summary(extractor)
    emit(ctx, report.model_dump() | {"not_indexed": report.not_indexed, "extraction": extraction},
         _report_text(report) + "\n" + "\n".join(lines))
    _exit_if_not_indexed(ctx, report)


def _exit_if_not_indexed(ctx: click.Context, report: "IndexReport") -> None:
    """After the summary: exit 1 when an item was left out (2 when only extractions failed, retried next run)."""
    if report.not_indexed:
        click.secho(f"Error: {report.not_indexed} of {report.passages} items were not indexed (see above)", fg="red",
                    err=True)
        ctx.exit(1 if report.skipped else 2)


def _dry_run(ctx: click.Context, passages: list[Any], kind: str) -> None:
    from ..extract.cache import ExtractionCache
    from ..models import PassageIn

    todo = [p for p in passages if isinstance(p, PassageIn) and p.extraction is None and p.text.strip()]
    if kind == "offline":
        data = {"extractor": "offline", "passages": len(todo), "calls": 0, "cost_usd": 0.0}
        emit(ctx, data, f"{len(todo)} passages would be extracted offline (spaCy): no LLM calls, no cost.")
        return
    from ..extract.llm import estimate_cost, extractor_name
    from ..llm.settings import LLMSettings

    settings = LLMSettings.from_env()
    with ExtractionCache() as cache:  # passages already extracted by this model and prompt cost nothing
        hits = cache.get_many(extractor_name(settings), [p.hash for p in todo])
    cached = len(hits)
    todo = [p for p in todo if p.hash not in hits]
    estimate = estimate_cost(todo, settings)
    data = dataclasses.asdict(estimate) | {"cached": cached}
    emit(ctx, data, estimate.summary() + (f" ({cached} passages already cached)" if cached else ""))


@click.command("import-openie")
@connection_options()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@json_option
@click.pass_context
def import_openie_cmd(ctx: click.Context, file: str, as_json: bool) -> None:
    """Index a corpus with the extraction from a HippoRAG OpenIE file (openie_*.json); as index, every doc left out
    is named with the reason, and the command then exits 1."""
    with open_memory(ctx) as memory:
        report = memory.import_openie(file, progress=not as_json)
    emit(ctx, report.model_dump() | {"not_indexed": report.not_indexed}, _report_text(report))
    _exit_if_not_indexed(ctx, report)


@click.command("stats")
@connection_options()
@json_option
@click.pass_context
def stats_cmd(ctx: click.Context, as_json: bool) -> None:
    """Passages, phrases, and relation, synonym and mention edge counts of the namespace."""
    with open_memory(ctx) as memory:
        stats = memory.stats()
        namespace = memory.namespace
        bound = memory.encoder_binding()
    encoder = f"{bound['name']} ({bound['dimension']}-d)" if bound else "(none yet)"
    emit(ctx, {"namespace": namespace, **stats, "encoder": bound},
         "\n".join([f"namespace {namespace}"] + [f"{k} {v}" for k, v in stats.items()] + [f"encoder {encoder}"]))


@click.command("reembed")
@connection_options()
@click.option("--encoder", "encoder_name", envvar="HIPPO_ENCODER", default=None,
              help="The encoder to embed with [env HIPPO_ENCODER; default bge-small-en-v1.5].")
@json_option
@click.pass_context
def reembed_cmd(ctx: click.Context, encoder_name: str | None, as_json: bool) -> None:
    """Embed the namespace's passages, phrases and facts again with another encoder and link its synonyms
    again; the namespace is bound to that encoder afterwards."""
    from ..encode import load_encoder
    from ..memory import HippoRAG

    encoder = load_encoder(encoder_name)
    with HippoRAG(connection_settings(ctx), encoder=encoder) as memory:
        before = memory.encoder_binding()
        report = memory.reembed(encoder, progress=not as_json)
    report["before"] = before
    was = f"{before['name']}" if before else "nothing"
    emit(ctx, report, f"re-embedded namespace {report['namespace']!r} ({was} -> {report['encoder']}): "
         f"{report['passages']} passages, {report['phrases']} phrases, {report['facts']} facts; "
         f"{report['synonym_edges']} synonym edges")


@click.command("rebuild-facts")
@connection_options()
@json_option
@click.pass_context
def rebuild_facts_cmd(ctx: click.Context, as_json: bool) -> None:
    """Derive the namespace's Fact nodes (hipporag2) from its relations: for a namespace indexed before
    facts were stored. Idempotent."""
    with open_memory(ctx) as memory:
        report = memory.rebuild_facts()
    emit(ctx, report, f"{report['facts']} facts, {report['created']} created")


@click.command("delete")
@connection_options()
@click.argument("ids", nargs=-1)
@click.option("--document", "documents", multiple=True, metavar="ID",
              help="Delete a document (its id: the path relative to the folder it was indexed from) and its "
                   "passages. Repeatable.")
@json_option
@click.pass_context
def delete_cmd(ctx: click.Context, ids: tuple[str, ...], documents: tuple[str, ...], as_json: bool) -> None:
    """Delete passages by id (or whole documents with --document), with exact cleanup of the graph."""
    if not ids and not documents:
        raise click.UsageError("Name the passages to delete (IDS), or a document with --document ID.")
    from ..models import DeleteReport

    with open_memory(ctx) as memory:
        report = memory.delete(list(ids)) if ids else DeleteReport(requested=0, deleted=0)
        if documents:
            done = memory.delete_documents(documents)
            report.requested += done.requested
            report.deleted += done.deleted
            report.missing += done.missing
    text = f"deleted {report.deleted} of {report.requested} passages" + (
        f" ({len(documents) - len([d for d in documents if d in report.missing])} documents)" if documents else ""
    ) + (f"; not found: {', '.join(printable(i) for i in report.missing)}" if report.missing else "")
    emit(ctx, report.model_dump(), text)


@click.command("drop-namespace")
@connection_options("namespace")
@click.argument("namespace")
@click.option("--yes", is_flag=True, help="Confirm: delete every passage and phrase of NAMESPACE.")
@json_option
@click.pass_context
def drop_namespace_cmd(ctx: click.Context, namespace: str, yes: bool, as_json: bool) -> None:
    """Remove NAMESPACE entirely (its nodes, edges and GDS projections)."""
    if not yes:
        raise click.UsageError(f"This deletes everything in namespace {namespace!r}; add --yes to confirm.")
    from ..memory import HippoRAG

    with HippoRAG(connection_settings(ctx), namespace=namespace) as memory:
        before = memory.drop_namespace()
    emit(ctx, {"namespace": namespace, "removed": before}, f"dropped namespace {namespace!r}: {before}")


@click.command("demo")
@connection_options("namespace")
@click.option("--namespace", "demo_ns", default="demo", show_default=True)
@json_option
@click.pass_context
def demo_cmd(ctx: click.Context, demo_ns: str, as_json: bool) -> None:
    """Index a small multi-hop demo corpus and answer its questions with entity-ppr (the default), hipporag1,
    hipporag2 and dense retrieval."""
    from importlib import resources

    from ..memory import HippoRAG
    from ..models import as_passage

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
            for mode in ("entity-ppr", "hipporag1", "hipporag2", "dense"):
                result = memory.query(q["question"], mode=mode, top_k=3)
                entry[mode] = result.model_dump()
                texts.append(_result_text(result))
            out["questions"].append(entry)
            texts.append("")
    emit(ctx, out, "\n".join(texts))
