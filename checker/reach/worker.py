"""One mutant's process: serve the mutated module through an import hook, run the gate's searches on it.

Run as ``python -m keos.checker.reach.worker`` with a JSON job on stdin::

    {"module": "keos.model.log.partition", "file": "/.../model/log/partition.py", "mutant": "3fa2c41b09de",
     "scenarios": ["idempotence_retry", ...], "variant": null, "budget_s": 60,
     "untested_before": {"idempotence_retry": []}}

Before anything of ``keos.model`` is imported, a :class:`MutantFinder` is put first on
``sys.meta_path``; it answers for the one module with the mutated syntax tree compiled against the
real file name (line numbers unchanged), so ``from keos.model.log.partition import append`` anywhere
sees the mutant.  Then the explicit search (``explore``, stop at the first violation) runs on each
scenario in the given order (the caller sorts them cheapest first) within what is left of the
budget.  The result is one JSON line on stdout, prefixed ``KEOS-MUTANT-RESULT``:

* ``killed`` -- a scenario's search found a violation (``kind`` ``gate_check``: a gate check that is
  not a scenario, ``@assignors``, failed as ``keos assignors`` fails the gate; ``weakened_variant``: a
  weakened variant, ``variant:<name>``, was no longer caught on its scenarios, as ``keos mutants`` fails the
  gate); the counterexample was replayed on the
  mutated model by the search itself (``checker/explore``: every counterexample is replayed before it
  is reported); ``invariant`` and ``steps`` say which and how long.  ``kind`` is ``violation``, or
  ``untested`` when no invariant failed but one the unmutated model tested became untested (a
  sometimes-partner never fired: ``keos check --strict``, the gate, fails on that too);
* ``survived`` -- every scenario's search completed with every invariant holding;
* ``timeout`` -- the budget ran out first;
* ``crashed`` -- the mutant raised (an exception in a step, an import error) or the engine and the
  mutated model disagree: neither killed nor survived.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

MARKER = "KEOS-MUTANT-RESULT "


class MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module's mutated code object; every other import goes the usual way."""

    def __init__(self, name: str, file: str, code: CodeType) -> None:
        self.name, self.file, self.code = name, file, code

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        package = Path(self.file).name == "__init__.py"
        return importlib.util.spec_from_file_location(
            fullname, self.file, loader=self,
            submodule_search_locations=[str(Path(self.file).parent)] if package else None,
        )

    def create_module(self, spec: Any) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        exec(self.code, module.__dict__)


def mutated_code(file: str, module: str, mutant: str) -> CodeType:
    """The module's code with ``mutant`` applied (compiled from the edited syntax tree)."""
    import keos  # the package's __init__ imports nothing of the model
    from keos.checker.reach.mutators import apply_mutant, error_classes

    classes = error_classes(Path(keos.__file__).parent / "model" / "protocol" / "errors.py")
    tree = apply_mutant(Path(file).read_text(encoding="utf-8"), module, mutant, classes)
    return compile(tree, file, "exec", dont_inherit=True)


def install(job: dict[str, Any]) -> None:
    """Put the mutant's finder first (no-op for a baseline job, ``mutant`` null)."""
    if job.get("mutant") is None:
        return
    name = job["module"]
    if name in sys.modules:
        raise RuntimeError(f"{name} was imported before its mutant could be installed")
    sys.meta_path.insert(0, MutantFinder(name, job["file"], mutated_code(job["file"], name, job["mutant"])))


