"""What makes an ``eventually`` counterexample, shared by every engine and by replay.

An ``EVENTUALLY`` property P (:class:`keos.model.interface.Expectation`) says
"P holds again and again once faults stop" (``□◇P`` under weak fairness of the
protocol steps).  A run that violates it ends in one of two shapes, and this
module is the one definition of both:

* **stuck** -- a state, within the scenario's bounds, where no protocol step
  is enabled (no action at all, or only fault actions, which may stop at any
  time) and P is false: the run cannot make progress and P never holds again.
* **livelock** -- a *lasso*: a path to a state ``s`` and a non-empty cycle of
  protocol steps (no fault) from ``s`` back to ``s`` on which P is false in
  every state and which is *weakly fair*: every protocol action enabled in
  every state of the cycle is taken somewhere on it.  Actions are identified by
  kind and arguments (:class:`keos.model.interface.Action` equality), so "the
  coordinator's ``TxnTimeout(producer=0)`` is always enabled but never taken" is
  an unfair cycle -- a real broker's timer would fire -- and is not reported.

Faults are recognised by the model's optional
:meth:`keos.model.interface.FaultHooks.fault_kind`; a model without it is
classified by the ``fault:<kind>`` events a step emits.

:func:`check_stuck` and :func:`check_lasso` judge a concrete run (a list of
states and the actions between them); replay (:mod:`keos.checker.trace`) and
the random engines' quiescence phase (:func:`settle`) use them, so an engine
can only report what replay confirms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from keos.model.interface import Action, Model, Property

__all__ = [
    "LIVELOCK",
    "STUCK",
    "Settled",
    "check_lasso",
    "check_stuck",
    "fault_test",
    "protocol_actions",
    "settle",
    "unfair_actions",
]

#: The two shapes of an ``eventually`` counterexample (the trace's ``liveness`` field).
STUCK = "stuck"
LIVELOCK = "livelock"


def fault_test(model: Model) -> Callable[[Any, Action], bool]:
    """``(state, action) -> whether the action is a fault``.

    Uses :meth:`keos.model.interface.FaultHooks.fault_kind` when the model has
    it, else takes the step and looks for a ``fault:`` event (an action the
    model refuses counts as a protocol step: the engines report it separately).
    """
    hook = getattr(model, "fault_kind", None)
    if hook is not None:
        return lambda _state, action: hook(action) is not None

    def by_event(state: Any, action: Action) -> bool:
        step = model.step(state, action)
        return step is not None and any(e.startswith("fault:") for e in step.events)

    return by_event


def protocol_actions(model: Model, state: Any, is_fault: Callable[[Any, Action], bool] | None = None) -> list[Action]:
    """The protocol steps (non-fault actions) enabled in ``state``, in the model's order."""
    test = is_fault or fault_test(model)
    return [a for a in model.actions(state) if not test(state, a)]


def unfair_actions(
    enabled: Sequence[Sequence[Action]] | Sequence[frozenset[Action]], taken: Sequence[Action]
) -> list[Action]:
    """Protocol actions enabled in every state of a cycle but never taken on it (empty: weakly fair).

    ``enabled[i]`` are the protocol actions enabled in the cycle's ``i``-th state,
    ``taken`` the cycle's actions.
    """
    if not enabled:
        return []
    always = set(enabled[0])
    for en in enabled[1:]:
        always &= set(en)
        if not always:
            return []
    done = set(taken)
    return sorted((a for a in always if a not in done), key=repr)


def check_stuck(model: Model, state: Any, prop: Property) -> str | None:
    """Why ``state`` is not a stuck state for ``prop`` (``None``: it is one)."""
    if prop.holds(state):
        return f"{prop.name} holds in the last state"
    if not model.within_bounds(state):
        return "the last state is outside the scenario's bounds (its successors are not judged)"
    live = protocol_actions(model, state)
    if live:
        shown = ", ".join(model.format_action(a) for a in live[:3])
        return f"the last state is not stuck: {len(live)} protocol step(s) enabled ({shown})"
    return None


def check_lasso(
    model: Model, states: Sequence[Any], actions: Sequence[Action], loop_start: int, prop: Property
) -> str | None:
    """Why ``actions[loop_start:]`` is not a fair livelock cycle for ``prop`` (``None``: it is one).

    ``states[i]`` is the state before ``actions[i]``; ``states[-1]`` the state
    after the last action.  The cycle must be non-empty, return to the
    fingerprint of ``states[loop_start]``, contain no fault, keep P false and
    every state within bounds, and be weakly fair.
    """
    n = len(actions)
    if not 0 <= loop_start < n:
        return f"loop_start {loop_start} is not the index of an action (the trace has {n})"
    if model.fingerprint(states[loop_start]) != model.fingerprint(states[n]):
        return f"the cycle does not return to the state where it began (step {loop_start})"
    is_fault = fault_test(model)
    enabled: list[list[Action]] = []
    for i in range(loop_start, n):
        s, a = states[i], actions[i]
        if is_fault(s, a):
            return f"step {i + 1} on the cycle is a fault ({model.format_action(a)}); faults stop eventually"
        if prop.holds(s):
            return f"{prop.name} holds on the cycle (before step {i + 1})"
        if not model.within_bounds(s):
            return f"the cycle leaves the scenario's bounds (before step {i + 1})"
        enabled.append(protocol_actions(model, s, is_fault))
    missing = unfair_actions(enabled, actions[loop_start:])
    if missing:
        shown = ", ".join(model.format_action(a) for a in missing[:3])
        return f"the cycle is not weakly fair: always enabled but never taken on it: {shown}"
    return None


