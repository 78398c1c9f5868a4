"""One hash partition of a level-synchronous breadth-first search.

The search proceeds level by level (all states at depth ``d``, then all at ``d + 1``).
States are named by 64-bit fingerprints (:mod:`keos.checker.explore.encoding`) and
split into partitions by ``fingerprint mod partitions``; a partition owns the visited
fingerprints, the parent links and the frontier of its states.  One process runs one
partition (``--workers 1`` with ``--compact-visited``), or each worker process runs
one (:mod:`keos.checker.explore.workers`); the Spark engine follows the same rules on
DataFrames (:mod:`keos.checker.explore.spark_bfs`).  The driver of both local forms
is :mod:`keos.checker.explore.parallel`.

Per level a partition *expands* its frontier (every successor is fingerprinted;
those it owns stay, the others go to their owner, as the parts of their canonical
encodings: :mod:`keos.checker.explore.workers`) and then
*absorbs* what it was sent: candidates already visited are dropped, the rest become
the next level.  The rules make the result independent of how states are split, and
equal to the sequential search's (:mod:`keos.checker.explore.search`):

* the states of a level are **ranked** in the order a sequential breadth-first search
  discovers them: by ``(rank of the parent, successor index)`` (the *key*), the initial
  states by their position;
* a state's **parent** is the discoverer with the smallest key, and the
  **counterexample** of an invariant is the violating state with the smallest key in
  the first level that has one: what the sequential search (first discoverer, first
  violation found) reports;
* the successors of that counterexample state are not explored when the invariant is
  not permitted by the scenario (the sequential search stops there: the shortest
  trace ends in it); every other state is -- a later state violating an invariant
  that already has its counterexample, or one violating only permitted invariants,
  is explored on.  Which states are cut is decided by the driver once it knows every
  partition's smallest keys (:meth:`Partition.set_ranks`);
* states the model puts out of bounds (``within_bounds``) or at the depth limit are
  not expanded;
* an expanded state where an ``eventually`` property is false and every enabled
  action is a fault is a **stuck** state for it (:mod:`keos.checker.liveness`); the
  one with the smallest rank in the first level with one is reported, the state the
  sequential search's liveness pass records first.

A model's optional ``successors(state)`` (``(action, next state, events)`` in the
order of ``actions(state)``) is used when it has one, else ``actions`` then ``step``;
a step that refuses a listed action or raises is an engine/model disagreement
(:mod:`keos.checker.explore.disagreement`), reported, never a crash.

Parent links are numpy arrays per level (fingerprint, parent fingerprint, successor
index: 20 bytes a state) and the visited set is a :class:`~keos.checker.explore.visited.FingerprintSet`,
so only the frontier is held as Python objects.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from keos.checker.budget import Budget
from keos.checker.explore.encoding import StateEncoder, decode, fingerprint_of
from keos.checker.explore.visited import FingerprintSet
from keos.checker.liveness import fault_test
from keos.model.interface import Action, Expectation, Model

__all__ = [
    "KEY_SPAN",
    "LevelReport",
    "ModelDisagrees",
    "Partition",
    "actions_to",
    "combine",
    "fault_classifier",
    "successor_function",
]

Successors = Callable[[Any], list[tuple[Action, Any, tuple[str, ...]]]]

#: Successors a state may have: a key is ``rank of the parent * KEY_SPAN + successor index``.
KEY_SPAN = 1 << 16

#: Expanded states between two checks of the time and memory budget.
_BUDGET_EVERY = 256


class ModelDisagrees(Exception):
    """The model contradicted its interface while listing a state's successors."""

    def __init__(self, action: Action | None, reason: str) -> None:
        super().__init__(reason)
        self.action = action
        self.reason = reason


