"""The LLM-free mode (entity-ppr) and the mention graph it walks: every entity a passage names is a phrase
linked to it; the server's walk equals the in-process reference of the same formulas; explanations; and
every mode returns top_k passages when the namespace holds them."""

from __future__ import annotations

import numpy as np
import pytest

from hippo_neo4j import HippoConfig
from hippo_neo4j import evaluation as ev
from hippo_neo4j.evaluation.reference import ReferenceGraph
from hippo_neo4j.extract.offline import OfflineExtractor
from hippo_neo4j.retrieve import MODES

from .graph_dump import rows
from .test_core import P, PATH_CORPUS
from .conftest import question_subset as _subset

QUESTION = "Which Stanford professor works on Alzheimer's?"


@pytest.fixture(scope="module")
def musique() -> ev.Dataset:
    from .conftest import DATASETS

    return ev.load_dataset(DATASETS / "musique_train")


def test_a_passage_is_linked_to_every_entity_it_names_and_its_title(memory_factory, driver):
    memory = memory_factory()
    memory.index([
        {"id": "a", "title": "Maria Okafor", "text": "Maria Okafor studied in Lagos.",
         "extraction": {"named_entities": ["Maria Okafor", "Lagos", "Lagos"], "triples": []}},
        {"id": "b", "title": "", "text": "Lagos is a port.",
         "extraction": {"named_entities": ["Lagos"], "triples": [["Lagos", "is", "a port"]]}},
    ])
    mentions = {(r["ph"], r["p"]): r["c"] for r in rows(
        driver, "MATCH (ph:Phrase {ns: $ns})-[m:MENTIONED_IN]->(p) RETURN ph.text AS ph, p.id AS p, m.count AS c",
        ns=memory.namespace)}
    # title and entity together count once; an entity that is also a triple argument adds to its count
    assert mentions == {("maria okafor", "a"): 1, ("lagos", "a"): 1, ("lagos", "b"): 2, ("a port", "b"): 1}
    memory.delete(["a"])
    assert {r["t"] for r in rows(driver, "MATCH (ph:Phrase {ns: $ns}) RETURN ph.text AS t", ns=memory.namespace)} == \
        {"lagos", "a port"}


def test_entity_ppr_equals_the_inprocess_reference_on_musique_questions(on_musique10, musique10):
    small, _ = musique10
    memory = on_musique10(config=HippoConfig(ppr_tolerance=1e-9))
    ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace, hipporag2=True)
    names = OfflineExtractor()
    hops = 0
    for q in small.questions:
        ents = names.query_entities(q.question)
        result = memory.query(q.question, mode="entity-ppr", top_k=10, entities=ents)
        linked = [link.phrase for link in result.linked]
        expected = ref.entity_ppr(memory.encoder.encode_queries([q.question])[0], linked, top_k=10,
                                  entity_share=memory.config.entity_share, damping=memory.config.damping,
                                  agreement_dense=memory.config.agreement_dense,
                                  agreement_walk=memory.config.agreement_walk,
                                  agreement_hop=memory.config.agreement_hop)
        placed = [p.id for p in result.passages if p.signals.get("placed") == "agreement"]
        assert placed == expected["agreement"]
        hops += len(expected["hop"])
        assert [p.id for p in result.passages if p.signals.get("placed") == "hop"] == expected["hop"]
        assert {s.node: s.weight for s in result.phrase_seeds} == pytest.approx(expected["phrase_seeds"], abs=1e-6)
        found = [p for p in result.passages if not p.filled]
        np.testing.assert_allclose([p.score for p in found], [s for _, s in expected["passages"][: len(found)]],
                                   rtol=1e-4, atol=1e-6)
        for p, (eid, es) in zip(found, expected["passages"]):  # same order up to near ties
            assert p.id == eid or abs(p.score - es) < 1e-6
    assert hops > 0  # the second round placed passages on some of these questions


def named(passages):
    """The path corpus as an extractor reports it: each triple's subject and object are also its entities."""
    out = []
    for p in passages:
        triples = p["extraction"]["triples"]
        out.append(p | {"extraction": {"named_entities": [x for t in triples for x in (t[0], t[2])], "triples": triples}})
    return out


