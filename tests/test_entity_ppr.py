"""The LLM-free mode (entity-ppr) and the mention graph it walks: every entity a passage names is a phrase
linked to it; the server's walk equals the in-process reference of the same formulas; explanations; and
every mode returns top_k passages when the namespace holds them."""

from __future__ import annotations

import numpy as np
import pytest

from hippo_neo4j import HippoConfig, limits
from hippo_neo4j import evaluation as ev
from hippo_neo4j.evaluation.reference import ReferenceGraph
from hippo_neo4j.extract.offline import OfflineExtractor
from hippo_neo4j.retrieve import MODES
from hippo_neo4j.retrieve.entity_ppr import walk_precision

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
    """The same seeds give the server's walks and the in-process reference the same rankings: the same passages,
    placed by the same evidence, with the same scores (up to passages whose masses tie within the walks' precision)."""
    small, _ = musique10
    # walks to a tolerance far below the masses ranked, so that no passage's rank depends on where a walk stopped
    memory = on_musique10(config=HippoConfig(ppr_tolerance=1e-14))
    ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace, hipporag2=True)
    names = OfflineExtractor()
    kinds = set()
    for q in small.questions:
        result = memory.query(q.question, mode="entity-ppr", top_k=10, entities=names.query_entities(q.question))
        seeds = {s.node: s.weight for s in result.phrase_seeds}
        expected = ref.entity_ppr(memory.encoder.encode_queries([q.question])[0], seeds, top_k=10, tol=1e-16,
                                  entity_share=memory.config.entity_share, damping=memory.config.damping,
                                  precision=walk_precision(memory.config))
        assert {t: w for t, w in expected["phrase_seeds"].items()} == pytest.approx(seeds, abs=1e-9)
        found = [p for p in result.passages if not p.filled]
        assert [p.score for p in found] == pytest.approx([s for _, s in expected["passages"][: len(found)]], abs=1e-6)
        for p, (eid, es) in zip(found, expected["passages"]):  # same order up to near ties
            assert p.id == eid or abs(p.score - es) < 1e-6
            assert p.id != eid or p.signals["placed"] == expected["placed"][eid]
        kinds |= {p.signals["placed"] for p in found}
    assert {"agreement", "hop"} <= kinds  # two signals and the second hop placed passages on these questions


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
    # what each phrase passed to the passage in the walk: its mass, halved (damping), over its weighted degree
    mass = {t["phrase"]: t["mass"] for t in result.top_phrases}
    for p in result.passages:
        for c in p.contributors:
            assert 0 < c.contribution <= memory.config.damping * mass.get(c.phrase, 1.0) + 1e-12
    assert any(c.phrase == "alzheimer s disease" for p in result.passages for c in p.contributors)
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
        scores = [p.score for p in result.passages]
        assert scores == sorted(scores, reverse=True), name  # the score is the order, filled passages too
        assert all(p.score == 0 for p in result.passages if p.filled), name
    bm25 = memory.query("robotics", mode="bm25", top_k=4)
    assert bm25.passages[0].id == "ortiz" and not bm25.passages[0].filled and all(p.filled for p in bm25.passages[1:])
    assert not any(p.filled for p in memory.query(QUESTION, mode="dense", top_k=total).passages)


def test_ranking_the_passages_among_each_walks_window_changes_no_ranking_here(on_musique10, musique10, monkeypatch):
    """Each walk ranks the passages among the entity_ppr.WINDOW nodes to which it gives the most mass (the statements
    return those nodes alone); on musique's questions that gives the rankings and scores of walks ranked whole."""
    from hippo_neo4j.retrieve import entity_ppr

    small, _ = musique10
    memory = on_musique10()
    names = OfflineExtractor()
    queries = [(q.question, names.query_entities(q.question)) for q in small.questions]

    def ranked(window):
        monkeypatch.setattr(entity_ppr, "WINDOW", window)
        return [[(p.id, round(p.score, 9)) for p in memory.query(text, mode="entity-ppr", top_k=10, entities=ents).passages]
                for text, ents in queries]

    windows = []
    run = memory.store.run
    monkeypatch.setattr(memory.store, "run", lambda name, **p: windows.append(p.get("window")) or run(name, **p))
    # every query's passage cosines from the client (a client's first query has the server compute them, which
    # agrees to about 1e-7 only: the server's vector functions compute in float32)
    memory.retrieval.passage_vectors().asked = 1
    assert ranked(10**6) == ranked(entity_ppr.WINDOW)
    assert set(windows) - {None} == {10**6, entity_ppr.WINDOW}


