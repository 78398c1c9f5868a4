"""Exhaustive explicit-state search: breadth-first, within bounds.

Breadth-first order makes the first counterexample found for an invariant a
*shortest* one (fewest actions from the initial state), which is why the
other engines' traces are compared against it.

The visited set is exact (no fingerprint collision can hide a state) and
collapsed (:mod:`keos.checker.explore.collapse`): a state is stored as the
tuple of its fields' ids in per-field pools, and a successor's fields that
the step kept from its parent are not hashed again.  Per state the search
keeps its parent's id and the index of the action that reached it, so a trace
is rebuilt by walking parents and re-listing each parent's actions.  State
predicates are cached by the fields each evaluation read
(:mod:`keos.checker.explore.incremental`).  Stable fingerprints (blake2b) name
states in traces and graph exports.  Successors of a violating state are not
explored.  Sometimes-properties are judged on states (predicates) and on the
events of every transition taken.

Figures (issue 17, this 2-core machine, CPU seconds, against the search that
kept whole states): see ``benchmarks/explore_bench.py`` and the README.

The search depends only on :class:`model.interface.Model`.
"""

from __future__ import annotations

import gc
import time
from array import array
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from keos.checker.budget import Budget
from keos.checker.explore.collapse import CollapsedStates
from keos.checker.explore.disagreement import Disagreement, settle
from keos.checker.explore.incremental import PredicateCache
from keos.checker.explore.liveness import LivenessPass
from keos.checker.results import EngineResult, judge
from keos.checker.trace import Trace, make_trace
from keos.model.interface import Action, Expectation, Model, Property

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
    """Breadth-first search; returns the result and the networkx graph (or ``None``).

    The search allocates millions of small tuples that all stay alive; Python's cyclic collector
    would walk the whole state space again and again (issue 17: +25-35 % states per second off), so
    it is paused for the whole search -- and resumed only once the search's tables are freed (issue
    27: resumed while they were alive, the first collection walked them all once more).
    """
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _explore(model, scenario, variant, options, permitted, progress)
    finally:
        if gc_was_enabled:
            gc.enable()


#: The property a step violates when its event witnesses an event-based sometimes property whose
#: :attr:`~keos.model.interface.Property.witness` the state after the step does not show.
WITNESS_NAME = "witness_events_borne_out"


def _witness_property(src: int, action: Action, bad: Any, names: list[str], events: tuple[str, ...]) -> Property:
    """The violated ``witness_events_borne_out`` of one false witness: its predicate is false exactly in the state
    the witnessing step left (``bad``), so the trace -- the path to the step's source plus the step -- replays."""
    return Property(
        name=WITNESS_NAME,
        expectation=Expectation.ALWAYS,
        fact="A step's event witnesses a sometimes property only if the state it leaves shows what the property "
        "stands for (the event is the model's report of the step, not a second source of truth).",
        source="the sometimes partners' contract (model/interface.py Property.witness)",
        catches="a step that reports a situation it did not create, or an event matcher that takes one label for "
        "another: a partner reached without its situation makes the always properties it guards look tested",
        predicate=lambda s: s != bad,
        explain=lambda s: f"events {list(events)} witnessed {', '.join(names)}, but the state after the step does "
        "not show it",
    )


