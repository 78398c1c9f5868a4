"""One hash partition of a level-synchronous breadth-first search.

The search proceeds level by level (all states at depth ``d``, then all at ``d + 1``).
States are named by 64-bit fingerprints (:mod:`keos.checker.explore.encoding`) and
split into partitions by ``fingerprint mod partitions``; a partition owns the visited
fingerprints, the parent links and the frontier of its states.  One process runs one
partition (``--workers 1``), or each worker process runs one
(:mod:`keos.checker.explore.workers`); the Spark engine follows the same rules on
DataFrames (:mod:`keos.checker.explore.spark_bfs`).

Per level a partition *expands* its frontier (every successor is fingerprinted;
those it owns stay, the others go to their owner as canonical encodings) and then
*absorbs* what it was sent: candidates already visited are dropped, the rest become
the next level.  The rules make the result independent of how states are split:

* the states of a level are **ranked** in the order a sequential breadth-first search
  discovers them: by ``(rank of the parent, successor index)`` (the *key*), the initial
  states by their position;
* a state's **parent** is the discoverer with the smallest key, and the
  **counterexample** of an invariant is the violating state with the smallest key in
  the first level that has one: exactly what the sequential search (first discoverer,
  first violation found) reports, for one worker, ``N`` workers and Spark alike;
* successors of a state are not explored when it violates an invariant that no
  earlier level violated; states the model puts out of bounds (``within_bounds``)
  or at the depth limit are not expanded.

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

from keos.checker.explore.encoding import StateEncoder, decode, fingerprint_of
from keos.checker.explore.visited import FingerprintSet
from keos.model.interface import Action, Expectation, Model, Property

__all__ = ["ExpandHook", "LevelReport", "Partition", "successor_function"]

#: Called for every expanded state: (its fingerprint, the state, [(action, next state, next fingerprint)]).
ExpandHook = Callable[[int, Any, list[tuple[Action, Any, int]]], None]

#: Expansions whose states stay in the fingerprint window after it.  0: the window
#: holds only the successors generated during the current expansion -- measured the
#: cheapest (hashing a state for a lookup costs nearly what encoding it saves once
#: the window holds older levels, and the window costs memory).
_WINDOW = 0

Successors = Callable[[Any], Iterable[tuple[Action, Any, tuple[str, ...]]]]


def successor_function(model: Model) -> Successors:
    """``model.successors`` when the model offers one, else actions then step, one by one."""
    fused = getattr(model, "successors", None)
    if fused is not None:
        return fused

    def successors(state: Any) -> list[tuple[Action, Any, tuple[str, ...]]]:
        out = []
        for action in model.actions(state):
            step = model.step(state, action)
            if step is None:
                raise AssertionError(f"model listed {action} as enabled but step() refused it")
            out.append((action, step.state, step.events))
        return out

    return successors


#: Successors a state may have: a key is ``rank of the parent * KEY_SPAN + successor index``.
KEY_SPAN = 1 << 16


@dataclass
class LevelReport:
    """What one partition found in one level (summed over partitions by the driver)."""

    new_states: int = 0
    transitions: int = 0
    cut_by_depth: bool = False
    #: invariant -> (key, fingerprint) of its violating state with the smallest key
    violations: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: the sorted keys of the new states that will be expanded (ranked by the driver)
    keys: Any = None
    reached: set[str] = field(default_factory=set)
    events: Counter[str] = field(default_factory=Counter)


class _Checker:
    """The always, state-sometimes and event-sometimes properties of a model."""

    def __init__(self, props: Sequence[Property]) -> None:
        self.always = [p for p in props if p.expectation is Expectation.ALWAYS]
        self.state_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
        self.event_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]

    @staticmethod
    def holds(prop: Property, state: Any) -> bool:
        return prop.holds(state)


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
        hook: ExpandHook | None = None,
    ) -> None:
        self.model = model
        self.index = index
        self.count = count
        self.encoder = StateEncoder()
        self.visited = FingerprintSet(compact=compact, spill_dir=spill_dir)
        self.checker = _Checker(list(model.properties()))
        self.successors = successor_function(model)
        self.hook = hook
        #: per depth: (fingerprints sorted, parent fingerprints, successor indices)
        self.levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.frontier: list[tuple[int, int, Any]] = []  # (rank, fingerprint, state), by rank
        self._pending: list[tuple[int, int, Any]] = []  # (key, fingerprint, state) awaiting ranks
        self._local: dict[int, list[Any]] = {}
        self._sent: set[int] = set()
        # Fingerprints of the successors generated in this expansion (and, with a
        # window, of the last levels' states), by state: a successor met again is
        # fingerprinted by one dict lookup (Python's own hash of the state, in memory
        # only, never a fingerprint) instead of being encoded.
        self._known: dict[Any, int] = {}
        self._known_levels: list[list[Any]] = []
        self.reached: set[str] = set()
        self.violated: set[str] = set()

    def owns(self, fp: int) -> bool:
        """Whether fingerprint ``fp`` belongs to this partition."""
        return self.count == 1 or fp % self.count == self.index

    # -- level 0 ---------------------------------------------------------------------------------

    def seed(self) -> LevelReport:
        """Level 0: the model's initial states that this partition owns."""
        for k, state in enumerate(self.model.init_states()):
            fp, _ = self.encoder.fingerprint(state)
            if self.owns(fp) and fp not in self._local:
                self._local[fp] = [k, fp, -1 - k, state]
        return self.absorb([], depth=0, max_depth=0)

    # -- one level -------------------------------------------------------------------------------

    def expand(self, depth: int, max_depth: int) -> tuple[dict[int, dict[int, list[Any]]], LevelReport]:
        """Expand the frontier at ``depth``.

        Returns, per other partition, the successors it owns (``fingerprint ->
        [parent fingerprint, successor index, state or its encoding]``, the smallest
        parent kept),
        and the counts.  A fingerprint sent in an earlier level is not sent again:
        its owner has visited it since.
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
        encode = self.encoder.encode
        events = report.events
        event_props = self.checker.event_sometimes
        reached = self.reached
        count, me, hook = self.count, self.index, self.hook
        within = self.model.within_bounds
        prime = self.encoder.prime
        known = self._known
        generated: list[Any] = []
        emitted: list[str] = []
        transitions = 0
        for rank, pfp, state in self.frontier:
            base = rank * KEY_SPAN
            if not within(state):
                continue
            primed = False
            edges: list[tuple[Action, Any, int]] | None = [] if hook is not None else None
            k = -1
            for action, nxt, evs in self.successors(state):
                k += 1
                if evs:
                    emitted.extend(evs)
                fp = known.get(nxt)
                if fp is None:
                    if not primed:
                        prime(state)  # its successors share its fields: encode them against it
                        primed = True
                    data = encode(nxt)
                    fp = known[nxt] = fingerprint_of(data)
                    generated.append(nxt)
                else:
                    data = None
                if edges is not None:
                    edges.append((action, nxt, fp))
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
                        box[fp] = [base + k, pfp, k, nxt if data is None else data]  # encoded when packed
            transitions += k + 1
            if hook is not None and edges is not None:
                hook(pfp, state, edges)
        report.transitions = transitions
        events.update(emitted)  # counted once per level: Counter.update per transition costs more
        for ev in events:
            for p in event_props:
                if p.name not in reached and p.matches_event(ev):
                    reached.add(p.name)
        self.frontier = []
        self._remember(generated)
        if len(sent) > 4_000_000:
            sent.clear()
        for box in outbox.values():
            sent.update(box)
        return outbox, report

    def absorb(
        self,
        inbox: Iterable[tuple[int, int, int, int, bytes]],
        depth: int,
        max_depth: int,
        already: frozenset[str] = frozenset(),
    ) -> LevelReport:
        """Take the candidates of level ``depth`` (own and sent); keep the unvisited ones.

        ``already``: the invariants violated at an earlier level; a state that violates
        only those is still expanded (as the sequential search always did), so the other
        invariants' counterexamples may pass through it.
        """
        local = self._local
        self._local = {}
        for fp, key, pfp, k, data in inbox:
            cand = local.get(fp)
            if cand is None or key < cand[0]:
                local[fp] = [key, pfp, k, data]
        report = LevelReport()
        if not local:
            return report
        fps = np.fromiter(local.keys(), dtype=np.int64, count=len(local))
        fresh = self.visited.add_new(fps)
        order = np.argsort(fresh, kind="stable")
        fresh = fresh[order]
        parents = np.empty(len(fresh), dtype=np.int64)
        ks = np.empty(len(fresh), dtype=np.int32)
        checker = self.checker
        pending = self._pending = []
        expand_next = not (max_depth and depth >= max_depth)
        received: list[Any] = []
        for i, fp in enumerate(fresh.tolist()):
            key, pfp, k, value = local[fp]
            parents[i] = pfp
            ks[i] = k
            state = decode(value) if type(value) is bytes else value
            bad = False
            for p in checker.always:
                if p.name not in already and not checker.holds(p, state):
                    bad = True
                    best = report.violations.get(p.name)
                    if best is None or key < best[0]:
                        report.violations[p.name] = (key, fp)
            for p in checker.state_sometimes:
                if p.name not in self.reached and checker.holds(p, state):
                    self.reached.add(p.name)
            if value is not state:
                received.append(state)
                self._known[state] = fp
            if not bad:
                if expand_next:
                    pending.append((key, fp, state))
                else:
                    report.cut_by_depth = True
        while len(self.levels) <= depth:
            self.levels.append((np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int32)))
        self.levels[depth] = (fresh, parents, ks)
        self._remember(received)
        report.new_states = len(fresh)
        report.reached = set(self.reached)
        report.keys = np.sort(np.fromiter((e[0] for e in pending), dtype=np.int64, count=len(pending)))
        return report

    def set_ranks(self, keys: np.ndarray) -> None:
        """Rank the pending states among ``keys``, the sorted keys of the whole level's expandable states."""
        pending = self._pending
        self._pending = []
        if not pending:
            return
        ranks = np.searchsorted(keys, np.fromiter((e[0] for e in pending), dtype=np.int64, count=len(pending)))
        order = np.argsort(ranks, kind="stable")
        self.frontier = [(int(ranks[i]), pending[i][1], pending[i][2]) for i in order.tolist()]

    def _remember(self, states: list[Any]) -> None:
        """Keep ``states`` in the fingerprint window; forget those of the oldest level."""
        self._known_levels.append(states)
        if len(self._known_levels) > _WINDOW:
            known = self._known
            for state in self._known_levels.pop(0):
                known.pop(state, None)

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


def actions_to(model: Model, path: Sequence[int]) -> list[Action]:
    """Rebuild the actions of a trace from an initial-state index and successor indices."""
    init, *steps = path
    state = model.init_states()[init]
    succ = successor_function(model)
    actions: list[Action] = []
    for k in steps:
        options = list(succ(state))
        action, state, _ = options[k]
        actions.append(action)
    return actions


def decode_state(value: Any) -> Any:
    """A frontier entry's state (states sent by other partitions arrive encoded)."""
    return decode(value) if type(value) is bytes else value