def test_entity_ppr_explains_itself(memory_factory):
    memory = memory_factory()
    memory.index(named(PATH_CORPUS) + [P("lane-bio", "Thomas Lane was born in Ohio.", title="Thomas Lane")])
    result = memory.query(QUESTION, mode="entity-ppr", top_k=3, entities=["Stanford", "Alzheimer's"])
    # the distractors say "professor works on Alzheimer's" word for word: half the reset mass follows the
    # query's text, so they stay on top here (hipporag1 ranks the two Lane passages first on this corpus)
    ranked = [p.id for p in memory.query(QUESTION, mode="entity-ppr", top_k=9, entities=["Stanford", "Alzheimer's"]).passages]
    dense = [p.id for p in memory.query(QUESTION, mode="dense", top_k=9).passages]
    assert ranked.index("lane-alz") < dense.index("lane-alz") and ranked[-1] == "lane-bio"
    assert [link.entity for link in result.linked] == ["Stanford", "Alzheimer's"]
    assert sum(s.weight for s in result.phrase_seeds) == pytest.approx(memory.config.entity_share)
    assert result.passage_seeds and all(s.weight > 0 for s in result.passage_seeds)
    assert result.top_phrases and all(p.contributors for p in result.passages if not p.filled)
    assert all(any(c.phrase == "alzheimer s disease" for c in p.contributors) for p in result.passages)
    # no entity links: the passages like the query alone start the walk, and it says so
    alone = memory.query(QUESTION, mode="entity-ppr", top_k=3, entities=[])
    assert alone.passages and not alone.phrase_seeds and "no query entity links" in alone.warning


def test_every_mode_returns_top_k_passages_filling_from_dense(memory_factory):
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    total = len(PATH_CORPUS)
    for name in MODES:
        result = memory.query(QUESTION, mode=name, top_k=total, entities=["Alzheimer's"])
        assert len(result.passages) == total, name
        assert len({p.id for p in result.passages}) == total, name
        filled = [p.filled for p in result.passages]
        assert filled == sorted(filled), name  # the mode's own passages first, then the filled ones
    bm25 = memory.query("robotics", mode="bm25", top_k=4)
    assert bm25.passages[0].id == "ortiz" and not bm25.passages[0].filled and all(p.filled for p in bm25.passages[1:])
    assert not any(p.filled for p in memory.query(QUESTION, mode="dense", top_k=total).passages)


def test_looking_up_only_the_nodes_with_the_most_mass_changes_no_ranking(on_musique10, musique10, monkeypatch):
    """After the walk only the entity_ppr.WINDOW nodes with the most mass are read; a window that holds fewer than
    top_k passages runs the statement again with a larger one. Any window gives the same passages and scores."""
    from hippo_neo4j.retrieve import entity_ppr

    small, _ = musique10
    memory = on_musique10()
    names = OfflineExtractor()
    queries = [(q.question, names.query_entities(q.question)) for q in small.questions]

    def ranked(window):
        monkeypatch.setattr(entity_ppr, "WINDOW", window)
        return [[(p.id, round(p.score, 12)) for p in memory.query(text, mode="entity-ppr", top_k=10, entities=ents).passages]
                for text, ents in queries]

    calls = []
    run = memory.store.run
    monkeypatch.setattr(memory.store, "run", lambda name, **p: calls.append(p.get("window")) or run(name, **p))
    # every query's passage cosines from the client (a client's first query has the server compute them, which
    # agrees to about 1e-7 only: the server's vector functions compute in float32)
    memory.retrieval.passage_vectors().asked = 1
    everything = ranked(10**6)
    assert ranked(entity_ppr.WINDOW) == everything
    calls.clear()
    assert ranked(3) == everything  # fewer than top_k passages in the window: widened until it holds them
    assert 3 in calls and 24 in calls