def _explore(
    model: Model,
    scenario: str,
    variant: str,
    options: ExploreOptions,
    permitted: tuple[str, ...],
    progress: Callable[[int, int, int], None] | None,
) -> tuple[EngineResult, Any]:
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    state_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
    event_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]
    # Eventually properties: stuck states and fair livelocks (checker/explore/liveness.py).
    states = CollapsedStates()
    eventually = [p for p in props if p.expectation is Expectation.EVENTUALLY]
    # Every state predicate, cached by the fields each evaluation read (checker/explore/incremental.py).
    cache = PredicateCache([p.predicate for p in (*always, *state_sometimes, *eventually)])  # type: ignore[misc]
    n_always, n_state = len(always), len(always) + len(state_sometimes)

    def judged(k: int, state: Any, sid: int) -> bool:
        return cache.holds(n_state + k, state, states.key_of(sid))

    live = LivenessPass(model, props, states, judged) if eventually else None
    disagreement: Disagreement | None = None
    graph = None
    if options.graph:
        import networkx as nx

        graph = nx.DiGraph()

    start = time.perf_counter()
    # The visited set, collapsed (checker/explore/collapse.py): a state is a tuple of per-field pool
    # indices.  Per id, two array slots more: the parent's id and the index of the action that reached
    # it in the parent's enabled list (the action itself is recomputed for a trace).
    parent_of = array("q")
    via = array("I")
    frontier: deque[int] = deque()
    # Events are counted per distinct tuple a step returned (a step's events are a few, and the
    # same tuples recur): one dict update per transition instead of a Counter.update per event.
    event_tuples: dict[tuple[str, ...], int] = {}
    reached: set[str] = set()
    violations: dict[str, int] = {}
    transitions = 0
    expanded = 0
    max_depth_seen = 0
    complete = True
    budget = Budget(options.time_budget_s, options.max_memory_mb)
    budgeted = bool(options.time_budget_s or options.max_memory_mb)
    next_check = 512
    limit: tuple[str, str] | None = None

    # The invariants not violated yet and the sometimes partners not reached yet, by predicate index
    # (judged a group of predicates with the same read set at a time: PredicateCache.failing).
    name_of = [p.name for p in (*always, *state_sometimes)]
    unviolated = tuple(range(n_always))
    unreached = tuple(range(n_always, n_state))
    failing = cache.failing

    def check(state: Any, sid: int) -> bool:
        """Record new violations and reached partners; True if ``state`` newly violates an invariant the
        scenario does not permit (its successors are not explored: the shortest trace ends there).  A state
        that violates only permitted invariants is explored on, so every other invariant is still checked
        beyond a known, documented violation."""
        nonlocal unviolated, unreached
        bad = False
        key = states.key_of(sid)
        if unviolated:
            broken = failing(unviolated, state, key)
            if broken:
                for j in broken:
                    violations[name_of[j]] = sid
                    bad = bad or name_of[j] not in permitted
                unviolated = tuple(j for j in unviolated if j not in broken)
        if unreached:
            false = failing(unreached, state, key)
            if len(false) != len(unreached):
                reached.update(name_of[j] for j in unreached if j not in false)
                unreached = false
        return bad

    def path(sid: int) -> list[Action]:
        """The actions from an initial state to state ``sid`` along the parent links (a shortest path)."""
        chain: list[int] = []
        while parent_of[sid] >= 0:
            chain.append(sid)
            sid = parent_of[sid]
        return [model.actions(states.state(parent_of[c]))[via[c]] for c in reversed(chain)]

    for init in model.init_states():
        sid, new = states.add(states.key(init), 0)
        if not new:
            continue
        parent_of.append(-1)
        via.append(0)
        if live is not None:
            live.record(sid, init)
        if graph is not None:
            graph.add_node(model.fingerprint(init), initial=True)
        if not check(init, sid):
            frontier.append(sid)

    remaining_always = len(always)
    # The hot loop's callables and tables as locals (issue 27): the states' key of a successor
    # (generated, unrolled over the fields: collapse.py), the visited set's dict and lists.
    child_key = states.child_key_function()
    state_of_key = states.state_function()
    keys = states.keys()
    depths = states.depths()
    ids_setdefault = states.ids().setdefault
    keys_append = keys.append
    depths_append = depths.append
    step_of = model.step
    max_depth = options.max_depth
    max_states = options.max_states
    # The liveness pass's verdict masks, read here instead of a call to LivenessPass.wants per state: a
    # state is judged when it is added (live.record), so its slot is set when it is expanded.
    live_masks = live.masks() if live is not None else None
    unreached_events = [p for p in event_sometimes if p.name not in reached]
    # the first step whose event witnessed a sometimes property its state does not show (Property.witness)
    false_witness: tuple[int, Action, Any, list[str], tuple[str, ...]] | None = None
    while frontier:
        if expanded % 256 == 0 and budgeted:
            limit = budget.exceeded()
            if limit is not None:
                complete = False
                break
        if options.stop_on_first and any(v not in permitted for v in violations):
            # a permitted (documented) violation is no verdict: searching on still judges the rest
            complete = False
            break
        if len(violations) == remaining_always and live is None:
            complete = False
            break
        src = frontier.popleft()
        depth = depths[src]
        src_key = keys[src]
        state = state_of_key(src_key)
        if max_depth and depth >= max_depth:
            complete = False
            continue
        if not model.within_bounds(state):
            continue
        try:
            enabled = model.actions(state)
        except Exception as exc:  # the model contradicts itself: report, never crash
            disagreement = Disagreement(tuple(path(src)), None, f"raised {type(exc).__name__}: {exc}")
            complete = False
            break
        # Successors are kept for the liveness pass only where some eventually property is false.
        out: list[tuple[Action, int, tuple[str, ...]]] | None = (
            None if live_masks is None or (src < len(live_masks) and live_masks[src] == 0) else []
        )
        child_depth = depth + 1
        for index, action in enumerate(enabled):
            try:
                step = step_of(state, action)
            except Exception as exc:  # the model contradicts itself: report, never crash
                step, why = None, f"raised {type(exc).__name__}: {exc}"
            else:
                why = "is listed as enabled but step() refused it"
            if step is None:
                disagreement = Disagreement(tuple(path(src)), action, why)
                frontier.clear()
                complete = False
                break
            transitions += 1
            if budgeted and transitions >= next_check:
                # Also between transitions: one state of a large topology has thousands of successors.
                next_check = transitions + 512
                limit = budget.exceeded()
                if limit is not None:
                    frontier.clear()
                    complete = False
                    break
            nxt, step_events = step
            if step_events:
                if type(step_events) is not tuple:  # a model may return a list
                    step_events = tuple(step_events)
                event_tuples[step_events] = event_tuples.get(step_events, 0) + 1
                if unreached_events:
                    hit = [p for p in unreached_events if any(p.matches_event(ev) for ev in step_events)]
                    if hit:
                        reached.update(p.name for p in hit)
                        unreached_events = [p for p in unreached_events if p.name not in reached]
                        if false_witness is None:
                            blind = [p.name for p in hit if p.witness is not None and not p.witness(nxt)]
                            if blind:
                                false_witness = (src, action, nxt, blind, step_events)
                                violations[WITNESS_NAME] = src
            if graph is not None:
                graph.add_edge(model.fingerprint(state), model.fingerprint(nxt), action=model.format_action(action))
            # Fields the step kept from the parent are not hashed again (collapse.py); the visited
            # set's add (CollapsedStates.add) inline.
            dst_key = child_key(nxt, state, src_key)
            n = len(keys)
            dst = ids_setdefault(dst_key, n)
            if out is not None:
                out.append((action, dst, step_events))
            if dst != n:
                continue
            keys_append(dst_key)
            depths_append(child_depth)
            parent_of.append(src)
            via.append(index)
            if live is not None:
                live.record(dst, nxt)
            if child_depth > max_depth_seen:
                max_depth_seen = child_depth
            if not check(nxt, dst):
                frontier.append(dst)
            if max_states and n + 1 >= max_states:
                complete = False
                limit = ("states", f"state budget of {options.max_states:,} distinct states reached")
                frontier.clear()
                break
            if graph is not None and graph.number_of_nodes() > options.max_graph_states:
                raise ValueError(
                    f"state graph exceeds {options.max_graph_states} states; "
                    "graph export is for small models (lower the scenario's bounds)"
                )
        if live is not None and out is not None and len(out) == len(enabled):
            live.expand(src, out)
        expanded += 1
        if progress is not None and expanded % 1024 == 0:
            progress(len(states), transitions, depth)
    elapsed = time.perf_counter() - start
    events: Counter[str] = Counter()
    for step_events, count in event_tuples.items():
        for event in step_events:
            events[event] += count
    if progress is not None:
        progress(len(states), transitions, max_depth_seen)

    traces: dict[str, Trace] = {}
    if false_witness is not None:
        witness_prop = _witness_property(*false_witness)
        props.append(witness_prop)
        always.append(witness_prop)
    for name, bad_id in violations.items():
        prop = next(p for p in always if p.name == name)
        actions = path(bad_id)
        if false_witness is not None and name == WITNESS_NAME:
            actions = [*actions, false_witness[1]]
        traces[name] = make_trace(model, prop, actions, "explore", scenario, variant, permitted=name in permitted)
    stats: dict[str, Any] = {
        "distinct_states": len(states),
        "transitions": transitions,
        "max_depth": max_depth_seen,
        "elapsed_s": round(elapsed, 4),
        "states_per_s": round(len(states) / elapsed) if elapsed > 0 else None,
        "predicate_evaluations": cache.evaluations,
        "predicate_cache_hits": cache.hits,
    }
    live_disagree: dict[str, str] = {}
    if live is not None and disagreement is None:
        found = live.finish(path, scenario, variant, permitted)
        traces.update(found.traces)
        live_disagree = found.disagreements
        stats.update(found.stats)
    properties = judge(props, traces, reached, permitted, liveness=live is not None and disagreement is None)
    if disagreement is not None:
        disagreement.record(model, stats, properties)
    settle(properties, stats, live_disagree, limit)
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
