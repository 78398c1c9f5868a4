"""``keos check --jobs N``: runs side by side in a pool of forked processes (the gate's two checks use 2).

The promise: the report and exit code are those of ``--jobs 1`` apart from timing figures; a worker that dies is
exit 3 (keos at fault), never a verdict; Ctrl-C is partial (exit 4) with the finished runs kept.  Nothing here
is timed."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from keos.checker import engines
from keos.checker.cli.main import main

#: Cheap default scenarios (a few CPU-s in all); under no_idempotence they violate (traces are written).
SCENARIOS = ("idempotence_retry", "idempotence_not_leader", "idempotence_expired_not_leader")


def _argv(out: Path, jobs: int, *extra: str) -> list[str]:
    argv = ["check", "--stop-on-first", "--out", str(out), "--jobs", str(jobs), *extra]
    for name in SCENARIOS:
        argv += ["--scenario", name]
    return argv


def _summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    data.pop("timing")
    return data


def _traces(out: Path) -> dict[str, str]:
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in sorted(out.glob("**/*.trace.json"))}


@pytest.mark.parametrize("variant", [None, "no_idempotence"])
def test_two_jobs_report_what_one_job_reports(
    variant: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = ["--variant", variant] if variant else ["--strict"]
    codes, summaries, traces = [], [], []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        codes.append(main(_argv(out, jobs, *extra, "--junit", str(out / "junit.xml"))))
        capsys.readouterr()
        summaries.append(_summary(out))
        traces.append(_traces(out))
    assert codes[0] == codes[1] == (1 if variant else 0)
    assert summaries[0] == summaries[1]  # every run, in the same order, timing figures apart
    assert [r["scenario"] for r in summaries[1]["runs"]] == list(SCENARIOS)
    assert traces[0] == traces[1] and traces[1]  # the same trace files (permitted findings' too), byte for byte


def _real_explore() -> Any:
    return engines.ENGINES["explore"][0]


def test_a_worker_that_dies_is_exit_3_never_a_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = _real_explore()

    def dies_on_the_second(scenario: Any, variant: str, options: Any) -> Any:
        if scenario.name == SCENARIOS[1]:
            os.kill(os.getpid(), signal.SIGKILL)  # the worker is killed (out of memory at the kernel's hands)
        return real(scenario, variant, options)

    monkeypatch.setitem(engines.ENGINES, "explore", (dies_on_the_second, "test"))  # forked workers inherit it
    code = main(_argv(tmp_path, 2, "--strict"))
    err = capsys.readouterr().err
    assert code == 3, err
    assert "BrokenProcessPool" in err and "not a verdict" in err
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert summary["partial"] and "keos crashed" in summary["stopped"]
    assert f"explore/{SCENARIOS[1]}/kafka" in summary["not_run"]


def test_ctrl_c_is_partial_with_the_finished_runs_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = _real_explore()
    summary_path = tmp_path / "summary.json"

    def interrupts_after_the_first(scenario: Any, variant: str, options: Any) -> Any:
        if scenario.name != SCENARIOS[1]:
            return real(scenario, variant, options)
        # Ctrl-C reaches the command once the first run is reported (deterministic: its summary is written),
        # while this run is still going; the pool must end it, not wait for it
        for _ in range(6000):
            if summary_path.is_file() and SCENARIOS[0] in summary_path.read_text(encoding="utf-8"):
                break
            time.sleep(0.01)
        os.kill(os.getppid(), signal.SIGINT)
        time.sleep(600)
        raise AssertionError("not stopped")

    monkeypatch.setitem(engines.ENGINES, "explore", (interrupts_after_the_first, "test"))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # a terminal's Ctrl-C, whatever the shell
    try:
        code = main(_argv(tmp_path, 2, "--strict"))
    finally:
        signal.signal(signal.SIGINT, previous)
    err = capsys.readouterr().err
    assert code == 4, err
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    assert summary["partial"] and summary["stopped"] == "interrupted"
    kept = [r["scenario"] for r in summary["runs"]]
    assert kept[0] == SCENARIOS[0] and SCENARIOS[1] not in kept
    assert f"explore/{SCENARIOS[1]}/kafka" in summary["not_run"]
    assert len(kept) + len(summary["not_run"]) == len(SCENARIOS)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--jobs", "2", "--workers", "2"], "exclusive"),
        (["--jobs", "2", "--engine", "spark-bfs"], "Spark"),
        (["--jobs", "0"], "--jobs"),
    ],
)
def test_jobs_with_a_parallel_search_is_bad_input(
    argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "--scenario", "idempotence_retry", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("keos: error:") and needle in err
