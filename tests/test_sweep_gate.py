"""The gate's randomized reach check (``keos sweep --gate``, gate check ``@sweep``: checker/sweep/gate.py).

Plumbing only, on a few runs per cell (the gate's own runs cost a minute of CPU): the reference is a gate check,
the spec is the scenarios/sweep configurations, a seed gives the same runs, a weakened variant fails it with
exit 1 and a replayed counterexample, a spent CPU budget is partial (exit 4), never a pass.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

import keos.checker.sweep.gate as gate
from keos.checker.reach.gate_checks import GATE_CHECKS, is_gate_check, run_gate_check
from keos.checker.sweep.campaign import add_sweep_arguments, read_runs, run_sweep_command
from keos.checker.trace import load_trace, replay
from keos.scenarios import build_model, resolve_scenario

#: A weakened variant the gate cells catch in their first runs (sweep_idempotence, run 1).
MUTANT = "no_idempotence"


def _cli(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="keos sweep")
    add_sweep_arguments(parser)
    return parser.parse_args(list(argv))


def _rows(out: Path) -> list[tuple[str, ...]]:
    cols = ["run_id", "seed", "steps", "violation", "signature", "trace_actions", "events", "fault_weights"]
    return [tuple(json.dumps(r[c], sort_keys=True) for c in cols) for r in read_runs(out).select(cols).to_pylist()]


def test_sweep_is_a_gate_check_over_the_sweep_configurations() -> None:
    assert is_gate_check("@sweep") and "@sweep" in GATE_CHECKS
    paths = gate.gate_scenario_paths()
    assert len(paths) >= 8 and all(p.parent.name == "sweep" for p in paths)
    spec = gate.plan_gate_sweep()
    assert [c.name for c in spec.cells] == [p.stem for p in paths]  # one cell per file, in name order
    assert all(c.variant == resolve_scenario(str(p)).variant and c.profile == "swarm"
               for c, p in zip(spec.cells, paths, strict=True))
    assert (spec.runs, spec.steps, spec.seed) == (gate.GATE_SWEEP.runs, gate.GATE_SWEEP.steps, gate.GATE_SWEEP.seed)
    # a cell is one chunk and one archive group: the budget is checked between cells, no group is split
    assert spec.chunk_runs == spec.archive_group == spec.runs and spec.chunks == len(spec.cells)
    # none of them is a built-in (a default scenario's search would try to close it)
    from keos.scenarios import builtin_scenarios

    assert not {p.stem for p in paths} & set(builtin_scenarios())
    # --mutants: each weakened variant only on the cells whose model reads a switch it changes
    mutants = gate.plan_gate_sweep(variants=[MUTANT], mutants=True, runs=2)
    assert mutants.extra["mutants"] == [MUTANT] and {c.variant for c in mutants.cells} == {MUTANT}


def test_the_gate_check_runs_the_sweep_and_holds_on_this_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gate, "GATE_SWEEP", gate.GateSweep(runs=3, steps=40, seed=0, cpu_budget_s=120.0))
    check = run_gate_check("@sweep")
    assert check.passed, (check.failed, check.detail, check.crashed)


def test_same_seed_same_runs_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--gate", "--runs", "3", "--steps", "40", "--json")
    assert run_sweep_command(_cli(*args, "--out", str(tmp_path / "a"))) == 0
    first = json.loads(capsys.readouterr().out)
    assert run_sweep_command(_cli(*args, "--out", str(tmp_path / "b"))) == 0
    capsys.readouterr()
    assert first["partial"] is None and first["runs"] == 3 * len(gate.gate_scenario_paths())
    assert _rows(tmp_path / "a") == _rows(tmp_path / "b")
    assert run_sweep_command(_cli(*args, "--seed", "1", "--out", str(tmp_path / "c"))) == 0
    capsys.readouterr()
    assert _rows(tmp_path / "a") != _rows(tmp_path / "c")


def test_a_weakened_variant_fails_it_with_a_replayed_counterexample(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_sweep_command(_cli("--gate", "--variant", MUTANT, "--runs", "3", "--steps", "40", "--stop-on-first",
                                  "--json", "--out", str(tmp_path)))
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["exit_code"] == 1
    bad = [v for v in data["violations"] if not v["permitted"]]
    assert bad
    trace = load_trace(Path(bad[0]["trace"]))
    model = build_model(resolve_scenario(trace["scenario"]), trace["variant"])
    assert trace["variant"] == MUTANT and replay(model, trace).confirmed  # the minimised trace breaks it again


def test_a_spent_cpu_budget_is_partial_never_a_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_sweep_command(_cli("--gate", "--runs", "2", "--steps", "20", "--cpu-budget", "1e-9", "--json",
                                  "--out", str(tmp_path)))
    data = json.loads(capsys.readouterr().out)
    assert code == 4 and data["exit_code"] == 4
    assert data["partial"] and "CPU budget" in data["partial"]
    assert data["runs"] < 2 * len(gate.gate_scenario_paths())
    for bad in (["--cpu-budget", "5"], ["--gate", "--scenario", "idempotence_retry"], ["--gate", "--cpu-budget", "-1"],
                ["--gate", "--mutants", "--variant", "kafka"]):
        assert run_sweep_command(_cli(*bad, "--out", str(tmp_path / "bad"))) == 2
        assert capsys.readouterr().err.startswith("keos: error: ")


def test_coverage_and_mutate_take_the_check_by_its_reference() -> None:
    """``keos coverage --scenario @sweep`` / ``keos mutate --scenario @sweep``: measured and run as a gate check."""
    from keos.checker.cli.reach import _scenario_refs

    args = argparse.Namespace(set=None, scenario=["@sweep", "idempotence_retry"], variant=None)
    assert _scenario_refs(args) == ["@sweep", "idempotence_retry"]
    default = _scenario_refs(argparse.Namespace(set=None, scenario=None, variant=None))
    assert "@sweep" in default and "@assignors" in default  # the whole gate
