"""The README's "Use it from your app" snippets run as written, in order, each in a fresh interpreter, against the
test server in a fresh namespace (the only change: the namespace's name)."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from pathlib import Path

from hippo_neo4j import HippoRAG

from .serving import hippo_env

README = Path(__file__).resolve().parent.parent / "README.md"


def app_snippets() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Use it from your app\n"):]
    section = section[: section.index("\n## ", 1)]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_use_it_from_your_app_snippets_run(connection, driver, tmp_path):
    snippets = app_snippets()
    assert len(snippets) == 6  # sync, filters, async, LangChain, LlamaIndex, neo4j-graphrag
    ns = f"t-readme-{uuid.uuid4().hex[:8]}"
    env = hippo_env(connection, "default")
    try:
        for i, snippet in enumerate(snippets):
            assert '"notes"' in snippet
            script = tmp_path / f"snippet{i}.py"
            script.write_text(snippet.replace('"notes"', repr(ns)), encoding="utf-8")
            done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, f"snippet {i}:\n{snippet}\n{done.stderr[-3000:]}"
            if i in (3, 4, 5):  # the framework retrievers print the filtered passage's own metadata
                assert "'user': 'u1'" in done.stdout, done.stdout
    finally:
        HippoRAG(connection, namespace=ns, driver=driver).drop_namespace()
