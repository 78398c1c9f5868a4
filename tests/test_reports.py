"""The renderers on real engine output: a KAFKA-5494 counterexample, a clean run, permitted and untested verdicts.

One module-scoped fixture runs the breadth-first engine three times (well under
a second in total): ``idempotence_retry`` with the ``small_duplicate_window``
mutant (violates ``no_duplicate_append``), the same scenario on real Kafka
(everything holds), and ``acks_one_failover`` (two permitted violations and two
untested invariants).  Every test asserts on the rendered content.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.progress import ProgressColumn
from rich.text import Text

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import EngineResult, Verdict
from keos.reports.common import format_stats, jepsen_anomaly, trace_as_dict
from keos.reports.html import write_html
from keos.reports.junit import write_junit
from keos.reports.lanes import parse_action, trace_view
from keos.reports.terminal import (
    MutantRow,
    explore_progress,
    make_progress,
    render_coverage,
    render_mutants,
    render_summary,
)
from keos.reports.trace_text import plain_text, render_trace, sequence_diagram
from keos.scenarios import build_model, builtin_scenarios

RUNS = (
    ("idempotence_retry", "small_duplicate_window"),
    ("idempotence_retry", "kafka"),
    ("acks_one_failover", "kafka"),
)


class Runs:
    """Real results and the violation trace of the small_duplicate_window mutant."""

    def __init__(self) -> None:
        scenarios = builtin_scenarios()
        self.results: list[EngineResult] = []
        for name, variant in RUNS:
            scenario = scenarios[name]
            model = build_model(scenario, variant)
            result, _ = explore(model, scenario.name, variant, ExploreOptions(), permitted=scenario.permitted)
            self.results.append(result)
        self.mutant = self.results[0]
        model = build_model(scenarios["idempotence_retry"], "small_duplicate_window")
        trace = next(p.trace for p in self.mutant.properties if p.name == "no_duplicate_append")
        assert trace is not None
        self.trace = trace
        self.trace_json: dict[str, Any] = trace.to_json(model)


@pytest.fixture(scope="module")
def runs() -> Runs:
    return Runs()


def _count(results: list[EngineResult], verdicts: tuple[Verdict, ...]) -> int:
    return sum(1 for r in results for p in r.properties if p.verdict in verdicts)


def test_fixture_covers_every_verdict(runs: Runs) -> None:
    seen = {p.verdict for r in runs.results for p in r.properties}
    assert {Verdict.VIOLATED, Verdict.HOLDS, Verdict.PERMITTED, Verdict.UNTESTED, Verdict.REACHED} <= seen


def test_parse_action_and_lanes(runs: Runs) -> None:
    kind, args = parse_action("Deliver(message=p0->b0#1:Produce(partition=0, pid=0, epoch=0, seq=0, [p0.r0]))")
    assert kind == "Deliver"
    assert args == {"message": "p0->b0#1:Produce(partition=0, pid=0, epoch=0, seq=0, [p0.r0])"}
    assert parse_action("RestartLeader()") == ("RestartLeader", {})

    view = trace_view(runs.trace_json)
    assert view.lanes == ("p0", "b0")
    by_kind = {s.kind: s for s in view.steps}
    assert by_kind["SendProduce"].src == "p0" and by_kind["SendProduce"].dst is None
    timeout = by_kind["RequestTimeout"]
    assert timeout.fault and not timeout.delivery and (timeout.src, timeout.dst) == ("p0", None)
    delivers = [s for s in view.steps if s.kind == "Deliver"]
    assert all(s.delivery for s in delivers)
    assert {(s.src, s.dst) for s in delivers} == {("p0", "b0"), ("b0", "p0")}
    assert any(s.response and "OUT_OF_ORDER_SEQUENCE_NUMBER" in s.label for s in delivers)


def test_lanes_for_actions_of_other_components() -> None:
    steps = [
        {"action": "RestartLeader()", "events": ["fault:leader_restart"]},
        {"action": "EndTxn(producer=1, commit=True)", "events": ["txn:Ongoing->PrepareCommit"]},
        {"action": "WriteTxnMarkers(partition=0)", "events": []},
        {"action": "Poll(consumer=0)", "events": []},
        {"action": "Rebalance(worker=2)", "events": []},
        {"action": "Deliver(message=tc->b0#0:WriteTxnMarkersRequest(pid=1))", "events": []},
    ]
    view = trace_view({"steps": steps, "invariant": "x"})
    assert [s.src for s in view.steps] == ["b0", "p1", "tc", "c0", "w2", "tc"]
    assert view.steps[0].fault and not view.steps[1].fault
    assert view.lanes == ("p1", "b0", "tc", "c0", "w2")


def test_mermaid_has_one_arrow_per_delivery(runs: Runs) -> None:
    text = sequence_diagram(runs.trace_json)
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    delivers = sum(1 for s in runs.trace_json["steps"] if s["action"].startswith("Deliver("))
    arrows = [ln for ln in lines if re.match(r"^\s+\w+-{1,2}>>\w+: ", ln)]
    assert delivers > 0 and len(arrows) == delivers
    assert sum(1 for ln in arrows if "-->>" in ln) == sum(
        1 for s in runs.trace_json["steps"] if s["action"].startswith("Deliver(message=b0->p0")
    )
    assert "    participant p0 as producer p0" in lines and "    participant b0 as broker b0" in lines
    fault = next(i for i, s in enumerate(runs.trace_json["steps"], 1) if s["action"].startswith("RequestTimeout"))
    assert any(ln.strip().startswith(f"Note over p0: ⚡ {fault}. RequestTimeout") for ln in lines)
    assert (
        lines[-1].strip()
        == "Note over p0,b0: ✗ no_duplicate_append violated: record p0.r1 appended twice to partition 0"
    )
    assert "#1:" not in text and ";" not in text  # Mermaid statement/entity characters never leak


def test_plain_text_is_readable_counterexample(runs: Runs) -> None:
    text = plain_text(runs.trace_json, path="traces/x.json")
    assert text.startswith("keos counterexample: no_duplicate_append violated\n")
    assert "small_duplicate_window" in text and "record p0.r1 appended twice to partition 0" in text
    assert "jepsen       :duplicate" in text
    assert "keos replay traces/x.json" in text
    assert "⚡ RequestTimeout(producer=0)" in text
    numbered = [ln for ln in text.splitlines() if re.match(r"^\s*\d+\s{2}", ln)]
    assert len(numbered) == len(runs.trace_json["steps"]) == len(runs.trace.actions)
    dup_lines = [ln for ln in text.splitlines() if ln.endswith("<-- duplicate")]
    assert len(dup_lines) == 1 and "p0.r1 (pid=0" in dup_lines[0]
    ascii_text = plain_text(runs.trace_json, ascii=True)
    assert ascii_text.isascii() and "o----->" in ascii_text and "!! RequestTimeout(producer=0)" in ascii_text
    # the renderer reads only steps/final_state: the model-free dict gives the same text
    assert plain_text(trace_as_dict(runs.trace)) == plain_text(runs.trace_json)


def test_render_trace_terminal(runs: Runs) -> None:
    console = Console(record=True, width=120)
    render_trace(console, runs.trace_json)
    out = console.export_text()
    assert "counterexample: no_duplicate_append" in out
    assert "explanation  record p0.r1 appended twice to partition 0" in out
    assert "●─────▶" in out and "◀╌╌╌╌╌●" in out
    assert "error:OUT_OF_ORDER_SEQUENCE_NUMBER" in out
    assert "◀ duplicate" in out


def test_terminal_summary_words(runs: Runs) -> None:
    console = Console(record=True, width=120)
    render_summary(console, runs.results)
    out = console.export_text()
    for word in (
        "✗ violated no_duplicate_append",
        "✓ holds",
        "~ permitted no_acked_loss",
        "? untested per_partition_order",
    ):
        assert word in out
    assert "partner never reached: concurrent_in_flight" in out
    assert "states/s" in out and f"depth {runs.mutant.stats['max_depth']}" in out and "exhaustive" in out
    n = {v: _count(runs.results, (v,)) for v in Verdict}
    last = out.strip().splitlines()[-1]
    assert last.startswith(
        f"FAIL  3 runs: {n[Verdict.HOLDS]} holds, {n[Verdict.VIOLATED]} violated, {n[Verdict.PERMITTED]} permitted, "
        f"{n[Verdict.UNTESTED]} untested; sometimes {n[Verdict.REACHED]}/{n[Verdict.REACHED] + n[Verdict.UNREACHED]}"
    )

    clean = Console(record=True, width=120)
    render_summary(clean, [runs.results[1]])
    held = _count([runs.results[1]], (Verdict.HOLDS,))
    assert held > 0
    assert clean.export_text().strip().splitlines()[-1].startswith(f"PASS  1 run: {held} holds, 0 violated")


def test_summary_lists_replay_commands(runs: Runs) -> None:
    r = runs.mutant
    props = [replace(p, trace_path=Path("out/dup.trace.json")) if p.trace else p for p in r.properties]
    console = Console(record=True, width=120)
    render_summary(console, [replace(r, properties=props)])
    assert "✗ no_duplicate_append  keos replay out/dup.trace.json" in console.export_text()


def test_untested_is_styled_unlike_holds(runs: Runs) -> None:
    console = Console(record=True, width=120, force_terminal=True, color_system="truecolor")
    render_summary(console, runs.results)
    styled = console.export_text(styles=True)
    holds = re.search(r"(\x1b\[[0-9;]*m)✓ holds", styled)
    untested = re.search(r"(\x1b\[[0-9;]*m)\? untested", styled)
    assert holds and untested and holds.group(1) != untested.group(1)


def test_summary_shows_other_engines_stats(runs: Runs) -> None:
    base = runs.results[1]
    other = EngineResult(
        "hypothesis", base.scenario, base.variant, base.properties, {"examples": 1500, "elapsed_s": 75.2}
    )
    other.seed = 42
    other.complete = False
    console = Console(record=True, width=120)
    render_summary(console, [other], title="nightly")
    out = console.export_text()
    assert "nightly" in out and "hypothesis" in out
    assert "examples 1,500" in out and "1m15s" in out and "seed 42" in out and "bounded" in out
    assert "✓ holds no_duplicate_append (bounded)" in out


def test_progress_columns_show_explore_counters() -> None:
    console = Console(record=True, width=120, force_terminal=True)
    with make_progress(console) as progress:
        update = explore_progress(progress, "explore idempotence_retry")
        update(12345, 40000, 17)
        task = progress.tasks[0]
        assert (task.fields["states"], task.fields["transitions"], task.fields["depth"]) == (12345, 40000, 17)
        assert task.fields["rate"] > 0
        column = progress.columns[2]
        assert isinstance(column, ProgressColumn)
        line = column.render(task)
        assert isinstance(line, Text)
        assert "12,345 states · 40,000 transitions · depth 17" in line.plain and "states/s" in line.plain


def test_mutants_and_coverage(runs: Runs) -> None:
    expected = ("no_duplicate_append", "produce_answer_per_kafka")
    caught = MutantRow.from_results("small_duplicate_window", runs.results, expected, "KAFKA-5494")
    # the shortest violation: the leader answers a retry OUT_OF_ORDER where Kafka's five-batch cache says duplicate
    first = next(p.trace for p in runs.mutant.properties if p.name == "produce_answer_per_kafka")
    assert first is not None and len(first.actions) < len(runs.trace.actions)
    assert (caught.caught, caught.invariant, caught.scenario, caught.trace_length) == (
        True,
        "produce_answer_per_kafka",
        "idempotence_retry",
        len(first.actions),
    )
    escaped = MutantRow.from_results("kafka", runs.results[1:2], ("no_duplicate_append",))
    assert not escaped.caught
    console = Console(record=True, width=120)
    rows: list[Any] = [
        caught,
        {"variant": "no_idempotence", "caught": False, "expected": ["no_duplicate_append"], "unknown_key": 1},
        {"variant": "broker_skips_epoch_check", "caught": False, "covered": False, "trace": None},
    ]
    render_mutants(console, rows)
    out = console.export_text()
    assert "✓ caught" in out and "✗ escaped" in out and "– uncovered" in out and "KAFKA-5494" in out
    assert (
        "mutation score 1/2; escaped (no invariant caught them): no_idempotence; "
        "uncovered (not exercised by the engine): broker_skips_epoch_check"
    ) in " ".join(out.split())

    console = Console(record=True, width=120)
    render_coverage(console, runs.mutant.coverage, expected=["error:DUPLICATE_SEQUENCE_NUMBER"])
    out = console.export_text()
    hits = runs.mutant.coverage["error:OUT_OF_ORDER_SEQUENCE_NUMBER"]
    assert re.search(r"error\s+\S+\s+[\d,]+\s", out)  # the group label heads its first event
    assert re.search(rf"OUT_OF_ORDER_SEQUENCE_NUMBER\s+{hits:,}\s", out)
    assert re.search(r"\sfault\s+\w+\s+[\d,]+\s", out) and re.search(r"\sprotocol\s+\w+", out)
    assert "never observed: error:DUPLICATE_SEQUENCE_NUMBER" in out


def test_a_mutant_out_of_time_is_not_called_escaped() -> None:
    """A bounded engine that ran out of its budget says so, and how deep it searched; it did not 'escape'."""
    console = Console(record=True, width=140)
    render_mutants(console, [
        {"variant": "no_kip_360", "caught": False, "expected": ["atomic_commit"], "timed_out": True,
         "depth_reached": 14, "engine": "bmc"},
        {"variant": "no_idempotence", "caught": False, "expected": ["no_duplicate_append"], "engine": "bmc"},
    ])
    out = " ".join(console.export_text().split())
    assert "⧗ out of time" in out and "no violation up to depth 14" in out
    assert "mutation score 0/2; escaped (no invariant caught them): no_idempotence (bmc); " \
           "not caught within the time budget (--time-budget): no_kip_360 (bmc)" in out


def test_junit_counts_and_schema(runs: Runs, tmp_path: Path) -> None:
    path = write_junit(tmp_path / "junit.xml", runs.results)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"explore.{n}.{v}" for n, v in RUNS]
    failures = root.findall(".//testcase/failure")
    skipped = root.findall(".//testcase/skipped")
    # the mutant's run: no_duplicate_append (the re-stamped p0.r1 is written again) and produce_answer_per_kafka
    # (a retry of a batch Kafka still caches answered OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert int(root.get("failures", "-1")) == len(failures) == _count(runs.results, (Verdict.VIOLATED,)) == 2
    assert root.get("skipped") is None  # the strict Jenkins xunit schema has no skipped on <testsuites>
    suite_skipped = sum(int(s.get("skipped", "0")) for s in suites)
    assert suite_skipped == len(skipped) == _count(runs.results, (Verdict.UNTESTED, Verdict.UNREACHED))
    assert all(float(c.get("time", "x")) >= 0 for c in root.iter("testcase"))
    assert int(root.get("tests", "-1")) == sum(len(r.properties) for r in runs.results)
    for suite in suites:
        for attr in ("tests", "failures", "errors", "skipped", "time"):
            assert suite.get(attr) is not None
        assert int(suite.get("tests", "0")) == len(suite.findall("testcase"))
        float(suite.get("time", "x"))
    failure = failures[0]
    assert failure.get("message") == "no_duplicate_append violated: record p0.r1 appended twice to partition 0"
    assert "RequestTimeout(producer=0)" in (failure.text or "")
    untested = [s.get("message", "") for s in skipped if s.get("message", "").startswith("untested")]
    assert "untested: partner never reached: concurrent_in_flight" in untested
    permitted = [c for c in root.iter("testcase") if c.find("system-out") is not None]
    assert {c.get("name") for c in permitted} == {"no_duplicate_append", "no_acked_loss"}
    assert all(c.find("failure") is None and c.find("skipped") is None for c in permitted)


def test_html_report(runs: Runs, tmp_path: Path) -> None:
    extra = {"traces/dup.json": runs.trace_json}  # already shown from the result: must not repeat
    path = write_html(tmp_path / "r" / "report.html", runs.results, traces=extra)
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "no_duplicate_append" in text
    assert "record p0.r1 appended twice to partition 0" in text
    assert text.count("<svg") == 4  # one per counterexample: the mutant's two, and acks=1's two permitted ones
    assert "sequenceDiagram" in text and "p0-&gt;&gt;b0" in text  # Mermaid text, escaped
    assert "untested" in text and "partner never reached: concurrent_in_flight" in text.replace("<wbr>", "")
    assert "duplicate_window" in text and "records_per_producer" in text  # model flags and topology
    assert "OUT_OF_ORDER_SEQUENCE_NUMBER" in text  # coverage
    assert "<script" not in text and "<link" not in text and "src=" not in text  # self-contained
    for svg in re.findall(r"<svg.*?</svg>", text, re.S):
        ET.fromstring(svg)  # well-formed


def test_html_escapes_untrusted_text(runs: Runs, tmp_path: Path) -> None:
    evil = dict(runs.trace_json)
    evil.update(engine="<script>alert(1)</script>", explanation='a < b & "c"', invariant="no_acked_loss")
    path = write_html(tmp_path / "evil.html", [], traces={"<b>x</b>.json": evil})
    text = path.read_text(encoding="utf-8")
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "a &lt; b &amp; &quot;c&quot;" in text and "&lt;b&gt;x&lt;/b&gt;.json" in text


def test_jepsen_names() -> None:
    assert jepsen_anomaly("no_duplicate_append") is not None
    assert jepsen_anomaly("no_duplicate_append")[0] == ":duplicate"  # type: ignore[index]
    assert jepsen_anomaly("no_acked_loss")[0] == ":lost-write"  # type: ignore[index]
    assert jepsen_anomaly("sequence_table_consistent") is None


def test_example_counterexample_doc_is_current(runs: Runs) -> None:
    doc = Path(__file__).resolve().parent.parent / "docs" / "example-counterexample.md"
    assert plain_text(runs.trace_json) in doc.read_text(encoding="utf-8")


def test_stats_show_a_proof_verdict_and_its_subject() -> None:
    lines = format_stats({"depth_reached": 14, "k_induction": {
        "property": "Complete* only through its Prepare* at the same epoch; epochs never decrease",
        "result": "proved for all depths"}, "flags": {"x": 1}})
    assert "k induction: proved for all depths (Complete* only through its Prepare* at the same epoch; epoc…)" \
        in lines
    assert not any("flags" in line for line in lines)  # other mappings stay out of the summary
