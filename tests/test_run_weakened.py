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


# -- a variant is caught only on each scenario it names (``Variant.scenarios``) ------------------------------------
# A variant names a second scenario for another side of its bug: broker_skips_epoch_check is caught on
# idempotence_epoch_bump (an idempotent batch below the epoch) and on txn_tv1_zombie (a fenced zombie's
# transactional batch).  A defect that restores the epoch check in the transactional produce handler alone
# (``flags.check_epoch`` dropped there) hides the second side; keos mutants used to stop at the first scenario
# that caught the variant and passed it.


def _two_sided(monkeypatch: Any, caught_on: set[str]) -> str:
    """A weakened variant named on scenarios ``a`` and ``b``, with a stand-in explore engine violating
    ``p`` only on ``caught_on``; returns the variant's name."""
    from keos.checker import api
    from keos.checker.engines import ENGINES
    from keos.model.variants import VARIANTS, Variant

    class _Scenario:
        def __init__(self, name: str) -> None:
            self.name = name

    def engine(scenario: Any, variant: str, options: EngineOptions) -> EngineResult:
        verdict = Verdict.VIOLATED if scenario.name in caught_on else Verdict.HOLDS
        return EngineResult("explore", scenario.name, variant, [PropertyResult("p", Expectation.ALWAYS, verdict)])

    name = "two_sided_test_variant"
    monkeypatch.setattr(api, "VARIANTS", {name: Variant(name, "test", weakened=True, breaks=("p",),
                                                        scenarios=("a", "b"))})
    monkeypatch.setitem(VARIANTS, name, api.VARIANTS[name])
    monkeypatch.setitem(ENGINES, "explore", (engine, "stand-in"))
    scenarios = {"a": _Scenario("a"), "b": _Scenario("b")}
    monkeypatch.setattr(api, "builtin_scenarios", lambda: scenarios)
    monkeypatch.setattr("keos.scenarios.builtin_scenarios", lambda: scenarios)
    monkeypatch.setattr(api, "write_traces", lambda *args: None)
    return name


def test_keos_mutants_wants_the_variant_caught_on_each_of_its_scenarios(monkeypatch: Any, tmp_path: Any) -> None:
    from keos.checker import api

    _two_sided(monkeypatch, {"a"})
    [row] = api._mutant_rows("explore", EngineOptions(out_dir=tmp_path), None)
    assert not row["caught"] and row["scenario"] == "a" and row["missed"] == ["b"]
    _two_sided(monkeypatch, {"a", "b"})
    [row] = api._mutant_rows("explore", EngineOptions(out_dir=tmp_path), None)
    assert row["caught"] and row["scenario"] == "a" and row["missed"] == []


def test_the_gates_variant_check_wants_each_scenario_too(monkeypatch: Any) -> None:
    from keos.checker.reach.gate_checks import run_weakened_variant

    name = _two_sided(monkeypatch, {"b"})
    result = run_weakened_variant(f"variant:{name}")
    assert result.failed == (name,) and result.detail.endswith("not caught on a")
    name = _two_sided(monkeypatch, {"a", "b"})
    assert run_weakened_variant(f"variant:{name}").failed == ()


def test_a_partly_caught_variant_says_where_it_escaped() -> None:
    from io import StringIO

    from rich.console import Console

    from keos.reports.terminal import render_mutants

    buf = StringIO()
    row = {"variant": "v", "caught": False, "scenario": "a", "invariant": "p", "missed": ["b"], "expected": ["p"]}
    render_mutants(Console(file=buf, width=200), [row])
    assert "escaped" in buf.getvalue() and "caught in a, not in b" in buf.getvalue()
