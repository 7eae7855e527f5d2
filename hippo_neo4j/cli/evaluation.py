"""``hippo eval``: the recall harness on the command line, with the reader's EM / F1 (``--reader``) and the
iterative variant of each mode (``--iterative``); the benchmarks are ``make bench``, in ``bench/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError
from ..retrieve import EVAL_DEFAULT, MODES
from .common import connection_options, connection_settings, emit, no_recognition_filter_option

NEEDS_LLM = (
    "{flag} needs an LLM endpoint: set OPENAI_BASE_URL (e.g. http://127.0.0.1:8080/v1 for a local llama.cpp, "
    "Ollama or vLLM server) or OPENAI_API_KEY, and HIPPO_LLM_MODEL to the model it serves."
)

MODE_CHOICES = MODES.names()


def _say(quiet: bool = False) -> Any:
    return (lambda m: None) if quiet else (lambda m: click.echo(m, err=True))


def _write_json(path: str, data: Any) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")


@click.command("eval")
@connection_options("namespace")
@click.argument("dataset_dir", type=click.Path(exists=True, file_okay=False))
@click.option("--mode", "modes", multiple=True, type=click.Choice(MODE_CHOICES),
              help="Retrieval mode or ablation to evaluate (repeatable) [default: all but plain 'hybrid'; "
              "hybrid-0.3/0.5/0.7 set λ].")
@click.option("--top-k", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Passages retrieved per question (at least 10 are always retrieved, for Recall@10).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, writable=True),
              help="Write the summary and per-question results to this JSON file.")
@click.option("--namespace", "eval_ns",
              help="Namespace of the index [default: eval-<dataset dir>[-offline]-<encoder>, -tau<τ> if τ≠0.8].")
@click.option("--synonym-threshold", "tau", type=click.FloatRange(0, 1), default=None,
              help="τ: cosine for SYNONYM edges (shapes the index) [default: the encoder's calibrated τ].")
@click.option("--damping", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=None,
              help="PPR damping (query time) [default 0.5].")
@click.option("--ppr-tolerance", type=click.FloatRange(0, min_open=True), default=None,
              help="PPR convergence tolerance (query time) [default 1e-8]; smaller for comparing servers' walks.")
@click.option("--sweep", is_flag=True, help="Also run hipporag1 over τ ∈ {0.8, 0.85, 0.9} × damping ∈ {0.3, 0.5, 0.7}.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Evaluate only the first N questions.")
@no_recognition_filter_option("hipporag2 without the LLM recognition filter (off anyway with no LLM).")
@click.option("--reindex", is_flag=True, help="Drop and rebuild the evaluation namespace(s) even if they match.")
@click.option("--no-openie", is_flag=True, help="Ignore the dataset's openie_*.json; run the extractor instead.")
@click.option("--variant", type=click.Choice(["as-written", "lower"]), default="as-written", show_default=True,
              help="Ask the questions as the dataset writes them, or in lower case, as people type into a chat box "
              "(the same index).")
@click.option("--query-entities", "entity_source",
              type=click.Choice(["question", "extractor", "named", "named-else-extractor", "gold"]),
              default="question", show_default=True,
              help="'question': each mode links the question's words to the namespace's phrases. Diagnosis only, "
              "names given to the modes instead: 'extractor' = the extractor's query entities; 'named' = spaCy named "
              "entities without noun chunks (else the extractor's with 'named-else-extractor'); 'gold' = oracle "
              "entities of the gold passages found in the question.")
@click.option("--min-link-cosine", type=click.FloatRange(-1, 1), default=None,
              help="Diagnosis only: drop query entities whose best phrase has a lower cosine.")
@click.option("--reader", "use_reader", is_flag=True,
              help="Also answer each question with the LLM reader from each mode's top passages: EM and F1 "
              "(max over the answer and its aliases), reader tokens and time. Needs OPENAI_BASE_URL / OPENAI_API_KEY.")
@click.option("--reader-top-k", type=click.IntRange(1, 50), default=5, show_default=True,
              help="Passages given to the reader (and seen at each iterative step).")
@click.option("--iterative", is_flag=True,
              help="Also run each mode iteratively (IRCoT), as '<mode>+ircot': the LLM writes a reasoning sentence, "
              "which becomes the next query. Needs an LLM.")
@click.option("--steps", type=click.IntRange(0, 10), default=3, show_default=True,
              help="--iterative: at most this many reasoning sentences (LLM calls) per question.")
@click.pass_context
def eval_cmd(
    ctx: click.Context,
    dataset_dir: str,
    modes: tuple[str, ...],
    top_k: int,
    json_out: str | None,
    eval_ns: str | None,
    tau: float | None,
    damping: float | None,
    ppr_tolerance: float | None,
    sweep: bool,
    limit: int | None,
    no_filter: bool,
    reindex: bool,
    no_openie: bool,
    variant: str,
    entity_source: str,
    min_link_cosine: float | None,
    use_reader: bool,
    reader_top_k: int,
    iterative: bool,
    steps: int,
) -> None:
    """Recall@1/2/5/10 and all-recall AR@2/5 of each mode on DATASET_DIR (questions.json, corpus.json and an
    optional openie_*.json whose extraction is imported); with --reader also the reader's EM and F1, with
    --iterative also each mode's iterative (IRCoT) variant."""
    from .. import evaluation as ev
    from ..config import HippoConfig
    from ..db import connect
    from ..encode import shared_encoder
    from ..evaluation.metrics import iterative_table, qa_table
    from ..progress import progress_bar
    from ..llm.settings import llm_configured
    from ..memory import HippoRAG

    say = _say()
    reader = None
    if use_reader or iterative:
        if not llm_configured():
            raise ConfigError(NEEDS_LLM.format(flag="--reader" if use_reader else "--iterative"))
        from ..reader import Reader

        reader = Reader()
    if min_link_cosine is not None and entity_source == "question":
        raise click.UsageError("--min-link-cosine drops query entities given to the modes: add --query-entities "
                               "extractor (or named, named-else-extractor, gold).")
    dataset = ev.load_dataset(dataset_dir, use_openie=not no_openie).subset(limit).variant(variant)
    if use_reader and not any(q.answers for q in dataset.questions):
        raise ConfigError(f"{dataset.root / 'questions.json'} has no gold answers ('answer' / 'answer_aliases') to score the reader against.")
    settings = connection_settings(ctx)
    root_ns = ctx.find_root().obj.get("connection_options", {}).get("namespace")
    base_config = HippoConfig()
    config = base_config.model_copy(
        update={k: v for k, v in {"synonym_threshold": tau, "damping": damping,
                                    "ppr_tolerance": ppr_tolerance}.items() if v is not None}
    )
    base_encoder = shared_encoder()
    base_ns = eval_ns or root_ns or ev.default_namespace(
        dataset, base_config.synonym_threshold, encoder=base_encoder.name, offline=no_openie
    )
    namespace = ev.tau_namespace(base_ns, config.synonym_threshold)
    selected = list(dict.fromkeys(modes)) or list(EVAL_DEFAULT)

    driver = connect(settings)
    try:
        encoder = ev.ReusingEncoder(base_encoder)  # τ variants reuse this index's vectors
        memory = HippoRAG(settings, namespace=namespace, config=config, driver=driver, encoder=encoder)
        outcome = ev.ensure_index(memory, dataset, reindex=reindex, progress=True, say=say)
        entities = None
        if entity_source != "question" and (any(ev.uses_entities(m, config) for m in selected) or sweep):
            say(f"query entities ({entity_source}) for {len(dataset.questions)} questions ...")
            entities = ev.diagnostic_entities(memory, dataset, entity_source, min_link_cosine=min_link_cosine)
        say(f"evaluating {', '.join(selected)} on {len(dataset.questions)} questions ...")
        if reader is not None:
            say(f"reader {reader.name} on the top {reader_top_k} passages"
                + (f"; iterative variants with at most {steps} reasoning steps" if iterative else ""))
        stage = f"evaluating {len(selected)} mode{'s' * (len(selected) != 1)}"  # a bar per question, with its ETA
        with progress_bar(True, len(dataset.questions), stage) as advance:
            result = ev.evaluate(
                memory, dataset, modes=selected, top_k=top_k, entities=entities, use_filter=not no_filter,
                reader=reader, reader_top_k=reader_top_k,
                iterative_steps=steps if iterative else None, qa=use_reader, progress=lambda _id, _n: advance(1),
            )
        result["config"] = {
            "dataset": str(dataset.root),
            "namespace": namespace,
            "questions": len(dataset.questions),
            "passages": len(dataset.passages),
            "openie": dataset.openie.name if dataset.openie else None,
            "unmatched_gold": len(dataset.unmatched_gold),
            "top_k": max(top_k, max(ev.RECALL_KS)),
            "synonym_threshold": memory.indexer.synonyms.tau(config),
            "damping": config.damping,
            "encoder": memory.encoder.name,
            "query_extractor": getattr(memory.extractor, "name", None) if entities else None,
            "query_entities": entity_source,
            "variant": variant,
            "min_link_cosine": min_link_cosine,
            "index_reused": outcome.reused,
            "recognition_filter": (
                "off" if no_filter or memory.fact_filter is None else getattr(memory.fact_filter, "name", "on")
            ),
            "index_timings": (outcome.report or {}).get("timings"),
            "reader": reader.name if use_reader and reader is not None else None,
            "reader_top_k": reader_top_k if use_reader else None,
            "iterative_steps": steps if iterative else None,
            "llm": reader.chat.stats.summary() if reader is not None else None,
            "graph": memory.stats(),
        }
        if "hipporag1" in selected:
            gold = sorted({g for q in dataset.questions for g in q.gold})
            in_graph = {r["id"]: list(r["phrases"]) for r in memory.store.run("passage_phrases", ids=gold)}
            result["diagnostics"]["hipporag1"]["analysis"] = analysis = ev.diagnose(
                result, dataset, baseline="dense" if "dense" in selected else "bm25", phrases=in_graph
            )
        text = [
            f"{dataset.name}: {len(dataset.questions)} questions ({variant}), {len(dataset.passages)} passages, "
            f"namespace {namespace!r} (τ {memory.indexer.synonyms.tau(config):g}, damping {config.damping:g})",
            "",
            ev.summary_table(result["summary"], result["diagnostics"]),
        ]
        if result.get("qa"):
            text += ["", f"reader ({reader.name if reader else ''}, top {reader_top_k} passages):", "",
                     qa_table(result["qa"], result["diagnostics"])]
        if iterative:
            text += ["", f"iterative retrieval (at most {steps} reasoning steps):", "", iterative_table(result["diagnostics"])]
        if "hipporag1" in selected:
            text += ["", "hipporag1 diagnostics: " + ", ".join(
                f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in analysis.items())]
        if sweep:
            def memory_for_tau(t: float) -> HippoRAG:
                cfg = config.model_copy(update={"synonym_threshold": t})
                return HippoRAG(settings, namespace=ev.tau_namespace(base_ns, t), config=cfg, driver=driver,
                                extractor=memory.extractor, encoder=encoder)

            say(f"remembered {encoder.remember(memory)} vectors of {namespace!r} for the τ variants")
            rows = ev.sweep(memory_for_tau, dataset, entities, reindex=reindex, say=say, progress=True)
            result["sweep"] = rows
            text += ["", "hipporag1 over τ × damping:", "", ev.sweep_table(rows)]
    finally:
        driver.close()
    if json_out:
        _write_json(json_out, result)
        text.append(f"\nwrote {json_out}")
    emit(ctx, {"summary": result["summary"], "qa": result.get("qa"), "sweep": result.get("sweep")}, "\n".join(text))
