"""The indexing pipeline (encoding a batch ahead in a worker thread) writes exactly the graph of the
batch-by-batch path, and its failures surface in the caller with nothing half-sealed."""

from __future__ import annotations

import threading
import uuid

import numpy as np
import pytest

from hippo_neo4j import HippoConfig, HippoRAG
from hippo_neo4j.text import normalize_phrase

from .conftest import NoExtractor
from .graph_dump import assert_same_graph, snapshot
from .test_memory import consistency_problems, musique  # noqa: F401 - musique: the shared fixture

BATCH = 16
PIPELINE_DEADLINE_S = 300  # only guards against a hang


def fresh(docs):
    """Copies, so a test may change them (indexing itself leaves the passages it is given as they are)."""
    return [d.model_copy(deep=True) for d in docs]


class RecordingEncoder:
    """The real encoder, recording in which thread each call ran; ``fail_at`` (1-based) makes that call raise
    instead."""

    def __init__(self, real, fail_at: int | None = None) -> None:
        self.real = real
        self.fail_at = fail_at
        self.calls: list[str] = []  # the thread of each call, in the order the calls began
        self.lock = threading.Condition()

    def encode(self, texts):
        with self.lock:
            n = len(self.calls) + 1
            self.calls.append(threading.current_thread().name)
            self.lock.notify_all()
        if n == self.fail_at:
            raise RuntimeError(f"encoder failed on call {n}")
        return self.real.encode(texts)

    def wait_for_call(self, n: int, timeout: float) -> bool:
        """Whether call ``n`` (1-based) has begun, waiting up to ``timeout`` seconds for it."""
        with self.lock:
            return self.lock.wait_for(lambda: len(self.calls) >= n, timeout)

    def __getattr__(self, name):
        return getattr(self.real, name)


def report_counts(report) -> dict:
    return report.model_dump(exclude={"timings"})


