"""Exhaustive explicit-state search: breadth-first, within bounds.

Breadth-first order makes the first counterexample found for an invariant a
*shortest* one (fewest actions from the initial state), which is why the
other engines' traces are compared against it.

The visited set holds the states themselves (exact: no fingerprint collision
can hide a state), each with its parent and the action that reached it, so a
trace is rebuilt by walking parents.  Stable fingerprints (blake2b) name
states in traces and graph exports.  Successors of a violating state are not
explored.  Sometimes-properties are judged on states (predicates) and on the
events of every transition taken.

The search depends only on :class:`model.interface.Model`.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from keos.checker.budget import Budget
from keos.checker.explore.disagreement import Disagreement
from keos.checker.explore.liveness import LivenessPass
from keos.checker.results import EngineResult, Verdict, judge
from keos.checker.trace import Trace, make_trace
from keos.model.interface import Action, Expectation, Model

__all__ = ["ExploreOptions", "explore"]


@dataclass(frozen=True)
class ExploreOptions:
    """Bounds and switches of one search.

    Attributes:
        max_depth: stop expanding at this depth (0 = no limit).
        max_states: stop after this many distinct states (0 = no limit).
        stop_on_first: stop at the first violation instead of finding the
            shortest counterexample of every invariant.
        graph: build a networkx graph of the explored state space.
        max_graph_states: refuse to build a graph beyond this many states.
        time_budget_s: stop after this many seconds (0 = no limit).
        max_memory_mb: stop when the process's resident memory reaches this (0 = no limit).

    A search stopped by ``max_states``, the time or the memory budget returns what it found with
    ``stats["limit_reached"]`` set (``"states"``, ``"time"``, ``"memory"``): a partial result.
    """

    max_depth: int = 0
    max_states: int = 2_000_000
    stop_on_first: bool = False
    graph: bool = False
    max_graph_states: int = 20_000
    time_budget_s: float = 0.0
    max_memory_mb: int = 0


def explore(
    model: Model,
    scenario: str,
    variant: str,
    options: ExploreOptions = ExploreOptions(),
    permitted: tuple[str, ...] = (),
    progress: Callable[[int, int, int], None] | None = None,
) -> tuple[EngineResult, Any]:
    """Breadth-first search; returns the result and the networkx graph (or ``None``)."""
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    state_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
    event_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]
    # Eventually properties: stuck states and fair livelocks (checker/explore/liveness.py).
    live = LivenessPass(model, props) if any(p.expectation is Expectation.EVENTUALLY for p in props) else None
    disagreement: Disagreement | None = None
    graph = None
    if options.graph:
        import networkx as nx

        graph = nx.DiGraph()

    start = time.perf_counter()
    parent: dict[Any, tuple[Any, Action] | None] = {}
    frontier: deque[tuple[Any, int]] = deque()
    events: Counter[str] = Counter()
    reached: set[str] = set()
    violations: dict[str, Any] = {}
    transitions = 0
    expanded = 0
    max_depth_seen = 0
    complete = True
    budget = Budget(options.time_budget_s, options.max_memory_mb)
    limit: tuple[str, str] | None = None

    def check(state: Any) -> bool:
        """Record new violations and reached partners; True if ``state`` newly violates an invariant the
        scenario does not permit (its successors are not explored: the shortest trace ends there).  A state
        that violates only permitted invariants is explored on, so every other invariant is still checked
        beyond a known, documented violation."""
        bad = False
        for p in always:
            if p.name not in violations and not p.holds(state):
                violations[p.name] = state
                bad = bad or p.name not in permitted
        for p in state_sometimes:
            if p.name not in reached and p.holds(state):
                reached.add(p.name)
        return bad

    for init in model.init_states():
        if init in parent:
            continue
        parent[init] = None
        if graph is not None:
            graph.add_node(model.fingerprint(init), initial=True)
        if not check(init):
            frontier.append((init, 0))

    remaining_always = len(always)
    while frontier:
        if expanded % 256 == 0 and (options.time_budget_s or options.max_memory_mb):
            limit = budget.exceeded()
            if limit is not None:
                complete = False
                break
        if options.stop_on_first and violations:
            complete = False
            break
        if len(violations) == remaining_always and live is None:
            complete = False
            break
        state, depth = frontier.popleft()
        if options.max_depth and depth >= options.max_depth:
            complete = False
            continue
        if not model.within_bounds(state):
            continue
        try:
            enabled = model.actions(state)
        except Exception as exc:  # the model contradicts itself: report, never crash
            disagreement = Disagreement(tuple(_path(parent, state)), None, f"raised {type(exc).__name__}: {exc}")
            complete = False
            break
        successors: list[Any] | None = [] if live is not None else None
        for action in enabled:
            try:
                step = model.step(state, action)
            except Exception as exc:  # the model contradicts itself: report, never crash
                step, why = None, f"raised {type(exc).__name__}: {exc}"
            else:
                why = "is listed as enabled but step() refused it"
            if step is None:
                disagreement = Disagreement(tuple(_path(parent, state)), action, why)
                frontier.clear()
                complete = False
                break
            if successors is not None:
                successors.append((action, step))
            transitions += 1
            if step.events:
                events.update(step.events)
                for ev in step.events:
                    for p in event_sometimes:
                        if p.name not in reached and p.matches_event(ev):
                            reached.add(p.name)
            nxt = step.state
            if graph is not None:
                graph.add_edge(model.fingerprint(state), model.fingerprint(nxt), action=model.format_action(action))
            # One hash of the (large, nested) state: insert if absent, detect by size.
            before = len(parent)
            parent.setdefault(nxt, (state, action))
            if len(parent) == before:
                continue
            if depth + 1 > max_depth_seen:
                max_depth_seen = depth + 1
            if not check(nxt):
                frontier.append((nxt, depth + 1))
            if options.max_states and len(parent) >= options.max_states:
                complete = False
                limit = ("states", f"state budget of {options.max_states:,} distinct states reached")
                frontier.clear()
                break
            if graph is not None and graph.number_of_nodes() > options.max_graph_states:
                raise ValueError(
                    f"state graph exceeds {options.max_graph_states} states; "
                    "graph export is for small models (lower the scenario's bounds)"
                )
        if live is not None and successors is not None and len(successors) == len(enabled):
            live.expand(state, depth, successors)
        expanded += 1
        if progress is not None and expanded % 1024 == 0:
            progress(len(parent), transitions, depth)
    elapsed = time.perf_counter() - start
    if progress is not None:
        progress(len(parent), transitions, max_depth_seen)

    traces: dict[str, Trace] = {}
    for name, bad_state in violations.items():
        prop = next(p for p in always if p.name == name)
        actions = _path(parent, bad_state)
        traces[name] = make_trace(model, prop, actions, "explore", scenario, variant, permitted=name in permitted)
    stats: dict[str, Any] = {
        "distinct_states": len(parent),
        "transitions": transitions,
        "max_depth": max_depth_seen,
        "elapsed_s": round(elapsed, 4),
        "states_per_s": round(len(parent) / elapsed) if elapsed > 0 else None,
    }
    live_disagree: dict[str, str] = {}
    if live is not None and disagreement is None:
        found = live.finish(parent, scenario, variant, permitted)
        traces.update(found.traces)
        live_disagree = found.disagreements
        stats.update(found.stats)
    properties = judge(props, traces, reached, permitted, liveness=live is not None and disagreement is None)
    if disagreement is not None:
        disagreement.record(model, stats, properties)
    for r in properties:
        if r.name in live_disagree:
            r.verdict, r.detail = Verdict.UNTESTED, f"engine disagreement: {live_disagree[r.name]}"
            stats.setdefault("engine_disagreement", []).append(live_disagree[r.name])
    if limit is not None:
        stats["limit_reached"], stats["limit_detail"] = limit
    result = EngineResult(
        engine="explore",
        scenario=scenario,
        variant=variant,
        properties=properties,
        stats=stats,
        coverage=dict(events),
        complete=complete and not any(v not in permitted for v in violations) and not live_disagree,
    )
    return result, graph


def _path(parent: dict[Any, tuple[Any, Action] | None], state: Any) -> list[Action]:
    """The actions from an initial state to ``state`` along the parent links (a shortest path)."""
    actions: list[Action] = []
    s = state
    while (link := parent[s]) is not None:
        s, a = link
        actions.append(a)
    actions.reverse()
    return actions
