"""What the benchmarks share (bench/README.md): datasets, the command line, timing, tables, latency against the
in-process reference, timed indexing, the server's memory, and the writer, clients and ledger of the load runs."""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Sequence, TypeVar

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the checkout's library, also when run with another interpreter
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hippo_neo4j import HippoRAG  # noqa: E402
from hippo_neo4j.config import ConnectionSettings, ServerSettings  # noqa: E402
from hippo_neo4j.corpus import load_openie  # noqa: E402
from hippo_neo4j.db import cypher  # noqa: E402
from hippo_neo4j.evaluation import load_dataset, percentile  # noqa: E402
from hippo_neo4j.evaluation.datasets import VARIANTS  # noqa: E402
from hippo_neo4j.evaluation.metrics import recall_at  # noqa: E402
from hippo_neo4j.evaluation.reference import InProcess  # noqa: E402
from hippo_neo4j.extract import make_extractor  # noqa: E402
from hippo_neo4j.models import Extraction, IndexReport, PassageIn  # noqa: E402
from hippo_neo4j.retrieve.base import PassageSeeding  # noqa: E402
from hippo_neo4j.retrieve import entity_ppr  # noqa: E402
from hippo_neo4j.retrieve.entity_ppr import (  # noqa: E402
    COSINE_PRECISION, HOP_STEPS, Ranking, agreement_chances, entity_ppr_parameters, entity_seeds, hop_sources, passage_masses,
    walk_precision, z_score_seeds)
from hippo_neo4j.retrieve.hipporag1 import ppr_parameters  # noqa: E402
from hippo_neo4j.retrieve.hipporag2 import mass_floor, passage_seeds, ppr2_parameters  # noqa: E402
from hippo_neo4j.retrieve.linking import LINK_CANDIDATES  # noqa: E402
from hippo_neo4j.text import normalize_phrase  # noqa: E402
from hippo_neo4j.runtime import server  # noqa: E402

MUSIQUE = "musique_train"
GRAPH_MODES = ("hipporag1", "hipporag2", "entity-ppr")
WIKI = "2wikimultihopqa"
# The evaluation sets a default is chosen on, with the namespace `hippo eval` indexes each into and its questions:
# musique_train with the offline extractor and with its GPT-3.5 graph, 2wikimultihopqa with the offline extractor.
EVAL_SETS = ((MUSIQUE, "eval-musique_train-offline-bge-small-en-v1.5", 100),
             (MUSIQUE, "eval-musique_train-bge-small-en-v1.5", 100),
             (WIKI, "eval-2wikimultihopqa-offline-bge-small-en-v1.5", 40))
T = TypeVar("T")
CUTOFFS = (1, 2, 5, 10)


say = functools.partial(print, flush=True)


def default_datasets_dir() -> Path:
    """``$HIPPO_DATASETS``, else ``../shared/datasets`` next to the project."""
    return Path(os.environ.get("HIPPO_DATASETS") or ROOT.parent / "shared" / "datasets")


def musique_docs() -> list[PassageIn]:
    """musique_train's passages with their recorded OpenIE extraction, with stable ids m0, m1, ..."""
    docs = load_openie(default_datasets_dir() / MUSIQUE / "openie_gpt-3.5-turbo-1106.json")
    return [d.model_copy(update={"id": f"m{i}"}) for i, d in enumerate(docs)]


class Query(NamedTuple):
    text: str
    entities: list[str]


def asked(extractor: Any, texts: Iterable[str]) -> list[Query]:
    """Each text with its query entities (extracted beforehand, as an LLM would be)."""
    return [Query(t, list(extractor.query_entities(t))) for t in texts]


def parser(doc: str) -> argparse.ArgumentParser:
    """The command line of a script, described by the first paragraph of its docstring ``doc``."""
    return argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                   formatter_class=argparse.RawDescriptionHelpFormatter)


def namespace_questions(doc: str, queries: int, more: Callable[[argparse.ArgumentParser], None] = lambda p: None
                        ) -> tuple[argparse.Namespace, Any, list[Query]]:
    """The parsed command line of a benchmark over an indexed namespace of musique_train (``--namespace``,
    ``--queries`` and what ``more`` adds), the offline extractor, and the first questions with their entities."""
    p = parser(doc)
    p.add_argument("--namespace", required=True)
    p.add_argument("--queries", type=int, default=queries)
    more(p)
    args = p.parse_args()
    extractor = make_extractor("offline")
    questions = load_dataset(default_datasets_dir() / MUSIQUE).questions[: args.queries]
    return args, extractor, asked(extractor, [q.question for q in questions])


def eval_set_options(parser: argparse.ArgumentParser) -> None:
    """--dataset / --namespace (repeated in pairs) and --questions: the evaluation sets a benchmark runs on."""
    parser.add_argument("--dataset", action="append", help="a dataset directory (repeat; each with --namespace)")
    parser.add_argument("--namespace", action="append", help="its indexed evaluation namespace")
    parser.add_argument("--questions", type=int, default=None, help="the first N questions (default: as hippo eval)")


