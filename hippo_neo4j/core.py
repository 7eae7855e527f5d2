"""HippoRAG on Neo4j: indexing into the Phrase/Passage graph, and retrieval with GDS Personalized PageRank.

    from hippo_neo4j import HippoRAG
    with HippoRAG(namespace="docs") as hippo:
        hippo.index([{"title": "...", "text": "..."}])
        result = hippo.query("Which Stanford professor works on Alzheimer's?")

The graph (design card): ``(:Passage {ns, id, title, text, hash, embedding})``,
``(:Phrase {ns, text, embedding})``, ``(:Phrase)-[:RELATION {weight, sources, predicates}]->(:Phrase)``,
``(:Phrase)-[:SYNONYM {score}]->(:Phrase)``, ``(:Phrase)-[:MENTIONED_IN {count}]->(:Passage)``, and
``(:Fact {ns, id, subject, predicate, object, text, embedding, sources})``, one per distinct normalised
triple, for hipporag2's query-to-fact linking. Every statement lives in ``cypher/`` and is parameterised.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Literal, Sequence

import numpy as np
from neo4j import Driver
from neo4j.exceptions import ClientError
from pydantic import BaseModel, Field

from . import projection
from .config import ConnectionSettings, env_number
from .db import connect, cypher, cypher_statements
from .encoder import Encoder, shared_encoder
from .errors import ConfigError, HippoError
from .models import Extraction, PassageIn
from .text import alnum_count, lucene_escape, normalize_phrase, scrub

log = logging.getLogger(__name__)

Mode = Literal["hipporag2", "hipporag1", "hybrid", "dense", "bm25"]

MAX_KEY_CHARS = 1000  # passage ids and phrases are keys of range indexes (about 8 kB per key): longer ones are refused
MAX_BM25_TERMS = 512  # Lucene refuses queries of more than 1024 clauses

MODES: tuple[str, ...] = ("hipporag2", "hipporag1", "hybrid", "dense", "bm25")


class HippoConfig(BaseModel):
    """The algorithm's settings; defaults are the HippoRAG paper's."""

    synonym_threshold: float = Field(0.8, description="tau: cosine at or above which phrases get a SYNONYM edge")
    synonym_top_k: int = Field(100, le=100, description="vector-index candidates per new phrase")
    damping: float = Field(0.5, gt=0, lt=1, description="PPR probability of following an edge")
    batch_size: int = Field(default_factory=lambda: env_number("HIPPO_BATCH_SIZE", 256), ge=1)
    max_passage_chars: int = Field(
        default_factory=lambda: env_number("HIPPO_MAX_PASSAGE_CHARS", 100_000),
        description="longer passages are rejected (listed in IndexReport.rejected): split them into passages",
    )
    ppr_max_iterations: int = 50  # damping 0.5 halves the error each step: 0.5**50 is far below tolerance
    # GDS stops when no score moves by more than this (hipporag2 scales it by its seed total: the same
    # relative precision). `python bench/ppr_tolerance.py` on musique: 1e-8 instead of 1e-9 leaves recall of
    # hipporag1 and hipporag2 unchanged (2 of 100 hipporag2 rankings swap near-ties) and saves ~6 ms a query.
    ppr_tolerance: float = 1e-8
    # One thread: on phrase graphs of this size (10^4-10^5 nodes) GDS's parallel PPR spent more on
    # coordination than it saved in ad-hoc timings on a 2-core machine. Raise it for graphs of millions of nodes.
    ppr_concurrency: int = Field(1, ge=1, le=4)
    # Phrases whose PPR mass is at most this are left out of the passage sums: fewer MENTIONED_IN expansions
    # in the aggregation, and a passage score moves by at most 1e-7 per such mention.
    ppr_min_mass: float = Field(1e-7, ge=0)
    top_phrases: int = 10
    # hipporag2 (HippoRAG 2's defaults)
    fact_top_k: int = Field(5, ge=1, le=100, description="facts retrieved for the query (before the filter)")
    link_top_phrases: int = Field(5, ge=1, description="phrase seeds kept: the largest")
    passage_node_weight: float = Field(0.05, ge=0, description="passage seed = this x min-max normalised dense score")
    passage_seed_top_n: int | None = Field(
        None, ge=1, description="seed only the top-N dense passages (min-max over them); None seeds every passage"
    )
    passage_nodes: bool = Field(True, description="ablation when False: PPR over phrases only, hipporag1's aggregation")
    linking: Literal["fact", "entity"] = Field(
        "fact", description="ablation 'entity': phrase seeds from query entities (similarity / |P_i|) instead of facts"
    )
    # hybrid
    hybrid_lambda: float = Field(0.5, ge=0, le=1, description="weight of the hipporag1 score in the fusion")
    hybrid_depth: int = Field(50, ge=1, description="passages each side contributes to the fusion")


# ---------------------------------------------------------------------------------------------- results


class IndexReport(BaseModel):
    passages: int = 0
    indexed: int = 0
    unchanged: int = 0
    updated: int = 0
    skipped_empty: int = 0
    skipped_duplicate_id: int = 0
    rejected: list[str] = Field(default_factory=list, description="ids refused: text or id too long (see the log)")
    extraction_failures: list[str] = Field(default_factory=list)
    no_triples: int = 0
    triples: int = 0
    malformed_triples: int = 0
    self_loop_triples: int = 0
    new_phrases: int = 0
    new_facts: int = 0
    synonym_edges: int = 0
    timings: dict[str, float] = Field(default_factory=lambda: {"extract_s": 0.0, "embed_s": 0.0, "write_s": 0.0, "synonym_s": 0.0})

    def merge(self, other: "IndexReport") -> None:
        for name, value in other:
            if name == "timings":
                for k, v in value.items():
                    self.timings[k] = self.timings.get(k, 0.0) + v
            elif isinstance(value, list):
                getattr(self, name).extend(value)
            else:
                setattr(self, name, getattr(self, name) + value)


class LinkedEntity(BaseModel):
    entity: str
    phrase: str
    similarity: float
    passages: int
    weight: float = 0.0


class Contributor(BaseModel):
    phrase: str
    contribution: float


class FactHit(BaseModel):
    """A fact the query linked to: its triple, cosine to the query, |P| of its subject and object, and
    whether the recognition filter kept it."""

    subject: str
    predicate: str
    object: str
    score: float
    subject_passages: int = 0
    object_passages: int = 0
    kept: bool = True

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)


class Seed(BaseModel):
    """A PPR seed: a phrase (by text) or a passage (by id) and its reset weight."""

    node: str
    weight: float


class RetrievedPassage(BaseModel):
    id: str
    title: str | None = None
    text: str
    score: float
    contributors: list[Contributor] = Field(default_factory=list)


class RetrievalResult(BaseModel):
    query: str
    mode: str
    entities: list[str] = Field(default_factory=list)
    linked: list[LinkedEntity] = Field(default_factory=list)
    top_phrases: list[dict[str, Any]] = Field(default_factory=list)
    facts: list[FactHit] = Field(default_factory=list, description="hipporag2: facts retrieved (kept or not)")
    filter: str | None = Field(None, description="hipporag2: the recognition filter used, 'off', or why it failed")
    phrase_seeds: list[Seed] = Field(default_factory=list)
    passage_seeds: list[Seed] = Field(default_factory=list, description="hipporag2: the largest passage seeds")
    passages: list[RetrievedPassage] = Field(default_factory=list)
    fell_back: bool = False
    fallback_reason: str | None = None
    warning: str | None = None
    elapsed_ms: float = 0.0

    @property
    def seeds(self) -> list[tuple[str, float]]:
        """The phrase seeds of the walk (hipporag1: linked entities; hipporag2: phrases of kept facts)."""
        if self.phrase_seeds:
            return [(s.node, s.weight) for s in self.phrase_seeds]
        return [(link.phrase, link.weight) for link in self.linked if link.weight > 0]


class DeleteReport(BaseModel):
    requested: int
    deleted: int
    missing: list[str] = Field(default_factory=list)


# ------------------------------------------------------------------------------------------- the client


def as_passage(item: PassageIn | dict[str, Any] | str) -> PassageIn:
    if isinstance(item, PassageIn):
        return item
    if isinstance(item, str):
        return PassageIn(text=item)
    data = dict(item)
    if "extraction" not in data and ("extracted_triples" in data or "triples" in data):
        data["extraction"] = Extraction(
            named_entities=data.get("extracted_entities") or data.get("named_entities") or [],
            triples=data.get("extracted_triples") or data.get("triples") or [],
        )
    return PassageIn(
        id=str(data["id"]) if data.get("id") not in (None, "") else None,
        title=data.get("title") or "",
        text=data.get("text") if data.get("text") is not None else "",
        extraction=data.get("extraction"),
    )


def add_fact(facts: dict[str, dict[str, Any]], subject: str, predicate: str, obj: str, passage: str) -> None:
    """Record one extracted triple (normalised subject and object) as an assertion of its Fact by ``passage``.

    A fact is the normalised (subject, predicate, object); its text, which is embedded, is the three joined
    by spaces; its id is a hash of the three (keys of any length fit the uniqueness constraint).
    """
    pred = normalize_phrase(predicate)
    fid = hashlib.sha256(f"{subject}\t{pred}\t{obj}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    fact = facts.get(fid)
    if fact is None:
        text = " ".join(x for x in (subject, pred, obj) if x)
        fact = facts[fid] = {"id": fid, "subject": subject, "predicate": pred, "object": obj, "text": text, "sources": []}
    fact["sources"].append(passage)


def _valid_triple(triple: Any) -> tuple[str, str, str] | None:
    if not isinstance(triple, (list, tuple)) or len(triple) != 3:
        return None
    if not all(isinstance(x, str) and x.strip() and len(x) <= MAX_KEY_CHARS for x in triple):
        return None
    return triple[0], scrub(triple[1].strip()), triple[2]


def _usable(vector: np.ndarray) -> bool:
    """A vector the cosine vector indexes accept: finite and not all zeros."""
    return bool(np.isfinite(vector).all() and np.abs(vector).sum() > 0)


def _finite_or_none(vector: np.ndarray) -> list[float] | None:
    return vector.tolist() if _usable(vector) else None


class HippoRAG:
    """A HippoRAG memory living in one namespace of a Neo4j database."""

    def __init__(
        self,
        connection: ConnectionSettings | None = None,
        *,
        namespace: str | None = None,
        encoder: Encoder | None = None,
        extractor: Any = None,
        config: HippoConfig | None = None,
        driver: Driver | None = None,
        fact_filter: Any = "auto",
    ) -> None:
        self.connection = connection or ConnectionSettings.from_env()
        self.namespace = scrub(namespace or self.connection.namespace or "")
        if not self.namespace or len(self.namespace) > 200:
            raise ConfigError("A namespace must be a non-empty string of at most 200 characters.")
        self.database = self.connection.database
        self.config = config or HippoConfig()
        self.encoder = encoder or shared_encoder()
        self._extractor = extractor
        self._fact_filter = fact_filter
        self._owns_driver = driver is None
        self.driver = driver or connect(self.connection)
        self.ensure_schema()

    # -- lifecycle

    def close(self) -> None:
        if self._owns_driver:
            self.driver.close()

    def __enter__(self) -> "HippoRAG":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def extractor(self) -> Any:
        if self._extractor is None:
            from .extract import make_extractor

            self._extractor = make_extractor("auto")
        return self._extractor

    @property
    def fact_filter(self) -> Any:
        """hipporag2's recognition filter: the LLM one when an LLM is configured ("auto"), else None."""
        if self._fact_filter == "auto":
            from .extract.llm import llm_configured

            if llm_configured():
                from .reader import RecognitionFilter

                self._fact_filter = RecognitionFilter()
            else:
                self._fact_filter = None
        return self._fact_filter

    def _run(self, name: str, **params: Any) -> list[Any]:
        return self.driver.execute_query(cypher(name), ns=self.namespace, database_=self.database, **params).records

    def _write(self, work: Callable[[Any], None]) -> None:
        """One write transaction that also bumps the namespace's graph version (stale projections).

        ``work(tx)`` runs through ``execute_write``: a transient failure (a deadlock between concurrent
        writers, a leader switch) rolls back and runs it again, so it must only issue its statements.
        """

        def unit(tx: Any) -> None:
            work(tx)
            projection.bump_version(tx, self.namespace)

        with self.driver.session(database=self.database) as session:
            session.execute_write(unit)

    def ensure_schema(self) -> None:
        """Constraints and indexes (idempotent), then wait until every index is online."""
        dim = self.encoder.dimension
        for statement in cypher_statements("schema"):
            self.driver.execute_query(statement.replace("$dim", str(int(dim))), database_=self.database)
        found = self.driver.execute_query(
            "SHOW VECTOR INDEXES YIELD name, options WHERE name = 'hippo_phrase_embedding' "
            "RETURN options.indexConfig['vector.dimensions'] AS dim",
            database_=self.database,
        ).records
        if found and found[0]["dim"] != dim:
            raise ConfigError(
                f"The database's phrase vector index has dimension {found[0]['dim']} but encoder "
                f"{self.encoder.name!r} produces {dim}. Use the encoder the graph was built with, or another database."
            )
        self.driver.execute_query("CALL db.awaitIndexes(300)", database_=self.database)

    # -- indexing

    def index(
        self, passages: Iterable[PassageIn | dict[str, Any] | str], *, progress: bool = False
    ) -> IndexReport:
        """Index passages (idempotent: the same id with the same content again is a no-op)."""
        items = [as_passage(p) for p in passages]
        report = IndexReport(passages=len(items))
        if not self.facts_complete():  # indexed before Fact nodes existed: derive them first, once
            log.warning("namespace %r has no Fact nodes yet (indexed by an older version): deriving them",
                        self.namespace)
            self.rebuild_facts()
        unique: dict[str, PassageIn] = {}
        limit = self.config.max_passage_chars
        for item in items:
            if not item.text.strip():
                report.skipped_empty += 1
            elif len(item.full_text) > limit or len(item.passage_id) > MAX_KEY_CHARS:
                report.rejected.append(item.passage_id[:100])
                log.warning(
                    "passage %r not indexed: %s",
                    item.passage_id[:100],
                    f"{len(item.full_text):,} characters, the limit is {limit:,} (HIPPO_MAX_PASSAGE_CHARS); "
                    "split long documents into paragraph-sized passages"
                    if len(item.full_text) > limit
                    else f"its id has {len(item.passage_id):,} characters, the limit is {MAX_KEY_CHARS:,}",
                )
            elif item.passage_id in unique:
                report.skipped_duplicate_id += 1
                if unique[item.passage_id].hash != item.hash:
                    log.warning("passage id %r appears twice with different text; the first is kept", item.passage_id)
            else:
                unique[item.passage_id] = item
        todo = list(unique.values())
        size = max(1, self.config.batch_size)
        batches = [todo[i : i + size] for i in range(0, len(todo), size)]
        with _progress(progress, len(todo), f"indexing into {self.namespace!r}") as advance:
            for batch in batches:
                report.merge(self._index_batch(batch))
                advance(len(batch))
        return report

    def _index_batch(self, batch: list[PassageIn]) -> IndexReport:
        report = IndexReport()
        known = {r["id"]: r["hash"] for r in self._run("passage_hashes", ids=[p.passage_id for p in batch])}
        fresh: list[PassageIn] = []
        for p in batch:
            old = known.get(p.passage_id)
            if old == p.hash:
                report.unchanged += 1
            else:
                report.updated += old is not None
                fresh.append(p)
        if not fresh:
            return report

        began = time.perf_counter()
        need = [p for p in fresh if p.extraction is None]
        if need:
            extracted = self.extractor.extract(need)
            for p, ext in zip(need, extracted):
                p.extraction = ext
        report.timings["extract_s"] += time.perf_counter() - began
        ok = []
        for p in fresh:
            if p.extraction is None:
                report.extraction_failures.append(p.passage_id)
            else:
                ok.append(p)
        if not ok:
            return report
        # An id indexed before with other content: its old contribution is removed in the same transaction
        # that writes the new one, so readers see the old version or the new one, never neither.
        updated_ids = [p.passage_id for p in ok if p.passage_id in known]

        # Triples -> normalised phrases, mentions and relations.
        rows, mentions, relations = [], [], []
        facts: dict[str, dict[str, Any]] = {}
        phrases: set[str] = set()
        for p in ok:
            counts: Counter[str] = Counter()
            kept = 0
            for triple in p.extraction.triples:  # type: ignore[union-attr]
                valid = _valid_triple(triple)
                s, o = (normalize_phrase(valid[0]), normalize_phrase(valid[2])) if valid else ("", "")
                if not valid or not s or not o:
                    report.malformed_triples += 1
                    continue
                if s == o:
                    report.self_loop_triples += 1
                    continue
                kept += 1
                counts[s] += 1
                counts[o] += 1
                relations.append({"subject": s, "object": o, "predicate": valid[1], "passage": p.passage_id})
                add_fact(facts, s, valid[1], o, p.passage_id)
            report.triples += kept
            report.no_triples += kept == 0
            phrases.update(counts)
            mentions += [{"phrase": ph, "passage": p.passage_id, "count": c} for ph, c in counts.items()]
            rows.append({"id": p.passage_id, "title": p.title, "text": p.text, "hash": p.hash, "triples": kept})

        existing = {r["text"] for r in self._run("existing_phrases", texts=sorted(phrases), replacing=updated_ids)}
        new_phrases = sorted(phrases - existing)
        began = time.perf_counter()
        passage_vectors = self.encoder.encode([p.full_text for p in ok])
        phrase_vectors = self.encoder.encode(new_phrases)
        fact_rows, new_facts = self._embed_new_facts(facts, updated_ids)
        report.timings["embed_s"] += time.perf_counter() - began
        for row, vec in zip(rows, passage_vectors):
            row["embedding"] = _finite_or_none(vec)
        phrase_rows = [{"text": t, "embedding": _finite_or_none(v)} for t, v in zip(new_phrases, phrase_vectors)]

        def write(tx: Any) -> None:
            # The content hash is set last, by the synonym transaction: a passage without it (the process
            # died in between) is indexed again from scratch on the next run, so no SYNONYM edge is lost.
            unsealed = [row | {"hash": None} for row in rows]
            if updated_ids:
                tx.run(cypher("delete_passages"), ns=self.namespace, ids=updated_ids).consume()
            tx.run(cypher("write_passages"), ns=self.namespace, passages=unsealed).consume()
            tx.run(cypher("write_phrases"), ns=self.namespace, phrases=phrase_rows).consume()
            tx.run(cypher("write_mentions"), ns=self.namespace, mentions=mentions).consume()
            tx.run(cypher("write_relations"), ns=self.namespace, relations=relations).consume()
            tx.run(cypher("write_facts"), ns=self.namespace, facts=fact_rows).consume()

        began = time.perf_counter()
        self._write(write)
        report.timings["write_s"] += time.perf_counter() - began
        report.indexed += len(ok)
        report.new_phrases += len(new_phrases)
        report.new_facts += new_facts

        began = time.perf_counter()
        seal = [{"id": row["id"], "hash": row["hash"]} for row in rows]
        report.synonym_edges += self._link_synonyms([r for r in phrase_rows if r["embedding"] is not None], seal)
        report.timings["synonym_s"] += time.perf_counter() - began
        return report

    def _embed_new_facts(
        self, facts: dict[str, dict[str, Any]], replacing: list[str]
    ) -> tuple[list[dict[str, Any]], int]:
        """The fact rows to write, and how many are new: those the namespace does not hold yet (or that only
        the passages in ``replacing`` assert) get an embedding, the others keep theirs."""
        existing = {r["id"] for r in self._run("existing_facts", ids=sorted(facts), replacing=replacing)}
        new = [f for fid, f in facts.items() if fid not in existing]
        for f, vec in zip(new, self.encoder.encode([f["text"] for f in new])):
            f["embedding"] = _finite_or_none(vec)
        return [f | {"embedding": f.get("embedding")} for f in facts.values()], len(new)

    def rebuild_facts(self) -> dict[str, int]:
        """Derive the namespace's Fact nodes from RELATION provenance (idempotent).

        For namespaces indexed before facts were stored: every triple is recorded on its RELATION edge, so the
        facts (and their sources) follow exactly; missing facts are created and embedded, existing ones get
        their sources recomputed.
        """
        facts: dict[str, dict[str, Any]] = {}
        for r in self._run("relation_facts"):
            add_fact(facts, r["subject"], r["predicate"], r["object"], r["passage"])
        rows, created = self._embed_new_facts(facts, [])
        size = max(1, self.config.batch_size) * 4
        for start in range(0, len(rows), size):
            chunk = rows[start : start + size]
            self._write(lambda tx: tx.run(cypher("rebuild_facts"), ns=self.namespace, facts=chunk).consume())
        self._write(lambda tx: tx.run("MATCH (n:HippoNamespace {name: $ns}) SET n.facts = true", ns=self.namespace).consume())
        return {"facts": len(rows), "created": created}

    def facts_complete(self) -> bool:
        """False for a namespace indexed before Fact nodes existed (until :meth:`rebuild_facts`)."""
        return bool(self._run("facts_complete")[0]["complete"])

    def _phrase_neighbours(self, rows: list[dict[str, Any]], first_k: int, done: Any) -> dict[Any, list[dict[str, Any]]]:
        """Nearest phrases of this namespace per row ({key, embedding}), through the shared vector index.

        The index spans all namespaces, so each row's search widens (k x 10) until ``done(row_hits, seen, k,
        last_cosine)`` says enough of this namespace's phrases were seen.
        """
        results: dict[Any, list[dict[str, Any]]] = {}
        pending = rows
        for k in _widening(first_k):
            still = []
            for i in range(0, len(pending), 500):
                chunk = pending[i : i + 500]
                by_key = {r["key"]: r for r in chunk}
                for rec in self._run("phrase_neighbours", rows=chunk, k=k):
                    results[rec["key"]] = rec["hits"]
                    if not done(rec["hits"], rec["seen"], k, rec["last"]):
                        still.append(by_key[rec["key"]])
            pending = still
            if not pending:
                break
        return results

    def _link_synonyms(self, new_phrases: list[dict[str, Any]], seal: list[dict[str, Any]] | None = None) -> int:
        """SYNONYM edges for new phrases only, from the vector index's nearest neighbours (never all-vs-all).

        ``seal`` ({id, hash} rows) marks the batch's passages complete in the same transaction.
        """
        eligible = [{"key": r["text"], "embedding": r["embedding"]} for r in new_phrases if alnum_count(r["text"]) > 2]
        if not eligible:
            if seal:
                self._write(lambda tx: tx.run(cypher("seal_passages"), ns=self.namespace, passages=seal).consume())
            return 0
        top_k, tau = self.config.synonym_top_k, self.config.synonym_threshold

        def done(hits: list[dict[str, Any]], seen: int, k: int, last: float | None) -> bool:
            # enough candidates of this namespace, the index is exhausted, or no further hit can reach tau
            return len(hits) > top_k or seen < k or last is None or last < tau

        pairs: dict[tuple[str, str], float] = {}
        for phrase, hits in self._phrase_neighbours(eligible, top_k + 1, done).items():
            candidates = [h for h in hits if h["text"] != phrase][:top_k]
            for hit in candidates:
                if hit["cosine"] >= tau and alnum_count(hit["text"]) > 2:
                    a, b = sorted((phrase, hit["text"]))
                    pairs[(a, b)] = max(pairs.get((a, b), -1.0), float(hit["cosine"]))
        rows = [{"a": a, "b": b, "score": s} for (a, b), s in pairs.items()]

        def write(tx: Any) -> None:
            if rows:
                tx.run(cypher("write_synonyms"), ns=self.namespace, pairs=rows).consume()
            if seal:
                tx.run(cypher("seal_passages"), ns=self.namespace, passages=seal).consume()

        if rows or seal:
            self._write(write)
        return len(pairs)

    def import_openie(self, path: str | Path, *, progress: bool = False) -> IndexReport:
        """Index a corpus with the extraction from a HippoRAG OpenIE file (``{"docs": [...]}``)."""
        return self.index(load_openie(path), progress=progress)

    # -- deleting

    def delete(self, passage_ids: Sequence[str]) -> DeleteReport:
        """Remove passages and exactly their contribution to the graph."""
        ids = list(dict.fromkeys(scrub(str(i)) for i in passage_ids))
        found = {r["id"] for r in self._run("passage_hashes", ids=ids)}
        size = max(1, self.config.batch_size)
        present = [i for i in ids if i in found]
        for start in range(0, len(present), size):
            chunk = present[start : start + size]
            self._write(lambda tx: tx.run(cypher("delete_passages"), ns=self.namespace, ids=chunk).consume())
        return DeleteReport(requested=len(ids), deleted=len(present), missing=[i for i in ids if i not in found])

    def drop_namespace(self) -> dict[str, int]:
        """Delete every node of this namespace and its projections."""
        before = self.stats()
        with self.driver.session(database=self.database) as session:
            session.run(cypher("drop_namespace"), ns=self.namespace).consume()
            session.run("MATCH (n:HippoNamespace {name: $ns}) DELETE n", ns=self.namespace).consume()
        projection.drop(self.driver, self.database, self.namespace)
        return before

    # -- reading

    def stats(self) -> dict[str, int]:
        return dict(self._run("stats")[0])

    def query(
        self,
        text: str,
        *,
        mode: Mode | str = "hipporag1",
        top_k: int = 10,
        entities: Sequence[str] | None = None,
        filter: bool = True,
    ) -> RetrievalResult:
        """Retrieve the top-k passages for ``text``.

        ``entities`` overrides query NER (hipporag1, hybrid, and hipporag2 with entity linking);
        ``filter=False`` skips hipporag2's LLM recognition filter (it is skipped anyway with no LLM).
        """
        began = time.perf_counter()
        if mode not in MODES:
            raise ConfigError(f"Unknown mode {mode!r}; choose one of {', '.join(MODES)}.")
        if top_k < 1:
            raise ConfigError("top_k must be at least 1.")
        text = scrub(text) if isinstance(text, str) else ""
        if entities is not None:
            entities = [scrub(e) for e in entities if isinstance(e, str)]
        if mode == "dense":
            result = self._dense(text, top_k)
        elif mode == "bm25":
            result = self._bm25(text, top_k)
        elif mode == "hipporag2":
            result = self._hipporag2(text, top_k, entities, filter)
        elif mode == "hybrid":
            result = self._hybrid(text, top_k, entities)
        else:
            result = self._hipporag1(text, top_k, entities)
        if not result.passages and not self._run("namespace_has_passages")[0]["any"]:
            result.warning = f"namespace {self.namespace!r} has no passages (index into it, or check the namespace)"
        result.elapsed_ms = (time.perf_counter() - began) * 1000
        return result

    def _passages(self, records: Iterable[Any]) -> list[RetrievedPassage]:
        return [
            RetrievedPassage(
                id=r["id"],
                title=r["title"],
                text=r["text"],
                score=float(r["score"]),
                contributors=[
                    Contributor(**c)
                    for c in sorted(r.get("contributors") or [], key=lambda c: c["contribution"], reverse=True)[:5]
                ],
            )
            for r in records
        ]

    def _dense(self, text: str, top_k: int, vector: np.ndarray | None = None) -> RetrievalResult:
        if not text.strip():
            return RetrievalResult(query=text, mode="dense")
        if vector is None:
            vector = self.encoder.encode([text])[0]
        if not _usable(vector):
            return RetrievalResult(query=text, mode="dense")
        for k in _widening(max(4 * top_k, 50)):  # the index spans namespaces: widen until top_k remain
            records = self._run("dense_passages", embedding=vector.tolist(), k=k, topK=top_k)
            if len(records) >= top_k or (records and records[0]["seen"] < k):
                break
        return RetrievalResult(query=text, mode="dense", passages=self._passages(records))

    def _bm25(self, text: str, top_k: int) -> RetrievalResult:
        words = list(re.finditer(r"\w+", text))
        cut = text if len(words) <= MAX_BM25_TERMS else text[: words[MAX_BM25_TERMS - 1].end()]
        query = lucene_escape(cut).strip()
        if not query or not words:
            return RetrievalResult(query=text, mode="bm25")
        while True:
            try:
                for k in _widening(100):  # widen until top_k hits of this namespace remain
                    records = self._run("bm25_passages", query=query, k=k, topK=top_k)
                    if len(records) >= top_k or (records and records[0]["hits"] < k):
                        break
                break
            except ClientError as exc:  # more clauses than Lucene allows (e.g. CJK: a clause per character)
                if "TooManyClauses" not in str(exc) or len(cut) < 2:
                    raise
                cut = cut[: len(cut) // 2]
                query = lucene_escape(cut).strip()
        return RetrievalResult(query=text, mode="bm25", passages=self._passages(records))

    def link_entities(self, entities: Sequence[str]) -> list[LinkedEntity]:
        """Each entity's most similar phrase (top-1 cosine), weighted 1/|P_i| and normalised to sum 1."""
        names = list(dict.fromkeys(e for e in entities if isinstance(e, str) and normalize_phrase(e)))
        if not names:
            return []
        vectors = self.encoder.encode([normalize_phrase(e) for e in names])
        rows = [{"key": e, "embedding": v.tolist()} for e, v in zip(names, vectors) if _usable(v)]
        found = self._phrase_neighbours(rows, 100, lambda hits, seen, k, last: bool(hits) or seen < k)
        best = {e: hits[0] for e, hits in found.items() if hits}
        counts = {
            r["text"]: r["passages"]
            for r in self._run("phrase_passage_counts", texts=sorted({h["text"] for h in best.values()}))
        }
        links = [
            LinkedEntity(entity=e, phrase=h["text"], similarity=float(h["cosine"]), passages=counts.get(h["text"], 0))
            for e, h in best.items()
        ]
        weights = {link.phrase: 1.0 / link.passages for link in links if link.passages > 0}
        total = sum(weights.values())
        for link in links:
            link.weight = weights.get(link.phrase, 0.0) / total if total else 0.0
        return links

    def ppr_parameters(self, seeds: dict[str, float], top_k: int) -> dict[str, Any]:
        """The parameters of ``cypher/ppr_passages.cypher`` (all but ``$graph`` and ``$ns``)."""
        return {
            "seeds": [{"text": t, "weight": w} for t, w in seeds.items()],
            "damping": self.config.damping,
            "maxIterations": self.config.ppr_max_iterations,
            "tolerance": self.config.ppr_tolerance,
            "concurrency": self.config.ppr_concurrency,
            "minMass": self.config.ppr_min_mass,
            "topK": top_k,
            "topPhrases": self.config.top_phrases,
        }

    def ppr2_parameters(
        self, seeds: dict[str, float], top_k: int, vector: np.ndarray, seed_rows: list[dict[str, Any]] | None
    ) -> dict[str, Any]:
        """The parameters of ``cypher/ppr2_passages.cypher`` (all but ``$graph`` and ``$ns``); ``seed_rows`` are
        :meth:`_passage_seed_rows` (None: every passage is seeded in the statement)."""
        cfg = self.config
        shared = {k: v for k, v in self.ppr_parameters(seeds, top_k).items() if k not in ("minMass", "topPhrases")}
        return shared | {
            "embedding": vector.tolist(),
            "passageWeight": cfg.passage_node_weight,
            "passageSeeds": cfg.passage_node_weight > 0,
            "passageSeedRows": seed_rows,
            "topSeeds": 5,
        }

    def _hipporag1(self, text: str, top_k: int, entities: Sequence[str] | None) -> RetrievalResult:
        ents = list(entities) if entities is not None else list(self.extractor.query_entities(text))
        linked = self.link_entities(ents)
        seeds = {link.phrase: link.weight for link in linked if link.weight > 0}
        if not seeds:
            fallback = self._dense(text, top_k)
            fallback.mode, fallback.entities, fallback.linked = "hipporag1", ents, linked
            fallback.fell_back = True
            fallback.fallback_reason = (
                "no query entities" if not ents else "no query entity links to a phrase in this namespace"
            )
            return fallback
        records = self._ppr("ppr_passages", "phrase", **self.ppr_parameters(seeds, top_k))
        return RetrievalResult(
            query=text,
            mode="hipporag1",
            entities=ents,
            linked=linked,
            top_phrases=records[0]["topPhrases"] if records else [],
            passages=self._passages(records),
        )


    def _ppr(self, statement: str, kind: str, **params: Any) -> list[Any]:
        """Run a PPR statement on the namespace's current projection of ``kind`` (projecting it if needed)."""
        graph = projection.ensure(self.driver, self.database, self.namespace, kind)
        try:
            return self._run(statement, graph=graph.name, **params)
        except ClientError as exc:  # the projection was dropped by another client: project again, once
            if "not found" not in str(exc) and "does not exist" not in str(exc):
                raise
            projection.forget(self.driver, self.database, self.namespace)
            graph = projection.ensure(self.driver, self.database, self.namespace, kind)
            return self._run(statement, graph=graph.name, **params)

    # -- HippoRAG 2

    def link_facts(self, vector: np.ndarray, top_k: int | None = None) -> list[FactHit]:
        """The query's nearest facts of this namespace (cosine), through the shared fact vector index."""
        return self._link_facts(vector, top_k)[0]

    def _link_facts(self, vector: np.ndarray, top_k: int | None = None) -> tuple[list[FactHit], bool]:
        """The nearest facts, and whether the namespace has Fact nodes for all its passages."""
        top_k = top_k or self.config.fact_top_k
        if not _usable(vector):
            return [], True
        for k in _widening(max(10 * top_k, 50)):  # the index spans namespaces: widen until top_k remain
            records = self._run("fact_neighbours", embedding=vector.tolist(), k=k, topK=top_k)
            if len(records) >= top_k or (records and records[0]["seen"] < k):
                break
            if not records and not self._run("namespace_has_facts")[0]["any"]:
                break
        hits = [
            FactHit(
                subject=r["subject"], predicate=r["predicate"], object=r["object"], score=float(r["score"]),
                subject_passages=r["subjectPassages"], object_passages=r["objectPassages"],
            )
            for r in records
        ]
        return hits, bool(records[0]["complete"]) if records else self.facts_complete()

    def fact_seeds(self, facts: Sequence[FactHit]) -> dict[str, float]:
        """Phrase seeds of the kept facts: each subject and object gets fact score / |P_i|, averaged over the
        kept facts that mention it; the ``link_top_phrases`` largest are kept."""
        total: dict[str, float] = {}
        count: Counter[str] = Counter()
        for fact in facts:
            if not fact.kept:
                continue
            for phrase, passages in ((fact.subject, fact.subject_passages), (fact.object, fact.object_passages)):
                if passages > 0:
                    total[phrase] = total.get(phrase, 0.0) + fact.score / passages
                    count[phrase] += 1
        averaged = {t: w / count[t] for t, w in total.items() if w > 0}
        top = sorted(averaged.items(), key=lambda x: (-x[1], x[0]))[: self.config.link_top_phrases]
        return dict(top)

    def _recognise(self, text: str, facts: list[FactHit], use_filter: bool) -> str:
        """Apply the recognition filter to ``facts`` (sets ``kept``); returns what the result reports."""
        flt = self.fact_filter if use_filter else None
        if flt is None or not facts:
            return "off"
        try:
            keep = set(flt.select(text, [f.triple for f in facts]))
        except Exception as exc:  # noqa: BLE001 - an unusable LLM must not fail retrieval: all facts stay
            log.warning("recognition filter failed (%s); keeping all %d facts", exc, len(facts))
            return f"failed: {exc}"
        for i, fact in enumerate(facts):
            fact.kept = i in keep
        return getattr(flt, "name", type(flt).__name__)

    def _hipporag2(
        self, text: str, top_k: int, entities: Sequence[str] | None, use_filter: bool
    ) -> RetrievalResult:
        cfg = self.config
        vector = self.encoder.encode([text])[0] if text.strip() else None
        result = RetrievalResult(query=text, mode="hipporag2")
        if cfg.linking == "entity":
            result.entities = list(entities) if entities is not None else list(self.extractor.query_entities(text))
            result.linked = self.link_entities(result.entities)
            seeds: dict[str, float] = {}
            for link in result.linked:  # the link's similarity stands in for the fact score
                if link.passages > 0:
                    seeds[link.phrase] = max(seeds.get(link.phrase, 0.0), link.similarity / link.passages)
            seeds = dict(sorted(seeds.items(), key=lambda x: (-x[1], x[0]))[: cfg.link_top_phrases])
            reason = "no query entity links to a phrase in this namespace"
        else:
            result.facts, complete = self._link_facts(vector) if vector is not None else ([], True)
            result.filter = self._recognise(text, result.facts, use_filter)
            seeds = self.fact_seeds(result.facts)
            if not complete:
                result.warning = (
                    f"namespace {self.namespace!r} was indexed before Fact nodes existed and has facts for new "
                    "passages only: run `hippo rebuild-facts` (or index into it) to derive the rest"
                )
            if any(f.kept for f in result.facts):
                reason = "no retrieved fact is similar to the query"  # every kept fact has cosine <= 0
            elif result.facts:
                reason = "the recognition filter kept no fact"
            elif vector is None or self._run("namespace_has_facts")[0]["any"]:
                reason = "no fact links to the query"
            else:
                reason = "no fact in this namespace"
        result.phrase_seeds = [Seed(node=t, weight=w) for t, w in seeds.items()]
        if not seeds:
            fallback = self._dense(text, top_k, vector)
            result.passages, result.fell_back, result.fallback_reason = fallback.passages, True, reason
            return result
        if not cfg.passage_nodes:  # ablation: phrases only, passages scored as in hipporag1
            records = self._ppr("ppr_passages", "phrase", **self.ppr_parameters(seeds, top_k))
            result.top_phrases = records[0]["topPhrases"] if records else []
            result.passages = self._passages(records)
            return result
        params = self.ppr2_parameters(seeds, top_k, vector, self._passage_seed_rows(text, vector))
        records = self._ppr("ppr2_passages", "passage", **params)
        if records:
            result.passages = self._passages(records[0]["ranked"])
            result.passage_seeds = [Seed(node=x["id"], weight=x["weight"]) for x in records[0]["topSeeds"]]
        return result

    def _passage_seed_rows(self, text: str, vector: np.ndarray) -> list[dict[str, Any]] | None:
        """With ``passage_seed_top_n``: the passage seeds of the top-N dense passages (min-max over them)."""
        n, weight = self.config.passage_seed_top_n, self.config.passage_node_weight
        if n is None or weight <= 0:
            return None
        top = self._dense(text, n, vector).passages
        if not top:
            return []
        lo, hi = min(p.score for p in top), max(p.score for p in top)
        return [{"id": p.id, "weight": weight * (p.score - lo) / (hi - lo)} for p in top if p.score > lo]

    # -- hybrid

    def _hybrid(self, text: str, top_k: int, entities: Sequence[str] | None) -> RetrievalResult:
        depth = max(top_k, self.config.hybrid_depth)
        graph = self._hipporag1(text, depth, entities)
        dense = graph if graph.fell_back else self._dense(text, depth)  # a fallback already is the dense ranking
        result = graph.model_copy(update={"mode": "hybrid", "top_phrases": []})
        result.passages = fuse(graph.passages, dense.passages, self.config.hybrid_lambda)[:top_k]
        return result


def fuse(graph: Sequence[RetrievedPassage], dense: Sequence[RetrievedPassage], lam: float) -> list[RetrievedPassage]:
    """Hybrid ranking: λ·minmax(graph score) + (1 − λ)·minmax(dense score) over the union of both lists (a
    passage missing from one list scores 0 there)."""

    def minmax(items: Sequence[RetrievedPassage]) -> dict[str, float]:
        if not items:
            return {}
        lo, hi = min(p.score for p in items), max(p.score for p in items)
        return {p.id: (p.score - lo) / (hi - lo) if hi > lo else 1.0 for p in items}

    g, d = minmax(graph), minmax(dense)
    by_id = {p.id: p for p in list(dense) + list(graph)}
    scored = {pid: lam * g.get(pid, 0.0) + (1 - lam) * d.get(pid, 0.0) for pid in by_id}
    order = sorted(scored, key=lambda pid: (-scored[pid], pid))
    return [by_id[pid].model_copy(update={"score": scored[pid]}) for pid in order]


# ----------------------------------------------------------------------------------------------- inputs


def load_openie(path: str | Path) -> list[PassageIn]:
    """Passages with their extraction from a HippoRAG OpenIE file."""
    try:
        data = json.loads(_read_utf8(path))
    except (OSError, ValueError) as exc:
        raise HippoError(f"Cannot read OpenIE file {path}: {exc}") from None
    docs = data.get("docs") if isinstance(data, dict) else None
    if not isinstance(docs, list):
        raise HippoError(f"{path} is not a HippoRAG OpenIE file: expected an object with a 'docs' list.")
    passages = []
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        title, body = doc.get("title") or "", doc.get("text")
        if body is None:  # older files only carry "passage" = title + "\n" + text
            body = doc.get("passage") or ""
        passages.append(
            PassageIn(
                title=title,
                text=body,
                extraction=Extraction(
                    named_entities=[e for e in doc.get("extracted_entities") or [] if isinstance(e, str)],
                    triples=doc.get("extracted_triples") or [],
                ),
            )
        )
    return passages


def _read_utf8(path: str | Path) -> str:
    """A file's text; bytes that are not UTF-8 become U+FFFD, with a warning that says where."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        log.warning(
            "%s is not valid UTF-8 (first bad byte at offset %d): %d invalid sequences replaced with U+FFFD",
            path, exc.start, text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd"),
        )
        return text


def load_corpus(path: str | Path) -> list[PassageIn]:
    """A HippoRAG corpus JSON list of {title, text} (optional id), or a directory of .txt/.md files."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.suffix.lower() in {".txt", ".md"} and p.is_file())
        return [
            PassageIn(id=str(f.relative_to(path)), title=f.stem, text=f.read_text(encoding="utf-8", errors="replace"))
            for f in files
        ]
    try:
        data = json.loads(_read_utf8(path))
    except (OSError, ValueError) as exc:
        raise HippoError(f"Cannot read corpus {path}: {exc}") from None
    if not isinstance(data, list):
        raise HippoError(f"{path}: a corpus is a JSON list of {{\"title\", \"text\"}} objects.")
    return [as_passage(d) for d in data if isinstance(d, (dict, str))]


def _widening(first: int, cap: int = 100_000) -> Iterator[int]:
    """k, 10k, 100k, ... up to ``cap``: how far a search over a shared index reads."""
    k = max(1, first)
    while True:
        yield k
        if k >= cap:
            return
        k = min(k * 10, cap)


@contextmanager
def _progress(enabled: bool, total: int, label: str) -> Iterator[Any]:
    if not enabled or total == 0:
        yield lambda n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=False
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)
