"""The keos command line: exit codes 0/1/2, traces that replay, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from keos.checker.cli.main import main

SMALL = """
name = "tiny"
description = "one record, one duplicate"
[topology]
records_per_producer = 1
[producer]
retries = 1
max_in_flight = 1
[faults]
duplicate = 1
drop = 1
total = 1
"""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    p = tmp_path / "tiny.toml"
    p.write_text(SMALL)
    return p


def test_check_holds_with_the_real_protocol(tiny: Path, tmp_path: Path) -> None:
    assert main(["check", "--scenario", str(tiny), "--out", str(tmp_path / "o")]) == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["runs"][0]["violated"] is False


def test_check_finds_a_violation_writes_a_trace_and_replay_confirms_it(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    code = main(["check", "--scenario", str(tiny), "--variant", "no_idempotence", "--out", str(out), "--json"])
    assert code == 1
    data = json.loads(capsys.readouterr().out)
    traces = [p["trace"] for r in data["runs"] for p in r["properties"] if p["verdict"] == "violated"]
    assert traces
    assert main(["replay", traces[0], "--json"]) == 1
    replayed = json.loads(capsys.readouterr().out)
    assert replayed["confirmed"] is True


def test_replay_refutes_a_trace_whose_violation_does_not_happen(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    main(["check", "--scenario", str(tiny), "--variant", "no_idempotence", "--out", str(out)])
    trace_path = next(out.rglob("*.trace.json"))
    data = json.loads(trace_path.read_text())
    data["variant"] = "kafka"  # same actions on the real protocol: not enabled or no violation
    trace_path.write_text(json.dumps(data))
    assert main(["replay", str(trace_path)]) == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--engine", "nope"],
        ["check", "--variant", "nope"],
        ["check", "--scenario", "no_such_scenario"],
        ["check", "--bogus-flag"],
        ["check", "--max-depth", "-1"],
        ["replay", "/nonexistent/trace.json"],
        ["explore", "--scenario", "idempotence_retry", "--graph", "x.png"],
        [],
    ],
)
def test_bad_input_exits_2(argv: list[str]) -> None:
    assert main(argv) == 2


def test_malformed_trace_is_a_one_line_error_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    for text in ("{not json", "[]", json.dumps({"schema_version": 99}), json.dumps({"schema_version": 1})):
        bad.write_text(text)
        proc = subprocess.run(
            [sys.executable, "-m", "keos", "replay", str(bad)], capture_output=True, text=True, check=False
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("keos: error:"), proc.stderr
        assert "Traceback" not in proc.stderr


def test_malformed_trace_action_is_rejected(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    main(["check", "--scenario", str(tiny), "--variant", "no_idempotence", "--out", str(out)])
    trace_path = next(out.rglob("*.trace.json"))
    data = json.loads(trace_path.read_text())
    data["actions"][0] = {"kind": "Teleport"}
    trace_path.write_text(json.dumps(data))
    assert main(["replay", str(trace_path)]) == 2


def test_results_already_computed_survive_a_later_bad_scenario(tiny: Path, tmp_path: Path) -> None:
    """All scenarios are validated before work starts, so a bad one costs nothing computed."""
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'x'\n[faults]\ndorp = 1\n")
    out = tmp_path / "o"
    assert main(["check", "--scenario", str(tiny), "--scenario", str(bad), "--out", str(out)]) == 2
    assert not (out / "summary.json").exists()


def test_explore_reports_states_and_exports_a_graph(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = tmp_path / "g.graphml"
    assert main(["explore", "--scenario", str(tiny), "--graph", str(graph), "--out", str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "distinct states" in text and "states/s" in text
    import networkx as nx

    g = nx.read_graphml(graph)
    assert g.number_of_nodes() > 1


def test_list_json_names_invariants_scenarios_and_weakened_variants(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    names = {p["name"] for p in data["invariants"]}
    assert {"no_duplicate_append", "no_acked_loss", "per_partition_order", "sequence_table_consistent"} <= names
    weakened = {v["name"]: v for v in data["variants"] if v["weakened"]}
    assert weakened["small_duplicate_window"]["breaks"] == ["no_duplicate_append", "produce_answer_per_kafka"]
    assert any(s["name"] == "idempotence_retry" and s["default"] for s in data["scenarios"])


def test_fingerprints_are_stable_across_processes() -> None:
    code = (
        "from scenarios import build_model, builtin_scenarios;"
        "m=build_model(builtin_scenarios()['idempotence_retry']);"
        "s=m.init_states()[0];a=m.actions(s);s=m.step(s,a[0]).state;print(m.fingerprint(s))"
    )
    outs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env).stdout)
    assert len(outs) == 1 and len(outs.pop().strip()) == 16
