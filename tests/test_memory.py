"""Memory that changes (issue 6): exact delete and update, namespaces, crash safety, bad input,
concurrency and secure defaults, on the real server."""

from __future__ import annotations

import ipaddress
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from hippo_neo4j import HippoConfig, HippoRAG
from hippo_neo4j.graph import projection
from hippo_neo4j.graph.server import Server
from hippo_neo4j.runtime import server
from hippo_neo4j.cli import cli
from hippo_neo4j.config import ConnectionSettings
from hippo_neo4j.corpus import load_corpus, load_openie
from hippo_neo4j.graph.indexing import valid_triple as _valid_triple
from hippo_neo4j.models import Extraction, as_passage
from hippo_neo4j.encode import Encoder, shared_encoder
from hippo_neo4j.errors import ServerError
from hippo_neo4j.text import normalize_phrase

from .conftest import stop_throwaway, test_server_settings
from .conftest import NoExtractor
from .graph_dump import assert_same_graph, rows, snapshot
from .test_core import OPENIE, P

ROOT = Path(__file__).resolve().parent.parent
HIPPO = ROOT / ".venv" / "bin" / "hippo"


# ------------------------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def musique():
    """The musique_train OpenIE docs with stable ids m0, m1, ..."""
    docs = load_openie(OPENIE)
    for i, doc in enumerate(docs):
        doc.id = f"m{i}"
    return docs


def expected_graph(passages) -> dict:
    """What the graph must hold for these passages, computed in Python from their extractions:
    MENTIONED_IN counts (triple arguments, plus one for each entity and the title), each RELATION's provenance as a multiset of (passage, predicate), and each fact's
    (normalised subject, predicate, object) sources."""
    mentions: dict[tuple[str, str], int] = {}
    relations: dict[tuple[str, str], Counter] = {}
    facts: dict[tuple[str, str, str], list[str]] = {}
    for p in passages:
        counts: Counter = Counter()
        for triple in p.extraction.triples:
            valid = _valid_triple(triple)
            if not valid:
                continue
            s, o = normalize_phrase(valid[0]), normalize_phrase(valid[2])
            if not s or not o or s == o:
                continue
            counts[s] += 1
            counts[o] += 1
            relations.setdefault((s, o), Counter())[(p.passage_id, valid[1])] += 1
            facts.setdefault((s, normalize_phrase(valid[1]), o), []).append(p.passage_id)
        # every entity the extraction reports, and the title, is a phrase the passage mentions once more
        for name in dict.fromkeys(normalize_phrase(n) for n in [p.title, *p.extraction.named_entities]):
            if name and len(name) <= 1000:
                counts[name] += 1
        for phrase, c in counts.items():
            mentions[(phrase, p.passage_id)] = c
    return {
        "passages": {p.passage_id for p in passages},
        "phrases": {ph for ph, _ in mentions},
        "mentions": mentions,
        "relations": {k: (sum(v.values()), sorted(v.elements())) for k, v in relations.items()},
        "facts": {k: sorted(v) for k, v in facts.items()},
    }


def assert_matches_expected(snap: dict, exp: dict) -> None:
    assert set(snap["passages"]) == exp["passages"]
    assert set(snap["phrases"]) == exp["phrases"]
    assert snap["mentions"] == exp["mentions"]
    got = {k: (w, prov) for k, (w, prov, _) in snap["relations"].items()}
    bad = [k for k in set(got) | set(exp["relations"]) if got.get(k) != exp["relations"].get(k)]
    assert not bad, [(k, got.get(k), exp["relations"].get(k)) for k in bad[:5]]
    facts = {(f[0], f[1], f[2]): f[4] for f in snap["facts"].values()}
    assert len(facts) == len(snap["facts"])  # one node per distinct triple
    bad = [k for k in set(facts) | set(exp["facts"]) if facts.get(k) != exp["facts"].get(k)]
    assert not bad, [(k, facts.get(k), exp["facts"].get(k)) for k in bad[:5]]
    assert all(f[5] for f in snap["facts"].values())  # every fact embedded


def consistency_problems(driver, ns: str) -> list[str]:
    """Invariants that hold after every committed transaction."""
    checks = {
        "RELATION weight != size(sources)": "MATCH (:Phrase {ns: $ns})-[r:RELATION]->() "
        "WHERE r.weight <> size(r.sources) OR size(r.sources) <> size(r.predicates) OR r.weight < 1 RETURN count(r) AS n",
        "RELATION source that is not a passage mentioning both ends": "MATCH (a:Phrase {ns: $ns})-[r:RELATION]->(b) "
        "UNWIND r.sources AS src OPTIONAL MATCH (p:Passage {ns: $ns, id: src}) "
        "WITH a, b, p WHERE p IS NULL OR NOT (a)-[:MENTIONED_IN]->(p) OR NOT (b)-[:MENTIONED_IN]->(p) "
        "RETURN count(*) AS n",
        "MENTIONED_IN to a node that is not a passage of the namespace": "MATCH (:Phrase {ns: $ns})-[m:MENTIONED_IN]->(x) "
        "WHERE NOT x:Passage OR x.ns <> $ns RETURN count(m) AS n",
        "Phrase without MENTIONED_IN": "MATCH (ph:Phrase {ns: $ns}) WHERE NOT (ph)-[:MENTIONED_IN]->() RETURN count(ph) AS n",
        "duplicate passage ids": "MATCH (p:Passage {ns: $ns}) WITH p.id AS id, count(*) AS c WHERE c > 1 RETURN count(*) AS n",
        "duplicate phrases": "MATCH (p:Phrase {ns: $ns}) WITH p.text AS t, count(*) AS c WHERE c > 1 RETURN count(*) AS n",
        "duplicate RELATION edges": "MATCH (a:Phrase {ns: $ns})-[r:RELATION]->(b) WITH a, b, count(r) AS c WHERE c > 1 "
        "RETURN count(*) AS n",
        "duplicate MENTIONED_IN edges": "MATCH (a:Phrase {ns: $ns})-[r:MENTIONED_IN]->(b) WITH a, b, count(r) AS c "
        "WHERE c > 1 RETURN count(*) AS n",
        "Fact source that is not a passage of the namespace": "MATCH (f:Fact {ns: $ns}) UNWIND f.sources AS src "
        "OPTIONAL MATCH (p:Passage {ns: $ns, id: src}) WITH p WHERE p IS NULL RETURN count(*) AS n",
        "Fact without sources": "MATCH (f:Fact {ns: $ns}) WHERE size(f.sources) = 0 RETURN count(f) AS n",
        "unsealed passages (no hash)": "MATCH (p:Passage {ns: $ns}) WHERE p.hash IS NULL RETURN count(p) AS n",
    }
    problems = [f"{name}: {n}" for name, q in checks.items() if (n := rows(driver, q, ns=ns)[0]["n"])]
    version = rows(driver, "MATCH (n:HippoNamespace {name: $ns}) RETURN n.version AS v", ns=ns)
    if len(version) != 1 or not isinstance(version[0]["v"], int) or version[0]["v"] < 1:
        problems.append(f"namespace version: {version}")
    return problems


def cli_env(connection, ns: str, **extra: str) -> dict[str, str]:
    return {
        "HIPPO_NEO4J_URI": connection.uri,
        "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
        "HIPPO_NAMESPACE": ns,
        **extra,
    }


# ------------------------------------------------------------------------------------- delete, update


def pick_overlapping(docs, base, n):
    """n docs outside ``base`` that share at least one phrase with it."""
    seen = {normalize_phrase(x) for d in base for t in d.extraction.triples if _valid_triple(t) for x in (t[0], t[2])}
    taken = {d.passage_id for d in base}
    out = []
    for d in docs:
        if d.passage_id in taken or not d.extraction.triples:
            continue
        mine = {normalize_phrase(x) for t in d.extraction.triples if _valid_triple(t) for x in (t[0], t[2])}
        if mine & seen:
            out.append(d)
        if len(out) == n:
            break
    return out


