"""The Python package's shape: no import circle among its modules, counting the imports inside functions
(a lazy import that closes a circle still ties the two modules together)."""

from __future__ import annotations

import ast

from conftest import ROOT

PKG = ROOT / "python" / "detailsim"


def imports_of() -> dict[str, set[str]]:
    mods = {f.stem for f in PKG.glob("*.py")}
    graph = {}
    for f in PKG.glob("*.py"):
        deps: set[str] = set()
        for n in ast.walk(ast.parse(f.read_text())):
            if isinstance(n, ast.ImportFrom) and n.level == 1:
                deps |= {n.module.split(".")[0]} if n.module else {a.name for a in n.names}
        graph[f.stem] = deps & mods - {f.stem}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_the_package_imports_one_that_imports_it_back():
    graph = imports_of()
    assert {"cli", "reproduce", "readings", "docblocks"} <= set(graph)
    assert circles(graph) == [], {m: sorted(graph[m]) for c in circles(graph) for m in c}
