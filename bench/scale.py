"""The scale curve (``make bench BENCH_ARGS="--scale 2000,10000,50000"``, or ``python bench/scale.py``):
synthetic corpora of growing size (:class:`Corpus`, prefixes of one seeded stream, with their extraction), each
indexed into its own namespace ``bench-scale-<size>``, and per size indexing throughput, adding one passage,
the GDS projections of each kind (build time, catalogue size, GDS's estimate; and as native projections over a
namespace label of the benchmark's own), the server's heap and RSS, steady query latency per mode, and write ->
first query. Vectors come from :class:`TokenBagEncoder` (speed only, not retrieval quality). What each figure
is, and the curve measured: docs/scale.md.
"""

from __future__ import annotations

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
from common import Say, add_one_ms, fmt, p50_p95, server_rss_mb, throughput, timed, timed_index, write_json

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import ConnectionSettings, ServerSettings
from hippo_neo4j.db import connect
from hippo_neo4j.encode.base import Encoder
from hippo_neo4j.graph import projection
from hippo_neo4j.models import Extraction, IndexReport, PassageIn
from hippo_neo4j.text import normalize_phrase

DEFAULT_SIZES: tuple[int, ...] = (2000, 10000, 50000)
LATENCY_MODES = ("hipporag1", "hipporag2", "dense", "entity-ppr", "bm25")
WRITE_QUERY_MODES = ("hipporag1", "hipporag2", "entity-ppr")
KINDS = ("phrase", "passage", "mentions")
NAMESPACE_PREFIX = "bench-scale-"


# -------------------------------------------------------------------------------------------- encoder


def _digest(text: str, salt: str = "") -> int:
    return int.from_bytes(hashlib.blake2b(f"{salt}\x00{text}".encode(), digest_size=8).digest(), "little")


class TokenBagEncoder(Encoder):
    """Speed-only stand-in for a language model: a text's vector is the normalised sum of one random unit
    vector per token (lower-cased alphanumeric runs), each seeded by a hash of the token. Deterministic; texts
    that share words are close; no model to load. 384-d, like the database's vector indexes."""

    name = "bench-token-bag-384"
    synonym_threshold = 0.75  # a name and its suffixed variant: 0.816 expected, ± the noise of random vectors

    def __init__(self, dimension: int = 384) -> None:
        self._dimension = dimension
        self._cache: dict[str, np.ndarray] = {}

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256(f"{self.name}:{self._dimension}:blake2b-token-seed".encode()).hexdigest()

    def _token(self, token: str) -> np.ndarray:
        vector = self._cache.get(token)
        if vector is None:
            v = np.random.default_rng(_digest(token, "token")).standard_normal(self._dimension)
            vector = (v / np.linalg.norm(v)).astype(np.float32)
            if len(self._cache) < 1_000_000:
                self._cache[token] = vector
        return vector

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
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
        out = []
        for i in ids:
            out.append(_FUNCTION_WORDS[i] if i < len(_FUNCTION_WORDS) else _word(500_000 + int(i)))
        return out

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
                sentences.append(" ".join(self._filler(rng.randint(3, 8))) + f" {name} " + " ".join(self._filler(rng.randint(2, 6))) + ".")
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


def make_queries(passages: Sequence[PassageIn], n: int, seed: int = 1) -> list[tuple[str, list[str]]]:
    """``n`` questions about sampled passages (a triple's predicate and object, and another entity of the
    passage), with their entities (as query NER would give them)."""
    rng = random.Random(seed)
    out = []
    for p in rng.sample(list(passages), min(n, len(passages))):
        s, pred, o = rng.choice(p.extraction.triples)
        others = [e for e in p.extraction.named_entities if e not in (s, o)]
        other = rng.choice(others) if others else p.title
        out.append((f"Which one {pred} {o}, and how is it connected to {other}?", [o, other]))
    return out


