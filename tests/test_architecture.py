"""The tree is the architecture: no import cycles, no layer importing a layer above it."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("model", "invariants", "scenarios", "checker", "reports")


def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for top in LAYERS:
        for path in (ROOT / top).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            module = ".".join(("keos", *parts)).removesuffix(".__init__")
            graph.add_node(module)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("keos."):
                    targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                elif isinstance(node, ast.Import):
                    targets = [a.name for a in node.names if a.name.startswith("keos.")]
                else:
                    continue
                graph.add_edges_from((module, t) for t in targets)
    return graph


def _modules(graph: nx.DiGraph) -> nx.DiGraph:
    """The graph between modules (``from keos.x import name`` also adds an edge to ``keos.x.name``)."""
    return graph.subgraph(n for n in graph if n.split(".")[1] in LAYERS and _exists(n)).copy()


def _exists(module: str) -> bool:
    rel = Path(*module.split(".")[1:])
    return (ROOT / rel.with_suffix(".py")).exists() or (ROOT / rel / "__init__.py").exists()


def test_no_import_cycles() -> None:
    graph = _modules(_graph())
    assert graph.number_of_nodes() > 50
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == []


def test_no_module_imports_a_layer_above_it() -> None:
    graph = _modules(_graph())
    upward = []
    for a, b in graph.edges:
        if a.startswith("keos.checker.cli."):
            continue  # the CLI is the top layer: it renders results with reports/
        if LAYERS.index(b.split(".")[1]) > LAYERS.index(a.split(".")[1]):
            upward.append((a, b))
    assert upward == []


def test_engines_see_models_only_through_the_interface() -> None:
    graph = _modules(_graph())
    engines = ("keos.checker.explore.", "keos.checker.stateful.", "keos.checker.sweep.")
    allowed = ("keos.model.interface", "keos.model.variants")
    leaks = [(a, b) for a, b in graph.edges if a.startswith(engines) and b.startswith("keos.model.")]
    leaks = [(a, b) for a, b in leaks if b not in allowed]
    assert leaks == []
