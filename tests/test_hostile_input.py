"""Hostile and careless input on every surface: a property-based fuzz of ``hippo serve`` generated from its own
OpenAPI document (schemathesis: no 5xx, every answer in its schema, every 4xx one line), and the same limits and
rules through the Python client and the CLI (``hippo_neo4j/limits.py``). The MCP tools' side is in
tests/test_serve_mcp.py."""

from __future__ import annotations

import json
import uuid
from collections import Counter
import warnings

import httpx
import pytest
import schemathesis
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import negative_data_rejection

from hippo_neo4j import HippoRAG, limits
from hippo_neo4j.cli import cli
from hippo_neo4j.errors import ConfigError

from .conftest import NoExtractor
from .serving import free_port, hippo_env, indexed_namespace, start, stop, wait_healthy

KEY = "fuzz-key-0123456789abcdef"
EXAMPLES = 250  # per operation: six operations (/health has one request to make), over 1,000 requests a run


@pytest.fixture(scope="module")
def corpus(connection, driver):
    yield from indexed_namespace(connection, driver, "fuzz")


@pytest.fixture(scope="module")
def served(corpus, connection, tmp_path_factory):
    """``hippo serve`` with a key (so that schemathesis also checks that a wrong or missing key is refused), the
    corpus's namespace its default; the base URL and the server's log."""
    ns, _ = corpus
    port = free_port()
    log = tmp_path_factory.mktemp("fuzz") / "serve.log"
    process = start(["serve", "--port", str(port), "--extractor", "offline"],
                    hippo_env(connection, ns, HIPPO_API_KEY=KEY), log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base + "/health", process, log)
        yield base, log
    finally:
        stop(process)


@pytest.fixture(scope="module")
def api_schema(served):
    base, _ = served
    return schemathesis.openapi.from_url(base + "/openapi.json")


OPERATIONS = [("GET", "/health"), ("GET", "/modes"), ("POST", "/index"), ("POST", "/query"), ("POST", "/delete"),
              ("GET", "/stats"), ("POST", "/documents"), ("POST", "/documents/delete")]
HANG_S = 300  # a request's deadline: it only guards against a hang (a busy machine answers slowly, not wrongly)


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_the_api_holds_under_generated_requests(api_schema, corpus, method, path):
    """Requests generated from the OpenAPI document, valid and invalid ones (schemathesis): none gets a 5xx, every
    answer fits its schema and status codes, a wrong or missing key is refused, every 4xx is one line."""
    ns, _ = corpus
    operation = api_schema[path][method]
    answered: list[int] = []

    @given(case=st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                          operation.as_strategy(GenerationMode.NEGATIVE)))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def holds(case) -> None:
        if path in ("/index", "/documents") and isinstance(case.body, dict) and "namespace" in case.body:
            case.body["namespace"] = ns  # generated names would each create a namespace; reads may name any
        # every check but negative_data_rejection: pydantic's lax mode reads "fresh": 0 as false, which is kept
        response = case.call_and_validate(headers={"Authorization": f"Bearer {KEY}"},
                                          excluded_checks=[negative_data_rejection], timeout=HANG_S)
        answered.append(response.status_code)
        assert response.status_code < 500, response.text
        if response.status_code >= 400 and response.status_code != 405:
            body = response.json()
            assert set(body) == {"error"} and body["error"] and "\n" not in body["error"], response.text

    holds()
    assert answered and all(code < 500 for code in answered)
    print(method, path, len(answered), dict(Counter(answered)))  # pytest -s: the run's counts


def test_the_fuzz_run_left_no_server_error_in_the_log(served):
    """After the fuzz (module order): the server logged no failure and still answers."""
    base, log = served
    text = log.read_text(errors="replace")
    assert '" 500 ' not in text and "failed:" not in text and "Traceback" not in text
    assert httpx.get(base + "/health").status_code == 200


# ---------------------------------------------------------------------------------------------- the client and CLI


def test_the_client_enforces_the_same_limits(connection, driver, corpus):
    ns, docs = corpus
    with HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()) as memory:
        for call, says in (
            (lambda: memory.query("a" * (limits.QUERY_CHARS + 1)), f"the limit is {limits.QUERY_CHARS:,}"),
            (lambda: memory.query("x", entities=[f"e{i}" for i in range(10_000)]), f"the limit is {limits.ENTITIES}"),
            (lambda: memory.query("x", entities=["e" * (limits.ENTITY_CHARS + 1)]), f"the limit is {limits.ENTITY_CHARS}"),
            (lambda: memory.query("x", top_k=limits.TOP_K + 1), f"from 1 to {limits.TOP_K}"),
            (lambda: memory.query("x", top_k=0), f"from 1 to {limits.TOP_K}"),
            (lambda: memory.query("x", filters={f"k{i}": 1 for i in range(limits.FILTER_CONDITIONS + 1)}),
             f"the limit is {limits.FILTER_CONDITIONS}"),
        ):
            with pytest.raises(ConfigError, match=says):
                call()
        for mode in ("entity-ppr", "hipporag1", "dense", "bm25"):
            empty = memory.query(" \n", mode=mode)
            assert empty.passages == [] and empty.warning == "the query is empty: nothing to retrieve"
        with pytest.warns(DeprecationWarning, match="recognition_filter"):
            old = memory.query(docs[0].text[:80], mode="hipporag2", filter=False)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            new = memory.query(docs[0].text[:80], mode="hipporag2", recognition_filter=False)
        assert [p.id for p in old.passages] == [p.id for p in new.passages] and new.recognition_filter == "off"
    for name in ("", "   ", "a\nb", "nul\x00", "n" * (limits.NAMESPACE_CHARS + 1)):
        with pytest.raises(ConfigError, match="namespace"):
            HippoRAG(connection, namespace=name, driver=driver, extractor=NoExtractor())


