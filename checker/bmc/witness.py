"""Turning z3 models into replayed results, shared by the BMC engines.

Both symbolic engines (:mod:`checker.bmc.engine` for the idempotence core,
:mod:`checker.bmc.txn` for the transactions core) ask z3 for a run that
reaches some goals, decode the model into actions of the executable model, and
accept a result only after replaying it there.  Witnesses that do not replay
are *engine disagreements*, never results.

:func:`harvest_leap` serves the engines' *leap* search (``stop_on_first``,
as ``keos mutants --engine bmc`` runs them): once the depth-by-depth search
gets slow, one query asks for a violation at *any* step up to the maximum
depth.  Such a witness need not be a shortest one, so it is cut at its first
violating step and shrunk by replay-based delta debugging
(:func:`checker.minimize.minimize`) before it is replayed into a trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import z3

from keos.checker.minimize import minimize
from keos.checker.results import EngineResult, PropertyResult, Verdict
from keos.checker.trace import Trace, make_trace, replay_actions
from keos.model.interface import Action, Expectation, Model, Property

#: How many steps one leap query covers (see :func:`leap_search`).
LEAP_STRIDE = 4

__all__ = [
    "ALWAYS_TRUE",
    "NOT_COVERED",
    "ask_events",
    "ask_violations",
    "harvest_events",
    "harvest_leap",
    "harvest_violations",
    "leap_search",
    "uncovered_result",
]

#: The detail of every property a bmc run does not judge because its encoding leaves the scenario out.
NOT_COVERED = "not covered by the bmc encoding"


def uncovered_result(scenario: str, variant: str, props: Sequence[Property], why: str) -> EngineResult:
    """The bmc result for a scenario the encoding does not cover: every property *untested*, saying why."""
    return EngineResult(
        engine="bmc",
        scenario=scenario,
        variant=variant,
        properties=[
            PropertyResult(p.name, p.expectation, Verdict.UNTESTED, detail=f"{NOT_COVERED}: {why}") for p in props
        ],
        stats={"covered": False, "reason": why},
        complete=False,
    )

#: A property that always holds, to replay a sometimes-witness with :func:`replay_actions`.
ALWAYS_TRUE = Property("replay", Expectation.ALWAYS, "", "", "", predicate=lambda s: True)


def _true_in(mdl: Any, goal: Any) -> bool:
    return bool(z3.is_true(mdl.eval(goal, model_completion=True)))


def harvest_events(
    model: Model,
    mdl: Any,
    actions: Sequence[Action],
    depth: int,
    pending: dict[str, Any],
    event_props: Sequence[Property],
    reached: set[str],
    disagree: dict[str, str],
) -> None:
    """Record the event-based sometimes-properties a z3 witness of length ``depth`` reaches.

    Each goal the model satisfies leaves ``pending``; it is *reached* only if the
    replayed run has every step enabled and really emits the event.
    """
    replayed = replay_actions(model, actions, ALWAYS_TRUE)
    for prop in [p for p in event_props if p.name in pending]:
        if not _true_in(mdl, pending[prop.name]):
            continue
        del pending[prop.name]
        fired = any(prop.matches_event(ev) for evs in replayed.events for ev in evs)
        if len(replayed.states) == depth + 1 and fired:
            reached.add(prop.name)
        else:
            disagree[prop.name] = f"z3 witness for {prop.event!r} does not replay: {replayed.reason}"


def harvest_violations(
    model: Model,
    mdl: Any,
    actions: Sequence[Action],
    goals: dict[str, Any],
    always: Sequence[Property],
    traces: dict[str, Trace],
    disagree: dict[str, str],
    scenario: str,
    variant: str,
    permitted: tuple[str, ...],
) -> None:
    """Turn the invariant violations a z3 witness shows into replayed traces (or disagreements)."""
    for prop in [p for p in always if p.name in goals]:
        if not _true_in(mdl, goals[prop.name]):
            continue
        del goals[prop.name]
        try:
            traces[prop.name] = make_trace(
                model, prop, actions, "bmc", scenario, variant, permitted=prop.name in permitted
            )
        except AssertionError as exc:
            disagree[prop.name] = str(exc)


def harvest_leap(
    model: Model,
    mdl: Any,
    bad_at: Sequence[dict[str, Any]],
    decode: Callable[[Any, int], list[Action]],
    always: Sequence[Property],
    traces: dict[str, Trace],
    disagree: dict[str, str],
    scenario: str,
    variant: str,
    permitted: tuple[str, ...],
) -> int:
    """Replayed, shrunk traces for a witness of "some invariant is violated at some step <= K".

    ``bad_at[t]`` maps invariant names to their violation goals at step ``t``
    (only the steps the leap asked about; missing steps are empty).  The
    first step where the model violates anything is decoded with
    ``decode(mdl, t)``; every invariant violated there gets a trace, shrunk by
    delta debugging on the executable model.  A witness that does not replay
    is an engine disagreement.  Returns the step the witness violated at (-1
    if the model shows none: also a disagreement).
    """
    for t, goals in enumerate(bad_at):
        hit = [p for p in always if p.name in goals and _true_in(mdl, goals[p.name])]
        if not hit:
            continue
        actions = decode(mdl, t)
        for prop in hit:
            try:
                shrunk = minimize(model, actions, prop)
                traces[prop.name] = make_trace(
                    model, prop, shrunk, "bmc", scenario, variant, permitted=prop.name in permitted
                )
            except (ValueError, AssertionError) as exc:
                disagree[prop.name] = f"z3 witness of length {t} does not replay: {exc}"
        return t
    for prop in always:
        if any(prop.name in goals for goals in bad_at):
            disagree[prop.name] = "z3 reported a violation at some step but none in its model"
    return -1


def leap_search(
    searched: int,
    depth: int,
    stride: int,
    extend: Callable[[int], Any],
    goals_at: Callable[[int], dict[str, Any]],
    solve: Callable[[Any], tuple[Any, Any]],
    found: Callable[[Any, list[dict[str, Any]]], None],
    add: Callable[[list[Any]], None],
) -> tuple[int, bool]:
    """The leap loop shared by both engines: one query per ``stride`` steps after ``searched``, up to ``depth``.

    ``extend(t)`` adds step ``t`` to the unrolling and returns the step's
    *halt* literal (the transition from state ``t - 1`` does nothing when it
    is true; ``Encoding.transition(..., halt=...)``), ``goals_at(t)`` names the
    violation goals at state ``t``, ``add(constraints)`` adds constraints
    to the unrolling, ``solve(goal)`` answers one query and ``found(model,
    bad_at)`` harvests a satisfiable one (see :func:`harvest_leap`); the
    search stops there.

    Why the halt literals.  One query asks for a violated state *within* the
    window ``searched + 1 .. target``, but the unrolling has ``target``
    steps: without a way to stop, a violation at step 15 would be missed
    whenever no run through it goes on to step 18 -- a run that ends (every
    record acknowledged, nothing in flight) is exactly where such a state can
    sit.  So a run may halt, but only in a violated state (``halt => bad``),
    and stays halted (``halt_t => halt_t+1``); the goal is "the last state is
    violated", which a run that halted in a violation keeps.  Halting only
    there keeps the query about as cheap as one without halts (depths 1-14 of
    ``idempotence_retry``: 28 s against 26 s; halting anywhere: 37 s).
    Returns the last step refuted and whether the time budget ran out.
    """
    halts: dict[int, Any] = {}
    while searched < depth:
        target = min(depth, searched + stride)
        rules = []
        for t in range(searched + 1, target + 1):
            halts[t] = extend(t)
            stop_here = z3.Or(list(goals_at(t - 1).values()) or [z3.BoolVal(False)]) if t > 0 else z3.BoolVal(False)
            rules.append(z3.Implies(halts[t], stop_here))
            if t - 1 in halts:
                rules.append(z3.Implies(halts[t - 1], halts[t]))
        add(rules)
        bad_at: list[dict[str, Any]] = [{} for _ in range(target + 1)]
        for t in range(searched + 1, target + 1):
            bad_at[t] = goals_at(t)
        if not bad_at[target]:
            return searched, False
        res, mdl = solve(z3.Or(list(bad_at[target].values())))
        if res == z3.unknown:
            return searched, True
        if res == z3.sat:
            found(mdl, bad_at)
            return searched, False
        searched = target
    return searched, False


def ask_events(
    model: Model,
    solve: Callable[..., tuple[Any, Any]],
    decode: Callable[[Any, int], list[Action]],
    t: int,
    step_events: dict[str, Any],
    event_props: Sequence[Property],
    reached: set[str],
    disagree: dict[str, str],
) -> bool:
    """Ask, at depth ``t``, for the event partners not reached yet (one query for all, again after each witness).

    ``step_events`` maps event labels to "step ``t - 1`` emits it".  Events are
    properties of steps, so they are asked without the partial-order reduction
    (``solve(goal, reduced=False)``).  Returns whether the time budget ran out.
    """
    pending = {
        p.name: z3.Or([g for lab, g in step_events.items() if p.matches_event(lab)] or [z3.BoolVal(False)])
        for p in event_props
        if p.name not in reached and p.name not in disagree
    }
    pending = {name: g for name, g in pending.items() if not z3.is_false(g)}
    while pending:
        res, mdl = solve(z3.Or(list(pending.values())), reduced=False)
        if res == z3.unknown:
            return True
        if res == z3.unsat:
            return False
        harvest_events(model, mdl, decode(mdl, t), t, pending, event_props, reached, disagree)
    return False


def ask_violations(
    model: Model,
    solve: Callable[..., tuple[Any, Any]],
    decode: Callable[[Any, int], list[Action]],
    t: int,
    goals: dict[str, Any],
    always: Sequence[Property],
    traces: dict[str, Trace],
    disagree: dict[str, str],
    scenario: str,
    variant: str,
    permitted: tuple[str, ...],
    stop_on_first: bool,
) -> bool:
    """Ask whether some invariant of ``goals`` is violated at exactly step ``t``, until none is left or refuted.

    A model names every invariant it violates (:func:`harvest_violations`);
    the rest are asked again at the same depth, so each counterexample is a
    shortest one.  Returns whether the time budget ran out.
    """
    while goals:
        res, mdl = solve(z3.Or(list(goals.values())))
        if res == z3.unknown:
            return True
        if res == z3.unsat:
            return False
        harvest_violations(model, mdl, decode(mdl, t), goals, always, traces, disagree, scenario, variant, permitted)
        if stop_on_first and any(name not in permitted for name in traces):
            return False
    return False
