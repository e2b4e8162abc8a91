"""Import structure: every module imports on its own, packages import in one direction, and the
request types import no torch.

A cycle of imports breaks only when a module of it is imported first, so every module is imported
alone here (a fresh set of infill modules each time, in a subprocess so that this test's own
imports do not hide a failure). The package graph is read from the source: an edge A -> B for
every module-level ``import`` in package A of something in package B. Inside a package the
modules form a DAG too: the module graph (every ``import`` of an infill module, at module level,
under ``TYPE_CHECKING`` or inside a function) has no cycle among the modules of one package, so no
import has to be deferred into a function to break one.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CLI_PACKAGE = "infill_cli"

KNOWN_CYCLES: set[tuple[str, str]] = set()
"""Package edges that may still close a cycle: none (the engine takes its parts, which
``DecodeConfig.search()`` makes, so ``decoding`` no longer imports ``config``). The test fails on
any cycle."""


def module_files() -> dict[str, Path]:
    """Import name -> file of every module of the library and the CLI (a package's
    ``__init__.py`` under the package's name)."""
    out = {}
    for package, folder in (("infill", ROOT / "infill"), (CLI_PACKAGE, ROOT / "cli")):
        for path in sorted(folder.rglob("*.py")):
            parts = path.relative_to(folder).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
    return out


def modules() -> list[str]:
    """Every module of the library and the CLI, by import name."""
    return list(module_files())


ISOLATED = r"""
import importlib, json, sys, traceback
failures = {}
for name in json.loads(sys.argv[1]):
    for loaded in [m for m in sys.modules if m.split(".")[0] in ("infill", "infill_cli")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as e:
        failures[name] = traceback.format_exception_only(type(e), e)[-1].strip()
print(json.dumps(failures))
"""


def test_every_module_imports_alone():
    names = modules()
    assert "infill.requests" in names and f"{CLI_PACKAGE}.main" in names and len(names) > 60
    r = subprocess.run([sys.executable, "-c", ISOLATED, json.dumps(names)], capture_output=True,
                       text=True, cwd=ROOT, timeout=600,
                       env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.splitlines()[-1]) == {}


def package_edges(inside_functions: bool = False) -> dict[tuple[str, str], list[str]]:
    """(package, package it imports at module level -- or anywhere, ``inside_functions``) ->
    where; packages are the first name below ``infill`` (``infill/api.py`` is ``api``,
    ``infill/decoding/*`` is ``decoding``)."""
    edges: dict[tuple[str, str], list[str]] = {}
    for path in sorted((ROOT / "infill").rglob("*.py")):
        rel = path.relative_to(ROOT / "infill").with_suffix("").parts
        if rel == ("__init__",) or rel == ("__main__",):
            continue
        src = rel[0]
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree) if inside_functions else tree.body:
            targets = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 \
                and node.module else []
            for target in targets:
                parts = target.split(".")
                if parts[0] == "infill" and len(parts) > 1 and parts[1] != src:
                    edges.setdefault((src, parts[1]), []).append(
                        f"{path.relative_to(ROOT)}:{node.lineno}")
    return edges