def test_the_cli_enforces_the_same_limits_and_escapes_what_it_prints(connection, driver, corpus):
    ns, docs = corpus
    runner = CliRunner()
    env = hippo_env(connection, ns)
    out = runner.invoke(cli, ["query", "a" * (limits.QUERY_CHARS + 1), "--mode", "dense"], env=env)
    assert out.exit_code == 1 and f"the limit is {limits.QUERY_CHARS:,}" in out.output
    entities = "|".join(f"e{i}" for i in range(limits.ENTITIES + 1))
    out = runner.invoke(cli, ["query", "x", "--mode", "hipporag1", "--entities", entities], env=env)
    assert out.exit_code == 1 and f"the limit is {limits.ENTITIES}" in out.output
    out = runner.invoke(cli, ["query", "x", "--top-k", str(limits.TOP_K + 1)], env=env)
    assert out.exit_code == 2 and str(limits.TOP_K) in out.output
    for name in ("   ", "a\nb"):
        out = runner.invoke(cli, ["query", "x", "--namespace", name], env=env)
        assert out.exit_code == 1 and "namespace" in out.output and "Traceback" not in out.output, name
    out = runner.invoke(cli, ["query", "  ", "--mode", "dense"], env=env)
    assert out.exit_code == 0 and "the query is empty" in out.output
    # --no-recognition-filter, and its deprecated name beside --filter, still read with a warning
    question = docs[0].text[:80]
    for flag, warned in (("--no-recognition-filter", False), ("--no-filter", True)):
        out = runner.invoke(cli, ["query", question, "--mode", "hipporag2", "--json", flag], env=env)
        assert out.exit_code == 0 and json.loads(out.stdout)["recognition_filter"] == "off"
        assert ("--no-filter is deprecated" in out.stderr) == warned
    # an id and a title with a newline and a bell: printed escaped, on their line
    odd = f"odd-{uuid.uuid4().hex[:6]}"
    with HippoRAG(connection, namespace=odd, driver=driver, extractor=NoExtractor()) as memory:
        memory.index([{"id": "line\nbreak\x07", "title": "Bell\x07 title", "text": "Zyxwvut quarry lies in Qorvath.",
                       "extraction": {"named_entities": ["Zyxwvut quarry", "Qorvath"],
                                      "triples": [["Zyxwvut quarry", "lies in", "Qorvath"]]}}])
        try:
            out = runner.invoke(cli, ["query", "Zyxwvut quarry", "--mode", "bm25", "--namespace", odd], env=env)
            assert out.exit_code == 0 and "line\\nbreak\\x07" in out.output and "Bell\\x07 title" in out.output
            assert "\x07" not in out.output and "line\nbreak" not in out.output
            out = runner.invoke(cli, ["delete", "gone\nid\x00", "--namespace", odd], env=env)
            assert out.exit_code == 0 and "gone\\nid\\x00" in out.output and "\x00" not in out.output
        finally:
            memory.drop_namespace()


def test_import_openie_names_a_doc_that_is_no_object_and_exits_1(connection, driver, tmp_path):
    ns = f"openie-{uuid.uuid4().hex[:6]}"
    path = tmp_path / "openie_bad.json"
    good = {"idx": 0, "title": "Qorvath", "passage": "Qorvath\nZyxwvut quarry lies in Qorvath.",
            "extracted_entities": ["Zyxwvut quarry", "Qorvath"],
            "extracted_triples": [["Zyxwvut quarry", "lies in", "Qorvath"]]}
    path.write_text(json.dumps({"docs": [good, 42, ["x"]]}), encoding="utf-8")
    out = CliRunner().invoke(cli, ["import-openie", str(path), "--namespace", ns], env=hippo_env(connection, ns))
    try:
        assert out.exit_code == 1 and "#1: not a passage object: int 42" in out.output
        assert "#2: not a passage object: a list (1 item)" in out.output and "2 of 3 items were not indexed" in out.output
        with HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()) as memory:
            assert memory.stats()["passages"] == 1
    finally:
        with HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()) as memory:
            memory.drop_namespace()
