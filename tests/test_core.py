"""Indexing into the Phrase/Passage graph and retrieval with GDS PPR, on the real server."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from hippo_neo4j import HippoConfig
from hippo_neo4j.cli import cli
from hippo_neo4j.evaluation.reference import ReferenceGraph
from hippo_neo4j.graph.server import Server
from hippo_neo4j.graph.passage_vectors import PassageVectors

from .conftest import DATASETS

OPENIE = DATASETS / "musique_train" / "openie_gpt-3.5-turbo-1106.json"


TIGHT = HippoConfig(ppr_tolerance=1e-9)


def P(pid, text, *triples, title=""):
    return {"id": pid, "title": title, "text": text, "extraction": {"named_entities": [], "triples": [list(t) for t in triples]}}


# The paper's path-finding case: one passage says a professor studies Alzheimer's, another that he is at
# Stanford; distractors are other Stanford professors and other Alzheimer's researchers.
PATH_CORPUS = [
    P("lane-alz", "Thomas Lane studies Alzheimer's disease in his laboratory.", ("Thomas Lane", "studies", "Alzheimer's disease")),
    P("lane-stanford", "Thomas Lane teaches at Stanford University.", ("Thomas Lane", "teaches at", "Stanford University")),
    P("ng", "Andrew Ng is a professor at Stanford University.", ("Andrew Ng", "professor at", "Stanford University")),
    P("hall", "Rebecca Hall is a professor at Stanford University.", ("Rebecca Hall", "professor at", "Stanford University")),
    P("ortiz", "Luis Ortiz, a professor at Stanford University, builds robotics systems.",
      ("Luis Ortiz", "professor at", "Stanford University")),
    P("kim", "Professor Mina Kim works on Alzheimer's disease.", ("Mina Kim", "works on", "Alzheimer's disease")),
    P("berg", "Professor Anna Berg works on Alzheimer's disease.", ("Anna Berg", "works on", "Alzheimer's disease")),
    P("novak", "Professor Jan Novak works on Alzheimer's disease.", ("Jan Novak", "works on", "Alzheimer's disease")),
]


def test_path_finding_case_hipporag1_finds_both_hops_and_dense_does_not(memory_factory):
    memory = memory_factory()
    report = memory.index(PATH_CORPUS)
    assert report.indexed == len(PATH_CORPUS) and report.malformed_triples == 0
    question = "Which Stanford professor works on Alzheimer's?"
    result = memory.query(question, mode="hipporag1", entities=["Stanford", "Alzheimer's"], top_k=5)
    assert not result.fell_back
    assert {link.phrase for link in result.linked} == {"stanford university", "alzheimer s disease"}
    assert abs(sum(link.weight for link in result.linked) - 1) < 1e-9
    assert {p.id for p in result.passages[:2]} == {"lane-alz", "lane-stanford"}
    # each passage states one fact, so only the graph's shape sets Thomas Lane apart: he is the bridge
    # explanations: the bridge phrase carries the answer
    assert "thomas lane" in [c.phrase for c in result.passages[0].contributors]
    assert result.top_phrases and result.top_phrases[0]["mass"] >= result.top_phrases[-1]["mass"]

    dense = memory.query(question, mode="dense", top_k=5)
    assert len(dense.passages) == 5
    assert {p.id for p in dense.passages[:2]} != {"lane-alz", "lane-stanford"}


def test_ppr_and_aggregation_equal_numpy_on_imported_musique(on_musique10, musique10):
    docs = musique10[0].passages  # the paragraphs of 10 questions with their GPT-3.5 OpenIE, indexed once a run
    memory = on_musique10(config=TIGHT)  # the formulas are compared, so GDS converges as far as the reference
    ref = ReferenceGraph.load(memory.driver, memory.database, memory.namespace)
    stats = memory.stats()
    assert len(ref.phrases) == stats["phrases"] and len(ref.passages) == stats["passages"] == len(docs)

    checked = 0
    for doc in docs[:40:4]:
        entities = [e for e in doc.extraction.named_entities if e.strip()][:3]
        if not entities:
            continue
        result = memory.query("q", mode="hipporag1", entities=entities, top_k=10)
        assert not result.fell_back
        seeds = ref.seed_weights([link.phrase for link in result.linked])
        assert seeds == pytest.approx(dict(result.seeds), abs=1e-12)
        expected = ref.retrieve(seeds, damping=memory.config.damping, top_k=10, min_mass=memory.config.ppr_min_mass)
        got = [(p.id, p.score) for p in result.passages if not p.filled]  # the rest tops up from dense
        assert len(got) == len(expected) and len(result.passages) == 10
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], atol=1e-6)
        # same ranking, up to passages whose scores tie within 1e-9
        for (gid, gs), (eid, es) in zip(got, expected):
            assert gid == eid or abs(gs - es) < 1e-9
        mass = ref.ppr(seeds, memory.config.damping)
        top = max(result.top_phrases, key=lambda t: t["mass"])
        assert top["mass"] == pytest.approx(mass[ref.phrase_index[top["phrase"]]], abs=1e-6)
        checked += 1
    assert checked >= 8


def test_reindexing_is_a_noop_and_malformed_triples_are_counted(memory_factory):
    memory = memory_factory()
    corpus = [
        P("a", "Alpha text.", ("Alpha", "is", "first letter"), ("Alpha", ""), ["", "x", "y"], ("Alpha", "is", "  "), "junk",
          ("Alpha", "is", "ALPHA!"), [1, 2, 3], ("Alpha", "precedes", "Beta")),
        P("b", "Beta text.", ("Beta", "is", "second letter")),
        {"id": "empty", "text": "   "},
        P("a", "Alpha text again with another text."),
    ]
    first = memory.index(corpus)
    assert first.indexed == 2
    assert first.malformed_triples == 5 and first.self_loop_triples == 1 and first.triples == 3
    assert first.skipped_empty == 1 and first.skipped_duplicate_id == 1
    before = memory.stats()
    version = memory.driver.execute_query(
        "MATCH (n:HippoNamespace {name: $ns}) RETURN n.version AS v", ns=memory.namespace
    ).records[0]["v"]

    again = memory.index(corpus)
    assert again.indexed == 0 and again.unchanged == 2
    assert memory.stats() == before
    assert memory.driver.execute_query(
        "MATCH (n:HippoNamespace {name: $ns}) RETURN n.version AS v", ns=memory.namespace
    ).records[0]["v"] == version  # nothing written, so the GDS projection stays valid

    rel = memory.driver.execute_query(
        "MATCH (:Phrase {ns: $ns, text: 'alpha'})-[r:RELATION]->(:Phrase {ns: $ns, text: 'first letter'}) RETURN r",
        ns=memory.namespace,
    ).records[0]["r"]
    assert rel["weight"] == 1 and rel["sources"] == ["a"] and rel["predicates"] == ["is"]


def test_relation_weight_counts_pair_across_corpus_and_update_replaces(memory_factory):
    memory = memory_factory()
    memory.index([
        P("1", "one", ("Paris", "capital of", "France")),
        P("2", "two", ("Paris", "largest city of", "France"), ("Paris", "capital of", "France")),
    ])
    q = ("MATCH (:Phrase {ns: $ns, text: 'paris'})-[r:RELATION]->(:Phrase {ns: $ns, text: 'france'}) "
         "RETURN r.weight AS w, r.sources AS s, r.predicates AS p")
    rec = memory.driver.execute_query(q, ns=memory.namespace).records[0]
    assert rec["w"] == 3 and sorted(rec["s"]) == ["1", "2", "2"]
    mention = memory.driver.execute_query(
        "MATCH (:Phrase {ns: $ns, text: 'paris'})-[m:MENTIONED_IN]->(:Passage {id: '2'}) RETURN m.count AS c",
        ns=memory.namespace,
    ).records[0]["c"]
    assert mention == 2

    report = memory.index([P("2", "two, rewritten", ("Paris", "located in", "France"))])
    assert report.updated == 1 and report.indexed == 1
    rec = memory.driver.execute_query(q, ns=memory.namespace).records[0]
    assert rec["w"] == 2 and sorted(rec["s"]) == ["1", "2"] and sorted(rec["p"]) == ["capital of", "located in"]


def test_synonym_edges_incremental_threshold_and_short_phrases(memory_factory):
    memory = memory_factory(config=HippoConfig(synonym_threshold=0.8))
    memory.index([P("1", "x", ("Nobel Prize in Physics", "awarded to", "Marie Curie"), ("UN", "based in", "New York"))])
    memory.index([P("2", "y", ("Nobel Prize in Chemistry", "awarded to", "Marie Skłodowska Curie"), ("U.N.", "based in", "NYC"))])
    pairs = {
        (r["a"], r["b"]): r["s"]
        for r in memory.driver.execute_query(
            "MATCH (a:Phrase {ns: $ns})-[s:SYNONYM]->(b:Phrase {ns: $ns}) RETURN a.text AS a, b.text AS b, s.score AS s",
            ns=memory.namespace,
        ).records
    }
    key = ("nobel prize in chemistry", "nobel prize in physics")
    assert key in pairs and 0.8 <= pairs[key] < 1.0
    assert all(a < b for a, b in pairs)  # one edge per unordered pair
    assert not any("u n" in pair or "un" in pair for pair in pairs)  # <= 2 alphanumerics: no synonyms

    strict = memory_factory(config=HippoConfig(synonym_threshold=0.95))
    strict.index([P("1", "x", ("Nobel Prize in Physics", "awarded to", "Marie Curie"))])
    strict.index([P("2", "y", ("Nobel Prize in Chemistry", "awarded to", "Pierre Curie"))])
    assert strict.stats()["synonym_edges"] == 0


def test_namespaces_never_see_each_other(memory_factory):
    one, two = memory_factory(), memory_factory()
    one.index([P("shared-id", "Apples grow on trees.", ("apple", "grows on", "tree"))])
    two.index([P("shared-id", "Ships sail on the sea.", ("ship", "sails on", "sea"))])
    assert one.stats()["passages"] == two.stats()["passages"] == 1
    for mode in ("dense", "bm25"):
        assert [p.text for p in one.query("ships sail on the sea", mode=mode).passages] in ([], ["Apples grow on trees."])
    linked = one.query("q", mode="hipporag1", entities=["ship"]).linked
    assert all(link.phrase in {"apple", "tree"} for link in linked)
    two.delete(["shared-id"])
    assert one.stats()["passages"] == 1 and two.stats()["passages"] == 0


def test_the_clients_passage_vectors_follow_every_write_and_equal_the_servers_cosines(memory_factory):
    """entity-ppr and hipporag2 seed passages by their cosine to the query, computed by the client from the
    passage vectors it holds (graph/passage_vectors.py): after adds, updates and deletes they must give what
    the server computes from the stored embeddings, for the passages of the projection walked."""
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    ns, db, driver = memory.namespace, memory.database, memory.driver
    held = memory.retrieval.passage_vectors()
    server = PassageVectors(memory.store, limit_mb=0)  # too large for no memory: the server computes them
    held.asked = server.asked = 1  # past the first query, which the server scores
    fetched: list[int] = []
    run = memory.store.run

    def counting(name, **params):
        if name == "passage_vectors" and params["vectors"]:
            fetched.append(-1)
        elif name == "passage_vectors_of":
            fetched.append(len(params["nodes"]))
        return run(name, **params)

    memory.store.run = counting
    query = memory.encoder.encode_queries(["Which Stanford professor works on Alzheimer's?"])[0]

    def same(graph):
        mine, theirs = held.cosines(query, graph), server.cosines(query, graph)
        assert server.server_side and not held.server_side
        assert dict(zip(mine.ids, mine.nodes.tolist())) == dict(zip(theirs.ids, theirs.nodes.tolist()))
        assert dict(zip(mine.ids, mine.cosine)) == pytest.approx(dict(zip(theirs.ids, theirs.cosine)), abs=1e-6)
        return set(mine.ids)

    before = Server.of(driver, db).projections.ensure(ns, "passage")
    assert same(before) == {p["id"] for p in PATH_CORPUS} and fetched == [-1]  # every vector, in one read
    memory.index([P("okafor", "Professor Chidi Okafor works on Alzheimer's disease at Stanford.")])
    after = Server.of(driver, db).projections.ensure(ns, "passage")
    assert "okafor" in same(after) and fetched[1:] == [1]  # only the new passage's vector
    stale = replace(before, current=after.current)  # a walk on the older projection: the new passage is not in it
    assert same(stale) == {p["id"] for p in PATH_CORPUS}
    memory.index([P("ng", "Andrew Ng teaches machine learning at Stanford University.")])  # an update
    memory.delete(["hall"])
    now = Server.of(driver, db).projections.ensure(ns, "passage")
    assert same(now) == {p["id"] for p in PATH_CORPUS} - {"hall"} | {"okafor"} and fetched[2:] == [1]  # ng's new vector
    matrix = held.matrix
    Server.of(driver, db).projections.drop(ns)
    rebuilt = Server.of(driver, db).projections.ensure(ns, "passage")  # a new projection, no write since
    assert rebuilt.seen > held.read_at and same(rebuilt) == same(now) and held.read_at > rebuilt.seen  # checked again
    assert fetched[2:] == [1] and held.matrix is matrix  # nothing fetched, the vectors kept as they were
    fresh = PassageVectors(memory.store)  # a client's first query is scored by the server: nothing read
    assert fresh.cosines(query, now).ids == server.cosines(query, now).ids and fresh.version is None
    assert len(fresh.cosines(query, now).ids) == len(fresh.nodes) == len(PATH_CORPUS)  # then it reads them
    assert fetched[3:] == [-1]


def test_walks_rank_alike_whether_the_client_or_the_server_scores_the_passages(memory_factory, monkeypatch):
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    question, entities = "Which Stanford professor works on Alzheimer's?", ["Stanford", "Alzheimer's"]
    memory.retrieval.passage_vectors().asked = 1  # past the first query, which the server scores
    held = {mode: memory.query(question, mode=mode, entities=entities, top_k=5, recognition_filter=False) for mode in ("entity-ppr", "hipporag2")}
    assert not memory.retrieval.passage_vectors().server_side and memory.retrieval.passage_vectors().version is not None
    monkeypatch.setenv("HIPPO_PASSAGE_VECTORS_MB", "0")
    on_server = memory_factory(namespace=memory.namespace)
    on_server.retrieval.passage_vectors().asked = 1
    for mode, result in held.items():
        theirs = on_server.query(question, mode=mode, entities=entities, top_k=5, recognition_filter=False)
        assert on_server.retrieval.passage_vectors().server_side
        assert [p.id for p in theirs.passages] == [p.id for p in result.passages]
        assert [p.score for p in theirs.passages] == pytest.approx([p.score for p in result.passages], rel=1e-5)
        assert [s.node for s in theirs.passage_seeds] == [s.node for s in result.passage_seeds] != []


def test_no_entity_link_falls_back_to_dense_and_says_so(memory_factory):
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    result = memory.query("robotics at Stanford", mode="hipporag1", entities=[], top_k=3)
    assert result.fell_back and result.fallback_reason == "no query entities"
    assert result.mode == "hipporag1" and len(result.passages) == 3
    assert result.passages[0].id == "ortiz"


def test_bm25_escapes_lucene_and_cypher_looking_text(memory_factory):
    memory = memory_factory()
    memory.index(PATH_CORPUS + [P("odd", 'Weird text: (a OR b) AND "c" ~ d* } MATCH (n) DETACH DELETE n //', ("weird", "is", "text"))])
    for query in ['(a OR b) AND "c"', "MATCH (n) DETACH DELETE n", "robotics] OR title:*", "\\", "AND", "~*?"]:
        result = memory.query(query, mode="bm25", top_k=3)
        assert isinstance(result.passages, list)
    assert memory.query("robotics", mode="bm25").passages[0].id == "ortiz"
    assert memory.query("MATCH (n) DETACH DELETE n", mode="bm25").passages[0].id == "odd"
    assert memory.stats()["passages"] == len(PATH_CORPUS) + 1


def test_cli_index_query_stats_json(tmp_path, connection, monkeypatch):
    ns = f"cli-{uuid.uuid4().hex[:8]}"
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(PATH_CORPUS))
    env = {
        "HIPPO_NEO4J_URI": connection.uri,
        "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
        "HIPPO_NAMESPACE": ns,
    }
    runner = CliRunner()
    try:
        out = runner.invoke(cli, ["index", str(corpus), "--json"], env=env, catch_exceptions=False)
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout)["indexed"] == len(PATH_CORPUS)
        out = runner.invoke(
            cli, ["query", "Which Stanford professor works on Alzheimer's?", "--entities", "Stanford|Alzheimer's", "--mode", "hipporag1", "--json", "--top-k", "2"],
            env=env, catch_exceptions=False,
        )
        data = json.loads(out.stdout)
        assert {p["id"] for p in data["passages"]} == {"lane-alz", "lane-stanford"}
        assert connection.password.get_secret_value() not in out.output
        out = runner.invoke(cli, ["stats", "--json"], env=env, catch_exceptions=False)
        stats = json.loads(out.stdout)
        assert stats["passages"] == len(PATH_CORPUS) and stats["relation_edges"] > 0 and stats["mention_edges"] > 0
        text = runner.invoke(cli, ["query", "robotics", "--mode", "bm25"], env=env, catch_exceptions=False).output
        assert "ortiz" in text
        # the default mode says what placed each passage it found, as its `signals` in --json do
        args = ["query", "Which Stanford professor works on Alzheimer's?", "--entities", "Stanford|Alzheimer's", "--top-k", "3"]
        text = runner.invoke(cli, args, env=env, catch_exceptions=False).output
        found = json.loads(runner.invoke(cli, [*args, "--json"], env=env, catch_exceptions=False).stdout)["passages"]
        lines = [line.strip() for line in text.splitlines() if line.strip().startswith("placed by")]
        assert len(lines) == sum(not p["filled"] for p in found) > 0
        for line, p in zip(lines, found):
            assert line.startswith({"agreement": "placed by agreement", "hop": "placed by the second hop",
                                    "walk": "placed by the walk"}[p["signals"]["placed"]]), (line, p["signals"])
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)
    after = json.loads(runner.invoke(cli, ["stats", "--json"], env=env).output)
    assert after["passages"] == 0 and after["phrases"] == 0


def test_demo_indexes_with_the_offline_extractor_and_answers(connection, tmp_path, monkeypatch):
    """`make demo`'s command: no LLM configured, so the offline extractor builds the graph."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    ns = f"demo-{uuid.uuid4().hex[:8]}"
    env = {
        "HIPPO_NEO4J_URI": connection.uri,
        "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
        "HIPPO_EXTRACTION_CACHE": str(tmp_path / "cache.sqlite"),
    }
    runner = CliRunner()
    try:
        out = runner.invoke(cli, ["demo", "--namespace", ns, "--json"], env=env, catch_exceptions=False)
        assert out.exit_code == 0, out.output
        data = json.loads(out.stdout)
        assert data["index"]["indexed"] == 10 and data["index"]["triples"] > 15
        first = data["questions"][0]
        top2 = {p["id"] for p in first["hipporag1"]["passages"][:2]}
        assert top2 == set(first["gold"])  # the multi-hop answer: both of Maria Okafor's passages
        assert {p["id"] for p in first["dense"]["passages"][:2]} != set(first["gold"])
        assert len(first["hipporag2"]["passages"]) == 3 and len(first["hipporag2"]["facts"]) == 5
        again = json.loads(runner.invoke(cli, ["demo", "--namespace", ns, "--json"], env=env).stdout)
        assert again["index"]["unchanged"] == 10 and again["index"]["indexed"] == 0
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)


