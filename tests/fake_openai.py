"""A small OpenAI-compatible HTTP server for tests, on 127.0.0.1 (port chosen by the OS).

It implements ``POST /v1/chat/completions`` and ``GET /v1/models``. Answers come from a pluggable
*responder* (request JSON -> assistant text, a :class:`Reply`, or a dict taken as the JSON answer). Faults are
scripted: a queue of replies served before the responder (status codes with headers, HTML or non-JSON
bodies, odd content), per-request rules (reject a ``response_format`` type, or behave like llama-cpp-python's
server, which answers ``json_schema`` with HTTP 500 and takes ``json_object`` with an optional ``schema``;
reject request parameters such as ``max_tokens``; unknown model -> 404 ``model_not_found``, wrong key -> 401),
and ``die_after(n)``: after ``n`` chat answers the server drops the
next request and stops listening, like a process killed mid-run.

:class:`MusiqueReplay` answers with the real GPT-3.5 NER / OpenIE outputs recorded in the HippoRAG release.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
DATASETS = Path(os.environ.get("HIPPO_DATASETS", SHARED / "datasets"))
MUSIQUE_OPENIE = DATASETS / "musique_train" / "openie_gpt-3.5-turbo-1106.json"


@dataclass
class Reply:
    """One scripted HTTP answer. ``content`` becomes the assistant message of a chat completion;
    ``body`` (if set) is sent verbatim instead; ``drop`` closes the connection without answering."""

    status: int = 200
    content: str | None = None
    body: str | dict | None = None
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json"
    finish_reason: str = "stop"
    drop: bool = False
    delay: float = 0.0


def error_reply(status: int, message: str, code: str | None = None, type_: str = "invalid_request_error",
                headers: dict[str, str] | None = None) -> Reply:
    """An OpenAI-shaped error body."""
    return Reply(
        status=status,
        body={"error": {"message": message, "type": type_, "param": None, "code": code}},
        headers=headers or {},
    )


def llama_cpp_format_error(fmt: str) -> str:
    """The message llama-cpp-python 0.3.36's server sends (with HTTP 500) for a response_format it lacks."""
    return LLAMA_CPP_FORMAT_ERROR.replace("json_schema", fmt)


# recorded from llama-cpp-python 0.3.36 (its install path shortened)
LLAMA_CPP_FORMAT_ERROR = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
    "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or "
    "'json_object'\"}}\n\n  File \"site-packages/llama_cpp/server/app.py\", line 376, in "
    "create_chat_completion\n    POST /v1/chat/completions"
)

HTML_PAGE = "<!DOCTYPE html><html><head><title>Welcome</title></head><body><h1>It works!</h1></body></html>"

Responder = Callable[[dict[str, Any]], "Reply | str | dict[str, Any]"]


def echo_responder(request: dict[str, Any]) -> str:
    """Default: an empty NER / OpenIE answer, chosen by the system prompt."""
    system = str(request["messages"][0].get("content", "")).lower()
    return json.dumps({"triples": []} if "triples" in system else {"named_entities": []})