def test_add_then_delete_leaves_exactly_the_graph_of_x(memory_factory, musique):
    X = musique[:60]
    Y = pick_overlapping(musique[60:], X, 19)
    # one more Y passage repeats three X triples: X's own RELATION edges gain (and must lose) provenance
    x_triples = [t for d in X[:3] for t in d.extraction.triples[:1]]
    Y.append(as_passage({"id": "y-repeats-x", "text": "A passage restating facts.", "extraction": {"triples": x_triples}}))
    y_ids = {y.passage_id for y in Y}

    memory = memory_factory()
    memory.index(X)
    snap_x = snapshot(memory.driver, memory.namespace)
    assert_matches_expected(snap_x, expected_graph(X))
    memory.query("q", mode="hipporag1", entities=["Journal of Mathematical Physics"])  # a projection exists before the change

    report = memory.index(Y)
    assert report.indexed == 20
    snap_xy = snapshot(memory.driver, memory.namespace)
    assert_matches_expected(snap_xy, expected_graph(X + Y))
    # the test means something: Y touches X's phrases, relations (weights and provenance) and synonyms
    assert any(snap_xy["relations"][k][0] > snap_x["relations"][k][0] for k in snap_x["relations"])
    assert any((ph, y) in snap_xy["mentions"] for ph in snap_x["phrases"] for y in y_ids)
    assert len(snap_xy["synonyms"]) > len(snap_x["synonyms"])
    found_before = sum(y.passage_id in {p.id for p in memory.query(y.text, mode="bm25").passages} for y in Y)
    assert found_before >= 18, found_before

    version = memory.server.projections.namespace_version(memory.namespace)
    deleted = memory.delete(sorted(y_ids) + ["not-there"])
    assert deleted.deleted == 20 and deleted.missing == ["not-there"]
    assert memory.server.projections.namespace_version(memory.namespace) > version
    after = snapshot(memory.driver, memory.namespace)
    assert_same_graph(after, snap_x)  # same namespace: identical, synonym scores included
    assert not consistency_problems(memory.driver, memory.namespace)

    fresh = memory_factory()
    fresh.index(X)
    assert_same_graph(after, snapshot(fresh.driver, fresh.namespace), synonym_tol=5e-3)

    # nothing of Y is recalled, by any mode, even when asked with Y's own words and entities
    for n, y in enumerate(Y):
        entities = [e for e in y.extraction.named_entities if e.strip()][:5] or [t[0] for t in y.extraction.triples[:3]]
        results = [
            memory.query(y.text, mode="bm25"),
            memory.query(y.text, mode="dense"),
        ] + ([memory.query(y.text, mode="hipporag1", entities=entities)] if n % 2 == 0 or y.passage_id == "y-repeats-x" else [])
        for result in results:
            assert not {p.id for p in result.passages} & y_ids, (result.mode, y.passage_id)
            assert all(link.phrase in snap_x["phrases"] for link in result.linked)
    graph = memory.server.projections.ensure(memory.namespace)
    assert graph.nodes == len(snap_x["phrases"])  # the GDS snapshot was rebuilt without Y's phrases


def test_update_equals_indexing_the_new_version(memory_factory, musique):
    X = musique[:25]
    target = X[5]
    other = musique[700]
    new_version = as_passage({
        "id": target.passage_id, "title": other.title, "text": other.text,
        "extraction": {"named_entities": other.extraction.named_entities,
                       "triples": other.extraction.triples + target.extraction.triples[:1]},
    })
    memory = memory_factory()
    memory.index(X)
    report = memory.index([new_version])
    assert report.updated == 1 and report.indexed == 1
    again = memory.index([new_version])
    assert again.unchanged == 1 and again.indexed == 0

    direct = memory_factory()
    direct.index([new_version if d.passage_id == target.passage_id else d for d in X])
    got = snapshot(memory.driver, memory.namespace)
    assert_same_graph(got, snapshot(direct.driver, direct.namespace), synonym_tol=5e-3)
    assert got["passages"][target.passage_id]["text"] == other.text
    assert not consistency_problems(memory.driver, memory.namespace)
    assert target.passage_id not in {p.id for p in memory.query(target.text, mode="bm25", top_k=3).passages[:1]}


def test_cli_delete_and_drop_namespace(connection, driver, tmp_path):
    ns = f"cli-del-{uuid.uuid4().hex[:6]}"
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([
        P("a", "Alpha is the first letter.", ("Alpha", "is", "first letter")),
        P("b", "Beta follows alpha.", ("Beta", "follows", "Alpha")),
        P("c", "Gamma is the third letter.", ("Gamma", "is", "third letter")),
    ]))
    env = cli_env(connection, ns)
    runner = CliRunner()
    try:
        out = runner.invoke(cli, ["index", str(corpus), "--json"], env=env, catch_exceptions=False)
        assert out.exit_code == 0, out.output
        out = runner.invoke(cli, ["delete", "a", "c", "zzz", "--json"], env=env, catch_exceptions=False)
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout) == {"requested": 3, "deleted": 2, "missing": ["zzz"]}
        text = runner.invoke(cli, ["delete", "zzz"], env=env).output
        assert "deleted 0 of 1" in text and "not found: zzz" in text
        stats = json.loads(runner.invoke(cli, ["stats", "--json"], env=env).stdout)
        assert stats.pop("encoder")["name"] == shared_encoder().name  # the namespace's binding
        assert stats | {"namespace": ns} == {"namespace": ns, "passages": 1, "documents": 0, "phrases": 2,
                                             "facts": 1, "relation_edges": 1, "synonym_edges": 0, "mention_edges": 2}
        refused = runner.invoke(cli, ["drop-namespace", ns], env=env)
        assert refused.exit_code == 2 and "--yes" in refused.output
        assert json.loads(runner.invoke(cli, ["stats", "--json"], env=env).stdout)["passages"] == 1
    finally:
        out = runner.invoke(cli, ["drop-namespace", ns, "--yes", "--json"], env=env, catch_exceptions=False)
    assert out.exit_code == 0 and json.loads(out.stdout)["removed"]["passages"] == 1
    assert rows(driver, "MATCH (n) WHERE n.ns = $ns OR n.name = $ns RETURN count(n) AS n", ns=ns)[0]["n"] == 0
    assert not Server.of(driver, connection.database).projections.existing(ns)


def test_namespaces_isolate_stats_retrieval_delete_and_projections(memory_factory, driver, musique):
    base = f"iso-{uuid.uuid4().hex[:6]}"
    one = memory_factory(base)
    two = memory_factory(f"{base}:v1")  # its projections are named like a version of `base`
    one.index(musique[:20])
    docs_two = [as_passage(d.model_dump() | {"id": f"m{i}"}) for i, d in enumerate(musique[100:120])]  # same ids
    two.index(docs_two)
    s1, s2 = one.stats(), two.stats()
    assert s1["passages"] == s2["passages"] == 20 and s1 != s2
    ids_two = {d.passage_id for d in docs_two}
    texts_one = {d.text for d in musique[:20]}
    for doc in musique[100:105]:
        for mode in ("bm25", "dense"):
            assert {p.text for p in one.query(doc.text, mode=mode).passages} <= texts_one
        linked = one.query("q", mode="hipporag1", entities=doc.extraction.named_entities[:3]).linked
        assert all(link.phrase in snapshot(driver, one.namespace)["phrases"] for link in linked)
    g1 = Server.of(driver, "neo4j").projections.ensure(one.namespace)
    g2 = Server.of(driver, "neo4j").projections.ensure(two.namespace)
    assert g1.nodes == s1["phrases"] and g2.nodes == s2["phrases"]
    ones = set(Server.of(driver, "neo4j").projections.existing(one.namespace))  # and the mention graph indexing made
    assert g1.name in ones
    two.delete(["m0", "m1"])
    assert one.stats() == s1 and two.stats()["passages"] == 18
    assert {p.id for p in one.query(musique[0].text, mode="bm25").passages} >= {"m0"}
    # rebuilding two's projection after its write (by the background refresh the write started, or by this
    # call, whichever comes first) never touches one's, and vice versa
    g2b = Server.of(driver, "neo4j").projections.ensure(two.namespace)
    assert g2b.version > g2.version and g2b.name != g2.name
    assert set(Server.of(driver, "neo4j").projections.existing(one.namespace)) == ones
    Server.of(driver, "neo4j").projections.wait_for_refreshes(timeout=REFRESH_DEADLINE_S)
    twos = set(Server.of(driver, "neo4j").projections.existing(two.namespace))
    assert g2b.name in twos
    one.index([P("new", "A new passage about zebras.", ("zebra", "is", "animal"))])
    g1b = Server.of(driver, "neo4j").projections.ensure(one.namespace)
    assert g1b.version > g1.version and set(Server.of(driver, "neo4j").projections.existing(two.namespace)) == twos
    one.drop_namespace()
    assert one.stats()["passages"] == 0 and two.stats()["passages"] == 18
    assert ids_two - {"m0", "m1"} == {r["id"] for r in rows(driver, "MATCH (p:Passage {ns: $ns}) RETURN p.id AS id", ns=two.namespace)}


