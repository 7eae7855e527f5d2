"""Helpers for the serving tests: ``hippo`` commands as real processes, and a small indexed namespace."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Iterator


from hippo_neo4j import HippoRAG
from hippo_neo4j.corpus import load_openie

from .conftest import NoExtractor
from .test_core import OPENIE

HIPPO = [sys.executable, "-c", "from hippo_neo4j.cli import main; main()"]
PASSAGES = 40  # musique_train passages m0..m39, with their recorded GPT-3.5 extraction


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hippo_env(connection, namespace: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HIPPO_", "OPENAI_"))}
    env.update({
        "HIPPO_NEO4J_URI": connection.uri,
        "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
        "HIPPO_NAMESPACE": namespace,
        "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent)] +
                                      ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])),
        **extra,
    })
    return env


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    handle = log.open("wb")
    return subprocess.Popen(HIPPO + args, env=env, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def wait_healthy(url: str, process: subprocess.Popen, log: Path, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited with {process.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.3)
    raise AssertionError(f"server not healthy after {timeout} s:\n{log.read_text(errors='replace')[-3000:]}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def musique_passages(n: int = PASSAGES):
    docs = load_openie(OPENIE)[:n]
    for i, doc in enumerate(docs):
        doc.id = f"m{i}"
    return docs


def indexed_namespace(connection, driver, prefix: str) -> Iterator[tuple[str, list]]:
    """A fresh namespace holding the first PASSAGES musique passages; dropped afterwards."""
    ns = f"{prefix}-{uuid.uuid4().hex[:6]}"
    docs = musique_passages()
    memory = HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor())
    memory.index(docs)
    try:
        yield ns, docs
    finally:
        memory.drop_namespace()


def entities_of(doc) -> list[str]:
    return [e for e in doc.extraction.named_entities if e.strip()][:3] or [doc.title]