def successor_function(model: Model) -> Successors:
    """``model.successors`` (as a list) when the model offers one, else ``actions`` then ``step``, one by one.

    Either way a contradiction (a listed action that ``step`` refuses, a raising call)
    raises :class:`ModelDisagrees`.
    """
    fused = getattr(model, "successors", None)
    if fused is not None:

        def listed(state: Any) -> list[tuple[Action, Any, tuple[str, ...]]]:
            try:
                return list(fused(state))
            except Exception as exc:
                raise ModelDisagrees(None, f"successors() raised {type(exc).__name__}: {exc}") from None

        return listed

    actions, step = model.actions, model.step

    def successors(state: Any) -> list[tuple[Action, Any, tuple[str, ...]]]:
        try:
            enabled = actions(state)
        except Exception as exc:
            raise ModelDisagrees(None, f"raised {type(exc).__name__}: {exc}") from None
        out = []
        for action in enabled:
            try:
                taken = step(state, action)
            except Exception as exc:
                raise ModelDisagrees(action, f"raised {type(exc).__name__}: {exc}") from None
            if taken is None:
                raise ModelDisagrees(action, "is listed as enabled but step() refused it")
            out.append((action, taken.state, taken.events))
        return out

    return successors


def fault_classifier(model: Model) -> Callable[[Any, Action, tuple[str, ...]], bool]:
    """``(state, action, events) -> whether the action is a fault``, as :mod:`keos.checker.liveness` defines it.

    The model's ``fault_kind`` hook when it has one (:func:`keos.checker.liveness.fault_test`),
    else the ``fault:`` events the step already emitted (no second step).
    """
    if getattr(model, "fault_kind", None) is not None:
        test = fault_test(model)
        return lambda state, action, _events: test(state, action)
    return lambda _state, _action, events: any(e.startswith("fault:") for e in events)


@dataclass
class LevelReport:
    """What one partition found in one level (summed over partitions by the driver)."""

    new_states: int = 0
    transitions: int = 0
    cut_by_depth: bool = False
    #: invariant -> (key, fingerprint) of its violating state with the smallest key
    violations: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: eventually property -> (rank, fingerprint) of its stuck state with the smallest rank
    stuck: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: the sorted keys of the new states that may be expanded (ranked by the driver)
    keys: Any = None
    reached: set[str] = field(default_factory=set)
    events: Counter[str] = field(default_factory=Counter)
    #: (rank, fingerprint of the state, the action or None, why) when the model contradicted itself
    disagreement: tuple[int, int, Action | None, str] | None = None
    #: (limit, detail) when the time or memory budget ran out during the expansion
    limit: tuple[str, str] | None = None


