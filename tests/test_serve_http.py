"""``hippo serve``: the HTTP API, started as a real process on the test server, through a real HTTP client.

Status codes and one-line errors, every mode with its explanation and drawing statement, index / delete
round trips, body limits, faults without stack traces or secrets, and auth on a non-loopback bind.
"""

from __future__ import annotations

import base64
import socket
import subprocess
import threading
import time

import httpx
import pytest
import uvicorn

from hippo_neo4j import HippoRAG, limits
from hippo_neo4j.retrieve import MODES
from hippo_neo4j.serve.http import ServeSettings, create_app, is_loopback
from hippo_neo4j.serve.memories import Memories

from .conftest import NoExtractor
from .serving import HIPPO, entities_of, free_port, hippo_env, indexed_namespace, start, stop, wait_healthy

KEY = "test-key-0123456789abcdef"


@pytest.fixture(scope="module")
def corpus(connection, driver):
    yield from indexed_namespace(connection, driver, "serve-http")


@pytest.fixture(scope="module")
def api(corpus, connection, tmp_path_factory):
    """``hippo serve`` on 127.0.0.1 with the corpus's namespace as its default, and a small body limit."""
    ns, _ = corpus
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = hippo_env(connection, ns, HIPPO_API_MAX_BODY=str(256 * 1024))
    process = start(["serve", "--port", str(port), "--extractor", "offline"], env, log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(base + "/health", process, log)
        with httpx.Client(base_url=base, timeout=300) as client:
            yield client
    finally:
        stop(process)
    assert KEY not in log.read_text(errors="replace")


def one_line(response: httpx.Response) -> str:
    body = response.json()
    assert set(body) == {"error"} and "\n" not in body["error"] and body["error"], body
    assert "Traceback" not in body["error"]
    return body["error"]


# ---------------------------------------------------------------------------------------------- happy paths


def test_health_modes_and_openapi(api):
    assert api.get("/health").json()["status"] == "ok"
    assert [m["name"] for m in api.get("/modes").json()] == MODES.names()
    schema = api.get("/openapi.json").json()
    assert {"/index", "/query", "/delete", "/stats", "/health"} <= set(schema["paths"])
    assert "cypher" in schema["components"]["schemas"]["QueryResponse"]["properties"]
    docs = api.get("/docs", follow_redirects=True)  # the document itself: no page that needs a CDN
    assert docs.status_code == 200 and docs.json()["paths"] == schema["paths"]
    query = schema["components"]["schemas"]["QueryRequest"]["properties"]
    assert query["query"]["maxLength"] == limits.QUERY_CHARS and query["top_k"]["maximum"] == limits.TOP_K
    assert query["entities"]["anyOf"][0]["maxItems"] == limits.ENTITIES and query["filter"].get("deprecated")


@pytest.mark.parametrize("mode", MODES.names())
def test_every_mode_answers_with_its_explanation_and_drawing(api, corpus, connection, driver, mode):
    ns, docs = corpus
    doc = docs[3]
    response = api.post("/query", json={"query": doc.text[:200], "mode": mode, "top_k": 5, "entities": entities_of(doc)})
    assert response.status_code == 200, response.text
    body = response.json()
    # the same answer as the library gives
    with HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()) as memory:
        expected = memory.query(doc.text[:200], mode=mode, top_k=5, entities=entities_of(doc))
    assert body["mode"] == expected.mode and body["namespace"] == ns and len(body["passages"]) == 5
    assert body["cypher"].lstrip().startswith("//") and "$" not in body["cypher"]
    assert [p["id"] for p in body["passages"]] == [p.id for p in expected.passages]
    if MODES[mode].retriever.graph and not body["fell_back"]:
        assert body["top_phrases"] or body["phrase_seeds"] or body["linked"]
    # the drawing shows the passages it names
    drawn = driver.execute_query(body["cypher"]).records[0]
    assert [p["id"] for p in drawn["passages"]] == [p["id"] for p in body["passages"]]


