"""The Python package's shape: modules grouped by purpose in subpackages (`core`: the API, scenarios,
results, sweeps; `outputs`: plots, reports, captures; `repro`: the papers' claims, the reproductions and the
cross-checks), no import circle among its modules, counting the imports inside functions (a lazy import
that closes a circle still ties the two modules together), and the core independent of the reproductions."""

from __future__ import annotations

import ast

from conftest import ROOT

PKG = ROOT / "python" / "detailsim"


def _name(f) -> str:
    """A module's dotted name inside the package (`repro.reproduce`, `cli`)."""
    rel = f.relative_to(PKG).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts) or "__init__"


def imports_of() -> dict[str, set[str]]:
    """Each module's imports of other modules of the package (relative imports, resolved)."""
    files = {_name(f): f for f in PKG.rglob("*.py")}
    graph = {}
    for name, f in files.items():
        pkg = name.split(".")[:-1] if f.name != "__init__.py" else name.split(".")
        deps: set[str] = set()
        for n in ast.walk(ast.parse(f.read_text())):
            if isinstance(n, ast.ImportFrom) and n.level >= 1:
                base = pkg[: len(pkg) - (n.level - 1)] if n.level > 1 else pkg
                target = base + (n.module.split(".") if n.module else [])
                t = ".".join(target)
                if t in files and files[t].name != "__init__.py":
                    deps.add(t)
                else:  # a package: the names are its modules
                    deps |= {".".join([*target, a.name]) for a in n.names} & set(files)
        graph[name] = deps - {name}
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
    assert {"cli", "repro.reproduce", "repro.readings", "repro.docblocks", "core.api"} <= set(graph)
    assert circles(graph) == [], {m: sorted(graph[m]) for c in circles(graph) for m in c}


def test_the_core_never_imports_the_reproduction_machinery_or_the_cli():
    """`core` (run, scenarios, results, sweeps) stands on its own: a user of the API loads no claims,
    grading or command line (it writes captures through `outputs.pcap`)."""
    graph = imports_of()
    for m, deps in graph.items():
        if m.startswith("core."):
            assert not {d for d in deps if d.startswith("repro.") or d == "cli"}, f"{m} imports {sorted(deps)}"
    assert "core.api" in graph["cli"] and "repro.readings" in graph["repro.reproduce"]  # the resolution works
