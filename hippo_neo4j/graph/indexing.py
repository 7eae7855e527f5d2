"""Indexing as a chain of components with typed data between them:

    extraction (extract/)  →  PhraseNormaliser  →  embedding  →  GraphWriter  →  SynonymLinker  →  projection

- extraction gives each passage its named entities and raw triples (:class:`~hippo_neo4j.models.Extraction`);
- :class:`PhraseNormaliser` turns triples into normalised phrases, MENTIONED_IN counts, RELATION assertions and
  facts (:class:`NormalisedBatch`), counting what it skips;
- only new phrases and facts are embedded, with the passages, in a worker thread one batch ahead of the writes;
- :class:`GraphWriter` writes a batch in one transaction (an updated passage's old contribution goes in the same
  one), leaving its passages unsealed;
- :class:`SynonymLinker` adds SYNONYM edges for the new phrases and seals the passages;
- every write bumps the namespace's version, so the GDS projection (``projection.py``) is rebuilt lazily.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from pydantic import BaseModel, Field

from ..config import HippoConfig
from ..db import cypher
from ..metadata import facets, stored
from ..models import IndexReport, PassageIn, SkippedItem, item_name
from ..progress import progress_bar
from ..text import fold_phrase, normalize_phrase, scrub
from . import binding
from .facts import FactRows, FactStore, add_fact
from .store import GraphStore, finite_or_none
from .synonyms import PhraseVectors, SynonymLinker

log = logging.getLogger(__name__)

Extract = Callable[[list[PassageIn]], list[Any]]  # an extractor's extract(): one Extraction (or None) per passage

MAX_KEY_CHARS = 1000  # passage ids and phrases are keys of range indexes (about 8 kB per key): longer ones are refused


def metadata_update(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """The `meta_` properties that turn a passage's stored ones (``old``) into the metadata ``new``: every new
    one, and None (remove) for each old one it lacks."""
    props = stored(new)
    return props | {k: None for k in old if k not in props}


def same_metadata(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """Whether the stored properties ``old`` hold the metadata ``new`` (types too: True is not 1)."""
    typed = lambda props: {k: (type(v).__name__, v) for k, v in props.items()}  # noqa: E731
    return typed(stored(new)) == typed(old)


def valid_triple(triple: Any) -> tuple[str, str, str] | None:
    """Three non-empty strings of at most MAX_KEY_CHARS (predicate scrubbed), else None (malformed)."""
    if not isinstance(triple, (list, tuple)) or len(triple) != 3:
        return None
    if not all(isinstance(x, str) and x.strip() and len(x) <= MAX_KEY_CHARS for x in triple):
        return None
    return triple[0], scrub(triple[1].strip()), triple[2]


# ------------------------------------------------------------------------------------------ normalisation


def phrase_row(text: str, vector: Any) -> dict[str, Any]:
    """A new phrase's row of ``cypher/write_phrases.cypher``: its text, its key without accents where that differs
    (``fold``), and its embedding."""
    fold = fold_phrase(text)
    return {"text": text, "fold": fold if fold != text else None, "embedding": finite_or_none(vector)}


class Mention(BaseModel):
    phrase: str
    passage: str
    count: int
    named: bool = False  # one of the passage's entities (its title among them), not only a triple argument


class Relation(BaseModel):
    subject: str
    object: str
    predicate: str
    passage: str


class PassageRow(BaseModel):
    id: str
    title: str
    text: str
    hash: str
    triples: int
    metadata: dict[str, Any] = Field(default_factory=dict, description="the `meta_` properties to set")
    facets: list[dict[str, Any]] = Field(default_factory=list, description="its metadata's facets (metadata.facets)")


class NormalisedBatch(BaseModel):
    """What the graph writer needs of a batch of extracted passages."""

    passages: list[PassageRow] = Field(default_factory=list)
    phrases: list[str] = Field(default_factory=list, description="every normalised phrase of the batch, sorted")
    mentions: list[Mention] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)
    facts: FactRows = Field(default_factory=dict)
    triples: int = 0
    malformed_triples: int = 0
    self_loop_triples: int = 0
    no_triples: int = 0


class PhraseNormaliser:
    """HippoRAG's phrase nodes, normalised (lower-case, non-alphanumerics to space): a triple's subject and
    object, and every entity the extractor reports for the passage, its title among them. Each triple is a
    relation between its two phrases. A passage mentions each of its phrases as often as the phrase occurs in
    its triples, plus once if it is one of its entities: a passage is linked to everything it names, not only
    to the arguments of the clauses an extractor managed to parse."""

    def normalise(self, passages: Iterable[PassageIn]) -> NormalisedBatch:
        batch = NormalisedBatch()
        phrases: set[str] = set()
        for p in passages:
            counts: Counter[str] = Counter()
            kept = 0
            for triple in p.extraction.triples if p.extraction else []:
                valid = valid_triple(triple)
                s, o = (normalize_phrase(valid[0]), normalize_phrase(valid[2])) if valid else ("", "")
                if not valid or not s or not o:
                    batch.malformed_triples += 1
                    continue
                if s == o:
                    batch.self_loop_triples += 1
                    continue
                kept += 1
                counts[s] += 1
                counts[o] += 1
                batch.relations.append(Relation(subject=s, object=o, predicate=valid[1], passage=p.passage_id))
                add_fact(batch.facts, s, valid[1], o, p.passage_id)
            batch.triples += kept
            batch.no_triples += kept == 0
            names = [p.title, *(p.extraction.named_entities if p.extraction else [])]
            named = {n for n in (normalize_phrase(x) for x in names if isinstance(x, str)) if n and len(n) <= MAX_KEY_CHARS}
            for name in named:
                counts[name] += 1
            phrases.update(counts)
            batch.mentions += [
                Mention(phrase=ph, passage=p.passage_id, count=c, named=ph in named) for ph, c in counts.items()
            ]
            # an updated passage's node is deleted before it is written again: its old metadata goes with it
            batch.passages.append(PassageRow(id=p.passage_id, title=p.title, text=p.text, hash=p.hash, triples=kept,
                                             metadata=stored(p.metadata), facets=facets(p.metadata)))
        batch.phrases = sorted(phrases)
        return batch


# ------------------------------------------------------------------------------------------------ writing


class GraphWriter:
    """Writes a normalised, embedded batch in one transaction; an updated passage's old contribution is
    removed in the same one, so readers see the old version or the new one, never neither."""

    def __init__(self, store: GraphStore, encoder: Any) -> None:
        self.store = store
        self.encoder = encoder

    def write(
        self,
        batch: NormalisedBatch,
        passage_rows: list[dict[str, Any]],
        phrase_rows: list[dict[str, Any]],
        fact_rows: list[dict[str, Any]],
        replacing: list[str],
    ) -> int:
        """The graph version written."""
        ns, scope = self.store.namespace, self.store.scope
        self.store.ensure_indexes()
        mentions = [m.model_dump() for m in batch.mentions]
        relations = [r.model_dump() for r in batch.relations]

        def work(tx: Any) -> None:
            # The content hash is set last, by the synonym transaction: a passage without it (the process
            # died in between) is indexed again from scratch on the next run, so no SYNONYM edge is lost.
            unsealed = [row | {"hash": None} for row in passage_rows]
            if replacing:
                tx.run(cypher("delete_passages"), **scope, ids=replacing).consume()
            tx.run(cypher("write_passages"), **scope, passages=unsealed).consume()
            tx.run(cypher("write_phrases"), **scope, phrases=phrase_rows).consume()
            tx.run(cypher("write_mentions"), **scope, mentions=mentions).consume()
            tx.run(cypher("write_relations"), **scope, relations=relations).consume()
            tx.run(cypher("write_facts"), **scope, facts=fact_rows).consume()
            binding.bind(tx, ns, self.encoder)  # a namespace's first write records its encoder

        return self.store.write(work)


# ----------------------------------------------------------------------------------------------- pipeline


Vectors = Future  # a Future of (list of arrays, one per encoded list of texts; seconds the encoder took)


@dataclass
class StagedBatch:
    """A batch between its reads and its write: what it will write, and its vectors as they are encoded."""

    report: IndexReport
    size: int  # passages of the input batch (for the progress bar)
    ok: list[PassageIn]
    normalised: NormalisedBatch
    updated_ids: list[str]
    passage_vectors: Vectors | None = None
    new_phrases: list[str] = field(default_factory=list)
    new_facts: list[dict[str, Any]] = field(default_factory=list)
    new_vectors: Vectors | None = None  # of new_phrases, then of new_facts
    passage_rows: list[dict[str, Any]] = field(default_factory=list)  # as written (for the seal)
    phrase_rows: list[dict[str, Any]] = field(default_factory=list)


class Inline:
    """Runs each job at once, in the caller's thread (the batch-by-batch path): an error is raised at once."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        future.set_result(fn(*args))
        return future


