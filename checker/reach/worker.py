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
* ``timeout`` -- the budget ran out first (``scenario`` names the search it ran out in, ``scenarios_run``
  the ones it got through: the CPU budget's soft limit raises :class:`CpuBudgetSpent` here, its hard
  limit five seconds later ends the process);
* ``killed`` with kind ``contract`` (invariant ``model_contract``) -- the mutated model broke the
  contract of :class:`keos.model.interface.Model` that every engine relies on: ``actions()`` listed an
  action its ``step()`` then refused, a step or ``actions()`` raised on a state the search reached (its
  path is recorded), or ``init_states()``, an action's JSON round trip or a property raised.  The gate
  fails on it (``keos check`` stops the search and exits 3 with the path), and only the mutant differs
  from a model on which the gate passes, so the mutant is what the gate caught: decided, never a verdict
  on a Kafka property (the kind says which);
* ``killed`` with kind ``load`` (invariant ``model_loads``) -- the mutated module raised while it was
  imported, or the model rejected a scenario of the gate as bad input (``ModelError``): ``keos check``
  exits 2 before any search (pitest's ``NON_VIABLE``/``RUN_ERROR``, both "detected");
* ``crashed`` -- what is left: an engine disagreement that is not the model's own (a counterexample that
  does not replay), or an error outside the model: neither killed nor survived.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import json
import signal
import sys
import time
import traceback
from collections.abc import Iterator
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

    _PHASE[0] = "load"  # the imports below import keos.model: the mutated module may be among them
    from keos.checker.engines import ENGINES, EngineOptions
    from keos.checker.explore import engine as _explore  # noqa: F401  (registers the explore engine; no z3 import)
    from keos.checker.reach.gate_checks import VARIANT_PREFIX, is_gate_check, run_gate_check, run_weakened_variant
    from keos.checker.results import Verdict, partial_reason
    from keos.scenarios import resolve_scenario

    run, _ = ENGINES["explore"]
    _loading(job)
    _PHASE[0] = "search"
    budget = float(job.get("budget_s") or 0.0)
    deadline = time.monotonic() + budget if budget else None
    options = EngineOptions(stop_on_first=True, out_dir=Path(job.get("out", "keos-out")))
    ran = _RAN  # read by main() when the CPU budget runs out mid-search
    ran.clear()
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
        with _phase("load"):
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
        if result.stats.get("engine_disagreement"):
            detail = str(result.stats["engine_disagreement"][0])[:300]
            trace = result.stats.get("disagreement_trace")
            if trace is not None:  # the model contradicted its interface on a path the search took
                return {"status": "killed", "kind": "contract", "scenario": scenario.name,
                        "invariant": CONTRACT, "steps": len(trace.get("actions", ())), "scenarios_run": ran,
                        "detail": detail}
            return {"status": "crashed", "scenario": scenario.name, "scenarios_run": ran, "detail": detail}
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


#: The built-in property a mutant breaks when the model contradicts its own interface (kind ``contract``).
CONTRACT = "model_contract"
#: The built-in property a mutant breaks when the model no longer loads or rejects a gate scenario (kind ``load``).
LOADS = "model_loads"

#: What the worker is doing: ``install`` (compiling the mutant: an error there is keos's), ``load``
#: (importing the model, reading a scenario) or ``search``.
_PHASE = ["install"]


@contextlib.contextmanager
def _phase(name: str) -> Iterator[None]:
    """Mark the worker's phase while the body runs (how an escaping exception is classified)."""
    before = _PHASE[0]
    _PHASE[0] = name
    yield  # an exception leaves the phase set: it says where the exception came from
    _PHASE[0] = before


def _loading(job: dict[str, Any]) -> None:
    """Import the (mutated) module first, so an error of its module-level code is a load error."""
    import importlib

    if job.get("module"):
        with _phase("load"):
            importlib.import_module(job["module"])


def classify_exception(exc: BaseException) -> dict[str, Any]:
    """The row of a mutant whose worker raised ``exc`` out of :func:`evaluate` (see the module docstring)."""
    from keos.model.interface import ModelError

    tb = traceback.extract_tb(exc.__traceback__)
    where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb)), "")
    detail = f"{type(exc).__name__}: {str(exc)[:300]} at {where}"
    if _PHASE[0] == "install" or isinstance(exc, MemoryError) or not isinstance(exc, Exception):
        return {"status": "crashed", "detail": detail}
    if _PHASE[0] == "load" or isinstance(exc, ModelError):
        return {"status": "killed", "kind": "load", "invariant": LOADS, "steps": None, "detail": detail}
    return {"status": "killed", "kind": "contract", "invariant": CONTRACT, "steps": None, "detail": detail}


def limit_cpu(seconds: float) -> None:
    """Cap this process's CPU time (``RLIMIT_CPU``): past it the kernel ends it with SIGXCPU.

    A budget in CPU seconds means the same on an idle and on a shared, loaded machine (where a
    wall-clock budget turns slow mutants into timeouts); the caller reports such an end as ``timeout``.
    """
    import resource

    soft = max(1, int(seconds + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))


class CpuBudgetSpent(BaseException):
    """Raised by SIGXCPU (the CPU budget's soft limit): a ``BaseException`` so no handler of the model's
    or the engine's (``except Exception``) takes it for the mutant's own error."""


#: Set once main() caught :class:`CpuBudgetSpent`: the SIGXCPU the kernel repeats every CPU second past the
#: soft limit then lets the row be written.  Until then each one raises again, so a raise that some cleanup
#: swallowed (an exception in a ``__del__`` or a weakref callback is only printed) is not the last.
_SPENT = [False]


def _on_sigxcpu(signum: int, frame: object) -> None:
    if not _SPENT[0]:
        raise CpuBudgetSpent


#: The searches ``evaluate`` started, in order (the last is the one running when the budget ran out).
_RAN: list[str] = []


def main() -> int:
    job = json.loads(sys.stdin.read())
    if job.get("cpu_budget_s"):
        signal.signal(signal.SIGXCPU, _on_sigxcpu)
        limit_cpu(float(job["cpu_budget_s"]))
    started, cpu = time.perf_counter(), time.process_time()
    try:
        install(job)
        row = evaluate(job)
    except KeyboardInterrupt:
        return 130
    except CpuBudgetSpent:
        _SPENT[0] = True
        where = _RAN[-1] if _RAN else None
        row = {"status": "timeout", "scenario": where, "scenarios_run": list(_RAN),
               "detail": f"CPU budget of {float(job['cpu_budget_s']):g} s ran out"
                         + (f" in {where}, search {len(_RAN)} of {len(job.get('scenarios', []))}" if where else "")}
    except BaseException as exc:  # the mutant raised: at import, loading a scenario, in init_states, ...
        row = classify_exception(exc)
    row["seconds"] = round(time.perf_counter() - started, 3)
    row["cpu_seconds"] = round(time.process_time() - cpu, 3)
    sys.stdout.write(MARKER + json.dumps(row) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