class Partition:
    """The visited fingerprints, parent links and frontier of partition ``index`` of ``count``."""

    def __init__(
        self,
        model: Model,
        index: int = 0,
        count: int = 1,
        *,
        compact: bool = False,
        spill_dir: Path | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.model = model
        self.index = index
        self.count = count
        self.encoder = StateEncoder()
        self.visited = FingerprintSet(compact=compact, spill_dir=spill_dir)
        props = list(model.properties())
        self.always = [p for p in props if p.expectation is Expectation.ALWAYS]
        self.state_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
        self.event_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]
        self.eventually = [p for p in props if p.expectation is Expectation.EVENTUALLY]
        self.is_fault = fault_classifier(model)
        self.successors = successor_function(model)
        self.budget = budget
        #: per depth: (fingerprints sorted, parent fingerprints, successor indices)
        self.levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.frontier: list[tuple[int, int, Any]] = []  # (rank, fingerprint, state), by rank
        self._pending: list[tuple[int, int, Any]] = []  # (key, fingerprint, state) awaiting ranks
        self._local: dict[int, list[Any]] = {}
        self._sent: set[int] = set()
        self.reached: set[str] = set()
        self.stuck_found: set[str] = set()

    def owns(self, fp: int) -> bool:
        """Whether fingerprint ``fp`` belongs to this partition."""
        return self.count == 1 or fp % self.count == self.index

    # -- level 0 ---------------------------------------------------------------------------------

    def seed(self) -> LevelReport:
        """Level 0: the model's initial states that this partition owns (key: their position)."""
        for k, state in enumerate(self.model.init_states()):
            fp, _ = self.encoder.fingerprint(state)
            if self.owns(fp) and fp not in self._local:
                self._local[fp] = [k, fp, -1 - k, state]
        return self.absorb([], depth=0, max_depth=0)

    # -- one level -------------------------------------------------------------------------------

    def expand(
        self, depth: int, max_depth: int, stuck_known: frozenset[str] = frozenset()
    ) -> tuple[dict[int, dict[int, list[Any]]], LevelReport]:
        """Expand the frontier at ``depth``.

        Returns, per other partition, the successors it owns (``fingerprint ->
        [key, parent fingerprint, successor index, encoding, its parts]``, the parts as
        :attr:`StateEncoder.last_parts <keos.checker.explore.encoding.StateEncoder.last_parts>`
        names them; the smallest key kept), and the counts.  A fingerprint sent in an earlier level is
        not sent again: its owner has visited it since.  ``stuck_known``: eventually
        properties that already have a stuck state (from an earlier level).
        """
        report = LevelReport()
        outbox: dict[int, dict[int, list[Any]]] = {}
        sent = self._sent
        if max_depth and depth >= max_depth:
            report.cut_by_depth = bool(self.frontier)
            self.frontier = []
            return outbox, report
        local = self._local
        seen = self.visited.fast_contains
        encoder = self.encoder
        encode = encoder.encode
        reached = self.reached
        count, me = self.count, self.index
        within = self.model.within_bounds
        prime = self.encoder.prime
        successors = self.successors
        live = [p for p in self.eventually if p.name not in stuck_known]
        is_fault = self.is_fault
        budget = self.budget
        emitted: list[str] = []
        transitions = 0
        for i, (rank, pfp, state) in enumerate(self.frontier):
            if budget is not None and i % _BUDGET_EVERY == 0:
                report.limit = budget.exceeded()
                if report.limit is not None:
                    break
            if not within(state):
                continue
            try:
                succ = successors(state)
            except ModelDisagrees as exc:
                report.disagreement = (rank, pfp, exc.action, exc.reason)
                break
            if live:
                false = [p for p in live if not p.holds(state)]
                if false and all(is_fault(state, a, evs) for a, _, evs in succ):
                    for p in false:
                        if p.name not in report.stuck:  # the frontier is in rank order
                            report.stuck[p.name] = (rank, pfp)
            base = rank * KEY_SPAN
            primed = False
            for k, (_, nxt, evs) in enumerate(succ):
                if evs:
                    emitted.extend(evs)
                if not primed:
                    prime(state)  # its successors share its fields: encode them against it
                    primed = True
                data = encode(nxt)
                fp = fingerprint_of(data)
                if count == 1 or fp % count == me:
                    if seen(fp):
                        continue
                    if fp not in local:  # the frontier is in rank order: the first discoverer has the smallest key
                        local[fp] = [base + k, pfp, k, nxt]
                elif fp not in sent:
                    box = outbox.get(fp % count)
                    if box is None:
                        box = outbox[fp % count] = {}
                    if fp not in box:
                        box[fp] = [base + k, pfp, k, data, encoder.last_parts]
            transitions += len(succ)
        report.transitions = transitions
        events = report.events
        events.update(emitted)  # counted once per level: Counter.update per transition costs more
        for ev in events:
            for p in self.event_sometimes:
                if p.name not in reached and p.matches_event(ev):
                    reached.add(p.name)
        report.reached = set(reached)
        self.frontier = []
        if len(sent) > 4_000_000:
            sent.clear()
        for box in outbox.values():
            sent.update(box)
        return outbox, report

    def absorb(
        self,
        inbox: Iterable[tuple[int, int, int, int, Any]],
        depth: int,
        max_depth: int,
        already: frozenset[str] = frozenset(),
    ) -> LevelReport:
        """Take the candidates of level ``depth`` (own and sent); keep the unvisited ones.

        ``already``: the invariants violated at an earlier level (their counterexample
        is known: their later violators are explored on).
        """
        local = self._local
        self._local = {}
        for fp, key, pfp, k, data in inbox:
            cand = local.get(fp)
            if cand is None or key < cand[0]:
                local[fp] = [key, pfp, k, data]
        report = LevelReport()
        self._pending = []
        if not local:
            return report
        fps = np.fromiter(local.keys(), dtype=np.int64, count=len(local))
        fresh = self.visited.add_new(fps)
        fresh.sort()
        parents = np.empty(len(fresh), dtype=np.int64)
        ks = np.empty(len(fresh), dtype=np.int32)
        pending = self._pending
        violations = report.violations
        for i, fp in enumerate(fresh.tolist()):
            key, pfp, k, value = local[fp]
            parents[i] = pfp
            ks[i] = k
            state = decode(value) if type(value) is bytes else value
            for p in self.always:
                if p.name not in already and not p.holds(state):
                    best = violations.get(p.name)
                    if best is None or key < best[0]:
                        violations[p.name] = (key, fp)
            for p in self.state_sometimes:
                if p.name not in self.reached and p.holds(state):
                    self.reached.add(p.name)
            pending.append((key, fp, state))
        while len(self.levels) <= depth:
            self.levels.append((np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int32)))
        self.levels[depth] = (fresh, parents, ks)
        report.new_states = len(fresh)
        report.reached = set(self.reached)
        report.keys = np.sort(np.fromiter((e[0] for e in pending), dtype=np.int64, count=len(pending)))
        if max_depth and depth >= max_depth:
            self._pending = []  # not expanded: the driver decides whether that cut the search short
        return report

    def set_ranks(self, keys: np.ndarray, cut: frozenset[int] = frozenset()) -> None:
        """Rank the pending states among ``keys``, the sorted keys of the whole level's expandable states.

        ``cut``: fingerprints of the level's counterexample states (not expanded).
        """
        pending = [e for e in self._pending if e[1] not in cut] if cut else self._pending
        self._pending = []
        if not pending:
            return
        ranks = np.searchsorted(keys, np.fromiter((e[0] for e in pending), dtype=np.int64, count=len(pending)))
        order = np.argsort(ranks, kind="stable")
        self.frontier = [(int(ranks[i]), pending[i][1], pending[i][2]) for i in order.tolist()]

    # -- traces ----------------------------------------------------------------------------------

    def parent(self, depth: int, fp: int) -> tuple[int, int]:
        """``(parent fingerprint, successor index)`` of state ``fp`` at ``depth`` (index < 0: initial state)."""
        fps, parents, ks = self.levels[depth]
        i = int(np.searchsorted(fps, fp))
        if i >= len(fps) or int(fps[i]) != fp:
            raise KeyError(f"state {fp:#x} is not at depth {depth} of partition {self.index}")
        return int(parents[i]), int(ks[i])

    def memory_bytes(self) -> int:
        """Bytes held by the visited set and the parent links (not the frontier's states)."""
        links = sum(a.nbytes + b.nbytes + c.nbytes for a, b, c in self.levels)
        return self.visited.memory_bytes() + links