def eval_sets(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[tuple[str, str, int | None]]:
    """The (dataset directory, namespace, questions) :func:`eval_set_options` name, else :data:`EVAL_SETS`."""
    if args.dataset:
        if len(args.namespace or []) != len(args.dataset):
            parser.error("give one --namespace per --dataset")
        return [(d, ns, args.questions) for d, ns in zip(args.dataset, args.namespace)]
    return default_eval_sets(args.questions)


def default_eval_sets(questions: int | None = None) -> list[tuple[str, str, int | None]]:
    """:data:`EVAL_SETS` as (dataset directory, namespace, questions): ``questions``, else each set's own count."""
    return [(str(default_datasets_dir() / d), ns, questions or n) for d, ns, n in EVAL_SETS]


def variants_main(doc: str, variants: dict[str, dict[str, Any]], label: str = "ranked") -> int:
    """The command line of a benchmark of fixed ``variants`` (keyword arguments of ``ReferenceGraph.entity_ppr``)
    on the evaluation sets (:func:`eval_set_options`), run by :func:`reference_variants`; ``doc``, its docstring."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    eval_set_options(parser)
    args = parser.parse_args()
    return reference_variants(lambda memory, graph: dict(variants), args.questions, label, eval_sets(parser, args))


def reference_variants(make: Callable[[HippoRAG, Any], dict[str, dict[str, Any]]], questions: int | None,
                       label: str, sets: Sequence[tuple[str, str, int | None]] | None = None) -> int:
    """Variants of entity-ppr in the in-process reference on ``sets`` (dataset directory, namespace, questions, as
    :func:`eval_sets` gives them; default :data:`EVAL_SETS`), each question as written and in lower
    case, from the phrase seeds the mode itself linked: each variant is the keyword arguments of
    ``ReferenceGraph.entity_ppr`` that ``make(memory, graph)`` gives it for a namespace; ``current`` (none) is the
    mode in the reference, beside the mode's own figures (``the mode``, its passages as the server ranked them; the
    walks' masses differ in their last digits, so a top 10 can differ below the first places: the count of
    identical ones is printed). Prints R@1/2/5/10 per set and casing; 0 when ``current`` reproduced the mode's
    recall everywhere, else 1 (bench/hop_variants.py, bench/seed_variants.py)."""
    reproduced = True
    for path, ns, n in sets or default_eval_sets(questions):
        dataset = load_dataset(path).subset(n)
        with HippoRAG(namespace=ns) as memory:
            cfg, graph = memory.config, InProcess.load(memory).ref
            variants: dict[str, dict[str, Any]] = {"current": {}} | make(memory, graph)
            for variant in VARIANTS:
                recalls: dict[str, dict[int, list[float]]] = {v: {k: [] for k in CUTOFFS} for v in ["the mode", *variants]}
                same, asked_questions = 0, dataset.variant(variant).questions
                for question in asked_questions:
                    asked = memory.query(question.question, top_k=10)
                    seeds = {s.node: s.weight for s in asked.phrase_seeds}
                    vector = memory.encoder.encode_queries([question.question])[0]
                    for k in CUTOFFS:
                        recalls["the mode"][k].append(recall_at([p.id for p in asked.passages], question.gold, k))
                    for v, given in variants.items():
                        found = graph.entity_ppr(vector, seeds, entity_share=cfg.entity_share, damping=cfg.damping,
                                                 tol=cfg.ppr_tolerance, max_iter=cfg.ppr_max_iterations,
                                                 precision=walk_precision(cfg), **given)
                        order = [pid for pid, _ in found["passages"]]
                        if not given:
                            same += order == [p.id for p in asked.passages]
                        for k in CUTOFFS:
                            recalls[v][k].append(recall_at(order, question.gold, k))
                reproduced &= all(np.mean(recalls["the mode"][k]) == np.mean(recalls["current"][k]) for k in CUTOFFS)
                say(f"\n{dataset.name}, {ns}, {variant}: 'current' gives the mode's top 10 on {same}/{len(asked_questions)}")
                say("\n".join(table([label] + [f"R@{k}" for k in CUTOFFS],
                                     [[v] + [100 * float(np.mean(r[k])) for k in CUTOFFS] for v, r in recalls.items()])))
    return 0 if reproduced else 1


# ------------------------------------------------------------------------------------ timing and figures


def timed(fn: Callable[[], Any]) -> float:
    """Milliseconds ``fn()`` took."""
    began = time.perf_counter()
    fn()
    return (time.perf_counter() - began) * 1000


class Steps:
    """Milliseconds of named steps over repeated runs: ``steps(name, fn)`` times ``fn()`` and returns its value."""

    def __init__(self, *names: str) -> None:
        self.samples: dict[str, list[float]] = {name: [] for name in names}

    def __call__(self, name: str, fn: Callable[[], T]) -> T:
        began = time.perf_counter()
        value = fn()
        self.samples.setdefault(name, []).append((time.perf_counter() - began) * 1000)
        return value

    def medians(self) -> dict[str, float | None]:
        return {name: percentile(v, 50) for name, v in self.samples.items()}


def ms(seconds: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of durations in seconds, in ms (one decimal); None without samples."""
    value = percentile(seconds, q)
    return None if value is None else round(value * 1000, 1)


def fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], digits: int = 1, left: int = 1) -> list[str]:
    """A markdown table, its first ``left`` columns aligned left; cells not text go through :func:`fmt`."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * left + "---:|" * (len(header) - left)]
    return lines + ["| " + " | ".join(c if isinstance(c, str) else fmt(c, digits) for c in row) + " |" for row in rows]


def measure_latency(memory: HippoRAG, queries: Sequence[Query], *, reference: bool = True, top_k: int = 10,
                    warmup: int = 3, block: int = 10) -> dict[str, Any]:
    """Per mode, after ``warmup`` queries: p50/p95 ms of the Neo4j path and how many answers were empty; with
    ``reference``, p50/p95 of the same retrieval in process (:class:`InProcess`), the two paths taking turns in
    blocks of ``block`` queries so that a change in the machine's load weighs on both alike."""
    inproc, cfg = InProcess.load(memory) if reference else None, memory.config
    runs: dict[str, tuple[Callable[[Query], Any], Callable[[Query], Any]]] = {
        "entity-ppr": (lambda q: memory.query(q.text, mode="entity-ppr", top_k=top_k, entities=q.entities),
                       lambda q: inproc.entity_ppr(q.text, q.entities, cfg, top_k)),
        "entity-ppr-first-hop": (  # without the second hop: the walk it adds, in the same run
            lambda q: memory.query(q.text, mode="entity-ppr-first-hop", top_k=top_k, entities=q.entities),
            lambda q: inproc.entity_ppr(q.text, q.entities, cfg.model_copy(update={"entity_hop": False}), top_k)),
        "hipporag2": (lambda q: memory.query(q.text, mode="hipporag2", top_k=top_k, recognition_filter=False),
                      lambda q: inproc.hipporag2(q.text, cfg, top_k)),
        "hipporag1": (lambda q: memory.query(q.text, mode="hipporag1", top_k=top_k, entities=q.entities),
                      lambda q: inproc.hipporag1(q.entities, cfg.damping, top_k, cfg.ppr_tolerance,
                                                 cfg.ppr_max_iterations)),
        "dense": (lambda q: memory.query(q.text, mode="dense", top_k=top_k), lambda q: inproc.dense(q.text, top_k)),
        "bm25": (lambda q: memory.query(q.text, mode="bm25", top_k=top_k), lambda q: inproc.bm25(q.text, top_k)),
    }
    out: dict[str, Any] = {}
    for mode, (neo4j_fn, local_fn) in runs.items():
        for q in queries[:warmup]:  # the first graph query of a mode projects the graph; warm caches too
            neo4j_fn(q)
            if reference:
                local_fn(q)
        steps, empty = Steps("neo4j", "inprocess"), 0
        for i in range(0, len(queries), block):
            empty += sum(not steps("neo4j", lambda q=q: neo4j_fn(q)).passages for q in queries[i : i + block])
            for q in queries[i : i + block] if reference else ():
                steps("inprocess", lambda q=q: local_fn(q))
        remote, local = steps.samples["neo4j"], steps.samples["inprocess"]
        out[mode] = {"p50": percentile(remote, 50), "p95": percentile(remote, 95), "empty": empty, "n": len(remote)}
        if reference:
            out[mode] |= {"inprocess_p50": percentile(local, 50), "inprocess_p95": percentile(local, 95)}
    return out


def profile_hipporag2(memory: HippoRAG, queries: Sequence[Query], *, top_k: int = 10) -> dict[str, float | None]:
    """Median milliseconds of each step of a hipporag2 query through Neo4j (no recognition filter)."""
    steps = Steps("encode", "facts", "dense_top_n", "projection_check", "passage_seeds", "pagerank", "ppr_passages",
                  "total")
    cfg, retriever = memory.config, memory.retriever("hipporag2")
    for q in queries:
        vector = steps("encode", lambda: memory.encoder.encode_queries([q.text])[0])
        seeds = retriever.fact_seeds(steps("facts", lambda: memory.link_facts(vector)), cfg)
        if not seeds:
            continue
        graph = steps("projection_check", lambda: memory.server.projections.ensure(memory.namespace, "passage"))
        given = None
        if cfg.passage_seed_top_n:  # seeds from the top-N dense passages: one more round trip
            given = steps("dense_top_n", lambda: retriever.passage_seed_rows(q.text, vector, cfg))

        def sources() -> dict[str, Any]:
            cosines = memory.retrieval.passage_vectors().cosines(vector, graph)
            weights = passage_seeds(cfg, cosines, given)
            return {"passageSources": cosines.sources(weights), "massFloor": mass_floor(weights, top_k, cfg.damping)}

        params = ppr2_parameters(cfg, seeds, top_k) | {"graph": graph.name, "graphVersion": graph.version} \
            | steps("passage_seeds", sources)
        steps("pagerank", lambda: memory.store.run("bench_ppr2_only", **params))  # the walk alone
        steps("ppr_passages", lambda: memory.store.run("ppr2_passages", **params))
        steps("total", lambda: memory.query(q.text, mode="hipporag2", top_k=top_k, recognition_filter=False))
    return steps.medians()


