"""Metadata and filters: what a passage's metadata may hold, that updating it alone re-indexes nothing, that every
mode returns only the passages a filter leaves (and says how many), that results without a filter do not depend
on metadata, and the filter through the CLI."""

from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest
from click.testing import CliRunner

from hippo_neo4j import limits
from hippo_neo4j.cli import cli
from hippo_neo4j.errors import ConfigError
from hippo_neo4j.graph.server import Server
from hippo_neo4j.metadata import Filters
from hippo_neo4j.retrieve import MODES

from .serving import entities_of, musique_passages

N = 24  # musique passages m0..m23, with their recorded extraction


def tagged(i: int) -> dict:
    """Passage m<i>'s metadata: 4 users, a year and a date each, tags, a flag."""
    return {"user": f"u{i % 4}", "year": 2000 + i, "created_at": (dt.date(2026, 1, 1) + dt.timedelta(days=i)).isoformat(),
            "tag": ["even" if i % 2 == 0 else "odd"] + (["third"] if i % 3 == 0 else []), "pinned": i % 5 == 0}


def docs_with_metadata():
    docs = musique_passages(N)
    for i, doc in enumerate(docs):
        doc.metadata = tagged(i)
    return docs


@pytest.fixture(scope="module")
def namespaces(connection, driver):
    """The same passages three times: with metadata, without, and only user u1's (with metadata)."""
    from hippo_neo4j import HippoRAG

    from .conftest import NoExtractor

    key = uuid.uuid4().hex[:6]
    made = {name: HippoRAG(connection, namespace=f"t-filters-{name}-{key}", driver=driver, extractor=NoExtractor())
            for name in ("tagged", "plain", "u1")}
    docs = docs_with_metadata()
    made["tagged"].index(docs)
    made["plain"].index(musique_passages(N))
    made["u1"].index([d for d in docs if d.metadata["user"] == "u1"])
    yield made, docs
    for memory in made.values():
        memory.drop_namespace()


def passing(docs, test) -> set[str]:
    return {d.id for d in docs if test(d.metadata)}


FILTERS = [  # a filter, and which metadata passes it
    ({"user": "u1"}, lambda m: m["user"] == "u1"),
    ({"user": {"in": ["u0", "u3"]}}, lambda m: m["user"] in ("u0", "u3")),
    ({"tag": "third"}, lambda m: "third" in m["tag"]),
    ({"tag": {"in": ["third", "nothing"]}, "pinned": True}, lambda m: "third" in m["tag"] and m["pinned"]),
    ({"year": {">": 2005, "<=": 2011}}, lambda m: 2005 < m["year"] <= 2011),
    ({"created_at": {">=": "2026-01-10"}, "user": "u2"}, lambda m: m["created_at"] >= "2026-01-10" and m["user"] == "u2"),
    ({"created_at": {"<": dt.date(2026, 1, 5)}}, lambda m: m["created_at"] < "2026-01-05"),
    ({"year": "2003"}, lambda m: False),  # a string never equals a number
    ({"missing": 1}, lambda m: False),
]


@pytest.mark.parametrize("mode", ["dense", "bm25", "hipporag1", "hipporag2", "entity-ppr", "hybrid"])
def test_every_mode_returns_only_the_passages_a_filter_leaves_and_says_how_many(namespaces, mode):
    made, docs = namespaces
    memory = made["tagged"]
    doc = docs[5]
    for filters, test in FILTERS:
        allowed = passing(docs, test)
        result = memory.query(doc.text[:200], mode=mode, top_k=5, entities=entities_of(doc), filters=filters,
                              fresh=True, recognition_filter=False)
        assert result.filtered_passages == len(allowed), filters
        found = {p.id for p in result.passages}
        assert found <= allowed, (filters, found - allowed)
        assert len(found) == min(5, len(allowed)), (filters, found)  # topped up from dense within the filter
        for p in result.passages:
            assert p.metadata == next(d.metadata for d in docs if d.id == p.id)
        if not allowed:
            assert result.warning == "no passage of the namespace passes the filters"


def ranked(result) -> list[tuple[float, str]]:
    return sorted((-round(p.score, 6), p.id) for p in result.passages)