def test_the_entity_walk_runs_beside_the_walk_and_ranks_as_when_run_in_turn(on_musique10, musique10, monkeypatch):
    """The walk and the entity walk run at the same time on the same projection (the entity walk on a pool thread,
    followed there by the second hop from the passages it and dense agree on); with every pool slot taken
    they run in turn in the caller's thread. Either way the same passages, scores and explanations."""
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
        if name in ("entity_ppr_passages", "entity_walk"):  # the walks (the hop sums its paths in the database)
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
    assert ("entity_ppr_hop", False) in threads  # the second hop: after the entity walk, beside the walk
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
    assert threads and all(here for _, here in threads)  # all in the caller's thread
    assert in_turn == beside
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


def test_evidence_is_the_chance_of_the_ranks_that_place_a_passage():
    """The evidence of a passage: the chance that independent random rankings put it as high (a product of two
    quantiles: u (1 - ln u)); two signals that both rank a passage high outweigh one that ranks another first; the
    second hop needs the walk or dense to confirm; equal evidence by passage id."""
    from hippo_neo4j.retrieve.entity_ppr import Ranking, better_of_two, chance, evidence

    assert chance(0.2) == pytest.approx(0.2)
    assert chance(0.1, 0.2) == pytest.approx(0.02 * (1 - np.log(0.02)))
    assert chance(0.5, 0.5, 0.5) == pytest.approx(0.125 * (1 + np.log(8) + np.log(8) ** 2 / 2))
    assert better_of_two(0.1) == pytest.approx(0.19)
    m = 1000
    dense = Ranking(["a", "b", "c", "d", "e"])
    walk = Ranking(["c", "a", "b", "e", "d"])
    entity = Ranking(["b", "a"])
    hop = Ranking(["e", "d"])
    found = evidence(m, dense, walk, entity, hop)
    # a: dense 1st, entity walk 2nd; c: the walk's first alone
    assert found.chances["agreement"]["a"] == pytest.approx(chance(1 / m, 2 / m))
    assert found.placed["a"] == "agreement" and found.best["a"] < found.best["c"] and found.placed["c"] == "walk"
    assert found.chances["hop"]["e"] == pytest.approx(chance(1 / m, better_of_two(4 / m)))  # walk 4th, dense 5th
    assert found.placed["e"] == "hop"
    order = found.order()
    assert [found.score(pid) for pid in order] == sorted((found.score(pid) for pid in order), reverse=True)
    assert order[:2] == ["a", "b"]  # the two the signals agree on
    tie = evidence(m, Ranking(["q", "p"]), Ranking(["w"]), Ranking(["p", "q"]), None)  # p: dense 2nd, entity 1st
    assert tie.best["p"] == tie.best["q"] and tie.order() == ["p", "q", "w"]


def test_passages_a_signal_scores_alike_share_a_rank_so_their_evidence_does_not_follow_their_ids():
    """Passages whose scores are equal to a signal's precision are listed by id but ranked alike, each at the last
    place they hold (the number of passages ranked at least as high), those past the cut counted: the second hop
    gives every passage that shares one entity with its source the same mass, and which of them the evidence prefers
    is for the other signals to say, not for the alphabet. Renaming the passages moves no score."""
    from hippo_neo4j.retrieve.entity_ppr import Ranking, better_of_two, chance, evidence

    hop = Ranking.top(["y", "x", "c", "d"], np.array([0.5, 0.5 + 1e-9, 0.7, 0.1]), 1e-7)
    assert hop.ids == ["c", "x", "y", "d"] and hop.ranks() == {"c": 1, "x": 3, "y": 3, "d": 4}
    cut = Ranking.top(["a", "b", "c", "d"], np.array([0.9, 0.5, 0.5, 0.5]), 1e-7, depth=2)
    assert cut.ids == ["a", "b"] and cut.ranks() == {"a": 1, "b": 4}  # b, c and d hold places 2 to 4
    assert Ranking(["p", "q"]).ranks() == {"p": 1, "q": 2}  # ids alone: by place

    m = 100

    def scores(x: str, y: str) -> dict[str, float]:
        dense = Ranking.top([y, x, "c"], np.array([0.9, 0.8, 0.7]), 1e-6)  # dense puts y above x
        walk = Ranking.top(["c", x, y], np.array([0.3, 0.2, 0.1]), 1e-7)
        entity = Ranking.top(["c"], np.array([0.3]), 1e-7)
        second = Ranking.top([x, y], np.array([0.4, 0.4]), 1e-7)  # the hop reaches both alike
        found = evidence(m, dense, walk, entity, second)
        assert found.chances["hop"][x] == pytest.approx(chance(2 / m, better_of_two(2 / m)))
        return {pid: found.score(pid) for pid in found.best}

    before, renamed = scores("x", "y"), scores("z", "a")  # the hop lists x first, then a first
    assert before["x"] == pytest.approx(renamed["z"]) and before["y"] == pytest.approx(renamed["a"])
    assert before["y"] > before["x"]  # dense, not the id, breaks the hop's tie


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
    memory.server.projections.drop(memory.namespace)  # the one indexing made: an older release's is never walked
    memory.query(small.questions[0].question, mode="entity-ppr", top_k=5, entities=["x"])
    relationships, edges = _mention_projection(driver, memory.namespace)
    assert relationships == 2 * edges and edges > 0
    said = []
    again = ev.ensure_index(memory, small, say=said.append)
    assert not again.reused and any("rebuilding" in s for s in said)
    assert rows(driver, "MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->() WHERE m.named IS NULL RETURN count(m) AS n",
                ns=memory.namespace)[0]["n"] == 0