def test_query_without_entities_extracts_them(api, corpus):
    body = api.post("/query", json={"query": "Who founded the Sea Shepherd Conservation Society?", "mode": "hipporag1"}).json()
    assert body["entities"] and len(body["passages"]) == 10


def test_index_query_delete_round_trip(api, corpus):
    ns, docs = corpus
    before = api.get("/stats").json()["passages"]
    passage = {"id": "fresh-1", "title": "Quokka Island", "text": "Zorblat Vennimore was born on Quokka Island.",
               "extraction": {"named_entities": ["Zorblat Vennimore", "Quokka Island"],
                              "triples": [["Zorblat Vennimore", "born on", "Quokka Island"]]}}
    report = api.post("/index", json={"passages": [passage]})
    assert report.status_code == 200 and report.json()["indexed"] == 1 and report.json()["namespace"] == ns
    assert api.post("/index", json={"passages": [passage]}).json()["unchanged"] == 1
    assert api.get("/stats").json()["passages"] == before + 1
    found = api.post("/query", json={"query": "Where was Zorblat Vennimore born?", "mode": "hipporag1",
                                     "entities": ["Zorblat Vennimore"], "top_k": 1}).json()
    assert found["passages"][0]["id"] == "fresh-1"
    gone = api.post("/delete", json={"ids": ["fresh-1", "never-there"]}).json()
    assert gone["deleted"] == 1 and gone["missing"] == ["never-there"]
    assert api.get("/stats").json()["passages"] == before
    after = api.post("/query", json={"query": "Zorblat Vennimore", "mode": "bm25", "top_k": 3}).json()
    assert "fresh-1" not in [p["id"] for p in after["passages"]]


def test_a_new_namespace_is_made_by_indexing_into_it(api, connection, driver):
    ns = f"serve-new-{int(time.time() * 1000)}"
    try:
        assert api.get("/stats", params={"namespace": ns}).status_code == 404
        response = api.post("/index", json={"namespace": ns, "passages": [{"text": "Ada Lovelace wrote the first program."}]})
        assert response.status_code == 200
        assert api.get("/stats", params={"namespace": ns}).json()["passages"] == 1
    finally:
        HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()).drop_namespace()


def test_metadata_and_filters_over_http(api, connection, driver):
    ns = f"serve-filters-{int(time.time() * 1000)}"
    passages = [{"id": f"f{i}", "text": f"Ada Lovelace wrote note {'ABCDEFG'[i]} on the Analytical Engine.",
                 "metadata": {"user": f"u{i % 2}", "year": 1840 + i, "tag": ["notes"] + (["g"] if i == 6 else [])}}
                for i in range(7)]
    try:
        report = api.post("/index", json={"namespace": ns, "passages": passages})
        assert report.status_code == 200 and report.json()["indexed"] == 7
        relabel = [dict(passages[0], metadata={"user": "u9"})]
        assert api.post("/index", json={"namespace": ns, "passages": relabel}).json()["metadata_updated"] == 1
        for mode in ("dense", "entity-ppr"):
            body = api.post("/query", json={"namespace": ns, "query": "Which notes did Ada Lovelace write?", "mode": mode,
                                            "filters": {"user": "u1", "year": {">=": 1843}}}).json()
            assert body["filtered_passages"] == 2 and {p["id"] for p in body["passages"]} == {"f3", "f5"}, body
            assert {p["metadata"]["user"] for p in body["passages"]} == {"u1"}
        body = api.post("/query", json={"namespace": ns, "query": "Ada", "mode": "bm25", "filters": {"user": "u9"}}).json()
        assert [p["id"] for p in body["passages"]] == ["f0"]
        r = api.post("/query", json={"namespace": ns, "query": "Ada", "filters": {"year": {"~": 1840}}})
        assert r.status_code == 400 and "filter 'year': unknown operator '~'" in one_line(r)
        r = api.post("/query", json={"namespace": ns, "query": "Ada", "filters": {"tag": {"in": [["a"]]}}})
        assert r.status_code == 400 and "filter 'tag' in" in one_line(r)
        r = api.post("/index", json={"namespace": ns, "passages": [{"text": "x", "metadata": {"user": {"id": 1}}}]})
        assert r.status_code == 400 and "metadata 'user'" in one_line(r)
    finally:
        HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()).drop_namespace()