def test_without_a_filter_every_mode_ranks_as_a_namespace_without_metadata(namespaces):
    made, docs = namespaces
    for name in ("tagged", "plain"):  # a client's first graph query scores the passages' cosines on the server
        made[name].query(docs[0].text, mode="entity-ppr", entities=entities_of(docs[0]), fresh=True)
    for mode in MODES.names():
        for doc in docs[:6]:
            args = dict(mode=mode, top_k=8, entities=entities_of(doc), fresh=True, recognition_filter=False)
            tagged, plain = made["tagged"].query(doc.text[:200], **args), made["plain"].query(doc.text[:200], **args)
            # passages of equal score come in either order (the statements sort by score alone)
            assert ranked(tagged) == ranked(plain), (mode, doc.id)
            # GDS sums PPR mass in parallel: two walks agree to about 1e-7, not to the last bit
            assert [p.score for p in tagged.passages] == pytest.approx([p.score for p in plain.passages], rel=1e-6)
            assert tagged.filtered_passages is None and all(p.metadata for p in tagged.passages)


@pytest.mark.parametrize("mode", ["dense", "bm25"])
def test_a_search_within_a_users_filter_equals_a_namespace_of_that_user_alone(namespaces, mode):
    """dense: exact cosines over the filter's passages; bm25: those passages scored as a full-text index holding
    them alone scores them (its term statistics, not the shared namespace's, which give other scores)."""
    made, docs = namespaces
    other_statistics = 0
    for doc in docs[:8]:
        shared = made["tagged"].query(doc.text[:200], mode=mode, top_k=10, filters={"user": "u1"})
        alone = made["u1"].query(doc.text[:200], mode=mode, top_k=10)
        assert shared.passages and [p.id for p in shared.passages] == [p.id for p in alone.passages], doc.id
        assert [p.score for p in shared.passages] == pytest.approx([p.score for p in alone.passages], rel=1e-6, abs=1e-6)
        everyone = {p.id: p.score for p in made["tagged"].query(doc.text[:200], mode=mode, top_k=N).passages}
        other_statistics += any(abs(everyone[p.id] - p.score) > 1e-3 for p in alone.passages)
    assert other_statistics == (8 if mode == "bm25" else 0)


@pytest.mark.parametrize("mode", ["hipporag1", "hipporag2", "entity-ppr", "hybrid"])
def test_a_graph_mode_within_a_users_filter_ranks_as_a_namespace_of_that_user_alone(namespaces, driver, connection,
                                                                                   mode):
    """A filtered walk runs on the graph the filter's passages induce (their phrases, the edges among them,
    relations weighed by those passages' extractions) with |P_i| counted among them: the rankings and scores
    of a namespace holding those passages alone, for questions about every user's passages."""
    made, docs = namespaces
    memory = made["tagged"]
    for doc in docs[:8]:
        args = dict(mode=mode, top_k=6, entities=entities_of(doc), fresh=True, recognition_filter=False)
        shared = memory.query(doc.text[:200], filters={"user": "u1"}, **args)
        alone = made["u1"].query(doc.text[:200], **args)
        assert not shared.fell_back and [p.id for p in shared.passages] == [p.id for p in alone.passages], (mode, doc.id)
        assert [p.score for p in shared.passages] == pytest.approx([p.score for p in alone.passages], rel=1e-5, abs=1e-7)
    names = [r["graphName"] for r in driver.execute_query(
        "CALL gds.graph.list() YIELD graphName WHERE graphName STARTS WITH $prefix RETURN graphName",
        prefix=f"hippo:{memory.namespace}:v", database_=connection.database).records]
    assert any("@" in name for name in names), names  # the filter's own projection, in the catalogue


def test_a_large_filter_searches_the_vector_index_and_a_small_one_exactly(namespaces, monkeypatch):
    from hippo_neo4j.graph import scope

    made, docs = namespaces
    memory = made["tagged"]
    asked = []
    run = memory.store.run
    monkeypatch.setattr(memory.store, "run", lambda name, **p: (asked.append(name), run(name, **p))[1])
    every = {"tag": {"in": ["even", "odd"]}}
    exact = memory.query(docs[3].text, mode="dense", top_k=3, filters=every)
    lexical = memory.query(docs[3].text, mode="bm25", top_k=3, filters=every)
    assert "bm25_matching" not in asked  # few pass: read with the filter and scored client-side
    monkeypatch.setattr(scope, "EXACT_WITHIN", 4)
    through_index = memory.query(docs[3].text, mode="dense", top_k=3, filters=every)
    lexical_index = memory.query(docs[3].text, mode="bm25", top_k=3, filters=every)
    assert "dense_matching" in asked and "dense_passages_within" in asked and "bm25_matching" in asked
    assert [p.id for p in exact.passages] == [p.id for p in through_index.passages]
    assert exact.passages[0].id == docs[3].id
    # every passage passes: the namespace's own statistics either way
    assert [p.id for p in lexical.passages] == [p.id for p in lexical_index.passages]
    assert [p.score for p in lexical.passages] == pytest.approx([p.score for p in lexical_index.passages], rel=1e-6)