def path_finding_case(memory_factory):
    """HippoRAG's case study ("Which Stanford University professor works on Alzheimer's?", 43 passages), indexed
    with the offline extractor: the memory, the question, the gold professors and each passage's title."""
    from .conftest import DATASETS

    data = ev.load_dataset(DATASETS / "case_study_university", use_openie=False)
    memory = memory_factory(extractor=OfflineExtractor())
    ev.ensure_index(memory, data)
    titles = {p.passage_id: p.title for p in data.passages}
    return memory, data.questions[0], {titles[g] for g in data.questions[0].gold}, titles


def test_the_papers_path_finding_case_offline(memory_factory):
    """The case study: a gold professor (Thomas C. Südhof) in entity-ppr's top 5 and both in its top 10, in either
    casing (dense finds one in its top 10)."""
    memory, question, gold, titles = path_finding_case(memory_factory)
    assert gold == {"Thomas C. Südhof", "Robert Malenka"}
    for text in (question.question, question.question.lower()):
        top = [titles[p.id] for p in memory.query(text, mode="entity-ppr", top_k=10).passages]
        assert "Thomas C. Südhof" in top[:5] and gold <= set(top), top


@pytest.mark.xfail(strict=True, reason="since the second hop weighs each mention by its count, Robert Malenka's "
                   "passage is 6th, 0.03 below the 5th (docs/design.md, 'The second hop follows each mention as often "
                   "as the passage makes it', and docs/results.md, 'The small corpora')")
def test_both_professors_of_the_path_finding_case_are_in_the_top_5(memory_factory):
    """The case study: both gold professors in entity-ppr's top 5 (a target of the mode that does not hold now)."""
    memory, question, gold, titles = path_finding_case(memory_factory)
    top = memory.query(question.question, mode="entity-ppr", top_k=5)
    assert gold <= {titles[p.id] for p in top.passages}, [titles[p.id] for p in top.passages]


def test_scores_follow_the_order_and_each_passage_says_which_evidence_placed_it(memory_factory):
    """Each passage's score is the strongest of its evidence (-log10 of a chance: the agreement's from its dense and
    entity-walk ranks, the walk's from its walk rank), so the scores never rise down the list; passages a walk
    cannot tell apart share a rank, whatever their ids; with agreement off
    (entity-ppr-walk) the walk's ranks alone order the passages; with no phrase seed, the walk alone."""
    from hippo_neo4j.retrieve.entity_ppr import chance

    memory = memory_factory()
    corpus = named(PATH_CORPUS) + [P("lane-bio", "Thomas Lane was born in Ohio.", title="Thomas Lane")] + RIVERS
    memory.index(corpus)
    m = len(corpus)
    result = memory.query(QUESTION, top_k=9, entities=["Thomas Lane"])
    scores = [p.score for p in result.passages]
    assert scores == sorted(scores, reverse=True) and len(set(p.id for p in result.passages)) == 9
    kinds = set()
    for p in result.passages:
        s = p.signals
        assert p.score == pytest.approx(max(s["evidence"].values())) and s["evidence"][s["placed"]] == pytest.approx(p.score)
        kinds.add(s["placed"])
        assert s["evidence"]["walk"] == pytest.approx(-np.log10(s["walk_rank"] / m))
        entity = s["entity_walk_rank"] or m  # a passage the entity walk does not reach: its last
        assert s["evidence"]["agreement"] == pytest.approx(-np.log10(chance(s["dense_rank"] / m, entity / m)))
        if s["placed"] == "agreement":
            assert s["entity_walk_rank"] is not None and s["dense_rank"] is not None
    assert {"entity", "dense"} <= kinds  # Lane's passages: the entity walk's top; the distractors: dense's
    # the six distractors are alike to the entity walk from Lane (each a name beside the Alzheimer's or the Stanford
    # phrase that one of his passages names): one mass, so one rank, the last place they hold, not 4 to 9 by id
    alike = [p.signals["entity_walk_rank"] for p in result.passages if not p.id.startswith("lane")]
    assert len(alike) == 6 and set(alike) == {9}
    ran, run = [], memory.store.run
    memory.store.run = lambda name, **params: ran.append(name) or run(name, **params)
    try:
        walk = memory.query(QUESTION, mode="entity-ppr-walk", top_k=9, entities=["Thomas Lane"])
    finally:
        memory.store.run = run
    assert "entity_ppr_passages" in ran and "entity_walk" not in ran and "entity_ppr_hop" not in ran
    for p in walk.passages:  # no entity walk: the walk's and dense's ranks alone
        assert set(p.signals["evidence"]) == {"walk", "dense"} and p.signals["entity_walk_rank"] is None
        assert p.score == pytest.approx(-np.log10(min(p.signals["walk_rank"], p.signals["dense_rank"]) / m))
    assert [p.id for p in result.passages] != [p.id for p in walk.passages]  # the entity walk reorders them
    plain = memory.query(QUESTION, top_k=5, entities=[])  # no phrase seed: no entity walk either
    assert all(p.signals["placed"] in ("walk", "dense") and p.signals["entity_walk_rank"] is None for p in plain.passages)
    assert [p.score for p in plain.passages] == sorted((p.score for p in plain.passages), reverse=True)