def evaluate(job: dict[str, Any]) -> dict[str, Any]:
    """Run the job's scenarios on the mutant; the result row (status, scenario, invariant, steps)."""
    from dataclasses import replace

    from keos.checker.engines import ENGINES, EngineOptions
    from keos.checker.explore import engine as _explore  # noqa: F401  (registers the explore engine; no z3 import)
    from keos.checker.reach.gate_checks import VARIANT_PREFIX, is_gate_check, run_gate_check, run_weakened_variant
    from keos.checker.results import Verdict, partial_reason
    from keos.scenarios import resolve_scenario

    run, _ = ENGINES["explore"]
    budget = float(job.get("budget_s") or 0.0)
    deadline = time.monotonic() + budget if budget else None
    options = EngineOptions(stop_on_first=True, out_dir=Path(job.get("out", "keos-out")))
    ran: list[str] = []
    for ref in job["scenarios"]:
        if ref.startswith(VARIANT_PREFIX):  # keos mutants, as the gate runs it, for one weakened variant
            if deadline is not None and deadline - time.monotonic() <= 0:
                return {"status": "timeout", "scenarios_run": ran, "detail": "time budget ran out"}
            ran.append(ref)
            check = run_weakened_variant(ref)
            if check.failed:
                return {"status": "killed", "kind": "weakened_variant", "scenario": ref,
                        "invariant": ref.removeprefix(VARIANT_PREFIX), "steps": None, "scenarios_run": ran,
                        "detail": f"keos mutants fails: {check.detail}"}
            continue
        if is_gate_check(ref):  # keos assignors, as the gate runs it (checker/reach/gate_checks.py)
            ran.append(ref)
            check = run_gate_check(ref)
            if check.crashed is not None:
                return {"status": "crashed", "scenario": ref, "scenarios_run": ran, "detail": check.crashed[:300]}
            if check.failed:
                return {"status": "killed", "kind": "gate_check", "scenario": ref, "invariant": check.failed[0],
                        "steps": None, "scenarios_run": ran, "detail": check.detail}
            continue
        scenario = resolve_scenario(ref)
        left = 0.0
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                return {"status": "timeout", "scenarios_run": ran, "detail": "time budget ran out"}
        ran.append(scenario.name)
        variant = job.get("variant") or scenario.variant
        result = run(scenario, variant, replace(options, time_budget_s=left))
        if not any(p.verdict is Verdict.VIOLATED for p in result.properties) and any(
                p.verdict is Verdict.PERMITTED for p in result.properties) and partial_reason(result) is None:
            # The search stops at its first counterexample, permitted ones included (the scenario allows
            # them): that early stop judges nothing else, so search this scenario again to its end.
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return {"status": "timeout", "scenarios_run": ran, "detail": "time budget ran out"}
            result = run(scenario, variant, replace(options, stop_on_first=False, time_budget_s=left))
        violated = [p for p in result.properties if p.verdict is Verdict.VIOLATED]
        if violated:
            best = min(violated, key=lambda p: len(p.trace.actions) if p.trace else 0)
            return {"status": "killed", "kind": "violation", "scenario": scenario.name, "invariant": best.name,
                    "steps": len(best.trace.actions) if best.trace else None, "scenarios_run": ran,
                    "detail": best.detail}
        if result.stats.get("engine_disagreement"):  # a step raised, or refused an enabled action
            return {"status": "crashed", "scenario": scenario.name, "scenarios_run": ran,
                    "detail": str(result.stats["engine_disagreement"][0])[:300]}
        if partial_reason(result) is not None:
            return {"status": "timeout", "scenario": scenario.name, "scenarios_run": ran,
                    "detail": partial_reason(result)}
        before = set(job.get("untested_before", {}).get(scenario.name, []))
        newly = sorted(p.name for p in result.properties if p.verdict is Verdict.UNTESTED and p.name not in before
                       and p.expectation.value != "sometimes")
        if newly and scenario.name in job.get("untested_before", {}):
            return {"status": "killed", "kind": "untested", "scenario": scenario.name, "invariant": newly[0],
                    "steps": None, "scenarios_run": ran, "detail": f"became untested: {', '.join(newly)}"}
    return {"status": "survived", "scenarios_run": ran}


def limit_cpu(seconds: float) -> None:
    """Cap this process's CPU time (``RLIMIT_CPU``): past it the kernel ends it with SIGXCPU.

    A budget in CPU seconds means the same on an idle and on a shared, loaded machine (where a
    wall-clock budget turns slow mutants into timeouts); the caller reports such an end as ``timeout``.
    """
    import resource

    soft = max(1, int(seconds + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))


def main() -> int:
    job = json.loads(sys.stdin.read())
    if job.get("cpu_budget_s"):
        limit_cpu(float(job["cpu_budget_s"]))
    started, cpu = time.perf_counter(), time.process_time()
    try:
        install(job)
        row = evaluate(job)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # the mutant crashed: an exception in a step, an import error, ...
        tb = traceback.extract_tb(exc.__traceback__)
        where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb)), "")
        row = {"status": "crashed", "detail": f"{type(exc).__name__}: {str(exc)[:300]} at {where}"}
    row["seconds"] = round(time.perf_counter() - started, 3)
    row["cpu_seconds"] = round(time.process_time() - cpu, 3)
    sys.stdout.write(MARKER + json.dumps(row) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
