"""The scale curve (``make bench BENCH_ARGS="--scale 2000,10000,50000"``) on synthetic corpora of growing size
(:class:`Corpus`), each in a namespace ``bench-scale-<size>``, vectors from :class:`TokenBagEncoder`: docs/scale.md.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import math
import os
import random
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
from common import (GRAPH_MODES, Query, add_one_ms, after_write_ms, catalogue_size, drop, emptied, graph_query,
                    local_server, measure_latency, parser, percentile, profile_entity_ppr, profile_hipporag1,
                    profile_hipporag2, say, server_rss_mb, table,
                    throughput, timed, timed_index, write_json)

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import ConnectionSettings, HippoConfig
from hippo_neo4j.db import connect
from hippo_neo4j.encode.base import Encoder
from hippo_neo4j.graph import projection
from hippo_neo4j.graph.server import Server
from hippo_neo4j.models import Extraction, IndexReport, PassageIn
from hippo_neo4j.retrieve import default_mode
from hippo_neo4j.text import normalize_phrase

def _digest(text: str, salt: str = "") -> int:
    return int.from_bytes(hashlib.blake2b(f"{salt}\x00{text}".encode(), digest_size=8).digest(), "little")


class TokenBagEncoder(Encoder):
    """Speed-only stand-in for a language model: a text's vector is the normalised sum of one random unit vector
    per token, each seeded by a hash of the token (docs/scale.md)."""

    name = "bench-token-bag-384"
    dimension = 384
    fingerprint = hashlib.sha256(b"bench-token-bag-384:384:blake2b-token-seed").hexdigest()
    synonym_threshold = 0.75  # a name and its suffixed variant: 0.816 expected, ± the noise of random vectors

    @functools.lru_cache(maxsize=1_000_000)  # noqa: B019 - one encoder per size, kept for the run
    def _token(self, token: str) -> np.ndarray:
        v = np.random.default_rng(_digest(token, "token")).standard_normal(self.dimension)
        return (v / np.linalg.norm(v)).astype(np.float32)

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            tokens = normalize_phrase(text).split() or [text]
            out[i] = np.sum([self._token(t) for t in tokens], axis=0)
        return out


# --------------------------------------------------------------------------------------------- corpus

_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["an", "el", "or", "is", "un"]  # 75
_FUNCTION_WORDS = ("the of and in to was a is for on as by with from that at his her it an which its also "
                   "were their after one first new he she two years later during".split())
_SUFFIXES = "jr city county group river club band company district press college society".split()
_PREDICATES = [
    "was born in", "is located in", "founded", "directed", "plays for", "married", "wrote", "is part of",
    "was released by", "won", "studied at", "was succeeded by", "produced", "was named after", "borders",
    "is headquartered in", "starred in", "was built by", "composed", "owns", "is the capital of", "joined",
    "was elected to", "designed", "published", "coached", "was awarded", "flows into", "is a member of",
    "recorded", "served as", "was established in", "represents", "is adjacent to", "acquired", "premiered at",
    "was founded by", "teaches at", "hosted", "discovered",
]
_ADJECTIVES = [_SYLLABLES[i % 75] + _SYLLABLES[(i * 7 + 3) % 75] + "ic" for i in range(300)]
_NOUNS = [_SYLLABLES[(i * 11 + 5) % 75] + _SYLLABLES[i % 75] + "on" for i in range(300)]


def _word(i: int) -> str:
    """A made-up word for token id ``i`` (three syllables; distinct ids give distinct words below 75**3)."""
    return _SYLLABLES[i % 75] + _SYLLABLES[(i // 75) % 75] + _SYLLABLES[(i // 5625) % 75]


FIRST_NAMES = 2000  # the first token of a name comes from a small pool (names share it: cosine 0.5, no edge)
COMMON_ENTITIES = 2_000_000  # the Zipf vocabulary of common entities


def entity_tokens(key: str) -> list[str]:
    """The tokens of an entity's base name (2 tokens, 3 for about a third)."""
    h = _digest(key, "entity")
    first = _word(h % FIRST_NAMES)
    last = _word(FIRST_NAMES + (h >> 12) % 400_000)
    tokens = [first, last]
    if (h >> 40) % 3 == 0:
        tokens.append(_word(FIRST_NAMES + 400_000 + (h >> 44) % 20_000))
    return [t.capitalize() for t in tokens]