def test_connection_options_work_before_and_after_the_command(tmp_path, connection):
    """`hippo query "..." --namespace demo` and `hippo --namespace demo query "..."` read the same namespace; the
    option after the command overrides the environment and the option before it."""
    ns, other = f"cli-{uuid.uuid4().hex[:8]}", f"cli-{uuid.uuid4().hex[:8]}"
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(PATH_CORPUS))
    env = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
           "HIPPO_NAMESPACE": other}
    runner = CliRunner()
    try:
        out = runner.invoke(cli, ["index", str(corpus), "--namespace", ns, "--json"], env=env, catch_exceptions=False)
        assert out.exit_code == 0, out.output
        after = runner.invoke(cli, ["query", "robotics", "--mode", "bm25", "--namespace", ns, "--json"], env=env)
        before = runner.invoke(cli, ["--namespace", ns, "query", "robotics", "--mode", "bm25", "--json"], env=env)
        both = runner.invoke(cli, ["--namespace", other, "query", "robotics", "--mode", "bm25", "--namespace", ns,
                                   "--json"], env=env)
        assert after.exit_code == before.exit_code == both.exit_code == 0, after.output + before.output + both.output
        ids = [[p["id"] for p in json.loads(o.stdout)["passages"]] for o in (after, before, both)]
        assert ids[0] == ids[1] == ids[2] and "ortiz" in ids[0]
        assert json.loads(runner.invoke(cli, ["stats", "--json"], env=env).stdout)["passages"] == 0  # env's namespace
        assert json.loads(runner.invoke(cli, ["stats", "--namespace", ns, "--json"], env=env).stdout)["passages"] == len(PATH_CORPUS)
        wrong = runner.invoke(cli, ["stats", "--namespace", ns, "--uri", "bolt://127.0.0.1:1"], env=env)
        assert wrong.exit_code == 1 and "Cannot reach Neo4j at bolt://127.0.0.1:1" in wrong.output
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)