def test_the_entity_walk_runs_beside_the_walk_and_ranks_as_when_run_in_turn(on_musique10, musique10, monkeypatch):
    """The two walks of the first round run at the same time on the same projection (the entity walk on a pool
    thread, followed there by the second round's walk from the passages the agreement places); with every pool
    slot taken they run in turn in the caller's thread. Either way, and when the second round is walked after the
    first (as when the walk does not rank a passage placed ahead), the same passages, scores and explanations."""
    import threading

    from hippo_neo4j.graph import store

    small, _ = musique10
    memory = on_musique10()
    names = OfflineExtractor()
    queries = [(q.question, names.query_entities(q.question)) for q in small.questions]
    threads, graphs, run, asked = [], [], memory.store.run, [0]

    def spy(name, **params):
        if name in ("entity_ppr_passages", "entity_walk", "entity_ppr_hop"):
            threads.append((name, threading.get_ident() == caller))
            graphs.append((asked[0], name, params["graph"]))
        return run(name, **params)

    monkeypatch.setattr(memory.store, "run", spy)
    memory.retrieval.passage_vectors().asked = 1  # the client's passage cosines for every query (see above)

    def ranked():
        out = []
        for i, (text, ents) in enumerate(queries):
            asked[0] = i
            out.append([(p.id, p.score, p.signals)
                        for p in memory.query(text, mode="entity-ppr", top_k=10, entities=ents).passages])
        return out

    caller = threading.get_ident()
    beside = ranked()
    assert ("entity_walk", False) in threads and ("entity_ppr_passages", True) in threads
    assert ("entity_ppr_hop", False) in threads  # the second round: ahead, beside the walk
    assert all(name == "entity_ppr_passages" for name, here in threads if here)  # the entity walk and hop: in the pool
    for i in range(len(queries)):  # a query's walks: one projection
        ran = [(name, g) for q, name, g in graphs if q == i]
        assert {"entity_ppr_passages", "entity_walk"} <= {name for name, _ in ran} and len({g for _, g in ran}) == 1
    threads.clear()
    taken = [store._beside_free.acquire(blocking=False) for _ in range(store._BESIDE_WIDTH)]
    try:
        assert all(taken)
        in_turn = ranked()
    finally:
        for _ in taken:
            store._beside_free.release()
    assert threads and all(here for _, here in threads)  # both in the caller's thread
    assert in_turn == beside

    from hippo_neo4j.retrieve.entity_ppr import EntityPPRRetriever

    rank, after = EntityPPRRetriever._rank, []

    def without_ahead(self, result, record, *args):
        after.append(record.get("placedAhead") is not None)
        return rank(self, result, {k: v for k, v in dict(record.items()).items() if k != "placedAhead"}, *args)

    monkeypatch.setattr(EntityPPRRetriever, "_rank", without_ahead)
    threads.clear()
    assert ranked() == beside  # the second round walked after the first: the same
    assert any(after) and ("entity_ppr_hop", True) in threads
    assert any(p[2]["entity_walk_rank"] for r in beside for p in r)  # the entity walk's ranks are read


def test_side_by_side_runs_both_at_once_and_raises_what_fails():
    """The second statement runs while the first does (the first waits for an event only the second sets: run in
    turn it would time out); the first's error is raised once the second is done, then the second's."""
    import threading

    from hippo_neo4j.graph.store import side_by_side

    started, finished = threading.Event(), threading.Event()

    def second():
        started.set()
        finished.set()
        return [{"b": 2}]

    def first():
        assert started.wait(timeout=60), "the second statement did not start while the first ran"
        return [{"a": 1}]

    assert side_by_side(first, second) == [{"a": 1, "b": 2}]
    assert side_by_side(lambda: [], second) == []  # no record from the first: none at all

    gate, ended = threading.Event(), threading.Event()

    def failing():
        gate.set()
        raise RuntimeError("first")

    def slow():
        gate.wait(timeout=60)  # still running when the first fails
        ended.set()
        return [{"b": 2}]

    with pytest.raises(RuntimeError, match="first"):
        side_by_side(failing, slow)
    assert ended.is_set()  # the second was done before the first's error was raised

    def broken():
        raise ValueError("second")

    with pytest.raises(ValueError, match="second"):
        side_by_side(lambda: [{"a": 1}], broken)