def surface(tokens: list[str], rng: random.Random) -> str:
    """A mention of the entity: the name (85 %), with a suffix (6 %), reversed (4 %) or the last token (5 %)."""
    r = rng.random()
    if r < 0.85:
        return " ".join(tokens)
    if r < 0.91:
        return " ".join(tokens) + " " + rng.choice(_SUFFIXES).capitalize()
    if r < 0.95:
        return " ".join(reversed(tokens))
    return tokens[-1]


class Corpus:
    """The synthetic passage stream: passage i depends only on the seed and passages before it, so
    ``Corpus(seed).passages(n)`` is a prefix of ``Corpus(seed).passages(m)`` for n < m."""

    def __init__(self, seed: int = 0, zipf_s: float = 1.0, zipf_q: float = 2.7) -> None:
        self.seed = seed
        ranks = np.arange(1, COMMON_ENTITIES + 1, dtype=np.float64)
        weights = 1.0 / (ranks + zipf_q) ** zipf_s
        self._cdf = np.cumsum(weights) / weights.sum()
        filler = 1.0 / (np.arange(1, 3001) + 2.7) ** 1.1
        self._filler_cdf = np.cumsum(filler) / filler.sum()
        self._made: list[PassageIn] = []
        self._titles: list[list[str]] = []
        self._rng = random.Random(seed)
        self._np = np.random.default_rng(seed)

    def _filler(self, n: int) -> list[str]:
        ids = np.searchsorted(self._filler_cdf, self._np.random(n))
        return [_FUNCTION_WORDS[i] if i < len(_FUNCTION_WORDS) else _word(500_000 + int(i)) for i in ids]

    def _attribute(self, rng: random.Random) -> str:
        if rng.random() < 0.4:
            return str(rng.randint(1800, 2025))
        return f"{rng.choice(_ADJECTIVES)} {_NOUNS[min(int(rng.paretovariate(1.0)) - 1, len(_NOUNS) - 1)]}"

    def _next(self) -> PassageIn:
        i = len(self._made)
        rng = self._rng
        title_tokens = entity_tokens(f"title:{self.seed}:{i}")
        self._titles.append(title_tokens)
        title = " ".join(title_tokens)
        total = rng.randint(5, 15)
        links = min(rng.randint(0, 3), i, total - 1)
        names: list[str] = []
        for _ in range(links):  # earlier titles, the older ones more often (u^2 leans to the start)
            names.append(surface(self._titles[int(i * rng.random() ** 2)], rng))
        ranks = np.searchsorted(self._cdf, self._np.random(total - 1 - links))
        names += [surface(entity_tokens(f"common:{int(r)}"), rng) for r in ranks]
        names = list(dict.fromkeys(n for n in names if normalize_phrase(n) != normalize_phrase(title)))
        triples: list[list[str]] = []
        for _ in range(rng.randint(2, 5)):
            subject = title if rng.random() < 0.8 or not names else rng.choice(names)
            others = [n for n in names if n != subject]
            obj = rng.choice(others) if others and rng.random() < 0.7 else self._attribute(rng)
            triples.append([subject, rng.choice(_PREDICATES), obj])
        sentences = [f"{s} {p} {o}." for s, p, o in triples]
        used = {x for t in triples for x in (t[0], t[2])}
        for name in names:
            if name not in used:
                before = " ".join(self._filler(rng.randint(3, 8)))
                sentences.append(f"{before} {name} " + " ".join(self._filler(rng.randint(2, 6))) + ".")
        while sum(len(s.split()) for s in sentences) < rng.randint(60, 120):
            sentences.append(" ".join(self._filler(rng.randint(8, 16))).capitalize() + ".")
        head, rest = sentences[:1], sentences[1:]
        rng.shuffle(rest)
        passage = PassageIn(
            id=f"scale-{self.seed}-{i}", title=title, text=" ".join(head + rest),
            extraction=Extraction(named_entities=[title, *names], triples=triples),
        )
        self._made.append(passage)
        return passage

    def passages(self, n: int) -> list[PassageIn]:
        while len(self._made) < n:
            self._next()
        return self._made[:n]