class FakeOpenAI:
    """The server; use as a context manager or call ``start()`` / ``stop()``."""

    def __init__(
        self,
        responder: Responder | None = None,
        models: set[str] | None = None,
        api_keys: set[str] | None = None,
        reject_formats: set[str] | None = None,
        llama_cpp: bool = False,
        reject_params: set[str] | None = None,
    ) -> None:
        self.responder: Responder = responder or echo_responder
        self.models = models  # None: any model name is served
        self.api_keys = api_keys  # None: any key is accepted
        # response_format types ("json_schema", "json_object") or "json_object+schema" (json_object with a
        # schema key) answered with OpenAI's 400
        self.reject_formats = set(reject_formats or ())
        self.llama_cpp = llama_cpp  # json_schema -> llama-cpp-python's HTTP 500
        self.reject_params = set(reject_params or ())  # e.g. {"max_tokens"}: OpenAI's 400 for reasoning models
        self.requests: list[dict[str, Any]] = []  # every chat request body received
        self.answered = 0  # chat requests answered with 200
        self._script: deque[Reply | Callable[[dict[str, Any]], Reply | None]] = deque()
        self._die_after: int | None = None
        self._dead = False
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    # -- control ---------------------------------------------------------------------------------------------

    def start(self) -> "FakeOpenAI":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: a stopped server refuses the next

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") == "/v1/models":
                    data = [{"id": m, "object": "model", "owned_by": "fake"} for m in sorted(fake.models or {"any"})]
                    self._send(Reply(body={"object": "list", "data": data}))
                else:
                    self._send(Reply(status=404, body=HTML_PAGE, content_type="text/html"))

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(Reply(status=404, body=HTML_PAGE, content_type="text/html"))
                    return
                request = json.loads(raw)
                reply = fake._handle(request, self.headers.get("authorization", ""))
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.drop:
                    self.close_connection = True
                    return
                self._send(reply, request)

            def _send(self, reply: Reply, request: dict[str, Any] | None = None) -> None:
                if reply.body is not None:
                    body = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                else:
                    body = json.dumps(fake._completion(request or {}, reply))
                data = body.encode("utf-8")
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(data)))
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._port = int(self._httpd.server_address[1])
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket (new connections are refused)."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port it listens (or listened) on."""
        assert self._port is not None, "server not started"
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply | Callable[[dict[str, Any]], Reply | None]) -> None:
        """Queue replies for the next chat requests, in order, before the responder is asked.

        A callable entry sees the request and returns a Reply (consumed) or None (skipped, responder used).
        """
        with self._lock:
            self._script.extend(replies)

    def die_after(self, n: int) -> None:
        """After ``n`` more answered chat requests, drop the next one and stop listening."""
        with self._lock:
            self._die_after = self.answered + n

    # -- request handling ------------------------------------------------------------------------------------

    def _handle(self, request: dict[str, Any], authorization: str) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._dead:
                return Reply(drop=True)
            if self._die_after is not None and self.answered >= self._die_after:
                self._dead = True
                threading.Thread(target=self.stop, daemon=True).start()
                return Reply(drop=True)
            scripted = self._script.popleft() if self._script else None
        if callable(scripted):
            scripted = scripted(request)
        reply = scripted if isinstance(scripted, Reply) else self._rules(request, authorization)
        if reply is None:
            answer = self.responder(request)
            if isinstance(answer, Reply):
                reply = answer
            else:
                reply = Reply(content=answer if isinstance(answer, str) else json.dumps(answer))
        if reply.status == 200 and not reply.drop:
            with self._lock:
                self.answered += 1
        return reply

    def _rules(self, request: dict[str, Any], authorization: str) -> Reply | None:
        key = authorization.removeprefix("Bearer ").strip()
        if self.api_keys is not None and key not in self.api_keys:
            return error_reply(401, f"Incorrect API key provided: {key}.", "invalid_api_key")
        model = request.get("model")
        if self.models is not None and model not in self.models:
            return error_reply(
                404, f"The model `{model}` does not exist or you do not have access to it.", "model_not_found"
            )
        response_format = request.get("response_format") or {}
        fmt = response_format.get("type")
        mode = "json_object+schema" if fmt == "json_object" and "schema" in response_format else fmt
        if fmt in self.reject_formats or mode in self.reject_formats:
            return error_reply(400, f"Invalid parameter: 'response_format' of type '{fmt}' is not supported with this model.")
        if self.llama_cpp and fmt not in (None, "text", "json_object"):
            return Reply(status=500, body={"error": {"message": llama_cpp_format_error(fmt), "type": "internal_server_error",
                                                     "param": None, "code": None}})
        for param in sorted(self.reject_params):
            if param in request:
                return error_reply(
                    400, f"Unsupported parameter: '{param}' is not supported with this model. Use "
                    f"'max_completion_tokens' instead.", "unsupported_parameter",
                )
        return None

    @staticmethod
    def _completion(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
        content = reply.content or ""
        prompt_chars = sum(len(str(m.get("content", ""))) for m in request.get("messages", []))
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_chars // 4,
                "completion_tokens": len(content) // 4,
                "total_tokens": prompt_chars // 4 + len(content) // 4,
            },
        }

    def chat_requests_for(self, text: str) -> int:
        """How many chat requests carried ``text`` in their last message."""
        with self._lock:
            return sum(text in str(r["messages"][-1].get("content", "")) for r in self.requests)


class MusiqueReplay:
    """Responder replaying GPT-3.5's recorded NER / OpenIE answers for the passage found in the prompt."""

    def __init__(self, docs: list[dict[str, Any]]) -> None:
        # longest first, so a passage that contains another passage's text wins
        self.docs = sorted(docs, key=lambda d: len(d["passage"]), reverse=True)

    def find(self, text: str) -> dict[str, Any] | None:
        return next((d for d in self.docs if d["passage"] in text), None)

    def __call__(self, request: dict[str, Any]) -> str:
        messages = request["messages"]
        system = str(messages[0].get("content", "")).lower()
        doc = self.find(str(messages[-1].get("content", "")))
        if "triples" in system:
            return json.dumps({"triples": doc["extracted_triples"] if doc else []})
        return json.dumps({"named_entities": doc["extracted_entities"] if doc else []})


def load_musique_docs() -> list[dict[str, Any]]:
    return json.loads(MUSIQUE_OPENIE.read_text(encoding="utf-8"))["docs"]


# -- pytest fixtures (import them into a test module) ---------------------------------------------------------


@pytest.fixture(scope="session")
def musique_docs() -> list[dict[str, Any]]:
    """All 1,890 recorded GPT-3.5 extractions (skips the test when the shared data is absent)."""
    if not MUSIQUE_OPENIE.exists():
        pytest.skip(f"{MUSIQUE_OPENIE} not found (set HIPPO_DATASETS)")
    return load_musique_docs()


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A running fake server with the default (empty-answer) responder; tests swap ``responder`` as needed."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No LLM settings leak in from the environment; the extraction cache lives in tmp_path."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "HIPPO_LLM_MODEL", "HIPPO_LLM_CONCURRENCY",
                 "HIPPO_LLM_PRICE_IN", "HIPPO_LLM_PRICE_OUT", "HIPPO_LLM_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "extractions.sqlite"
    monkeypatch.setenv("HIPPO_EXTRACTION_CACHE", str(path))
    return path