@pytest.mark.parametrize("exact_within", [500, 4])
def test_hipporag2_links_a_filter_to_the_facts_of_its_passages_alone(namespaces, monkeypatch, exact_within):
    """The facts a filtered hipporag2 query seeds from are those its passages asserted, the same as in a namespace
    of those passages alone; exactly over them when few pass, else through the index with a wider beam."""
    from hippo_neo4j.graph import scope

    monkeypatch.setattr(scope, "EXACT_WITHIN", exact_within)
    made, docs = namespaces
    others = [d for d in docs if d.metadata["user"] != "u1"]
    unfiltered_from_others = 0
    for doc in others[:6]:  # questions about other users' passages: their own facts are the nearest
        shared = made["tagged"].query(doc.text[:200], mode="hipporag2", top_k=5, filters={"user": "u1"}, recognition_filter=False)
        alone = made["u1"].query(doc.text[:200], mode="hipporag2", top_k=5, recognition_filter=False)
        everyone = made["tagged"].query(doc.text[:200], mode="hipporag2", top_k=5, recognition_filter=False)
        assert shared.facts and [f.triple for f in shared.facts] == [f.triple for f in alone.facts]
        assert [f.score for f in shared.facts] == pytest.approx([f.score for f in alone.facts], abs=1e-6)
        unfiltered_from_others += [f.triple for f in everyone.facts] != [f.triple for f in alone.facts]
    assert unfiltered_from_others  # without the filter, other users' facts are among the nearest


@pytest.mark.parametrize("exact_within", [500, 4])
def test_a_filtered_query_links_to_and_names_only_the_phrases_of_its_passages(namespaces, driver, connection,
                                                                              monkeypatch, exact_within):
    """Query entities link to the nearest phrase that the filter's passages mention, and the explanation's top
    phrases are theirs: another user's names neither seed the walk nor show in the result."""
    from hippo_neo4j.graph import scope

    monkeypatch.setattr(scope, "EXACT_WITHIN", exact_within)
    made, docs = namespaces
    memory = made["tagged"]
    mine = [d.id for d in docs if d.metadata["user"] == "u1"]
    records, _, _ = driver.execute_query(
        "MATCH (ph:Phrase {ns: $ns})-[:MENTIONED_IN]->(p:Passage {ns: $ns}) WHERE p.id IN $ids "
        "RETURN collect(DISTINCT ph.text) AS texts", ns=memory.namespace, ids=mine, database_=connection.database)
    phrases = set(records[0]["texts"])
    elsewhere = 0
    for doc in [d for d in docs if d.metadata["user"] != "u1"][:5]:  # their entities name other users' phrases
        for mode in ("hipporag1", "entity-ppr"):
            shared = memory.query(doc.text[:200], mode=mode, top_k=5, entities=entities_of(doc), filters={"user": "u1"},
                                  fresh=True)
            assert shared.linked and {link.phrase for link in shared.linked} <= phrases, mode
            assert shared.top_phrases and {t["phrase"] for t in shared.top_phrases} <= phrases, mode
            # the same query without a filter links some entity to a phrase no passage of u1 mentions
            everyone = memory.query(doc.text[:200], mode=mode, top_k=5, entities=entities_of(doc), fresh=True)
            elsewhere += not {link.phrase for link in everyone.linked} <= phrases
            for link in shared.linked:  # the nearest of u1's phrases: none of them is nearer
                nearer = [l for l in everyone.linked if l.entity == link.entity and l.phrase in phrases]
                assert all(l.similarity <= link.similarity + 1e-6 for l in nearer)
    assert elsewhere

