"""The support matrix: what the server can do is probed (graph/capabilities.py), the statement forms follow from it,
and every line gives the same rankings. Runs against the suite's server of either line (HIPPO_NEO4J_LINE;
`make test-compat` runs this file and the reference tests against Neo4j 5.26 + GDS 2.13)."""

from __future__ import annotations

import dataclasses
import json
import logging

import numpy as np
import pytest
from click.testing import CliRunner
from neo4j.exceptions import ClientError
from neo4j.vector import Vector

from hippo_neo4j import HippoConfig
from hippo_neo4j.cli import cli
from hippo_neo4j.config import NEO4J_LINES, ServerSettings
from hippo_neo4j.db import cypher
from hippo_neo4j.errors import ServerError
from hippo_neo4j.extract.offline import OfflineExtractor
from hippo_neo4j.graph import projection, reset
from hippo_neo4j.graph.passage_vectors import vector_rows
from hippo_neo4j.graph.server import Server
from hippo_neo4j.runtime import server

from .test_core import P

GRAPH_MODES = ("entity-ppr", "entity-ppr-first-hop", "entity-ppr-walk", "entity-ppr-relevance", "hipporag1", "hybrid", "hipporag2",
               "hipporag2-top5", "hipporag2-no-passage-nodes", "hipporag2-entity-linking")


def _assume(monkeypatch, driver, **changes):
    """This connection's capabilities with ``changes`` (what a server lacking them would have told the probe)."""
    server = Server.of(driver)
    monkeypatch.setattr(server, "_capabilities", dataclasses.replace(server.capabilities, **changes))


def test_the_probe_tells_what_the_server_does_and_is_asked_once_a_connection(driver, server_settings, memory_factory):
    caps = Server.of(driver).capabilities
    assert Server.of(driver).capabilities is caps  # probed once for the driver and database
    assert caps.neo4j_version == server.pinned_versions(server_settings.line)["neo4j"]
    assert caps.gds_version == server.pinned_versions(server_settings.line)["gds"] and caps.gds_allowed
    memory = memory_factory()
    memory.index([P("a", "Ann met Bob.", ("Ann", "met", "Bob"))])
    graph = Server.of(driver, "neo4j").projections.ensure(memory.namespace)
    weighted = ("MATCH (p:Phrase {ns: $ns}) WITH p LIMIT 1 "
                "CALL gds.pageRank.stream($graph, {sourceNodes: [[p, 0.5]]}) YIELD nodeId RETURN count(*) AS n")
    try:
        driver.execute_query(weighted, graph=graph.name, ns=memory.namespace)
        runs = True
    except ClientError as exc:
        assert "sourceNodes" in str(exc)
        runs = False
    assert caps.weighted_sources is runs
    heap = Server.of(driver, "neo4j").projections.server_heap()
    assert caps.sys_info and 0 < heap["available_heap"] <= heap["max_heap"]
    assert caps.vector_procedures
    # a VECTOR value reaches the client where the server speaks Cypher 25 (Bolt 6 with this driver)
    assert caps.vector_values is ("25" in caps.cypher_versions)


