"""The ``reach`` scenario set in the gate (issue 23, part 4): scenarios that do not pay for their time in the
default gate's first step still run in ``scripts/gate.sh``, in its second check (``keos check --strict
--stop-on-first --set reach --skip-default``): every invariant holds or is permitted, none is untested.  Until
session 33 each of them was a strict search of this file, run by every ``.ci/run`` (about 480 CPU-s of the
suite's ~1,300); the gate is what users run and what defects are judged against, so the searches moved there.

What stays here is what is cheap and structural: the set loads, each of its scenarios builds a well-formed model,
no two scenarios the gate checks search one configuration, ``--skip-default`` selects exactly the reach-only
scenarios, the gate script runs that step strictly, and one cheap reach-only scenario's strict check as a smoke
test of the step."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import replace
from pathlib import Path

import pytest

from keos.checker.cli.main import _check_scenarios, main
from keos.scenarios import build_model, builtin_scenarios, scenario_set

#: The reach set's scenarios that the default gate does not already check.
REACH_ONLY = sorted(name for name, s in scenario_set("reach").items() if not s.default)

#: A reach-only scenario whose strict check costs a few CPU-seconds (3.6 on the session-33 machine): the smoke
#: test of the gate's reach step.
SMOKE = "authz_matrix_eostv1_write_transactionalid_revoked"

ROOT = Path(__file__).resolve().parents[1]


def test_the_reach_set_is_large_and_reaches_beyond_the_gate() -> None:
    # the generated ACL matrix (most of its cells cheap enough for the default gate too) and the
    # transactions/idempotence grid; the costlier cells run only in the gate's second check
    assert len(scenario_set("reach")) >= 30 and len(REACH_ONLY) >= 20
    assert SMOKE in REACH_ONLY


@pytest.mark.parametrize("name", REACH_ONLY)
def test_each_reach_only_scenario_builds_a_well_formed_model(name: str) -> None:
    # the strict search is the gate's; here only what a broken scenario file or generator would break at once
    s = scenario_set("reach")[name]
    assert "reach" in s.sets and not s.default
    model = build_model(s, s.variant)
    states = list(model.init_states())
    assert states and all(model.within_bounds(st) for st in states)
    assert model.properties(), f"{name} judges nothing"
    assert any(model.actions(st) for st in states), f"{name} has no first step"
    for p in s.permitted:  # a permitted finding names a property of this model
        assert p in {q.name for q in model.properties()}, f"{name} permits unknown property {p}"


def test_no_two_scenarios_the_gate_checks_search_the_same_configuration() -> None:
    # Two names for one search (model, variant, bounds, system configuration) cost the gate the search twice and
    # judge nothing more: session 31 found reach_eos_partition_returns and txn_eos_rebalance_away_and_back, 137,064
    # states each.  Only the name, the prose, the sets and the permitted findings may differ between scenarios
    # that the gate checks (the default set in its first check, the reach set in its second).
    seen: dict[str, str] = {}
    for name, s in sorted(builtin_scenarios().items()):
        if not (s.default or "reach" in s.sets):
            continue
        key = repr(replace(s, name="", description="", source="", document=None, default=False, sets=(),
                           permitted=(), expected=()))
        assert key not in seen, f"{name} searches the same configuration as {seen.get(key)}"
        seen[key] = name
    assert "txn_eos_rebalance_away_and_back" not in seen.values() and "reach_eos_partition_returns" in seen.values()


def _selection(*argv: str) -> list[str]:
    ns = argparse.Namespace(set=None, skip_default=False, scenario=None)
    it = iter(argv)
    for flag in it:
        if flag == "--skip-default":
            ns.skip_default = True
        elif flag == "--set":
            ns.set = next(it)
        else:
            ns.scenario = [*(ns.scenario or []), next(it)]
    chosen = _check_scenarios(ns)
    assert chosen is not None
    return [s.name for s in chosen]


def test_skip_default_selects_exactly_the_reach_only_scenarios() -> None:
    assert sorted(_selection("--set", "reach", "--skip-default")) == REACH_ONLY
    whole = _selection("--set", "reach")
    assert set(REACH_ONLY) < set(whole) and len(whole) == len(scenario_set("reach"))
    # a --scenario beside it is checked whatever its set
    assert _selection("--set", "reach", "--skip-default", "--scenario", "idempotence_retry")[-1] == "idempotence_retry"


def test_skip_default_without_a_set_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--skip-default", "--scenario", "idempotence_retry"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("keos: error:") and "--skip-default needs --set" in err


def test_the_gate_script_checks_the_reach_only_scenarios_strictly() -> None:
    # the second check of scripts/gate.sh: strict, the reach set without the default scenarios, its own reports
    lines = (ROOT / "scripts" / "gate.sh").read_text(encoding="utf-8").replace("\\\n", " ").splitlines()
    checks = [shlex.split(line) for line in lines if line.startswith(".venv/bin/keos check ")]
    reach = [c for c in checks if "--set" in c and c[c.index("--set") + 1] == "reach"]
    assert len(reach) == 1, checks
    step = reach[0]
    assert {"--strict", "--skip-default", "--jobs", "--junit", "--sarif", "--html"} <= set(step)
    assert step[step.index("--out") + 1].startswith("keos-out/gate/")
    default = [c for c in checks if "--set" not in c]
    assert len(default) == 1 and "--strict" in default[0]


def test_one_reach_only_scenario_holds_strictly_as_the_gate_checks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the smoke test of the gate's second check: the same flags, one cheap scenario
    code = main(["check", "--strict", "--stop-on-first", "--scenario", SMOKE, "--out", str(tmp_path),
                 "--junit", str(tmp_path / "junit.xml")])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert "PASS" in out and "0 untested" in out
    assert (tmp_path / "junit.xml").is_file()