def profile_hipporag1(memory: HippoRAG, queries: Sequence[Query], *, top_k: int = 10) -> dict[str, float | None]:
    """Median milliseconds of each step of a hipporag1 query through Neo4j, its query entities given: encoding
    them, linking them (the phrase index's statement), the projection check, GDS PageRank alone on the same seeds
    (``cypher/bench_ppr_only.cypher``), the walk's statement, and the whole query; beside them, not milliseconds,
    the medians of what the statement's passage sum reads (``cypher/bench_ppr_rows.cypher``): the phrases with mass
    (``massed_phrases``), their MENTIONED_IN rows (``mention_rows``) and the passages those reach
    (``passages_reached``)."""
    steps = Steps("entities_encode", "linking", "projection_check", "pagerank", "ppr_passages", "total")
    cfg = memory.config
    for q in queries:
        names = list(dict.fromkeys(e for e in q.entities or () if normalize_phrase(e)))
        if not names:
            continue
        vectors = steps("entities_encode", lambda: memory.encoder.encode([normalize_phrase(e) for e in names]))
        rows = [{"key": e, "embedding": v.tolist()} for e, v in zip(names, vectors)]
        steps("linking", lambda: memory.store.phrase_neighbours(rows, LINK_CANDIDATES))
        seeds = {link.phrase: link.weight for link in memory.link_entities(names) if link.weight > 0}
        if not seeds:
            continue
        graph = steps("projection_check", lambda: memory.server.projections.ensure(memory.namespace, "phrase"))
        params = ppr_parameters(cfg, seeds, top_k) | {"graph": graph.name, "graphVersion": graph.version}
        steps("pagerank", lambda: memory.store.run("bench_ppr_only", **params))  # the walk alone
        steps("ppr_passages", lambda: memory.store.run("ppr_passages", **params))
        steps("total", lambda: memory.query(q.text, mode="hipporag1", top_k=top_k, entities=q.entities))
        read = memory.store.run("bench_ppr_rows", **params)[0]
        for name, field in (("massed_phrases", "phrases"), ("mention_rows", "rows"), ("passages_reached", "passages")):
            steps.samples.setdefault(name, []).append(float(read[field]))
    return steps.medians()


@contextmanager
def hop_graph(memory: HippoRAG) -> Iterator[str]:
    """Within the block, the name of a GDS projection of the namespace's mention graph as entity-ppr's second hop
    weighs it (``cypher/bench_project_hop_graph.cypher``), on which ``cypher/bench_hop_pagerank.cypher`` runs the
    same hop as GDS's PageRank; dropped afterwards."""
    name = f"bench-hop-{memory.namespace}"
    drop = "CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName"
    memory.driver.execute_query(drop, graph=name, database_=memory.database)
    memory.driver.execute_query(cypher("bench_project_hop_graph"), graph=name, ns=memory.namespace,
                                database_=memory.database)
    try:
        yield name
    finally:
        memory.driver.execute_query(drop, graph=name, database_=memory.database)


def profile_entity_ppr(memory: HippoRAG, queries: Sequence[Query], *, top_k: int = 10) -> dict[str, float | None]:
    """Median milliseconds of each step of an entity-ppr query through Neo4j, its query entities given: encoding the
    query, linking its entities (encoding them and the phrase index's statement), the projection check, the
    passage seeds, GDS PageRank alone on the walk's seeds (``cypher/bench_ppr2_only.cypher``; and stopped after one
    iteration: what a walk costs before it iterates, ``pagerank_one_iteration``), the walk's statement,
    the entity walk's (which a query runs beside the walk, on the other connection), the second hop's (after the
    entity walk, on that connection too; and ``hop_pagerank``, the same hop as GDS's PageRank stopped after
    HOP_STEPS + 1 iterations over the graph as the hop weighs it, ``cypher/bench_hop_pagerank.cypher`` on
    :func:`hop_graph`), the whole query (``total``) with the statement that reads its passages and
    their explanations timed within it (``details``: ``cypher/entity_ppr_details.cypher``), and the whole query with
    its linking after the question's encoding instead of beside it (``total_linking_in_turn``)."""
    steps = Steps("encode", "linking", "projection_check", "passage_seeds", "pagerank", "pagerank_one_iteration", "walk",
                  "entity_walk", "hop", "hop_pagerank", "total", "total_linking_in_turn", "details")
    with hop_graph(memory) as hop_name:
        _profile_entity_ppr(memory, queries, top_k, steps, hop_name)
    return steps.medians()


