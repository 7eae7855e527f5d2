"""Test fixtures: one real Neo4j + GDS server for the whole session.

The suite runs against a dedicated local instance (its own port, data directory and generated password),
never the user's server. It reuses an instance that is already running and stops only what it started.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from hippo_neo4j import HippoRAG
from hippo_neo4j import evaluation as ev
from hippo_neo4j.graph.server import Server
from hippo_neo4j.models import content_hash
from hippo_neo4j.runtime import server
from hippo_neo4j.config import ConnectionSettings, ServerSettings, line_dir
from hippo_neo4j.db import connect

from .fake_openai import fake_openai, llm_env, musique_docs  # noqa: F401 - fixtures for every test module

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
DATASETS = Path(os.environ.get("HIPPO_DATASETS", SHARED / "datasets"))


def test_server_settings(**overrides: object) -> ServerSettings:
    base = ServerSettings.from_env()
    state = Path(os.environ.get("HIPPO_TEST_DIR", Path(tempfile.gettempdir()) / "hippo-neo4j-test"))
    values = {
        "port": int(os.environ.get("HIPPO_TEST_NEO4J_PORT", "17687")),
        "http_port": int(os.environ.get("HIPPO_TEST_NEO4J_HTTP_PORT", "0")),
        "server_dir": line_dir(state / "server", base.line),
        "config_dir": state / "config",
        "heap": os.environ.get("HIPPO_TEST_NEO4J_HEAP", "2g"),
        "pagecache": os.environ.get("HIPPO_TEST_NEO4J_PAGECACHE", "1g"),
        "auth": True,
        # waiting for Bolt + GDS: a generous bound that only guards against a hang on a busy machine
        "start_timeout": float(os.environ.get("HIPPO_TEST_NEO4J_START_TIMEOUT", "600")),
    }
    values.update(overrides)
    return base.model_copy(update=values)


test_server_settings.__test__ = False  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def server_settings() -> ServerSettings:
    return test_server_settings()


@pytest.fixture(scope="session")
def neo4j_server(server_settings: ServerSettings):
    """The running test server; started here (and stopped at the end) unless already up."""
    was_running = server.status(server_settings).running
    st = server.start(server_settings, say=print)
    yield st
    if not was_running:
        server.stop(server_settings)


@pytest.fixture(scope="session")
def connection(neo4j_server, server_settings: ServerSettings) -> ConnectionSettings:
    password = server_settings.password()
    return ConnectionSettings(
        uri=server_settings.uri, password=password, database="neo4j", namespace="test"
    )


@pytest.fixture(scope="session")
def driver(connection: ConnectionSettings):
    drv = connect(connection)
    yield drv
    drv.close()


class NoExtractor:
    """For tests that supply every extraction: calling the extractor is a test failure."""

    name = "none"

    def extract(self, passages):
        raise AssertionError(f"extractor called for {[p.passage_id for p in passages]}")

    def query_entities(self, text):
        raise AssertionError("query entities must be given explicitly in these tests")


@pytest.fixture
def memory_factory(connection, driver):
    """HippoRAG clients on fresh namespaces (dropped afterwards). The extractor defaults to NoExtractor;
    pass ``extractor=None`` for the configured one."""
    made = []

    def make(namespace: str | None = None, **kwargs):
        ns = namespace or f"t-{uuid.uuid4().hex[:8]}"
        kwargs.setdefault("extractor", NoExtractor())
        memory = HippoRAG(connection, namespace=ns, driver=driver, **kwargs)
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.drop_namespace()


def question_subset(dataset: ev.Dataset, questions: int) -> ev.Dataset:
    """The first questions and only their paragraphs (gold and distractors) as the corpus."""
    raw = json.loads((dataset.root / "questions.json").read_text())[:questions]
    wanted = {content_hash(p["title"], p["paragraph_text"]) for q in raw for p in q["paragraphs"]}
    passages = [p for p in dataset.passages if p.hash in wanted]
    return ev.Dataset(dataset.name, dataset.root, passages, dataset.questions[:questions], dataset.openie)


@pytest.fixture(scope="session")
def musique10(connection, driver):
    """The paragraphs of musique_train's first 10 questions with their GPT-3.5 OpenIE, indexed once for the
    run: (the dataset, its namespace). Tests only read it; one that wrote would fail at the end of the run."""
    small = question_subset(ev.load_dataset(DATASETS / "musique_train"), 10)
    memory = HippoRAG(connection, namespace=f"t-musique10-{uuid.uuid4().hex[:6]}", driver=driver,
                      extractor=NoExtractor())
    ev.ensure_index(memory, small)
    version = Server.of(driver, connection.database).projections.namespace_version(memory.namespace)
    yield small, memory.namespace
    written = Server.of(driver, connection.database).projections.namespace_version(memory.namespace) != version
    memory.drop_namespace()
    assert not written, "a test wrote into the shared musique10 namespace"


@pytest.fixture
def on_musique10(musique10, connection, driver):
    """HippoRAG clients on the shared musique10 namespace (never dropped here); the extractor defaults to
    NoExtractor, ``extractor=None`` gives the configured one."""

    def make(**kwargs):
        kwargs.setdefault("extractor", NoExtractor())
        return HippoRAG(connection, namespace=musique10[1], driver=driver, **kwargs)

    return make


def stop_throwaway(settings: ServerSettings, deadline_s: float = 120) -> None:
    """End a throw-away server whose data is discarded: SIGKILL, no graceful shutdown to wait for."""
    pid = server.running_pid(settings)
    if pid is None:
        return
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + deadline_s  # only guards against a hang
    while server.running_pid(settings) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.running_pid(settings) is None, f"the throw-away server (pid {pid}) outlived SIGKILL"


@pytest.fixture(autouse=True)
def no_llm_from_the_environment(monkeypatch):
    """Tests never reach a real LLM: those that want one start the fake server and set these themselves."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "HIPPO_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