# Passages about nothing the questions ask, to make a corpus larger than twice the agreement's depth.
RIVERS = [P(f"river-{i}", f"The river Vel{i} flows into lake Mor{i}.", (f"Vel{i}", "flows into", f"Mor{i}")) for i in range(12)]


def test_the_demo_question_ranks_alike_in_either_casing_and_finds_both_gold_passages(memory_factory):
    """`make demo`'s first question, on its 10 passages, as written and in lower case: the same ranking, the same
    scores; both gold passages in the top 3, the one where Maria Okafor studies Alzheimer's disease first: the entity
    walk ranks it first, since the passages about the other Alzheimer's researchers no longer keep their mass through
    the names only they hold (in ten passages no rank is strong evidence: a signal's first is a chance of one in
    ten)."""
    from importlib import resources
    import json

    corpus = json.loads(resources.files("hippo_neo4j").joinpath("demo", "corpus.json").read_text())
    question = json.loads(resources.files("hippo_neo4j").joinpath("demo", "questions.json").read_text())[0]
    memory = memory_factory(extractor=OfflineExtractor())
    memory.index(corpus)
    written, lower = (memory.query(text, top_k=5) for text in (question["question"], question["question"].lower()))
    assert [(p.id, p.score) for p in written.passages] == [(p.id, p.score) for p in lower.passages]
    assert written.passages[0].id == "okafor-research" and set(question["gold"]) <= {p.id for p in written.passages[:3]}
    assert written.passages[0].signals["entity_walk_rank"] == 1
    assert {link.phrase for link in written.linked} == {"stanford university", "alzheimer s disease"}


def test_an_entity_walk_that_reaches_few_passages_vetoes_none_of_the_others(memory_factory):
    """The question's entity names one passage that shares nothing else with the corpus: the walk from it reaches
    that passage alone; the passage most like the question, which names the film in words the entity did not link,
    is still at the top: a passage the entity walk does not reach counts as its last, not as refuted."""
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
    assert dense[0] == "gunn" and {p.id for p in result.passages[:2]} == {"gunn", "believe"}


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


def test_the_second_hop_leads_from_the_agreed_passages_and_names_the_way(on_musique10, musique10, driver):
    """A passage the second hop places names the agreed passage it was reached from and the phrase it came through:
    a phrase both name, or a synonym of one the source names (the path that carried the most of the hop's mass);
    entity-ppr-first-hop places none by the hop, and its agreed passages are the same."""
    small, _ = musique10
    memory = on_musique10()
    names = OfflineExtractor()
    hops = 0
    for q in small.questions:
        ents = names.query_entities(q.question)
        result = memory.query(q.question, top_k=10, entities=ents)
        first_hop = memory.query(q.question, mode="entity-ppr-first-hop", top_k=10, entities=ents)
        assert not any(p.signals["placed"] == "hop" or p.signals["hop_rank"] for p in first_hop.passages)
        for p in (p for p in result.passages if p.signals["placed"] == "hop"):
            hops += 1
            via = p.signals["via"]
            assert via and via["flow"] > 0 and p.signals["hop_rank"] is not None
            source = [via["synonym_of"] or via["phrase"], via["passage"]]
            assert rows(driver, "MATCH (a:Phrase {ns: $ns, text: $a})-[:MENTIONED_IN]->(s:Passage {id: $s}) "
                                "MATCH (b:Phrase {ns: $ns, text: $b})-[:MENTIONED_IN]->(p:Passage {id: $p}) "
                                "RETURN a = b OR EXISTS { (a)-[:SYNONYM]-(b) } AS joined",
                        ns=memory.namespace, a=source[0], s=source[1], b=via["phrase"], p=p.id)[0]["joined"]
    assert hops > 0