def test_embeddings_read_in_bulk_are_the_same_packed_as_vectors_or_as_lists(driver, memory_factory, monkeypatch):
    memory = memory_factory()
    memory.index([P("a", "Ann met Bob.", ("Ann", "met", "Bob")), P("b", "Bob met Carl.", ("Bob", "met", "Carl"))])
    server = Server.of(driver)
    if not server.capabilities.vector_values:
        assert all(server.statement(name) == cypher(name) for name in ("passage_vectors", "phrase_vectors"))
        pytest.skip("this server sends no VECTOR values: every statement reads embeddings as lists, as tested elsewhere")
    reads = {}
    for packed in (True, False):
        _assume(monkeypatch, driver, vector_values=packed)
        assert server.statement("passage_vectors").startswith("CYPHER 25 ") is packed
        assert server.statement("phrase_embeddings") == cypher("phrase_embeddings")  # one vector a row: unchanged
        passages = memory.store.run("passage_vectors", vectors=True)[0]
        assert len(passages["embeddings"]) == 2
        assert all(isinstance(e, Vector) is packed for e in passages["embeddings"])
        assert memory.store.run("passage_vectors", vectors=False)[0]["embeddings"] == []
        reads[packed] = [vector_rows(passages["embeddings"]),
                         vector_rows(memory.store.run("passage_vectors_of", nodes=passages["nodes"][1:])[0]["embeddings"]),
                         vector_rows(memory.store.run("phrase_vectors", vectors=True)[0]["embeddings"])]
    for got, want in zip(reads[True], reads[False]):
        assert got.dtype == np.float32 and got.shape == want.shape and got.shape[1] == memory.encoder.dimension
        assert np.array_equal(got, want)
    assert reads[True][0].shape[0] == 2 and reads[True][1].shape[0] == 1 and reads[True][2].shape[0] >= 3


def test_sums_of_unweighted_walks_rank_and_score_as_the_weighted_walk(driver, on_musique10, musique10, monkeypatch):
    """Every graph mode on musique10's questions: the statements as a GDS without weighted sourceNodes runs them
    (cypher/weighted_reset.cypher, over projections with the passages' feeders) give the weighted walk's top 10
    and scores to 1e-6. Where the server itself
    takes no weighted sourceNodes the reference tests compare its walks with the in-process reference instead."""
    if not Server.of(driver).capabilities.weighted_sources:
        pytest.skip("this server takes no weighted sourceNodes: test_*_equals_the_inprocess_reference cover it")
    small, _ = musique10
    # Both converged, not truncated alike. The two forms' masses differ by up to ~20x the tolerance, and the agreement
    # and the hop read the entity walk's ranks down to 10x it: at 1e-10 a passage at rank 113 of one question's
    # entity walk moved two places and the hop's 5th and 6th swapped. At 1e-12 ranks still move in the tail (263 of
    # 4,931 on these questions, the hop's source weights by 3.5 % at most), too deep to reorder a top 10 here.
    memory = on_musique10(config=HippoConfig(ppr_tolerance=1e-12))
    names = OfflineExtractor()
    entities = {q.id: names.query_entities(q.question) for q in small.questions}

    def rankings():
        return {(mode, q.id): [(p.id, p.score) for p in memory.query(
            q.question, mode=mode, top_k=10, entities=entities[q.id]).passages]
            for mode in GRAPH_MODES for q in small.questions}

    weighted = rankings()
    _assume(monkeypatch, driver, weighted_sources=False)
    summed = rankings()
    for key, want in weighted.items():
        got = summed[key]
        assert [pid for pid, _ in got] == [pid for pid, _ in want], key
        np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=1e-6, err_msg=str(key))


def test_every_ppr_statement_has_a_form_for_unweighted_sources():
    for name in ("ppr_passages", "ppr2_passages", "entity_ppr_passages", "entity_walk"):
        text = reset.statement(name, weighted_sources=False)
        assert "sourceNodes: resetLevel.members" in text and "x[1]]] AS passageSources" not in text.split("CALL (*)")[-1]
        assert text.count("gds.pageRank.stream(") == reset.statement(name, weighted_sources=True).count("gds.pageRank.stream(")
    assert reset.statement("stats", weighted_sources=False) == reset.statement("stats", weighted_sources=True)
    for kind, (_, name) in projection.KINDS.items():
        fed = reset.projection(name, kind, weighted_sources=False)
        assert ("FEEDS" in fed) is (kind != "phrase") and reset.projection(name, kind, weighted_sources=True) == \
            reset.statement(name, weighted_sources=True)