def test_a_filters_projection_outlives_other_passages_writes_and_the_oldest_goes_beyond_the_budget(
        memory_factory, driver, connection, monkeypatch):
    """A filter's graph is projected once and walked until its own passages change (or the namespace is
    re-embedded): another user's write leaves it as it is, and its rankings equal a namespace of its passages
    alone after every write; beyond the process's budget the least recently used projection is dropped."""
    memory = memory_factory()
    alone = memory_factory()
    docs = docs_with_metadata()
    memory.index(docs[:12])

    def filter_graphs() -> set[str]:
        return {r["graphName"] for r in driver.execute_query(
            "CALL gds.graph.list() YIELD graphName WHERE graphName STARTS WITH $prefix AND graphName CONTAINS '@' "
            "RETURN graphName", prefix=f"hippo:{memory.namespace}:v", database_=connection.database).records}

    def ask(user: str, where=None, filtered=None):
        doc = next(d for d in docs if d.metadata["user"] == user)
        args = dict(mode="hipporag1", top_k=3, entities=entities_of(doc))
        if where is not None:  # a namespace of the user's passages alone
            return where.query(doc.text[:200], **args)
        return (filtered or memory).query(doc.text[:200], filters={"user": user}, **args)

    first = ask("u1")
    u1 = filter_graphs()
    assert len(u1) == 1 and first.passages
    assert ask("u1").passages == first.passages and filter_graphs() == u1  # reused, not projected again
    # another user's write: u1's graph is the same, so is its projection, walked as the current version's
    memory.index([docs[14]])  # user u2
    again = ask("u1")
    assert again.graph_version > first.graph_version and again.writes_behind == 0 and filter_graphs() == u1
    assert [p.id for p in again.passages] == [p.id for p in first.passages]
    # a write of u1's own: its graph is projected anew, and ranks as a namespace of u1's passages alone
    memory.index([docs[13]])  # user u1
    alone.index([d for d in docs[:14] if d.metadata["user"] == "u1"])
    mine = ask("u1")
    assert len(filter_graphs() - u1) == 1
    assert [p.id for p in mine.passages] == [p.id for p in ask("u1", alone).passages]
    # another client's projection, left behind when it ends (a CLI call, a stopped worker)
    from hippo_neo4j import HippoRAG
    from hippo_neo4j.db import connect

    with connect(connection) as other_driver:
        other = HippoRAG(connection, namespace=memory.namespace, driver=other_driver, extractor=memory.extractor)
        ask("u2", filtered=other)
    left = filter_graphs() - u1
    assert left
    for name in left:  # as another process's, whose sizes this one has not seen
        memory.server.projections._sizes.pop(name, None)
    # a budget that holds one projection: the least recently used goes, this client's and the ended one's alike
    monkeypatch.setattr(memory.server.projections, "_budget", 1)
    ask("u3")
    assert len(filter_graphs()) == 1 and not filter_graphs() & (u1 | left)
    # a re-embedding rebuilds the synonym edges: every filter's graph is projected anew
    u3 = filter_graphs()
    memory.reembed(memory.encoder)
    ask("u3")
    assert len(filter_graphs()) == 1 and filter_graphs() != u3