# ------------------------------------------------------------------------------------------ measuring


def sys_heap(driver: Any, database: str) -> dict[str, float]:
    """The server's heap from gds.debug.sysInfo, in MiB: max, total, free, used (= total - free), available."""
    info = {r["key"]: r["value"] for r in driver.execute_query(
        "CALL gds.debug.sysInfo() YIELD key, value WHERE key ENDS WITH 'InBytes' RETURN key, value",
        database_=database).records}
    mib = lambda key: info[key] / 2**20 if isinstance(info.get(key), (int, float)) else None  # noqa: E731
    out = {"max_mb": mib("heapMaxInBytes"), "total_mb": mib("heapTotalInBytes"), "free_mb": mib("heapFreeInBytes"),
           "available_mb": mib("availableHeapInBytes"), "off_heap_used_mb": mib("offHeapUsedInBytes")}
    if out["total_mb"] is not None and out["free_mb"] is not None:
        out["used_mb"] = out["total_mb"] - out["free_mb"]
    return out


def vector_index_mb(connection: ConnectionSettings) -> float | None:
    """Bytes on disk of the local server's vector index files (every namespace), in MiB; None if not local."""
    local = ServerSettings.from_env()
    if connection.uri.rstrip("/") != local.uri:
        return None
    root = local.server_dir / "data" / "databases" / connection.database / "schema" / "index"
    total = 0
    for folder in root.glob("vector*"):
        for f in folder.rglob("*"):
            try:
                total += f.stat().st_size if f.is_file() else 0
            except OSError:
                pass
    return total / 2**20


def catalogue_size(memory: HippoRAG, name: str) -> dict[str, Any]:
    rec = memory.store.run("projection_size", graph=name)[0]
    return {"size_mb": rec["sizeInBytes"] / 2**20 if rec["sizeInBytes"] and rec["sizeInBytes"] > 0 else None,
            "memory_usage": rec["memoryUsage"], "nodes": rec["nodeCount"], "relationships": rec["relationshipCount"]}


def measure_projections(memory: HippoRAG, builds: int, say: Say) -> dict[str, Any]:
    """Per kind: ``builds`` wall times of projection.ensure with none of the current version in the catalogue
    (dropped in between), the catalogue's size of the last and GDS's estimate. All three are left in memory."""
    d, db, ns = memory.driver, memory.database, memory.namespace
    out: dict[str, Any] = {}
    for kind in KINDS:
        estimate = projection.check_memory(d, db, ns, kind)
        samples = []
        graph = None
        for b in range(builds):
            if b:
                d.execute_query("CALL gds.graph.drop($name, false) YIELD graphName RETURN graphName",
                                name=graph.name, database_=db)
                projection.forget(d, db, ns)
            began = time.perf_counter()
            graph = projection.ensure(d, db, ns, kind)
            samples.append((time.perf_counter() - began) * 1000)
            if not graph.created:
                raise RuntimeError(f"projection {graph.name} was not built afresh")
        out[kind] = {"build_ms": statistics.median(samples), "build_samples_ms": samples,
                     **catalogue_size(memory, graph.name),
                     "estimate_min_mb": estimate["bytes_min"] / 2**20, "estimate_max_mb": estimate["bytes_max"] / 2**20}
        say(f"  projection {kind}: {out[kind]['build_ms']:.0f} ms, {out[kind]['nodes']:,} nodes, "
            f"{out[kind]['relationships']:,} relationships, {fmt(out[kind]['size_mb'])} MiB "
            f"(GDS estimate {out[kind]['estimate_min_mb']:.1f}-{out[kind]['estimate_max_mb']:.1f} MiB)")
    return out


def _native_label(size: int) -> str:
    return f"BenchScaleNs{size}"


