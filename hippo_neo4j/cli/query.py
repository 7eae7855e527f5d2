"""``hippo query`` and ``hippo ask``: retrieval with any mode of the registry, and an answer from the reader
(``hippo ask --iterative``: retrieval and reasoning in turns, IRCoT)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import click

from ..config import HippoConfig
from ..errors import ConfigError, UnknownNamespace
from ..limits import TOP_K
from ..text import printable
from ..retrieve import MODES, default_mode
from .common import (connection_options, connection_settings, emit, extractor_option, json_option,
                     no_recognition_filter_option, open_memory)

if TYPE_CHECKING:
    from ..models import RetrievalResult


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
        lines.append(f"facts (recognition filter: {result.recognition_filter or 'off'}):")
        lines += [
            f"  {'kept   ' if f.kept else 'dropped'} ({f.score:.3f}) {f.subject} | {f.predicate} | {f.object}"
            for f in result.facts
        ]
    if result.phrase_seeds and result.mode in ("hipporag2", "entity-ppr"):
        lines.append("phrase seeds: " + ", ".join(f"{s.node} ({s.weight:.3f})" for s in result.phrase_seeds))
    if result.passage_seeds:
        lines.append("largest passage seeds: " + ", ".join(f"{s.node} ({s.weight:.4f})" for s in result.passage_seeds))
    if result.fell_back:
        lines.append(f"fell back to dense retrieval: {result.fallback_reason}")
    if result.filtered_passages is not None:
        lines.append(f"filters: {result.filtered_passages} passages pass")
    if result.top_phrases:
        lines.append("top phrases by PPR mass: " + ", ".join(f"{p['phrase']} ({p['mass']:.3f})" for p in result.top_phrases[:5]))
    for rank, p in enumerate(result.passages, 1):
        title = f"{p.title}: " if p.title else ""
        text = (title + p.text).replace("\n", " ")
        filled = " (filled from dense)" if p.filled else ""
        lines.append(f"{rank:>2}. [{p.score:.4f}] {p.id}{filled}  {text[:160]}{'...' if len(text) > 160 else ''}")
        if p.contributors:
            lines.append("      from " + ", ".join(f"{c.phrase} ({c.contribution:.3g})" for c in p.contributors[:3]))
        if p.signals.get("placed"):
            lines.append("      " + placed_by(p.signals))
        if p.metadata:
            lines.append("      metadata: " + ", ".join(f"{k}={v}" for k, v in p.metadata.items()))
    if not result.passages:
        lines.append("(no passages)" + (f" - {result.warning}" if result.warning else ""))
    elif result.warning:
        lines.append(f"warning: {result.warning}")
    return "\n".join(printable(line) for line in lines)  # an id or a title cannot break a line or ring a bell


def placed_by(signals: dict[str, Any]) -> str:
    """What put an entity-ppr passage where it is (``RetrievedPassage.signals``), in one line."""
    rank = lambda key: signals.get(key) if signals.get(key) is not None else "-"  # noqa: E731
    line = {
        "agreement": f"placed by agreement: dense rank {rank('dense_rank')}, entity-walk rank {rank('entity_walk_rank')}",
        "hop": f"placed by the second hop: hop rank {rank('hop_rank')}, walk rank {rank('walk_rank')}, "
               f"dense rank {rank('dense_rank')}",
        "entity": f"placed by the entity walk alone: rank {rank('entity_walk_rank')}",
        "dense": f"placed by dense alone: rank {rank('dense_rank')}",
    }.get(signals["placed"], f"placed by the walk: rank {rank('walk_rank')}")
    via = signals.get("via")
    if via:
        line += (f"; the hop returns to it (agreed itself) through {via['phrase']}" if via.get("self") else
                 f"; reached from {via['passage']} through {via['phrase']}") + (
            f" (a synonym of {via['synonym_of']})" if via.get("synonym_of") else "")
    return line


# the operator is the whole run of operator characters after the key, so that `<>`, `==` or `=>` is refused as
# an unknown operator instead of being read as `<` or `=` followed by a value that starts with `>` or `=`
FILTER = re.compile(r"\s*(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*(?:(?P<op>[<>=!~]+)|\s(?P<in>in)\s)\s*(?P<value>.*)", re.S)
FILTER_OPERATORS = ("=", "<", "<=", ">", ">=")
FILTER_GRAMMAR = ("write key=value, key<value, key<=value, key>value, key>=value or 'key in a,b' (key: letters, "
                  "digits and _; a value that starts with an operator character is quoted: key='\"<x>\"')")


def filter_value(text: str) -> Any:
    """A --filter value: JSON when it parses as a number, a boolean or a quoted string, else the text itself."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, (bool, int, float, str)) else text