# A chain of passages, each sharing one name with the next: from "ash", "birch" is two steps away (ash -> Orla
# Quint -> birch), "cedar" four, "dogwood" six.
CHAIN = [
    P("ash", "Orla Quint founded the Ash Society.", ("Orla Quint", "founded", "Ash Society")),
    P("birch", "Orla Quint married Tomas Verhoek.", ("Orla Quint", "married", "Tomas Verhoek")),
    P("cedar", "Tomas Verhoek built the Kestrel Mill.", ("Tomas Verhoek", "built", "Kestrel Mill")),
    P("dogwood", "The Kestrel Mill burned in Zandport.", ("Kestrel Mill", "burned in", "Zandport")),
]


def test_the_second_hop_walks_three_steps_from_its_sources(memory_factory):
    """The hop shows the passages that share an entity with its sources (or a synonym of one): its walk stops after
    three steps, as the in-process short walk, where a walk to convergence reaches the whole chain; a source's own
    starting mass is taken out (what returns to it through its entities stays)."""
    from hippo_neo4j.retrieve.entity_ppr import HOP_STEPS, EntityPPRRetriever
    from hippo_neo4j.evaluation.reference import short_walk, walk

    memory = memory_factory()
    memory.index(named(CHAIN))
    retriever = memory.retriever("entity-ppr")
    passages = {r["n"]: r["id"] for r in rows(memory.driver, "MATCH (p:Passage {ns: $ns}) RETURN id(p) AS n, p.id AS id",
                                             ns=memory.namespace)}

    def run(params):
        return memory.store.run("entity_ppr_hop", **params)

    assert HOP_STEPS == 3
    from_ash = EntityPPRRetriever._hop(retriever, {"ash": 1.0}, passages, run, memory.config)
    assert from_ash.ids == ["ash", "birch"]  # ash: its mass back through Orla Quint
    hop = EntityPPRRetriever._hop(retriever, {"birch": 1.0}, passages, run, memory.config)
    assert hop.ids == ["birch", "ash", "cedar"] and hop.score["ash"] == pytest.approx(hop.score["cedar"])  # tie: by id
    # the same reach in process; a walk to convergence goes down the whole chain
    ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace, hipporag2=True)
    n = len(ref.phrases)
    reset = np.zeros(n + len(ref.passages))
    reset[n + ref.passages.index("ash")] = 1.0
    short = short_walk(ref.hop_transition_t, reset, memory.config.damping, HOP_STEPS)[n:]
    full = walk(ref.mention_transition_t, reset, memory.config.damping, 1e-12, 200)[n:]
    assert {p for p, m in zip(ref.passages, short) if m > 0} == {"ash", "birch"}
    taken = {"ash": (1 - memory.config.damping) * 1.0}  # the server's hop: the same masses
    assert from_ash.score == pytest.approx({p: m - taken.get(p, 0.0) for p, m in zip(ref.passages, short) if m > 0},
                                      rel=1e-12, abs=1e-15)
    assert {p for p, m in zip(ref.passages, full) if m > 0} == {"ash", "birch", "cedar", "dogwood"}


# Two passages that name Ada Vale: one with two names of its own (Tin Lake, Koru Press: no other passage, no
# synonym), one whose other name (Olin Frey) leads on to a third passage.
OWN_NAMES = [
    P("vale-own", "Ada Vale studied at Tin Lake and founded Koru Press.",
      ("Ada Vale", "studied at", "Tin Lake"), ("Ada Vale", "founded", "Koru Press")),
    P("vale-frey", "Ada Vale married Olin Frey.", ("Ada Vale", "married", "Olin Frey")),
    P("frey", "Olin Frey built boats.", ("Olin Frey", "built", "boats")),
]


def test_the_entity_walk_passes_a_passage_mass_on_along_the_entities_it_shares(memory_factory):
    """From Ada Vale, the passage that names two things of its own does not keep its mass through them (each would
    hand its mass back to that passage alone, so a walk over every mention ranks it first): the entity walk passes
    a passage's mass on along the entities it shares, and ranks the passage that leads on to Olin Frey first. A
    question that names one of those own names still seeds its passage."""
    from hippo_neo4j.evaluation.reference import walk

    memory = memory_factory()
    memory.index(named(OWN_NAMES))
    ranks = {p.id: p.signals["entity_walk_rank"] for p in memory.query("Who is Ada Vale?", top_k=3,
                                                                        entities=["Ada Vale"]).passages}
    assert ranks["vale-frey"] < ranks["vale-own"]
    ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace, hipporag2=True)
    n, reset = len(ref.phrases), np.zeros(len(ref.phrases) + len(ref.passages))
    reset[ref.phrase_index["ada vale"]] = 1.0
    every = dict(zip(ref.passages, walk(ref.mention_transition_t, reset, memory.config.damping, 1e-12, 200)[n:]))
    paths = dict(zip(ref.passages, walk(ref.entity_transition_t, reset, memory.config.damping, 1e-12, 200)[n:]))
    # a walk over every mention ranks them the other way
    assert every["vale-own"] > every["vale-frey"] and paths["vale-frey"] > paths["vale-own"]
    own = memory.query("What did Ada Vale found?", top_k=3, entities=["Koru Press"]).passages
    assert own[0].id == "vale-own" and own[0].signals["entity_walk_rank"] == 1


