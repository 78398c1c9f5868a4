"""The process ``keos coverage`` measures: coverage.py started before ``keos.model`` is imported.

Run as ``python -m keos.checker.reach.cover_worker JOB.json``.  Importing this module imports only
``keos``, ``keos.checker`` and ``keos.checker.reach`` (all empty of model code), so module-level
lines of ``model/`` (tables, class bodies, ``def`` lines) are measured under the context ``import``.
Each scenario's explicit search then runs under the dynamic context named after the scenario
(``Coverage.switch_context``); a gate check that is not a scenario (``@assignors``,
:mod:`keos.checker.reach.gate_checks`) runs under a context of its own name.  After each
scenario the coverage data and a status file are saved, so a run stopped by Ctrl-C, SIGTERM or
its budget keeps what it measured.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

IMPORT_CONTEXT = "import"


def _write(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main(job_path: str) -> int:
    import coverage

    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    status_path = Path(job["status_file"])
    cov = coverage.Coverage(data_file=job["data_file"], branch=True, source=job["source"], config_file=False)
    for regex in job["exclude"]:
        cov.exclude(regex, which="exclude")
    for regex in job["partial"]:
        cov.exclude(regex, which="partial")

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)
    status: dict[str, Any] = {"scenarios": {}, "stopped": None, "complete": False}
    deadline = time.monotonic() + job["total_budget_s"] if job["total_budget_s"] else None
    cov.start()
    cov.switch_context(IMPORT_CONTEXT)
    try:
        from dataclasses import replace

        from keos.checker import api  # noqa: F401  (registers the engines)
        from keos.checker.engines import ENGINES, EngineOptions
        from keos.checker.reach.gate_checks import is_gate_check, run_gate_check
        from keos.checker.results import Verdict, partial_reason
        from keos.scenarios import resolve_scenario

        run, _ = ENGINES["explore"]
        base = EngineOptions(out_dir=Path(job["out"]), time_budget_s=job["time_budget_s"])
        for ref in job["scenarios"]:
            if is_gate_check(ref):
                if deadline is not None and deadline - time.monotonic() <= 0:
                    status["stopped"] = "time budget (--total-budget) ran out"
                    break
                cov.switch_context(ref)
                started, cpu = time.perf_counter(), time.process_time()
                check = run_gate_check(ref)
                cov.switch_context(IMPORT_CONTEXT)
                status["scenarios"][ref] = {
                    "ref": ref, "variant": None, "gate_check": True,
                    "seconds": round(time.perf_counter() - started, 3),
                    "cpu_seconds": round(time.process_time() - cpu, 3),
                    "states": None, "partial": None, "violated": list(check.failed),
                    "untested": [], "unreached": [],
                }
                cov.save()
                _write(status_path, status)
                continue
            scenario = resolve_scenario(ref)
            variant = job["variant"] or scenario.variant
            budget = job["time_budget_s"]
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    status["stopped"] = "time budget (--total-budget) ran out"
                    break
                budget = min(budget, left) if budget else left
            cov.switch_context(scenario.name)
            started = time.perf_counter()
            cpu = time.process_time()
            result = run(scenario, variant, replace(base, time_budget_s=budget))
            cov.switch_context(IMPORT_CONTEXT)
            status["scenarios"][scenario.name] = {
                "ref": ref,
                "variant": variant,
                "seconds": round(time.perf_counter() - started, 3),
                "cpu_seconds": round(time.process_time() - cpu, 3),
                "states": result.stats.get("distinct_states"),
                "partial": partial_reason(result),
                "violated": sorted(p.name for p in result.properties if p.verdict is Verdict.VIOLATED),
                "untested": sorted(p.name for p in result.properties if p.verdict is Verdict.UNTESTED),
                "unreached": sorted(p.name for p in result.properties if p.verdict is Verdict.UNREACHED),
            }
            cov.save()
            _write(status_path, status)
        else:
            status["complete"] = True
    except KeyboardInterrupt:
        status["stopped"] = "interrupted"
    finally:
        cov.stop()
        cov.save()
        _write(status_path, status)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
