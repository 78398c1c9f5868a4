"""Turning z3 models into replayed results, shared by the BMC engines.

Both symbolic engines (:mod:`checker.bmc` for the idempotence core,
:mod:`checker.bmc_txn` for the transactions core) ask z3 for a run that
reaches some goals, decode the model into actions of the executable model, and
accept a result only after replaying it there.  Witnesses that do not replay
are *engine disagreements*, never results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3

from checker.trace import Trace, make_trace, replay_actions
from model.interface import Action, Expectation, Model, Property

__all__ = ["ALWAYS_TRUE", "harvest_events", "harvest_violations"]

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