def test_a_passage_whose_names_lead_nowhere_else_gets_its_mass_back_through_them(memory_factory):
    """A passage none of whose names another passage holds, or a synonym joins, steps into its own names (the limit
    of their `path` weights, all alike small): they send it all back. So the hop from it returns it (1 - d) d^2 of
    its weight, the mass GDS's PageRank gives over the hop's weights (the benchmarks' projection), and the
    reference's walks pass its mass on where they step from a passage into the names that lead somewhere, as GDS
    does, while a passage that shares a name sends its own names next to nothing."""
    from hippo_neo4j.db import cypher
    from hippo_neo4j.evaluation.reference import LEADS_NOWHERE, short_walk
    from hippo_neo4j.retrieve.entity_ppr import HOP_STEPS, EntityPPRRetriever

    memory = memory_factory()
    isle = P("isle", "Mira Solt sailed to Pell Island.", ("Mira Solt", "sailed to", "Pell Island"))
    memory.index(named(OWN_NAMES + [isle]))
    d, ns = memory.config.damping, memory.namespace
    assert rows(memory.driver, "MATCH (b:Phrase {ns: $ns})-[:MENTIONED_IN]->(:Passage {id: 'isle'}) RETURN "
                "count(b) AS names, sum(count { (b)-[:SYNONYM]-() } + count { (b)-[:MENTIONED_IN]->() }) AS edges",
                ns=ns)[0] == {"names": 2, "edges": 2}  # two names, each with its one mention alone
    passages = {r["n"]: r["id"] for r in rows(memory.driver,
                                              "MATCH (p:Passage {ns: $ns}) RETURN id(p) AS n, p.id AS id", ns=ns)}
    hop = EntityPPRRetriever._hop(memory.retriever("entity-ppr"), {"isle": 1.0}, passages,
                                  lambda params: memory.store.run("entity_ppr_hop", **params), memory.config)
    assert hop.ids == ["isle"] and hop.score["isle"] == pytest.approx((1 - d) * d * d, rel=1e-12)
    graph = "test-hop-leads-nowhere"
    memory.driver.execute_query(cypher("bench_project_hop_graph"), graph=graph, ns=ns, database_=memory.database)
    try:  # one source of weight 1: the node alone (GDS 2.13, on Neo4j 5.26, takes no weighted sourceNodes)
        window = rows(memory.driver, "MATCH (s:Passage {ns: $ns, id: 'isle'}) CALL gds.pageRank.stream($graph, "
                      "{sourceNodes: [s], dampingFactor: $damping, relationshipWeightProperty: 'weight', "
                      "maxIterations: $iterations, tolerance: 1e-12, concurrency: 1}) YIELD nodeId, score "
                      "WHERE score > 0 RETURN nodeId, score", ns=ns, graph=graph, damping=d, iterations=HOP_STEPS + 1)
    finally:
        memory.driver.execute_query("CALL gds.graph.drop($graph, false) YIELD graphName RETURN graphName",
                                    graph=graph, database_=memory.database)
    walked = {passages[r["nodeId"]]: r["score"] for r in window if r["nodeId"] in passages}
    assert walked == pytest.approx({"isle": (1 - d) + hop.score["isle"]}, rel=1e-9)
    ref = ReferenceGraph.load(memory.driver, memory.database, ns, hipporag2=True)
    n = len(ref.phrases)
    reset = np.zeros(n + len(ref.passages))
    reset[n + ref.passages.index("isle")] = 1.0
    short = dict(zip(ref.passages, short_walk(ref.hop_transition_t, reset, d, HOP_STEPS)[n:]))
    assert {p: m for p, m in short.items() if m > 0} == pytest.approx(walked, rel=1e-9)
    for t in (ref.entity_transition_t, ref.hop_transition_t):  # T^T: a passage's column is where its mass goes
        out = np.asarray(t.sum(axis=0)).ravel()[n:]
        assert out[ref.passages.index("isle")] == pytest.approx(1.0)  # passed on, not lost
    own = ref.entity_transition_t[:, n + ref.passages.index("vale-own")].toarray().ravel()
    assert own[ref.phrase_index["tin lake"]] == pytest.approx(LEADS_NOWHERE / (1 + 2 * LEADS_NOWHERE))


