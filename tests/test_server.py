"""The local Neo4j + GDS runtime: lifecycle, configuration, faults, and GDS semantics we rely on."""

from __future__ import annotations

import json
import socket
import stat
import urllib.request

import numpy as np
import pytest
from click.testing import CliRunner

from hippo_neo4j.config import line_dir
from hippo_neo4j.db import namespace_labels
from hippo_neo4j.graph import projection
from hippo_neo4j.graph.server import Server
from hippo_neo4j.runtime import server
from hippo_neo4j.cli import cli
from hippo_neo4j.errors import JavaNotFoundError, ServerError

from .conftest import test_server_settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------------------ lifecycle


def test_start_status_stop_cycle_through_cli(tmp_path, monkeypatch, neo4j_server):
    """A second, throw-away instance: start, start again (no-op), status, stop, status."""
    settings = test_server_settings(
        port=_free_port(), http_port=_free_port(), server_dir=tmp_path / "srv", config_dir=tmp_path / "cfg",
        heap="512m", pagecache="128m",
    )
    settings = settings.model_copy(update={"server_dir": line_dir(tmp_path / "srv", settings.line)})  # the line's own
    env = {
        "HIPPO_NEO4J_PORT": str(settings.port),
        "HIPPO_NEO4J_HTTP_PORT": str(settings.http_port),
        "HIPPO_SERVER_DIR": str(tmp_path / "srv"),
        "HIPPO_CONFIG_DIR": str(settings.config_dir),
        "HIPPO_CACHE_DIR": str(settings.cache_dir),
        "HIPPO_NEO4J_HEAP": "512m",
        "HIPPO_NEO4J_PAGECACHE": "128m",
        "HIPPO_NEO4J_START_TIMEOUT": str(settings.start_timeout),
    }
    # a password that looks like an option (generated ones can start with "-") must still be set
    settings.config_dir.mkdir(parents=True)
    settings.password_file.write_text("-Starts-with_a-dash0123456789\n")
    settings.password_file.chmod(0o600)
    runner = CliRunner()
    try:
        first = runner.invoke(cli, ["neo4j", "start", "--json"], env=env, catch_exceptions=False)
        assert first.exit_code == 0, first.output
        started = json.loads(first.output)
        assert started["running"] and started["gds_version"] and started["neo4j_version"]
        assert started["uri"] == f"bolt://127.0.0.1:{settings.port}"

        again = runner.invoke(cli, ["neo4j", "start"], env=env)
        assert again.exit_code == 0 and "already running" in again.output

        st = runner.invoke(cli, ["neo4j", "status", "--json"], env=env)
        data = json.loads(st.output)
        assert data["pid"] == started["pid"] and data["data_dir"] == str(settings.server_dir / "data")
        assert data["gds_version"] == server.pinned_versions(settings.line)["gds"] and data["line"] == settings.line
        assert data["neo4j_version"] == server.pinned_versions(settings.line)["neo4j"]
        # auth is on and the generated password is private to the user
        pw = settings.password_file
        assert stat.S_IMODE(pw.stat().st_mode) == 0o600
        assert pw.read_text().strip() not in first.output + st.output

        conf = (settings.server_dir / "conf" / "neo4j.conf").read_text()
        assert "server.default_listen_address=127.0.0.1" in conf
        assert f"server.bolt.listen_address=127.0.0.1:{settings.port}" in conf
        assert "dbms.security.auth_enabled=true" in conf
        assert "dbms.security.procedures.unrestricted=gds.*" in conf
        assert "server.memory.heap.max_size=512m" in conf
        assert f"server.http.listen_address=127.0.0.1:{settings.http_port}" in conf
        # Neo4j Browser is served on loopback for exploring the graph
        with urllib.request.urlopen(f"http://127.0.0.1:{settings.http_port}/browser/", timeout=60) as page:
            assert page.status == 200 and b"Neo4j Browser" in page.read()
        assert started["browser"] == f"http://127.0.0.1:{settings.http_port}/browser/"
    finally:
        stopped = runner.invoke(cli, ["neo4j", "stop"], env=env)
    assert "stopped" in stopped.output, stopped.output
    after = runner.invoke(cli, ["neo4j", "status"], env=env)
    assert after.exit_code == 3 and "not running" in after.output
    assert not server.port_open(settings.port)