def combine(reports: list[LevelReport]) -> LevelReport:
    """One report for a level from its partitions' (smallest keys and ranks win)."""
    out = LevelReport()
    keys = [r.keys for r in reports if r.keys is not None]
    out.keys = np.sort(np.concatenate([np.empty(0, np.int64), *keys]))
    for r in reports:
        out.new_states += r.new_states
        out.transitions += r.transitions
        out.cut_by_depth = out.cut_by_depth or r.cut_by_depth
        for name, best in r.violations.items():
            if name not in out.violations or best[0] < out.violations[name][0]:
                out.violations[name] = best
        for name, best in r.stuck.items():
            if name not in out.stuck or best[0] < out.stuck[name][0]:
                out.stuck[name] = best
        if r.disagreement is not None and (out.disagreement is None or r.disagreement[0] < out.disagreement[0]):
            out.disagreement = r.disagreement
        out.limit = out.limit or r.limit
        out.reached |= r.reached
        out.events.update(r.events)
    return out


def actions_to(model: Model, path: Sequence[int]) -> list[Action]:
    """Rebuild the actions of a trace from an initial-state index and successor indices."""
    init, *steps = path
    state = model.init_states()[init]
    succ = successor_function(model)
    actions: list[Action] = []
    for k in steps:
        action, state, _ = list(succ(state))[k]
        actions.append(action)
    return actions