# A film, its director's own article (three facts about her) and another film that names her once.
FILM_HOP = [
    P("film", "Grey Harbour is a 1998 drama directed by Ilse Marek.", ("Grey Harbour", "directed by", "Ilse Marek")),
    P("marek", "Ilse Marek is a director born in Graz. Marek studied in Vienna and won the Golden Lion.",
      ("Ilse Marek", "born in", "Graz"), ("Ilse Marek", "studied in", "Vienna"), ("Ilse Marek", "won", "Golden Lion")),
    P("other", "North Pier is a 2003 film directed by Ilse Marek.", ("North Pier", "directed by", "Ilse Marek")),
]


def test_the_second_hop_follows_each_mention_as_often_as_the_passage_makes_it(memory_factory):
    """From the film's passage the hop reaches its director's own article before the other film that names her:
    a named mention weighs its count (the facts naming the entity, plus one: 4 in her article, 2 in each film), so
    her article gets twice the other film's mass, where mentions weighed alike (the walks' graph) would tie them;
    the in-process reference's hop gives the same masses, and the explanation's path carries the same share."""
    from hippo_neo4j.evaluation.reference import short_walk
    from hippo_neo4j.retrieve.entity_ppr import HOP_STEPS, EntityPPRRetriever

    memory = memory_factory()
    memory.index(named(FILM_HOP))
    retriever = memory.retriever("entity-ppr")
    passages = {r["n"]: r["id"] for r in rows(memory.driver, "MATCH (p:Passage {ns: $ns}) RETURN id(p) AS n, p.id AS id",
                                             ns=memory.namespace)}
    hop = EntityPPRRetriever._hop(retriever, {"film": 1.0}, passages,
                                  lambda params: memory.store.run("entity_ppr_hop", **params), memory.config)
    assert hop.ids == ["marek", "film", "other"] and hop.score["marek"] == pytest.approx(2 * hop.score["other"])
    d = memory.config.damping
    ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace, hipporag2=True)
    n = len(ref.phrases)
    reset = np.zeros(n + len(ref.passages))
    reset[n + ref.passages.index("film")] = 1.0
    counted, once = (dict(zip(ref.passages, short_walk(t, reset, d, HOP_STEPS)[n:]))
                     for t in (ref.hop_transition_t, ref.mention_transition_t))
    assert hop.score["marek"] == pytest.approx(counted["marek"]) and hop.score["other"] == pytest.approx(counted["other"])
    assert once["marek"] == pytest.approx(once["other"])  # each mention once: a tie
    details = memory.store.run("entity_ppr_details", ids=["marek", "other"], phrases=[], mass={}, hopIds=["marek", "other"],
                               sources={"film": 1.0}, damping=d, only=None)
    via = {r["id"]: r["via"] for r in details}
    assert via["marek"]["passage"] == "film" and via["marek"]["phrase"] == "ilse marek"
    assert via["marek"]["flow"] == pytest.approx(2 * via["other"]["flow"])
    assert hop.score["marek"] == pytest.approx((1 - d) * d * d * via["marek"]["flow"])  # its one path




# Passages for the question-reading tests: an accented name, a name that is also an ordinary word ("Borders", the
# bookshop), and the demo's path between Stanford and Alzheimer's disease.
READING = [
    {"id": "asch", "title": "Aschenbrödel", "text": "Aschenbrödel is a ballet by Johann Strauss II, finished by Josef Bayer."},
    {"id": "strauss", "title": "Johann Strauss II", "text": "Johann Strauss II was an Austrian composer born in Vienna."},
    {"id": "borders", "title": "Borders", "text": "Borders was a bookshop chain founded in Ann Arbor, Michigan."},
    {"id": "ohio", "title": "Ohio", "text": "Ohio borders Michigan and Lake Erie. Ohio borders Indiana to the west."},
    {"id": "indiana", "title": "Indiana", "text": "Indiana borders Michigan and Ohio. Indiana borders Illinois."},
    {"id": "velka", "title": "Velka", "text": "The Velka is a river in Central Europe that flows through Brenov."},
]


def test_the_question_is_read_by_its_words_whatever_its_casing(memory_factory):
    """A question typed in lower case, in capitals or as written links to the same phrases and ranks alike, in every
    mode that links; a name typed without its accent finds the phrase; a word that names an entity in one passage
    but is an ordinary word in others links with a confidence to match."""
    memory = memory_factory(extractor=OfflineExtractor())
    memory.index(READING)
    question = "Who finished the ballet Aschenbrödel?"
    for mode in ("entity-ppr", "hipporag1", "hybrid"):
        results = [memory.query(text, mode=mode, top_k=4) for text in (question, question.lower(), question.upper())]
        assert all([(p.id, p.score) for p in r.passages] == [(p.id, p.score) for p in results[0].passages]
                   for r in results), mode
        unaccented = memory.query("who finished the ballet aschenbrodel", mode=mode, top_k=4)
        assert all([link.phrase for link in r.linked] == ["aschenbrödel"] for r in results + [unaccented]), mode
    assert results[0].passages[0].id == "asch"
    which = memory.query("which state borders michigan and is where borders was founded?", top_k=3)
    confidence = {link.phrase: link.confidence for link in which.linked}
    assert confidence["michigan"] == 1.0 and confidence["borders"] < 0.5  # "borders" is mostly a verb here
    assert all(link.weight > 0 for link in which.linked) and sum(link.weight for link in which.linked) == \
        pytest.approx(memory.config.entity_share)


