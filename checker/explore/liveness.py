"""Eventually (liveness) properties in the breadth-first search: stuck states and fair livelocks.

What a violation is -- a *stuck* state or a weakly fair *livelock* -- is
defined once in :mod:`keos.checker.liveness`; this module finds them in the
state graph the search builds, and every trace it returns has been replayed
by :func:`keos.checker.trace.make_trace`.

The search calls :meth:`LivenessPass.expand` once per state it expands fully
(within the scenario's bounds and depth, not violating an ``always``
property), with its successors (depths come from the search's state table).  States it never
expands -- cut off by the bounds, the depth limit, ``max_states`` or an
``always`` violation -- are not judged: they are neither stuck nor on a cycle.

* **Stuck states** are found during the search, at no extra step cost: an
  expanded state where a property P is false and every enabled action is a
  fault.  The first one found is at the least depth (BFS), so the trace from
  the search's parent links is a shortest one.
* **Livelocks** are found after the search, per property P, on the subgraph of
  protocol steps (fault edges dropped) between expanded states where P is
  false.  Its strongly connected components (an iterative Tarjan) are the
  candidate cycles.  For weak fairness the cycle through a whole SCC is the
  best candidate -- it visits every state, so the fewest actions are enabled
  throughout, and takes every edge -- hence an SCC contains a weakly fair cycle
  iff every action enabled in all of its states labels some edge inside it
  (actions compared by kind and arguments).  From the fair SCC closest to an
  initial state, the lasso's prefix is the BFS path to its shallowest state and
  the cycle is built greedily from there: while some action is enabled in
  every state visited so far and not yet taken, walk (breadth-first inside the
  SCC) to the nearest edge taking it or state disabling it; then walk back.

Cost: one dictionary lookup per transition out of a state where some
eventually property is false (the action's id, or that it is a fault), an
integer adjacency list over those states, and one linear Tarjan pass per
property.  The Tarjan pass starts only from states entered by a recorded edge
that does not lead deeper in breadth-first order (every cycle has such an edge:
depths cannot grow all the way round), so a state graph without cycles costs
no search at all, and the components found, and their number, are the same.
Nothing is recorded when the model has no eventually property (the search does
not create the pass).
"""

from __future__ import annotations

import gc
import time
from array import array
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from keos.checker.trace import Trace, make_trace
from keos.model.interface import Action, Expectation, Model, Property

__all__ = ["LivenessPass", "LivenessReport", "fair_sccs", "strongly_connected"]


@dataclass
class LivenessReport:
    """What the liveness pass found.

    Attributes:
        traces: replayed counterexamples by property name (stuck or lasso).
        disagreements: counterexamples that did not replay (an engine bug), by property.
        stats: ``liveness_states`` (states recorded), ``liveness_edges``,
            ``sccs`` (non-trivial SCCs examined), ``fair_sccs``, ``elapsed_s``.
    """

    traces: dict[str, Trace] = field(default_factory=dict)
    disagreements: dict[str, str] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)


def strongly_connected(nodes: Sequence[int], succ: Sequence[Sequence[int]]) -> list[list[int]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit), in reverse topological order.

    Nodes are dense integer ids: ``succ[v]`` lists the successors of ``v``
    (``len(succ)`` bounds every id); only components reachable from ``nodes``
    are returned.
    """
    n = len(succ)
    index = array("q", [-1]) * n
    low = array("q", [0]) * n
    on_stack = bytearray(n)
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in nodes:
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        work: list[tuple[int, Iterator[int]]] = [(root, iter(succ[root]))]
        while work:
            v, it = work[-1]
            descended = False
            for w in it:
                if index[w] < 0:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = 1
                    work.append((w, iter(succ[w])))
                    descended = True
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
            if low[v] == index[v]:
                comp: list[int] = []
                while True:
                    w = stack.pop()
                    on_stack[w] = 0
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def fair_sccs(
    comps: list[list[int]], edges: dict[int, list[tuple[int, int]]], enabled: dict[int, frozenset[int]]
) -> list[list[int]]:
    """The non-trivial components that hold a weakly fair cycle.

    ``edges[v]`` are ``(w, action id)`` protocol edges of the subgraph,
    ``enabled[v]`` the protocol action ids enabled at ``v``.
    """
    out = []
    for comp in comps:
        members = set(comp)
        inside = [(v, w, a) for v in comp for w, a in edges.get(v, ()) if w in members]
        if not inside:
            continue  # a single state without a self-loop
        always = frozenset.intersection(*(enabled[v] for v in comp))
        taken = {a for _, _, a in inside}
        if always <= taken:
            out.append(comp)
    return out


class StateTable(Protocol):
    """What the pass needs of the search's visited states (:class:`~keos.checker.explore.collapse.CollapsedStates`)."""

    def __len__(self) -> int: ...

    def state(self, sid: int) -> Any: ...

    def depth(self, sid: int) -> int: ...