def test_each_namespace_searches_its_own_indexes_and_an_older_one_gets_them_when_a_client_connects(memory_factory, driver, musique):
    one = memory_factory()
    one.index(musique[:20])
    questions = [d.text for d in musique[100:103]] + [musique[0].text]
    entities = [e for d in musique[100:103] for e in d.extraction.named_entities[:2]]

    def answers(memory):
        found = [[(p.id, round(p.score, 6)) for p in memory.query(q, mode=mode).passages]
                 for q in questions for mode in ("dense", "bm25")]
        linked = memory.query("q", mode="hipporag1", entities=entities).linked
        return found, [(link.entity, link.phrase, round(link.similarity, 6)) for link in linked]

    def index_names():
        return {r["name"] for r in rows(driver, "SHOW INDEXES YIELD name RETURN name")}

    before = answers(one)
    assert before[0][-1][0][0] == musique[0].passage_id and before[1]
    assert set(one.store.indexes.values()) <= index_names()
    # another namespace of the same texts (and 30 more) would crowd the first's hits and change its BM25
    # statistics in an index they shared; in indexes of its own nothing about the first changes
    crowd = memory_factory()
    crowd.index([as_passage(d.model_dump() | {"id": f"c{i}"}) for i, d in enumerate(musique[:50])])
    assert answers(one) == before
    # what an older version left: no namespace labels, no indexes of its own
    for name in one.store.indexes.values():
        driver.execute_query(f"DROP INDEX `{name}`")
    for kind, label in one.store.labels.items():
        driver.execute_query("MATCH (n {ns: $ns}) WHERE $label IN labels(n) REMOVE n:$($label)", ns=one.namespace, label=label)
    again = memory_factory(one.namespace)  # the client connecting labels the namespace and builds its indexes
    assert answers(again) == before
    labelled = rows(driver, "MATCH (n:Phrase {ns: $ns}) RETURN count(n) AS all, count(CASE WHEN $label IN labels(n) THEN 1 END) AS labelled",
                    ns=one.namespace, label=one.store.labels["phrase"])[0]
    assert labelled["all"] == labelled["labelled"] > 0
    # an older client writing after the labelling leaves nodes without the label, which the indexes never see
    # (half the passages here): the next client to connect labels them, and the searches see them again (dense
    # as before; BM25 finds each by its own text, its scores moved: Lucene counts a re-added document's old copy
    # in its statistics until segments merge)
    driver.execute_query("MATCH (n:Passage {ns: $ns}) WITH n ORDER BY n.id SKIP 10 REMOVE n:$($label)",
                         ns=one.namespace, label=one.store.labels["passage"])
    hidden = [d for d in musique[:20] if d.passage_id not in {r["id"] for r in rows(
        driver, "MATCH (n:$($label)) RETURN n.id AS id", label=one.store.labels["passage"])}]
    assert len(hidden) == 10 and answers(one)[0][::2] != before[0][::2]
    fixed = memory_factory(one.namespace)
    assert answers(fixed)[0][::2] == before[0][::2]
    assert all(fixed.query(d.text, mode="bm25", top_k=1).passages[0].id == d.passage_id for d in hidden)
    crowd.drop_namespace()
    assert not set(crowd.store.indexes.values()) & index_names() and set(one.store.indexes.values()) <= index_names()
    # the client of a dropped namespace, and another client of it, can fill it again: its indexes come back
    twin = memory_factory(crowd.namespace)
    assert twin.query(questions[0], mode="dense").passages == [] and not set(twin.store.indexes.values()) & index_names()
    crowd.index(musique[:20])
    assert answers(crowd) == before and set(crowd.store.indexes.values()) <= index_names()
    crowd.drop_namespace()
    twin.store.indexed = True  # what the other client last saw: the namespace and its indexes
    twin.index(musique[:20])
    assert answers(twin) == before
    # a client of a namespace nothing was written to reads nothing and creates no index
    ghost = memory_factory()
    assert ghost.query(questions[0], mode="bm25").passages == [] and not set(ghost.store.indexes.values()) & index_names()


# ----------------------------------------------------------------------------------------- crash safety


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _count(driver, ns: str) -> int:
    return rows(driver, "MATCH (p:Passage {ns: $ns}) RETURN count(p) AS n", ns=ns)[0]["n"]


# the kill tests wait for a count of committed passages; this only guards against a hang
KILL_DEADLINE_S = 600


def _sealed(driver, ns: str) -> int:
    return rows(driver, "MATCH (p:Passage {ns: $ns}) WHERE p.hash IS NOT NULL RETURN count(p) AS n", ns=ns)[0]["n"]


def _corpus_json(docs) -> list[dict]:
    return [{"id": d.passage_id, "title": d.title, "text": d.text, "extraction": d.extraction.model_dump()} for d in docs]


def test_a_crash_between_the_write_and_the_synonym_step_is_redone_on_the_next_run(memory_factory, musique, monkeypatch):
    """The passages' hash is set in the synonym transaction: a run that dies after the main write leaves
    them unsealed, and the next run indexes them again instead of skipping them without SYNONYM edges."""
    corpus = musique[200:220]
    clean = memory_factory(config=HippoConfig(batch_size=10))
    clean.index(corpus)
    memory = memory_factory(config=HippoConfig(batch_size=10))
    real = memory.indexer.synonyms.link
    calls = []

    def dies_on_second_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt("killed")
        return real(*args, **kwargs)

    monkeypatch.setattr(memory.indexer.synonyms, "link", dies_on_second_batch)
    with pytest.raises(KeyboardInterrupt):
        memory.index(corpus)
    assert _count(memory.driver, memory.namespace) == 20
    assert consistency_problems(memory.driver, memory.namespace) == ["unsealed passages (no hash): 10"]
    monkeypatch.setattr(memory.indexer.synonyms, "link", real)
    report = memory.index(corpus)
    assert report.unchanged == 10 and report.indexed == 10 and report.updated == 0
    assert not consistency_problems(memory.driver, memory.namespace)
    assert_same_graph(snapshot(memory.driver, memory.namespace), snapshot(clean.driver, clean.namespace), synonym_tol=5e-3)