def make_queries(passages: Sequence[PassageIn], n: int, seed: int = 1) -> list[Query]:
    """``n`` questions about sampled passages (a triple's predicate and object, and another entity of the
    passage), with their entities (as query NER would give them)."""
    rng = random.Random(seed)
    out = []
    for p in rng.sample(list(passages), min(n, len(passages))):
        s, pred, o = rng.choice(p.extraction.triples)
        others = [e for e in p.extraction.named_entities if e not in (s, o)]
        other = rng.choice(others) if others else p.title
        out.append(Query(f"Which one {pred} {o}, and how is it connected to {other}?", [o, other]))
    return out


# ------------------------------------------------------------------------------------------ measuring


def sys_heap(driver: Any, database: str) -> dict[str, float | None]:
    """The server's heap from gds.debug.sysInfo, in MiB: max, total, free, used (= total - free), available."""
    info = {r["key"]: r["value"] for r in driver.execute_query(
        "CALL gds.debug.sysInfo() YIELD key, value WHERE key ENDS WITH 'InBytes' RETURN key, value",
        database_=database).records}
    out = {f"{name}_mb": info[key] / 2**20 if isinstance(info.get(key), (int, float)) else None for name, key in (
        ("max", "heapMaxInBytes"), ("total", "heapTotalInBytes"), ("free", "heapFreeInBytes"),
        ("available", "availableHeapInBytes"), ("off_heap_used", "offHeapUsedInBytes"))}
    if out["total_mb"] is not None and out["free_mb"] is not None:
        out["used_mb"] = out["total_mb"] - out["free_mb"]
    return out


def vector_index_mb(connection: ConnectionSettings) -> float | None:
    """Bytes on disk of the local server's vector index files (every namespace), in MiB; None if not local."""
    local = local_server(connection)
    if local is None:
        return None
    total = 0
    for f in (local.server_dir / "data" / "databases" / connection.database / "schema" / "index").glob("vector*/**/*"):
        try:
            total += f.stat().st_size if f.is_file() else 0
        except OSError:
            pass
    return total / 2**20


def built(builds: int, build: Callable[[], Any], before: Callable[[int], Any]) -> dict[str, Any]:
    """The median and the samples (ms) of ``builds`` runs of ``build()``, each after ``before(run)``."""
    samples = []
    for b in range(builds):
        before(b)
        samples.append(timed(build))
    return {"build_ms": statistics.median(samples), "build_samples_ms": samples}


def measure_projections(memory: HippoRAG, builds: int) -> dict[str, Any]:
    """Per kind: ``builds`` builds as the library makes them, their size and GDS's estimate (docs/scale.md); all
    three kinds are left in memory."""
    d, db, ns = memory.driver, memory.database, memory.namespace
    out: dict[str, Any] = {}
    for kind in projection.KINDS:
        estimate = Server.of(d, db).projections.check_memory(ns, kind)
        graphs: list[Any] = []
        out[kind] = built(builds, lambda: graphs.append(Server.of(d, db).projections.ensure(ns, kind)),
                          lambda b: Server.of(d, db).projections.drop(ns, kind=kind))  # a kept one too (--reuse)
        if not all(g.created for g in graphs):
            raise RuntimeError(f"projection {graphs[-1].name} was not built afresh")
        out[kind] |= {**catalogue_size(memory, graphs[-1].name), "estimate_min_mb": estimate["bytes_min"] / 2**20,
                      "estimate_max_mb": estimate["bytes_max"] / 2**20}
    return out


def first_query_ms(memory: HippoRAG, queries: Sequence[Query], rounds: int) -> dict[str, Any]:
    """The first graph query of each mode on a namespace without projections (as after indexing it: the query
    projects the graph it walks and waits for it), and the query after it; medians of ``rounds`` rounds, each after
    every projection of the namespace was dropped, in ms."""
    samples: dict[str, dict[str, list[float]]] = {m: {"first": [], "next": []} for m in GRAPH_MODES}
    for i in range(rounds):
        q = queries[i % len(queries)]
        for mode in GRAPH_MODES:
            memory.server.projections.drop(memory.namespace)
            for step in ("first", "next"):
                samples[mode][step].append(timed(lambda: graph_query(memory, mode, q)))
    return {m: {k: percentile(v, 50) for k, v in by.items()} | {"samples": by} for m, by in samples.items()}