def native_projections(memory: HippoRAG, size: int, builds: int, say: Say) -> dict[str, Any]:
    """The phrase and passage graphs as native projections over a bench-only namespace label (built
    ``builds`` times each, dropped afterwards); the labelling time too."""
    d, db, ns = memory.driver, memory.database, memory.namespace
    label = _native_label(size)
    began = time.perf_counter()
    with d.session(database=db) as session:  # CALL ... IN TRANSACTIONS needs an implicit transaction
        for kind in ("Phrase", "Passage"):
            session.run(f"MATCH (n:{kind} {{ns: $ns}}) CALL (n) {{ SET n:{label}{kind} }} IN TRANSACTIONS OF 10000 ROWS",
                        ns=ns).consume()
    label_ms = (time.perf_counter() - began) * 1000
    weighted = lambda prop: {"orientation": "UNDIRECTED", "properties": {"weight": {"property": prop, "defaultValue": 1.0}}}  # noqa: E731
    specs = {
        "phrase": ([f"{label}Phrase"], {"RELATION": weighted("weight"), "SYNONYM": weighted("score")}),
        "passage": ([f"{label}Phrase", f"{label}Passage"],
                    {"RELATION": weighted("weight"), "SYNONYM": weighted("score"), "MENTIONED_IN": weighted("count")}),
    }
    out: dict[str, Any] = {"label_ms": label_ms}
    for kind, (labels, rels) in specs.items():
        name = f"bench-scale-native:{ns}:{kind}"
        samples = []
        for _ in range(builds):
            d.execute_query("CALL gds.graph.drop($name, false) YIELD graphName RETURN graphName", name=name, database_=db)
            samples.append(timed(lambda: d.execute_query(
                "CALL gds.graph.project($name, $labels, $rels) YIELD nodeCount RETURN nodeCount",
                name=name, labels=labels, rels=rels, database_=db)))
        out[kind] = {"build_ms": statistics.median(samples), "build_samples_ms": samples, **catalogue_size(memory, name)}
        d.execute_query("CALL gds.graph.drop($name, false) YIELD graphName RETURN graphName", name=name, database_=db)
        say(f"  native {kind}: {out[kind]['build_ms']:.0f} ms, {out[kind]['nodes']:,} nodes, "
            f"{out[kind]['relationships']:,} relationships, {fmt(out[kind]['size_mb'])} MiB")
    return out


def _query(memory: HippoRAG, mode: str, text: str, entities: list[str]) -> Any:
    return memory.query(text, mode=mode, top_k=10, entities=entities, filter=False)


def steady_latency(memory: HippoRAG, queries: Sequence[tuple[str, list[str]]], warmup: int = 3) -> dict[str, Any]:
    """p50/p95 ms per mode after ``warmup`` queries of that mode, and how many came back empty."""
    out: dict[str, Any] = {}
    for mode in LATENCY_MODES:
        for text, ents in queries[:warmup]:
            _query(memory, mode, text, ents)
        samples, empty = [], 0
        for text, ents in queries:
            found: list[Any] = []
            samples.append(timed(lambda: found.append(_query(memory, mode, text, ents))))
            empty += not found[0].passages
        out[mode] = p50_p95(samples) | {"empty": empty, "n": len(samples)}
    return out


def write_then_query(memory: HippoRAG, spare: Sequence[PassageIn], queries: Sequence[tuple[str, list[str]]],
                     rounds: int) -> dict[str, Any]:
    """Per mode and round: index one new passage (timed), then time the first query (it projects the new
    version) and the next one; the passage is deleted again after the round."""
    out: dict[str, Any] = {}
    for mode in WRITE_QUERY_MODES:
        writes, first, second = [], [], []
        for r in range(rounds):
            p = spare[r % len(spare)]
            text, ents = queries[r % len(queries)]
            writes.append(timed(lambda: memory.index([p])))
            first.append(timed(lambda: _query(memory, mode, text, ents)))
            second.append(timed(lambda: _query(memory, mode, text, ents)))
            memory.delete([p.passage_id])
        out[mode] = {"write_ms": statistics.median(writes), "first_query_ms": statistics.median(first),
                     "next_query_ms": statistics.median(second),
                     "write_samples_ms": writes, "first_samples_ms": first, "next_samples_ms": second}
    return out