def _profile_entity_ppr(memory: HippoRAG, queries: Sequence[Query], top_k: int, steps: Steps, hop_name: str) -> None:
    """:func:`profile_entity_ppr`'s queries, timed into ``steps``; ``hop_name``: the projection of :func:`hop_graph`."""
    cfg, retriever = memory.config, memory.retriever("entity-ppr")
    for i, q in enumerate(queries):
        vector = steps("encode", lambda: memory.encoder.encode_queries([q.text])[0])
        linked = steps("linking", lambda: memory.link_entities(list(q.entities or ())))
        graph = steps("projection_check", lambda: memory.server.projections.ensure(memory.namespace, "mentions"))
        seeding = PassageSeeding(memory.retrieval.passage_vectors(), vector, z_score_seeds)
        sources = steps("passage_seeds", lambda: seeding(graph))
        seeds = entity_seeds(linked, cfg.entity_share)
        params = entity_ppr_parameters(cfg) | sources | {
            "graph": graph.name, "graphVersion": graph.version,
            "seeds": [{"text": t, "weight": w} for t, w in seeds.items()]}
        share = 1.0 - cfg.entity_share if seeds else 1.0  # as the walk's statement scales the passage seeds
        alone = params | {"passageSources": [[n, share * w] for n, w in sources["passageSources"]]}
        steps("pagerank", lambda: memory.store.run("bench_ppr2_only", **alone))  # the walk alone
        steps("pagerank_one_iteration", lambda: memory.store.run("bench_ppr2_only", **(alone | {"maxIterations": 1})))
        steps("walk", lambda: memory.store.run("entity_ppr_passages", **params))
        found = steps("entity_walk", lambda: memory.store.run("entity_walk", **params))
        passages = dict(zip(seeding.cosines.nodes.tolist(), seeding.cosines.ids))
        entity = Ranking.of(passage_masses(found[0]["window"], passages), walk_precision(cfg)) if found and seeds else None
        dense = Ranking.top(seeding.cosines.ids, seeding.cosines.cosine.astype(np.float64), COSINE_PRECISION)
        agreed = hop_sources(agreement_chances(len(passages), dense, entity))
        if agreed:
            hop = lambda more: memory.store.run("entity_ppr_hop", **more)  # noqa: E731
            steps("hop", lambda: retriever._hop(agreed, passages, hop, cfg, None))
            walked = lambda more: memory.store.run("bench_hop_pagerank", **(params | more | {  # noqa: E731
                "graph": hop_name, "maxIterations": HOP_STEPS + 1}))
            steps("hop_pagerank", lambda: retriever._hop(agreed, passages, walked, cfg, None))
        ask = lambda: memory.query(q.text, mode="entity-ppr", top_k=top_k, entities=q.entities)  # noqa: E731
        for beside in (True, False) if i % 2 else (False, True):  # the two forms take turns going first
            if beside:
                with timing_statement(retriever.store, "entity_ppr_details", steps, "details"):
                    steps("total", ask)
            else:
                with linking_in_turn():
                    steps("total_linking_in_turn", ask)


@contextmanager
def linking_in_turn() -> Iterator[None]:
    """Within the block, entity-ppr links the question's entities after encoding the question, not beside it: what
    running the two side by side saves (``total`` against ``total_linking_in_turn``)."""
    beside = entity_ppr.together
    entity_ppr.together = lambda first, second: (first(), second())
    try:
        yield
    finally:
        entity_ppr.together = beside


@contextmanager
def timing_statement(store: Any, statement: str, steps: Steps, step: str) -> Iterator[None]:
    """Within the block, every run of ``statement`` through ``store`` is timed as ``step``."""
    run = store.run

    def timed_run(name: str, **parameters: Any) -> Any:
        return steps(step, lambda: run(name, **parameters)) if name == statement else run(name, **parameters)

    store.run = timed_run
    try:
        yield
    finally:
        del store.run


def write_json(path: str | Path, data: Any) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    return out


# -------------------------------------------------------------------------------------------- indexing


def timed_index(memory: HippoRAG, passages: Sequence[PassageIn]) -> tuple[IndexReport, float]:
    """Index ``passages`` (the encoder loaded beforehand); the report and the wall-clock seconds minus extraction."""
    memory.encoder.encode(["warm up"])
    began = time.perf_counter()
    report = memory.index(passages, progress=True)
    return report, time.perf_counter() - began - report.timings.get("extract_s", 0.0)


def throughput(report: IndexReport, index_s: float) -> dict[str, float | None]:
    """Passages per second of wall-clock indexing time (extraction excluded), and where the time went (``embed_s``:
    the encoder's, overlapping the writes; ``encode_wait_s``: the writes waiting for it)."""
    t = report.timings
    return {"passages_per_s": report.indexed / index_s if index_s else None, "index_s": index_s,
            **{k: t.get(k, 0.0) for k in ("encode_wait_s", "embed_s", "write_s", "synonym_s", "extract_s")},
            "passages": report.indexed}


def add_one_ms(memory: HippoRAG, candidates: Sequence[PassageIn], repeats: int = 5) -> dict[str, Any]:
    """Median time to index one new passage (its extraction supplied); each is deleted again afterwards so
    the graph keeps its size."""
    samples = []
    for p in candidates[:repeats]:
        samples.append(timed(lambda p=p: memory.index([p])))
        memory.delete([p.passage_id])
    return {"median": percentile(samples, 50), "samples": samples}


def graph_query(memory: HippoRAG, mode: str, q: Query, fresh: bool = False) -> Any:
    """One query of graph ``mode`` for the write and first-query timings, its entities given: the top 10."""
    return memory.query(q.text, mode=mode, top_k=10, entities=q.entities, recognition_filter=False, fresh=fresh)


