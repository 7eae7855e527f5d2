"""Indexing as a chain of components with typed data between them:

    extraction (extract/)  →  PhraseNormaliser  →  embedding  →  GraphWriter  →  SynonymLinker  →  projection

- extraction gives each passage its named entities and raw triples (:class:`~hippo_neo4j.models.Extraction`);
- :class:`PhraseNormaliser` turns triples into normalised phrases, MENTIONED_IN counts, RELATION assertions and
  facts (:class:`NormalisedBatch`), counting what it skips;
- only new phrases and facts are embedded, with the passages;
- :class:`GraphWriter` writes a batch in one transaction (an updated passage's old contribution goes in the same
  one), leaving its passages unsealed;
- :class:`SynonymLinker` adds SYNONYM edges for the new phrases and seals the passages;
- every write bumps the namespace's version, so the GDS projection (``projection.py``) is rebuilt lazily.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator

from pydantic import BaseModel, Field

from ..config import HippoConfig
from ..db import cypher
from ..models import IndexReport, PassageIn
from ..text import normalize_phrase, scrub
from . import binding
from .facts import FactRows, FactStore, add_fact
from .store import GraphStore, finite_or_none
from .synonyms import SynonymLinker

log = logging.getLogger(__name__)

Extract = Callable[[list[PassageIn]], list[Any]]  # an extractor's extract(): one Extraction (or None) per passage

MAX_KEY_CHARS = 1000  # passage ids and phrases are keys of range indexes (about 8 kB per key): longer ones are refused


def valid_triple(triple: Any) -> tuple[str, str, str] | None:
    """Three non-empty strings of at most MAX_KEY_CHARS (predicate scrubbed), else None (malformed)."""
    if not isinstance(triple, (list, tuple)) or len(triple) != 3:
        return None
    if not all(isinstance(x, str) and x.strip() and len(x) <= MAX_KEY_CHARS for x in triple):
        return None
    return triple[0], scrub(triple[1].strip()), triple[2]


# ------------------------------------------------------------------------------------------ normalisation


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
            batch.passages.append(PassageRow(id=p.passage_id, title=p.title, text=p.text, hash=p.hash, triples=kept))
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
    ) -> None:
        ns = self.store.namespace
        mentions = [m.model_dump() for m in batch.mentions]
        relations = [r.model_dump() for r in batch.relations]

        def work(tx: Any) -> None:
            # The content hash is set last, by the synonym transaction: a passage without it (the process
            # died in between) is indexed again from scratch on the next run, so no SYNONYM edge is lost.
            unsealed = [row | {"hash": None} for row in passage_rows]
            if replacing:
                tx.run(cypher("delete_passages"), ns=ns, ids=replacing).consume()
            tx.run(cypher("write_passages"), ns=ns, passages=unsealed).consume()
            tx.run(cypher("write_phrases"), ns=ns, phrases=phrase_rows).consume()
            tx.run(cypher("write_mentions"), ns=ns, mentions=mentions).consume()
            tx.run(cypher("write_relations"), ns=ns, relations=relations).consume()
            tx.run(cypher("write_facts"), ns=ns, facts=fact_rows).consume()
            binding.bind(tx, ns, self.encoder)  # a namespace's first write records its encoder

        self.store.write(work)


# ----------------------------------------------------------------------------------------------- pipeline


class Indexer:
    """Validates and batches passages, and runs each batch through the chain above."""

    def __init__(self, store: GraphStore, encoder: Any, facts: FactStore) -> None:
        self.store = store
        self.encoder = encoder
        self.facts = facts
        self.normaliser = PhraseNormaliser()
        self.writer = GraphWriter(store, encoder)
        self.synonyms = SynonymLinker(store, getattr(encoder, "synonym_threshold", 0.8))

    def accept(self, items: list[PassageIn], config: HippoConfig, report: IndexReport) -> list[PassageIn]:
        """The passages to index: empty ones, over-long ones and repeated ids are counted and left out."""
        unique: dict[str, PassageIn] = {}
        limit = config.max_passage_chars
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
        return list(unique.values())

    def index(self, items: list[PassageIn], config: HippoConfig, extract: Extract, *, progress: bool = False) -> IndexReport:
        report = IndexReport(passages=len(items))
        todo = self.accept(items, config, report)
        size = max(1, config.batch_size)
        batches = [todo[i : i + size] for i in range(0, len(todo), size)]
        with progress_bar(progress, len(todo), f"indexing into {self.store.namespace!r}") as advance:
            for batch in batches:
                report.merge(self.index_batch(batch, config, extract))
                advance(len(batch))
        return report

    def index_batch(self, batch: list[PassageIn], config: HippoConfig, extract: Extract) -> IndexReport:
        report = IndexReport()
        known = {r["id"]: r["hash"] for r in self.store.run("passage_hashes", ids=[p.passage_id for p in batch])}
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
            return report
        updated_ids = [p.passage_id for p in ok if p.passage_id in known]

        normalised = self.normaliser.normalise(ok)
        for name in ("triples", "malformed_triples", "self_loop_triples", "no_triples"):
            setattr(report, name, getattr(normalised, name))
        existing = {r["text"] for r in self.store.run("existing_phrases", texts=normalised.phrases, replacing=updated_ids)}
        new_phrases = [t for t in normalised.phrases if t not in existing]

        began = time.perf_counter()
        passage_vectors = self.encoder.encode([p.full_text for p in ok])
        phrase_vectors = self.encoder.encode(new_phrases)
        fact_rows, new_facts = self.facts.embed_new(normalised.facts, updated_ids)
        report.timings["embed_s"] += time.perf_counter() - began
        passage_rows = [
            row.model_dump() | {"embedding": finite_or_none(vec)} for row, vec in zip(normalised.passages, passage_vectors)
        ]
        phrase_rows = [{"text": t, "embedding": finite_or_none(v)} for t, v in zip(new_phrases, phrase_vectors)]

        began = time.perf_counter()
        self.writer.write(normalised, passage_rows, phrase_rows, fact_rows, updated_ids)
        report.timings["write_s"] += time.perf_counter() - began
        report.indexed += len(ok)
        report.new_phrases += len(new_phrases)
        report.new_facts += new_facts

        began = time.perf_counter()
        seal = [{"id": row["id"], "hash": row["hash"]} for row in passage_rows]
        linkable = [r for r in phrase_rows if r["embedding"] is not None]
        report.synonym_edges += self.synonyms.link(linkable, config, seal)
        report.timings["synonym_s"] += time.perf_counter() - began
        return report


@contextmanager
def progress_bar(enabled: bool, total: int, label: str) -> Iterator[Any]:
    if not enabled or total == 0:
        yield lambda n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=False
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)
