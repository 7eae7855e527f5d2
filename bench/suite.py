"""The benchmark suite (``make bench``): retrieval latency next to the same retrieval in process, indexing throughput
against the encoder alone, the first query after a write, adding one passage as the graph grows, step profiles,
server memory and projection size (what each figure is: docs/results.md). ``--scale SIZES`` runs bench/scale.py.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from common import (MUSIQUE, WIKI, Query, Steps, add_one_ms, after_write_ms, asked, catalogue_size,
                    default_datasets_dir, drop, emptied, fmt, measure_latency, parser, profile_hipporag2, say,
                    server_rss_mb, table, throughput, timed, timed_index, write_json)

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import ConnectionSettings
from hippo_neo4j.corpus import load_corpus
from hippo_neo4j.db import connect
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.extract import make_extractor
from hippo_neo4j.graph.indexing import PhraseNormaliser
from hippo_neo4j.models import IndexReport, PassageIn
from hippo_neo4j.retrieve.hipporag1 import ppr_parameters
from hippo_neo4j.text import normalize_phrase

ADD_ONE_SIZES: tuple[int, ...] = (1000, 3000, 6000)


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
        graph = steps("projection_check", lambda: memory.server.projections.ensure(memory.namespace))
        params = ppr_parameters(memory.config, seeds, top_k) | {"graph": graph.name, "graphVersion": graph.version}
        steps("ppr", lambda: memory.store.run("bench_ppr_only", **params))
        steps("ppr_and_aggregate", lambda: memory.store.run("ppr_passages", **params))
        steps("total", lambda: memory.query(q.text, mode="hipporag1", top_k=top_k, entities=q.entities))
    return steps.medians()


def encoder_calls(memory: HippoRAG, passages: Sequence[PassageIn]) -> tuple[list[list[str]], dict[str, int]]:
    """The encoder calls indexing ``passages`` into an empty namespace makes, and how many texts of each kind:
    per batch of ``batch_size`` accepted passages, their full texts, the batch's phrases not in an earlier batch,
    and its facts not in an earlier batch (normalised by the indexer's own :class:`PhraseNormaliser`)."""
    todo = memory.indexer.accept(list(passages), memory.config, IndexReport())
    size, normaliser = max(1, memory.config.batch_size), PhraseNormaliser()
    calls: list[list[str]] = []
    seen_phrases, seen_facts = set[str](), set[str]()
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
    return calls, {key: sum(map(len, calls[i::3])) for i, key in enumerate(("passages", "new_phrases", "new_facts"))}


def index_against_encoder(memory: HippoRAG, passages: Sequence[PassageIn]) -> tuple[IndexReport, dict]:
    """Index ``passages`` (into an empty namespace) and time the encoder alone on the same texts, once before
    and once after (the mean is the figure: it brackets the load of a shared machine)."""
    calls, counts = encoder_calls(memory, passages)

    def encoder_only_s() -> float:
        memory.encoder.encode(["warm up"])
        return timed(lambda: [memory.encoder.encode(texts) for texts in calls]) / 1000

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


def index_musique(memory: HippoRAG, datasets: Path, extractor: Any, queries: int, result: dict[str, Any]
                  ) -> tuple[list[Query], list[PassageIn]]:
    """musique_train indexed with the OpenIE file's extraction, against the encoder alone; its questions."""
    dataset = load_dataset(datasets / MUSIQUE)
    say(f"indexing {MUSIQUE}: {len(dataset.passages)} passages with the OpenIE file's extraction")
    report, versus = index_against_encoder(memory, dataset.passages)
    result["index"][MUSIQUE] = throughput(report, versus["index_s"]) | versus
    return asked(extractor, [q.question for q in dataset.questions[:queries]]), dataset.passages


def index_wiki(memory: HippoRAG, datasets: Path, extractor: Any, queries: int, result: dict[str, Any]
               ) -> tuple[list[Query], list[PassageIn]]:
    """2Wiki's corpus with offline extraction, indexed up to each of ADD_ONE_SIZES passages (adding one passage
    timed there), then the rest. 2Wiki has no questions here: the first sentence of passages sampled with a
    fixed seed stands for one."""
    corpus = list({p.passage_id: p for p in load_corpus(datasets / WIKI / "corpus.json") if p.text.strip()}.values())
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
    sampled = random.Random(0).sample(list(corpus), min(queries, len(corpus)))
    return asked(extractor, [re.split(r"(?<=[.!?])\s+", p.text.strip(), maxsplit=1)[0][:300] for p in sampled]), corpus


def run(connection: ConnectionSettings, datasets: Path, *, queries: int = 100, only: str = "all") -> dict[str, Any]:
    """Every benchmark of issue 5, in namespaces ``bench-<dataset>`` (rebuilt from scratch, dropped after)."""
    extractor = make_extractor("offline")
    result: dict[str, Any] = {
        "latency_ms": {}, "index": {}, "add_one_ms": {str(s): None for s in ADD_ONE_SIZES}, "add_one_samples_ms": {},
        "profile_ms": {}, "graph": {}, "projections": {},
        "meta": {"queries": queries, "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M")},
    }
    driver = connect(connection)
    made: list[HippoRAG] = []
    try:
        for name, short, index in ((MUSIQUE, "musique", index_musique), (WIKI, "2wiki", index_wiki)):
            if only not in ("all", short):
                continue
            memory = HippoRAG(connection, namespace=f"bench-{name}", driver=driver, extractor=extractor)
            made.append(emptied(memory))
            qs, passages = index(memory, datasets, extractor, queries, result)
            say(f"latency on {name} ({len(qs)} queries per mode)")
            result["latency_ms"][name] = measure_latency(memory, qs)
            if name == MUSIQUE:
                say(f"the first graph query after a write on {MUSIQUE}")
                copies = [p.model_copy(update={"id": f"bench-write-{i}", "text": f"{p.text} (revised)"})
                          for i, p in enumerate(passages[:5])]
                result["after_write_ms"] = {MUSIQUE: after_write_ms(memory, copies, qs)}
                result["profile_hipporag2_ms"] = {MUSIQUE: profile_hipporag2(memory, qs)}
            result["profile_ms"][name] = profile_hipporag1(memory, qs)
            result["graph"][name] = memory.stats()
            for label, kind in ((name, "phrase"), (f"{name} with passages", "passage")):
                graph = memory.server.projections.ensure(memory.namespace, kind)
                result["projections"][label] = catalogue_size(memory, graph.name)
        result["server_rss_mb"] = server_rss_mb(connection)
        sizes_mb = [p["size_mb"] for p in result["projections"].values() if p["size_mb"] is not None]
        result["projection_mb"] = max(sizes_mb) if sizes_mb else None
    finally:
        for memory in made:
            drop(memory, result)
        driver.close()
    return result