HANDBOOK = ("# Harbour handbook\n\n## Tides\n\nThe Quillmere tide gauge was installed by Orsolya Venkatraman in 1911.\n\n"
            "## Boats\n\nThe harbour keeps three pilot boats painted saffron yellow.\n")
PAGE = ("<html><head><title>Station notes</title><script>var menu = 'Home';</script></head><body><nav>Home | About"
        "</nav><main><h2>Weather</h2><p>The Brackwater station records fog on most October mornings.</p>"
        "<h2>Staff</h2><p>Tamsin Okonkwo-Reyes keeps the lighthouse log.</p></main></body></html>")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_documents_index_query_update_prune_and_delete(api, connection, driver):
    ns = f"serve-docs-{int(time.time() * 1000)}"
    documents = [{"id": "handbook.md", "text": HANDBOOK}, {"id": "site/page.html", "base64": b64(PAGE.encode())}]
    try:
        r = api.post("/documents", json={"namespace": ns, "documents": documents})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["namespace"] == ns and body["documents"] == 2 and body["documents_unchanged"] == 0
        assert body["passages"] == 4 and body["indexed"] == 4 and body["skipped"] == []  # a passage per section
        stats = api.get("/stats", params={"namespace": ns}).json()
        assert stats["documents"] == 2 and stats["passages"] == 4
        # a fact of one section finds that section's passage, which names its document
        for question, document, heading in (("Who installed the Quillmere tide gauge?", "handbook.md", "Tides"),
                                            ("Who keeps the lighthouse log?", "site/page.html", "Staff")):
            found = api.post("/query", json={"namespace": ns, "query": question, "mode": "bm25", "top_k": 1}).json()
            top = found["passages"][0]
            assert top["metadata"]["document"] == document and top["title"] == heading, found
        navigation = api.post("/query", json={"namespace": ns, "query": "Home About menu", "mode": "bm25"}).json()
        assert all("Home" not in p["text"] for p in navigation["passages"])  # the page's content, not its navigation
        # the same documents again: nothing to do
        again = api.post("/documents", json={"namespace": ns, "documents": documents}).json()
        assert again["documents_unchanged"] == 2 and again["indexed"] == 0 and again["passages_removed"] == 0

        # what cannot be read is named in skipped, and the rest indexed
        mixed = api.post("/documents", json={"namespace": ns, "documents": [
            {"id": "notes.docx", "text": "A word processor file."},
            {"id": "latin.md", "base64": b64("Caf\u00e9 cr\u00e8me au lait.\n".encode("latin-1"))},
            {"id": "extra.txt", "text": "The ferry to Quillmere leaves at dawn."},
            {"id": "../escape.md", "text": "Outside the folder."},
        ]})
        assert mixed.status_code == 200, mixed.text
        mixed = mixed.json()
        skipped = {s["item"]: s["reason"] for s in mixed["skipped"]}
        assert set(skipped) == {"notes.docx", "latin.md", "../escape.md"}, skipped
        assert "unsupported file type '.docx'" in skipped["notes.docx"] and ".pdf" in skipped["notes.docx"]
        assert "not UTF-8" in skipped["latin.md"] and "'..'" in skipped["../escape.md"]
        assert mixed["documents"] == 1 and mixed["indexed"] == 1
        assert api.get("/stats", params={"namespace": ns}).json()["documents"] == 3

        # content that is not base64 is named in skipped; both or neither of text and base64: the request is refused
        r = api.post("/documents", json={"namespace": ns, "documents": [{"id": "report.pdf", "base64": "%%% not base64"}]})
        assert r.status_code == 200, r.text
        assert [(s["item"], s["reason"].startswith("not valid base64")) for s in r.json()["skipped"]] == [("report.pdf", True)]
        r = api.post("/documents", json={"namespace": ns, "documents": [{"id": "a.md", "text": "x", "base64": "eA=="}]})
        assert r.status_code == 422 and "exactly one of text" in one_line(r)
        r = api.post("/documents", json={"namespace": ns, "documents": []})
        assert r.status_code == 422 and one_line(r).startswith("documents:")

        # prune: the documents not sent are removed, those sent but unreadable kept
        pruned = api.post("/documents", json={"namespace": ns, "prune": True, "documents": [
            {"id": "handbook.md", "text": HANDBOOK}, {"id": "extra.txt", "base64": b64(b"\x00\x01\x02 not text \x00")}]}).json()
        assert pruned["documents_removed"] == 1 and pruned["documents_unchanged"] == 1, pruned
        assert [s["item"] for s in pruned["skipped"]] == ["extra.txt"]
        stats = api.get("/stats", params={"namespace": ns}).json()
        assert stats["documents"] == 2 and stats["passages"] == 3

        # delete by document
        gone = api.post("/documents/delete", json={"namespace": ns, "ids": ["extra.txt", "nope.md"]})
        assert gone.status_code == 200, gone.text
        assert gone.json()["deleted"] == 1 and gone.json()["missing"] == ["nope.md"] and gone.json()["namespace"] == ns
        stats = api.get("/stats", params={"namespace": ns}).json()
        assert stats["documents"] == 1 and stats["passages"] == 2
        left = api.post("/query", json={"namespace": ns, "query": "ferry Quillmere dawn", "mode": "bm25"}).json()
        assert {p["metadata"]["document"] for p in left["passages"]} == {"handbook.md"}
        assert api.post("/documents/delete", json={"namespace": "no-such-namespace", "ids": ["x.md"]}).status_code == 404
        assert api.post("/documents/delete", json={"namespace": ns, "ids": []}).status_code == 422
        schema = api.get("/openapi.json").json()["paths"]
        assert schema["/documents"]["post"]["tags"] == ["memory"] and schema["/documents/delete"]["post"]["tags"] == ["memory"]
    finally:
        HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor()).drop_namespace()