def after_write_ms(memory: HippoRAG, passages: Sequence[PassageIn], queries: Sequence[Query]) -> dict[str, Any]:
    """What a write costs the next graph query, a round per passage (docs/results.md, Writes and the next query):
    medians in ms, and the samples."""
    samples = {m: {k: [] for k in ("write", "first", "next", "fresh", "steady", "behind")} for m in GRAPH_MODES}
    for mode in GRAPH_MODES:
        graph_query(memory, mode, queries[0], fresh=True)  # every kind projected once before the rounds
    for i, p in enumerate(passages):
        q, write = queries[i % len(queries)], timed(lambda: memory.index([p]))
        for mode in GRAPH_MODES:
            found: list[Any] = []
            samples[mode]["first"].append(timed(lambda: found.append(graph_query(memory, mode, q))))
            samples[mode]["behind"].append(found[0].writes_behind)
            samples[mode]["write"].append(write)
        for mode in GRAPH_MODES:
            samples[mode]["next"].append(timed(lambda: graph_query(memory, mode, q)))
        memory.server.projections.wait_for_refreshes()
        memory.delete([p.passage_id])
        for mode in GRAPH_MODES:
            samples[mode]["fresh"].append(timed(lambda: graph_query(memory, mode, q, fresh=True)))
            samples[mode]["steady"].append(timed(lambda: graph_query(memory, mode, q)))
    return {m: {k: percentile(v, 50) for k, v in by.items()} | {"samples": by} for m, by in samples.items()}


def emptied(memory: HippoRAG) -> HippoRAG:
    """``memory`` with its namespace dropped first if a previous run left anything in it."""
    if memory.stats()["passages"] or memory.stats()["phrases"]:
        say(f"dropping the previous benchmark namespace {memory.namespace!r}")
        memory.drop_namespace()
    return memory


def drop(memory: HippoRAG, result: dict[str, Any], attempts: int = 3) -> None:
    """Drop the bench namespace; a transient failure (e.g. the server's transaction memory pool, shared with
    other clients) is retried, and a lasting one is recorded and reported instead of losing the figures."""
    for attempt in range(1, attempts + 1):
        try:
            memory.drop_namespace()
            return
        except Exception as exc:  # noqa: BLE001 - reported, and the namespace named for a manual drop
            result.setdefault("drop_errors", []).append(str(exc)[:300])
            say(f"dropping {memory.namespace!r} failed (attempt {attempt} of {attempts}): {str(exc)[:200]}")
            time.sleep(5 * attempt)
    say(f"namespace {memory.namespace!r} is left behind: drop it with HippoRAG(namespace=...).drop_namespace()")


def catalogue_size(memory: HippoRAG, name: str) -> dict[str, Any]:
    """What the GDS catalogue says of projection ``name``: its size in MiB, memory usage, nodes, relationships."""
    rec = memory.store.run("projection_size", graph=name)[0]
    return {"size_mb": rec["sizeInBytes"] / 2**20 if rec["sizeInBytes"] and rec["sizeInBytes"] > 0 else None,
            "memory_usage": rec["memoryUsage"], "nodes": rec["nodeCount"], "relationships": rec["relationshipCount"]}


def local_server(settings: ConnectionSettings) -> ServerSettings | None:
    """The local server's settings (the one ``hippo neo4j`` manages) if ``settings`` reach it, else None."""
    local = ServerSettings.from_env()
    return local if settings.uri.rstrip("/") == local.uri else None


def server_rss_mb(settings: ConnectionSettings) -> float | None:
    """VmRSS of the local server process, if ``settings`` reach it."""
    local = local_server(settings)
    pid = server.running_pid(local) if local else None
    if pid is None:
        return None
    try:  # resident pages: the second field of statm
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # the process has just ended
        return None


# ------------------------------------------------------------------------------------ concurrent writes
# One writer indexes, updates and deletes passages while clients query the same namespace; every answer is
# checked against the writer's ledger. Each thread reaches the namespace through a target of its own, the library
# (bench/concurrency.py) or hippo serve (bench/http_api.py): index(docs), delete(ids), count() (passages), and
# ask(query body) -> ((id, text, filled) per passage, the writes a graph walk had not seen or None).


def load_query(kind: str, doc: PassageIn) -> dict[str, Any]:
    """A client's query of mode ``kind`` about ``doc`` (the body of ``POST /query``): its text, and for the graph
    modes its first 4 entities; ``sentinel``: the word of :data:`SENTINEL` by bm25."""
    if kind == "sentinel":
        return {"query": f"{SENTINEL_WORD} gate", "mode": "bm25", "top_k": 3}
    body = {"query": doc.text[:300], "mode": kind, "top_k": 5, "recognition_filter": False}
    if kind in ("hipporag1", "hipporag2", "entity-ppr"):
        body["entities"] = [e for e in doc.extraction.named_entities if e.strip()][:4] or [doc.title]
    return body