def _mention_projection(driver, ns):
    """(relationships, named mention + synonym edges) of the namespace's newest mention projection."""
    graphs = rows(driver, "CALL gds.graph.list() YIELD graphName, creationTime "
                          "WHERE graphName STARTS WITH $prefix AND graphName ENDS WITH ':mentions' "
                          "WITH graphName ORDER BY creationTime DESC LIMIT 1 "
                          # the graph's own relationships, not the feeders a GDS without weighted sources needs
                          "CALL gds.graph.relationships.stream(graphName) YIELD sourceNodeId, relationshipType "
                          "WHERE relationshipType <> 'FEEDS' AND sourceNodeId < 35184372088831 "
                          "RETURN count(*) AS r", prefix=f"hippo:{ns}:")
    edges = rows(driver, "RETURN COUNT { MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->() WHERE coalesce(m.named, true) } "
                         "+ COUNT { MATCH (:Phrase {ns: $ns})-[:SYNONYM]->() } AS e", ns=ns)[0]["e"]
    return graphs[0]["r"], edges


def test_the_walk_follows_synonym_edges_between_surface_forms_of_one_name(memory_factory, driver):
    """A query entity links to one phrase; the passages that name the entity in another form ("alzheimer s
    disease") are reached through the SYNONYM edge, which the mention projection carries (undirected)."""
    memory = memory_factory(config=HippoConfig(synonym_threshold=0.8))
    memory.index([
        {"id": "a", "title": "Ann Fry", "text": "Ann Fry studies Alzheimer's.",
         "extraction": {"named_entities": ["Alzheimer"], "triples": []}},
        {"id": "b", "title": "Bo Lin", "text": "Bo Lin treats Alzheimer's disease.",
         "extraction": {"named_entities": ["Alzheimer's disease"], "triples": []}},
        {"id": "c", "title": "Cy Dee", "text": "Cy Dee sails boats.", "extraction": {"named_entities": ["boats"], "triples": []}},
    ])
    assert rows(driver, "MATCH (:Phrase {ns: $ns, text: 'alzheimer'})-[s:SYNONYM]-(:Phrase {text: 'alzheimer s disease'}) "
                        "RETURN count(s) AS n", ns=memory.namespace)[0]["n"] == 1
    result = memory.query("Who works on Alzheimer?", mode="entity-ppr", top_k=3, entities=["Alzheimer"])
    assert [link.phrase for link in result.linked] == ["alzheimer"]
    relationships, edges = _mention_projection(driver, memory.namespace)
    assert relationships == 2 * edges  # every named mention and synonym edge, both directions
    mass = {t["phrase"]: t["mass"] for t in result.top_phrases}
    assert mass["alzheimer s disease"] > mass.get("boats", 0.0)
    assert [p.id for p in result.passages][:2] == ["a", "b"]


def test_a_namespace_indexed_before_names_were_marked_walks_its_mentions_and_eval_rebuilds_it(memory_factory, driver, musique):
    """Mention edges written before `named` existed: entity-ppr walks them rather than an edgeless graph, and the
    evaluation harness rebuilds such a namespace instead of reusing it."""
    small = _subset(musique, 2)
    memory = memory_factory()
    ev.ensure_index(memory, small)
    driver.execute_query("MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->() REMOVE m.named", ns=memory.namespace)
    memory.query(small.questions[0].question, mode="entity-ppr", top_k=5, entities=["x"])
    relationships, edges = _mention_projection(driver, memory.namespace)
    assert relationships == 2 * edges and edges > 0
    said = []
    again = ev.ensure_index(memory, small, say=said.append)
    assert not again.reused and any("rebuilding" in s for s in said)
    assert rows(driver, "MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->() WHERE m.named IS NULL RETURN count(m) AS n",
                ns=memory.namespace)[0]["n"] == 0


def test_the_papers_path_finding_case_offline(memory_factory):
    """HippoRAG's case study ("Which Stanford University professor works on Alzheimer's?", 43 passages), indexed
    with the offline extractor: both gold professors are in entity-ppr's top 5 (dense finds one)."""
    from .conftest import DATASETS

    data = ev.load_dataset(DATASETS / "case_study_university", use_openie=False)
    memory = memory_factory(extractor=OfflineExtractor())
    ev.ensure_index(memory, data)
    question = data.questions[0]
    titles = {p.passage_id: p.title for p in data.passages}
    gold = {titles[g] for g in question.gold}
    top = memory.query(question.question, mode="entity-ppr", top_k=5)
    assert gold <= {titles[p.id] for p in top.passages}, [titles[p.id] for p in top.passages]