def test_sigkill_of_hippo_index_then_rerun_completes_without_duplicates(connection, driver, musique, tmp_path):
    ns = f"kill-{uuid.uuid4().hex[:6]}"
    corpus = musique[300:420]
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(_corpus_json(corpus)))
    env = os.environ | cli_env(connection, ns, HIPPO_BATCH_SIZE="20", HF_HUB_OFFLINE="1",
                                HIPPO_EXTRACTION_CACHE=str(tmp_path / "extractions.sqlite"))
    env.pop("OPENAI_API_KEY", None)
    env.pop("OPENAI_BASE_URL", None)
    try:
        proc = subprocess.Popen([str(HIPPO), "index", str(path), "--json"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + KILL_DEADLINE_S
        while _sealed(driver, ns) < 40 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, f"hippo index ended before the kill: {proc.returncode}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        at_kill = _sealed(driver, ns)
        assert proc.returncode == -signal.SIGKILL and 40 <= at_kill < len(corpus), (proc.returncode, at_kill)
        # what the killed run committed is consistent (only its last batch may lack its seal)
        problems = consistency_problems(driver, ns)
        assert all(p.startswith("unsealed passages") for p in problems), problems

        again = subprocess.run([str(HIPPO), "index", str(path), "--json"], env=env, capture_output=True, text=True,
                               timeout=KILL_DEADLINE_S)
        assert again.returncode == 0, again.stderr[-2000:]
        report = json.loads(again.stdout)
        assert report["indexed"] + report["unchanged"] == len(corpus) and report["unchanged"] == at_kill
        assert not consistency_problems(driver, ns)
        # nothing lost, nothing doubled: every passage contributes exactly its extraction, once
        assert_matches_expected(snapshot(driver, ns), expected_graph(corpus))
    finally:
        HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()).drop_namespace()


@pytest.fixture(scope="module")
def private_server(tmp_path_factory):
    """A throw-away server of our own (the crash test kills it; the shared session server is never touched)."""
    base = tmp_path_factory.mktemp("private-neo4j")
    settings = test_server_settings(
        port=_free_port(), server_dir=base / "srv", config_dir=base / "cfg", heap="512m", pagecache="128m"
    )
    server.start(settings)
    yield settings
    stop_throwaway(settings)


def private_connection(settings, ns="crash"):
    return ConnectionSettings(uri=settings.uri, password=settings.password(), namespace=ns)


def test_killing_the_server_mid_write_leaves_a_consistent_graph(private_server, musique):
    from hippo_neo4j.db import connect_driver

    settings = private_server
    conn = private_connection(settings)
    corpus = musique[600:700]
    # fail fast instead of retrying for 30 s while the server is down
    drv = connect_driver(conn.uri, conn.auth, max_transaction_retry_time=1.0)
    memory = HippoRAG(conn, driver=drv, extractor=NoExtractor(), config=HippoConfig(batch_size=20))
    failure: list[BaseException] = []

    def write():
        try:
            memory.index(corpus)
        except BaseException as exc:  # noqa: BLE001
            failure.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    with connect_driver(conn.uri, conn.auth) as probe:
        deadline = time.monotonic() + KILL_DEADLINE_S
        while _count(probe, conn.namespace) < 40 and writer.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
    assert writer.is_alive(), f"the writer ended before the kill: {failure}"
    pid = server.running_pid(settings)
    os.kill(pid, signal.SIGKILL)
    writer.join(KILL_DEADLINE_S)
    drv.close()
    assert not writer.is_alive() and failure, "the writer neither failed nor hung"
    assert server.running_pid(settings) is None

    server.start(settings)
    with HippoRAG(conn, extractor=NoExtractor(), config=HippoConfig(batch_size=20)) as memory:
        committed = _count(memory.driver, conn.namespace)
        assert 40 <= committed < len(corpus)
        problems = consistency_problems(memory.driver, conn.namespace)
        assert all(p.startswith("unsealed passages") for p in problems), problems
        assert memory.query("q", mode="hipporag1", entities=["Journal"]).passages is not None  # projections re-made after restart
        report = memory.index(corpus)
        assert report.indexed + report.unchanged == len(corpus)
        assert not consistency_problems(memory.driver, conn.namespace)
        assert_matches_expected(snapshot(memory.driver, conn.namespace), expected_graph(corpus))
        memory.drop_namespace()


# -------------------------------------------------------------------------------------------- bad input


def test_empty_passages_and_empty_queries(memory_factory):
    memory = memory_factory()
    report = memory.index([{"id": "e1", "text": ""}, {"id": "e2", "text": " \n\t "}, {"id": "e3", "text": None}, ""])
    assert report.skipped_empty == 4 and report.indexed == 0
    assert [s.item for s in report.skipped] == ["e1", "e2", "e3", "#3"] and report.not_indexed == 4
    assert {s.reason for s in report.skipped} == {"the text is empty (or only whitespace)"}
    assert memory.stats()["passages"] == 0
    assert not rows(memory.driver, "MATCH (n:HippoNamespace {name: $ns}) RETURN n", ns=memory.namespace)  # no write
    memory.index([P("a", "Alpha is a letter.", ("alpha", "is", "letter"))])
    for mode in ("bm25", "dense", "hipporag2", "entity-ppr"):  # every mode alike, and it says why
        for text in ("", "   ", "\n"):
            for result in (memory.query(text, mode=mode), memory.query(text, mode="hybrid", entities=[])):
                assert result.passages == [] and result.warning == "the query is empty: nothing to retrieve"
    result = memory.query("", mode="hipporag1", entities=["alpha"])  # entities given: they are the query
    assert result.passages and result.passages[0].id == "a" and result.warning is None


def test_overlong_passage_is_rejected_with_a_message(memory_factory, caplog):
    memory = memory_factory()
    huge = "word " * 200_000  # 1 MB
    long_ok = "Zanzibar spice trade. " * 2_000  # 44 kB: under the limit, indexed (the encoder reads its start)
    with caplog.at_level(logging.WARNING, logger="hippo_neo4j.graph.indexing"):
        report = memory.index([
            P("huge", huge, ("word", "is", "word list")),
            P("long", long_ok, ("Zanzibar", "traded", "spice")),
            P("small", "A small passage.", ("small", "is", "passage")),
            {"id": "x" * 5000, "text": "an id too long to be an index key"},
        ])
    assert report.rejected == ["huge", "x" * 100] and report.indexed == 2
    assert [(s.item, s.reason) for s in report.skipped] == [
        ("huge", ("text has 1,000,000 characters; the limit is 100,000 (HIPPO_MAX_PASSAGE_CHARS): split it into "
                  "paragraph-sized passages")),
        ("x" * 100 + "…", "id has 5,000 characters; the limit is 1,000"),
    ] and report.not_indexed == 2
    assert "'huge' not indexed: 1,000,000 characters, the limit is 100,000 (HIPPO_MAX_PASSAGE_CHARS)" in caplog.text
    assert "split long documents into paragraph-sized passages" in caplog.text
    assert "its id has 5,000 characters, the limit is 1,000" in caplog.text
    assert memory.query("Zanzibar", mode="bm25").passages[0].id == "long"
    assert memory.query("Zanzibar spice trade", mode="dense").passages[0].id == "long"
    assert memory.stats()["passages"] == 2
    small = memory_factory(config=HippoConfig(max_passage_chars=10))
    assert small.index([P("s", "twelve chars")]).rejected == ["s"]
    titled = small.index([{"title": "Title", "text": "twelve chars"}]).skipped
    assert [(s.item, s.reason[:60]) for s in titled] == [("#0", "title and text have 18 characters; the limit is 10 (HIPPO_MA")]


class EmptyExtractor:
    """Extracts nothing from any passage (passages given without an extraction are still indexed)."""

    name = "empty"

    def extract(self, passages):
        return [Extraction() for _ in passages]


def test_items_that_are_no_passages_are_named_by_position_and_the_rest_is_indexed(memory_factory):
    memory = memory_factory(extractor=EmptyExtractor())
    report = memory.index([
        P("ok", "Alpha is a letter.", ("alpha", "is", "letter")), 42, None, ["x"], "A bare string about Beta.",
        {"id": "meta", "text": "Its metadata is not scalar.", "metadata": {"user": {"id": 1}}}, {"text": 7},
        {"title": "dup", "text": "Same content."}, {"title": "dup", "text": "Same content."},
    ])
    assert report.passages == 9 and report.indexed == 3 and report.not_indexed == 6
    assert [(s.item, s.reason) for s in report.skipped] == [
        ("#1", "not a passage object: int 42"),
        ("#2", "not a passage object: null"),
        ("#3", "not a passage object: a list (1 item)"),
        ("meta", ("metadata 'user': {'id': 1} is not a string, number, boolean, date or list of strings (leave the "
                  "key out instead of None).")),
        ("#6", "invalid text: Input should be a valid string"),
        ("#8", "the same title and text as item #7 (kept once)"),
    ]
    assert report.skipped_duplicate_id == 1 and report.skipped_empty == 0 and not report.rejected
    assert memory.stats()["passages"] == 3
    assert memory.query("bare string Beta", mode="bm25", top_k=1).passages[0].text == "A bare string about Beta."
    again = memory.index([None, P("ok", "Alpha is a letter.", ("alpha", "is", "letter"))])
    assert again.unchanged == 1 and [s.item for s in again.skipped] == ["#0"]


def test_cli_index_names_every_item_it_left_out_and_exits_1_after_indexing_the_rest(connection, tmp_path):
    ns = f"cli-bad-{uuid.uuid4().hex[:6]}"
    corpus = tmp_path / "mixed.json"
    corpus.write_text(json.dumps([
        P("ok", "Alpha is the first letter.", ("Alpha", "is", "first letter")), 42, None, ["x"],
        "A bare string about the Beta letter.", {"id": "huge", "text": "w" * 150_000},
        {"id": "bell\x07\nid", "text": "  "},
    ]))
    env = cli_env(connection, ns, HIPPO_EXTRACTION_CACHE=str(tmp_path / "cache.sqlite"))
    runner = CliRunner()
    try:
        out = runner.invoke(cli, ["index", str(corpus), "--extractor", "offline"], env=env, catch_exceptions=False)
        assert out.exit_code == 1, out.output
        for line in ("passages 7: indexed 2 (updated 0), unchanged 0, skipped 1 empty and 0 duplicate ids, rejected 1",
                     "not indexed 5 of 7 items:", "  #1: not a passage object: int 42",
                     "  #2: not a passage object: null", "  #3: not a passage object: a list (1 item)",
                     "  huge: text has 150,000 characters; the limit is 100,000 (HIPPO_MAX_PASSAGE_CHARS)",
                     "  bell\\x07\\nid: the text is empty (or only whitespace)"):
            assert line in out.stdout, (line, out.stdout)
        assert out.stderr.strip().endswith("Error: 5 of 7 items were not indexed (see above)")
        assert json.loads(runner.invoke(cli, ["stats", "--json"], env=env).stdout)["passages"] == 2
        again = runner.invoke(cli, ["index", str(corpus), "--extractor", "offline", "--json"], env=env)
        assert again.exit_code == 1
        data = json.loads(again.stdout)
        assert data["unchanged"] == 2 and data["not_indexed"] == 5 and data["skipped"][0] == {
            "item": "#1", "reason": "not a passage object: int 42"}
        assert data["skipped"][4]["item"] == "bell\x07\nid"
        many = tmp_path / "many.json"
        many.write_text(json.dumps([P("a", "Alpha is the first letter.", ("Alpha", "is", "first letter"))] + [None] * 12))
        text = runner.invoke(cli, ["index", str(many)], env=env).stdout
        assert "  #10: not a passage object: null\n  ... and 2 more" in text and "#11" not in text
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)