@dataclass
class Settled:
    """How a fair quiescence phase ended.

    Attributes:
        actions: the protocol steps taken (after the run's own actions).
        outcome: ``"settled"`` (no protocol step enabled), ``"violation"``
            (an ``always`` property failed on the way: ``violation`` names it),
            ``"livelock"`` (a fair cycle with the property false: ``loop_start``,
            counted in the phase's own actions), ``"unsettled"`` (the bound ran
            out) or ``"out_of_bounds"`` (a state the scenario's bounds cut off:
            not judged).
        violation: the violated property, for ``violation`` / ``livelock`` outcomes.
        loop_start: index in :attr:`actions` where the livelock cycle begins.
        events: events emitted during the phase.
        final: the last state.
        suspects: for ``unsettled``: the eventually properties false in every
            state of the phase's second half (a *suspected* livelock: no fair
            cycle was seen, so nothing replayable confirms it).
    """

    actions: list[Action]
    outcome: str
    violation: str | None = None
    loop_start: int | None = None
    events: dict[str, int] = field(default_factory=dict)
    final: Any = None
    suspects: tuple[str, ...] = ()


def settle(
    model: Model,
    state: Any,
    bound: int,
    always: Sequence[Property] = (),
    eventually: Sequence[Property] = (),
) -> Settled:
    """Run protocol steps only, fairly, from ``state`` until none is enabled (or ``bound`` steps).

    The quiescence phase of the random engines: once faults stop, does the
    protocol finish?  At each step the enabled protocol action taken *least
    recently* in this phase runs (never-taken first, ties broken by the model's
    order) -- a weakly fair scheduler: an action that stays enabled becomes the
    least recently taken one after finitely many steps.  Timeouts are protocol
    steps and fire like any other.  ``always`` properties are checked on every
    state reached.  When a state repeats (same fingerprint) the steps between
    the two visits are a cycle; if an ``eventually`` property is false on all
    of it and the cycle is weakly fair, the phase stops with a livelock.
    """
    is_fault = fault_test(model)
    taken: list[Action] = []
    events: dict[str, int] = {}
    last_taken: dict[Action, int] = {}
    seen: dict[str, int] = {model.fingerprint(state): 0}
    last_seen: dict[str, int] = {}
    enabled_at: list[list[Action]] = []
    # Index of the last state (0 = the phase's first) where each eventually property held.
    last_true = [0 if p.holds(state) else -1 for p in eventually]
    while True:
        if not model.within_bounds(state):
            return Settled(taken, "out_of_bounds", events=events, final=state)
        enabled = protocol_actions(model, state, is_fault)
        enabled_at.append(enabled)
        if not enabled:
            return Settled(taken, "settled", events=events, final=state)
        if len(taken) >= bound:
            half = len(taken) // 2
            suspects = tuple(p.name for p, t in zip(eventually, last_true) if t < half)
            return Settled(taken, "unsettled", events=events, final=state, suspects=suspects)
        action = min(enabled, key=lambda a: last_taken.get(a, -1))
        step = model.step(state, action)
        if step is None:
            raise AssertionError(f"model listed {model.format_action(action)} as enabled but step() refused it")
        last_taken[action] = len(taken)
        taken.append(action)
        for ev in step.events:
            events[ev] = events.get(ev, 0) + 1
        state = step.state
        n = len(taken)
        for p in always:
            if not p.holds(state):
                return Settled(taken, "violation", p.name, events=events, final=state)
        for k, p in enumerate(eventually):
            if p.holds(state):
                last_true[k] = n
        fp = model.fingerprint(state)
        first = seen.get(fp)
        latest = last_seen.get(fp, first)
        last_seen[fp] = n
        if first is None:
            seen[fp] = n
            continue
        # Two candidate cycles back to this state: since its first visit (the longest walk, so the fewest
        # actions stay enabled throughout and the most are taken) and since its latest visit.
        for start in dict.fromkeys((first, latest)):
            assert start is not None
            for k, p in enumerate(eventually):
                if last_true[k] >= start:
                    continue  # P held on the cycle: this run satisfies it
                if not unfair_actions(enabled_at[start:n], taken[start:]):
                    return Settled(taken, "livelock", p.name, start, events=events, final=state)
