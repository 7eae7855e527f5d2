"""HippoRAG 2 (facts, passage nodes, recognition filter) and hybrid fusion, on the real server."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from hippo_neo4j import HippoConfig
from hippo_neo4j import evaluation as ev
from hippo_neo4j.cli import cli
from hippo_neo4j.models import FactHit, RetrievedPassage
from hippo_neo4j.retrieve.hybrid import fuse
from hippo_neo4j.reader import RecognitionFilter
from hippo_neo4j.llm.settings import LLMSettings
from hippo_neo4j.evaluation.reference import ReferenceGraph
from hippo_neo4j.graph.server import Server
from hippo_neo4j.retrieve.hipporag2 import mass_floor, passage_seeds, ppr2_parameters

from .conftest import DATASETS
from .fake_openai import FakeOpenAI
from .graph_dump import assert_same_graph, rows, snapshot
from .test_core import PATH_CORPUS, P

MUSIQUE = DATASETS / "musique_train"


@pytest.fixture(scope="module")
def musique() -> ev.Dataset:
    return ev.load_dataset(MUSIQUE)


def facts_of(driver, ns):
    return {
        (r["s"], r["p"], r["o"]): sorted(r["src"])
        for r in rows(driver, "MATCH (f:Fact {ns: $ns}) RETURN f.subject AS s, f.predicate AS p, f.object AS o, "
                      "f.sources AS src", ns=ns)
    }


# ------------------------------------------------------------------------------------------------ facts


def test_facts_are_distinct_normalised_triples_maintained_on_update_and_delete(memory_factory, driver):
    memory = memory_factory()
    memory.index([
        P("a", "Thomas Lane teaches at Stanford.", ("Thomas Lane", "teaches at", "Stanford"),
          ("Thomas  LANE", "Teaches at!", "stanford"), ("Thomas Lane", "born in", "Ohio")),
        P("b", "Lane teaches at Stanford.", ("thomas lane", "teaches at", "Stanford")),
    ])
    ns = memory.namespace
    assert facts_of(driver, ns) == {
        ("thomas lane", "teaches at", "stanford"): ["a", "a", "b"],  # once per extraction
        ("thomas lane", "born in", "ohio"): ["a"],
    }
    assert memory.stats()["facts"] == 2
    texts = {r["t"] for r in rows(driver, "MATCH (f:Fact {ns: $ns}) WHERE size(f.embedding) = 384 RETURN f.text AS t", ns=ns)}
    assert texts == {"thomas lane teaches at stanford", "thomas lane born in ohio"}

    memory.delete(["b"])
    assert facts_of(driver, ns) == {("thomas lane", "teaches at", "stanford"): ["a", "a"], ("thomas lane", "born in", "ohio"): ["a"]}
    # an update replaces a's facts in the same transaction: the shared fact keeps b's... b is gone, so only the new
    memory.index([P("a", "Thomas Lane moved to Yale.", ("Thomas Lane", "teaches at", "Yale"))])
    assert facts_of(driver, ns) == {("thomas lane", "teaches at", "yale"): ["a"]}
    memory.delete(["a"])
    assert facts_of(driver, ns) == {} and memory.stats() == {k: 0 for k in memory.stats()}


def test_a_namespace_from_before_facts_is_told_then_brought_up_to_date(memory_factory, driver, musique):
    memory = memory_factory()
    memory.index(musique.passages[:40])
    before = snapshot(driver, memory.namespace)
    assert len(before["facts"]) > 100 and memory.facts_complete()
    # what an older version left: no Fact nodes, no flag on the namespace
    driver.execute_query("MATCH (f:Fact {ns: $ns}) DELETE f", ns=memory.namespace)
    driver.execute_query("MATCH (n:HippoNamespace {name: $ns}) REMOVE n.facts", ns=memory.namespace)
    assert not memory.facts_complete()
    result = memory.query("Who founded the company?", mode="hipporag2")
    assert result.fell_back and result.fallback_reason == "no fact in this namespace"
    assert "hippo rebuild-facts" in result.warning and result.passages

    first = memory.rebuild_facts()
    assert first == {"facts": len(before["facts"]), "created": len(before["facts"])} and memory.facts_complete()
    assert_same_graph(snapshot(driver, memory.namespace), before)
    assert memory.rebuild_facts() == {"facts": len(before["facts"]), "created": 0}
    assert_same_graph(snapshot(driver, memory.namespace), before)
    assert memory.query("Who founded the company?", mode="hipporag2").warning is None

    # indexing into such a namespace derives its facts first: nothing is left half-upgraded
    driver.execute_query("MATCH (f:Fact {ns: $ns}) DELETE f", ns=memory.namespace)
    driver.execute_query("MATCH (n:HippoNamespace {name: $ns}) REMOVE n.facts", ns=memory.namespace)
    memory.index(musique.passages[40:41])
    grown = snapshot(driver, memory.namespace)
    fresh = memory_factory()
    fresh.index(musique.passages[:41])
    assert grown["facts"] == snapshot(driver, fresh.namespace)["facts"] and memory.facts_complete()


def test_a_small_namespace_finds_its_facts_beside_a_large_one(memory_factory, musique):
    """The fact index spans namespaces: a namespace whose facts are all far from the query still gets them."""
    large = memory_factory()
    large.index(musique.passages[:60])
    small = memory_factory()
    small.index([P("z", "The Zorblat Society's first president was Mina Kello.",
                   ("Zorblat Society", "first president", "Mina Kello"))])
    question = musique.questions[0].question  # "Who was the first president of the association which ..."
    assert len(large.query(question, mode="hipporag2").facts) == 5
    result = small.query(question, mode="hipporag2")
    assert [f.triple for f in result.facts] == [("zorblat society", "first president", "mina kello")]
    assert not result.fell_back and [p.id for p in result.passages] == ["z"]
    # a fact no closer to the query than its opposite (cosine <= 0) seeds nothing (PPR biases are positive)
    hit = dict(subject="zorblat society", predicate="first president", object="mina kello", subject_passages=1,
               object_passages=1)
    assert small.retriever("hipporag2").fact_seeds([FactHit(score=-0.2, **hit)], small.config) == {}
    assert small.retriever("hipporag2").fact_seeds([FactHit(score=0.4, **hit)], small.config) == {"zorblat society": 0.4, "mina kello": 0.4}


# ------------------------------------------------------------------------------------------ retrieval


def test_hipporag2_equals_the_inprocess_reference_on_musique_questions(on_musique10, musique10):
    """Facts through the vector index, phrase and passage seeds, and the PPR over the passage projection
    against numpy/scipy of the same formulas (DESIGN.md §1), on the paragraphs of 10 musique questions."""
    small, _ = musique10
    memory = on_musique10(config=HippoConfig(ppr_tolerance=1e-9))  # formulas compared: converge like the reference
    ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace, hipporag2=True)
    assert len(ref.passages) == len(small.passages) and len(ref.facts) == memory.stats()["facts"]
    cfg = memory.config
    for q in small.questions:
        result = memory.query(q.question, mode="hipporag2", top_k=10)
        expected = ref.hipporag2(memory.encoder.encode_queries([q.question])[0], top_k=10, damping=cfg.damping,
                                 top_phrases=cfg.link_top_phrases)
        assert not result.fell_back and result.recognition_filter == "off"
        assert [f.triple for f in result.facts] == [t for t, _ in expected["facts"]]
        np.testing.assert_allclose([f.score for f in result.facts], [s for _, s in expected["facts"]], atol=1e-5)
        assert dict(result.seeds) == pytest.approx(expected["seeds"], abs=1e-5)
        top_seeds = sorted(expected["passage_seeds"].items(), key=lambda x: -x[1])[:5]
        assert [s.node for s in result.passage_seeds] == [pid for pid, _ in top_seeds]
        assert [s.weight for s in result.passage_seeds] == pytest.approx([w for _, w in top_seeds], abs=1e-5)
        got = [(p.id, p.score) for p in result.passages]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected["passages"]], rtol=1e-4, atol=1e-6)
        for (gid, gs), (eid, es) in zip(got, expected["passages"]):  # same order up to near ties
            assert gid == eid or abs(gs - es) < 1e-6

        # seeding the top-N dense passages with N = all of them is the same computation
        memory.config = cfg.model_copy(update={"passage_seed_top_n": len(small.passages)})
        try:
            top_n = memory.query(q.question, mode="hipporag2", top_k=10)
        finally:
            memory.config = cfg
        assert [p.id for p in top_n.passages] == [p.id for p in result.passages]
        np.testing.assert_allclose([p.score for p in top_n.passages], [s for _, s in got], rtol=1e-6)

        # ablation without passage nodes: the same seeds, the phrase-only walk and hipporag1's aggregation
        memory.config = cfg.model_copy(update={"passage_nodes": False})
        try:
            plain = memory.query(q.question, mode="hipporag2", top_k=10)
        finally:
            memory.config = cfg
        assert dict(plain.seeds) == pytest.approx(dict(result.seeds), abs=1e-9)
        total = sum(expected["seeds"].values())
        want = ref.retrieve({t: w / total for t, w in expected["seeds"].items()}, damping=cfg.damping, top_k=10,
                            min_mass=cfg.ppr_min_mass / total)
        # GDS takes the biases as given, the reference normalises them: scores differ by the total seed weight
        walked = [p for p in plain.passages if not p.filled]  # the rest tops the result up from dense retrieval
        np.testing.assert_allclose([p.score / total for p in walked], [s for _, s in want], rtol=1e-4, atol=1e-6)
        assert len(plain.passages) == 10 and all(p.filled for p in plain.passages[len(walked):])


def test_the_mass_floor_ranks_as_every_node_would_and_a_vanished_seed_ranks_again_without_it(memory_factory, driver, monkeypatch):
    """The statement sorts only the nodes at or above (1 - d) x the top_k-th largest passage seed. Every
    passage ends at or above (1 - d) x its own seed, so the floor changes no ranking; when a seeded passage
    is gone behind the library's back (the projection and the held vectors still have it), fewer than top_k
    may clear the floor, and the retriever ranks every node instead of topping up from dense retrieval."""
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    question, cfg = "Which Stanford professor works on Alzheimer's?", memory.config
    memory.query(question, mode="hipporag2")  # the first query is scored by the server; the rest by the client
    graph = Server.of(driver, memory.database).projections.ensure(memory.namespace, "passage")
    vector = memory.encoder.encode_queries([question])[0]

    def every_node(top_k: int, seeds: dict[str, float]) -> list[tuple[str, float]]:
        cosines = memory.retrieval.passage_vectors().cosines(vector, graph)
        weights = passage_seeds(cfg, cosines, None)
        assert mass_floor(weights, top_k, cfg.damping) > 0
        rec = memory.store.run("ppr2_passages", graph=graph.name, graphVersion=graph.version, massFloor=0.0,
                               passageSources=cosines.sources(weights), **ppr2_parameters(cfg, seeds, top_k))[0]
        return [(r["id"], r["score"]) for r in rec["ranked"]]

    for top_k in (1, 3, 5):
        result = memory.query(question, mode="hipporag2", top_k=top_k)
        seeds = {s.node: s.weight for s in result.phrase_seeds}
        assert [(p.id, p.score) for p in result.passages] == every_node(top_k, seeds)

    ran: list[dict] = []
    run = memory.store.run

    def spy(name, **params):
        if name == "ppr2_passages":
            ran.append(params)
        return run(name, **params)

    monkeypatch.setattr(memory.store, "run", spy)
    gone = [s.node for s in result.passage_seeds[:2]]  # the two largest passage seeds
    driver.execute_query("MATCH (p:Passage {ns: $ns}) WHERE p.id IN $ids DETACH DELETE p", ns=memory.namespace, ids=gone)
    # 7 passages are seeded still (the floor holds), 6 are left: the floored walk falls short, every node is ranked
    result = memory.query(question, mode="hipporag2", top_k=7)
    assert [p["massFloor"] > 0 for p in ran] == [True, False]
    assert len(result.passages) == len(PATH_CORPUS) - 2 and not any(p.filled for p in result.passages)
    assert not {p.id for p in result.passages} & set(gone)
    assert [(p.id, p.score) for p in result.passages] == every_node(7, {s.node: s.weight for s in result.phrase_seeds})


def test_hipporag2_falls_back_to_dense_and_says_why(memory_factory):
    memory = memory_factory()
    memory.index([P("x", "A passage about rivers."), P("y", "Another one about mountains.")])  # no triples
    result = memory.query("Where are the mountains?", mode="hipporag2", top_k=2)
    dense = memory.query("Where are the mountains?", mode="dense", top_k=2)
    assert result.fell_back and "no fact in this namespace" in result.fallback_reason
    assert [p.id for p in result.passages] == [p.id for p in dense.passages] == ["y", "x"]

    class KeepNothing:
        name = "keep-nothing"

        def select(self, question, triples):
            return []

    memory.index(PATH_CORPUS)
    memory._fact_filter = KeepNothing()
    result = memory.query("Which Stanford professor works on Alzheimer's?", mode="hipporag2", top_k=3)
    assert result.fell_back and result.fallback_reason == "the recognition filter kept no fact"
    assert result.facts and not any(f.kept for f in result.facts) and result.recognition_filter == "keep-nothing"
    assert len(result.passages) == 3
    unfiltered = memory.query("Which Stanford professor works on Alzheimer's?", mode="hipporag2", top_k=3, recognition_filter=False)
    assert not unfiltered.fell_back and unfiltered.recognition_filter == "off" and all(f.kept for f in unfiltered.facts)


def test_recognition_filter_through_the_openai_client(memory_factory, llm_env, monkeypatch):
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    question = "Which Stanford professor works on Alzheimer's?"
    candidates = memory.query(question, mode="hipporag2", recognition_filter=False).facts
    assert len(candidates) == 5
    keep_a, keep_b = candidates[1].triple, candidates[3].triple

    def responder(request):
        assert "check facts retrieved from a memory" in request["messages"][0]["content"]
        user = request["messages"][-1]["content"]
        assert question in user and all(json.dumps(list(f.triple)) in user for f in candidates)
        # one triple copied exactly, one with other case and punctuation, one the model made up
        shown = [keep_a[0].title(), keep_a[1] + ".", keep_a[2].upper()]
        return json.dumps({"triples": [list(keep_b), shown, ["andrew ng", "invented", "alzheimer s disease"]]})

    with FakeOpenAI(responder) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("HIPPO_LLM_MODEL", "fake-model")
        memory._fact_filter = "auto"  # an LLM is configured now: the filter is the LLM one
        result = memory.query(question, mode="hipporag2", top_k=5)
        assert len(fake.requests) == 1
        assert result.recognition_filter == "llm:fake-model:f1"
        assert [f.kept for f in result.facts] == [f.triple in (keep_a, keep_b) for f in candidates]
        kept_phrases = {keep_a[0], keep_a[2], keep_b[0], keep_b[2]}
        assert {s.node for s in result.phrase_seeds} <= kept_phrases and result.phrase_seeds
        # --no-recognition-filter (recognition_filter=False) asks nothing
        memory.query(question, mode="hipporag2", recognition_filter=False)
        assert len(fake.requests) == 1
        port = fake.port
    # the endpoint is gone: retrieval still answers, with every fact, and says the filter failed
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    memory._fact_filter = RecognitionFilter(LLMSettings.from_env(max_attempts=1))
    down = memory.query(question, mode="hipporag2", top_k=5)
    assert down.recognition_filter.startswith("failed:") and all(f.kept for f in down.facts) and down.passages


def test_hybrid_fuses_min_max_scores(memory_factory):
    graph = [RetrievedPassage(id=i, text="", score=s) for i, s in [("a", 0.9), ("b", 0.5), ("c", 0.1)]]
    dense = [RetrievedPassage(id=i, text="", score=s) for i, s in [("c", 0.8), ("d", 0.6), ("a", 0.4)]]
    fused = fuse(graph, dense, 0.3)
    want = {"a": 0.3 * 1 + 0.7 * 0, "b": 0.3 * 0.5, "c": 0.3 * 0 + 0.7 * 1, "d": 0.7 * 0.5}
    assert [p.id for p in fused] == ["c", "d", "a", "b"]
    assert {p.id: p.score for p in fused} == pytest.approx(want)

    memory = memory_factory()
    memory.index(PATH_CORPUS)
    question, entities = "Which Stanford professor works on Alzheimer's?", ["Stanford", "Alzheimer's"]
    h1 = memory.query(question, mode="hipporag1", entities=entities, top_k=8)
    dn = memory.query(question, mode="dense", top_k=8)
    for lam, side in ((1.0, h1), (0.0, dn)):  # one side alone: its ranking (up to ties), then the other's
        memory.config = memory.config.model_copy(update={"hybrid_lambda": lam})
        hybrid = memory.query(question, mode="hybrid", entities=entities, top_k=8)
        score = {p.id: p.score for p in side.passages}
        head = [p.id for p in hybrid.passages][: len(score)]
        assert set(head) == set(score) and [score[i] for i in head] == sorted(score.values(), reverse=True)
    memory.config = memory.config.model_copy(update={"hybrid_lambda": 0.5})
    half = memory.query(question, mode="hybrid", entities=entities, top_k=8)
    assert {p.id: p.score for p in half.passages} == pytest.approx(
        {p.id: p.score for p in fuse(h1.passages, dn.passages, 0.5)}
    )


def test_cli_query_hipporag2_json_explains_facts_and_seeds(memory_factory, connection):
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    env = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
           "HIPPO_NAMESPACE": memory.namespace}
    out = CliRunner().invoke(cli, ["query", "Which Stanford professor works on Alzheimer's?", "--mode", "hipporag2",
                                   "--json", "--top-k", "3"], env=env)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["mode"] == "hipporag2" and len(data["facts"]) == 5 and data["recognition_filter"] == "off"
    assert data["phrase_seeds"] and data["passage_seeds"] and len(data["passages"]) == 3
    text = CliRunner().invoke(cli, ["query", "Which Stanford professor works on Alzheimer's?", "--mode", "hipporag2"], env=env)
    assert "facts (recognition filter: off)" in text.stdout and "phrase seeds:" in text.stdout