def test_invalid_utf8_and_lone_surrogates(connection, memory_factory, tmp_path, caplog):
    ns = f"utf-{uuid.uuid4().hex[:6]}"
    good = json.dumps([{"id": "bad-bytes", "text": "Caf\u00e9 BADBYTES here."}], ensure_ascii=False).encode()
    corpus = tmp_path / "latin1.json"
    corpus.write_bytes(good.replace("BADBYTES".encode(), b"\xff\xfe\xc3"))  # not UTF-8
    runner = CliRunner()
    env = cli_env(connection, ns)
    try:
        with caplog.at_level(logging.WARNING, logger="hippo_neo4j.corpus"):
            out = runner.invoke(cli, ["index", str(corpus), "--json"], env=env, catch_exceptions=False)
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout)["indexed"] == 1
        assert f"latin1.json is not valid UTF-8 (first bad byte at offset {good.index(b'BADBYTES')})" in caplog.text
        assert "3 invalid sequences replaced with U+FFFD" in caplog.text
        hits = json.loads(runner.invoke(cli, ["query", "Café", "--mode", "bm25", "--json"], env=env).stdout)["passages"]
        assert hits[0]["id"] == "bad-bytes" and hits[0]["text"] == "Café \ufffd\ufffd\ufffd here."
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)

    # lone surrogates (JSON "\udc80" escapes, surrogateescape-decoded bytes) in ids, text, triples, queries
    path = tmp_path / "surrogates.json"
    path.write_text('[{"id": "s\\udc80", "text": "Lone \\ud800 surrogate in Quixotic text.", '
                    '"extraction": {"triples": [["Quixotic\\udcff", "is \\udc80", "text"]]}}]')
    memory = memory_factory()
    report = memory.index(load_corpus(path))
    assert report.indexed == 1 and report.triples == 1
    assert memory.query("surrogate \udc80", mode="bm25").passages[0].id == "s\ufffd"
    assert memory.query("Lone surrogate \ud800", mode="dense").passages[0].id == "s\ufffd"
    assert memory.query("q \udc80", mode="hipporag1", entities=["quixotic\udcff"]).passages[0].id == "s\ufffd"
    assert memory.delete(["s\udc80"]).deleted == 1  # the same id, given with the same lone surrogate


CYPHERISH = [
    "'}) MATCH (n) DETACH DELETE n //",
    '"}) RETURN 1 UNION MATCH (n) SET n.pwned = true //',
    "$ns `backtick` {ns: 'other'} ] ) CALL db.clearQueryCaches()",
    "title:* OR text:[a TO z] AND NOT x~2 +y -z ^3 \"phrase\" \\ / && || !",
    "*", "?", "AND", "OR NOT", "\\", "~", ":", "\x00",
]


def test_cypher_and_lucene_looking_text_is_data_never_code(memory_factory, driver):
    sentinel = memory_factory()
    sentinel.index([P("keep", "Sentinel passage about lighthouses.", ("lighthouse", "guides", "ships"))])
    before_sentinel = snapshot(driver, sentinel.namespace)
    memory = memory_factory(f"ns') DETACH DELETE n // {uuid.uuid4().hex[:6]} `x`")
    corpus = [P(f"id-{i}-{text}", f"Odd passage {i}: {text}", (f"odd {i} {text}", "contains", text), title=text)
              for i, text in enumerate(CYPHERISH)]
    report = memory.index(corpus)
    assert report.indexed == len(CYPHERISH)
    mine = snapshot(driver, memory.namespace)
    assert set(mine["passages"]) == {f"id-{i}-{t}" for i, t in enumerate(CYPHERISH)}
    for text in CYPHERISH:
        for mode in ("bm25", "dense", "hipporag2"):
            assert isinstance(memory.query(text, mode=mode).passages, list)
        memory.query(text, mode="hipporag1", entities=[text, f"odd 0 {text}"])
        memory.query(text, mode="hybrid", entities=[text])
        assert not sentinel.query(text, mode="bm25").passages or sentinel.query(text, mode="bm25").passages[0].id == "keep"
    assert memory.query("DETACH DELETE", mode="bm25").passages[0].id.startswith(("id-0", "id-1"))
    assert snapshot(driver, memory.namespace) == mine and snapshot(driver, sentinel.namespace) == before_sentinel
    assert not rows(driver, "MATCH (n) WHERE n.pwned IS NOT NULL RETURN n LIMIT 1")
    memory.delete([f"id-{i}-{t}" for i, t in enumerate(CYPHERISH)])
    assert memory.stats()["passages"] == 0 and snapshot(driver, sentinel.namespace) == before_sentinel


def test_same_id_twice_in_one_batch_keeps_the_first_and_warns(memory_factory, caplog):
    memory = memory_factory()
    with caplog.at_level(logging.WARNING, logger="hippo_neo4j.graph.indexing"):
        report = memory.index([P("dup", "First version."), P("dup", "Second version."), P("dup", "First version.")])
    assert report.indexed == 1 and report.skipped_duplicate_id == 2
    assert [(s.item, s.reason) for s in report.skipped] == [("dup", "the id of item #0, whose content is kept instead"),
                                                             ("dup", "the same id and content as item #0 (kept once)")]
    assert caplog.text.count("passage id 'dup' appears twice with different text; the first is kept") == 1
    assert memory.query("version", mode="bm25").passages[0].text == "First version."


def test_malformed_triples_are_counted_not_fatal(memory_factory):
    # MiniLM: "ok one" and "ok two" are no synonyms at its τ (bge's cosine for the pair clears its own τ)
    memory = memory_factory(encoder=shared_encoder("all-MiniLM-L6-v2"))
    triples = [["", "is", "x"], ["a", "", "b"], ["a", "is", ""], ["  ", "is", "b"], ["!!!", "is", "b"],
               ["a", "is", "A"], ["long " * 300, "is", "b"], ["ok one", "is", "ok two"], None, "text", [1, 2, 3],
               ["a", "b"], {"s": "a"}, ["a", ["x"], "b"]]
    report = memory.index([{"id": "t", "text": "Triples of all kinds.", "extraction": {"triples": triples}}])
    assert report.indexed == 1 and report.triples == 1 and report.self_loop_triples == 1
    assert report.malformed_triples == 12
    assert memory.stats() == {"passages": 1, "documents": 0, "phrases": 2, "facts": 1, "relation_edges": 1, "synonym_edges": 0,
                              "mention_edges": 2}


class FlakyEncoder:
    """Wraps the real encoder; texts containing NANVEC embed to NaN, texts containing ZEROVEC to zeros
    (as a broken or remote encoder might), bypassing the real encoder's own guard."""

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.fingerprint = inner.fingerprint
        self.synonym_threshold = inner.synonym_threshold

    def encode_queries(self, texts):
        return self.encode([self.inner.query_prefix + t for t in texts])

    def encode(self, texts):
        vectors = np.array(self.inner.encode(texts), copy=True)
        for i, text in enumerate(texts):
            if "nanvec" in text.lower():
                vectors[i] = np.nan
            elif "zerovec" in text.lower():
                vectors[i] = 0.0
        return vectors