def parse_filters(given: tuple[str, ...]) -> dict[str, Any] | None:
    """The filter of repeated --filter options (``key=value``, ``key>=value``, ``key in a,b``; same key: and)."""
    filters: dict[str, Any] = {}
    for text in given:
        match = FILTER.fullmatch(text)
        if match is None:
            raise click.UsageError(f"--filter {text!r}: {FILTER_GRAMMAR}.")
        key, value = match["key"], match["value"].strip()
        op = "in" if match["in"] else match["op"]
        if op not in FILTER_OPERATORS + ("in",):
            raise click.UsageError(f"--filter {text!r}: unknown operator {op!r}; {FILTER_GRAMMAR}.")
        items = [v.strip() for v in value.split(",")] if op == "in" else [value]
        if not all(items):
            raise click.UsageError(f"--filter {text!r}: a value is missing; {FILTER_GRAMMAR}.")
        value = [filter_value(v) for v in items] if op == "in" else filter_value(value)
        conditions = filters.setdefault(key, {})
        if op in conditions:
            raise click.UsageError(f"--filter {text!r}: {key} {op} is given twice.")
        conditions[op] = value
    return filters or None


def cli_filters(given: tuple[str, ...]) -> Any:
    """The checked filter of the --filter options (a usage error naming the field otherwise); None for none."""
    from ..metadata import Filters

    try:
        return Filters.parse(parse_filters(given))
    except ConfigError as exc:
        raise click.UsageError(f"--filter: {exc}") from None


def retrieval_options(max_k: int, top_k_help: str | None = None) -> Any:
    """--mode, --top-k, --entities, --filter, --extractor and --json, shared by query and ask."""

    def decorate(f: Any) -> Any:
        for option in reversed([
            click.option("--mode", type=click.Choice(list(MODES)), default=None,
                         help="[default: entity-ppr] entity-ppr: query entities "
                         "+ passages like the query, no LLM needed; hipporag2: facts + passage nodes; hybrid: "
                         "hipporag1 fused with dense."),
            no_recognition_filter_option("hipporag2: skip the LLM recognition filter."),
            click.option("--top-k", type=click.IntRange(1, max_k), default=5, show_default=True, help=top_k_help),
            click.option("--entities", help="Query entities separated by '|' (instead of extracting them)."),
            click.option("--filter", "filters", multiple=True, metavar="CONDITION",
                         help="Only passages whose metadata passes: key=value, key>=value (also <, <=, >), "
                         "'key in a,b'; repeat for and. Values are JSON when they parse (2026, true, \"007\"), "
                         "else text."),
            extractor_option,
            json_option,
        ]):
            f = option(f)
        return f

    return decorate


@click.command("query")
@connection_options()
@click.argument("text")
@retrieval_options(TOP_K)
@click.option("--cypher", "as_cypher", is_flag=True,
              help="Print the read-only Cypher statement that draws the result in Neo4j Browser (with --json: "
              "the result and the statement).")
@click.pass_context
def query_cmd(
    ctx: click.Context, text: str, mode: str, no_filter: bool, top_k: int, entities: str | None,
    filters: tuple[str, ...], extractor_kind: str, as_json: bool, as_cypher: bool,
) -> None:
    """Retrieve the passages that answer TEXT."""
    result = _retrieve(ctx, text, mode, top_k, entities, extractor_kind, no_filter, filters)
    if as_cypher:
        from ..drawing import drawing_cypher
        from ..text import scrub

        statement = drawing_cypher(result, scrub(connection_settings(ctx).namespace or ""))
        emit(ctx, {**result.model_dump(), "cypher": statement}, statement)
        return
    emit(ctx, result.model_dump(), _result_text(result))


def require_passages(memory: Any) -> None:
    """An UnknownNamespace (exit 1) for a namespace that holds no passages, as hippo serve and hippo mcp refuse it."""
    if not memory.store.has_passages():
        raise UnknownNamespace(memory.namespace)


def _retrieve(
    ctx: click.Context, text: str, mode: str, top_k: int, entities: str | None, extractor_kind: str,
    no_filter: bool = False, filters: tuple[str, ...] = (),
) -> "RetrievalResult":
    from ..extract import make_extractor

    parsed = cli_filters(filters)
    ents = [e.strip() for e in entities.split("|") if e.strip()] if entities is not None else None
    mode = mode or default_mode()
    links_entities = MODES[mode].retriever.needs_entities(MODES[mode].config(HippoConfig()))
    extractor = make_extractor(extractor_kind) if ents is None and links_entities else None
    with open_memory(ctx, extractor=extractor) as memory:
        require_passages(memory)
        # fresh: a one-shot process has no background refresh to wait for, so it walks the current graph
        return memory.query(text, mode=mode, top_k=top_k, entities=ents, recognition_filter=not no_filter, fresh=True,
                            filters=parsed)


