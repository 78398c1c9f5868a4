"""Fault probing at the milestones of archive runs (checker/sweep/archive.py, issue 27).

A bug that needs a fault in one short window and then more steps (or a second fault) is a chain no single
draw places; the archive takes every enabled fault once at each milestone of a walk (a step that adds an event
to the path's set) and archives the new cells it reaches, so a later run starts with the fault in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from keos.checker.sweep.archive import ARCHIVE, Archive
from keos.checker.sweep.simulate import derive_seed, random_walk
from keos.model.interface import Action, Expectation, Property, Step

State = tuple[int, int | None]  # (progress x, the x at which the crash happened or None)


class Ladder:
    """``Go`` climbs x = 0 .. 6 (each rung a new event); the fault ``Crash`` may strike once, at any rung.
    ``late`` breaks two rungs after a crash on rung 3; ``instant`` (when armed) breaks right at a crash on
    rung 4."""

    def __init__(self, instant: bool = False) -> None:
        self.instant = instant

    def init_states(self) -> Sequence[State]:
        return [(0, None)]

    def actions(self, state: State) -> Sequence[Action]:
        x, crashed = state
        return ([Action("Go")] if x < 6 else []) + ([Action("Crash")] if crashed is None else [])

    def step(self, state: State, action: Action) -> Step | None:
        x, crashed = state
        if action.kind == "Go" and x < 6:
            return Step((x + 1, crashed), (f"rung:{x + 1}",))
        if action.kind == "Crash" and crashed is None:
            return Step((x, x), ("fault:crash",))
        return None

    def fault_kind(self, action: Action) -> str | None:
        return "crash" if action.kind == "Crash" else None

    def fault_kinds(self) -> tuple[str, ...]:
        return ("crash",)

    def properties(self) -> Sequence[Property]:
        late = Property(
            "late", Expectation.ALWAYS, "no climb after a crash on 3", "test", "late", predicate=lambda s: s != (5, 3)
        )
        instant = Property(
            "instant", Expectation.ALWAYS, "no crash on 4", "test", "instant", predicate=lambda s: s != (4, 4)
        )
        return [late, instant] if self.instant else [late]

    def within_bounds(self, state: State) -> bool:
        return True

    def fingerprint(self, state: State) -> str:
        return repr(state)

    def action_to_json(self, action: Action) -> dict[str, Any]:
        return {"kind": action.kind}

    def action_from_json(self, data: Any) -> Action:
        return Action(data["kind"])

    def format_action(self, action: Action) -> str:
        return action.kind

    def format_state(self, state: State) -> str:
        return repr(state)

    def state_to_json(self, state: State) -> dict[str, Any]:
        return {"state": list(state)}

    def describe(self) -> dict[str, Any]:
        return {"model": "ladder"}


def _runs(archive: Archive, model: Ladder, n: int) -> list[str | None]:
    # the walks' own profile never injects the crash (weight 0): only the probe can place it
    return [
        random_walk(model, derive_seed(3, i), 20, {"crash": 0.0, ARCHIVE: 1.0}, archive=archive).violation  # type: ignore[arg-type]
        for i in range(n)
    ]


def test_probing_archives_each_fault_at_each_milestone_and_a_later_run_extends_it() -> None:
    # 80 runs: fault placement (ARCHIVE_PLACEMENT) makes the crash at each rung and every rung after it cells of
    # their own (23 cells against 12), so the first run that climbs from rung 3's crash is run 52 (9 without it)
    archive = Archive()
    found = _runs(archive, Ladder(), 80)
    probed = sorted(c.state for c in archive.cells.values() if c.path and c.path[-1].kind == "Crash")
    assert probed == [(x, x) for x in range(1, 7)]  # the crash at every rung (a milestone: a new event)
    assert "late" in found  # a run that started from the crash on rung 3 climbed on into the violation
    first = found.index("late")
    assert first > 0 and _runs(Archive(), Ladder(), 80) == found  # not the first run; deterministic
    assert _runs(Archive(probe=False), Ladder(), 80) == [None] * 80  # without probing nothing places the crash


def test_a_probed_fault_that_breaks_an_invariant_ends_the_walk_with_it() -> None:
    walk = random_walk(Ladder(instant=True), 1, 20, {"crash": 0.0}, archive=Archive())  # type: ignore[arg-type]
    assert walk.violation == "instant"
    assert [a.kind for a in walk.actions] == ["Go"] * 4 + ["Crash"] and walk.faults == {"crash": 1}
    assert random_walk(Ladder(instant=True), 1, 20, {"crash": 0.0}).violation is None  # type: ignore[arg-type]