def after_indexing_ms(memory: HippoRAG, passages: Sequence[PassageIn], queries: Sequence[Query]) -> dict[str, Any]:
    """Indexing into a namespace without projections (one passage, deleted again afterwards), then the first query
    of the default mode and the one after it, a round per passage: medians in ms. Each round takes turns between
    indexing that projects the default mode's graph (``HippoConfig.prepare_graph``, the default: indexing waits for
    the build) and indexing that leaves it to the first query (``prepare_graph=False``), on the same namespace."""
    unprepared = HippoRAG(memory.connection, namespace=memory.namespace, driver=memory.driver, encoder=memory.encoder,
                          config=memory.config.model_copy(update={"prepare_graph": False}))
    clients = {"prepared": memory, "unprepared": unprepared}
    samples = {name: {k: [] for k in ("index", "first", "next")} for name in clients}
    for i, p in enumerate(passages):
        q = queries[i % len(queries)]
        for name, client in clients.items():
            client.server.projections.drop(client.namespace)  # as a namespace that no query has walked yet
            samples[name]["index"].append(timed(lambda: client.index([p])))
            for step in ("first", "next"):
                samples[name][step].append(timed(lambda: graph_query(client, default_mode(), q)))
            client.delete([p.passage_id])
    return {name: {k: percentile(v, 50) for k, v in by.items()} | {"samples": by} for name, by in samples.items()}


