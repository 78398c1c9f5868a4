"""The ``reach`` scenario set in CI (issue 23, part 4): scenarios that do not pay for their time in the
default gate (``scripts/gate.sh``) still run here, each under ``--strict`` -- every invariant holds or is
permitted, none is untested -- so a change that breaks one of them, or leaves one of its invariants
unjudged, fails the README's test command.  One test per scenario, so pytest-xdist spreads them."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from keos.checker.cli.main import main
from keos.scenarios import builtin_scenarios, scenario_set

#: The reach set's scenarios that the default gate does not already check.
REACH_ONLY = sorted(name for name, s in scenario_set("reach").items() if not s.default)


def test_the_reach_set_is_large_and_reaches_beyond_the_gate() -> None:
    # the generated ACL matrix (most of its cells cheap enough for the default gate too) and the
    # transactions/idempotence grid; the costlier cells run only here
    assert len(scenario_set("reach")) >= 30 and REACH_ONLY


def test_no_two_scenarios_ci_checks_search_the_same_configuration() -> None:
    # Two names for one search (model, variant, bounds, system configuration) cost CI the search twice and judge
    # nothing more: session 31 found reach_eos_partition_returns and txn_eos_rebalance_away_and_back, 137,064
    # states each.  Only the name, the prose, the sets and the permitted findings may differ between scenarios
    # that either the gate (default set) or this file (reach set) checks.
    seen: dict[str, str] = {}
    for name, s in sorted(builtin_scenarios().items()):
        if not (s.default or "reach" in s.sets):
            continue
        key = repr(replace(s, name="", description="", source="", document=None, default=False, sets=(),
                           permitted=(), expected=()))
        assert key not in seen, f"{name} searches the same configuration as {seen.get(key)}"
        seen[key] = name
    assert "txn_eos_rebalance_away_and_back" not in seen.values() and "reach_eos_partition_returns" in seen.values()


@pytest.mark.slow
@pytest.mark.parametrize("name", REACH_ONLY)
def test_reach_scenario_holds_strictly(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--strict", "--scenario", name, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert "PASS" in out and "0 untested" in out
