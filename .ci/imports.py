"""The package's import graph, by module or by room (a subpackage, or a module at the top of the package), and its
checks: no import cycle between modules, and no room importing a room above it in the layers below.

    python .ci/imports.py            # the rooms and what each imports; the checks' findings; exit 1 if any
    python .ci/imports.py --modules  # the same by module
    python .ci/imports.py --dot      # the rooms as a Graphviz graph (dot -Tsvg)

Every import counts, at the top of a module or inside a function, ``TYPE_CHECKING`` blocks aside (annotations
only). The layers, top first: a room may import rooms of its own layer or below, never above.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = "hippo_neo4j"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

LAYERS: list[set[str]] = [
    {"cli"},
    {"serve", "integrations", "evaluation", "demo"},
    {"memory", "iterative", "doctor", "drawing"},
    {"retrieve", "reader"},
    {"graph", "extract"},
    {"encode", "llm", "runtime", "corpus", "db", "documents"},
    {"metadata", "models", "limits"},
    {"config", "errors", "text", "progress", "__init__"},  # the package's __init__: __version__ (its exports load by name)
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that ``path`` imports (a name imported from a package counts as its module when it
    is one, else as the package)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name.split(".")[0] == PACKAGE)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.split(".")[0] != PACKAGE:
                    continue
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    found.add(sub if sub in modules else target)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in found if m in modules and m != name}


def graph() -> dict[str, set[str]]:
    paths = sorted(ROOT.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            connect(v)
    return found


def layer(name: str) -> int:
    return next((i for i, rooms in enumerate(LAYERS) if name in rooms), -1)


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports of a module whose room sits in a layer above its own (or in no layer)."""
    wrong = []
    for source, targets in edges.items():
        for target in targets:
            a, b = room(source), room(target)
            if a != b and (layer(a) < 0 or layer(b) < 0 or layer(b) < layer(a)):
                wrong.append((source, target))
    return sorted(wrong)


def rooms(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for source, targets in edges.items():
        out[room(source)].update(room(t) for t in targets if room(t) != room(source))
        out.setdefault(room(source), set())
    return out


def findings(edges: dict[str, set[str]]) -> list[str]:
    lines = [f"cycle: {' <-> '.join(c)}" for c in cycles(edges)]
    lines += [f"upward: {s} ({room(s)}) imports {t} ({room(t)})" for s, t in upward(edges)]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", action="store_true", help="by module instead of by room")
    parser.add_argument("--dot", action="store_true", help="a Graphviz graph of the rooms")
    args = parser.parse_args()
    edges = graph()
    shown = edges if args.modules else rooms(edges)
    if args.dot:
        print("digraph imports {\n  rankdir=TB;")
        for source in sorted(shown):
            for target in sorted(shown[source]):
                print(f'  "{source}" -> "{target}";')
        print("}")
        return 0
    for source in sorted(shown, key=lambda s: (layer(room(s) if args.modules else s), s)):
        print(f"{source}: {', '.join(sorted(shown[source])) or '-'}")
    problems = findings(edges)
    print()
    print("\n".join(problems) if problems else "no import cycle, no upward import")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