def index_size(memory: HippoRAG, todo: list[PassageIn], budget_s: float | None, result: dict[str, Any]
               ) -> list[PassageIn]:
    """Index ``todo`` in 20 steps, stopping after a step once ``budget_s`` seconds are spent; the passages indexed."""
    size, report, seconds, curve = len(todo), IndexReport(), 0.0, []
    step = max(256, size // 20)
    for start in range(0, size, step):
        part, took = timed_index(memory, todo[start : start + step])
        report.merge(part)
        seconds += took
        done = start + part.indexed
        curve.append({"passages": done, "s": seconds, "step_passages_per_s": part.indexed / took})
        if budget_s is not None and seconds > budget_s and start + step < size:
            result["partial"] = {"indexed": done, "index_s": seconds, "projected_index_s": seconds * size / done}
            say(f"[{size}] index budget of {budget_s:.0f} s spent at {done:,} passages: measuring there "
                f"(projected time for all {size:,}: {seconds * size / done:.0f} s)")
            todo = todo[:done]
            break
    result["index"], result["index_curve"], result["graph"] = throughput(report, seconds), curve, memory.stats()
    t, g = result["index"], result["graph"]
    say(f"[{size}] {t['passages_per_s']:.1f} passages/s ({seconds:.0f} s: embed {t['embed_s']:.0f}, write "
        f"{t['write_s']:.0f}, synonym {t['synonym_s']:.0f}, waiting for the encoder {t['encode_wait_s']:.0f}); "
        f"{g['phrases']:,} phrases, {g['mention_edges']:,} mention, {g['relation_edges']:,} relation, "
        f"{g['synonym_edges']:,} synonym edges, {g['facts']:,} facts")
    return todo


def index_and_add_one(memory: HippoRAG, passages: list[PassageIn], spare: list[PassageIn], args: argparse.Namespace,
                      result: dict[str, Any]) -> list[PassageIn]:
    """Index a size's ``passages`` (:func:`index_size`), then time adding one of ``spare``; the passages indexed."""
    size, vector_before = len(passages), vector_index_mb(memory.connection)
    say(f"[{size}] indexing {size:,} passages into {memory.namespace!r}")
    todo = index_size(memory, passages, args.index_budget, result)
    after = vector_index_mb(memory.connection)  # every namespace's: other writers to the server count too
    growth = None if after is None or vector_before is None else after - vector_before
    result["vector_index_growth_mb"], result["vector_index_total_mb"] = growth, after
    timing = add_one_ms(memory, spare)
    result["add_one_ms"], result["add_one_samples_ms"] = timing["median"], timing["samples"]
    say(f"[{size}] add one passage: {timing['median']:.0f} ms")
    return todo


def run_size(connection: ConnectionSettings, driver: Any, corpus: Corpus, size: int, args: argparse.Namespace
             ) -> dict[str, Any]:
    """Every figure of one size, in namespace ``bench-scale-<size>`` (dropped after unless ``args.keep``)."""
    memory = HippoRAG(connection, namespace=f"bench-scale-{size}", driver=driver, encoder=TokenBagEncoder(),
                      config=HippoConfig(ppr_concurrency=args.concurrency))
    reused = args.reuse and memory.stats()["passages"] >= size  # kept by an earlier --keep run of this corpus
    if not reused:
        emptied(memory)
    passages = corpus.passages(size + max(5, args.rounds))
    spare = passages[size:]
    result: dict[str, Any] = {"size": size}
    try:
        if reused:
            say(f"[{size}] reusing the kept namespace {memory.namespace!r}: no indexing or write figures")
            todo, result["reused"], result["graph"] = passages[:size], True, memory.stats()
        else:
            todo = index_and_add_one(memory, passages[:size], spare, args, result)
        g = result["graph"]
        result["vectors"] = g["passages"] + g["phrases"] + g["facts"]  # the raw float32 payload, before HNSW
        result["vector_payload_mb"] = result["vectors"] * memory.encoder.dimension * 4 / 2**20  # and Lucene
        result["heap_before_projections"] = sys_heap(driver, memory.database)
        say(f"[{size}] projections ({args.builds} builds each)")
        result["projections"] = measure_projections(memory, args.builds)
        result["heap"] = sys_heap(driver, memory.database)
        result["server_rss_mb"] = server_rss_mb(connection)
        qs = make_queries(todo, args.queries)
        say(f"[{size}] first query without projections ({args.rounds} rounds per mode)")
        result["first_query_ms"] = first_query_ms(memory, qs, args.rounds)
        say(f"[{size}] index one passage without projections, then the first {default_mode()} query ({args.rounds} rounds)")
        result["after_indexing_ms"] = after_indexing_ms(memory, spare[: args.rounds], qs)
        say(f"[{size}] steady latency ({len(qs)} queries per mode)"
            + ("" if reused else f", then write -> first query ({args.rounds} rounds)"))
        result["latency_ms"] = measure_latency(memory, qs, reference=False)
        if args.profile:
            say(f"[{size}] entity-ppr's steps ({len(qs)} queries)")
            result["entity_ppr_steps_ms"] = profile_entity_ppr(memory, qs)
            say(f"[{size}] hipporag1's and hipporag2's steps ({len(qs)} queries each)")
            result["hipporag1_steps_ms"] = profile_hipporag1(memory, qs)
            result["hipporag2_steps_ms"] = profile_hipporag2(memory, qs)
        if not reused:
            result["write_then_query_ms"] = after_write_ms(memory, spare[: args.rounds], qs)
        result["server_rss_mb_end"] = server_rss_mb(connection)
    finally:
        if not args.keep:
            drop(memory, result)
    return result


# ------------------------------------------------------------------------------------------- printing


def scale_table(result: dict[str, Any]) -> str:
    """The scale curve as a markdown table: one column per size, and the growth exponent of the rows that grow."""
    runs = {int(k): v for k, v in result.get("sizes", {}).items()}
    sizes = sorted(runs)
    # (label, the template of the cell's values, their paths in a size's figures, whether the growth of the first
    # value is shown)
    D0, D1 = "{:,.0f}", "{:,.1f}"
    rows: list[tuple[str, str, tuple[str, ...], bool]] = [
        ("passages indexed", D0, ("graph.passages",), False), ("phrases", D0, ("graph.phrases",), True),
        ("facts", D0, ("graph.facts",), False), ("MENTIONED_IN edges", D0, ("graph.mention_edges",), False),
        ("RELATION edges", D0, ("graph.relation_edges",), False),
        ("SYNONYM edges", D0, ("graph.synonym_edges",), True),
        ("indexing, passages/s", D1, ("index.passages_per_s",), False),
        ("  of which synonym s", D1, ("index.synonym_s",), False),
        ("add one passage, ms (median of 5)", D0, ("add_one_ms",), True),
    ]
    for k in projection.KINDS:
        p = f"projections.{k}."
        rows += [(f"projection {k}: build ms", D0, (p + "build_ms",), True),
                 (f"projection {k}: nodes / relationships", "{:,} / {:,}", (p + "nodes", p + "relationships"), False),
                 (f"projection {k}: catalogue MiB", D1, (p + "size_mb",), True),
                 (f"projection {k}: GDS estimate MiB (min-max)", "{:.1f}-{:.1f}",
                  (p + "estimate_min_mb", p + "estimate_max_mb"), False)]
    rows += [
        ("server heap used / max MiB", "{:,.0f} / {:,.0f}", ("heap.used_mb", "heap.max_mb"), False),
        ("server heap free MiB", D0, ("heap.free_mb",), False), ("server RSS MiB", D0, ("server_rss_mb",), False),
        ("vectors (passages + phrases + facts)", D0, ("vectors",), False),
        ("vector payload MiB (float32)", D0, ("vector_payload_mb",), False),
        ("vector index files, growth MiB (whole server)", D0, ("vector_index_growth_mb",), False),
    ]
    rows += [(f"{m} p50 / p95 ms", "{:.1f} / {:.1f}", (f"latency_ms.{m}.p50", f"latency_ms.{m}.p95"), True)
             for m in ("hipporag1", "hipporag2", "dense", "entity-ppr", "bm25")]
    if any("entity_ppr_steps_ms" in r for r in runs.values()):  # --profile: bench/common.profile_entity_ppr's steps
        rows += [(f"entity-ppr step {step}, ms", D1, (f"entity_ppr_steps_ms.{step}",), True)
                 for step in ("pagerank_one_iteration", "pagerank", "walk", "entity_walk", "hop", "hop_pagerank", "details", "total")]
    for mode, field in (("hipporag1", "hipporag1_steps_ms"), ("hipporag2", "hipporag2_steps_ms")):
        if any(field in r for r in runs.values()):  # --profile since hipporag1's and hipporag2's are profiled too
            rows += [(f"{mode} step {step}, ms", D1, (f"{field}.{step}",), True) for step in ("pagerank", "ppr_passages", "total")]
    if any("mention_rows" in r.get("hipporag1_steps_ms", {}) for r in runs.values()):
        rows += [("hipporag1's passage sum: phrases with mass / their mention rows / passages reached", "{:,.0f} / {:,.0f} / {:,.0f}",
                  tuple(f"hipporag1_steps_ms.{k}" for k in ("massed_phrases", "mention_rows", "passages_reached")), True)]
    rows += [(f"first {m} query without projections ms (next)", "{:.0f} ({:.0f})",
              (f"first_query_ms.{m}.first", f"first_query_ms.{m}.next"), True) for m in GRAPH_MODES]
    rows += [(f"index one passage without projections{how} ms, then the first {default_mode()} query ms (next)",
              "{:.0f}, {:.0f} ({:.0f})", tuple(f"after_indexing_ms.{name}.{k}" for k in ("index", "first", "next")), True)
             for name, how in (("prepared", ""), ("unprepared", ", prepare_graph off"))]
    rows += [(f"write → first {m} query ms (next)", "{:.0f} ({:.0f})",
              (f"write_then_query_ms.{m}.first", f"write_then_query_ms.{m}.next"), True) for m in GRAPH_MODES]

    def value(r: Any, path: str) -> Any:
        for key in path.split("."):
            r = r.get(key) if isinstance(r, dict) else None
        return r

    def cell(r: dict[str, Any], form: str, paths: tuple[str, ...]) -> str:
        try:
            return form.format(*(value(r, path) for path in paths))
        except (TypeError, ValueError):
            return "-"

    def growth(path: str) -> str:
        """The exponent b of value ~ passages^b between the smallest and the largest size (the passages indexed:
        less than the size when the index budget ran out)."""
        pts = [(value(runs[s], "graph.passages") or s, value(runs[s], path)) for s in sizes]
        pts = [(s, v) for s, v in sorted(pts) if v]
        return f"{math.log(pts[-1][1] / pts[0][1]) / math.log(pts[-1][0] / pts[0][0]):.2f}" if len(pts) > 1 else "-"

    def title(s: int) -> str:
        partial = runs[s].get("partial")
        return f"{s:,} ({partial['indexed']:,} indexed)" if partial else f"{s:,}"

    lines = table(["passages", *(title(s) for s in sizes), "growth exponent"], (
        [label, *(cell(runs[s], form, paths) for s in sizes), growth(paths[0]) if grows else "-"]
        for label, form, paths, grows in rows))
    lines += ["", "growth exponent b: value ∝ passages^b between the smallest and the largest size (1 = linear). "
              "Vectors: " + result.get("meta", {}).get("encoder", "")]
    return "\n".join(lines)


def medians(runs: list[Any]) -> Any:
    """The figures of ``runs`` (the JSON of several runs of the same sizes), each number the median of the runs'
    that hold it; the first run's for anything else."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: medians([r[k] for r in runs if isinstance(r, dict) and k in r]) for k in first}
    numbers = [r for r in runs if isinstance(r, (int, float)) and not isinstance(r, bool)]
    return statistics.median(numbers) if numbers and len(numbers) == len(runs) else first


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--scale", default="2000,10000,50000", help="passage counts, e.g. 2000,10000,50000")
    p.add_argument("--scale-json", default="bench/out/scale.json", help="write the figures here")
    p.add_argument("--queries", type=int, default=50, help="steady queries per mode and size")
    p.add_argument("--builds", type=int, default=3, help="projection builds per kind (the median is reported)")
    p.add_argument("--rounds", type=int, default=5,
                   help="write -> first query rounds per mode, and first queries without projections")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", action="store_true", help="keep the bench-scale-* namespaces afterwards")
    p.add_argument("--reuse", action="store_true",
                   help="measure a size's namespace kept by an earlier --keep run (same --seed) without indexing it "
                        "again: no indexing, add-one or write -> first query figures")
    p.add_argument("--profile", action="store_true", help="also time each step of the graph modes' queries per size")
    p.add_argument("--concurrency", type=int, default=HippoConfig().ppr_concurrency,
                   help="GDS threads per walk (HippoConfig.ppr_concurrency)")
    p.add_argument("--index-budget", type=float, default=None, metavar="SECONDS",
                   help="stop indexing a size after this many seconds and measure at the size reached "
                        "(recorded as partial, with the projected time for the whole size)")
    p.add_argument("--append", action="store_true",
                   help="add these sizes to the sizes already in --scale-json (a later run, e.g. the largest alone)")
    p.add_argument("--table", action="store_true", help="only print the table of --scale-json (no run)")
    p.add_argument("--medians", nargs="+", metavar="JSON",
                   help="only print the table of the medians of these runs' figures (no run)")
    args, _ = p.parse_known_args()  # suite.py --scale passes its own options too
    out = Path(args.scale_json)
    if args.table or args.medians:
        runs = [json.loads(Path(f).read_text(encoding="utf-8")) for f in args.medians or [out]]
        print(scale_table(medians(runs)))
        return
    sizes = [int(s) for s in args.scale.split(",") if s.strip().isdigit() and int(s) > 0]
    if not sizes or len(sizes) != len(args.scale.split(",")):
        p.error(f"--scale takes positive passage counts separated by commas, got {args.scale!r}")
    connection = ConnectionSettings.from_env()
    result: dict[str, Any] = {
        "meta": {
            "sizes": sizes, "seed": args.seed, "queries": args.queries, "projection_builds": args.builds,
            "rounds": args.rounds, "encoder": f"{TokenBagEncoder.name}: random unit vector per token (seeded by its "
                                              "hash), summed and normalised; speed only, not retrieval quality",
            "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "ppr_concurrency": args.concurrency,
            "load_average_start": os.getloadavg(),
        },
        "sizes": {},
    }
    if args.append and out.exists():  # the sizes of the earlier runs stay, and what they were run with
        earlier = json.loads(out.read_text(encoding="utf-8"))
        older = earlier["meta"].pop("earlier_runs", [])
        result["sizes"], result["meta"]["earlier_runs"] = earlier["sizes"], [earlier["meta"], *older]
    driver, corpus = connect(connection), Corpus(args.seed)
    try:
        for size in sizes:  # saved after every size: a later size that fails keeps the earlier ones
            began = time.perf_counter()
            figures = result["sizes"][str(size)] = run_size(connection, driver, corpus, size, args)
            figures["wall_s"], figures["load_average"] = time.perf_counter() - began, os.getloadavg()
            write_json(out, result)
    finally:
        driver.close()
    print("\n" + scale_table(result) + f"\n\nwrote {out}")


if __name__ == "__main__":
    main()
