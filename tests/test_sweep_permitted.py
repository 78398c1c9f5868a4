"""Random walks go on past a permitted violation (checker/sweep/simulate.py, issue 27).

A scenario's ``permitted`` invariants are documented Kafka behaviour; the explicit search reports them and goes
on, so a walk must too: a weakened variant whose violation lies behind a permitted one
(``retry_refused_next_sequence_unchanged`` on ``idempotence_expired_not_leader``: the permitted reordering at
step 12, its own violation at 16) could never be caught by a walk that stopped there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from keos.checker.minimize import fails
from keos.checker.sweep.archive import Archive, feature
from keos.checker.sweep.simulate import investigate, random_walk
from keos.model.interface import Action, Expectation, Property, Step
from keos.scenarios import build_model, builtin_scenarios

_NEXT = {"init": "a", "a": "b", "b": "c"}


class Chain:
    """init -> a -> b -> c: ``order`` (permitted) breaks from a on, ``loss`` at c."""

    def init_states(self) -> Sequence[str]:
        return ["init"]

    def actions(self, state: str) -> Sequence[Action]:
        return [Action("Go")] if state in _NEXT else []

    def step(self, state: str, action: Action) -> Step | None:
        nxt = _NEXT.get(state)
        return Step(nxt, (f"to:{nxt}",)) if nxt is not None and action.kind == "Go" else None

    def fault_kind(self, action: Action) -> str | None:
        return None

    def fault_kinds(self) -> tuple[str, ...]:
        return ()

    def properties(self) -> Sequence[Property]:
        return [
            Property("order", Expectation.ALWAYS, "in order", "test", "reordered", predicate=lambda s: s == "init"),
            Property("loss", Expectation.ALWAYS, "nothing lost", "test", "lost", predicate=lambda s: s != "c"),
        ]

    def within_bounds(self, state: str) -> bool:
        return True

    def fingerprint(self, state: str) -> str:
        return state

    def action_to_json(self, action: Action) -> dict[str, Any]:
        return {"kind": action.kind}

    def action_from_json(self, data: Any) -> Action:
        return Action(data["kind"])

    def format_action(self, action: Action) -> str:
        return action.kind

    def format_state(self, state: str) -> str:
        return state

    def state_to_json(self, state: str) -> dict[str, Any]:
        return {"state": state}

    def describe(self) -> dict[str, Any]:
        return {"model": "chain"}


def test_a_walk_stops_at_a_violation_that_is_not_permitted() -> None:
    walk = random_walk(Chain(), 1, 10, {})  # type: ignore[arg-type]
    assert walk.violation == "order" and walk.steps == 1 and walk.violation_path is None


def test_a_walk_goes_on_past_a_permitted_violation_and_reports_the_one_behind_it() -> None:
    walk = random_walk(Chain(), 1, 10, {}, permitted=("order",))  # type: ignore[arg-type]
    assert walk.violation == "loss" and walk.steps == 3 and walk.violation_path is None


def test_a_permitted_violation_alone_is_reported_with_its_own_path_and_milestone() -> None:
    archive = Archive()
    walk = random_walk(Chain(), 1, 2, {}, archive=archive, permitted=("order",))  # type: ignore[arg-type]
    assert walk.violation == "order" and walk.steps == 2 and walk.violating_actions == [Action("Go")]
    assert archive.hits.get(feature("permitted:order")) == 1  # the archive files it as a milestone of the path
    assert any("permitted:order" in c.events for c in archive.cells.values())
    finding = investigate(Chain(), walk, "chain", "kafka", ("order",))  # type: ignore[arg-type]
    assert finding is not None and finding.trace.permitted and len(finding.trace.actions) == 1


def test_permitted_paths_replay_on_the_real_model() -> None:
    scenario = builtin_scenarios()["idempotence_expired_not_leader"]
    model = build_model(scenario, "retry_refused_next_sequence_unchanged")
    kinds = model.fault_kinds()
    props = {p.name: p for p in model.properties()}
    walked_on = 0
    for seed in range(150):
        walk = random_walk(model, seed, 50, {k: 1.0 for k in kinds}, permitted=scenario.permitted)
        if walk.violation in scenario.permitted and walk.liveness is None:
            path = walk.violating_actions
            assert fails(model, path, props[walk.violation]) == len(path)
            walked_on += walk.steps > len(path)
    assert walked_on > 0
