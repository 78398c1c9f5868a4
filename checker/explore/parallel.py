"""The level-synchronous search: one process or several workers, over 64-bit fingerprints.

The sequential search (:mod:`keos.checker.explore.search`) is keos's reference
engine and the default.  This one explores the same states by the rules of
:mod:`keos.checker.explore.level` -- level by level, states named by 64-bit
fingerprints, parent links as numpy arrays -- either in this process (with a
compact or disk-spilled visited set, :mod:`keos.checker.explore.visited`) or
hash-partitioned over forked worker processes (:mod:`keos.checker.explore.workers`).
Its distinct-state counts, verdicts and shortest counterexample traces equal the
sequential search's whenever the search runs to the end (``tests/test_parallel_search.py``),
with one exception: a state is its canonical encoding here, record classes included (as
``Model.fingerprint`` names it), while the sequential search compares states with Python's
``==``, under which two records of different classes with equal fields are equal, so it
merges states that differ only in such a record and finds fewer states (77,952 instead of
81,017 on ``txn_coordinator_faults``).  A run cut short (``stop_on_first``, every invariant
violated, a budget) stops at the end of a level, not mid-level as the sequential search
does, so its counts may be larger.

What it does not do, and says so in its result:

* **fair livelocks** of ``eventually`` properties need the whole state graph (one
  Tarjan pass over it, :mod:`keos.checker.explore.liveness`), which this engine does
  not keep.  It finds **stuck** states during the expansion (replayed like every
  trace); an eventually property with no stuck state found is ``untested`` with
  the reason (:data:`LIVELOCKS_NOT_CHECKED`), never ``holds``;
* no state graph export (``--graph``): that is the sequential engine's.

Budgets: ``max_states`` is checked after each level, the time and memory budgets
every few hundred expanded states (memory: this process's resident set, or each
worker's share); a run that reaches one returns its partial result with
``stats["limit_reached"]`` as the sequential search does.  Fingerprints are 64 bits:
``stats["fingerprint_collision_bound"]`` bounds the probability that a collision hid a
state.  The cyclic garbage collector is paused during the search (states are acyclic
tuples).
"""

from __future__ import annotations

import gc
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from keos.checker.budget import Budget
from keos.checker.explore.disagreement import Disagreement, settle
from keos.checker.explore.encoding import collision_bound
from keos.checker.explore.level import LevelReport, Partition, actions_to
from keos.checker.results import EngineResult, judge
from keos.checker.trace import Trace, make_trace
from keos.model.interface import Expectation, Model

__all__ = ["LIVELOCKS_NOT_CHECKED", "ParallelOptions", "default_workers", "explore_levels"]

#: Why an eventually property without a stuck state is untested in the level-synchronous engines.
LIVELOCKS_NOT_CHECKED = (
    "no stuck state found; fair livelocks (cycles) are checked by the sequential engine only "
    "(keos explore/check without --workers N, --compact-visited, --spill-dir or Spark)"
)


@dataclass(frozen=True)
class ParallelOptions:
    """Bounds and switches of one level-synchronous search.

    Attributes:
        max_depth: stop expanding at this depth (0 = no limit).
        max_states: stop after the level that reaches this many distinct states (0 = no limit).
        stop_on_first: stop after the level of the first violation.
        workers: processes sharing the search (1: this process; fingerprints hash-partitioned).
        compact: keep the visited set as sorted int64 arrays (8 bytes a state).
        spill_dir: keep the (compact) visited set in memory-mapped files there.
        time_budget_s: stop after this many seconds (0 = no limit).
        max_memory_mb: stop when resident memory reaches this (0 = no limit; per worker: its share).
    """

    max_depth: int = 0
    max_states: int = 2_000_000
    stop_on_first: bool = False
    workers: int = 1
    compact: bool = False
    spill_dir: Path | None = None
    time_budget_s: float = 0.0
    max_memory_mb: int = 0


def default_workers() -> int:
    """The cores this process may run on."""
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


