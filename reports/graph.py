"""The explored state graph, labelled for people: GraphML and Graphviz DOT.

Every node (a distinct state, named by its stable fingerprint) gets a ``label``: its depth and
fingerprint, ``init`` for initial states and the invariants it violates.  Nodes and edges on a
counterexample (the shortest path to each violation, as replayed into its trace) are marked
``counterexample`` -- drawn red and bold in DOT, an attribute to filter on in GraphML tools
(yEd, Gephi, networkx).
"""

from __future__ import annotations

from collections import deque
from itertools import pairwise
from typing import Any

from keos.checker.results import EngineResult

__all__ = ["counterexample_path", "label_graph", "to_dot"]


def counterexample_path(graph: Any, result: EngineResult) -> tuple[set[str], set[tuple[str, str]], dict[str, str]]:
    """Nodes and edges of every counterexample in ``graph``, and the invariant each end state violates."""
    nodes: set[str] = set()
    edges: set[tuple[str, str]] = set()
    violates: dict[str, str] = {}
    starts = [n for n, d in graph.nodes(data=True) if d.get("initial")]
    for prop in result.violations():
        if prop.trace is None:
            continue
        path = [step.get("fingerprint") for step in prop.trace.steps]
        if not path:
            continue
        first = next((s for s in starts if graph.has_edge(s, path[0])), starts[0] if starts else None)
        chain = ([first] if first is not None else []) + path
        nodes.update(n for n in chain if n is not None)
        edges.update((a, b) for a, b in pairwise(chain) if graph.has_edge(a, b))
        end = str(path[-1])  # several properties can be violated in one state: the label names them all
        violates[end] = f"{violates[end]}, {prop.name}" if end in violates else prop.name
    return nodes, edges, violates


def label_graph(graph: Any, result: EngineResult) -> None:
    """Set ``label``, ``depth`` and ``counterexample`` on every node, ``counterexample`` on edges."""
    depth: dict[str, int] = {}
    queue = deque(n for n, d in graph.nodes(data=True) if d.get("initial"))
    for n in queue:
        depth[n] = 0
    while queue:
        n = queue.popleft()
        for m in graph.successors(n):
            if m not in depth:
                depth[m] = depth[n] + 1
                queue.append(m)
    nodes, edges, violates = counterexample_path(graph, result)
    for n, data in graph.nodes(data=True):
        parts = ["init" if data.get("initial") else f"d{depth.get(n, '?')}", str(n)[:8]]
        if n in violates:
            parts.append(f"violates {violates[n]}")
        data["label"] = " ".join(parts)
        data["depth"] = depth.get(n, -1)
        data["counterexample"] = n in nodes
        data["initial"] = bool(data.get("initial"))
    for a, b, data in graph.edges(data=True):
        data["counterexample"] = (a, b) in edges


def _q(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph: Any) -> str:
    """Graphviz DOT of a labelled graph (:func:`label_graph`): the counterexample path in red."""
    lines = ["digraph keos {", '  node [shape=box, fontname="monospace", fontsize=9];', "  edge [fontsize=8];"]
    for node, data in graph.nodes(data=True):
        attrs = [f'label="{_q(data.get("label", node))}"']
        if data.get("initial"):
            attrs.append("peripheries=2")
        if data.get("counterexample"):
            attrs.append('color="red", penwidth=2, fontcolor="red"')
        lines.append(f'  "{_q(node)}" [{", ".join(attrs)}];')
    for a, b, data in graph.edges(data=True):
        attrs = [f'label="{_q(data.get("action", ""))}"']
        if data.get("counterexample"):
            attrs.append('color="red", penwidth=2')
        lines.append(f'  "{_q(a)}" -> "{_q(b)}" [{", ".join(attrs)}];')
    lines.append("}")
    return "\n".join(lines) + "\n"