def test_nan_and_zero_embeddings_are_stored_as_null_and_nothing_breaks(memory_factory):
    memory = memory_factory(encoder=FlakyEncoder(shared_encoder()))
    report = memory.index([
        P("nan", "NANVEC passage about the river Volga.", ("Volga river", "flows into", "NANVEC sea")),
        P("zero", "ZEROVEC passage about the river Danube.", ("Danube river", "flows into", "ZEROVEC sea")),
        P("fine", "A passage about the river Rhine and the Danube river.", ("Rhine river", "near", "Danube river")),
    ])
    assert report.indexed == 3
    snap = snapshot(memory.driver, memory.namespace)
    assert not snap["passages"]["nan"]["embedded"] and not snap["passages"]["zero"]["embedded"]
    assert snap["passages"]["fine"]["embedded"]
    assert not snap["phrases"]["nanvec sea"][0] and not snap["phrases"]["zerovec sea"][0]
    assert snap["phrases"]["volga river"][0]
    assert not any("vec sea" in a + b for a, b in snap["synonyms"])  # unusable vectors are not compared
    assert memory.query("Volga", mode="bm25").passages[0].id == "nan"
    assert memory.query("Danube ZEROVEC", mode="bm25").passages[0].id == "zero"
    assert memory.query("NANVEC query", mode="dense").passages == []
    dense = memory.query("river Volga", mode="dense")
    assert {p.id for p in dense.passages} == {"fine"}  # passages without an embedding are not in the vector index
    # PPR walks through the phrase that has no embedding: Volga -> "nanvec sea" is reachable by its relation
    result = memory.query("q", mode="hipporag1", entities=["Volga river", "ZEROVEC"])
    assert not result.fell_back and [link.entity for link in result.linked] == ["Volga river"]
    assert result.passages[0].id == "nan" and "nanvec sea" in {t["phrase"] for t in result.top_phrases}
    fallback = memory.query("river", mode="hipporag1", entities=["NANVEC"])
    assert fallback.fell_back


def test_unknown_namespace_is_empty_not_an_error(connection, driver):
    ns = f"never-indexed-{uuid.uuid4().hex[:6]}"
    with HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()) as memory:
        assert memory.stats() == {"passages": 0, "documents": 0, "phrases": 0, "facts": 0, "relation_edges": 0, "synonym_edges": 0,
                                  "mention_edges": 0}
        for mode in ("bm25", "dense"):
            result = memory.query("anything at all", mode=mode)
            assert result.passages == [] and result.warning == f"namespace {ns!r} has no passages (index into it, or check the namespace)"
        result = memory.query("anything", mode="hipporag1", entities=["anything"])
        assert result.fell_back and result.passages == [] and ns in result.warning
        result = memory.query("anything", mode="hipporag2")
        assert result.fell_back and result.passages == [] and ns in result.warning
        assert memory.delete(["a"]).missing == ["a"]
    # the CLI refuses it as hippo serve (404) and hippo mcp (a tool error) do, with the same message
    out = CliRunner().invoke(cli, ["query", "anything", "--entities", "x"], env=cli_env(connection, ns))
    assert out.exit_code == 1 and f"namespace {ns!r} has no passages (index into it first" in out.output
    assert not rows(driver, "MATCH (n) WHERE n.ns = $ns OR n.name = $ns RETURN n LIMIT 1", ns=ns)  # nothing created


def test_server_down_names_the_uri(tmp_path):
    uri = f"bolt://127.0.0.1:{_free_port()}"
    with pytest.raises(ServerError, match=f"Cannot reach Neo4j at {uri}"):
        HippoRAG(ConnectionSettings(uri=uri, password="pw-should-not-show"), extractor=NoExtractor())
    out = CliRunner().invoke(cli, ["--uri", uri, "--password", "pw-should-not-show", "stats", "--json"])
    assert out.exit_code == 1 and f"Cannot reach Neo4j at {uri}" in out.output
    assert "Traceback" not in out.output and "pw-should-not-show" not in out.output


# ------------------------------------------------------------------------------- secrets, secure defaults


def _private_env(settings, ns="sec") -> dict[str, str]:
    return {
        "HIPPO_NEO4J_PORT": str(settings.port),
        "HIPPO_SERVER_DIR": str(settings.server_dir),
        "HIPPO_CONFIG_DIR": str(settings.config_dir),
        "HIPPO_CACHE_DIR": str(settings.cache_dir),
        "HIPPO_NAMESPACE": ns,
    }


def test_wrong_password_is_clear_and_never_printed_or_logged(private_server, caplog):
    wrong = "Wr0ng-Secret-4711"  # one failed attempt only: Neo4j locks the user after three in a row
    with caplog.at_level(logging.DEBUG):
        out = CliRunner().invoke(cli, ["--password", wrong, "stats", "--json"], env=_private_env(private_server))
    assert out.exit_code == 1
    assert f"Neo4j at {private_server.uri} refused the credentials for user 'neo4j'" in out.output
    assert "Traceback" not in out.output
    assert wrong not in out.output and wrong not in caplog.text
    assert caplog.records, "the driver's debug log was captured"


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on ``port`` (from /proc/net/tcp{,6})."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                raw = bytes.fromhex(address)
                if len(raw) == 4:
                    found.add(socket.inet_ntop(socket.AF_INET, raw[::-1]))
                else:
                    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                    found.add(socket.inet_ntop(socket.AF_INET6, words))
    return found


def _non_loopback_ipv4() -> list[str]:
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return []
    return [f.split()[3].split("/")[0] for f in out.splitlines() if " lo " not in f and len(f.split()) > 3]


def test_secure_defaults_loopback_only_auth_on_no_secret_in_output_or_logs(private_server, connection):
    from hippo_neo4j.db import connect_driver

    settings = private_server
    password = settings.password().get_secret_value()
    conf = (settings.server_dir / "conf" / "neo4j.conf").read_text()
    assert "server.default_listen_address=127.0.0.1" in conf and "dbms.security.auth_enabled=true" in conf
    assert "server.http.enabled=false" in conf and "server.https.enabled=false" in conf
    listening = [ipaddress.ip_address(a) for a in _listening_addresses(settings.port)]
    assert listening and all(a.is_loopback or (a.version == 6 and a.ipv4_mapped and a.ipv4_mapped.is_loopback)
                             for a in listening), listening
    assert server.port_open(settings.port)
    for address in _non_loopback_ipv4():
        assert not server.port_open(settings.port, host=address), address
    with pytest.raises(ServerError):  # auth is on: no credentials, no session
        connect_driver(settings.uri, None)

    runner = CliRunner()
    env = _private_env(settings)
    status = runner.invoke(cli, ["neo4j", "status", "--json"], env=env)
    assert status.exit_code == 0 and json.loads(status.stdout)["auth"] is True
    stats = runner.invoke(cli, ["--password", password, "stats", "--json"], env=env)
    assert stats.exit_code == 0 and json.loads(stats.stdout)["passages"] >= 0
    assert password not in status.output + stats.output
    for log in (settings.server_dir / "logs").glob("*"):
        assert password not in log.read_text(errors="replace"), log
    # the shared test server's password does not leak through the library's own error messages either
    shared = connection.password.get_secret_value()
    out = runner.invoke(cli, ["--uri", settings.uri, "--password", shared, "stats"], env=env)
    assert out.exit_code == 1 and shared not in out.output


# ------------------------------------------------------------------------------------------ concurrency


def test_concurrent_queries_during_indexing_see_only_committed_states(connection):
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import concurrency
    finally:
        sys.path.remove(str(ROOT / "bench"))
    # until the writer has indexed, updated and deleted while the clients queried every mode and counted the
    # passages several times (batch 5 is the first with a deletion); the deadline only guards against a hang
    events = {"batches": 5, "updates": 2, "deletes": 3, "count_checks": 4, "queries_per_mode": 3}
    report = concurrency.run(connection, events=events, deadline=600, clients=4, preload=20, batch=10)
    assert report["errors"] == 0, report["error_samples"]
    assert report["violations"] == 0, report["violation_samples"]
    assert not report["hung_threads"]
    assert report["reached"], report
    assert report["count_checks"] >= 4 and all(m["queries"] >= 3 for m in report["per_mode"].values())
    assert report["writer"]["batches"] >= 5 and report["writer"]["updates"] >= 2 and report["writer"]["deletes"] >= 3


# ------------------------------------------------------------------ projections kept warm across writes


def PE(pid, text, triple, *entities):
    """A passage whose extraction names ``entities`` too (the mention graph of entity-ppr links those)."""
    return P(pid, text, triple) | {"extraction": {"named_entities": list(entities), "triples": [list(triple)]}}


def _kinds_projected(driver, database, ns):
    return {name: projection.version_of(name, ns) for name in Server.of(driver, database).projections.existing(ns)}