class Indexer:
    """Validates and batches passages, and runs each batch through the chain above.

    Encoding, the bulk of the work on CPU, runs in a worker thread ahead of the writes (onnxruntime releases
    the GIL): while batch i is written and linked, batch i+1 is encoded. The transactions keep their order
    (batch i's write, its synonym transaction, then batch i+1's write), and what batch i+1 looks up in the
    graph (its existing phrases and facts) is read after batch i's write, so the graph is the one the
    batch-by-batch path writes; one batch is held ahead of the one being written.
    """

    def __init__(self, store: GraphStore, encoder: Any, facts: FactStore) -> None:
        self.store = store
        self.encoder = encoder
        self.facts = facts
        self.normaliser = PhraseNormaliser()
        self.writer = GraphWriter(store, encoder)
        self.synonyms = SynonymLinker(store, getattr(encoder, "synonym_threshold", 0.8))
        self.overlap = True  # False: each batch is read, encoded, written and linked before the next one
        self.held: PhraseVectors | None = None  # the namespace's phrase vectors during a bulk run (synonyms.py)
        self.holding = 0  # passages of the run, until its first write decides whether to hold them

    def accept(
        self, items: Sequence[PassageIn | SkippedItem], config: HippoConfig, report: IndexReport
    ) -> list[PassageIn]:
        """The passages to index. Each other item is named in ``report.skipped`` with the reason (by its id, or
        ``#<position>`` in ``items`` when it has none), and left out: an item refused already (a
        :class:`SkippedItem`: not a passage object, invalid fields), an empty passage (``skipped_empty``), an
        over-long text or id (``rejected``), an id met earlier in ``items`` (``skipped_duplicate_id``)."""
        unique: dict[str, tuple[int, PassageIn]] = {}
        limit = config.max_passage_chars
        for position, item in enumerate(items):
            if isinstance(item, SkippedItem):
                report.skipped.append(item)
                continue
            name = item_name(item.id, position)
            if not item.text.strip():
                report.skipped_empty += 1
                report.skipped.append(SkippedItem(item=name, reason="the text is empty (or only whitespace)"))
            elif len(item.full_text) > limit or len(item.passage_id) > MAX_KEY_CHARS:
                report.rejected.append(item.passage_id[:100])
                long_text = len(item.full_text) > limit
                log.warning(
                    "passage %r not indexed: %s",
                    item.passage_id[:100],
                    f"{len(item.full_text):,} characters, the limit is {limit:,} (HIPPO_MAX_PASSAGE_CHARS); "
                    "split long documents into paragraph-sized passages"
                    if long_text
                    else f"its id has {len(item.passage_id):,} characters, the limit is {MAX_KEY_CHARS:,}",
                )
                reason = (
                    f"{'title and text have' if item.title else 'text has'} {len(item.full_text):,} characters; the "
                    f"limit is {limit:,} (HIPPO_MAX_PASSAGE_CHARS): split it into paragraph-sized passages"
                    if long_text
                    else f"id has {len(item.passage_id):,} characters; the limit is {MAX_KEY_CHARS:,}"
                )
                report.skipped.append(SkippedItem(item=name, reason=reason))
            elif item.passage_id in unique:
                report.skipped_duplicate_id += 1
                first, kept = unique[item.passage_id]
                if not item.id:  # its id is derived from its content
                    reason = f"the same title and text as item #{first} (kept once)"
                elif kept.hash == item.hash:
                    reason = f"the same id and content as item #{first} (kept once)"
                else:
                    reason = f"the id of item #{first}, whose content is kept instead"
                    log.warning("passage id %r appears twice with different text; the first is kept", item.passage_id)
                report.skipped.append(SkippedItem(item=name, reason=reason))
            else:
                unique[item.passage_id] = (position, item)
        return [item for _, item in unique.values()]

    def index(
        self, items: Sequence[PassageIn | SkippedItem], config: HippoConfig, extract: Extract, *, progress: bool = False
    ) -> IndexReport:
        """Index ``items`` (:meth:`accept` names those left out in ``report.skipped``)."""
        report = IndexReport(passages=len(items))
        todo = self.accept(items, config, report)
        size = max(1, config.batch_size)
        batches = [todo[i : i + size] for i in range(0, len(todo), size)]
        self.holding = len(todo)  # whether to hold the phrase vectors is decided at the run's first write
        try:
            with progress_bar(progress, len(todo), f"indexing into {self.store.namespace!r}") as advance:
                if not self.overlap:
                    for batch in batches:
                        report.merge(self.index_batch(batch, config, extract))
                        advance(len(batch))
                    return report
                pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hippo-encode")
                try:
                    self.pipeline(batches, config, extract, pool, report, advance)
                finally:  # on an error: drop what is queued, wait for the encoding under way (no stray thread)
                    pool.shutdown(wait=True, cancel_futures=True)
        finally:
            self.held, self.holding = None, 0
        return report

    def index_batch(self, batch: list[PassageIn], config: HippoConfig, extract: Extract) -> IndexReport:
        """One batch, start to end, before anything of the next one."""
        report, staged = self.read(batch, extract)
        if staged is None:
            return report
        now = Inline()
        self.encode_passages(staged, now)
        self.encode_new(staged, now)
        self.write(staged)
        self.link(staged, config)
        return staged.report

    def pipeline(
        self, batches: list[list[PassageIn]], config: HippoConfig, extract: Extract, pool: Any, report: IndexReport,
        advance: Callable[[int], None],
    ) -> None:
        """The batches with their encoding a batch ahead in ``pool`` (one worker), in this order:

            write i  →  look up batch i+1's new phrases and facts, queue their encoding  →  link i
            →  read batch i+2, queue its passages' encoding  →  write i+1 (once its vectors are in)  → ...

        so the worker encodes batch i+1 while batch i is written and linked. A failure while reading a batch
        ahead (its extraction) is raised when that batch's turn comes, after the batches before it are
        written and sealed, as in the batch-by-batch order; an encoder error is raised when its batch is
        written (``Future.result``).
        """
        upcoming = iter(batches)

        def admit() -> StagedBatch | Exception | None:
            """The next batch with something to write, its passages queued for encoding."""
            for batch in upcoming:
                try:
                    part, staged = self.read(batch, extract)
                except Exception as exc:  # noqa: BLE001 - raised in its turn, below
                    return exc
                if staged is not None:
                    self.encode_passages(staged, pool)
                    return staged
                report.merge(part)
                advance(len(batch))
            return None

        current = admit()
        following = None
        if isinstance(current, StagedBatch):
            self.encode_new(current, pool)
            following = admit()
        while current is not None:
            if isinstance(current, Exception):
                raise current
            self.write(current)
            if isinstance(following, StagedBatch):
                self.encode_new(following, pool)  # after current's write: sees its phrases and facts
            self.link(current, config)
            report.merge(current.report)
            advance(current.size)
            current, following = following, admit() if isinstance(following, StagedBatch) else None

    # -- the steps of a batch -----------------------------------------------------------------------------------

    def read(self, batch: list[PassageIn], extract: Extract) -> tuple[IndexReport, StagedBatch | None]:
        """Which passages are new or changed, their extraction and normalisation; None if nothing is to write."""
        report = IndexReport()
        rows = self.store.run("passage_hashes", ids=[p.passage_id for p in batch])
        known = {r["id"]: r["hash"] for r in rows}
        metadata = {r["id"]: dict(r["meta"]) for r in rows}
        fresh: list[PassageIn] = []
        relabel: list[dict[str, Any]] = []  # the same content with other metadata: written, not re-indexed
        for p in batch:
            old = known.get(p.passage_id)
            if old == p.hash and same_metadata(p.metadata, metadata[p.passage_id]):
                report.unchanged += 1
            elif old == p.hash:
                relabel.append({"id": p.passage_id, "metadata": metadata_update(p.metadata, metadata[p.passage_id]),
                                "facets": facets(p.metadata)})
            else:
                report.updated += old is not None
                fresh.append(p)
        if relabel:
            self.store.run("write_metadata", passages=relabel)
            report.metadata_updated += len(relabel)
        if not fresh:
            return report, None

        began = time.perf_counter()
        need = [p for p in fresh if p.extraction is None]
        if need:
            for p, ext in zip(need, extract(need)):
                p.extraction = ext
        report.timings["extract_s"] += time.perf_counter() - began
        ok = []
        for p in fresh:
            if p.extraction is None:
                report.extraction_failures.append(p.passage_id)
            else:
                ok.append(p)
        if not ok:
            return report, None
        updated_ids = [p.passage_id for p in ok if p.passage_id in known]

        normalised = self.normaliser.normalise(ok)
        for name in ("triples", "malformed_triples", "self_loop_triples", "no_triples"):
            setattr(report, name, getattr(normalised, name))
        return report, StagedBatch(report, len(batch), ok, normalised, updated_ids)

    def encode_passages(self, staged: StagedBatch, pool: Any) -> None:
        staged.passage_vectors = pool.submit(self.encode, [p.full_text for p in staged.ok])

    def encode_new(self, staged: StagedBatch, pool: Any) -> None:
        """Which of the batch's phrases and facts the graph lacks (read now: after the previous batch's
        write), and their encoding queued."""
        existing = {
            r["text"]
            for r in self.store.run("existing_phrases", texts=staged.normalised.phrases, replacing=staged.updated_ids)
        }
        staged.new_phrases = [t for t in staged.normalised.phrases if t not in existing]
        staged.new_facts = self.facts.new_facts(staged.normalised.facts, staged.updated_ids)
        staged.new_vectors = pool.submit(self.encode, staged.new_phrases, [f["text"] for f in staged.new_facts])

    def encode(self, *texts: list[str]) -> tuple[list[Any], float]:
        """Each list of texts encoded (one encoder call each, as the graph's vectors depend on the call's
        batches), and the seconds it took."""
        began = time.perf_counter()
        vectors = [self.encoder.encode(t) for t in texts]
        return vectors, time.perf_counter() - began

    def vectors(self, staged: StagedBatch) -> tuple[Any, Any, Any]:
        """The batch's passage, new phrase and new fact vectors, waiting for the encoder if need be."""
        assert staged.passage_vectors is not None and staged.new_vectors is not None
        timings = staged.report.timings
        began = time.perf_counter()
        (passages,), passage_s = staged.passage_vectors.result()
        (phrases, facts), new_s = staged.new_vectors.result()
        timings["encode_wait_s"] = timings.get("encode_wait_s", 0.0) + time.perf_counter() - began
        timings["embed_s"] += passage_s + new_s
        return passages, phrases, facts

    def write(self, staged: StagedBatch) -> None:
        passage_vectors, phrase_vectors, fact_vectors = self.vectors(staged)
        normalised, report = staged.normalised, staged.report
        staged.passage_rows = [
            row.model_dump() | {"embedding": finite_or_none(vec)} for row, vec in zip(normalised.passages, passage_vectors)
        ]
        staged.phrase_rows = [phrase_row(t, v) for t, v in zip(staged.new_phrases, phrase_vectors)]
        fact_rows = self.facts.rows(normalised.facts, staged.new_facts, fact_vectors)

        began = time.perf_counter()
        version = self.writer.write(normalised, staged.passage_rows, staged.phrase_rows, fact_rows, staged.updated_ids)
        report.timings["write_s"] += time.perf_counter() - began
        began = time.perf_counter()
        if self.holding:  # read after this write: holds its phrases already
            self.held, self.holding = self.synonyms.hold(self.holding, self.encoder.dimension), 0
        elif self.held is not None:
            self.held.follow(self.store, version, staged.phrase_rows, replaced=bool(staged.updated_ids))
            self.held = self.synonyms.within_memory(self.held)
        report.timings["synonym_s"] += time.perf_counter() - began
        report.indexed += len(staged.ok)
        report.new_phrases += len(staged.new_phrases)
        report.new_facts += len(staged.new_facts)

    def link(self, staged: StagedBatch, config: HippoConfig) -> None:
        """The new phrases' SYNONYM edges, and the batch's passages sealed, in one transaction."""
        began = time.perf_counter()
        seal = [{"id": row["id"], "hash": row["hash"]} for row in staged.passage_rows]
        linkable = [r for r in staged.phrase_rows if r["embedding"] is not None]
        staged.report.synonym_edges += self.synonyms.link(linkable, config, seal, held=self.held)
        staged.report.timings["synonym_s"] += time.perf_counter() - began