@click.command("ask")
@connection_options()
@click.argument("question")
@retrieval_options(50, "Passages given to the reader (and retrieved at each iterative step).")
@click.option("--iterative", is_flag=True,
              help="IRCoT: the LLM writes one reasoning sentence at a time, each the next query (same mode); "
              "passages accumulate until it answers or --steps is reached.")
@click.option("--steps", type=click.IntRange(0, 10), default=3, show_default=True,
              help="--iterative: at most this many reasoning sentences (LLM calls).")
@click.pass_context
def ask_cmd(
    ctx: click.Context, question: str, mode: str, no_filter: bool, top_k: int, entities: str | None,
    filters: tuple[str, ...], extractor_kind: str, as_json: bool, iterative: bool, steps: int,
) -> None:
    """Retrieve, then answer QUESTION from the top passages with the LLM reader (--iterative: retrieve and
    reason in turns)."""
    from ..llm.settings import llm_configured

    if iterative:
        if not llm_configured():
            from ..iterative import NO_LLM

            raise ConfigError(f"--iterative: {NO_LLM}.")
        _ask_iterative(ctx, question, mode, no_filter, top_k, entities, extractor_kind, steps, filters)
        return
    result = _retrieve(ctx, question, mode, top_k, entities, extractor_kind, no_filter, filters)
    data: dict[str, Any] = {"question": question, "retrieval": result.model_dump()}
    if not llm_configured():
        data["answer"] = None
        data["reader"] = "no reader configured (set OPENAI_BASE_URL and/or OPENAI_API_KEY, and HIPPO_LLM_MODEL)"
        emit(ctx, data, _result_text(result) + f"\n\n{data['reader']}; the ranked passages are above.")
        return
    from ..reader import Reader

    answer = Reader().answer(question, [f"{p.title}\n{p.text}" if p.title else p.text for p in result.passages])
    data.update(answer=answer.answer, reasoning=answer.reasoning, parsed=answer.parsed)
    used = "\n".join(f"  [{i}] {p.id}  {(p.title or p.text)[:100]}" for i, p in enumerate(result.passages, 1))
    emit(ctx, data, f"Answer: {answer.answer}\n\nReasoning: {answer.reasoning.strip()}\n\nFrom passages:\n{used}")


def _ask_iterative(
    ctx: click.Context, question: str, mode: str, no_filter: bool, top_k: int, entities: str | None,
    extractor_kind: str, steps: int, filters: tuple[str, ...] = (),
) -> None:
    """``hippo ask --iterative``: the loop, then its answer (or the reader's, from the pooled passages, when
    the reasoning stopped without one)."""
    from ..extract import make_extractor
    from ..reader import Reader
    from ..iterative import IterativeRetrieval, explain

    ents = [e.strip() for e in entities.split("|") if e.strip()] if entities is not None else None
    mode = mode or default_mode()
    # later steps query with the model's sentences: modes that link entities extract them every step
    links_entities = MODES[mode].retriever.needs_entities(MODES[mode].config(HippoConfig()))
    extractor = make_extractor(extractor_kind) if links_entities else None
    reader = Reader()
    with open_memory(ctx, extractor=extractor) as memory:
        require_passages(memory)
        loop = IterativeRetrieval(memory, mode=mode, steps=steps, reader=reader)
        result = loop.run(question, top_k=top_k, entities=ents, recognition_filter=not no_filter, filters=cli_filters(filters))
    data: dict[str, Any] = {"question": question, "iterative": result.model_dump()}
    answer, source, reasoning = result.answer, "reasoning", " ".join(result.sentences)
    if answer is None and not result.partial:
        final = reader.answer(question, [f"{p.title}\n{p.text}" if p.title else p.text for p in result.passages])
        answer, source, reasoning = final.answer, "reader", final.reasoning
        data["parsed"] = final.parsed
    stats = reader.chat.stats
    data.update(answer=answer, answer_from=source if answer is not None else None, reasoning=reasoning,
                partial=result.partial, error=result.error,
                llm={"calls": stats.calls, "prompt_tokens": stats.prompt_tokens,
                     "completion_tokens": stats.completion_tokens})
    used = "\n".join(f"  [{i}] {p.id}  {(p.title or p.text)[:100]}" for i, p in enumerate(result.passages, 1))
    head = f"Answer: {answer}" if answer is not None else "No answer: the reasoning stopped early (see below)."
    text = (f"{head}\n\n{explain(result)}\n\nReasoning: {reasoning.strip()}\n\nFrom passages:\n{used}\n\n"
            f"{stats.summary()}")
    emit(ctx, data, text)