def test_every_mode_is_a_registered_preset_reachable_by_name(memory_factory):
    from hippo_neo4j.errors import ConfigError
    from hippo_neo4j.retrieve import MODES, Retriever

    memory = memory_factory()
    memory.index(PATH_CORPUS)
    for name in MODES:
        preset = MODES[name]
        assert issubclass(preset.retriever, Retriever)
        result = memory.query("Which Stanford professor works on Alzheimer's?", mode=name, top_k=3,
                              entities=["Stanford", "Alzheimer's"])
        assert result.mode == preset.retriever.name and len(result.passages) == 3
    assert MODES["hybrid-0.7"].config(memory.config).hybrid_lambda == 0.7 and memory.config.hybrid_lambda == 0.5
    with pytest.raises(ConfigError, match="Unknown mode 'nope'; choose one of entity-ppr, hipporag2, hipporag1"):
        memory.query("x", mode="nope")


def test_tied_passages_come_back_by_id_whatever_order_they_were_indexed_in(memory_factory):
    """Passages of equal mass (three professors who each work on Alzheimer's disease and nothing else) rank by
    id, and a namespace that indexed the same corpus in the opposite order (other node ids, another projection
    order) returns the same ranking and explanations."""
    def ranking(corpus):
        memory = memory_factory()
        memory.index(corpus)
        result = memory.query("Who works on Alzheimer's?", mode="hipporag1", entities=["Alzheimer's"], top_k=6)
        assert not result.fell_back
        return [(p.id, p.score, [c.phrase for c in p.contributors]) for p in result.passages if not p.filled]

    forward, backward = ranking(PATH_CORPUS), ranking(PATH_CORPUS[::-1])
    scores = [s for _, s, _ in forward]
    tied = [pid for pid, s, _ in forward if scores.count(s) > 1]
    assert {"kim", "berg", "novak"} <= set(tied)  # the three score alike: a tie to break
    for i in range(len(forward) - 1):
        if forward[i][1] == forward[i + 1][1]:
            assert forward[i][0] < forward[i + 1][0]
    assert [(i, c) for i, _, c in backward] == [(i, c) for i, _, c in forward]
    assert [s for _, s, _ in backward] == pytest.approx(scores, rel=1e-9)


def test_a_server_error_names_the_statement_it_came_from(memory_factory):
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    with pytest.raises(Exception) as raised:
        memory.store.run("dense_passages", k="ten", embedding=[0.0, 1.0], topK=3)
    assert "Type mismatch" in str(raised.value)
    assert getattr(raised.value, "__notes__", []) == ["in statement cypher/dense_passages.cypher"]