class _Successors(Sequence[list[int]]):
    """Protocol-step successors of each state inside one property's subgraph, read off the flat edge tuples.

    With ``only`` (the model has one eventually property) every recorded edge is inside the subgraph:
    an edge is recorded only between states where some property is false, and there is one.
    """

    def __init__(self, edges: dict[int, tuple[int, ...]], mask: array[int], bit: int, n: int, only: bool) -> None:
        self._edges, self._mask, self._bit, self._n, self._only = edges, mask, bit, n, only

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, v: int) -> Sequence[int]:  # type: ignore[override]
        flat, mask, bit = self._edges.get(v, ()), self._mask, self._bit
        if self._only:
            return flat[::2]
        return [flat[i] for i in range(0, len(flat), 2) if mask[flat[i]] & bit]

    def labelled(self, v: int) -> list[tuple[int, int]]:
        """``(next id, action id)`` of every edge of ``v`` inside the subgraph."""
        flat, mask, bit = self._edges.get(v, ()), self._mask, self._bit
        return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2) if mask[flat[i]] & bit]


class LivenessPass:
    """Records the protocol-step graph over states where an eventually property is false."""

    def __init__(
        self,
        model: Model,
        props: Sequence[Property],
        states: StateTable,
        judge: Callable[[int, Any, int], bool] | None = None,
    ) -> None:
        """``states`` is the search's table of states: the pass names states by the search's ids;
        ``judge(k, state, id)`` evaluates eventually property ``k`` (default: its predicate).

        Memory per recorded state: a mask slot (8 bytes), and for an expanded state where some
        property is false, its protocol actions as a shared (interned) tuple of action ids and its
        edges as one flat tuple ``(next id, action id, ...)``.
        """
        self.model = model
        self.props = [p for p in props if p.expectation is Expectation.EVENTUALLY]
        if len(self.props) > 62:
            raise ValueError("at most 62 eventually properties per model")
        hook = getattr(model, "fault_kind", None)
        self._fault_kind = hook
        self._states = states
        # Per state: its depth, if the table lends its array (CollapsedStates.depths), for the cycle roots.
        self._depths: Any = states.depths() if hasattr(states, "depths") else None
        self._judge = judge or (lambda k, state, sid: self.props[k].holds(state))
        self._mask = array("q")  # per state id: bit k = property k false; -1 = not evaluated yet
        self._recorded = 0
        self._edges: dict[int, tuple[int, ...]] = {}
        self._enabled: dict[int, tuple[int, ...]] = {}
        self._enabled_pool: dict[tuple[int, ...], tuple[int, ...]] = {}
        self._action_ids: dict[Action, int] = {}
        self._actions: list[Action] = []
        # Per action seen by expand(): its id, or -1 for a fault (one dict lookup per successor).
        self._classified: dict[Action, int] = {}
        # States entered by a recorded edge that does not lead deeper (breadth-first depth): every cycle
        # has one, so the components search starts there (None: the table lends no depths).
        self._cycle_roots: set[int] | None = set() if self._depths is not None else None
        self.stuck: dict[str, int] = {}
        self._all = (1 << len(self.props)) - 1

    def record(self, sid: int, state: Any) -> None:
        """Judge a state the search just added (it has the state at hand; the table would rebuild it)."""
        self._mask_of(sid, state)

    def wants(self, sid: int) -> bool:
        """Whether :meth:`expand` of state ``sid`` would record anything (some eventually property is false there)."""
        return self._mask_of(sid) != 0

    def masks(self) -> array[int]:
        """Per state id, bit ``k`` set when eventually property ``k`` is false there, -1 if not judged yet
        (the pass's own array, extended in place as states are judged: read it, never change it)."""
        return self._mask

    def _mask_of(self, sid: int, state: Any = None) -> int:
        """Bit ``k`` set when eventually property ``k`` is false in state ``sid`` (evaluated once)."""
        mask = self._mask
        if sid >= len(mask):
            mask.extend([-1] * (sid + 1 - len(mask) + 1024))
        m = mask[sid]
        if m < 0:
            if state is None:
                state = self._states.state(sid)
            m = 0
            for k in range(len(self.props)):
                if not self._judge(k, state, sid):
                    m |= 1 << k
            mask[sid] = m
            self._recorded += 1
        return m

    def _action_id(self, action: Action) -> int:
        a = self._action_ids.get(action)
        if a is None:
            a = self._action_ids[action] = len(self._actions)
            self._actions.append(action)
        return a

    def _fault(self, action: Action, events: Sequence[str]) -> bool:
        """Like :func:`keos.checker.liveness.fault_test`, from the step's events already at hand (no re-step)."""
        if self._fault_kind is not None:
            return self._fault_kind(action) is not None
        return any(e.startswith("fault:") for e in events)

    def expand(self, src: int, successors: Sequence[tuple[Action, int, Sequence[str]]]) -> None:
        """Record a fully expanded state (by the search's id): its depth and every ``(action, next id, events)``."""
        mask = self._mask
        m = mask[src] if src < len(mask) else -1
        if m < 0:
            m = self._mask_of(src)
        if not m:
            return
        enabled: list[int] = []
        out: list[int] = []
        classified = self._classified
        depths, roots = self._depths, self._cycle_roots
        depth = depths[src] if depths is not None else 0
        for action, dst, events in successors:
            a = classified.get(action)
            if a is None:
                if self._fault_kind is not None:
                    fault = self._fault_kind(action) is not None
                    a = classified[action] = -1 if fault else self._action_id(action)
                elif self._fault(action, events):  # classified by its events: not memoised
                    continue
                else:
                    a = self._action_id(action)
            if a < 0:
                continue
            enabled.append(a)
            if dst >= len(mask) or mask[dst] < 0:  # not recorded yet: judged now
                self._mask_of(dst)
            if mask[dst] & m:
                out.append(dst)
                out.append(a)
                if roots is not None and depths[dst] <= depth:
                    roots.add(dst)
        if not enabled:
            for k, p in enumerate(self.props):
                if m >> k & 1 and p.name not in self.stuck:
                    self.stuck[p.name] = src
            return
        key = tuple(sorted(set(enabled)))
        self._enabled[src] = self._enabled_pool.setdefault(key, key)
        if out:
            self._edges[src] = tuple(out)

    # -- after the search ---------------------------------------------------------------------------

    def finish(
        self, path: Callable[[int], list[Action]], scenario: str, variant: str, permitted: tuple[str, ...] = ()
    ) -> LivenessReport:
        """Replayed stuck and livelock traces per property (a stuck state is preferred: it is shorter).

        The cyclic garbage collector is paused meanwhile: the pass allocates many
        small lists while the search's whole state space is alive, and every
        full collection would walk all of it (3x the pass's time on 50k states).
        """
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._finish(path, scenario, variant, permitted)
        finally:
            if was_enabled:
                gc.enable()

    def _finish(
        self, path: Callable[[int], list[Action]], scenario: str, variant: str, permitted: tuple[str, ...]
    ) -> LivenessReport:
        start = time.perf_counter()
        report = LivenessReport()
        sccs = fair = 0
        for k, prop in enumerate(self.props):
            bit = 1 << k
            if prop.name in self.stuck:
                actions = path(self.stuck[prop.name])
                self._emit(report, prop, actions, None, scenario, variant, permitted)
                continue
            mask = self._mask
            # Every cycle enters a state by an edge that does not lead deeper, so the components
            # search starts from those states only (all expanded states if the table has no depths).
            starts = sorted(self._cycle_roots) if self._cycle_roots is not None else self._enabled
            nodes = [v for v in starts if mask[v] & bit and v in self._enabled]
            succ = _Successors(self._edges, mask, bit, len(self._states), len(self.props) == 1)
            comps = strongly_connected(nodes, succ)
            nontrivial = [c for c in comps if len(c) > 1 or c[0] in succ[c[0]]]
            sccs += len(nontrivial)
            edges = {v: succ.labelled(v) for c in nontrivial for v in c}
            enabled = {v: frozenset(self._enabled[v]) for v in edges}
            good = fair_sccs(nontrivial, edges, enabled)
            fair += len(good)
            if not good:
                continue
            depth = self._states.depth
            # the component closest to an initial state; ties by the id of its shallowest state (the
            # choice does not depend on the order the components search found them in)
            comp = min(good, key=lambda c: min((depth(v), v) for v in c))
            entry = min(comp, key=lambda v: (depth(v), v))
            cycle = self._cycle(entry, set(comp), edges)
            prefix = path(entry)
            self._emit(report, prop, prefix + cycle, len(prefix), scenario, variant, permitted)
        report.stats = {
            "liveness_states": self._recorded,
            "liveness_edges": sum(len(es) for es in self._edges.values()) // 2,
            "stuck_found": sorted(self.stuck),
            "sccs": sccs,
            "fair_sccs": fair,
            "liveness_elapsed_s": round(time.perf_counter() - start, 4),
        }
        return report

    def _emit(
        self,
        report: LivenessReport,
        prop: Property,
        actions: list[Action],
        loop_start: int | None,
        scenario: str,
        variant: str,
        permitted: tuple[str, ...],
    ) -> None:
        try:
            report.traces[prop.name] = make_trace(
                self.model,
                prop,
                actions,
                "explore",
                scenario,
                variant,
                permitted=prop.name in permitted,
                loop_start=loop_start,
            )
        except Exception as exc:  # a trace that does not replay (or a model that raises) is a disagreement
            shape = "stuck state" if loop_start is None else "livelock lasso"
            report.disagreements[prop.name] = f"{shape} for {prop.name} found by explore does not replay: {exc}"

    def _cycle(self, entry: int, comp: set[int], edges: dict[int, list[tuple[int, int]]]) -> list[Action]:
        """A cycle from ``entry`` through ``comp``, weakly fair on the states it visits (see the module doc)."""
        cur = entry
        path: list[Action] = []
        common = set(self._enabled[entry])
        taken: set[int] = set()

        def walk(goal_state: Any, goal_edge: int | None) -> None:
            nonlocal cur
            # Breadth-first inside the component from cur to the nearest state satisfying goal_state
            # (then, if goal_edge is given, across an edge labelled goal_edge).
            prev: dict[int, tuple[int, int] | None] = {cur: None}
            queue = deque([cur])
            hit: int | None = None
            while queue:
                v = queue.popleft()
                if goal_state(v):
                    hit = v
                    break
                for w, a in edges.get(v, ()):
                    if w in comp and w not in prev:
                        prev[w] = (v, a)
                        queue.append(w)
            assert hit is not None, "a strongly connected component reaches each of its states"
            legs: list[tuple[int, int]] = []
            v = hit
            while prev[v] is not None:
                u, a = prev[v]  # type: ignore[misc]
                legs.append((v, a))
                v = u
            legs.reverse()
            if goal_edge is not None:
                w = next(w for w, a in edges[hit] if a == goal_edge and w in comp)
                legs.append((w, goal_edge))
            for w, a in legs:
                path.append(self._actions[a])
                taken.add(a)
                common.intersection_update(self._enabled[w])
                cur = w

        while True:
            pending = sorted(common - taken)
            if not pending:
                break
            a = pending[0]
            # The nearest state where a is disabled, or that takes a inside the component.
            walk(
                lambda v, a=a: a not in self._enabled[v] or any(x == a and w in comp for w, x in edges.get(v, ())),
                None,
            )
            if a in self._enabled[cur]:
                walk(lambda v: v == cur, a)
        if not path:
            w, a = next((w, a) for w, a in edges[entry] if w in comp)
            path.append(self._actions[a])
            taken.add(a)
            common.intersection_update(self._enabled[w])
            cur = w
        if cur != entry:
            walk(lambda v: v == entry, None)
        return path