def bench_table(result: dict[str, Any]) -> str:
    """The benchmark figures as markdown tables."""
    lines = table(["dataset", "mode", "p50 ms", "p95 ms", "in-process p50 ms", "ratio"], left=2, rows=(
        [dataset, mode, v["p50"], v["p95"], v["inprocess_p50"],
         fmt(v["p50"] / v["inprocess_p50"] if v["p50"] and v["inprocess_p50"] else None) + "×"]
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


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--json", dest="json_out", default="bench/out/bench.json", help="write the figures here")
    p.add_argument("--queries", type=int, default=100, help="queries per dataset and mode")
    p.add_argument("--only", choices=["all", "musique", "2wiki"], default="all")
    p.add_argument("--scale", metavar="SIZES", default=None,
                   help="run the scale curve instead (bench/scale.py, whose options pass through) on synthetic corpora "
                        "of these passage counts, e.g. 2000,10000,50000")
    args, rest = p.parse_known_args()
    if args.scale:  # bench/scale.py takes the same command line, in a process of its own
        sys.exit(subprocess.call([sys.executable, str(Path(__file__).with_name("scale.py")), *sys.argv[1:]]))
    if rest:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    result = run(ConnectionSettings.from_env(), default_datasets_dir(), queries=args.queries, only=args.only)
    print(bench_table(result) + f"\n\nwrote {write_json(args.json_out, result)}")


if __name__ == "__main__":
    main()
