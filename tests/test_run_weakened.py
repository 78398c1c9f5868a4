"""``run_weakened``: what ``keos mutants`` and the gate's ``variant:`` checks count as a weakened variant caught.

A permitted property is one the real protocol also breaks on the scenario; a counterexample of it tells the
variant apart from nothing.  Before session 30 both callers counted it (``result.violations()`` includes permitted
properties), so ``verification_guard_reused`` passed ``keos mutants`` on its permitted ``atomic_commit`` alone."""

from __future__ import annotations

from typing import Any

from keos.checker.engines import EngineOptions, run_weakened
from keos.checker.results import EngineResult, PropertyResult, Verdict
from keos.model.interface import Expectation


def _result(*verdicts: tuple[str, Verdict]) -> EngineResult:
    props = [PropertyResult(name, Expectation.ALWAYS, v) for name, v in verdicts]
    return EngineResult("explore", "s", "v", props)


class _Engine:
    """A stand-in engine: answers each call from a list and records the stop_on_first it was given."""

    def __init__(self, *answers: EngineResult) -> None:
        self.answers = list(answers)
        self.stops: list[bool] = []

    def __call__(self, scenario: Any, variant: str, options: EngineOptions) -> EngineResult:
        self.stops.append(options.stop_on_first)
        return self.answers.pop(0)


def test_a_permitted_counterexample_alone_catches_nothing() -> None:
    engine = _Engine(_result(("atomic_commit", Verdict.PERMITTED), ("other", Verdict.HOLDS)),
                     _result(("atomic_commit", Verdict.PERMITTED), ("other", Verdict.HOLDS)))
    _, violated = run_weakened(engine, None, "v", EngineOptions())
    assert violated == []
    assert engine.stops == [True, False]  # the early stop judged nothing else: searched again to the end


def test_a_violation_behind_a_permitted_one_is_found_by_the_full_search() -> None:
    engine = _Engine(_result(("atomic_commit", Verdict.PERMITTED), ("other", Verdict.HOLDS)),
                     _result(("atomic_commit", Verdict.PERMITTED), ("other", Verdict.VIOLATED)))
    _, violated = run_weakened(engine, None, "v", EngineOptions())
    assert [p.name for p in violated] == ["other"]


def test_a_violation_at_the_first_stop_needs_no_second_search() -> None:
    engine = _Engine(_result(("other", Verdict.VIOLATED)))
    _, violated = run_weakened(engine, None, "v", EngineOptions())
    assert [p.name for p in violated] == ["other"] and engine.stops == [True]
