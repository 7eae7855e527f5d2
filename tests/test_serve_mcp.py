"""``hippo mcp``: the MCP server through the SDK's own client, over stdio (the client starts ``hippo mcp``)
and over streamable HTTP; every tool is called and its answer checked against the graph."""

from __future__ import annotations

import json
import subprocess
import time

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from hippo_neo4j import HippoRAG, limits

from .conftest import NoExtractor
from .serving import HIPPO, free_port, hippo_env, indexed_namespace, start, stop

TOOLS = {"remember", "recall", "forget", "describe", "remember_document", "forget_document"}


@pytest.fixture(scope="module")
def corpus(connection, driver):
    yield from indexed_namespace(connection, driver, "serve-mcp")


def structured(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def _exercise(client: Client, ns: str, docs) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    assert "namespace" in tools["recall"].input_schema["properties"]
    assert {"query", "mode", "top_k", "filters"} <= set(tools["recall"].input_schema["properties"])

    described = structured(await client.call_tool("describe", {}))
    assert described["namespace"] == ns and described["passages"] == len(docs)
    assert "hipporag2" in described["modes"]

    doc = docs[7]
    for mode in ("hipporag1", "hipporag2", "dense"):
        recalled = structured(await client.call_tool("recall", {"query": doc.text[:200], "mode": mode, "top_k": 3}))
        assert len(recalled["passages"]) == 3 and recalled["namespace"] == ns
        assert recalled["cypher"].startswith("//") and "explanation" in recalled
        if mode == "dense":
            assert recalled["passages"][0]["id"] == doc.id  # its own text finds it
    hr1 = structured(await client.call_tool("recall", {"query": doc.text[:200], "mode": "hipporag1"}))
    assert hr1["explanation"]["entities"] and hr1["explanation"]["linked"]
    assert any(p["via"] for p in hr1["passages"])

    stored = structured(await client.call_tool("remember", {"passages": [
        {"id": "mcp-1", "title": "Vexillology Club", "text": "Quillon Dravemark founded the Vexillology Club of Ostrava."}]}))
    assert stored["indexed"] == 1
    found = structured(await client.call_tool("recall", {"query": "Quillon Dravemark Vexillology", "mode": "bm25", "top_k": 1}))
    assert found["passages"][0]["id"] == "mcp-1"
    assert structured(await client.call_tool("describe", {}))["passages"] == len(docs) + 1
    labelled = structured(await client.call_tool("remember", {"passages": [
        {"id": "mcp-2", "text": "Quillon Dravemark also founded a chess club.", "metadata": {"user": "q", "year": 2026}}]}))
    assert labelled["indexed"] == 1
    only = structured(await client.call_tool("recall", {"query": "What did Quillon Dravemark found?", "mode": "dense",
                                                        "filters": {"user": "q", "year": {">": 2000}}}))
    assert only["filtered_passages"] == 1 and [p["id"] for p in only["passages"]] == ["mcp-2"]
    assert only["passages"][0]["metadata"] == {"user": "q", "year": 2026}
    bad_filter = await client.call_tool("recall", {"query": "x", "filters": {"user": {"like": "q"}}})
    assert bad_filter.is_error and "filter 'user': unknown operator 'like'" in bad_filter.content[0].text
    forgotten = structured(await client.call_tool("forget", {"ids": ["mcp-1", "mcp-2", "nope"]}))
    assert forgotten["deleted"] == 2 and forgotten["missing"] == ["nope"]
    assert structured(await client.call_tool("describe", {"namespace": ns}))["passages"] == len(docs)

    bad = await client.call_tool("recall", {"query": "x", "mode": "no-such-mode"})
    assert bad.is_error and "Unknown mode" in bad.content[0].text
    missing = await client.call_tool("describe", {"namespace": "no-such-namespace"})
    assert missing.is_error and "no passages" in missing.content[0].text
    assert (await client.call_tool("recall", {"query": "x", "top_k": 0})).is_error
    # the limits and rules of every surface (hippo_neo4j/limits.py), with the same messages
    assert (await client.call_tool("recall", {"query": "x", "top_k": limits.TOP_K + 1})).is_error
    widest = structured(await client.call_tool("recall", {"query": doc.text[:200], "mode": "dense", "top_k": limits.TOP_K}))
    assert len(widest["passages"]) == min(limits.TOP_K, len(docs))
    long = await client.call_tool("recall", {"query": "a " * limits.QUERY_CHARS})
    assert long.is_error and f"the limit is {limits.QUERY_CHARS:,}" in long.content[0].text
    for name in ("", "   ", "a\nb"):
        unnamed = await client.call_tool("recall", {"query": "x", "namespace": name})
        assert unnamed.is_error and "namespace" in unnamed.content[0].text, name
    empty = structured(await client.call_tool("recall", {"query": "  "}))
    assert empty["passages"] == [] and "empty" in empty["explanation"]["warning"]


def test_stdio_list_and_call_every_tool(connection, corpus, tmp_path):
    ns, docs = corpus
    params = StdioServerParameters(command=HIPPO[0], args=[*HIPPO[1:], "mcp", "--extractor", "offline"],
                                   env=hippo_env(connection, ns))

    async def main() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            await _exercise(client, ns, docs)

    anyio.run(main)


HANDBOOK = ("# Harbour handbook\n\n## Tides\n\nThe Quillmere tide gauge was installed by Orsolya Venkatraman in 1911.\n\n"
            "## Boats\n\nThe harbour keeps three pilot boats painted saffron yellow.\n")


def test_stdio_remember_recall_and_forget_a_document(connection, driver, corpus):
    ns, _ = corpus
    docs_ns = f"serve-mcp-docs-{int(time.time() * 1000)}"
    params = StdioServerParameters(command=HIPPO[0], args=[*HIPPO[1:], "mcp", "--extractor", "offline"],
                                   env=hippo_env(connection, ns))

    async def main() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert {"id", "text", "namespace"} == set(tools["remember_document"].input_schema["properties"])
            document = {"id": "guide/harbour.md", "text": HANDBOOK, "namespace": docs_ns}
            stored = structured(await client.call_tool("remember_document", document))
            assert stored["namespace"] == docs_ns and stored["documents"] == 1 and stored["documents_unchanged"] == 0
            assert stored["passages"] == 2 and stored["indexed"] == 2 and stored["skipped"] == []  # one per section
            again = structured(await client.call_tool("remember_document", document))
            assert again["documents_unchanged"] == 1 and again["indexed"] == 0

            found = structured(await client.call_tool("recall", {
                "query": "Who installed the Quillmere tide gauge?", "mode": "bm25", "top_k": 1, "namespace": docs_ns}))
            top = found["passages"][0]
            assert top["metadata"]["document"] == "guide/harbour.md" and top["title"] == "Tides", found
            only = structured(await client.call_tool("recall", {
                "query": "pilot boats", "mode": "dense", "namespace": docs_ns, "filters": {"document": "guide/harbour.md"}}))
            assert only["filtered_passages"] == 2

            # a changed section: only its passage is replaced
            changed = dict(document, text=HANDBOOK.replace("saffron yellow", "cobalt blue"))
            updated = structured(await client.call_tool("remember_document", changed))
            assert updated["indexed"] == 1 and updated["passages_removed"] == 1 and updated["documents_unchanged"] == 0
            assert structured(await client.call_tool("describe", {"namespace": docs_ns}))["documents"] == 1

            for bad, words in (({"id": "notes.docx", "text": "x"}, "unsupported file type '.docx'"),
                               ({"id": "../up.md", "text": "x"}, "'..'"),
                               ({"id": "report.pdf", "text": "x"}, "base64"),
                               ({"id": "empty.md", "text": "   "}, "empty")):
                refused = await client.call_tool("remember_document", {**bad, "namespace": docs_ns})
                assert refused.is_error and words in refused.content[0].text, refused.content

            forgotten = structured(await client.call_tool("forget_document", {"id": "guide/harbour.md",
                                                                              "namespace": docs_ns}))
            assert forgotten["namespace"] == docs_ns and forgotten["deleted"] == 2 and forgotten["missing"] == []
            twice = structured(await client.call_tool("forget_document", {"id": "guide/harbour.md", "namespace": docs_ns}))
            assert twice["deleted"] == 0 and twice["missing"] == ["guide/harbour.md"]
            described = structured(await client.call_tool("describe", {"namespace": docs_ns}))
            assert described["documents"] == 0 and described["passages"] == 0
            missing = await client.call_tool("forget_document", {"id": "x.md", "namespace": "no-such-namespace"})
            assert missing.is_error and "no passages" in missing.content[0].text

    try:
        anyio.run(main)
    finally:
        HippoRAG(connection, namespace=docs_ns, driver=driver, extractor=NoExtractor()).drop_namespace()


def test_streamable_http(connection, corpus, tmp_path):
    ns, docs = corpus
    port = free_port()
    log = tmp_path / "mcp.log"
    process = start(["mcp", "--transport", "http", "--port", str(port), "--extractor", "offline"],
                    hippo_env(connection, ns), log)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        import time

        deadline = time.monotonic() + 300  # only guards against a hang
        while True:
            try:
                httpx.get(url, timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
                time.sleep(0.3)

        async def main() -> None:
            async with Client(url, read_timeout_seconds=300) as client:
                await _exercise(client, ns, docs)

        anyio.run(main)
    finally:
        stop(process)


def test_http_transport_off_loopback_needs_a_key(connection, corpus, tmp_path):
    ns, _ = corpus
    port = free_port()
    refused = subprocess.run([*HIPPO, "mcp", "--transport", "http", "--host", "0.0.0.0", "--port", str(port)],
                             env=hippo_env(connection, ns), capture_output=True, text=True, timeout=300)
    assert refused.returncode == 1 and "HIPPO_API_KEY" in refused.stderr
    key = "mcp-key-0123456789abcdef"
    log = tmp_path / "mcp.log"
    process = start(["mcp", "--transport", "http", "--host", "0.0.0.0", "--port", str(port), "--extractor", "offline"],
                    hippo_env(connection, ns, HIPPO_API_KEY=key), log)
    try:
        import time

        deadline = time.monotonic() + 300  # only guards against a hang
        while True:
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/mcp", json={}, timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
                time.sleep(0.3)
        assert r.status_code == 401
        wrong = httpx.post(f"http://127.0.0.1:{port}/mcp", json={}, headers={"Authorization": "Bearer x" * 3})
        assert wrong.status_code == 401
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        ok = httpx.post(f"http://127.0.0.1:{port}/mcp", json=init, timeout=30,
                        headers={"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"})
        assert ok.status_code == 200, ok.text
    finally:
        stop(process)
    assert key not in log.read_text(errors="replace")