def test_pipelined_index_equals_the_batch_by_batch_index(memory_factory, musique):
    corpus = musique[:120]
    config = HippoConfig(batch_size=BATCH)
    serial = memory_factory(config=config)
    serial.indexer.overlap = False
    piped = memory_factory(config=config)
    encoder = RecordingEncoder(piped.indexer.encoder)
    piped.indexer.encoder = encoder
    batches = -(-len(corpus) // BATCH)
    ahead: list[bool] = []  # per batch i: batch i+1's passage encoding had begun when batch i was linked
    real_link = piped.indexer.synonyms.link

    def link(*args, **kwargs):
        i = len(ahead)
        # pipelined, batch i+1's passage encoding (call 3(i+1)+1) is queued before batch i is linked and
        # begins without this thread; batch by batch it would begin only after this link returned, so the
        # wait would run into its deadline (which only guards against a hang)
        ahead.append(i + 1 >= batches or encoder.wait_for_call(3 * (i + 1) + 1, timeout=PIPELINE_DEADLINE_S))
        return real_link(*args, **kwargs)

    piped.indexer.synonyms.link = link

    want = serial.index(fresh(corpus))
    got = piped.index(fresh(corpus))
    piped.indexer.synonyms.link = real_link
    assert report_counts(got) == report_counts(want)
    assert got.indexed == 120 and got.new_phrases > 0 and got.synonym_edges > 0
    # the encoder ran in the worker (three calls a batch: passages, new phrases, new facts), and batch i+1's
    # passages were being encoded before batch i was linked
    assert set(encoder.calls) == {"hippo-encode_0"} and len(encoder.calls) == 3 * len(ahead)
    assert len(ahead) == batches and all(ahead), ahead
    assert not consistency_problems(piped.driver, piped.namespace)
    assert_same_graph(snapshot(piped.driver, piped.namespace), snapshot(serial.driver, serial.namespace))

    # updates across batches: new versions of some passages (a phrase only their old version mentioned
    # is deleted and created again), mixed with unchanged and new passages
    changed = fresh(musique[:120:3])
    for doc in changed:
        doc.text += " (revised)"
        doc.extraction.triples = doc.extraction.triples[: len(doc.extraction.triples) // 2]
    second = changed + fresh(musique[120:150])
    want = serial.index(fresh(second) + fresh(corpus[1::3]))
    got = piped.index(fresh(second) + fresh(corpus[1::3]))
    assert report_counts(got) == report_counts(want)
    assert got.updated == len(changed) and got.unchanged == len(corpus[1::3])
    assert not consistency_problems(piped.driver, piped.namespace)
    assert_same_graph(snapshot(piped.driver, piped.namespace), snapshot(serial.driver, serial.namespace))


@pytest.fixture(scope="module")
def clean_graph(connection, driver, musique):
    """The graph of musique[200:280] indexed without a fault, in batches of BATCH: made once for the module."""
    memory = HippoRAG(connection, namespace=f"t-clean-{uuid.uuid4().hex[:8]}", driver=driver, extractor=NoExtractor(),
                      config=HippoConfig(batch_size=BATCH))
    memory.index(fresh(musique[200:280]))
    yield snapshot(driver, memory.namespace)
    memory.drop_namespace()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("fail_at, what", [(7, "passages of batch 3"), (8, "new phrases of batch 3")])
def test_an_encoder_error_surfaces_and_leaves_only_whole_batches(memory_factory, musique, clean_graph, fail_at, what):
    """The worker's calls are: batch 1's passages, its new phrases, its new facts, batch 2's passages, ...
    An error in batch 3's encoding is raised by index(), after batches 1 and 2 are written and sealed, as
    batch by batch; no worker thread is left behind; the next run completes the graph."""
    corpus = musique[200:280]
    config = HippoConfig(batch_size=BATCH)
    memory = memory_factory(config=config)
    real = memory.indexer.encoder
    memory.indexer.encoder = RecordingEncoder(real, fail_at=fail_at)
    with pytest.raises(RuntimeError, match=f"encoder failed on call {fail_at}"):
        memory.index(fresh(corpus))
    assert not [t for t in threading.enumerate() if t.name.startswith("hippo-encode")]
    sealed = {r["id"] for r in memory.driver.execute_query(
        "MATCH (p:Passage {ns: $ns}) WHERE p.hash IS NOT NULL RETURN p.id AS id", ns=memory.namespace).records}
    assert sealed == {d.passage_id for d in corpus[: 2 * BATCH]}, what
    assert not consistency_problems(memory.driver, memory.namespace)

    memory.indexer.encoder = real
    report = memory.index(fresh(corpus))
    assert report.unchanged == 2 * BATCH and report.indexed == len(corpus) - 2 * BATCH
    assert_same_graph(snapshot(memory.driver, memory.namespace), clean_graph, synonym_tol=5e-3)


@pytest.mark.timeout(300)
def test_an_extraction_error_ahead_is_raised_in_its_turn(memory_factory, musique):
    """Reading batch i+1 (its extraction) happens before batch i is written; its failure is raised once the
    batches before it are written and sealed, as batch by batch."""
    corpus = fresh(musique[300:364])
    for doc in corpus[2 * BATCH : 3 * BATCH]:
        doc.extraction = None  # the test's extractor refuses to run
    memory = memory_factory(config=HippoConfig(batch_size=BATCH))
    with pytest.raises(AssertionError, match="extractor called"):
        memory.index(corpus)
    sealed = {r["id"] for r in memory.driver.execute_query(
        "MATCH (p:Passage {ns: $ns}) WHERE p.hash IS NOT NULL RETURN p.id AS id", ns=memory.namespace).records}
    assert sealed == {d.passage_id for d in corpus[: 2 * BATCH]}
    assert not consistency_problems(memory.driver, memory.namespace)
    assert not [t for t in threading.enumerate() if t.name.startswith("hippo-encode")]


def test_synonyms_from_the_held_phrase_vectors_equal_the_vector_index_ones(memory_factory, musique, monkeypatch):
    """A bulk run finds synonym candidates in the client, from the namespace's phrase vectors it holds; the
    same runs finding them through the server's vector index write the same graph: a fresh index, then a
    run that adds passages, updates some (their old phrases may go) and meets another writer's batch
    between two of its own (the held vectors notice the version moved and catch up)."""
    from hippo_neo4j.graph.synonyms import PhraseVectors

    config = HippoConfig(batch_size=BATCH)
    held, served = memory_factory(config=config), memory_factory(config=config)
    monkeypatch.setattr(served.indexer.synonyms, "hold", lambda passages, dimension: None)
    catch_ups, holders = [], []
    real_follow = PhraseVectors.follow

    def follow(self, store, version, rows, replaced):
        before = self.version
        real_follow(self, store, version, rows, replaced)
        catch_ups.append(replaced or version != before + 1)
        holders.append(self)

    monkeypatch.setattr(PhraseVectors, "follow", follow)
    for memory in (held, served):
        memory.index(fresh(musique[:96]))
    assert catch_ups and not any(catch_ups)  # nothing but the run's own writes
    assert held.stats()["synonym_edges"] > 0
    assert_same_graph(snapshot(held.driver, held.namespace), snapshot(served.driver, served.namespace), synonym_tol=1e-5)

    changed = fresh(musique[:96:4])
    for doc in changed:
        doc.text += " (revised)"
        doc.extraction.triples = doc.extraction.triples[1:]
    second = changed + fresh(musique[96:160])
    intruders = fresh(musique[160:176])
    for memory in (held, served):
        other = memory_factory(namespace=memory.namespace, config=config)
        real_write = memory.indexer.writer.write
        writes = []

        def write(*args, memory=memory, other=other, real_write=real_write, writes=writes):
            version = real_write(*args)
            writes.append(version)
            if len(writes) == 2:  # another client's batch lands between this run's second write and its link
                other.index(fresh(intruders))
            return version

        monkeypatch.setattr(memory.indexer.writer, "write", write)
        catch_ups.clear()
        memory.index(fresh(second))
        if memory is held:  # caught up after the updates and the other writer's batch, not after every write
            assert any(catch_ups) and not all(catch_ups)
    assert not catch_ups  # the other run held nothing
    # what the run held at its end is the namespace's phrases and their vectors, the intruder's among them
    stored = {r["text"]: r["e"] for r in held.driver.execute_query(
        "MATCH (ph:Phrase {ns: $ns}) WHERE ph.embedding IS NOT NULL RETURN ph.text AS text, ph.embedding AS e",
        ns=held.namespace).records}
    last = holders[-1]
    assert set(last.texts) == set(stored)
    assert all(normalize_phrase(doc.title) in last.index for doc in intruders)
    for text in last.texts[:: max(1, len(last.texts) // 50)]:
        want = np.asarray(stored[text], dtype=np.float32)
        assert np.allclose(last.matrix[last.index[text]], want / np.linalg.norm(want), atol=1e-6)
    assert not consistency_problems(held.driver, held.namespace)
    assert_same_graph(snapshot(held.driver, held.namespace), snapshot(served.driver, served.namespace), synonym_tol=1e-5)


def test_a_small_write_into_a_large_namespace_searches_the_vector_index(memory_factory, musique, monkeypatch):
    """Holding the phrase vectors pays off for bulk runs only: one passage into a namespace of hundreds of
    phrases reads none of them and asks the server's vector index."""
    from hippo_neo4j.graph import synonyms

    memory = memory_factory(config=HippoConfig(batch_size=BATCH))
    memory.index(fresh(musique[:64]))
    read = []
    real_read = synonyms.PhraseVectors.read.__func__
    monkeypatch.setattr(synonyms.PhraseVectors, "read", classmethod(lambda cls, store: read.append(1) or real_read(cls, store)))
    phrases = memory.stats()["phrases"]
    assert phrases > synonyms.HELD_PHRASES_PER_PASSAGE
    statements = []
    run = memory.store.run
    monkeypatch.setattr(memory.store, "run", lambda name, **params: statements.append(name) or run(name, **params))
    report = memory.index(fresh(musique[64:65]))
    assert report.indexed == 1 and not read
    assert "synonym_candidates" in statements and not [s for s in statements if s.startswith("phrase_vectors")]
    assert memory.stats()["phrases"] <= 20 * synonyms.HELD_PHRASES_PER_PASSAGE
    memory.index(fresh(musique[65:85]))  # 20 passages: a bulk run for this namespace
    assert read == [1]


class CountingExtractor:
    """One entity per passage (its first word), counting the passages it was asked for."""

    name = "counting"

    def __init__(self) -> None:
        self.asked = 0

    def extract(self, passages):
        from hippo_neo4j.models import Extraction

        self.asked += len(passages)
        return [Extraction(named_entities=[p.text.split()[0]], triples=[]) for p in passages]

    def query_entities(self, text):
        return text.split()[:1]


def test_indexing_leaves_the_callers_passages_as_they_are(memory_factory, musique):
    """The same PassageIn objects indexed into a second namespace are extracted again there: the first run
    filled in its own copies' extractions, not the caller's objects."""
    corpus = [d.model_copy(update={"extraction": None}) for d in musique[:6]]
    extractor = CountingExtractor()
    for _ in range(2):
        report = memory_factory(extractor=extractor).index(corpus)
        assert report.indexed == len(corpus)
    assert extractor.asked == 2 * len(corpus)
    assert all(d.extraction is None for d in corpus)