@pytest.mark.parametrize("question", [
    "what is the meaning of all this?",  # no name the namespace knows
    "Wer hat das Ballett Aschenbrödel vollendet und wo wurde der Komponist geboren?",  # another language
    "Aschenbrödel",  # one word
    ("ballet " * 1500)[: limits.QUERY_CHARS - len(" Aschenbrödel")] + " Aschenbrödel",  # the longest query allowed
])
def test_a_question_with_no_name_another_language_one_word_or_thousands_of_words_still_ranks(memory_factory, question):
    """Whatever the question, entity-ppr answers it: top_k passages, scores that never rise, and when no phrase of
    the namespace is named in it, the passages like the query alone, and it says so."""
    memory = memory_factory(extractor=OfflineExtractor())
    memory.index(READING)
    result = memory.query(question, top_k=3)
    assert len(result.passages) == 3 and not result.fell_back
    assert [p.score for p in result.passages] == sorted((p.score for p in result.passages), reverse=True)
    if not result.linked:
        assert "no phrase of the namespace is named in the question" in result.warning
    else:
        assert "aschenbrödel" in [link.phrase for link in result.linked] and result.passages[0].id == "asch"


def test_every_mode_scores_its_musique_rankings_in_order(on_musique10, musique10):
    """On musique's questions, as written and in lower case, no mode returns a score that rises down its ranking, so
    the iterative retrieval's pool, which ranks by score, keeps each mode's order."""
    from hippo_neo4j.iterative import IterativeRetrieval

    small, _ = musique10
    memory = on_musique10(extractor=OfflineExtractor())
    for q in small.questions:
        for text in (q.question, q.question.lower()):
            for mode in MODES:
                found = memory.query(text, mode=mode, top_k=10, recognition_filter=False).passages
                scores = [p.score for p in found]
                assert scores == sorted(scores, reverse=True), (mode, text)
                if text == q.question:
                    pooled = IterativeRetrieval(memory, mode=mode, steps=0).run(text, top_k=10, recognition_filter=False).passages
                    assert [p.id for p in pooled] == [p.id for p in found], mode


def test_a_walk_from_every_passage_holds_memory_that_does_not_grow_with_its_passage_sources(on_musique10):
    """The walks seeded from every passage like the query (entity-ppr's walk, hipporag2's) are handed their passage
    sources in GDS's settings, never as a variable: the server keeps every variable in scope with each row it sorts,
    so a list of the namespace's passages held as one made the statement's memory grow with their number times the
    rows kept (at 50,000 passages entity-ppr's walk exceeded the server's transaction memory and failed). PROFILE's
    memory of each statement, as this server runs it, with every passage as a source is that with a tenth of them."""
    from hippo_neo4j.retrieve.entity_ppr import entity_ppr_parameters
    from hippo_neo4j.retrieve.hipporag2 import ppr2_parameters

    memory = on_musique10()
    config = memory.config
    statements = {
        "entity_ppr_passages": ("mentions", entity_ppr_parameters(config)),
        "ppr2_passages": ("passage", ppr2_parameters(config, {}, 10) | {"massFloor": 0.0, "only": None}),
    }
    nodes = [r["n"] for r in rows(memory.driver, "MATCH (p:Passage {ns: $ns}) RETURN id(p) AS n ORDER BY n",
                                  ns=memory.namespace)]
    assert len(nodes) >= 100
    for name, (kind, params) in statements.items():
        graph = memory.server.projections.ensure(memory.namespace, kind)

        def used(sources: list[int]) -> int:
            given = params | {"graph": graph.name, "graphVersion": graph.version, "seeds": [],
                              "passageSources": [[float(n), 1.0 / len(sources)] for n in sources]}
            with memory.driver.session(database=memory.database) as session:
                summary = session.run("PROFILE " + memory.server.statement(name), **memory.store.scope, **given).consume()
            assert summary.profile is not None and "GlobalMemory" in summary.profile["args"], name
            return summary.profile["args"]["GlobalMemory"]

        tenth, every = used(nodes[: len(nodes) // 10]), used(nodes)
        assert every < 1.5 * tenth, (name, tenth, every)
