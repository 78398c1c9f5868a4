"""The Python API (``keos.check`` and friends): what a user's own test suite calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import keos
from keos.checker.api import EXIT_OK, EXIT_VIOLATION
from keos.model.interface import ModelError


def test_check_reports_a_replayable_violation(tmp_path: Path) -> None:
    report = keos.check(["idempotence_retry"], variant="no_idempotence", stop_on_first=True, out=tmp_path)
    assert report.violated and report.exit_code == EXIT_VIOLATION
    prop = report.violations()[0]
    assert prop.trace_path is not None and prop.trace_path.exists()
    assert json.loads((tmp_path / "summary.json").read_text())["runs"][0]["scenario"] == "idempotence_retry"
    replayed = keos.replay(prop.trace_path)
    assert replayed.confirmed and replayed.scenario.name == "idempotence_retry"


def test_a_run_stopped_at_its_first_violation_judges_nothing_else() -> None:
    """``stop_on_first`` (the gate's fail-fast mode): the run's other invariants are untested, never holds."""
    from keos.checker.results import STOPPED_AT_FIRST, Verdict

    report = keos.check(["idempotence_retry"], variant="small_duplicate_window", stop_on_first=True, strict=True)
    props = report.results[0].properties
    assert [p.name for p in props if p.verdict is Verdict.VIOLATED]
    assert not [p.name for p in props if p.verdict is Verdict.HOLDS]
    unjudged = [p for p in props if p.detail == STOPPED_AT_FIRST]
    assert unjudged and all(p.verdict is Verdict.UNTESTED for p in unjudged)
    assert report.exit_code == EXIT_VIOLATION
    assert sum(line.startswith("not judged:") for line in report.reasons()) == 1
    assert not [line for line in report.reasons() if STOPPED_AT_FIRST in line and line.startswith("--strict")]
    clean = keos.check(["idempotence_retry"], stop_on_first=True, strict=True)  # nothing violated: all judged
    assert clean.exit_code == EXIT_OK and not [p for p in clean.results[0].properties if p.detail == STOPPED_AT_FIRST]


def test_check_holds_on_the_real_protocol() -> None:
    report = keos.check(["idempotence_retry"])
    assert not report.violated and report.exit_code == EXIT_OK
    assert {p.name for p in report.results[0].properties} >= {"no_duplicate_append", "no_acked_loss"}


def test_explore_returns_statistics_and_graph() -> None:
    result, graph = keos.explore("idempotence_retry", graph=True)
    assert result.stats["distinct_states"] == graph.number_of_nodes() > 100


def test_bad_input_raises_model_error_before_work() -> None:
    with pytest.raises(ModelError, match="unknown variant"):
        keos.check(["idempotence_retry"], variant="no_such_variant")
    with pytest.raises(ModelError, match="unknown engine"):
        keos.check(["idempotence_retry"], engine="no_such_engine")
    with pytest.raises(ModelError):
        keos.load_scenario("no_such_scenario")


def test_scenarios_and_unknown_attribute() -> None:
    defaults = keos.list_scenarios(default_only=True)
    assert "idempotence_retry" in defaults and all(s.default for s in defaults.values())
    with pytest.raises(AttributeError):
        _ = keos.no_such_function  # type: ignore[attr-defined]


def test_strict_fails_on_an_untested_invariant_only() -> None:
    """``strict``: an invariant whose partner never fired fails the check; a lone unreached sometimes does not."""
    complete = keos.check(["txn_kafka_6119_timeout_zombie"], strict=True)
    assert not complete.violated and not complete.untested_invariants() and complete.exit_code == EXIT_OK
    shallow = keos.check(["txn_kafka_6119_timeout_zombie"], max_depth=4, strict=True)  # no partner reached yet
    assert not shallow.violated and shallow.untested_invariants()
    assert all(p.detail.startswith("partner never reached") for _, p in shallow.untested_invariants())
    assert shallow.exit_code == EXIT_VIOLATION
    assert keos.check(["txn_kafka_6119_timeout_zombie"], max_depth=4).exit_code == EXIT_OK


def test_a_variant_over_the_default_gate_runs_where_it_applies() -> None:
    report = keos.check(variant="no_idempotence", stop_on_first=True)
    models = {keos.list_scenarios()[r.scenario].model for r in report.results}
    assert models == {"idempotence"} and report.violated
    with pytest.raises(ModelError, match="does not apply"):
        keos.check(["idempotence_retry"], variant="pre_kip_890")


def test_budgets_give_partial_results() -> None:
    from keos.checker.api import EXIT_PARTIAL

    report = keos.check(["idempotence_retry"], max_states=10)
    assert report.exit_code == EXIT_PARTIAL and report.partial()[0][1].startswith("state budget")
    assert any(line.startswith("partial:") for line in report.reasons())
    with pytest.raises(ModelError, match="time budget"):
        keos.check(["idempotence_retry"], time_budget_s=float("nan"))
    with pytest.raises(ModelError, match="max_memory_mb"):
        keos.explore("idempotence_retry", max_memory_mb=-1)