def test_metadata_alone_is_written_without_extracting_or_embedding_again(memory_factory, driver, connection):
    memory = memory_factory()
    docs = musique_passages(3)
    docs[0].metadata = {"user": "u1", "tag": ["a"], "old": 1}
    memory.index(docs)
    version = Server.of(driver, connection.database).projections.namespace_version(memory.namespace)
    embedded = []
    encode = memory.encoder.encode
    memory.indexer.encoder = type("Counting", (), {"encode": lambda self, t: (embedded.append(t), encode(t))[1],
                                                   "dimension": memory.encoder.dimension})()
    # the same content, new metadata, and no extraction: the NoExtractor fails the test if it is asked
    again = [{"id": d.id, "title": d.title, "text": d.text} for d in docs]
    again[0]["metadata"] = {"user": "u2", "tag": ["a", "b"], "when": dt.datetime(2026, 3, 1, 12, tzinfo=dt.timezone.utc)}
    again[1]["metadata"] = {"user": "u3"}
    report = memory.index(again)
    assert (report.indexed, report.updated, report.metadata_updated, report.unchanged) == (0, 0, 2, 1)
    assert not embedded
    assert Server.of(driver, connection.database).projections.namespace_version(memory.namespace) == version  # no walk goes stale
    top = memory.query(docs[0].text, mode="dense", top_k=1).passages[0]
    assert top.metadata == {"user": "u2", "tag": ["a", "b"], "when": "2026-03-01T12:00:00+00:00"}  # "old" is gone
    assert memory.index(again).unchanged == 3
    assert {p.id for p in memory.query(docs[1].text, mode="bm25", top_k=3, filters={"user": "u3"}).passages} == {docs[1].id}
    # new content with metadata: indexed again, with its metadata
    changed = dict(again[2], text=again[2]["text"] + " Indeed.", metadata={"user": "u4"}, extraction=docs[2].extraction)
    memory.indexer.encoder = memory.encoder
    assert memory.index([changed]).updated == 1
    assert memory.query(changed["text"], mode="dense", top_k=1, filters={"user": "u4"}).passages[0].id == changed["id"]
    assert memory.delete([changed["id"]]).deleted == 1
    assert memory.query(changed["text"], mode="dense", top_k=1, filters={"user": "u4"}).filtered_passages == 0
    facets = "MATCH (f:HippoFacet {ns: $ns}) RETURN f.key AS key, f.value AS value ORDER BY key, value"
    left = [tuple(r) for r in driver.execute_query(facets, ns=memory.namespace).records]
    assert left == [("meta_tag", "a"), ("meta_tag", "b"), ("meta_user", "u2"), ("meta_user", "u3"),
                    ("meta_when", "2026-03-01T12:00:00+00:00")]  # u1, old, u4: described no passage any more
    memory.delete([d.id for d in docs])
    assert not driver.execute_query(facets, ns=memory.namespace).records


@pytest.mark.parametrize("metadata, field", [
    ({"user": {"id": 1}}, "'user'"), ({"tags": [1, 2]}, "'tags'"), ({"bad key": 1}, "'bad key'"),
    ({"user": None}, "'user'"), ({"score": float("inf")}, "'score'"),
])
def test_metadata_that_is_not_scalar_leaves_its_passage_out_naming_the_field(memory_factory, metadata, field):
    memory = memory_factory()
    report = memory.index([{"id": "x", "text": "A passage.", "metadata": metadata}])
    assert [s.item for s in report.skipped] == ["x"] and field in report.skipped[0].reason
    assert memory.stats()["passages"] == 0


@pytest.mark.parametrize("filters, message", [
    ({"user": {"like": "u%"}}, "filter 'user': unknown operator 'like'"),
    ({"user": ["u1", "u2"]}, "filter 'user' =: .* \\{'in': \\[...\\]\\}"),
    ({"user": {"in": "u1"}}, "filter 'user' in: give a non-empty list"),
    ({"year": {">": {"n": 1}}}, "filter 'year' >:"),
    ({"a.b": 1}, "filter key 'a.b' is not an identifier"),
    ({"user": {}}, "filter 'user': no condition"),
])
def test_a_filter_with_an_unknown_operator_or_a_value_that_is_not_scalar_names_the_field(filters, message):
    with pytest.raises(ConfigError, match=message):
        Filters.parse(filters)


def test_filters_are_parameters_of_one_statement():
    """No key or value reaches the statement's text: it reads them from $filters."""
    from hippo_neo4j.db import cypher

    parsed = Filters.parse({"user": "u1' OR 1=1 //", "year": {">=": 2020}, "tag": {"in": ["a", "b"]}})
    assert parsed.parameters() == [{"key": "meta_user", "op": "=", "value": "u1' OR 1=1 //"},
                                   {"key": "meta_year", "op": ">=", "value": 2020},
                                   {"key": "meta_tag", "op": "in", "value": ["a", "b"]}]
    assert "u1" not in cypher("passages_matching") and "$filters" in cypher("passages_matching")