def test_passages_one_signal_puts_first_and_the_other_confirms_go_first(memory_factory):
    """Agreement at the top, both ways: dense's top passages that the walk from the query's entities alone also
    ranks at its top are placed first, in dense's order, then that walk's top passages that dense ranks at its
    top, in the walk's order; with agreement off (entity-ppr-walk) the walk's own order stands. Each passage says
    what placed it."""
    memory = memory_factory()
    # 2 x agreement_walk passages at least, so that each signal confirms as deep as agreement_walk
    memory.index(named(PATH_CORPUS) + [P("lane-bio", "Thomas Lane was born in Ohio.", title="Thomas Lane")] + RIVERS)
    ents = ["Thomas Lane"]  # the entity walk's top: Lane's passages, which dense ranks below its top 3
    top, depth = memory.config.agreement_dense, memory.config.agreement_walk
    result = memory.query(QUESTION, top_k=9, entities=ents)
    walk = memory.query(QUESTION, mode="entity-ppr-walk", top_k=9, entities=ents)
    dense = [p.id for p in memory.query(QUESTION, mode="dense", top_k=9).passages]
    first = [p for p in result.passages if p.signals["placed"] == "agreement"]
    assert first and result.passages[: len(first)] == first
    by_dense = [p for p in first if p.signals["dense_rank"] <= top and p.signals["entity_walk_rank"] <= depth]
    by_entity = first[len(by_dense):]
    assert [p.id for p in by_dense] == [pid for pid in dense[:top] if pid in {p.id for p in by_dense}]
    assert [p.signals["entity_walk_rank"] for p in by_entity] == sorted(p.signals["entity_walk_rank"] for p in by_entity)
    for p in by_entity:
        assert p.signals["entity_walk_rank"] <= top and top < p.signals["dense_rank"] <= depth
    for p in first:
        assert 0 < p.signals["entity_share"] <= 1
    assert by_dense and by_entity and all(p.id.startswith("lane-") for p in by_entity)
    assert all(p.signals["entity_walk_rank"] > top for p in result.passages if p.signals["placed"] == "walk"
               and p.signals["entity_walk_rank"] is not None and p.signals["dense_rank"] <= depth)
    # after the placed passages (the agreement, then the second hop), the walk's order, the same passages and
    # scores as the walk alone
    rest = [(p.id, p.score) for p in result.passages if p.signals["placed"] == "walk"]
    placed = {p.id for p in result.passages if p.signals["placed"] != "walk"}
    alone = [(p.id, p.score) for p in walk.passages if p.id not in placed]
    assert [pid for pid, _ in rest] == [pid for pid, _ in alone[: len(rest)]]
    # (to float32 precision: the first query's passage cosines come from the server)
    assert [x for _, x in rest] == pytest.approx([x for _, x in alone[: len(rest)]], rel=1e-5)
    assert {p.id for p in result.passages} == {p.id for p in walk.passages}
    # no query entity: no entity walk to confirm anything, so the walk's order stands
    plain = memory.query(QUESTION, top_k=5, entities=[])
    assert all(p.signals["placed"] == "walk" and p.signals["entity_walk_rank"] is None for p in plain.passages)


# Passages about nothing the questions ask, to make a corpus larger than twice the agreement's depth.
RIVERS = [P(f"river-{i}", f"The river Vel{i} flows into lake Mor{i}.", (f"Vel{i}", "flows into", f"Mor{i}")) for i in range(12)]


