"""A gate CI can trust (issue 15): exit codes, self-contained replay, budgets, standard formats.

Each test runs the CLI in-process on a tiny scenario (a few hundred states) unless it needs a real
pipe or signal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import keos
from keos.checker import api
from keos.checker.cli.main import main
from keos.checker.schemas import SCHEMAS, load_schema, scenario_schema, schema_errors
from keos.scenarios import builtin_scenarios

TINY = """
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
    p.write_text(TINY, encoding="utf-8")
    return p


def violation(tiny: Path, out: Path, *extra: str) -> Path:
    assert main(["check", "--scenario", str(tiny), "--variant", "no_idempotence", "--out", str(out), *extra]) == 1
    return next(out.rglob("*.trace.json"))


# -- exit codes --------------------------------------------------------------------------------------


def test_a_crash_is_exit_3_with_a_crash_report_not_a_traceback(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(*_: Any) -> Any:
        raise ZeroDivisionError("a bug")

    monkeypatch.setitem(api.ENGINES, "explore", (boom, "broken"))
    out = tmp_path / "o"
    assert main(["check", "--scenario", str(tiny), "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "Traceback" not in err and "keos: internal error: ZeroDivisionError" in err
    report = next(out.glob("keos-crash-*.txt"))
    text = report.read_text(encoding="utf-8")
    assert "Traceback" in text and "check --scenario" in text and "ZeroDivisionError: a bug" in text


def test_memory_error_is_exit_4_with_finished_runs_kept(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real, _ = api.ENGINES["explore"]
    calls = []

    def second_runs_out(scenario: Any, variant: str, options: Any) -> Any:
        calls.append(scenario.name)
        if len(calls) == 2:
            raise MemoryError
        return real(scenario, variant, options)

    monkeypatch.setitem(api.ENGINES, "explore", (second_runs_out, "x"))
    out = tmp_path / "o"
    code = main(["check", "--scenario", str(tiny), "--scenario", str(tiny), "--out", str(out),
                 "--junit", str(tmp_path / "j.xml")])
    assert code == 4
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True and "memory" in summary["stopped"] and len(summary["runs"]) == 1
    assert (tmp_path / "j.xml").exists()
    assert "partial" in capsys.readouterr().out


def test_interrupt_marks_summary_partial_and_still_writes_html_and_junit(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real, _ = api.ENGINES["explore"]
    calls = []

    def interrupted(scenario: Any, variant: str, options: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(scenario, variant, options)

    monkeypatch.setitem(api.ENGINES, "explore", (interrupted, "x"))
    out = tmp_path / "o"
    code = main(["check", "--scenario", str(tiny), "--scenario", str(tiny), "--variant", "no_idempotence",
                 "--out", str(out), "--html", str(tmp_path / "r.html"), "--junit", str(tmp_path / "j.xml")])
    assert code == 1  # the finished run found a violation: that verdict stands
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True and summary["stopped"] == "interrupted" and len(summary["runs"]) == 1
    assert (tmp_path / "r.html").exists() and (tmp_path / "j.xml").exists()
    jsonschema.validate(summary, load_schema("summary"))


def test_strict_says_why_it_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text("name = 'calm'\n[topology]\nrecords_per_producer = 1\n[faults]\ntotal = 0\n")
    assert main(["check", "--scenario", str(scenario), "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    assert main(["check", "--scenario", str(scenario), "--out", str(tmp_path / "o"), "--strict"]) == 1
    out = capsys.readouterr().out
    assert "--strict:" in out and "untested" in out and "exit 1" in out


def test_a_state_budget_is_partial_not_a_vacuous_pass(tiny: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--scenario", str(tiny), "--max-states", "1", "--out", str(tmp_path / "o")]) == 4
    out = capsys.readouterr().out
    assert "PARTIAL" in out and "PASS" not in out and "state budget" in out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["partial"] is True and summary["runs"][0]["stats"]["limit_reached"] == "states"


def test_explore_honours_the_time_budget(tmp_path: Path) -> None:
    result, _ = keos.explore("idempotence_two_producers", time_budget_s=0.2)
    assert result.stats["limit_reached"] == "time" and not result.complete
    assert main(["explore", "--scenario", "idempotence_two_producers", "--time-budget", "0.2",
                 "--out", str(tmp_path / "o")]) == 4


def test_memory_budget_stops_every_searching_engine(tiny: Path) -> None:
    report = keos.check([str(tiny)], engine="explore", max_memory_mb=1)
    assert report.exit_code == api.EXIT_PARTIAL and report.results[0].stats["limit_reached"] == "memory"
    report = keos.check([str(tiny)], engine="hypothesis", max_memory_mb=1, examples=5)
    assert report.exit_code == api.EXIT_PARTIAL and report.results[0].stats["limit_reached"] == "memory"


def test_hypothesis_honours_the_time_budget(tiny: Path) -> None:
    report = keos.check([str(tiny)], engine="hypothesis", time_budget_s=0.000001, examples=50)
    assert report.results[0].stats["limit_reached"] == "time" and report.exit_code == api.EXIT_PARTIAL


def test_stale_traces_are_cleared(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    old = violation(tiny, out)
    kept = out / "saved" / "mine.trace.json"  # a user's own file under --out is not keos's to remove
    kept.parent.mkdir()
    kept.write_text("{}")
    assert main(["check", "--scenario", str(tiny), "--out", str(out)]) == 0
    assert not old.exists() and list(out.rglob("*.trace.json")) == [kept]
    assert json.loads((out / "summary.json").read_text())["traces"] == []


def test_list_into_a_closed_pipe_is_not_a_crash() -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    for cmd in ("list", "list --json"):
        proc = subprocess.run(f"{sys.executable} -m keos {cmd} | head -1; exit ${{PIPESTATUS[0]}}", shell=True,
                              executable="/bin/bash", capture_output=True, text=True, env=env, check=False)
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_ci_output_is_full_width_with_progress_lines_on_stderr(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.pop("COLUMNS", None)
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; import keos.checker.cli.main as m; m.PROGRESS_EVERY_S = 0.0; "
         "sys.exit(m.main(sys.argv[1:]))", "check", "--scenario", "connect_worker_lag_before_producer",
         "--out", str(tmp_path / "o")],
        capture_output=True, text=True, env=env, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "connect_worker_lag_before_producer" in proc.stdout  # not cut to "connect…" at 80 columns
    assert max(len(line) for line in proc.stdout.splitlines()) > 80
    assert "explore: " in proc.stderr and " states, " in proc.stderr


def test_help_shows_exit_codes_examples_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--help"]) == 0
    text = capsys.readouterr().out
    assert "exit codes:" in text and "examples:" in text and "60 for bmc" in text and "partial" in text
    assert main(["explore", "--scenario", "idempotence_retry", "--output-dir", "x", "--help"]) == 0  # alias


# -- replay ----------------------------------------------------------------------------------------------


def test_a_user_scenario_named_like_a_builtin_replays_on_itself_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "mine.toml").write_text(TINY.replace('name = "tiny"', 'name = "idempotence_retry"'))
    monkeypatch.chdir(work)
    assert main(["check", "--scenario", "mine.toml", "--variant", "no_idempotence", "--out", "o"]) == 1
    trace = next((work / "o").rglob("*.trace.json")).resolve()
    data = json.loads(trace.read_text())
    assert data["scenario_document"]["topology"] == {"records_per_producer": 1}
    assert Path(data["scenario_source"]).is_absolute()
    jsonschema.validate(data, load_schema("trace"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (work / "mine.toml").unlink()  # the trace alone is enough
    capsys.readouterr()
    assert main(["replay", str(trace), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["confirmed"] and summary["scenario_from"] == "embedded" and summary["differences"] == []


def test_replay_draws_what_it_re_executed_and_says_when_the_file_differs(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = violation(tiny, tmp_path / "o")
    data = json.loads(trace.read_text())
    data["steps"][0]["fingerprint"] = "0" * 16
    data["final_state"] = {"edited": True}
    trace.write_text(json.dumps(data))
    outcome = keos.replay(trace)
    assert outcome.confirmed and outcome.drawn["final_state"] != {"edited": True}
    assert outcome.differences and "step 1" in outcome.differences[0]
    capsys.readouterr()
    assert main(["replay", str(trace)]) == 1
    out = capsys.readouterr().out
    assert "differs from its replay" in out and "re-executed" in out


def test_mermaid_goes_alone_to_stdout(tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = violation(tiny, tmp_path / "o")
    capsys.readouterr()
    assert main(["replay", str(trace), "--mermaid"]) == 1
    cap = capsys.readouterr()
    assert cap.out.startswith("sequenceDiagram") and "CONFIRMED" not in cap.out and "CONFIRMED" in cap.err


# -- formats ---------------------------------------------------------------------------------------------


def test_json_schemas_are_valid_and_the_scenario_schema_matches_the_loader() -> None:
    for name in SCHEMAS:
        jsonschema.Draft202012Validator.check_schema(load_schema(name))
    assert load_schema("scenario") == json.loads(json.dumps(scenario_schema()))  # regenerate: python -m ...
    for scenario in builtin_scenarios().values():
        assert schema_errors("scenario", scenario.document) == [], scenario.name
    assert schema_errors("scenario", {"name": "x", "faults": {"dorp": 1}})


def test_summary_and_traces_validate(tiny: Path, tmp_path: Path) -> None:
    trace = violation(tiny, tmp_path / "o")
    jsonschema.validate(json.loads(trace.read_text()), load_schema("trace"))
    jsonschema.validate(json.loads((tmp_path / "o" / "summary.json").read_text()), load_schema("summary"))


def test_itf_export(tiny: Path, tmp_path: Path) -> None:
    trace = violation(tiny, tmp_path / "o")
    assert main(["export-itf", str(trace), "--output", str(tmp_path / "t.itf.json")]) == 0
    itf = json.loads((tmp_path / "t.itf.json").read_text())
    steps = json.loads(trace.read_text())["steps"]
    assert len(itf["states"]) == len(steps) + 1 and itf["#meta"]["format"] == "ITF"
    for i, state in enumerate(itf["states"]):
        assert state["#meta"]["index"] == i and set(state) - {"#meta"} == set(itf["vars"])
    assert itf["states"][0]["action_taken"] == "init" and itf["states"][-1]["action_taken"] == steps[-1]["action"]

    def no_plain_numbers(value: Any) -> None:  # ITF integers are {"#bigint": "..."}
        assert not isinstance(value, float)
        assert not (isinstance(value, int) and not isinstance(value, bool))
        if isinstance(value, dict):
            for k, v in value.items():
                if k != "#meta":
                    no_plain_numbers(v)
        elif isinstance(value, list):
            for v in value:
                no_plain_numbers(v)

    for state in itf["states"]:
        no_plain_numbers(state)
    assert main(["replay", str(trace), "--itf", str(tmp_path / "r.itf.json")]) == 1
    assert json.loads((tmp_path / "r.itf.json").read_text())["states"] == itf["states"]


#: The SARIF 2.1.0 essentials (what code-scanning upload checks), as a JSON Schema fragment.
SARIF_CORE = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["tool", "results"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name", "rules"],
                    "properties": {"rules": {"type": "array", "items": {"type": "object", "required": ["id"]}}}}}},
                "results": {"type": "array", "items": {
                    "type": "object", "required": ["ruleId", "level", "message"],
                    "properties": {"level": {"enum": ["none", "note", "warning", "error"]},
                                   "message": {"type": "object", "required": ["text"]},
                                   "locations": {"type": "array", "items": {"type": "object", "required": [
                                       "physicalLocation"]}}}}},
            }}},
    },
}


def test_sarif_report(tiny: Path, tmp_path: Path) -> None:
    path = tmp_path / "keos.sarif"
    violation(tiny, tmp_path / "o", "--sarif", str(path))
    sarif = json.loads(path.read_text())
    jsonschema.validate(sarif, SARIF_CORE)
    run = sarif["runs"][0]
    errors = [r for r in run["results"] if r["level"] == "error"]
    # without idempotence the retried record is written twice under one epoch: both duplicate properties object
    assert [r["ruleId"] for r in errors] == ["no_duplicate_append", "no_duplicate_within_epoch"]
    rule = run["tool"]["driver"]["rules"][errors[0]["ruleIndex"]]
    assert rule["id"] == "no_duplicate_append" and rule["fullDescription"]["text"]
    assert errors[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("tiny.toml")
    assert "keos replay" in errors[0]["message"]["text"]


#: Attributes and children the Jenkins xunit plugin's junit-10.xsd (and Ant's JUnit.xsd) allow.
JUNIT_ALLOWED = {
    "testsuites": ({"name", "time", "tests", "failures", "disabled", "errors"}, {"testsuite"}),
    "testsuite": ({"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp", "hostname",
                   "id", "package"}, {"properties", "testcase", "system-out", "system-err"}),
    "properties": (set(), {"property"}),
    "property": ({"name", "value"}, set()),
    "testcase": ({"name", "assertions", "time", "classname", "status"},
                 {"skipped", "error", "failure", "system-out", "system-err"}),
    "failure": ({"message", "type"}, set()),
    "error": ({"message", "type"}, set()),
    "skipped": ({"message"}, set()),
    "system-out": (set(), set()),
    "system-err": (set(), set()),
}


def check_junit(path: Path) -> ET.Element:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    for element in root.iter():
        attrs, children = JUNIT_ALLOWED[element.tag]
        assert set(element.attrib) <= attrs, (element.tag, element.attrib)
        assert {c.tag for c in element} <= children, (element.tag, [c.tag for c in element])
    for case in root.iter("testcase"):
        assert float(case.get("time", "x")) >= 0
    for suite in root.iter("testsuite"):
        assert int(suite.get("tests", "-1")) == len(suite.findall("testcase"))
        assert int(suite.get("failures", "-1")) == len(suite.findall("testcase/failure"))
        assert int(suite.get("skipped", "-1")) == len(suite.findall("testcase/skipped"))
    return root


def test_junit_fits_the_strict_schema(tiny: Path, tmp_path: Path) -> None:
    violation(tiny, tmp_path / "o", "--junit", str(tmp_path / "j.xml"))
    root = check_junit(tmp_path / "j.xml")
    assert root.get("skipped") is None and root.get("failures") == "2"  # no_duplicate_append, no_duplicate_within_epoch


def test_mutants_in_junit(tmp_path: Path) -> None:
    from keos.reports.junit import write_mutants_junit

    rows = [
        {"engine": "explore", "variant": "no_idempotence", "covered": True, "caught": True, "elapsed_s": 0.5,
         "invariant": "no_duplicate_append", "scenario": "idempotence_retry", "trace": "t.json", "trace_length": 5},
        {"engine": "explore", "variant": "tv1", "covered": True, "caught": False, "elapsed_s": 1.25,
         "bug": "KAFKA-x", "expected": ["a"]},
        {"engine": "bmc", "variant": "tv1", "covered": False, "caught": False, "elapsed_s": 0.0},
    ]
    root = check_junit(write_mutants_junit(tmp_path / "m.xml", rows))
    assert root.get("tests") == "3" and root.get("failures") == "1"
    assert [s.get("name") for s in root.iter("testsuite")] == ["mutants.explore", "mutants.bmc"]


def test_state_graph_labels_nodes_and_marks_the_counterexample(tiny: Path, tmp_path: Path) -> None:
    import networkx as nx

    graph = tmp_path / "g.graphml"
    assert main(["explore", "--scenario", str(tiny), "--variant", "no_idempotence", "--graph", str(graph),
                 "--out", str(tmp_path / "o")]) == 1
    g = nx.read_graphml(graph)
    assert all(data.get("label") for _, data in g.nodes(data=True))
    path_nodes = [n for n, d in g.nodes(data=True) if d.get("counterexample")]
    trace = json.loads(next((tmp_path / "o").rglob("*.trace.json")).read_text())
    assert {s["fingerprint"] for s in trace["steps"]} <= set(path_nodes)
    assert any("violates no_duplicate_append" in d["label"] for _, d in g.nodes(data=True))
    assert sum(1 for *_, d in g.edges(data=True) if d.get("counterexample")) == len(trace["steps"])
    dot = tmp_path / "g.dot"
    assert main(["explore", "--scenario", str(tiny), "--variant", "no_idempotence", "--graph", str(dot),
                 "--out", str(tmp_path / "o")]) == 1
    assert 'color="red"' in dot.read_text() and "label=" in dot.read_text()


def test_html_summary_table_fits_its_page(tiny: Path, tmp_path: Path) -> None:
    violation(tiny, tmp_path / "o", "--html", str(tmp_path / "r.html"))
    text = (tmp_path / "r.html").read_text()
    # issue 24: natural column widths in a horizontal scroll box; identifiers break only at their separators
    assert '<div class="scroll"><table class="summary">' in text and "overflow-wrap: anywhere" not in text


def test_sigterm_mid_run_is_partial_with_reports(tmp_path: Path) -> None:
    """A cancelled CI job (SIGTERM) keeps the finished runs: summary marked partial, JUnit written, exit 4."""
    import signal
    import time

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [sys.executable, "-m", "keos", "check", "--scenario", "idempotence_retry", "--scenario",
         "idempotence_two_producers", "--out", str(out), "--junit", str(tmp_path / "j.xml")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    deadline = time.monotonic() + 60
    while not (out / "summary.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 4, err
    assert "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["partial"] is True and summary["stopped"] == "interrupted"
    assert [r["scenario"] for r in summary["runs"]] == ["idempotence_retry"]
    check_junit(tmp_path / "j.xml")


def test_every_switch_names_its_readers_and_every_variant_applies_to_its_scenarios() -> None:
    """A new ProtocolFlags switch must say which models read it, or its variants would be refused (or,
    worse, accepted where they change nothing); each weakened variant applies to the scenarios it names."""
    from dataclasses import fields

    from keos.model.variants import VARIANTS, ProtocolFlags
    from keos.scenarios.variant_scope import FLAG_MODELS, variant_applies

    assert {f.name for f in fields(ProtocolFlags)} <= set(FLAG_MODELS)
    scenarios = builtin_scenarios()
    for v in VARIANTS.values():
        for name in v.scenarios:
            if name in scenarios:
                assert variant_applies(v, scenarios[name].model)[0], (v.name, name)
