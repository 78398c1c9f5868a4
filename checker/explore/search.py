"""Exhaustive explicit-state search: breadth-first, within bounds.

Breadth-first order makes the first counterexample found for an invariant a
*shortest* one (fewest actions from the initial state), which is why the
other engines' traces are compared against it.

The search is level-synchronous (:mod:`keos.checker.explore.level`): the visited
set holds 64-bit fingerprints of a canonical encoding
(:mod:`keos.checker.explore.encoding`, collision bound in the statistics), each
state keeps a parent link (parent fingerprint and successor index), and a trace
is rebuilt by walking the links back and replaying the successor indices on the
model.  With ``workers > 1`` the fingerprints are hash-partitioned over worker
processes (:mod:`keos.checker.explore.workers`) with the same rules, so counts,
verdicts and traces do not depend on the number of workers.  Successors of a
violating state are not explored.  Sometimes-properties are judged on states
(predicates) and on the events of every transition taken.  Python's cyclic
garbage collector is paused during the search (states are acyclic tuples).

The search depends only on :class:`model.interface.Model`.
"""

from __future__ import annotations

import gc
import os
import resource
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keos.checker.explore.encoding import collision_bound
from keos.checker.explore.level import ExpandHook, LevelReport, Partition, actions_to
from keos.checker.results import EngineResult, judge
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
        workers: processes sharing the search (fingerprints hash-partitioned).
        compact: keep the visited set as sorted int64 arrays (8 bytes a state).
        spill_dir: with ``compact``, write the visited runs there (memory-mapped).
        max_memory_mb: stop (partial result) once the search's resident memory
            grows by this much (0 = no limit).
    """

    max_depth: int = 0
    max_states: int = 2_000_000
    stop_on_first: bool = False
    graph: bool = False
    max_graph_states: int = 20_000
    workers: int = 1
    compact: bool = False
    spill_dir: Path | None = None
    max_memory_mb: int = 0


def default_workers() -> int:
    """All the cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (model states are acyclic; reference counting frees them)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def rss_mb() -> float:
    """This process's peak resident memory in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def explore(
    model: Model,
    scenario: str,
    variant: str,
    options: ExploreOptions = ExploreOptions(),
    permitted: tuple[str, ...] = (),
    progress: Callable[[int, int, int], None] | None = None,
    hook: ExpandHook | None = None,
    model_factory: Callable[[], Model] | None = None,
) -> tuple[EngineResult, Any]:
    """Breadth-first search; returns the result and the networkx graph (or ``None``).

    ``hook`` is called for every expanded state with its fingerprint, the state and
    its successors ``[(action, next state, next fingerprint)]`` (one worker only);
    ``model_factory`` rebuilds the model in worker processes (default: inherit it).
    """
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    graph = None
    if options.graph:
        import networkx as nx

        graph = nx.DiGraph()
        fingerprint = model.fingerprint
        user_hook = hook

        def graph_hook(fp: int, state: Any, edges: list[tuple[Action, Any, int]]) -> None:
            src = fingerprint(state)
            if graph.number_of_nodes() == 0:
                for init in model.init_states():
                    graph.add_node(fingerprint(init), initial=True)
            for action, nxt, _ in edges:
                graph.add_edge(src, fingerprint(nxt), action=model.format_action(action))
            if graph.number_of_nodes() > options.max_graph_states:
                raise ValueError(
                    f"state graph exceeds {options.max_graph_states} states; "
                    "graph export is for small models (lower the scenario's bounds)"
                )
            if user_hook is not None:
                user_hook(fp, state, edges)

        hook = graph_hook

    workers = options.workers if options.workers > 0 else default_workers()
    if hook is not None:
        workers = 1
    start = time.perf_counter()
    cpu_start = time.process_time()
    rss_start = rss_mb()
    if workers > 1:
        from keos.checker.explore.workers import WorkerPool

        search: Any = WorkerPool(model_factory or (lambda: model), workers, options.compact, options.spill_dir)
    else:
        search = _InProcess(Partition(model, compact=options.compact, spill_dir=options.spill_dir, hook=hook))

    events: Counter[str] = Counter()
    reached: set[str] = set()
    violations: dict[str, tuple[int, int]] = {}  # name -> (depth, fingerprint)
    transitions = 0
    distinct = 0
    max_depth_seen = 0
    complete = True
    stopped = ""
    try:
        with gc_paused():
            report = search.seed()
            distinct += report.new_states
            _merge(report, 0, violations, reached, events)
            depth = 0
            while True:
                if (options.stop_on_first and violations) or (always and len(violations) == len(always)):
                    complete = False
                    break
                report = search.level(depth, options.max_depth, frozenset(violations))
                transitions += report.transitions
                if report.cut_by_depth:
                    complete = False
                if report.new_states == 0:
                    break
                depth += 1
                distinct += report.new_states
                max_depth_seen = depth
                _merge(report, depth, violations, reached, events)
                if progress is not None:
                    progress(distinct, transitions, depth)
                if options.max_states and distinct >= options.max_states:
                    complete, stopped = False, f"max_states {options.max_states}"
                    break
                if options.max_memory_mb and rss_mb() - rss_start >= options.max_memory_mb:
                    complete, stopped = False, f"max_memory {options.max_memory_mb} MiB"
                    break
        if progress is not None:
            progress(distinct, transitions, max_depth_seen)
        elapsed = time.perf_counter() - start
        cpu = time.process_time() - cpu_start + search.child_cpu()
        traces: dict[str, Trace] = {}
        for name, (vdepth, fp) in sorted(violations.items()):
            prop = next(p for p in always if p.name == name)
            actions = actions_to(model, _path(search, vdepth, fp))
            traces[name] = make_trace(model, prop, actions, "explore", scenario, variant, permitted=name in permitted)
        memory = search.memory_bytes()
    finally:
        search.close()
    stats: dict[str, Any] = {
        "distinct_states": distinct,
        "transitions": transitions,
        "max_depth": max_depth_seen,
        "elapsed_s": round(elapsed, 4),
        "states_per_s": round(distinct / elapsed) if elapsed > 0 else None,
        "cpu_s": round(cpu, 4),
        "workers": workers,
        "visited_bytes": memory,
        "fingerprint_collision_bound": collision_bound(distinct),
    }
    if workers > 1:
        stats["worker_cpu_s"] = [round(x, 3) for x in search.worker_cpu]
    if stopped:
        stats["partial"] = True
        stats["stopped_by"] = stopped
    result = EngineResult(
        engine="explore",
        scenario=scenario,
        variant=variant,
        properties=judge(props, traces, reached, permitted),
        stats=stats,
        coverage=dict(events),
        complete=complete and not violations,
    )
    return result, graph


def _merge(
    report: LevelReport,
    depth: int,
    violations: dict[str, tuple[int, int]],
    reached: set[str],
    events: Counter[str],
) -> None:
    for name, (_, fp) in report.violations.items():
        if name not in violations:
            violations[name] = (depth, fp)
    reached |= report.reached
    events.update(report.events)


def _path(search: Any, depth: int, fp: int) -> list[int]:
    """Initial-state index then successor indices from the initial state to ``fp`` at ``depth``."""
    steps: list[int] = []
    while True:
        pfp, k = search.parent(depth, fp)
        if k < 0:
            steps.append(-1 - k)
            break
        steps.append(k)
        fp, depth = pfp, depth - 1
    steps.reverse()
    return steps


class _InProcess:
    """One partition in this process: the search with ``--workers 1``."""

    def __init__(self, partition: Partition) -> None:
        self.partition = partition

    def seed(self) -> LevelReport:
        report = self.partition.seed()
        self.partition.set_ranks(report.keys)
        return report

    def level(self, depth: int, max_depth: int, already: frozenset[str] = frozenset()) -> LevelReport:
        outbox, expanded = self.partition.expand(depth, max_depth)
        assert not outbox
        report = self.partition.absorb([], depth + 1, max_depth, already)
        self.partition.set_ranks(report.keys)
        report.transitions = expanded.transitions
        report.cut_by_depth = report.cut_by_depth or expanded.cut_by_depth
        report.events = expanded.events
        return report

    def parent(self, depth: int, fp: int) -> tuple[int, int]:
        return self.partition.parent(depth, fp)

    def memory_bytes(self) -> int:
        return self.partition.memory_bytes()

    def child_cpu(self) -> float:
        return 0.0

    def close(self) -> None:
        self.partition.frontier = []