@dataclass
class Ledger:
    """What the writer has begun and committed (monotonic timestamps): per passage the texts it was written with,
    and per add of it when the add began and committed and when the deletion after it began and committed (None
    until then)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    versions: dict[str, set[str]] = field(default_factory=dict)  # id -> texts ever written
    spans: dict[str, list[list[Any]]] = field(default_factory=dict)  # id -> per add, the four times above
    adds_begun: int = 0
    adds_committed: int = 0
    deletes_begun: int = 0
    deletes_committed: int = 0

    def add(self, docs: Sequence[PassageIn], write: Callable[[], Any], *, new: bool = True) -> None:
        """Record ``docs`` (their texts) as begun, ``write()`` them, record them as committed; ``new=False``: new
        texts of passages counted already (an update)."""
        with self.lock:
            for d in docs:
                self.versions.setdefault(d.passage_id, set()).add(d.text)
                if new:
                    self.spans.setdefault(d.passage_id, []).append([time.monotonic(), None, None, None])
            self.adds_begun += len(docs) * new
        write()
        with self.lock:
            self.adds_committed += len(docs) * new
            for d in docs if new else ():
                self.spans[d.passage_id][-1][1] = time.monotonic()

    def delete(self, ids: list[str], write: Callable[[], Any]) -> None:
        """Record the deletion of ``ids`` as begun, ``write()`` it, record when it committed."""
        with self.lock:
            self.deletes_begun += len(ids)
            for pid in ids:
                self.spans[pid][-1][2] = time.monotonic()
        write()
        with self.lock:
            self.deletes_committed += len(ids)
            for pid in ids:
                self.spans[pid][-1][3] = time.monotonic()

    def surely_there(self, pid: str, sent: float, answered: float) -> bool:
        """An add of ``pid`` committed before the query was sent, and its deletion had not begun by the answer."""
        with self.lock:
            return any(s[1] is not None and s[1] < sent and (s[2] is None or s[2] >= answered)
                       for s in self.spans.get(pid, ()))

    def violations(self, label: str, passages: Sequence[tuple[str, str, bool]], sent: float, answered: float
                   ) -> list[str]:
        """What is wrong with an answer to a query sent at ``sent`` and answered at ``answered``: a passage never
        written, a text never written, or a passage not indexed in between (its deletion committed before)."""
        out = []
        with self.lock:
            for pid, text, _ in passages:
                if pid not in self.versions:
                    out.append(f"{label}: {pid} was never written")
                elif text not in self.versions[pid]:
                    out.append(f"{label}: {pid} has a text that was never written")
                elif not any(s[0] < answered and (s[3] is None or s[3] >= sent) for s in self.spans[pid]):
                    out.append(f"{label}: {pid} returned after its deletion committed")
        return out


SENTINEL_WORD = "zqxvortigaunt"
SENTINEL = PassageIn(id="sentinel", title="Sentinel", text=f"The {SENTINEL_WORD} guards the gate.",
                     extraction=Extraction(named_entities=[SENTINEL_WORD], triples=[[SENTINEL_WORD, "guards", "gate"]]))


@dataclass
class Workload:
    """The writer's rounds: a batch of new passages; every ``update_every`` rounds 2 passages re-indexed with new
    text (once 20 are live); every ``delete_every`` rounds ``deletes`` passages deleted (once 40 are live); the
    sentinel passage, if there is one, indexed and deleted in turns, a round each."""

    batch: int
    update_every: int
    delete_every: int
    deletes: int
    sentinel: PassageIn | None = None


@dataclass
class LoadStats:
    """What the writer did and what the clients saw (``latencies`` per query kind and "count", in seconds)."""

    kinds: Sequence[str]
    lock: threading.Lock = field(default_factory=threading.Lock)
    latencies: dict[str, list[float]] = field(default_factory=dict)
    behind: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    sentinel: dict[str, int] = field(default_factory=lambda: {"found": 0, "missed": 0})
    wrote: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("batches", "passages", "updates", "deletes", "sentinel_toggles"), 0))

    def __post_init__(self) -> None:
        self.latencies = {k: [] for k in [*self.kinds, "count"]}

    def problem(self, kind: str, message: str, *, error: bool = False) -> None:
        with self.lock:
            (self.errors if error else self.violations).append(f"{kind}: {message}"[:500])


def error_text(exc: BaseException) -> str:
    """An error as a sample of a load report: its type, where it arose (its notes: the statement a server error
    came from) and its message."""
    notes = "; ".join(getattr(exc, "__notes__", []))
    return f"{type(exc).__name__}{f' ({notes})' if notes else ''}: {exc}"


def write_loop(target: Any, docs: list[PassageIn], preload: int, ledger: Ledger, w: Workload,
               stop: threading.Event, stats: LoadStats) -> None:
    """The writer: rounds of :class:`Workload` over ``docs[preload:]`` until ``stop`` (or the passages end)."""
    rng, stream, by_id = random.Random(1), docs[preload:], {d.passage_id: d for d in docs}
    live, sentinel = list(ledger.versions), w.sentinel
    try:
        for rounds, i in enumerate(range(0, len(stream), w.batch), start=1):
            if stop.is_set():
                break
            chunk = stream[i : i + w.batch]
            ledger.add(chunk, lambda: target.index(chunk))
            live += [d.passage_id for d in chunk]
            stats.wrote["passages"] += len(chunk)
            if rounds % w.update_every == 0 and len(live) > 20:  # same id, new text, same extraction
                updates = [by_id[pid].model_copy(update={"text": f"{by_id[pid].text} (revision {rounds})"})
                           for pid in rng.sample(live, 2)]
                ledger.add(updates, lambda: target.index(updates), new=False)
                stats.wrote["updates"] += len(updates)
            if rounds % w.delete_every == 0 and len(live) > 40:
                ids = rng.sample(live, w.deletes)
                for pid in ids:
                    live.remove(pid)
                ledger.delete(ids, lambda: target.delete(ids))
                stats.wrote["deletes"] += len(ids)
            if sentinel is not None:  # in, then out, then in ...
                if stats.wrote["sentinel_toggles"] % 2 == 0:
                    ledger.add([sentinel], lambda: target.index([sentinel]))
                else:
                    ledger.delete([sentinel.passage_id], lambda: target.delete([sentinel.passage_id]))
                stats.wrote["sentinel_toggles"] += 1
            stats.wrote["batches"] += 1
    except Exception as exc:  # noqa: BLE001
        stats.problem("writer", error_text(exc), error=True)


def query_loop(target: Any, docs: list[PassageIn], ledger: Ledger, stats: LoadStats, count_every: int,
               stop: threading.Event, seed: int) -> None:
    """A client: the query kinds of ``stats`` in turn (:func:`load_query` about a random passage), every
    ``count_every``-th request a passage count instead, each answer checked until ``stop``."""
    rng = random.Random(seed)
    n = 0
    while not stop.is_set():
        n += 1
        kind = "count" if n % count_every == 0 else stats.kinds[n % len(stats.kinds)]
        doc = rng.choice(docs)
        sent = time.monotonic()
        try:
            if kind == "count":  # between what was surely committed and what may have been
                with ledger.lock:
                    surely_added, surely_deleted = ledger.adds_committed, ledger.deletes_committed
                count = target.count()
                with ledger.lock:  # deletions and adds may begin until the answer
                    low, high = surely_added - ledger.deletes_begun, ledger.adds_begun - surely_deleted
                if not low <= count <= high:
                    stats.problem(kind, f"{count} passages outside [{low}, {high}]")
            else:
                passages, behind = target.ask(load_query(kind, doc))
                answered = time.monotonic()
                violations = ledger.violations(kind, passages, sent, answered)
                with stats.lock:
                    stats.violations += violations
                    if behind is not None:
                        stats.behind.append(behind)
                if kind == "sentinel":
                    found = any(pid == SENTINEL.passage_id and not filled for pid, _, filled in passages)
                    with stats.lock:
                        stats.sentinel["found" if found else "missed"] += 1
                    if not found and ledger.surely_there(SENTINEL.passage_id, sent, answered):
                        stats.problem(kind, "missed while it was surely indexed")
            with stats.lock:
                stats.latencies[kind].append(time.monotonic() - sent)
        except Exception as exc:  # noqa: BLE001
            stats.problem(kind, error_text(exc), error=True)


def run_load(target: Callable[[], Any], docs: list[PassageIn], stats: LoadStats, workload: Workload, *,
             preload: int, clients: int, count_every: int,
             done: Callable[[float], bool], deadline_s: float, warm: Callable[[Any], Any] = lambda t: None,
             ) -> dict[str, Any]:
    """Index ``docs[:preload]`` (then ``warm`` the namespace), then run one writer over the rest of ``docs`` and
    ``clients`` query clients, each through a ``target()`` of its own, until ``done(elapsed seconds)`` holds, a
    thread has ended (a writer that failed or ran out of passages) or ``deadline_s`` has passed."""
    ledger, stop = Ledger(), threading.Event()
    admin = target()
    ledger.add(docs[:preload], lambda: admin.index(docs[:preload]))
    warm(admin)
    threads = [threading.Thread(target=write_loop, name="writer",
                                args=(target(), docs, preload, ledger, workload, stop, stats))]
    threads += [threading.Thread(target=query_loop, name=f"client-{k}", args=(
        target(), docs[: preload + 200], ledger, stats, count_every, stop, k)) for k in range(clients)]
    began = time.monotonic()
    for t in threads:
        t.start()
    while not done(time.monotonic() - began) and all(t.is_alive() for t in threads) \
            and time.monotonic() - began < deadline_s:
        time.sleep(0.02)
    reached = done(time.monotonic() - began)
    stop.set()
    for t in threads:
        t.join(120)
    wall, queries = time.monotonic() - began, [x for kind in stats.kinds for x in stats.latencies[kind]]
    return {
        "seconds": round(wall, 1), "reached": reached, "clients": clients, "queries": len(queries),
        "requests": len(queries) + len(stats.latencies["count"]), "count_checks": len(stats.latencies["count"]),
        "queries_per_s": round(len(queries) / wall, 1), "p50_ms": ms(queries, 50), "p95_ms": ms(queries, 95),
        "per_mode": {k: {"queries": len(v), "p50_ms": ms(v, 50), "p95_ms": ms(v, 95)}
                     for k, v in stats.latencies.items()},
        "errors": len(stats.errors), "error_samples": stats.errors[:10],
        "violations": len(stats.violations), "violation_samples": stats.violations[:10],
        "hung_threads": [t.name for t in threads if t.is_alive()], "writer": stats.wrote,
        "sentinel_answers": stats.sentinel,
    }