def test_cli_filter_options_and_their_usage_errors(namespaces, connection):
    made, docs = namespaces
    env = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
           "HIPPO_NAMESPACE": made["tagged"].namespace}
    runner = CliRunner()
    args = ["query", docs[2].text[:200], "--mode", "dense", "--json", "--top-k", "10"]
    out = runner.invoke(cli, [*args, "--filter", "user in u2,u3", "--filter", "year>=2006", "--filter", "tag=even"],
                        env=env, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    allowed = passing(docs, lambda m: m["user"] in ("u2", "u3") and m["year"] >= 2006 and "even" in m["tag"])
    assert data["filtered_passages"] == len(allowed) and {p["id"] for p in data["passages"]} == allowed
    text = runner.invoke(cli, [*args[:-3], "--filter", "created_at<2026-01-03"], env=env, catch_exceptions=False).output
    assert "filters: 2 passages pass" in text and "metadata: created_at=2026-01-02, pinned=False, tag=['odd'], user=u1" in text
    # what the grammar does not define is refused with the grammar, never read as something else
    for bad, says in (("user~u1", "unknown operator '~'"), ("user<>u1", "unknown operator '<>'"),
                      ("user==u1", "unknown operator '=='"), ("user=>1", "unknown operator '=>'"),
                      ("user=", "a value is missing"), ("user>=", "a value is missing"),
                      ("tag in a,,b", "a value is missing"), ("k" * 65 + "=1", "is not an identifier")):
        out = runner.invoke(cli, [*args, "--filter", bad], env=env)
        assert out.exit_code == 2 and says in out.output and "Traceback" not in out.output, out.output
        assert "key=value, key<value" in out.output or "identifier" in out.output
    many = [x for i in range(limits.FILTER_CONDITIONS + 1) for x in ("--filter", f"k{i}=1")]
    out = runner.invoke(cli, [*args, *many], env=env)
    assert out.exit_code == 2 and f"the limit is {limits.FILTER_CONDITIONS}" in out.output
    # the empty string is still a value, quoted: a valid filter that nothing passes
    out = runner.invoke(cli, [*args, "--filter", 'user=""'], env=env)
    assert out.exit_code == 0 and json.loads(out.stdout)["filtered_passages"] == 0


def test_bm25_of_few_passages_scores_as_neo4js_full_text_index_of_them(driver, connection):
    """A filter's passages scored client-side (hippo_neo4j/retrieve/bm25.py) against a real full-text index over
    the same passages: the same terms (apostrophes, decimals, hyphens, abbreviations, Han characters, a dotted
    capital I, a word longer than Lucene's longest token), the same lengths as the norms keep them (1 to 400
    terms), titles missing or empty, a term repeated in the query."""
    import random

    from hippo_neo4j.retrieve.bm25 import lucene_bm25
    from hippo_neo4j.text import lucene_escape, lucene_terms

    rng = random.Random(7)
    words = ["the", "dog", "river", "bank", "Paris", "don't", "3.5", "U.S.A.", "foo-bar", "東京", "İstanbul",
             "x" * 300, "1,000", "naïve", "O'Neil's", "e-mail:", "(c)"]
    docs = [{"id": f"d{i}", "title": rng.choice([None, "", "The dog", "Paris river", "İstanbul foo-bar"]),
             "text": " ".join(rng.choice(words) for _ in range(rng.choice([1, 5, 23, 24, 40, 130, 400])))}
            for i in range(60)]
    label, index = f"BmCheck{uuid.uuid4().hex[:8]}", f"bm_check_{uuid.uuid4().hex[:8]}"
    run = lambda text, **p: driver.execute_query(text, **p, database_=connection.database).records  # noqa: E731
    run(f"CREATE FULLTEXT INDEX {index} FOR (p:{label}) ON EACH [p.title, p.text]")
    try:
        run(f"UNWIND $docs AS d CREATE (p:{label}) SET p = d", docs=docs)
        run("CALL db.awaitIndexes(300)")
        for query in ["dog", "the dog the river", "Paris bank don't", "U.S.A. 3.5 1,000", "東京 istanbul",
                      "foo-bar e-mail", "x" * 300, "naïve o'neil's (c)"]:
            found = {r["id"]: r["score"] for r in run(
                f"CALL db.index.fulltext.queryNodes('{index}', $q, {{limit: 100}}) YIELD node, score "
                "RETURN node.id AS id, score", q=lucene_escape(query))}
            ours = {d["id"]: s for d, s in zip(docs, lucene_bm25(lucene_terms(query), docs)) if s > 0}
            assert found and set(found) == set(ours), query
            assert [ours[k] for k in found] == pytest.approx(list(found.values()), rel=1e-6), query
    finally:
        run(f"DROP INDEX {index}")
        run(f"MATCH (p:{label}) DELETE p")