@pytest.fixture
def held_refreshes(monkeypatch, driver, connection):
    """Background projection refreshes wait at a gate until the test opens it (``gate.release()``), so what a
    query sees right after a write does not depend on how fast the machine builds the next projection. Queries
    that need the current graph project it themselves and never pass this gate. Request it before
    ``memory_factory``: the gate opens after the namespaces are dropped, and the waiting refreshes then end."""
    gate = threading.Semaphore(0)
    monkeypatch.setattr(Server.of(driver, connection.database).projections, "_building", gate)
    yield gate
    gate.release()


REFRESH_DEADLINE_S = 600  # only guards against a hang


def _blocked_on_projection_lock(driver, database) -> bool:
    """Whether a transaction on the server waits for a projection lock another transaction holds."""
    return any(
        r["status"].startswith("Blocked") and "HippoProjectionLock" in r["query"]
        for r in rows(driver, "SHOW TRANSACTIONS YIELD status, currentQuery RETURN status, currentQuery AS query",
                      database_=database)
    )


def _created(driver, database, ns):
    """The creation time of each of the namespace's projections in the catalogue, by name."""
    return {r["graphName"]: str(r["creationTime"]) for r in rows(
        driver, "CALL gds.graph.list() YIELD graphName, creationTime, database WHERE database = $db "
        "AND graphName STARTS WITH $prefix RETURN graphName, creationTime", db=database, prefix=f"hippo:{ns}:v")}


def test_indexing_projects_the_default_mode_s_graph_so_the_first_query_walks_it_without_projecting(
        held_refreshes, memory_factory, driver, connection):
    memory = memory_factory()
    memory.index([PE("a", "Ada Lovelace wrote notes on the engine.", ("Ada Lovelace", "wrote", "notes"), "Ada Lovelace"),
                  PE("b", "Charles Babbage designed the engine.", ("Charles Babbage", "designed", "engine"), "Charles Babbage")])
    ns, db = memory.namespace, memory.database
    projections = Server.of(driver, db).projections
    version = projections.namespace_version(ns)
    # no refresh ran (held_refreshes): indexing projected the graph entity-ppr walks, current, and only it
    made = _created(driver, db, ns)
    assert list(made) == [projections.graph_name(ns, version, "mentions")]
    # a client that knows nothing of it (another process, or this one after a restart) walks it as it is
    projections.forget(ns)
    result = HippoRAG(connection, namespace=ns, driver=driver, extractor=memory.extractor).query(
        "Who wrote notes?", entities=["Ada Lovelace"])
    assert result.mode == "entity-ppr" and result.graph_version == version and result.writes_behind == 0
    assert result.passages[0].id == "a" and not result.passages[0].filled
    assert _created(driver, db, ns) == made  # not projected again

    # with a projection in place, indexing more does not wait for the next one: the background refresh builds it
    memory.index([PE("c", "Ada Lovelace knew Mary Somerville.", ("Ada Lovelace", "knew", "Mary Somerville"),
                     "Ada Lovelace", "Mary Somerville")])
    current = projections.namespace_version(ns)
    assert current > version and _created(driver, db, ns) == made
    held_refreshes.release()
    projections.wait_for_refreshes(timeout=REFRESH_DEADLINE_S)
    assert list(_created(driver, db, ns)) == [projections.graph_name(ns, current, "mentions")]

    # prepare_graph=False: indexing leaves the projecting to the first query
    other = memory_factory(config=HippoConfig(prepare_graph=False))
    other.index([PE("a", "Ada Lovelace wrote notes.", ("Ada Lovelace", "wrote", "notes"), "Ada Lovelace")])
    assert _created(driver, db, other.namespace) == {}
    assert other.query("Who wrote notes?", entities=["Ada Lovelace"]).passages[0].id == "a"
    assert len(_created(driver, db, other.namespace)) == 1


def test_dropping_a_namespace_while_its_projection_is_refreshed_leaves_no_projection(held_refreshes, memory_factory,
                                                                                     driver):
    memory = memory_factory()
    memory.index([PE("a", "Ada Lovelace wrote notes.", ("Ada Lovelace", "wrote", "notes"), "Ada Lovelace")])
    memory.index([PE("b", "Charles Babbage met Ada Lovelace.", ("Charles Babbage", "met", "Ada Lovelace"),
                     "Charles Babbage", "Ada Lovelace")])  # its refresh waits at the gate
    held_refreshes.release()  # it may build now, before, while or after the namespace is dropped
    memory.drop_namespace()
    memory.server.projections.wait_for_refreshes(timeout=REFRESH_DEADLINE_S)
    assert _created(driver, memory.database, memory.namespace) == {}


def test_a_write_does_not_make_graph_queries_wait_and_the_refresh_replaces_the_projection(held_refreshes, memory_factory):
    memory = memory_factory()
    memory.index([PE("a", "Ada Lovelace wrote notes on the engine.", ("Ada Lovelace", "wrote", "notes"), "Ada Lovelace"),
                  PE("b", "Charles Babbage designed the engine.", ("Charles Babbage", "designed", "engine"), "Charles Babbage")])
    modes = ("hipporag1", "hipporag2", "entity-ppr")
    before = {m: memory.query("Who wrote notes?", mode=m, entities=["Ada Lovelace"], recognition_filter=False) for m in modes}
    old = before["hipporag1"].graph_version
    assert all(r.graph_version == old and r.writes_behind == 0 for r in before.values())

    memory.index([PE("c", "Ada Lovelace corresponded with Mary Somerville.", ("Ada Lovelace", "knew", "Mary Somerville"),
                     "Ada Lovelace", "Mary Somerville")])
    current = memory.server.projections.namespace_version(memory.namespace)
    assert current > old
    # seeds the old projection holds: answered from it, saying so, and the new passage is still found
    # (hipporag1 maps phrase mass to passages through the current MENTIONED_IN edges)
    stale = memory.query("Who wrote notes?", mode="hipporag1", entities=["Ada Lovelace"])
    assert (stale.graph_version, stale.writes_behind) == (old, current - old)
    assert "c" in {p.id for p in stale.passages if not p.filled}
    r = memory.query("Who wrote notes?", mode="entity-ppr", entities=["Ada Lovelace"])
    assert r.graph_version == old and r.writes_behind == current - old and r.passages
    # hipporag2 retrieves every fact here, the new one too, whose object phrase is newer than the projection
    r = memory.query("Who wrote notes?", mode="hipporag2", recognition_filter=False)
    assert any(f.object == "mary somerville" for f in r.facts) and r.graph_version == current
    # a seed newer than the projection: the query waits for the current one
    new = memory.query("Who is Mary Somerville?", mode="hipporag1", entities=["Mary Somerville"])
    assert new.graph_version == current and new.writes_behind == 0
    assert new.passages[0].id == "c" and not new.passages[0].filled
    fresh = memory.query("Who wrote notes?", mode="entity-ppr", entities=["Ada Lovelace"], fresh=True)
    assert fresh.graph_version == current and fresh.writes_behind == 0

    held_refreshes.release()  # the refreshes the writes started may now build
    memory.server.projections.wait_for_refreshes(timeout=REFRESH_DEADLINE_S)
    after = {m: memory.query("Who wrote notes?", mode=m, entities=["Ada Lovelace"], recognition_filter=False) for m in modes}
    assert all(r.graph_version == current and r.writes_behind == 0 for r in after.values())
    # one projection per kind remains, all of the current version: the old ones were dropped
    assert sorted(_kinds_projected(memory.driver, memory.database, memory.namespace).values()) == [current] * 3


def test_a_projection_built_by_another_release_s_statement_is_dropped_not_walked(memory_factory, monkeypatch):
    """A server that kept running across an upgrade holds projections of the current graph version built by the
    old statement: their names carry that statement's fingerprint, so a query projects its own and drops them."""
    memory = memory_factory()
    memory.index([PE("a", "Ada Lovelace wrote notes.", ("Ada Lovelace", "wrote", "notes"), "Ada Lovelace")])
    ns, db, driver = memory.namespace, memory.database, memory.driver
    Server.of(driver, db).projections.drop(ns)  # the one indexing made: the server holds only the old release's
    version = Server.of(driver, db).projections.namespace_version(ns)
    legacy = f"hippo:{ns}:v{version}:mentions"  # the name an earlier release gave (no fingerprint)
    other = f"hippo:{ns}:v{version}.00000000:mentions"  # another release's statement
    for name in (legacy, other):  # an empty graph: walked, it would find no passage by the graph
        driver.execute_query("MATCH (n:HippoNamespace {name: $ns}) WITH gds.graph.project($name, n, null) AS g "
                             "RETURN g.graphName", name=name, ns=ns, database_=db)
    assert {legacy, other} <= set(_kinds_projected(driver, db, ns))
    Server.of(driver, db).projections.forget(ns)
    result = memory.query("Who wrote notes?", mode="entity-ppr", entities=["Ada Lovelace"])
    assert result.passages[0].id == "a" and not result.passages[0].filled and result.top_phrases
    left = set(_kinds_projected(driver, db, ns))
    assert legacy not in left and other not in left
    assert Server.of(driver, db).projections.graph_name(ns, version, "mentions") in left