def test_wrong_password_is_a_clear_error_without_the_password(connection):
    from hippo_neo4j.db import connect_driver

    with pytest.raises(ServerError) as err:
        connect_driver(connection.uri, ("neo4j", "not-the-password-123"))
    assert "refused the credentials" in str(err.value)
    assert "not-the-password-123" not in str(err.value)


def test_port_taken_by_another_process_is_a_clear_error(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        settings = test_server_settings(port=port, server_dir=tmp_path / "srv", config_dir=tmp_path / "cfg")
        with pytest.raises(ServerError, match=f"Port {port} .* already taken"):
            server.start(settings)


def test_server_down_names_the_uri():
    from hippo_neo4j.db import connect_driver

    uri = f"bolt://127.0.0.1:{_free_port()}"
    with pytest.raises(ServerError, match=f"Cannot reach Neo4j at {uri}"):
        connect_driver(uri, None)


def test_java_too_old_names_the_jdk_and_paths(monkeypatch, tmp_path):
    old = tmp_path / "jdk8"
    (old / "bin").mkdir(parents=True)
    fake = old / "bin" / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_402"\' >&2\n')
    fake.chmod(0o755)
    monkeypatch.setattr(server, "_java_candidates", lambda settings: [old, tmp_path / "nowhere"])
    with pytest.raises(JavaNotFoundError) as err:
        server.find_java(test_server_settings())
    message = str(err.value)
    assert "Java 21+" in message and str(old) in message and "Java 8" in message
    assert "HIPPO_JAVA_HOME" in message


def test_half_assembled_runtime_is_rebuilt(tmp_path, neo4j_server):
    """An interrupted assembly (marker missing, or jars missing) is detected and rebuilt from Maven."""
    settings = test_server_settings(cache_dir=tmp_path / "cache")
    home = server.runtime_home(settings)
    (home / "lib").mkdir(parents=True)
    (home / "lib" / "neo4j-partial.jar").write_bytes(b"")
    assert not server.runtime_is_complete(home)
    assert server.ensure_runtime(settings) == home
    assert server.runtime_is_complete(home)
    assert not (home / "lib" / "neo4j-partial.jar").exists()
    assert any(p.name.startswith("proc-") for p in (home / "plugins").glob("*.jar"))
    assert not any(p.name.startswith("proc-") for p in (home / "lib").glob("*.jar"))
    # a jar lost after assembly is noticed too
    next((home / "plugins").glob("*.jar")).unlink()
    assert not server.runtime_is_complete(home)


def test_missing_artifact_error_names_it_and_the_alternative(tmp_path, monkeypatch):
    settings = test_server_settings(cache_dir=tmp_path / "cache")
    broken = server.pom_text().replace(
        "<artifactId>proc-sysinfo</artifactId>", "<artifactId>proc-does-not-exist</artifactId>"
    )
    monkeypatch.setattr(server, "pom_text", lambda: broken)
    with pytest.raises(server.RuntimeSetupError) as err:
        server.ensure_runtime(settings)
    assert "org.neo4j.gds:proc-does-not-exist" in str(err.value)
    assert "HIPPO_NEO4J_URI" in str(err.value)
    assert not server.runtime_home(settings).exists()


# ------------------------------------------------------------------------------------- GDS semantics


def power_iteration_ppr(n: int, edges: list[tuple[int, int, float]], reset: np.ndarray, damping: float) -> np.ndarray:
    """p = d * W^T p + (1 - d) * reset on the undirected weighted graph, W row-normalised."""
    w = np.zeros((n, n))
    for a, b, weight in edges:
        w[a, b] += weight
        w[b, a] += weight
    out = w.sum(axis=1, keepdims=True)
    trans = np.divide(w, out, out=np.zeros_like(w), where=out > 0)
    p = reset.copy()
    for _ in range(1000):
        p = damping * trans.T @ p + (1 - damping) * reset
    return p


def test_graph_queries_leave_no_line_in_the_server_logs(memory_factory, server_settings):
    """GDS writes each PageRank iteration to the logs at INFO whatever the walk asks for (70-180 lines a query), so a
    server answering queries rotated its logs every minute; the local server's log configuration sets GDS's loggers
    to WARN (``server.write_log_configs``)."""
    memory = memory_factory()
    memory.index([{"id": "a", "text": "Ada Lovelace wrote notes on the engine.",
                   "extraction": {"named_entities": ["Ada Lovelace"], "triples": [["Ada Lovelace", "wrote", "notes"]]}},
                  {"id": "b", "text": "Charles Babbage designed the engine.",
                   "extraction": {"named_entities": ["Charles Babbage"],
                                  "triples": [["Charles Babbage", "designed", "engine"]]}}])
    modes = ("hipporag1", "hipporag2", "entity-ppr")
    for mode in modes:  # the projections are built (that may log)
        memory.query("Who wrote notes?", mode=mode, entities=["Ada Lovelace"], recognition_filter=False)
    log = server.log_file(server_settings)
    start = log.stat().st_size
    walked = [memory.query("Who wrote notes?", mode=mode, entities=["Ada Lovelace"], recognition_filter=False) for mode in modes]
    assert all(r.passages and r.passages[0].id == "a" and not r.passages[0].filled for r in walked)
    data = log.read_bytes()
    written = data[start:] if len(data) >= start else data  # (rotated meanwhile: the new file)
    assert b"PageRank" not in written, written[-2000:].decode("utf-8", "replace")
    conf = (server_settings.server_dir / "conf" / "neo4j.conf").read_text()
    assert "server.logs.config=" in conf and "server.logs.user.config=" in conf


def test_weighted_personalised_pagerank_matches_numpy(driver):
    edges = [(0, 1, 1.0), (1, 2, 2.0), (2, 3, 0.5), (3, 0, 3.0), (1, 3, 1.5), (4, 5, 1.0), (2, 4, 0.25)]
    n = 6
    seeds = {0: 0.7, 5: 0.2, 2: 0.1}
    driver.execute_query("MATCH (n:PprTest) DETACH DELETE n")
    driver.execute_query(
        "UNWIND range(0, $n - 1) AS i CREATE (:PprTest {i: i}) "
        "WITH count(*) AS c UNWIND $edges AS e "
        "MATCH (a:PprTest {i: e[0]}), (b:PprTest {i: e[1]}) CREATE (a)-[:E {w: e[2]}]->(b)",
        n=n,
        edges=[[a, b, w] for a, b, w in edges],
    )
    driver.execute_query("CALL gds.graph.drop('ppr-test', false)")
    driver.execute_query(
        "MATCH (a:PprTest) OPTIONAL MATCH (a)-[r:E]->(b:PprTest) "
        "WITH gds.graph.project('ppr-test', a, b, {relationshipProperties: r {.w}}, "
        "{undirectedRelationshipTypes: ['*']}) AS g RETURN g.nodeCount"
    )
    for damping in (0.5, 0.85):
        records = driver.execute_query(
            "UNWIND $seeds AS s MATCH (n:PprTest {i: s[0]}) WITH collect([n, s[1]]) AS src "
            "CALL gds.pageRank.stream('ppr-test', {sourceNodes: src, dampingFactor: $d, "
            "relationshipWeightProperty: 'w', maxIterations: 200, tolerance: 1e-12}) YIELD nodeId, score "
            "RETURN gds.util.asNode(nodeId).i AS i, score",
            seeds=[[k, v] for k, v in seeds.items()],
            d=damping,
        ).records
        got = np.zeros(n)
        for r in records:
            got[r["i"]] = r["score"]
        reset = np.zeros(n)
        for k, v in seeds.items():
            reset[k] = v
        expected = power_iteration_ppr(n, edges, reset / reset.sum(), damping)
        assert np.allclose(got / got.sum(), expected / expected.sum(), atol=1e-6), (damping, got, expected)
        # the bias matters: with uniform seeds the answer is measurably different
        uniform = power_iteration_ppr(n, edges, (reset > 0) / 3.0, damping)
        assert not np.allclose(expected / expected.sum(), uniform / uniform.sum(), atol=1e-3)
    driver.execute_query("CALL gds.graph.drop('ppr-test', false)")
    driver.execute_query("MATCH (n:PprTest) DETACH DELETE n")


def test_projection_is_reused_and_rebuilt_after_a_write(driver, connection):
    ns = "projection-test"
    db = connection.database
    driver.execute_query("MATCH (n:Phrase {ns: $ns}) DETACH DELETE n", ns=ns)
    driver.execute_query("MATCH (n:HippoNamespace {name: $ns}) DELETE n", ns=ns)
    Server.of(driver, db).projections.drop(ns)

    def write(cypher_text: str) -> None:
        def work(tx):
            tx.run(cypher_text, ns=ns)
            projection.bump_version(tx, ns)

        with driver.session(database=db) as session:
            session.execute_write(work)

    write("CREATE (:Phrase {ns: $ns, text: 'a'})-[:RELATION {weight: 2}]->(:Phrase {ns: $ns, text: 'b'})")
    first = Server.of(driver, db).projections.ensure(ns)
    assert first.created and first.nodes == 2 and first.relationships == 2
    again = Server.of(driver, db).projections.ensure(ns)
    assert not again.created and again.name == first.name

    write("MATCH (b:Phrase {ns: $ns, text: 'b'}) CREATE (b)-[:SYNONYM {score: 0.9}]->(:Phrase {ns: $ns, text: 'c'})")
    rebuilt = Server.of(driver, db).projections.ensure(ns)
    assert rebuilt.created and rebuilt.name != first.name
    assert rebuilt.nodes == 3 and rebuilt.relationships == 4
    names = driver.execute_query("CALL gds.graph.list() YIELD graphName RETURN collect(graphName) AS g").records[0]["g"]
    assert rebuilt.name in names and first.name not in names  # the stale snapshot was dropped
    Server.of(driver, db).projections.drop(ns)
    driver.execute_query("MATCH (n:Phrase {ns: $ns}) DETACH DELETE n", ns=ns)
    driver.execute_query("MATCH (n:HippoNamespace {name: $ns}) DELETE n", ns=ns)


def test_projection_dropped_by_another_client_is_rebuilt(driver, connection):
    """A query never fails because someone dropped the namespace's projection behind our back."""
    from hippo_neo4j import HippoRAG

    ns = "projection-dropped-test"
    memory = HippoRAG(connection, namespace=ns, driver=driver, extractor=object())
    try:
        memory.index([{"id": "1", "text": "x", "extraction": {"triples": [["Ada Lovelace", "wrote", "notes"]]}}])
        first = memory.query("q", mode="hipporag1", entities=["Ada Lovelace"])
        Server.of(driver, connection.database).projections.drop(ns)  # as another client would
        projections = Server.of(driver, connection.database).projections
        version = projections.namespace_version(ns)
        projections._known[(ns, "phrase")] = projection.Projection(projections.graph_name(ns, version), version, 2, 2, False)
        again = memory.query("q", mode="hipporag1", entities=["Ada Lovelace"])
        assert [p.id for p in again.passages] == [p.id for p in first.passages] == ["1"]
    finally:
        memory.drop_namespace()


def test_a_projection_that_cannot_fit_the_heap_fails_at_once_with_the_figures(driver, connection):
    """GDS's estimate of the namespace's graph (from the count store, by its labels) is checked against the server's
    free heap before projecting."""
    ns = "estimate-test"
    db = connection.database
    driver.execute_query("MATCH (n:Phrase {ns: $ns}) DETACH DELETE n", ns=ns)
    driver.execute_query(  # labelled as the library writes phrases: the estimate reads the namespace's labels
        "UNWIND range(1, 200) AS i CREATE (:Phrase:$($label) {ns: $ns, text: 'p' + i})-[:RELATION {weight: 1}]->"
        "(:Phrase:$($label) {ns: $ns, text: 'q' + i})", ns=ns, label=namespace_labels(ns)["phrase"],
    )
    try:
        fits = Server.of(driver, db).projections.check_memory(ns)
        assert fits["nodes"] == 400 and fits["relationships"] == 200  # GDS counts each of the 200 edges once
        assert 0 < fits["bytes_min"] <= fits["bytes_max"] < fits["available_heap"] <= fits["max_heap"]
        with pytest.raises(ServerError) as err:
            Server.of(driver, db).projections.check_memory(ns, available=fits["bytes_min"] - 1)
        message = str(err.value)
        assert "400 nodes, 200 relationships" in message and "HIPPO_NEO4J_HEAP" in message
        assert f"{fits['max_heap'] / 2**20:,.0f} MiB" in message
    finally:
        driver.execute_query("MATCH (n:Phrase {ns: $ns}) DETACH DELETE n", ns=ns)