# ---------------------------------------------------------------------------------------------- bad requests


def test_bad_requests_get_a_4xx_with_one_line(api):
    def post(payload=None, **kwargs):
        return api.post("/query", **({"json": payload} if payload is not None else kwargs))

    r = post({"query": "x", "mode": "no-such-mode"})
    assert r.status_code == 400 and "Unknown mode 'no-such-mode'" in one_line(r)
    r = post({"query": "x", "namespace": "no-such-namespace"})
    assert r.status_code == 404 and "no-such-namespace" in one_line(r)
    r = post(content=b"", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "empty" in one_line(r)
    r = post(content=b'{"query": "x",', headers={"content-type": "application/json"})
    assert r.status_code == 400 and "not valid JSON" in one_line(r)
    r = post(content=b'["x"]', headers={"content-type": "application/json"})
    assert r.status_code == 400 and "JSON object" in one_line(r)
    r = post({"query": "x", "top_k": 0})
    assert r.status_code == 422 and one_line(r).startswith("top_k:")
    r = post({"query": "x", "top_k": 10_000})
    assert r.status_code == 422 and one_line(r).startswith("top_k:") and str(limits.TOP_K) in one_line(r)
    r = api.post("/index", json={"passages": []})
    assert r.status_code == 422 and one_line(r).startswith("passages:")
    r = api.post("/delete", json={"ids": []})
    assert r.status_code == 422
    r = api.post("/delete", json={"ids": ["x"], "namespace": "no-such-namespace"})
    assert r.status_code == 404
    assert api.get("/nowhere").status_code == 404 and api.get("/query").status_code == 405
    assert api.get("/health").status_code == 200  # and the server is still there


def test_hostile_requests_are_refused_before_any_work(api):
    port = api.base_url.port
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}", ""):  # DNS rebinding
        r = api.get("/stats", headers={"Host": host})
        assert r.status_code == 421 and "is not served here" in one_line(r), host
        assert api.post("/delete", json={"ids": ["x"]}, headers={"Host": host}).status_code == 421
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST"):
        assert api.get("/stats", headers={"Host": host}).status_code == 200, host
    r = api.post("/query", json={"query": "x", "entities": [f"e{i}" for i in range(10_000)]})
    assert r.status_code == 422 and one_line(r).startswith("entities:") and str(limits.ENTITIES) in one_line(r)
    r = api.post("/query", json={"query": "x", "entities": ["e" * (limits.ENTITY_CHARS + 1)]})
    assert r.status_code == 422 and one_line(r).startswith("entities.0:")
    r = api.post("/query", json={"query": "a " * 100_000})  # 200 KB, under this server's 256 KB body limit
    assert r.status_code == 422 and one_line(r).startswith("query:") and f"{limits.QUERY_CHARS}" in one_line(r)
    # CORS stays closed: a page of another origin gets no permission to read the answer
    r = api.options("/query", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert "access-control-allow-origin" not in r.headers
    r = api.get("/stats", headers={"Origin": "https://evil.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers


def test_one_rule_for_names_empty_queries_and_the_recognition_filter(api, corpus):
    ns, docs = corpus
    for bad in ("", "   ", "a\nb", "bell\x07", "n" * (limits.NAMESPACE_CHARS + 1)):
        r = api.post("/query", json={"query": "x", "namespace": bad, "mode": "dense"})
        assert r.status_code in (400, 422) and "namespace" in one_line(r), bad
    assert api.post("/query", json={"query": "x", "namespace": ns, "mode": "dense"}).status_code == 200
    for mode in ("entity-ppr", "dense", "hipporag1"):
        r = api.post("/query", json={"query": "  ", "mode": mode})
        assert r.status_code == 200 and r.json()["passages"] == [] and "empty" in r.json()["warning"], mode
    r = api.post("/query", json={"query": "x", "filter": "user=u1"})
    assert r.status_code == 422 and "recognition_filter" in one_line(r) and "filters" in one_line(r)
    for body in ({"recognition_filter": False}, {"filter": False}):  # the old name still works, for one release
        r = api.post("/query", json={"query": docs[0].text[:80], "mode": "hipporag2", **body})
        assert r.status_code == 200 and r.json()["recognition_filter"] == "off" and "filter" not in r.json()


def test_host_rule_off_loopback():
    anywhere = ServeSettings(host="0.0.0.0")
    assert anywhere.serves_host("evil.example") and anywhere.serves_host("10.0.0.5:8765")  # a key guards it
    named = ServeSettings(host="0.0.0.0", allowed_hosts=["memory.example.org"])
    assert named.serves_host("memory.example.org:8765") and named.serves_host("MEMORY.example.org")
    assert not named.serves_host("evil.example") and not named.serves_host("127.0.0.1:8765")
    assert ServeSettings(allowed_hosts=["box.local"]).serves_host("box.local:8765")
    assert not ServeSettings().serves_host("box.local:8765") and ServeSettings().serves_host("[::1]:1")


def test_a_port_in_use_fails_before_the_models_load(connection, corpus):
    ns, _ = corpus
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run([*HIPPO, "serve", "--port", str(port)], env=hippo_env(connection, ns),
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and f"Cannot listen on 127.0.0.1:{port}" in done.stderr and "--port" in done.stderr
    assert "Traceback" not in done.stderr


def test_oversized_bodies_get_413_declared_or_streamed(api):
    big = b'{"query": "' + b"a" * (300 * 1024) + b'"}'
    r = api.post("/query", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "larger than" in one_line(r)

    def chunks():  # no Content-Length: the limit is counted as the body streams in
        for i in range(0, len(big), 16 * 1024):
            yield big[i : i + 16 * 1024]

    r = api.post("/query", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and "larger than" in one_line(r)
    assert api.post("/query", json={"query": "a" * 1000, "mode": "dense", "top_k": 1}).status_code == 200


# ---------------------------------------------------------------------------------------------- faults and auth


class Failing(Memories):
    """A real Memories whose stats fail with a message holding a secret (as a driver error might)."""

    def stats(self, namespace=None):
        raise RuntimeError("connection to bolt://neo4j:hunter2-secret@db failed\n  at line 3")


def _serve_in_thread(app, port):
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120  # only guards against a hang
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the server did not start"
    return server, thread


def test_server_faults_are_500_without_trace_or_secret(connection, corpus):
    ns, _ = corpus
    memories = Failing(connection, namespace=ns, extractor=NoExtractor())
    port = free_port()
    server, thread = _serve_in_thread(create_app(memories, ServeSettings(), close=True), port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for _ in range(3):  # the keep-alive connection survives each fault
                r = client.get("/stats")
                assert r.status_code == 500 and r.headers.get("connection") != "close"
                text = one_line(r)
                assert "hunter2" not in r.text and "bolt://" not in r.text and "line 3" not in r.text, text
                assert client.get("/health").status_code == 200
    finally:
        server.should_exit = True
        thread.join(30)


def test_loopback_detection():
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "10.0.0.5", "example.org", "192.168.1.1"))


def test_non_loopback_bind_refuses_to_start_without_a_key(connection, corpus, tmp_path):
    ns, _ = corpus
    port = free_port()
    for host in ("0.0.0.0", "::"):
        done = subprocess.run(
            [*HIPPO, "serve", "--host", host, "--port", str(port)],
            env=hippo_env(connection, ns), capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 1 and "HIPPO_API_KEY" in done.stderr and "Traceback" not in done.stderr
    short = subprocess.run(
        [*HIPPO, "serve", "--host", "0.0.0.0", "--port", str(port)],
        env=hippo_env(connection, ns, HIPPO_API_KEY="short"), capture_output=True, text=True, timeout=300,
    )
    assert short.returncode == 1 and "shorter than" in short.stderr and "short" not in short.stderr.split("shorter")[0][-10:]


def test_non_loopback_bind_with_a_key_requires_it_on_every_call(connection, corpus, tmp_path):
    ns, docs = corpus
    port = free_port()
    log = tmp_path / "serve.log"
    process = start(["serve", "--host", "0.0.0.0", "--port", str(port), "--extractor", "offline"],
                    hippo_env(connection, ns, HIPPO_API_KEY=KEY), log)
    base = f"http://127.0.0.1:{port}"
    query = {"query": docs[0].text[:100], "mode": "dense", "top_k": 2}
    try:
        wait_healthy(base + "/health", process, log)  # health needs no key
        with httpx.Client(base_url=base, timeout=300) as client:
            for path, method, body in (("/query", "post", query), ("/index", "post", {"passages": [{"text": "x"}]}),
                                       ("/delete", "post", {"ids": ["m0"]}), ("/stats", "get", None),
                                       ("/modes", "get", None)):
                kwargs = {"json": body} if body is not None else {}
                r = getattr(client, method)(path, **kwargs)
                assert r.status_code == 401 and "API key" in one_line(r), path
                r = getattr(client, method)(path, headers={"Authorization": "Bearer wrong-key-wrong-key-00"}, **kwargs)
                assert r.status_code == 401, path
                r = getattr(client, method)(path, headers={"X-API-Key": KEY[:-1]}, **kwargs)
                assert r.status_code == 401, path
            assert client.post("/query", json=query, headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
            assert client.post("/query", json=query, headers={"X-API-Key": KEY}).status_code == 200
            assert client.get("/stats", headers={"X-API-Key": KEY}).json()["passages"] == len(docs)
    finally:
        stop(process)
    assert KEY not in log.read_text(errors="replace")