def cycle_edges(edges) -> set[tuple[str, str]]:
    """The edges that lie on a cycle (B reaches A back)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(graph.get(node, ()))
        return False

    return {(a, b) for a, b in edges if reaches(b, a)}


def test_the_package_graph_is_read_from_the_source():
    edges = package_edges()
    assert ("filling", "decoding") in edges and ("requests", "errors") in edges
    assert cycle_edges({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == {
        ("a", "b"), ("b", "c"), ("c", "a")}


def test_no_package_imports_in_a_circle():
    edges = package_edges()
    found = cycle_edges(edges)
    assert found <= KNOWN_CYCLES, {e: edges[e] for e in found - KNOWN_CYCLES}


KNOWN_DEFERRED_CYCLES: dict[tuple[str, str], str] = {}
"""Cycles closed only by an import inside a function (deferred to its call), each with where it
is: none. The lower package should not know the higher one at all; the test fails on any."""


def test_imports_inside_functions_close_no_new_cycle():
    edges = package_edges(inside_functions=True)
    closing = {e for e in cycle_edges(edges) if e in KNOWN_DEFERRED_CYCLES}
    assert closing == set(KNOWN_DEFERRED_CYCLES)          # each is still there: keep the list true
    without = {e: w for e, w in edges.items() if e not in KNOWN_DEFERRED_CYCLES}
    assert cycle_edges(without) == set(), {e: without[e] for e in cycle_edges(without)}


def package_of(name: str, files: dict[str, Path]) -> str:
    """The package a module belongs to: the folder its file is in (``infill.bench.runner`` ->
    ``infill.bench``; a package's ``__init__`` belongs to the package itself)."""
    return name if files[name].name == "__init__.py" else name.rpartition(".")[0]


def imported_modules(node: ast.AST, name: str, files: dict[str, Path]) -> list[str]:
    """The library/CLI modules one import statement of module ``name`` loads, each as the
    deepest module that exists (``from infill.data import splits`` -> ``infill.data.splits``,
    ``from infill.data.splits import PARTS`` -> ``infill.data.splits``); relative imports
    resolved."""
    if isinstance(node, ast.Import):
        targets = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            here = name if files[name].name == "__init__.py" else name.rpartition(".")[0]
            for _ in range(node.level - 1):
                here = here.rpartition(".")[0]
            base = f"{here}.{base}" if base else here
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
    else:
        return []
    out = []
    for target in targets:
        while target and target not in files:
            target = target.rpartition(".")[0]
        if target and target != name and target not in out:
            out.append(target)
    return out


def module_edges() -> dict[tuple[str, str], list[str]]:
    """(module, library/CLI module it imports) -> where (``path:line``): every import statement,
    at module level, under ``if TYPE_CHECKING:`` or inside a function."""
    files = module_files()
    edges: dict[tuple[str, str], list[str]] = {}
    for name, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in imported_modules(node, name, files):
                edges.setdefault((name, target), []).append(
                    f"{path.relative_to(ROOT)}:{node.lineno}")
    return edges


def knots(edges) -> list[tuple[list[str], list[str]]]:
    """Each group of nodes that import one another in a circle (a strongly connected component
    with a cycle): (its nodes, sorted; one shortest cycle through the first, ``[a, b, ..., a]``)."""
    graph: dict[str, list[str]] = {}
    for a, b in sorted(edges):
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:                     # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph[v]:
                groups.append(group)

    for v in graph:
        if v not in index:
            visit(v)
    out = []
    for group in groups:
        start = min(group)
        paths, todo = {start: [start]}, [start]    # breadth first inside the group
        while todo:
            v = todo.pop(0)
            if start in graph[v]:
                out.append((sorted(group), paths[v] + [start]))
                break
            for w in graph[v]:
                if w in group and w not in paths:
                    paths[w] = paths[v] + [w]
                    todo.append(w)
    return sorted(out)


def cycles_inside_packages(edges) -> list[str]:
    """Each knot of modules of one package, written out: its modules, then one cycle with where
    each of its imports is."""
    files = module_files()
    inside = {e: w for e, w in edges.items()
              if package_of(e[0], files) == package_of(e[1], files)}
    return [f"{', '.join(group)}:\n    " + " -> ".join(
                [cycle[0]] + [f"{b} ({', '.join(inside[a, b])})" for a, b in zip(cycle, cycle[1:])])
            for group, cycle in knots(inside)]


def test_the_module_graph_is_read_from_the_source():
    edges = module_edges()
    assert ("infill.joint.tables", "infill.joint.constructions") in edges          # from X import f
    assert ("infill.bench.methods", "infill.names") in edges               # from infill import names
    assert ("infill_cli.main", "infill_cli.errors") in edges                        # from .errors
    assert knots({("a", "b"), ("b", "c"), ("c", "a"), ("b", "a"), ("c", "d"), ("d", "d"),
                  ("e", "f")}) == [(["a", "b", "c"], ["a", "b", "a"]), (["d"], ["d", "d"])]
    files = module_files()
    assert package_of("infill.bench.runner", files) == "infill.bench"
    assert package_of("infill.bench", files) == "infill.bench"
    assert package_of("infill.api", files) == "infill"


def test_no_module_imports_in_a_circle_inside_its_package():
    """The modules of a package form a DAG: no cycle, not even one closed by an import inside a
    function or under ``TYPE_CHECKING`` (what two modules share belongs in a lower module)."""
    found = cycles_inside_packages(module_edges())
    assert not found, "import cycles inside a package:\n" + "\n".join(found)


@pytest.mark.parametrize("low, high", [
    ("errors", "fields"), ("names", "errors"), ("names", "fields"), ("fields", "requests"),
    ("fields", "config"), ("requests", "config"), ("data", "models"), ("models", "api"),
    ("joint", "api"), ("mcmc", "api"), ("joint", "bench"), ("decoding", "api"),
    ("decoding", "filling"), ("models", "filling"), ("mcmc", "filling"), ("joint", "filling"),
    ("filling", "api"), ("filling", "jobs"), ("filling", "serve"), ("filling", "epigraphy"),
])
def test_nothing_below_imports_above(low, high):
    """The lower package never imports the higher one, not even inside a function."""
    where = []
    folder = ROOT / "infill" / low
    paths = sorted(folder.rglob("*.py")) if folder.is_dir() else [folder.with_suffix(".py")]
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and (
                    node.module == f"infill.{high}" or node.module.startswith(f"infill.{high}.")):
                where.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not where


def heavy_after(code: str, heavy: tuple[str, ...] = ("torch", "transformers", "numpy")
                ) -> list[str]:
    """The ``heavy`` modules a fresh interpreter has imported once it ran ``code``."""
    code += f"\nimport sys; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return ast.literal_eval(r.stdout.splitlines()[-1])


def test_request_types_import_neither_torch_nor_transformers():
    assert heavy_after("import infill.requests as r; r.SampleRequest(chains=2); r.ServeLimits(); "
                       "r.RescoreRequest(energy='raw')") == []


NOT_YET_SWEPT: set[str] = set()
"""Files that still import inside functions, to be moved to infill/lazy.py's rule (light at the
top, heavy through ``LazyModule``): none; every file of the library and the CLI follows it."""

FUNCTION_IMPORTS_ALLOWED: dict[str, str] = {
    "infill/data/corpora.py:load_hf_dataset": "optional 'datasets': its absence is a message",
    "infill/data/regions.py:_anarcism": "optional 'anarcism': its absence is a message",
    "cli/serve.py:serve": "optional FastAPI/uvicorn: their absence is a message",
    "cli/check_output.py:write_plot": "matplotlib's backend is chosen before pyplot loads",
    "infill/bench/report.py:plot": "matplotlib's backend is chosen before pyplot loads",
    "infill/joint/metrics.py:plot_distance": "matplotlib's backend is chosen before pyplot loads",
    "infill/serve/listen.py:_protocol_class": "uvicorn's protocol, subclassed once the server "
                                              "starts (uvicorn: optional)",
}
"""``path:function`` -> why it imports inside the function."""


def function_imports(source: str, where: str) -> list[str]:
    """``where:function:line`` of each import statement inside a function of ``source`` (a
    nested function's under its own name only)."""
    out = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if function is not None and isinstance(child, (ast.Import, ast.ImportFrom)):
                out.append(f"{where}:{function}:{child.lineno}")
            visit(child, function)

    visit(ast.parse(source), None)
    return out


def test_imports_sit_at_the_top():
    """Light imports at the top, heavy ones through ``LazyModule`` (infill/lazy.py): no import
    inside a function, but for the reasons of FUNCTION_IMPORTS_ALLOWED, in every swept file."""
    assert function_imports("import a\nif b:\n    import c\nclass C:\n    def f(self):\n"
                            "        import d\n        def g():\n            from d import e\n",
                            "x.py") == ["x.py:f:6", "x.py:g:8"]
    files = {str(p.relative_to(ROOT)): p for folder in ("infill", "cli")
             for p in sorted((ROOT / folder).rglob("*.py"))}
    assert NOT_YET_SWEPT <= set(files), NOT_YET_SWEPT - set(files)
    found = [w for rel, path in files.items() if rel not in NOT_YET_SWEPT
             for w in function_imports(path.read_text(encoding="utf-8"), rel)
             if w.rpartition(":")[0] not in FUNCTION_IMPORTS_ALLOWED]
    assert not found, "imports inside functions (infill/lazy.py: top or LazyModule):\n" + \
        "\n".join(found)
    swept = [w for rel in NOT_YET_SWEPT
             for w in function_imports(files[rel].read_text(encoding="utf-8"), rel)]
    still = {w.partition(":")[0] for w in swept}
    assert still == NOT_YET_SWEPT, f"swept now, take off NOT_YET_SWEPT: {NOT_YET_SWEPT - still}"
    for where in FUNCTION_IMPORTS_ALLOWED:      # each reason still has its import
        rel = where.partition(":")[0]
        assert any(w.rpartition(":")[0] == where for w in
                   function_imports(files[rel].read_text(encoding="utf-8"), rel)), where


def test_swept_light_modules_import_no_torch():
    """What the sweep moved to the top kept these modules light (their heavy parts are
    ``LazyModule``s, imported on first use)."""
    light = ["infill.config", "infill.data.epidoc_write", "infill.data.examples",
             "infill.data.inscriptions", "infill.data.pickles", "infill.data.splits",
             "infill.epigraphy", "infill.jobs.check", "infill.jobs.fill", "infill.jobs.inputs",
             "infill.jobs.joint", "infill.jobs.rescore", "infill.jobs.sample",
             "infill.jobs.sharding", "infill.models", "infill.models.checkpoints",
             "infill.models.registry", "infill.parallel", "infill.training",
             *[m for m in modules() if m.startswith(CLI_PACKAGE)]]
    assert heavy_after(f"import importlib; [importlib.import_module(m) for m in {light!r}]",
                       ("torch", "transformers", "numpy", "lxml", "matplotlib")) == []
