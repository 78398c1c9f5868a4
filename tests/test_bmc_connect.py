"""The z3 proof of the KIP-618 fencing core (checker/bmc_connect.py) and its cross-check against the model."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from keos.checker.bmc import connect_proof as bmc_connect
from keos.checker.bmc.connect_proof import (
    abstract_reachable,
    cross_check,
    derive_coordinator_rules,
    prove_connect_fencing,
)
from keos.model.connect import herder as connect_herder
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios

REAL = VARIANTS["kafka"].flags


@pytest.mark.parametrize("tv", [1, 2])
def test_proved_for_all_depths_under_the_real_protocol(tv: int) -> None:
    flags = replace(REAL, transaction_version=tv)
    assert derive_coordinator_rules(flags) == {
        "init_makes_current": True,
        "init_fences_older": True,
        "stale_commit_rejected": True,
        "commit_keeps_current": True,
    }
    out = prove_connect_fencing(flags)
    assert out["result"] == "proved for all depths", out
    assert out["flags"]["connect_zombie_fencing"] and out["flags"]["connect_reread_after_producer_init"]
    assert out["rules"]["fencing_plan_rows"] == 2 * 6 * 4
    assert "counterexample" not in out


@pytest.mark.parametrize(
    ("variant", "broken"),
    [
        ("no_zombie_fencing_round", "answered only after a task-count record follows its generation"),
        ("no_reread_after_producer_init", "in the send loop only if it initialised while G == g"),
    ],
)
def test_induction_step_fails_with_a_counterexample_when_a_rule_is_removed(variant: str, broken: str) -> None:
    out = prove_connect_fencing(VARIANTS[variant].flags)
    assert out["result"] == "induction step fails"
    cex = out["counterexample"]
    assert cex["move"] in bmc_connect.MOVES
    assert any(broken in name for name in cex["broken"]), cex["broken"]
    # The property itself (not only the strengthening) is violated by a run of the abstraction from its start.
    trace = out["abstract_trace"]
    assert trace is not None and trace[-1].startswith("VerifyGeneration("), trace
    assert set(trace[1:]) <= set(bmc_connect.MOVES)


def test_the_proof_reads_the_round_plan_of_the_herder(monkeypatch: pytest.MonkeyPatch) -> None:
    real_plan = connect_herder.fencing_plan

    def never_fence(snap: Any) -> tuple[str, tuple[int, ...]]:
        outcome, _tasks = real_plan(snap)
        return (connect_herder.WRITE_ONLY, ()) if outcome == connect_herder.FENCE else (outcome, ())

    monkeypatch.setattr(connect_herder, "fencing_plan", never_fence)
    out = prove_connect_fencing(REAL, trace_depth=13)
    assert out["result"] == "induction step fails"
    assert "Z survives rounds of later generations only through the 1 -> 1 shortcut" in out["counterexample"]["broken"]
    trace = out["abstract_trace"]  # an older generation's producer survives the round and can commit
    assert trace is not None and "FenceZombies" in trace and trace[-1].startswith("VerifyGeneration("), trace


def test_the_abstraction_is_not_vacuous() -> None:
    """The protocol runs reach the states the property is about (in a handful of abstract steps)."""
    for witness in (
        "newer generation started while Z of an older one is in its send loop",
        "Z can commit in its send loop",
        "Z holds its epoch in its send loop after a later generation's round",
    ):
        assert abstract_reachable(REAL, witness, depth=13) is not None, witness
    assert abstract_reachable(REAL, "violation", depth=8) is None


def test_every_reachable_model_state_satisfies_the_inductive_invariant() -> None:
    """Exhaustive search of a scenario with the 1 -> 1 shortcut and Admin.fenceProducers (three generations)."""
    sc = builtin_scenarios()["connect_fencing_round_faults"]
    out = cross_check(build_model(sc, VARIANTS["kafka"]))
    assert out["complete"] and out["nodes"] > 1000 and out["pairs"] > 10_000
    assert out["failures"] == {}, out["failures"]
    assert out["p1_disagreements"] == 0
    assert "Z can commit in its send loop" in out["reached"]


def test_the_abstract_properties_agree_with_the_connect_invariants() -> None:
    """Without the fencing round the model violates both invariants; the abstract P1/P2 say so at the same nodes."""
    sc = builtin_scenarios()["connect_worker_lag_before_producer"]
    out = cross_check(build_model(sc, VARIANTS["no_zombie_fencing_round"]))
    assert out["complete"]
    assert out["p1_disagreements"] == 0
    assert "task_starts_after_task_count_record" in out["failures"]
    assert out["p2_violating_steps"] > 0 and out["p2_unexplained"] == 0
    assert "newer generation started while Z of an older one is in its send loop" in out["reached"]


def test_scenario_hook_reads_the_leaders_support_level() -> None:
    """A cluster with a worker whose support is disabled may be led by a plain producer: the premise is off."""
    scenarios = builtin_scenarios()
    real = bmc_connect.prove_for_model(build_model(scenarios["connect_worker_lag_before_producer"], VARIANTS["kafka"]))
    assert real["result"] == "proved for all depths" and real["flags"]["connect_transactional_leader"]
    mixed = build_model(scenarios["connect_heterogeneous_cluster"], VARIANTS["kafka"])
    out = bmc_connect.prove_for_model(mixed)
    assert "disabled" in mixed.topo.workers
    assert not out["flags"]["connect_transactional_leader"] and out["result"] == "induction step fails"
    assert "not the plain records of at-least-once workers [0]" in out["scope"]