def run_size(connection: ConnectionSettings, driver: Any, corpus: Corpus, size: int, *, queries: int, builds: int,
             rounds: int, native: bool, keep: bool, say: Say, index_budget_s: float | None = None) -> dict[str, Any]:
    encoder = TokenBagEncoder()
    memory = HippoRAG(connection, namespace=f"{NAMESPACE_PREFIX}{size}", driver=driver, encoder=encoder)
    if memory.stats()["passages"] or memory.stats()["phrases"]:
        say(f"dropping the previous namespace {memory.namespace!r}")
        memory.drop_namespace()
    passages = corpus.passages(size + max(5, rounds))
    todo, spare = passages[:size], passages[size:]
    result: dict[str, Any] = {"size": size}
    try:
        vector_before = vector_index_mb(connection)
        say(f"[{size}] indexing {size:,} passages into {memory.namespace!r}")
        report, seconds, curve = IndexReport(), 0.0, []
        step = max(256, size // 20)
        for start in range(0, size, step):  # in steps, to see the rate as the graph grows (and stop in time)
            part, took = timed_index(memory, todo[start : start + step])
            report.merge(part)
            seconds += took
            curve.append({"passages": start + part.indexed, "s": seconds, "step_passages_per_s": part.indexed / took})
            if index_budget_s is not None and seconds > index_budget_s and start + step < size:
                say(f"[{size}] index budget of {index_budget_s:.0f} s spent at {start + part.indexed:,} passages: "
                    f"measuring there (projected time for all {size:,}: {seconds * size / (start + part.indexed):.0f} s)")
                result["partial"] = {"indexed": start + part.indexed, "index_s": seconds,
                                     "projected_index_s": seconds * size / (start + part.indexed)}
                todo = todo[: start + part.indexed]
                break
        result["index"] = throughput(report, seconds)
        result["index_curve"] = curve
        result["graph"] = memory.stats()
        g = result["graph"]
        t = result["index"]
        say(f"[{size}] {t['passages_per_s']:.1f} passages/s ({seconds:.0f} s: embed {t['embed_s']:.0f}, write "
            f"{t['write_s']:.0f}, synonym {t['synonym_s']:.0f}, waiting for the encoder {t['encode_wait_s']:.0f}); {g['phrases']:,} phrases, "
            f"{g['mention_edges']:,} mention, {g['relation_edges']:,} relation, {g['synonym_edges']:,} synonym edges, "
            f"{g['facts']:,} facts")
        vectors = g["passages"] + g["phrases"] + g["facts"]
        result["vectors"] = vectors  # the raw float32 payload, before HNSW links and Lucene overhead:
        result["vector_payload_mb"] = vectors * encoder.dimension * 4 / 2**20
        vector_after = vector_index_mb(connection)  # every namespace's: other writers to the server count too
        result["vector_index_growth_mb"] = (vector_after - vector_before) if vector_after is not None and vector_before is not None else None
        result["vector_index_total_mb"] = vector_after
        timing = add_one_ms(memory, spare)
        result["add_one_ms"] = timing["median"]
        result["add_one_samples_ms"] = timing["samples"]
        say(f"[{size}] add one passage: {timing['median']:.0f} ms (median of {len(timing['samples'])})")
        result["heap_before_projections"] = sys_heap(driver, memory.database)
        say(f"[{size}] projections (Cypher projection, as the library builds them; {builds} builds each)")
        result["projections"] = measure_projections(memory, builds, say)
        result["heap"] = sys_heap(driver, memory.database)
        result["server_rss_mb"] = server_rss_mb(connection)
        say(f"[{size}] heap with the three projections: used {fmt(result['heap'].get('used_mb'), 0)} MiB, "
            f"free {fmt(result['heap']['free_mb'], 0)} of {fmt(result['heap']['max_mb'], 0)} MiB; "
            f"server RSS {fmt(result['server_rss_mb'], 0)} MiB")
        if native:
            say(f"[{size}] native projections over a namespace label")
            result["native_projections"] = native_projections(memory, size, builds, say)
        qs = make_queries(todo, queries)
        say(f"[{size}] steady latency ({len(qs)} queries per mode)")
        result["latency_ms"] = steady_latency(memory, qs)
        for mode, v in result["latency_ms"].items():
            say(f"  {mode}: p50 {v['p50']:.1f} ms, p95 {v['p95']:.1f} ms" + (f" ({v['empty']} empty)" if v["empty"] else ""))
        say(f"[{size}] write -> first query ({rounds} rounds per mode)")
        result["write_then_query_ms"] = write_then_query(memory, spare, qs, rounds)
        for mode, v in result["write_then_query_ms"].items():
            say(f"  {mode}: write {v['write_ms']:.0f} ms, first query {v['first_query_ms']:.0f} ms, "
                f"next {v['next_query_ms']:.0f} ms")
        result["server_rss_mb_end"] = server_rss_mb(connection)
    finally:
        if not keep:
            drop(memory, result, say)
    return result


def drop(memory: HippoRAG, result: dict[str, Any], say: Say, attempts: int = 3) -> None:
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


def run(connection: ConnectionSettings, sizes: Sequence[int] = DEFAULT_SIZES, *, seed: int = 0, queries: int = 50,
        builds: int = 3, rounds: int = 5, native: bool = True, keep: bool = False, say: Say = lambda m: None,
        index_budget_s: float | None = None,
        on_size: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The scale curve over ``sizes`` (each in namespace ``bench-scale-<size>``, dropped after unless ``keep``)."""
    result: dict[str, Any] = {
        "meta": {
            "sizes": list(sizes), "seed": seed, "queries": queries, "projection_builds": builds, "rounds": rounds,
            "encoder": f"{TokenBagEncoder.name}: random unit vector per token (seeded by its hash), summed and "
                       "normalised; speed only, not retrieval quality",
            "cpus": os.cpu_count(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "load_average_start": os.getloadavg(),
        },
        "sizes": {},
    }
    driver = connect(connection)
    corpus = Corpus(seed)
    try:
        for size in sizes:
            began = time.perf_counter()
            result["sizes"][str(size)] = run_size(connection, driver, corpus, size, queries=queries, builds=builds,
                                                  rounds=rounds, native=native, keep=keep, say=say,
                                                  index_budget_s=index_budget_s)
            result["sizes"][str(size)]["wall_s"] = time.perf_counter() - began
            result["sizes"][str(size)]["load_average"] = os.getloadavg()
            if on_size:
                on_size(result)
    finally:
        driver.close()
    return result


# ------------------------------------------------------------------------------------------- printing


def _growth(values: dict[int, float | None]) -> str:
    """The exponent b of value ~ size^b between the smallest and the largest size."""
    pts = [(s, v) for s, v in sorted(values.items()) if v]
    if len(pts) < 2:
        return "-"
    (s0, v0), (s1, v1) = pts[0], pts[-1]
    return f"{math.log(v1 / v0) / math.log(s1 / s0):.2f}"


def scale_table(result: dict[str, Any]) -> str:
    """The scale curve as a markdown table: one column per size, and the growth exponent of the rows that grow."""
    runs = {int(k): v for k, v in result.get("sizes", {}).items()}
    sizes = sorted(runs)
    proj = lambda k, key: lambda r: r["projections"][k][key]  # noqa: E731
    native = lambda k, key: lambda r: r.get("native_projections", {}).get(k, {}).get(key)  # noqa: E731
    # (label, the cell's value or text, digits, the value whose growth is shown: True for the cell's own)
    rows: list[tuple[str, Callable[[dict[str, Any]], Any], int, Any]] = [
        ("passages indexed", lambda r: r["graph"]["passages"], 0, None),
        ("phrases", lambda r: r["graph"]["phrases"], 0, True),
        ("facts", lambda r: r["graph"]["facts"], 0, None),
        ("MENTIONED_IN edges", lambda r: r["graph"]["mention_edges"], 0, None),
        ("RELATION edges", lambda r: r["graph"]["relation_edges"], 0, None),
        ("SYNONYM edges", lambda r: r["graph"]["synonym_edges"], 0, True),
        ("indexing, passages/s", lambda r: r["index"]["passages_per_s"], 1, None),
        ("  of which synonym s", lambda r: r["index"]["synonym_s"], 1, None),
        ("add one passage, ms (median of 5)", lambda r: r["add_one_ms"], 0, True),
    ]
    for k in KINDS:
        rows += [
            (f"projection {k}: build ms", proj(k, "build_ms"), 0, True),
            (f"projection {k}: nodes / relationships",
             lambda r, k=k: f"{r['projections'][k]['nodes']:,} / {r['projections'][k]['relationships']:,}", 0, None),
            (f"projection {k}: catalogue MiB", proj(k, "size_mb"), 1, True),
            (f"projection {k}: GDS estimate MiB (min-max)",
             lambda r, k=k: f"{r['projections'][k]['estimate_min_mb']:.1f}-{r['projections'][k]['estimate_max_mb']:.1f}", 0, None),
        ]
    if any("native_projections" in r for r in runs.values()):
        rows += [("native phrase: build ms", native("phrase", "build_ms"), 0, True),
                 ("native passage: build ms", native("passage", "build_ms"), 0, True),
                 ("native passage: catalogue MiB", native("passage", "size_mb"), 1, None)]
    rows += [
        ("server heap used / max MiB", lambda r: f"{r['heap'].get('used_mb', 0):,.0f} / {r['heap']['max_mb']:,.0f}", 0, None),
        ("server heap free MiB", lambda r: r["heap"]["free_mb"], 0, None),
        ("server RSS MiB", lambda r: r["server_rss_mb"], 0, None),
        ("vectors (passages + phrases + facts)", lambda r: r["vectors"], 0, None),
        ("vector payload MiB (float32)", lambda r: r["vector_payload_mb"], 0, None),
        ("vector index files, growth MiB (whole server)", lambda r: r["vector_index_growth_mb"], 0, None),
    ]
    rows += [(f"{m} p50 / p95 ms", lambda r, m=m: f"{r['latency_ms'][m]['p50']:.1f} / {r['latency_ms'][m]['p95']:.1f}", 0,
              lambda r, m=m: r["latency_ms"][m]["p50"]) for m in LATENCY_MODES]
    rows += [(f"write → first {m} query ms (next)", lambda r, m=m: f"{r['write_then_query_ms'][m]['first_query_ms']:.0f} "
              f"({r['write_then_query_ms'][m]['next_query_ms']:.0f})", 0,
              lambda r, m=m: r["write_then_query_ms"][m]["first_query_ms"]) for m in WRITE_QUERY_MODES]

    def value(fn: Callable[[dict[str, Any]], Any], r: dict[str, Any]) -> Any:
        try:
            return fn(r)
        except (KeyError, TypeError):
            return None

    def cell(fn: Callable[[dict[str, Any]], Any], r: dict[str, Any], digits: int) -> str:
        v = value(fn, r)
        return f"{v:,}" if isinstance(v, int) else v if isinstance(v, str) else fmt(v, digits)

    def title(s: int) -> str:
        partial = runs[s].get("partial")
        return f"{s:,} ({partial['indexed']:,} indexed)" if partial else f"{s:,}"

    lines = ["| passages | " + " | ".join(title(s) for s in sizes) + " | growth exponent |",
             "|---|" + "---:|" * len(sizes) + "---:|"]
    for label, fn, digits, grows in rows:
        growth = "-"
        if grows:  # against the passages indexed (less than the size when the index budget ran out)
            of = fn if grows is True else grows
            growth = _growth({value(lambda r: r["graph"]["passages"], runs[s]) or s: value(of, runs[s]) for s in sizes})
        lines.append(f"| {label} | " + " | ".join(cell(fn, runs[s], digits) for s in sizes) + f" | {growth} |")
    lines += ["", "growth exponent b: value ∝ passages^b between the smallest and the largest size (1 = linear). "
              "Vectors: " + result.get("meta", {}).get("encoder", "")]
    return "\n".join(lines)


def parse_sizes(text: str) -> list[int]:
    """"2000,10000,50k" -> [2000, 10000, 50000]."""
    out = []
    for part in text.split(","):
        part = part.strip().lower().replace("_", "")
        if part:
            out.append(int(float(part[:-1]) * 1000) if part.endswith("k") else int(part))
    if not out or any(s <= 0 for s in out):
        raise ValueError(f"--scale takes positive passage counts separated by commas, got {text!r}")
    return out


def main(argv: Sequence[str] | None = None, sizes: Sequence[int] | None = None) -> dict[str, Any]:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default=",".join(map(str, DEFAULT_SIZES)), help="passage counts, e.g. 2000,10000,50000")
    parser.add_argument("--scale-json", default="bench/out/scale.json", help="write the figures here")
    parser.add_argument("--queries", type=int, default=50, help="steady queries per mode and size")
    parser.add_argument("--builds", type=int, default=3, help="projection builds per kind (the median is reported)")
    parser.add_argument("--rounds", type=int, default=5, help="write -> first query rounds per mode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-native", action="store_true", help="skip the native-projection comparison")
    parser.add_argument("--keep", action="store_true", help="keep the bench-scale-* namespaces afterwards")
    parser.add_argument("--index-budget", type=float, default=None, metavar="SECONDS",
                        help="stop indexing a size after this many seconds and measure at the size reached "
                             "(recorded as partial, with the projected time for the whole size)")
    parser.add_argument("--append", action="store_true",
                        help="add these sizes to the sizes already in --scale-json (a later run, e.g. the largest alone)")
    parser.add_argument("--table", action="store_true", help="only print the table of --scale-json (no run)")
    args, _ = parser.parse_known_args(argv)
    if args.table:
        result = json.loads(Path(args.scale_json).read_text(encoding="utf-8"))
        print(scale_table(result))
        return result
    chosen = list(sizes) if sizes is not None else parse_sizes(args.scale)
    out = Path(args.scale_json)
    earlier: dict[str, Any] = {}
    if args.append and out.exists():
        earlier = json.loads(out.read_text(encoding="utf-8"))

    def save(result: dict[str, Any]) -> None:  # after every size: a later size that fails keeps the earlier ones
        if earlier:
            runs = {**earlier.get("sizes", {}), **result["sizes"]}
            result["sizes"] = {k: runs[k] for k in sorted(runs, key=int)}
            result["meta"]["earlier_runs"] = [earlier["meta"], *earlier["meta"].get("earlier_runs", [])]
            result["meta"]["earlier_runs"][0].pop("earlier_runs", None)
        write_json(out, result)

    say = lambda m: print(m, flush=True)  # noqa: E731
    result = run(ConnectionSettings.from_env(), chosen, seed=args.seed, queries=args.queries, builds=args.builds,
                 rounds=args.rounds, native=not args.no_native, keep=args.keep, say=say, on_size=save,
                 index_budget_s=args.index_budget)
    save(result)
    print("\n" + scale_table(result) + f"\n\nwrote {out}")
    return result


if __name__ == "__main__":
    main()