class _InProcess:
    """One partition in this process."""

    def __init__(self, partition: Partition) -> None:
        self.partition = partition

    def seed(self) -> LevelReport:
        return self.partition.seed()

    def rank(self, keys: np.ndarray, cut: frozenset[int]) -> None:
        self.partition.set_ranks(keys, cut)

    def expand(self, depth: int, max_depth: int, stuck_known: frozenset[str]) -> tuple[list[Any], LevelReport]:
        outbox, report = self.partition.expand(depth, max_depth, stuck_known)
        assert not outbox
        return [], report

    def absorb(self, inboxes: list[Any], depth: int, max_depth: int, already: frozenset[str]) -> LevelReport:
        return self.partition.absorb([], depth, max_depth, already)

    def parent(self, depth: int, fp: int) -> tuple[int, int]:
        return self.partition.parent(depth, fp)

    def memory_bytes(self) -> int:
        return self.partition.memory_bytes()

    def child_cpu(self) -> float:
        return 0.0

    def volume(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        self.partition.frontier = []


def explore_levels(
    model: Model,
    scenario: str,
    variant: str,
    options: ParallelOptions = ParallelOptions(),
    permitted: tuple[str, ...] = (),
    progress: Callable[[int, int, int], None] | None = None,
) -> EngineResult:
    """Level-synchronous breadth-first search of ``model``; the engine's result (engine ``explore``)."""
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    eventually = [p for p in props if p.expectation is Expectation.EVENTUALLY]
    workers = options.workers if options.workers > 0 else default_workers()
    start = time.perf_counter()
    cpu_start = time.process_time()
    search: Any
    if workers > 1:
        from keos.checker.explore.workers import WorkerPool

        search = WorkerPool(
            lambda: model, workers, options.compact, options.spill_dir, options.time_budget_s, options.max_memory_mb
        )
    else:
        budget: Budget | None = Budget(options.time_budget_s, options.max_memory_mb)
        if not (options.time_budget_s or options.max_memory_mb):
            budget = None
        search = _InProcess(Partition(model, compact=options.compact, spill_dir=options.spill_dir, budget=budget))

    events: Counter[str] = Counter()
    reached: set[str] = set()
    violations: dict[str, tuple[int, int]] = {}  # name -> (depth, fingerprint)
    stuck: dict[str, tuple[int, int]] = {}  # name -> (depth, fingerprint)
    transitions = distinct = max_depth_seen = 0
    complete = True
    limit: tuple[str, str] | None = None
    disagreement: tuple[int, int, Any, str] | None = None  # (depth, fingerprint, action, reason)

    def take(report: LevelReport, depth: int) -> None:
        """Record a level's new states; rank its expandable ones (its counterexample states are cut)."""
        nonlocal distinct, max_depth_seen, complete
        distinct += report.new_states
        if report.new_states:
            max_depth_seen = depth
        cut: set[int] = set()
        cut_keys: list[int] = []
        for name, (key, fp) in sorted(report.violations.items()):
            if name in violations:
                continue
            violations[name] = (depth, fp)
            if name not in permitted and fp not in cut:
                cut.add(fp)
                cut_keys.append(key)
        reached.update(report.reached)
        keys = report.keys if report.keys is not None else np.empty(0, np.int64)
        if cut_keys:
            keys = keys[~np.isin(keys, np.array(cut_keys, dtype=np.int64))]
        if options.max_depth and depth >= options.max_depth and report.new_states > len(cut):
            complete = False  # states the depth bound kept from being expanded
        search.rank(keys, frozenset(cut))

    try:
        with gc_paused():
            take(search.seed(), 0)
            depth = 0
            while True:
                if (options.stop_on_first and any(v not in permitted for v in violations)) or (
                    always and len(violations) == len(always) and not eventually
                ):
                    complete = False
                    break
                inboxes, expanded = search.expand(depth, options.max_depth, frozenset(stuck))
                transitions += expanded.transitions
                events.update(expanded.events)
                reached.update(expanded.reached)
                for name, (_, fp) in expanded.stuck.items():
                    stuck.setdefault(name, (depth, fp))
                if expanded.cut_by_depth:
                    complete = False
                if expanded.disagreement is not None:
                    _, fp, action, reason = expanded.disagreement
                    disagreement = (depth, fp, action, reason)
                    complete = False
                    break
                if expanded.limit is not None:
                    limit, complete = expanded.limit, False
                    break
                report = search.absorb(inboxes, depth + 1, options.max_depth, frozenset(violations))
                if report.new_states == 0:
                    reached.update(report.reached)
                    break
                depth += 1
                take(report, depth)
                if progress is not None:
                    progress(distinct, transitions, depth)
                if options.max_states and distinct >= options.max_states:
                    complete = False
                    limit = ("states", f"state budget of {options.max_states:,} distinct states reached")
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
        live_disagree: dict[str, str] = {}
        for name, (sdepth, fp) in sorted(stuck.items()):
            prop = next(p for p in eventually if p.name == name)
            actions = actions_to(model, _path(search, sdepth, fp))
            try:
                traces[name] = make_trace(
                    model, prop, actions, "explore", scenario, variant, permitted=name in permitted
                )
            except Exception as exc:  # a stuck state that does not replay is an engine bug, not a verdict
                live_disagree[name] = f"stuck state for {name} found by explore does not replay: {exc}"
        found: Disagreement | None = None
        if disagreement is not None:
            ddepth, fp, action, reason = disagreement
            found = Disagreement(tuple(actions_to(model, _path(search, ddepth, fp))), action, reason)
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
        "search": "level-synchronous",
        "workers": workers,
        "visited": "spilled" if options.spill_dir else "compact" if options.compact else "set",
        "visited_bytes": memory,
        "fingerprint_collision_bound": collision_bound(distinct),
    }
    if workers > 1:
        stats["worker_cpu_s"] = [round(x, 3) for x in search.worker_cpu]
        stats.update(search.volume())
    if eventually:
        stats["liveness"] = "stuck states only; fair livelocks are checked by the sequential engine only"
        stats["stuck_found"] = sorted(stuck)
    properties = judge(props, traces, reached, permitted, liveness=False, liveness_detail=LIVELOCKS_NOT_CHECKED)
    if found is not None:
        found.record(model, stats, properties)
    settle(properties, stats, live_disagree, limit)
    return EngineResult(
        engine="explore",
        scenario=scenario,
        variant=variant,
        properties=properties,
        stats=stats,
        coverage=dict(events),
        complete=complete and not any(v not in permitted for v in violations) and not live_disagree,
    )


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
