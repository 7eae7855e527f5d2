"""The package's shape (.ci/imports.py): no import cycle, no room importing a room above it, and no state of a
server kept in module globals keyed by ``id(...)``."""

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _imports():
    spec = importlib.util.spec_from_file_location("ci_imports", ROOT / ".ci" / "imports.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["ci_imports"] = module
    spec.loader.exec_module(module)
    return module


def test_no_import_cycle_and_no_upward_import():
    imports = _imports()
    edges = imports.graph()
    assert len(edges) > 50 and all(m.startswith("hippo_neo4j") for m in edges)
    assert imports.findings(edges) == []


def test_the_checks_find_a_cycle_and_an_upward_import():
    imports = _imports()
    edges = {"hippo_neo4j.graph.store": {"hippo_neo4j.memory"}, "hippo_neo4j.memory": {"hippo_neo4j.graph.store"}}
    found = imports.findings(edges)
    assert "cycle: hippo_neo4j.graph.store <-> hippo_neo4j.memory" in found
    assert "upward: hippo_neo4j.graph.store (graph) imports hippo_neo4j.memory (memory)" in found
    assert not any(s.startswith("upward: hippo_neo4j.memory") for s in found)  # downward is allowed


def test_every_room_has_a_layer():
    imports = _imports()
    rooms = {imports.room(m) for m in imports.graph()}
    assert {r for r in rooms if imports.layer(r) < 0} == set()


def test_no_state_keyed_by_id():
    keyed = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "hippo_neo4j").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bid\((driver|self|server|client)\b", line)]
    assert keyed == []
