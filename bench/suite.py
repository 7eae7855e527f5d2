"""The benchmark suite (``make bench``, or ``python bench/suite.py``): retrieval latency next to the same retrieval in
process, indexing throughput against the encoder alone, the first query after a write, the cost of adding one
passage as the graph grows, step profiles of hipporag1 and hipporag2, server memory and projection size.
``--scale SIZES`` runs the scale curve instead (bench/scale.py, with its own options).

Output (issue 5)::

    {"latency_ms": {DATASET: {MODE: {"p50", "p95", "inprocess_p50"}}},
     "index": {DATASET: {"passages_per_s", "embed_s", "write_s", "synonym_s"}},
     (musique_train also: "index_s", "encoder_only_s", "encoder_ratio")
     "add_one_ms": {"1000", "3000", "6000"}, "server_rss_mb", "projection_mb"}

plus ``profile_ms`` and ``profile_hipporag2_ms`` (where a query's time goes), ``after_write_ms``, ``graph``
sizes and ``meta``.

Latency excludes query NER (the entities are extracted beforehand, as an LLM would be) and includes
everything after it: encoding, linking, the projection check, PPR and aggregation. The in-process figure
runs the same steps with numpy/scipy over the graph read back from Neo4j (:class:`ReferenceGraph` plus the
phrase and passage embeddings), with the same encoder. Throughput excludes extraction time.

``index_s`` is the wall-clock time of indexing musique_train (extraction excluded), ``encoder_only_s`` the
encoder alone on the texts indexing embeds (:func:`index_against_encoder`): their ratio is how close indexing is
to the encoder bound.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from common import (MUSIQUE, WIKI, Query, Say, Steps, add_one_ms, catalogue_size, default_datasets_dir, drop, emptied,
                    fmt, p50_p95, parser, say, server_rss_mb, table, throughput, timed, timed_index, write_json)

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import ConnectionSettings
from hippo_neo4j.corpus import load_corpus
from hippo_neo4j.db import connect
from hippo_neo4j.evaluation import load_dataset, percentile
from hippo_neo4j.evaluation.reference import InProcess
from hippo_neo4j.extract import make_extractor
from hippo_neo4j.graph import projection
from hippo_neo4j.graph.indexing import PhraseNormaliser
from hippo_neo4j.models import IndexReport, PassageIn
from hippo_neo4j.retrieve.hipporag1 import ppr_parameters
from hippo_neo4j.retrieve.hipporag2 import mass_floor, ppr2_parameters
from hippo_neo4j.retrieve.hipporag2 import passage_seeds as hipporag2_seeds
from hippo_neo4j.text import normalize_phrase

ADD_ONE_SIZES: tuple[int, ...] = (1000, 3000, 6000)
GRAPH_MODES = ("hipporag1", "hipporag2", "entity-ppr")


def measure_latency(memory: HippoRAG, queries: Sequence[Query], *, top_k: int = 10, warmup: int = 3, block: int = 10
                    ) -> dict[str, Any]:
    """p50/p95 of the Neo4j path and p50 of the in-process path, per mode, on the same queries; the two paths
    take turns in blocks of ``block`` queries, so that a change in the machine's load weighs on both alike
    (one query each in turn would make each path evict the other's caches before every query)."""
    inproc, cfg = InProcess.load(memory), memory.config
    runs: dict[str, tuple[Callable[[Query], Any], Callable[[Query], Any]]] = {
        "entity-ppr": (lambda q: memory.query(q.text, mode="entity-ppr", top_k=top_k, entities=q.entities),
                       lambda q: inproc.entity_ppr(q.text, q.entities, cfg, top_k)),
        "hipporag2": (lambda q: memory.query(q.text, mode="hipporag2", top_k=top_k, filter=False),
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
            local_fn(q)
        remote: list[float] = []
        local: list[float] = []
        for i in range(0, len(queries), block):
            remote += [timed(lambda q=q: neo4j_fn(q)) for q in queries[i : i + block]]
            local += [timed(lambda q=q: local_fn(q)) for q in queries[i : i + block]]
        out[mode] = p50_p95(remote) | {"inprocess_p50": percentile(local, 50), "inprocess_p95": percentile(local, 95)}
    return out


def profile_hipporag1(memory: HippoRAG, queries: Sequence[Query], *, top_k: int = 10) -> dict[str, float | None]:
    """Median milliseconds of each step of a hipporag1 query through Neo4j."""
    steps = Steps("encode", "link", "projection_check", "ppr", "ppr_and_aggregate", "total")
    for q in queries:
        names = [normalize_phrase(e) for e in dict.fromkeys(q.entities) if normalize_phrase(e)]
        if not names:
            continue
        steps("encode", lambda: memory.encoder.encode(names))
        seeds = {link.phrase: link.weight for link in steps("link", lambda: memory.link_entities(q.entities))
                 if link.weight > 0}
        if not seeds:
            continue
        graph = steps("projection_check", lambda: projection.ensure(memory.driver, memory.database, memory.namespace))
        params = ppr_parameters(memory.config, seeds, top_k) | {"graph": graph.name, "graphVersion": graph.version}
        steps("ppr", lambda: memory.store.run("bench_ppr_only", **params))
        steps("ppr_and_aggregate", lambda: memory.store.run("ppr_passages", **params))
        steps("total", lambda: memory.query(q.text, mode="hipporag1", top_k=top_k, entities=q.entities))
    result = steps.medians()
    if result["link"] is not None and result["encode"] is not None:
        result["link_without_encode"] = result["link"] - result["encode"]
    if result["ppr_and_aggregate"] is not None and result["ppr"] is not None:
        result["aggregate"] = result["ppr_and_aggregate"] - result["ppr"]
    return result


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
        graph = steps("projection_check", lambda: projection.ensure(
            memory.driver, memory.database, memory.namespace, "passage"))
        given = None
        if cfg.passage_seed_top_n:  # seeds from the top-N dense passages: one more round trip
            given = steps("dense_top_n", lambda: retriever.passage_seed_rows(q.text, vector, cfg))

        def passage_seeds() -> dict[str, Any]:
            cosines = memory.retrieval.passage_vectors().cosines(vector, graph)
            weights = hipporag2_seeds(cfg, cosines, given)
            return {"passageSources": cosines.sources(weights), "massFloor": mass_floor(weights, top_k, cfg.damping)}

        sources = steps("passage_seeds", passage_seeds)
        params = ppr2_parameters(cfg, seeds, top_k) | {"graph": graph.name, "graphVersion": graph.version} | sources
        steps("pagerank", lambda: memory.store.run("bench_ppr2_only", **params))  # the walk alone
        steps("ppr_passages", lambda: memory.store.run("ppr2_passages", **params))
        steps("total", lambda: memory.query(q.text, mode="hipporag2", top_k=top_k, filter=False))
    return steps.medians()


def encoder_calls(memory: HippoRAG, passages: Sequence[PassageIn]) -> tuple[list[list[str]], dict[str, int]]:
    """The encoder calls indexing ``passages`` into an empty namespace makes, and how many texts of each kind.

    Per batch of ``batch_size`` accepted passages: their full texts, the batch's phrases not in an earlier
    batch, and its facts not in an earlier batch (normalised by the indexer's own :class:`PhraseNormaliser`).
    """
    todo = memory.indexer.accept(list(passages), memory.config, IndexReport())
    size, normaliser = max(1, memory.config.batch_size), PhraseNormaliser()
    calls: list[list[str]] = []
    seen_phrases: set[str] = set()
    seen_facts: set[str] = set()
    counts = {"passages": 0, "new_phrases": 0, "new_facts": 0}
    for start in range(0, len(todo), size):
        ok = [p for p in todo[start : start + size] if p.extraction is not None]
        if not ok:
            continue
        batch = normaliser.normalise(ok)
        phrases = [t for t in batch.phrases if t not in seen_phrases]
        facts = [f["text"] for fid, f in batch.facts.items() if fid not in seen_facts]
        seen_phrases.update(batch.phrases)
        seen_facts.update(batch.facts)
        calls += [[p.full_text for p in ok], phrases, facts]
        for key, texts in (("passages", ok), ("new_phrases", phrases), ("new_facts", facts)):
            counts[key] += len(texts)
    return calls, counts


def index_against_encoder(memory: HippoRAG, passages: Sequence[PassageIn], say: Say) -> tuple[IndexReport, dict]:
    """Index ``passages`` (into an empty namespace) and time the encoder alone on the same texts, once before
    and once after (the mean is the figure: it brackets the load of a shared machine)."""
    calls, counts = encoder_calls(memory, passages)

    def encoder_only_s() -> float:
        memory.encoder.encode(["warm up"])
        began = time.perf_counter()
        for texts in calls:
            memory.encoder.encode(texts)
        return time.perf_counter() - began

    before = encoder_only_s()
    say(f"the encoder alone on the texts indexing embeds: {before:.1f} s")
    report, index_s = timed_index(memory, passages)
    indexed = {"passages": report.indexed, "new_phrases": report.new_phrases, "new_facts": report.new_facts}
    if counts != indexed:
        raise RuntimeError(f"encoder-only texts {counts} are not what indexing embedded {indexed}")
    after = encoder_only_s()
    alone = (before + after) / 2
    say(f"indexed in {index_s:.1f} s (extraction excluded); the encoder alone again: {after:.1f} s; "
        f"ratio {index_s / alone:.2f}")
    return report, {"index_s": index_s, "encoder_only_s": alone, "encoder_only_runs_s": [before, after],
                    "encoder_ratio": index_s / alone if alone else None, "encoded": counts}


def after_write_ms(memory: HippoRAG, candidates: Sequence[PassageIn], queries: Sequence[Query], *, rounds: int = 5,
                   top_k: int = 10) -> dict[str, Any]:
    """What a write costs the next graph query: per round, index one new passage, then time the first query of
    each graph mode on a question (the newest complete projection, refreshed in the background), the same
    query with ``fresh=True`` after the next write (it waits for the current projection), and a steady query;
    the passage is deleted again afterwards. Medians in ms, and how many writes the first query had not seen."""
    def ask(mode: str, q: Query, fresh: bool = False) -> Any:
        return memory.query(q.text, mode=mode, top_k=top_k, entities=q.entities, filter=False, fresh=fresh)

    samples = {m: {"first": [], "fresh": [], "steady": [], "behind": []} for m in GRAPH_MODES}
    for mode in GRAPH_MODES:
        ask(mode, queries[0], fresh=True)  # every kind projected once before the rounds
    for i, p in enumerate(candidates[:rounds]):
        q = queries[i % len(queries)]
        memory.index([p])
        for mode in GRAPH_MODES:
            began = time.perf_counter()
            result = ask(mode, q)
            samples[mode]["first"].append((time.perf_counter() - began) * 1000)
            samples[mode]["behind"].append(result.writes_behind)
        projection.wait_for_refreshes(memory.driver)
        memory.delete([p.passage_id])
        for mode in GRAPH_MODES:
            samples[mode]["fresh"].append(timed(lambda mode=mode: ask(mode, q, fresh=True)))
            samples[mode]["steady"].append(timed(lambda mode=mode: ask(mode, q)))
    return {m: {k: statistics.median(v) for k, v in by.items()} | {"first_samples": by["first"]}
            for m, by in samples.items()}


def projection_mb(memory: HippoRAG, kind: str = "phrase") -> dict[str, Any]:
    size = catalogue_size(memory, projection.ensure(memory.driver, memory.database, memory.namespace, kind).name)
    return {"mb": size.pop("size_mb"), **size}


def index_musique(memory: HippoRAG, datasets: Path, extractor: Any, queries: int, result: dict[str, Any]
                  ) -> tuple[list[Query], list[PassageIn]]:
    """musique_train indexed with the OpenIE file's extraction, against the encoder alone; its questions."""
    dataset = load_dataset(datasets / MUSIQUE)
    say(f"indexing {MUSIQUE}: {len(dataset.passages)} passages with the OpenIE file's extraction")
    report, versus = index_against_encoder(memory, dataset.passages, say)
    result["index"][MUSIQUE] = throughput(report, versus["index_s"]) | versus
    qs = [Query(q.question, list(extractor.query_entities(q.question))) for q in dataset.questions[:queries]]
    return qs, dataset.passages


def index_wiki(memory: HippoRAG, datasets: Path, extractor: Any, queries: int, result: dict[str, Any]
               ) -> tuple[list[Query], list[PassageIn]]:
    """2Wiki's corpus with offline extraction, indexed up to each of ADD_ONE_SIZES passages (adding one passage
    timed there), then the rest. 2Wiki has no questions here: the first sentence of passages sampled with a
    fixed seed stands for one."""
    corpus = [p for p in load_corpus(datasets / WIKI / "corpus.json") if p.text.strip()]
    corpus = list({p.passage_id: p for p in corpus}.values())
    say(f"offline extraction of {len(corpus)} {WIKI} passages (cached after the first run)")
    began = time.perf_counter()
    extracted = extractor.extract(corpus)
    extract_s = time.perf_counter() - began
    corpus = [p.model_copy(update={"extraction": e}) for p, e in zip(corpus, extracted) if e is not None]
    total, total_s, size = IndexReport(), 0.0, 0
    spare = corpus[max(ADD_ONE_SIZES):]  # passages beyond the largest size serve as the "one new passage"
    for target in ADD_ONE_SIZES:
        if target > len(corpus) - len(spare):
            break
        say(f"indexing {WIKI} up to {target} passages")
        part, seconds = timed_index(memory, corpus[size:target])
        total.merge(part)
        total_s, size = total_s + seconds, target
        timing = add_one_ms(memory, spare)
        result["add_one_ms"][str(target)] = timing["median"]
        result["add_one_samples_ms"][str(target)] = timing["samples"]
        say(f"add one passage at {target}: {timing['median']:.0f} ms (median of {len(timing['samples'])})")
    part, seconds = timed_index(memory, corpus[size:])
    total.merge(part)
    result["index"][WIKI] = throughput(total, total_s + seconds) | {"extract_s": extract_s}
    rng = random.Random(0)
    qs = []
    for p in rng.sample(list(corpus), min(queries, len(corpus))):
        sentence = re.split(r"(?<=[.!?])\s+", p.text.strip(), maxsplit=1)[0][:300]
        qs.append(Query(sentence, list(extractor.query_entities(sentence))))
    return qs, corpus


def run(connection: ConnectionSettings, datasets: Path, *, queries: int = 100, only: str = "all") -> dict[str, Any]:
    """Every benchmark of issue 5, in namespaces ``bench-<dataset>`` (rebuilt from scratch, dropped after)."""
    extractor = make_extractor("offline")
    result: dict[str, Any] = {
        "latency_ms": {}, "index": {}, "add_one_ms": {str(s): None for s in ADD_ONE_SIZES},
        "server_rss_mb": None, "projection_mb": None,
        "profile_ms": {}, "graph": {}, "projections": {}, "add_one_samples_ms": {},
        "meta": {"queries": queries, "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M")},
    }
    driver = connect(connection)
    made: list[HippoRAG] = []
    try:
        for name, short, index in ((MUSIQUE, "musique", index_musique), (WIKI, "2wiki", index_wiki)):
            if only not in ("all", short):
                continue
            memory = HippoRAG(connection, namespace=f"bench-{name}", driver=driver, extractor=extractor)
            made.append(emptied(memory, say))
            qs, passages = index(memory, datasets, extractor, queries, result)
            say(f"latency on {name} ({len(qs)} queries per mode)")
            result["latency_ms"][name] = measure_latency(memory, qs)
            if name == MUSIQUE:
                say(f"the first graph query after a write on {MUSIQUE}")
                copies = [p.model_copy(update={"id": f"bench-write-{i}", "text": f"{p.text} (revised)"})
                          for i, p in enumerate(passages[:5])]
                result["after_write_ms"] = {MUSIQUE: after_write_ms(memory, copies, qs)}
            result["profile_ms"][name] = profile_hipporag1(memory, qs)
            if name == MUSIQUE:
                result["profile_hipporag2_ms"] = {MUSIQUE: profile_hipporag2(memory, qs)}
            result["graph"][name] = memory.stats()
            result["projections"][name] = projection_mb(memory)
            result["projections"][f"{name} with passages"] = projection_mb(memory, "passage")
        result["server_rss_mb"] = server_rss_mb(connection)
        sizes_mb = [p["mb"] for p in result["projections"].values() if p.get("mb") is not None]
        result["projection_mb"] = max(sizes_mb) if sizes_mb else None
    finally:
        for memory in made:
            drop(memory, result, say)
        driver.close()
    return result


def bench_table(result: dict[str, Any]) -> str:
    """The benchmark figures as markdown tables."""
    def ratio(a: float | None, b: float | None) -> str:
        return fmt(a / b if a and b else None) + "×"

    lines = table(["dataset", "mode", "p50 ms", "p95 ms", "in-process p50 ms", "ratio"], left=2, rows=(
        [dataset, mode, v["p50"], v["p95"], v["inprocess_p50"], ratio(v.get("p50"), v.get("inprocess_p50"))]
        for dataset, modes in result.get("latency_ms", {}).items() for mode, v in modes.items()))
    lines += [""] + table(["dataset", "passages", "passages/s", "embed s", "write s", "synonym s", "(extract s)",
                           "index s", "encoder-only s", "index / encoder-only"], rows=(
        [dataset, str(v.get("passages", "-")), v["passages_per_s"], v["embed_s"], v["write_s"], v["synonym_s"],
         v.get("extract_s"), v.get("index_s"), v.get("encoder_only_s"), fmt(v.get("encoder_ratio"), 2) + "×"]
        for dataset, v in result.get("index", {}).items()))
    for dataset, modes in (result.get("after_write_ms") or {}).items():
        lines += [""] + table([f"{dataset}: after indexing one passage", "first query ms", "writes not seen",
                               "waiting for the current graph (fresh) ms", "steady ms"],
                              ([mode, v["first"], v["behind"], v["fresh"], v["steady"]] for mode, v in modes.items()))
    add = result.get("add_one_ms", {})
    lines += [""] + table(["add one passage at", *add], [["ms (median)", *(fmt(v, 0) for v in add.values())]])
    lines += ["", f"server RSS: {fmt(result.get('server_rss_mb'), 0)} MB; largest GDS projection: "
              f"{fmt(result.get('projection_mb'), 2)} MB"]
    for key, mode in (("profile_ms", "hipporag1"), ("profile_hipporag2_ms", "hipporag2")):
        lines += [f"{mode} step medians on {dataset} (ms): " + ", ".join(f"{k} {fmt(v)}" for k, v in prof.items())
                  for dataset, prof in (result.get(key) or {}).items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = parser(__doc__)
    p.add_argument("--json", dest="json_out", default="bench/out/bench.json", help="write the figures here")
    p.add_argument("--queries", type=int, default=100, help="queries per dataset and mode")
    p.add_argument("--only", choices=["all", "musique", "2wiki"], default="all")
    p.add_argument("--scale", metavar="SIZES", default=None,
                   help="run the scale curve instead (bench/scale.py) on synthetic corpora of these passage counts, "
                        "e.g. 2000,10000,50000; it writes bench/out/scale.json (--scale-json), and takes --queries "
                        "and its own --builds, --rounds, --seed, --no-native, --keep, --index-budget, --append")
    args, rest = p.parse_known_args(argv)
    if args.scale:
        import scale  # bench/scale.py, beside this file (it imports nothing of this one)

        scale.main(argv)
        return
    if rest:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    result = run(ConnectionSettings.from_env(), default_datasets_dir(), queries=args.queries, only=args.only)
    print(bench_table(result) + f"\n\nwrote {write_json(args.json_out, result)}")


if __name__ == "__main__":
    main()
