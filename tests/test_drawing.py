"""The drawing statement (``hippo query --cypher``): run through the driver, it is read-only and returns exactly
the seeds, phrases and passages it claims, whatever the ids, phrases and namespace hold."""

from __future__ import annotations

import json
import uuid

import pytest
from click.testing import CliRunner

from hippo_neo4j.cli import cli
from hippo_neo4j.drawing import cypher_string, drawing_cypher
from hippo_neo4j.models import Contributor, RetrievalResult, RetrievedPassage, Seed

from .graph_dump import rows
from .serving import entities_of, hippo_env, indexed_namespace

HOSTILE = [
    "o'brien", 'say "hi"', "back\\slash", "trailing\\", "\\'", "`tick` `", "*/ /* //", "new\nline", "cr\rtab\t",
    "semi; MATCH (n) DETACH DELETE n //", "' }) MATCH (n) DETACH DELETE n //", "\\u0027) RETURN 1 //",
    "\\\\u0027", "$ns $ids {x}", "Zoë 東京 Ελλάδα", "emoji 😀 and ﬁ", "sep\u2028line\u2029para\u0085nel",
    "nul\x00bell\x07esc\x1b", "zero\u200bwidth \ufeffbom", "\u202eright-to-left", "",
]


def test_string_literals_round_trip(driver):
    for value in HOSTILE:
        literal = cypher_string(value)
        assert ";" not in literal and "`" not in literal and "\n" not in literal
        got = driver.execute_query(f"RETURN {literal} AS v").records[0]["v"]
        assert got == value, (value, literal)


@pytest.fixture
def hostile_graph(driver):
    """Phrases and passages with hostile texts and ids, in a namespace with a hostile name, made directly."""
    ns = f"draw'\\`*/\n-{uuid.uuid4().hex[:6]}"
    phrases = [v for v in HOSTILE if v]
    ids = [f"id-{v}" for v in HOSTILE]
    driver.execute_query(
        "UNWIND $phrases AS t CREATE (:Phrase {ns: $ns, text: t}) "
        "WITH count(*) AS _ UNWIND $ids AS i CREATE (:Passage {ns: $ns, id: i, title: i, text: 'x'})",
        ns=ns, phrases=phrases, ids=ids,
    )
    # a RELATION between the first two phrases, a MENTIONED_IN from the first into the first passage
    driver.execute_query(
        "MATCH (a:Phrase {ns: $ns, text: $a}), (b:Phrase {ns: $ns, text: $b}), (p:Passage {ns: $ns, id: $id}) "
        "CREATE (a)-[:RELATION {weight: 1.0}]->(b), (a)-[:MENTIONED_IN {count: 1}]->(p)",
        ns=ns, a=phrases[0], b=phrases[1], id=ids[0],
    )
    yield ns, phrases, ids
    driver.execute_query("MATCH (n {ns: $ns}) DETACH DELETE n", ns=ns)


def _count(driver) -> tuple[int, int]:
    rec = driver.execute_query("MATCH (n) WITH count(n) AS n MATCH ()-[r]->() RETURN n, count(r) AS r").records[0]
    return rec["n"], rec["r"]


def test_hostile_values_draw_exactly_what_they_claim(driver, hostile_graph):
    ns, phrases, ids = hostile_graph
    seeds, tops = phrases[:6], phrases[6:]
    result = RetrievalResult(
        query="what's `this`?\n*/ ; MATCH (n) DETACH DELETE n", mode="hipporag1",
        phrase_seeds=[Seed(node=s, weight=1 / len(seeds)) for s in seeds],
        top_phrases=[{"phrase": p, "mass": 0.1} for p in tops],
        passages=[RetrievedPassage(id=i, text="x", score=1.0, contributors=[Contributor(phrase=seeds[0], contribution=1)])
                  for i in ids],
    )
    statement = drawing_cypher(result, ns, top_phrases=100)
    assert ";" not in statement and "\n" not in statement.split("\n", 1)[0]
    before = _count(driver)
    records, summary, _ = driver.execute_query(statement)
    assert summary.query_type == "r"  # read-only, as Neo4j itself classifies it
    assert _count(driver) == before
    assert len(records) == 1
    rec = records[0]
    assert rec["question"] == result.query
    assert sorted(n["text"] for n in rec["seeds"]) == sorted(seeds)
    assert sorted(n["text"] for n in rec["phrases"]) == sorted(phrases)
    assert [p["id"] for p in rec["passages"]] == ids  # in rank order
    assert all(p["ns"] == ns for p in rec["passages"])
    assert [(r.start_node["text"], r.end_node["text"]) for r in rec["edges"]] == [(phrases[0], phrases[1])]
    assert [(m.start_node["text"], m.end_node["id"]) for m in rec["mentions"]] == [(phrases[0], ids[0])]


def test_the_statement_draws_a_real_query(driver, connection, tmp_path):
    """``hippo query --cypher`` on an indexed namespace: the statement's seeds are the result's, its passages
    the result's top passages, and the edges join drawn phrases only."""
    gen = indexed_namespace(connection, driver, "draw")
    ns, docs = next(gen)
    try:
        doc = docs[5]
        env = hippo_env(connection, ns)
        for mode in ("hipporag1", "hipporag2", "entity-ppr"):
            args = ["query", doc.text[:200], "--mode", mode, "--top-k", "5", "--entities", "|".join(entities_of(doc)),
                    "--cypher", "--json"]
            out = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
            assert out.exit_code == 0, out.output
            data = json.loads(out.output)
            result = RetrievalResult.model_validate({k: v for k, v in data.items() if k != "cypher"})
            plain = CliRunner().invoke(cli, args[:-1], env=env, catch_exceptions=False).output
            assert plain.strip() == data["cypher"].strip()
            records, summary, _ = driver.execute_query(data["cypher"])
            assert summary.query_type == "r"
            rec = records[0]
            assert sorted(n["text"] for n in rec["seeds"]) == sorted({s for s, _ in result.seeds}), mode
            assert rec["seeds"], mode
            assert [p["id"] for p in rec["passages"]] == [p.id for p in result.passages]
            drawn = {n.element_id for n in rec["phrases"]}
            assert all(r.start_node.element_id in drawn and r.end_node.element_id in drawn for r in rec["edges"])
            passages = {p.element_id for p in rec["passages"]}
            assert all(m.end_node.element_id in passages for m in rec["mentions"])
            # contributors of the top passage that were drawn are joined to it by MENTIONED_IN
            top = result.passages[0]
            drawn_texts = {n["text"] for n in rec["phrases"]}
            joined = {m.start_node["text"] for m in rec["mentions"] if m.end_node["id"] == top.id}
            assert {c.phrase for c in top.contributors if c.phrase in drawn_texts} <= joined
    finally:
        next(gen, None)
    assert not rows(driver, "MATCH (p:Passage {ns: $ns}) RETURN p.id AS id LIMIT 1", ns=ns)