def test_a_deleted_passage_never_comes_back_from_an_old_projection(held_refreshes, memory_factory):
    memory = memory_factory()
    memory.index([PE("a", "Ada Lovelace wrote notes.", ("Ada Lovelace", "wrote", "notes"), "Ada Lovelace"),
                  PE("b", "Ada Lovelace met Charles Babbage.", ("Ada Lovelace", "met", "Charles Babbage"),
                     "Ada Lovelace", "Charles Babbage")])
    for mode in ("hipporag1", "hipporag2", "entity-ppr"):
        found = memory.query("Ada", mode=mode, entities=["Ada Lovelace"], recognition_filter=False).passages
        assert {"a", "b"} <= {p.id for p in found if not p.filled}, mode
    memory.delete(["b"])
    # a new passage, whose nodes may reuse the deleted ones' ids, written before the projection is refreshed
    memory.index([PE("z", "Zebras live in Africa.", ("zebra", "lives in", "Africa"), "Africa")])
    for mode in ("hipporag1", "hipporag2", "entity-ppr"):
        result = memory.query("Ada", mode=mode, entities=["Ada Lovelace"], recognition_filter=False)
        assert result.writes_behind > 0 or mode == "hipporag2"  # its facts include the zebra's: it waits
        walked = [p.id for p in result.passages if not p.filled]
        assert "b" not in {p.id for p in result.passages} and "a" in walked, (mode, walked)
        assert "z" not in walked or result.writes_behind == 0, (mode, walked)  # z is not in the old projection


def test_a_passage_deleted_while_a_projection_is_built_never_seeds_a_walk_of_it(held_refreshes, memory_factory, monkeypatch):
    """A projection is named by the graph version read before it is built, so a passage deleted meanwhile is not in
    it, while a query served from the older projection in between read the passages (the client keeps them) with
    that one still there. Walking the new projection from the kept passages seeded it, and GDS refused the walk
    ("sourceNodes nodes do not exist in the in-memory graph"); the query retried once on a newer projection,
    which the next deletion could catch the same way (a namespace written without pause). Here both happen."""
    memory = memory_factory()
    memory.index([PE(x, f"Ada Lovelace wrote note {x}.", ("Ada Lovelace", "wrote", f"note {x}"), "Ada Lovelace")
                  for x in "abcdef"])
    for mode in ("hipporag2", "entity-ppr") * 2:  # projections of both kinds; the second round reads the passages
        memory.query("Ada Lovelace wrote notes", mode=mode, entities=["Ada Lovelace"], recognition_filter=False)
    memory.index([PE("z", "Zebras live in Africa.", ("zebra", "lives in", "Africa"), "Africa")])
    written = memory.server.projections.namespace_version(memory.namespace)
    victims, build = ["b", "c"], projection.Projections._project

    def interleaved(self, tx, ns, kind, name):  # noqa: ANN001, ANN202
        if ns == memory.namespace and kind == "passage" and victims:
            # a query on the older projection (its seeds are in it: it does not wait) reads the passages ...
            memory.query("Ada Lovelace", mode="entity-ppr", entities=["Ada Lovelace"])
            memory.delete([victims.pop(0)])  # ... then a deletion commits before this projection reads the graph
        return build(self, tx, ns, kind, name)

    monkeypatch.setattr(projection.Projections, "_project", interleaved)
    result = memory.query("Ada Lovelace wrote notes", mode="hipporag2", recognition_filter=False, fresh=True)
    walked = [p.id for p in result.passages if not p.filled]
    assert result.graph_version == written, "answered from the projection it built, not from a later one"
    assert walked and "b" not in walked and set(walked) <= set("acdefz"), walked
    assert victims == ["c"]  # built once


def test_stale_queries_do_not_wait_for_a_projection_another_client_is_building(held_refreshes, memory_factory, driver, connection):
    """The projection lock is held (as by another process mid-projection): queries go on with the old
    projection, and a query that needs the current graph gets it once the lock is released."""
    memory = memory_factory()
    memory.index([P("a", "Ada Lovelace wrote notes.", ("Ada Lovelace", "wrote", "notes"))])
    old = memory.query("q", mode="hipporag1", entities=["Ada Lovelace"]).graph_version
    memory.index([P("b", "Ada Lovelace met Charles Babbage.", ("Ada Lovelace", "met", "Charles Babbage"))])
    with driver.session(database=connection.database) as session:
        tx = session.begin_transaction()
        tx.run("MERGE (l:HippoProjectionLock {ns: $ns, kind: 'phrase'}) SET l.at = timestamp()", ns=memory.namespace).consume()
        try:
            # a query that waited for the lock would wait until the rollback below: these finish while it is held
            results: list = []
            stale = threading.Thread(target=lambda: results.extend(
                memory.query("q", mode="hipporag1", entities=["Ada Lovelace"]) for _ in range(3)))
            stale.start()
            stale.join(REFRESH_DEADLINE_S)
            assert not stale.is_alive(), "a query that can walk the old projection waited for the lock"
            assert len(results) == 3 and all(r.graph_version == old and r.writes_behind > 0 for r in results)
            waiting: list = []
            needs_current = threading.Thread(target=lambda: waiting.append(
                memory.query("q", mode="hipporag1", entities=["Charles Babbage"])))
            needs_current.start()
            deadline = time.monotonic() + REFRESH_DEADLINE_S
            while not _blocked_on_projection_lock(driver, connection.database) and needs_current.is_alive() \
                    and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _blocked_on_projection_lock(driver, connection.database)  # waiting on the server for the lock
            assert needs_current.is_alive() and not waiting  # blocked on the lock, not failed
        finally:
            tx.rollback()
    needs_current.join(REFRESH_DEADLINE_S)
    current = memory.server.projections.namespace_version(memory.namespace)
    assert waiting and waiting[0].graph_version == current and waiting[0].passages[0].id == "b"


def test_a_client_killed_mid_projection_leaves_the_old_projection_and_no_lock(connection, driver, held_refreshes, memory_factory, tmp_path):
    memory = memory_factory()  # held_refreshes: this process leaves the projecting to the other
    memory.index([P(f"p{i}", f"Person {i} met person {i + 1}.", (f"person {i}", "met", f"person {i + 1}")) for i in range(200)])
    old = memory.query("q", mode="hipporag1", entities=["person 3"]).graph_version
    memory.index([P("new", "Person 3 met Ada Lovelace.", ("person 3", "met", "Ada Lovelace"))])
    # another process projects the new version and is killed while it holds the lock
    script = tmp_path / "project.py"
    script.write_text(
        "import sys, time\n"
        "from hippo_neo4j.config import ConnectionSettings\nfrom hippo_neo4j.db import connect\n"
        "d = connect(ConnectionSettings.from_env())\n"
        "with d.session(database=sys.argv[2]) as s:\n"
        "    tx = s.begin_transaction()\n"
        "    tx.run(\"MERGE (l:HippoProjectionLock {ns: $ns, kind: 'phrase'}) SET l.at = timestamp()\", ns=sys.argv[1]).consume()\n"
        "    print('locked', flush=True)\n"
        "    time.sleep(600)\n"
    )
    env = os.environ | {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_USER": connection.user,
                        "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value()}
    proc = subprocess.Popen([sys.executable, str(script), memory.namespace, connection.database], env=env,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        stale = memory.query("q", mode="hipporag1", entities=["person 3"])
        assert stale.graph_version == old and stale.writes_behind > 0
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    # the server releases the dead client's lock: the current graph is projected and answered from
    result = memory.query("q", mode="hipporag1", entities=["Ada Lovelace"])
    assert result.graph_version == Server.of(driver, connection.database).projections.namespace_version(memory.namespace)
    assert result.passages[0].id == "new"