def test_without_sysinfo_the_memory_check_is_skipped_with_one_notice(driver, memory_factory, monkeypatch, caplog):
    memory = memory_factory()
    memory.index([P("a", "Ann met Bob.", ("Ann", "met", "Bob"))])
    _assume(monkeypatch, driver, sys_info=False, problems={"sys_info": "NoSuchMethodError"})
    monkeypatch.setattr(Server.of(driver), "_noticed", set())
    with caplog.at_level(logging.WARNING, logger="hippo_neo4j.graph.server"):
        first = Server.of(driver, "neo4j").projections.check_memory(memory.namespace, available=None)
        Server.of(driver, "neo4j").projections.check_memory(memory.namespace)
        result = memory.query("Whom did Ann meet?", mode="hipporag1", entities=["Ann"], fresh=True)
    assert first["available_heap"] is None and first["bytes_min"] > 0
    notices = [r for r in caplog.records if "sysInfo" in r.getMessage()]
    assert len(notices) == 1 and "\n" not in notices[0].getMessage() and "NoSuchMethodError" in notices[0].getMessage()
    assert result.passages[0].id == "a" and not result.fell_back


def test_hippo_doctor_reports_the_server_its_namespaces_and_a_fix_for_each_problem(connection, memory_factory, driver):
    memory = memory_factory()
    memory.index([P("a", "Ann met Bob.", ("Ann", "met", "Bob"))])
    env = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value()}
    out = CliRunner().invoke(cli, ["doctor", "--json"], env=env)
    assert out.exit_code in (0, 2), out.output
    report = json.loads(out.output)
    caps = Server.of(driver).capabilities
    assert report["server"]["neo4j"] == caps.neo4j_version and report["gds"]["version"] == caps.gds_version
    assert report["gds"]["weighted_sources"] is caps.weighted_sources and report["gds"]["allowed"]
    assert "gds.*" in report["settings"]["dbms.security.procedures.unrestricted"]
    ns = next(n for n in report["namespaces"] if n["name"] == memory.namespace)
    assert ns["passages"] == 1 and ns["phrases"] >= 2 and ns["encoder"] == memory.encoder.name
    assert report["memory"]["largest_projection"]["bytes_min"] > 0 and report["memory"]["max_heap"] > 0
    assert any(i["dimension"] == memory.encoder.dimension and i["state"] == "ONLINE" for i in report["vector_indexes"])
    assert all(p["fix"] for p in report["problems"])
    assert any("weighted sourceNodes" in p["problem"] for p in report["problems"]) is not caps.weighted_sources
    assert out.exit_code == (2 if any(p["severity"] == "error" for p in report["problems"]) else 0)
    text = CliRunner().invoke(cli, ["doctor"], env=env).output
    assert f"Neo4j {caps.neo4j_version}" in text and memory.namespace in text and "problems" in text


def test_each_line_has_its_versions_java_and_a_data_directory_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("HIPPO_SERVER_DIR", str(tmp_path / "server"))
    dirs = {}
    for line in NEO4J_LINES:
        monkeypatch.setenv("HIPPO_NEO4J_LINE", line)
        settings = ServerSettings.from_env()
        dirs[line] = settings.server_dir
        assert settings.line == line and server.runtime_home(settings).name == (
            "neo4j-{neo4j}-gds-{gds}".format(**server.pinned_versions(line)))
        java = server.find_java(settings)
        assert java.version in server.JAVA_VERSIONS[line] or (line == NEO4J_LINES[0] and java.version > 21)
        server.claim_line(settings)
    assert len(set(dirs.values())) == len(NEO4J_LINES)
    other = dirs[NEO4J_LINES[1]]
    monkeypatch.setenv("HIPPO_NEO4J_LINE", NEO4J_LINES[0])
    settings = ServerSettings.from_env().model_copy(update={"server_dir": other})
    with pytest.raises(ServerError, match=f"holds the store of the Neo4j {NEO4J_LINES[1]} line"):
        server.claim_line(settings)
    monkeypatch.setenv("HIPPO_NEO4J_LINE", "4.4")
    with pytest.raises(Exception, match="choose one of 2026.01, 5.26"):
        ServerSettings.from_env()
