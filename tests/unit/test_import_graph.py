"""The import graph of the platform and the first-party plugins: no cycle across modules, and
imports run down the layers (``LAYERS``, drawn in docs/architecture.md), counting every import
(a function's own ones too, and those only type checkers read)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import maxy
import maxy_plugins

from tests.imports import from_module

ROOTS = {"maxy": Path(maxy.__file__).parent, "maxy_plugins": Path(maxy_plugins.__file__).parent}

# Bottom to top: a module imports its own layer and those below. A platform package's ``http``
# module is a router (serving); its ``cli`` module, like the command line, an application.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "base",
        frozenset(
            "__init__ errors logs config envcheck spelling identifiers secrets textcheck fsfaults accounts db llm console "
            "httpjson heap resources".split()
        ),
    ),
    ("graph", frozenset("graph embeddings neo4j".split())),
    (
        "domain",
        frozenset(
            "search ingest conversations memory reports provenance taskstore memoryagent dataops "
            "community gateway sites status data_health".split()
        ),
    ),
    ("plugin api", frozenset({"plugins"})),
    ("plugins", frozenset({"maxy_plugins"})),
    ("serving", frozenset("mcp serving webconsole agents specialists".split())),
    ("applications", frozenset("__main__ cli demo evaluation".split())),
)
# Known imports up the layers: ``maxy.Memory``, the Python API, imported on first use by the
# package itself; the memory agent (domain) reads its prompts through its plugin's manifest.
UPWARD = {
    ("maxy", "maxy.memory.api"),
    ("maxy.memoryagent.prompts", "maxy.plugins.discovery"),
    ("maxy.memoryagent.prompts", "maxy.plugins.manifest"),
}


def _modules() -> dict[str, Path]:
    found = {}
    for package, root in ROOTS.items():
        for path in root.rglob("*.py"):
            parts = [package, *path.relative_to(root).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(module: str, path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = from_module(package, node)
    for alias in node.names:
        yield ".".join([*base, alias.name])


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(name, path, node):
                    while target and target not in modules:  # a name inside a module: the module
                        target = target.rpartition(".")[0]
                    if target and target != name:
                        graph[name].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            child = next(edges, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_its_way_back_to_itself() -> None:
    graph = _graph()
    assert len(graph) > 250  # the whole platform and every first-party plugin
    assert _cycles(graph) == []


def layer(module: str) -> int:
    parts = module.split(".")
    if parts[0] == "maxy" and parts[-1] == "cli":
        return len(LAYERS) - 1
    if parts[0] == "maxy" and parts[-1] == "http":
        return next(i for i, (name, _) in enumerate(LAYERS) if name == "serving")
    key = "maxy_plugins" if parts[0] == "maxy_plugins" else (parts[1] if len(parts) > 1 else "__init__")
    return next(i for i, (_, members) in enumerate(LAYERS) if key in members)


def test_every_module_has_a_layer() -> None:
    placed = {module: layer(module) for module in _modules()}
    assert placed["maxy.graph.schema"] < placed["maxy.search.pipeline"] < placed["maxy.mcp.server"]
    assert placed["maxy.community.negotiation.http"] == placed["maxy.serving.app"]


def test_imports_run_down_the_layers() -> None:
    upward = {(a, b) for a, targets in _graph().items() for b in targets if layer(b) > layer(a)}
    assert upward == UPWARD and len(upward) <= 3


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