def test_in_ten_passages_a_top_ten_confirms_nothing(memory_factory):
    """`make demo`'s first question, on its 10 passages: a signal confirms no deeper than half the passages it
    ranks (a top 10 of 10 says nothing), so dense's top 3, which name Alzheimer's disease but not Stanford, are not
    all placed; the two passages that join Stanford to Alzheimer's disease through Maria Okafor come first."""
    from importlib import resources
    import json

    corpus = json.loads(resources.files("hippo_neo4j").joinpath("demo", "corpus.json").read_text())
    question = json.loads(resources.files("hippo_neo4j").joinpath("demo", "questions.json").read_text())[0]
    memory = memory_factory(extractor=OfflineExtractor())
    memory.index(corpus)
    result = memory.query(question["question"], top_k=3)
    assert set(question["gold"]) <= {p.id for p in result.passages}, [p.id for p in result.passages]
    dense = [p.id for p in memory.query(question["question"], mode="dense", top_k=3).passages]
    assert not set(question["gold"]) <= set(dense)  # dense alone finds one of them
    half = len(corpus) // 2
    for p in result.passages:
        if p.signals["placed"] == "agreement":  # confirmed within half of the other signal's ranking
            assert p.signals["dense_rank"] <= half and p.signals["entity_walk_rank"] <= half


def test_an_entity_walk_that_reaches_few_passages_vetoes_none_of_the_others(memory_factory):
    """The question's entity names one passage that shares nothing else with the corpus: the walk from it
    reaches that passage alone, so it cannot confirm or refute dense's top passages; they are placed first, in
    dense's order (the passage most like the question, which names the film in words the entity did not link)."""
    memory = memory_factory()
    corpus = FILM_CORPUS + RIVERS + [
        P("believe", "Do You Believe is a 2015 drama.", ("Do You Believe", "is", "2015 drama")),
        P("gunn", "Jon Gunn, the director of the film Do You Believe, was born in Ohio.", ("Jon Gunn", "born in", "Ohio")),
    ]
    memory.index(named(corpus))
    question, ents = "Where was the director of film Do You Believe born?", ["Do You Believe"]
    dense = [p.id for p in memory.query(question, mode="dense", top_k=3).passages]
    result = memory.query(question, top_k=5, entities=ents)
    reached = [p for p in result.passages if p.signals["entity_walk_rank"] is not None]
    assert [p.id for p in reached] == ["believe"]  # the entity walk reaches one passage
    assert dense[0] == "gunn" and [p.id for p in result.passages[:3]] == dense
    assert all(p.signals["placed"] == "agreement" for p in result.passages[:3])
    assert result.passages[0].signals["entity_walk_rank"] is None


# A bridge question: the film's passage names its director; the director's passage, where the answer is, shares
# nothing with the question's text but the director's name, which the question does not give.
FILM_CORPUS = [
    P("zorba", "Zorba Days is a 1961 drama film directed by Petra Vlasak.", ("Zorba Days", "directed by", "Petra Vlasak")),
    P("vlasak", "Petra Vlasak grew up in Brno and began with short films in 1950.", ("Petra Vlasak", "grew up in", "Brno")),
    P("harbour", "Moon Harbour is a 1959 drama film directed by Karel Dusek.", ("Moon Harbour", "directed by", "Karel Dusek")),
    P("dusek", "Karel Dusek, the director of the film Moon Harbour, was born in Prague.", ("Karel Dusek", "born in", "Prague")),
    P("river", "Silver River is a 1964 film directed by Hana Mrazek.", ("Silver River", "directed by", "Hana Mrazek")),
    P("mrazek", "Hana Mrazek, the director of the film Silver River, was born in Ostrava.", ("Hana Mrazek", "born in", "Ostrava")),
    P("brno", "Brno is a city in Moravia with a film studio.", ("Brno", "city in", "Moravia")),
    P("zorba-shoot", "Zorba Days was shot in Vienna in 1960.", ("Zorba Days", "shot in", "Vienna")),
    P("zorba-prize", "Zorba Days won a prize at the Cannes festival.", ("Zorba Days", "won a prize at", "Cannes")),
    P("zorba-cast", "Zorba Days stars Jan Kral as a fisherman.", ("Zorba Days", "stars", "Jan Kral")),
]


def test_the_second_hop_follows_the_agreed_passages_where_they_lead(memory_factory):
    """After the agreement, a walk from the passages placed alone shows where they lead; its top passages that the
    walk or dense also ranks at its top go next, in its order (placed 'hop'); entity-ppr-first-hop stops at the
    agreement. The director's passage, which the question does not name, is reached through the film's."""
    memory = memory_factory()
    corpus = FILM_CORPUS + RIVERS  # larger than twice the agreement's depth
    memory.index(named(corpus))
    question, ents = "Where was the director of the film Zorba Days born?", ["Zorba Days"]
    depth = memory.config.agreement_walk
    result = memory.query(question, top_k=len(corpus), entities=ents)
    placed = [p.signals["placed"] for p in result.passages if not p.filled]
    assert placed == sorted(placed, key=["agreement", "hop", "walk"].index)  # agreement, then the hop, then the walk
    hop = [p for p in result.passages if p.signals.get("placed") == "hop"]
    assert hop and hop[0].id == "vlasak" and hop[0].signals["hop_rank"] == 1
    assert [p.signals["hop_rank"] for p in hop] == sorted(p.signals["hop_rank"] for p in hop)
    for p in hop:
        assert p.signals["hop_rank"] <= memory.config.agreement_hop
        assert p.signals["walk_rank"] <= depth or p.signals["dense_rank"] <= depth
    first_hop = memory.query(question, mode="entity-ppr-first-hop", top_k=len(corpus), entities=ents)
    assert not any(p.signals.get("placed") == "hop" for p in first_hop.passages)
    agreed = [p.id for p in first_hop.passages if p.signals.get("placed") == "agreement"]
    assert agreed == [p.id for p in result.passages if p.signals.get("placed") == "agreement"]
    assert next(p for p in first_hop.passages if p.id == "vlasak").signals["placed"] == "walk"
    # the agreement, the second hop, then the walk's order without them: the same passages, reordered
    hops = [p.id for p in hop]
    assert [p.id for p in result.passages] == agreed + hops + [p.id for p in first_hop.passages if p.id not in agreed + hops]


# A chain of passages, each sharing one name with the next: from "ash", "birch" is two steps away (ash -> Orla
# Quint -> birch), "cedar" four, "dogwood" six.
CHAIN = [
    P("ash", "Orla Quint founded the Ash Society.", ("Orla Quint", "founded", "Ash Society")),
    P("birch", "Orla Quint married Tomas Verhoek.", ("Orla Quint", "married", "Tomas Verhoek")),
    P("cedar", "Tomas Verhoek built the Kestrel Mill.", ("Tomas Verhoek", "built", "Kestrel Mill")),
    P("dogwood", "The Kestrel Mill burned in Zandport.", ("Kestrel Mill", "burned in", "Zandport")),
]


def test_the_second_round_walks_three_steps_from_the_placed_passages(memory_factory):
    """The hop shows the passages that share an entity with the placed ones (or a synonym of one): its walk stops
    after three steps, as the in-process short walk, where a walk to convergence reaches the whole chain."""
    from hippo_neo4j.retrieve.entity_ppr import HOP_STEPS, EntityPPRRetriever
    from hippo_neo4j.evaluation.reference import short_walk, walk

    memory = memory_factory()
    memory.index(named(CHAIN))
    retriever = memory.retriever("entity-ppr")
    config = memory.config.model_copy(update={"agreement_hop": len(CHAIN)})

    def run(params):
        return memory.store.walk("entity_ppr_hop", "mentions", **(params | {"only": None, "matching": None}))[0]

    assert HOP_STEPS == 3
    assert EntityPPRRetriever._hop(retriever, ["ash"], run, config) == ["birch"]
    assert EntityPPRRetriever._hop(retriever, ["birch"], run, config) == ["ash", "cedar"]  # equal mass: by id
    # the same reach in process; a walk to convergence goes down the whole chain
    ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace, hipporag2=True)
    n = len(ref.phrases)
    reset = np.zeros(n + len(ref.passages))
    reset[n + ref.passages.index("ash")] = 1.0
    short = short_walk(ref.mention_transition_t, reset, memory.config.damping, HOP_STEPS)[n:]
    full = walk(ref.mention_transition_t, reset, memory.config.damping, 1e-12, 200)[n:]
    assert {p for p, m in zip(ref.passages, short) if m > 0} == {"ash", "birch"}
    assert {p for p, m in zip(ref.passages, full) if m > 0} == {"ash", "birch", "cedar", "dogwood"}
