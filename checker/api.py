"""The Python API: what the ``keos`` command does, as functions that return results.

Use it from a test suite to gate a change on keos's verdicts::

    import keos

    report = keos.check(["idempotence_retry"], variant="small_duplicate_window")
    assert report.violated
    for prop in report.violations():
        print(prop.name, prop.trace_path)

Every function validates its input first and raises :class:`keos.model.interface.ModelError` (an
unknown scenario, variant or engine, a malformed scenario or trace file) before any work starts.
Results are the engines' own :class:`keos.checker.results.EngineResult` values, which the renderers
in :mod:`keos.reports` take; nothing here prints.  Exit-code semantics are given by
:attr:`CheckReport.exit_code`, so the CLI is a thin layer over this module:

* 0 (``EXIT_OK``) -- every invariant holds within what was searched;
* 1 (``EXIT_VIOLATION``) -- a violation, replayed on the model (or, with ``strict``, an untested
  invariant);
* 2 (``EXIT_BAD_INPUT``) -- bad input; raised here as :class:`~keos.model.interface.ModelError`;
* 3 (``EXIT_ENGINE_DISAGREEMENT``) -- keos is at fault: an engine and the model disagree (or, on the
  command line, keos crashed; the crash report names the file with the traceback);
* 4 (``EXIT_PARTIAL``) -- a time, memory or state budget ran out, or the run was interrupted: the
  results are partial and marked so (``summary.json`` has ``"partial": true``).

Budgets: ``time_budget_s`` (per run), ``max_states`` and ``max_memory_mb`` apply to every engine
that searches (explore, hypothesis; bmc honours the time budget).  Ctrl-C during :func:`check`
raises :class:`Interrupted` (a ``KeyboardInterrupt``) carrying the report of the finished runs,
after marking ``summary.json`` partial.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from keos.checker.engines import ENGINES, EngineOptions, run_weakened
from keos.checker.explore import engine as _explore_engine  # noqa: F401  (registers the explore engine)
from keos.checker.explore.search import ExploreOptions
from keos.checker.explore.search import explore as _explore
from keos.checker.results import (
    STOPPED_AT_FIRST,
    EngineResult,
    PropertyResult,
    Verdict,
    expect_findings,
    partial_reason,
    unjudged_after_first_violation,
)
from keos.checker.stateful import machine as _stateful  # noqa: F401  (registers the hypothesis engine)
from keos.checker.trace import KEOS_VERSION, Replay, load_trace
from keos.checker.trace import replay as _replay
from keos.model.interface import ModelError
from keos.model.variants import VARIANTS
from keos.scenarios import Scenario, build_model, builtin_scenarios, resolve_scenario

__all__ = [
    "DEFAULT_TIME_BUDGET_S",
    "EXIT_BAD_INPUT",
    "EXIT_ENGINE_DISAGREEMENT",
    "EXIT_OK",
    "EXIT_PARTIAL",
    "EXIT_VIOLATION",
    "CheckReport",
    "Interrupted",
    "MutantsInterrupted",
    "ReplayReport",
    "check",
    "explore",
    "list_scenarios",
    "load_scenario",
    "mutants",
    "replay",
    "write_summary",
    "write_traces",
]

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_ENGINE_DISAGREEMENT, EXIT_PARTIAL = 0, 1, 2, 3, 4

# Optional engines register themselves on import; a missing one is simply not offered.
for _module in ("keos.checker.bmc.engine", "keos.checker.explore.spark_bfs"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_module)

Progress = Callable[[str, dict[str, Any]], None]

#: Time budget per run when none is given: z3 BMC deepens until it runs out, so it needs one; the
#: explicit search and Hypothesis end by themselves within the scenario's bounds.
DEFAULT_TIME_BUDGET_S: dict[str, float] = {"bmc": 60.0}


# -- inputs --------------------------------------------------------------------------------------


def list_scenarios(*, default_only: bool = False) -> dict[str, Scenario]:
    """The built-in scenarios by name (only those in the default gate with ``default_only``)."""
    scenarios = builtin_scenarios()
    return {n: s for n, s in scenarios.items() if s.default or not default_only}


def load_scenario(ref: str | Path) -> Scenario:
    """A built-in scenario by name, or a user's TOML scenario file by path."""
    return resolve_scenario(str(ref))


def _scenarios(refs: Iterable[str | Path | Scenario] | None) -> list[Scenario]:
    if refs is None:
        defaults = list(list_scenarios(default_only=True).values())
        if not defaults:
            raise ModelError("no default scenarios found")
        return defaults
    out = [r if isinstance(r, Scenario) else load_scenario(r) for r in refs]
    if not out:
        raise ModelError("no scenarios given")
    return out


def _variant(name: str | None) -> str | None:
    if name is not None and name not in VARIANTS:
        raise ModelError(f"unknown variant {name!r} (known: {', '.join(sorted(VARIANTS))})")
    return name


def _engines(name: str) -> list[str]:
    if name == "all":  # the in-process engines: a Spark engine starts a session, name it to run it
        return [n for n in ENGINES if not n.startswith("spark")]
    if name not in ENGINES:
        raise ModelError(f"unknown engine {name!r} (known: {', '.join([*ENGINES, 'all'])})")
    return [name]


# -- outputs -------------------------------------------------------------------------------------


def write_traces(result: EngineResult, out: Path, scenario: Scenario) -> None:
    """Write each violation's trace under ``out/engine/scenario/variant/`` and record its path."""
    model = build_model(scenario, result.variant)
    for prop in result.violations():
        assert prop.trace is not None
        path = out / result.engine / result.scenario / result.variant / f"{prop.name}.trace.json"
        prop.trace_path = prop.trace.write(model, path)


def write_summary(
    out: Path,
    results: Sequence[EngineResult],
    command: str,
    stopped: str | None = None,
    complete: bool = True,
    not_run: Sequence[str] = (),
) -> Path:
    """Write ``out/summary.json`` with every run so far (called after each run, so none is lost).

    ``partial`` is true while runs are still to come (``complete=False``), when the command was
    stopped (``stopped`` says why: interrupted, out of memory) or when a run hit a budget.
    ``traces`` lists the trace files of these runs: the current ones (older files are removed by
    :func:`clear_stale_traces` when a command starts).  ``not_run`` lists the runs a stopped command
    never finished (``engine/scenario/variant``).
    """
    out.mkdir(parents=True, exist_ok=True)
    path = out / "summary.json"
    partial_runs = {f"{r.engine}/{r.scenario}/{r.variant}": why for r in results if (why := partial_reason(r))}
    runs: list[dict[str, Any]] = []
    timing: dict[str, Any] = {}
    for r in results:
        run = r.to_json()
        run["stats"], figures = _split_timing(run.get("stats", {}))
        if figures:
            timing[f"{r.engine}/{r.scenario}/{r.variant}"] = figures
        for prop in run.get("properties", []):
            if isinstance(prop, dict) and prop.get("trace"):
                prop["trace"] = _relative(prop["trace"], out)
        runs.append(run)
    data = {
        "keos_version": KEOS_VERSION,
        "command": command,
        "partial": bool(stopped) or not complete or bool(partial_runs),
        "stopped": stopped,
        "partial_runs": partial_runs,
        "not_run": list(not_run),
        "traces": [_relative(str(p.trace_path), out) for r in results for p in r.violations() if p.trace_path],
        "runs": runs,
        "timing": timing,
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


#: Statistics that measure the machine, not the model: moved to ``summary.json``'s ``timing`` block, so two
#: identical runs write byte-identical summaries apart from it.
_TIMING_SUFFIXES = ("elapsed_s", "_per_s", "rss_mb", "peak_mb", "memory_mb", "cpu_s")


def _split_timing(stats: Any) -> tuple[Any, dict[str, Any]]:
    """``stats`` without its wall-clock and memory figures (at any depth), and those figures apart."""
    if not isinstance(stats, dict):
        return stats, {}
    kept: dict[str, Any] = {}
    figures: dict[str, Any] = {}
    for key, value in stats.items():
        if isinstance(value, dict):
            kept[key], inner = _split_timing(value)
            if inner:
                figures[key] = inner
        elif isinstance(key, str) and key.endswith(_TIMING_SUFFIXES):
            figures[key] = value
        else:
            kept[key] = value
    return kept, figures


def _relative(path: str, out: Path) -> str:
    """``path`` relative to ``out`` when it lies under it (summary.json does not depend on where ``--out`` is)."""
    try:
        return Path(path).resolve().relative_to(out.resolve()).as_posix()
    except (ValueError, OSError):
        return path


def clear_stale_traces(out: Path) -> list[Path]:
    """Remove trace files an earlier command left under ``out`` (so every trace there is current).

    Only what keos writes is removed: ``*.trace.json`` in the folders engines write to
    (``out/ENGINE/SCENARIO/VARIANT/``, ``out/mutants/...``) and the earlier ``summary.json``; a
    trace a user keeps elsewhere under ``out`` is left alone.  Returns the removed paths.
    """
    removed: list[Path] = []
    if not out.is_dir():
        return removed
    for folder in (*ENGINES, "mutants"):
        for path in sorted((out / folder).glob("**/*.trace.json")):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    with contextlib.suppress(OSError):
        (out / "summary.json").unlink()
    return removed


def _add_transition_coverage(result: EngineResult) -> None:
    """Record, for runs that exercised the coordinator, its transitions against the table."""
    if any(e.startswith("txn:") for e in result.coverage):
        from keos.checker.coverage import transition_coverage

        result.stats["coordinator_transitions"] = transition_coverage(result.coverage).to_json()


# -- check ---------------------------------------------------------------------------------------


@dataclass
class CheckReport:
    """The results of :func:`check`, one per (scenario, engine)."""

    results: list[EngineResult] = field(default_factory=list)
    strict: bool = False
    #: Why the command stopped before every run was done (``"interrupted"``, ``"out of memory"``).
    stopped: str | None = None
    #: The runs a stopped command never finished, as ``engine/scenario/variant``.
    not_run: list[str] = field(default_factory=list)

    @property
    def violated(self) -> bool:
        """Whether any run found a violation."""
        return any(r.violated for r in self.results)

    def violations(self) -> list[PropertyResult]:
        """Every violated property of every run, each with its replayed trace."""
        return [p for r in self.results for p in r.violations()]

    def disagreements(self) -> list[tuple[EngineResult, Any]]:
        """Engine/model disagreements the engines reported (a bug in keos, not a verdict)."""
        return [(r, d) for r in self.results for d in r.stats.get("engine_disagreement", []) or []]

    def untested(self) -> list[tuple[EngineResult, PropertyResult]]:
        """Properties whose ``sometimes`` partners never fired (or that no run reached)."""
        return [
            (r, p) for r in self.results for p in r.properties if p.verdict in (Verdict.UNTESTED, Verdict.UNREACHED)
        ]

    def untested_invariants(self) -> list[tuple[EngineResult, PropertyResult]]:
        """Invariants (always / eventually) whose ``sometimes`` partners never fired: what ``strict`` fails on.

        A sometimes property that partners no invariant and is never reached is only reported.
        """
        return [(r, p) for r, p in self.untested() if p.verdict is Verdict.UNTESTED]

    def partial(self) -> list[tuple[EngineResult, str]]:
        """Runs stopped by a budget (time, memory, states), with the reason."""
        return [(r, why) for r in self.results if (why := partial_reason(r)) is not None]

    def reasons(self) -> list[str]:
        """Why :attr:`exit_code` is what it is, one line per reason (empty when every invariant holds)."""
        out = [f"engine disagreement ({r.engine}, {r.scenario}, {r.variant}): {d}" for r, d in self.disagreements()]
        out += [
            f"violated: {p.name} ({r.scenario}, {r.variant}, {r.engine})"
            for r in self.results
            for p in r.properties
            if p.verdict is Verdict.VIOLATED
        ]
        if self.strict:
            out += [
                f"--strict: {p.name} is {p.verdict.value} in {r.scenario} ({r.variant}, {r.engine})"
                + (f": {p.detail}" if p.detail else "")
                for r, p in self.untested_invariants()
                if p.detail != STOPPED_AT_FIRST
            ]
        for r in self.results:  # one line per run cut short, not one per property it left unjudged
            unjudged = sum(p.detail == STOPPED_AT_FIRST for p in r.properties)
            if unjudged:
                out.append(f"not judged: {unjudged} other invariant(s) of {r.scenario} ({r.variant}, {r.engine}): "
                           "the search stopped at the first violation (--stop-on-first)")
        out += [f"partial: {r.engine} on {r.scenario} ({r.variant}) stopped early: {why}" for r, why in self.partial()]
        if self.stopped:
            out.append(f"partial: {self.stopped}; {len(self.results)} run(s) finished, {len(self.not_run)} not run")
        return out

    @property
    def exit_code(self) -> int:
        """3 engine disagreement; 1 a violation (or, when strict, an untested property); 4 partial; else 0."""
        if self.disagreements():
            return EXIT_ENGINE_DISAGREEMENT
        if self.violated or (self.strict and self.untested_invariants()):
            return EXIT_VIOLATION
        if self.stopped or self.partial():
            return EXIT_PARTIAL
        return EXIT_OK


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`check`: the finished runs are in :attr:`report` (and in ``summary.json``)."""

    def __init__(self, report: CheckReport) -> None:
        super().__init__("interrupted")
        self.report = report


def check(
    scenarios: Iterable[str | Path | Scenario] | None = None,
    *,
    variant: str | None = None,
    engine: str = "explore",
    seed: int = 0,
    max_depth: int = 0,
    max_states: int = 0,
    stop_on_first: bool = False,
    examples: int = 0,
    time_budget_s: float | None = None,
    max_memory_mb: int = 0,
    strict: bool = False,
    out: Path | str | None = None,
    progress: Progress | None = None,
    on_run: Callable[[Scenario, str, str], None] | None = None,
    workers: int = 1,
    compact_visited: bool = False,
    spill_dir: Path | str | None = None,
    master: str = "local[*]",
    jobs: int = 1,
) -> CheckReport:
    """Check the scenarios' invariants (default: the default gate's scenarios) with ``engine``.

    ``engine`` is a registered engine name (``explore``, ``hypothesis``, ``bmc``, ``spark-bfs``) or ``all``
    (every engine but the Spark ones, which start a Spark session: name them to run them);
    ``variant`` overrides each scenario's own (it must apply to every scenario's model).  With
    ``out``, traces an earlier command left there are removed first; then each violation's trace
    and a running ``summary.json`` are written there as soon as each run finishes.

    Budgets: ``time_budget_s`` seconds per run (0 = none; ``None`` = each engine's default,
    :data:`DEFAULT_TIME_BUDGET_S`: 60 s for bmc, none for the others), ``max_states`` distinct states and
    ``max_memory_mb`` MiB of resident memory; a run that reaches one returns partial results
    (:meth:`CheckReport.partial`, exit code 4).  Running out of memory (``MemoryError``) stops the
    command with the finished runs kept (:attr:`CheckReport.stopped`); Ctrl-C raises
    :class:`Interrupted` carrying that report.

    The explore engine's search: ``workers`` processes (default 1: the sequential reference
    search), ``compact_visited`` (visited fingerprints as sorted int64 arrays), ``spill_dir``
    (those arrays in memory-mapped files there); any of them selects the level-synchronous search
    (:mod:`keos.checker.explore.parallel`), which finds stuck states but leaves fair livelocks to
    the sequential one.  ``master``: the Spark master of the ``spark-bfs`` engine.

    ``jobs``: runs (scenario x engine) at a time, each in a forked process of a pool
    (:class:`_RunPool`); the results are taken, written and reported in the runs' order, so the report,
    ``summary.json`` and the traces are those of ``jobs=1`` apart from timing figures.  A worker that dies
    (killed, out of memory at the operating system's hands) raises ``BrokenProcessPool``: a keos fault,
    never a verdict.  Ctrl-C keeps every run finished so far, in whatever order they finished.  ``jobs``
    above 1 excludes ``workers`` above 1 and the Spark engines (each is itself parallel).
    """
    chosen = _scenarios(scenarios)
    v_override = _variant(variant)
    if scenarios is None and v_override is not None:
        # The default gate mixes models: a variant runs on the default scenarios whose model it changes.
        from keos.scenarios.variant_scope import variant_applies

        chosen = [s for s in chosen if variant_applies(VARIANTS[v_override], s.model)[0]]
        if not chosen:
            raise ModelError(f"variant {v_override!r} applies to none of the default scenarios' models")
    engines = _engines(engine)
    for scenario in chosen:  # validate every combination before any work
        build_model(scenario, v_override or scenario.variant)
    _budgets(0.0 if time_budget_s is None else time_budget_s, max_states, max_memory_mb)
    spill = _search_options(workers, spill_dir, master if "spark-bfs" in engines else None)
    _jobs(jobs, workers, engines)
    out_dir = Path(out) if out is not None else None
    options = EngineOptions(
        seed=seed,
        max_depth=max_depth,
        max_states=max_states,
        stop_on_first=stop_on_first,
        examples=examples,
        time_budget_s=time_budget_s or 0.0,
        max_memory_mb=max_memory_mb,
        out_dir=out_dir or Path("keos-out"),
        progress=progress,
        workers=workers,
        compact_visited=compact_visited,
        spill_dir=spill,
        master=master,
    )
    report = CheckReport(strict=strict)
    if out_dir is not None:
        clear_stale_traces(out_dir)
    runs = [(scenario, name) for scenario in chosen for name in engines]
    finished: dict[int, EngineResult] = {}

    def keep(i: int, result: EngineResult) -> None:
        """Judge, write and keep run ``i``'s result (in the runs' order while the command is not stopped)."""
        scenario = runs[i][0]
        if stop_on_first:
            unjudged_after_first_violation(result)
        _add_transition_coverage(result)
        if out_dir is not None:
            write_traces(result, out_dir, scenario)
        finished[i] = result
        report.results.append(result)

    def not_run() -> list[str]:
        return [f"{name}/{sc.name}/{v_override or sc.variant}"
                for i, (sc, name) in enumerate(runs) if i not in finished]

    pool: _RunPool | None = None
    try:
        if jobs > 1 and len(runs) > 1:
            pool = _RunPool(jobs)
            pool.submit(runs, v_override, options, time_budget_s)
        for i, (scenario, name) in enumerate(runs):
            v = v_override or scenario.variant
            if on_run is not None:
                on_run(scenario, name, v)
            if pool is not None:
                result = pool.result(i)
            else:
                run, _ = ENGINES[name]
                result = run(scenario, v, replace(options, time_budget_s=_budget(name, time_budget_s)))
            keep(i, result)
            if out_dir is not None:
                write_summary(out_dir, report.results, "check", complete=i == len(runs) - 1)
    except MemoryError:
        report.stopped = "out of memory (MemoryError); set --max-memory below the machine's memory"
    except KeyboardInterrupt:
        report.stopped = "interrupted"
    except Exception as exc:
        # A keos bug (exit 3 on the command line): the runs that finished are still written, marked partial.
        if out_dir is not None:
            write_summary(out_dir, report.results, "check", stopped=f"keos crashed ({type(exc).__name__})",
                          not_run=not_run())
        raise
    finally:
        if pool is not None and report.stopped:
            for i, result in pool.stop():  # runs the pool finished out of order before the command stopped
                if i not in finished:
                    keep(i, result)
            report.results = [finished[i] for i in sorted(finished)]
        elif pool is not None:
            pool.stop()
    if report.stopped:
        report.not_run = not_run()
        if out_dir is not None:
            write_summary(out_dir, report.results, "check", stopped=report.stopped, not_run=report.not_run)
        if report.stopped == "interrupted":
            raise Interrupted(report) from None
    return report


def _budget(engine: str, time_budget_s: float | None) -> float:
    """A run's time budget: the one given, else the engine's default (:data:`DEFAULT_TIME_BUDGET_S`)."""
    return DEFAULT_TIME_BUDGET_S.get(engine, 0.0) if time_budget_s is None else time_budget_s


def _jobs(jobs: int, workers: int, engines: Sequence[str]) -> None:
    """Validate ``jobs``: a count of processes, not combined with a search that is itself parallel."""
    if not isinstance(jobs, int) or isinstance(jobs, bool) or not 1 <= jobs <= MAX_WORKERS:
        raise ModelError(f"jobs must be an integer from 1 to {MAX_WORKERS}, got {jobs!r}")
    if jobs > 1 and workers > 1:
        raise ModelError("jobs and workers are exclusive: either runs side by side or one run's search split")
    if jobs > 1 and any(e.startswith("spark") for e in engines):
        raise ModelError("jobs above 1 does not apply to the Spark engines (each run is already a Spark job)")


def _pool_worker_init() -> None:
    """A pool worker leaves Ctrl-C to the parent (which stops the pool) and dies at once on SIGTERM."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _pool_run(scenario: Scenario, engine: str, variant: str, options: EngineOptions) -> EngineResult:
    run, _ = ENGINES[engine]
    return run(scenario, variant, options)


class _RunPool:
    """Every run submitted at once to a pool of ``jobs`` forked processes (:mod:`concurrent.futures`).

    Forked, so a worker has the parent's modules and registered engines without re-importing them; it has
    no progress callback (the parent's console is not its own).  :meth:`result` waits for run ``i``;
    :meth:`stop` cancels what has not started, kills what is running and returns the runs that finished.
    """

    def __init__(self, jobs: int) -> None:
        import multiprocessing
        from concurrent.futures import Future, ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                                        initializer=_pool_worker_init)
        self.futures: list[Future[EngineResult]] = []

    def submit(self, runs: Sequence[tuple[Scenario, str]], v_override: str | None, options: EngineOptions,
               time_budget_s: float | None) -> None:
        self.futures += [
            self.pool.submit(_pool_run, sc, name, v_override or sc.variant,
                             replace(options, progress=None, time_budget_s=_budget(name, time_budget_s)))
            for sc, name in runs
        ]

    def result(self, i: int) -> EngineResult:
        return self.futures[i].result()

    def stop(self) -> list[tuple[int, EngineResult]]:
        for f in self.futures:
            f.cancel()
        done = [(i, f.result()) for i, f in enumerate(self.futures)
                if f.done() and not f.cancelled() and f.exception() is None]
        # ProcessPoolExecutor has no public way to end running tasks before Python 3.14 (terminate_workers)
        terminate = getattr(self.pool, "terminate_workers", None)
        if terminate is not None:
            terminate()
        else:
            for process in list((getattr(self.pool, "_processes", None) or {}).values()):
                process.terminate()
        self.pool.shutdown(wait=True, cancel_futures=True)
        return done


def _budgets(time_budget_s: float, max_states: int, max_memory_mb: int) -> None:
    """Reject budgets that are not numbers of the right sign (``nan`` included)."""
    if (
        not isinstance(time_budget_s, int | float)
        or isinstance(time_budget_s, bool)
        or not math.isfinite(time_budget_s)
        or time_budget_s < 0
    ):
        raise ModelError(f"time budget must be a finite number of seconds >= 0, got {time_budget_s!r}")
    for name, value in (("max_states", max_states), ("max_memory_mb", max_memory_mb)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ModelError(f"{name} must be an integer >= 0, got {value!r}")


#: More worker processes than this is a typo, not a machine: each is a forked copy of keos.
MAX_WORKERS = 256


def _search_options(workers: int, spill_dir: Path | str | None, master: str | None) -> Path | None:
    """Validate the search's processes, spill directory and (when given) Spark master; the spill directory."""
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS:
        raise ModelError(f"workers must be an integer from 1 to {MAX_WORKERS}, got {workers!r}")
    if master is not None:
        from keos.checker.sweep.campaign import _MASTER

        if not isinstance(master, str) or not _MASTER.match(master):
            raise ModelError(f"bad Spark master {master!r} (local[*], local[N], spark://host:port, sc://host:port)")
    if spill_dir is None:
        return None
    path = Path(spill_dir)
    if path.exists() and not path.is_dir():
        raise ModelError(f"spill directory {str(path)!r} is not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"spill directory {str(path)!r}: {exc.strerror}") from None
    return path


# -- mutants -------------------------------------------------------------------------------------


def mutants(
    engine: str = "explore",
    *,
    seed: int = 0,
    examples: int = 0,
    max_depth: int = 0,
    time_budget_s: float = 300.0,
    max_memory_mb: int = 0,
    out: Path | str = "keos-out",
    on_run: Callable[[str, str, str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every weakened variant on the scenarios it names; one row per (engine, variant).

    A row says whether the variant was caught, by which invariant, on which scenario, with which
    replayed trace and how fast; ``covered`` is False where the engine cannot express the variant.
    """
    _budgets(time_budget_s, 0, max_memory_mb)
    options = EngineOptions(
        seed=seed,
        examples=examples,
        max_depth=max_depth,
        time_budget_s=time_budget_s,
        max_memory_mb=max_memory_mb,
        out_dir=Path(out),
    )
    rows: list[dict[str, Any]] = []
    try:
        for name in _engines(engine):
            _mutant_rows(name, options, on_run, rows)
    except KeyboardInterrupt:
        raise MutantsInterrupted(rows) from None
    return rows


class MutantsInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`mutants`: the rows of the variants finished so far are in :attr:`rows`."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__("interrupted")
        self.rows = rows


def _mutant_rows(
    engine: str,
    options: EngineOptions,
    on_run: Callable[[str, str, str], None] | None,
    rows: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    run, _ = ENGINES[engine]
    builtins = builtin_scenarios()
    module = importlib.import_module(run.__module__)
    covers = getattr(module, "covers", None) or getattr(module, f"{engine}_covers", None)
    rows = [] if rows is None else rows  # appended to as each variant finishes (kept on Ctrl-C)
    for v in VARIANTS.values():
        if not v.weakened:
            continue
        row: dict[str, Any] = {
            "variant": v.name,
            "bug": v.bug,
            "expected": list(v.breaks),
            "caught": False,
            "covered": True,
            "scenario": None,
            "invariant": None,
            "trace": None,
            "trace_length": None,
            "elapsed_s": 0.0,
            "timed_out": False,
            "depth_reached": None,
        }
        scenarios = [builtins[name] for name in v.scenarios if name in builtins]
        if covers is not None and not any(covers(s, v.name) for s in scenarios):
            row["covered"] = False
            row["engine"] = engine
            rows.append(row)
            continue
        start = time.perf_counter()
        missed: list[str] = []
        for scenario in scenarios:
            if covers is not None and not covers(scenario, v.name):
                continue
            if on_run is not None:
                on_run(engine, v.name, scenario.name)
            result, found = run_weakened(run, scenario, v.name, options)  # permitted counterexamples catch nothing
            write_traces(result, options.out_dir / "mutants", scenario)
            if not found:
                missed.append(scenario.name)
                row["timed_out"] = row.get("timed_out", False) or partial_reason(result) is not None
                if result.stats.get("depth_reached") is not None:
                    row["depth_reached"] = result.stats["depth_reached"]
            elif row["scenario"] is None:  # the first scenario that caught it names the row
                best = min(found, key=lambda p: len(p.trace.actions) if p.trace else 0)
                row.update(
                    scenario=scenario.name,
                    invariant=best.name,
                    trace=str(best.trace_path) if best.trace_path else None,
                    trace_length=len(best.trace.actions) if best.trace else None,
                    expected_invariant=best.name in v.breaks,
                )
        # Variant.scenarios are the scenarios "in which it is expected to be caught": each of them, not the first
        # one that does -- a variant names a second scenario for another side of its bug (the idempotent and the
        # transactional produce of broker_skips_epoch_check), and a defect that hides that side must fail the gate
        row["caught"] = row["scenario"] is not None and not missed
        row["missed"] = missed
        if row["caught"]:
            row["timed_out"] = False
        row["elapsed_s"] = round(time.perf_counter() - start, 3)
        row["engine"] = engine
        rows.append(row)
    return rows


# -- explore and replay --------------------------------------------------------------------------


def explore(
    scenario: str | Path | Scenario,
    *,
    variant: str | None = None,
    max_depth: int = 0,
    max_states: int = 0,
    graph: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    time_budget_s: float = 0.0,
    max_memory_mb: int = 0,
    workers: int = 1,
    compact_visited: bool = False,
    spill_dir: Path | str | None = None,
    engine: str = "local",
    master: str = "local[*]",
) -> tuple[EngineResult, Any]:
    """Breadth-first search of one scenario; with ``graph``, also its state graph (networkx).

    A search stopped by a budget (``max_states``, ``time_budget_s``, ``max_memory_mb``) returns
    partial results: ``stats["limit_reached"]`` names the budget.

    ``workers`` other than 1, ``compact_visited`` or ``spill_dir`` run the level-synchronous search
    (:mod:`keos.checker.explore.parallel`: the same verdicts and traces; stuck states but no fair
    livelocks; no graph); ``engine="spark"`` runs it on Spark at ``master``.
    """
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    v = _variant(variant) or sc.variant
    _budgets(time_budget_s, max_states, max_memory_mb)
    if engine not in ("local", "spark"):
        raise ModelError(f"unknown explore engine {engine!r} (known: local, spark)")
    spill = _search_options(workers, spill_dir, master if engine == "spark" else None)
    levels = workers != 1 or compact_visited or spill is not None
    if graph and (levels or engine == "spark"):
        raise ModelError(
            "graph export needs the sequential search (no --workers N, --compact-visited, --spill-dir, Spark)"
        )
    model = build_model(sc, v)
    if engine == "spark":
        from keos.checker.explore.spark_bfs import spark_explore

        result = spark_explore(
            sc,
            v,
            master=master,
            max_depth=max_depth or sc.bounds.max_depth,
            max_states=max_states or sc.bounds.max_states,
            time_budget_s=time_budget_s,
        )
        _add_transition_coverage(result)
        return result, None
    if levels:
        from keos.checker.explore.parallel import ParallelOptions, explore_levels

        popts = ParallelOptions(
            max_depth=max_depth or sc.bounds.max_depth,
            max_states=max_states or sc.bounds.max_states,
            workers=workers,
            compact=compact_visited,
            spill_dir=spill,
            time_budget_s=time_budget_s,
            max_memory_mb=max_memory_mb,
        )
        result = explore_levels(model, sc.name, v, popts, sc.permitted, progress)
        expect_findings(result, sc.expected, v == sc.variant)
        _add_transition_coverage(result)
        return result, None
    opts = ExploreOptions(
        max_depth=max_depth or sc.bounds.max_depth,
        max_states=max_states or sc.bounds.max_states,
        graph=graph,
        time_budget_s=time_budget_s,
        max_memory_mb=max_memory_mb,
    )
    result, g = _explore(model, sc.name, v, opts, sc.permitted, progress)
    expect_findings(result, sc.expected, v == sc.variant)
    _add_transition_coverage(result)
    return result, g


@dataclass(frozen=True)
class ReplayReport:
    """The outcome of re-executing a trace.

    ``data`` is the trace as read; ``drawn`` is the same trace with ``steps``, ``final_state`` and
    ``explanation`` replaced by what the replay computed (what a renderer should draw);
    ``differences`` says where the stored steps differ from the re-executed ones (an edited trace,
    or one from another model version); ``scenario_from`` says which scenario was used: the one
    embedded in the trace, its source file, or the built-in of that name.
    """

    data: dict[str, Any]
    scenario: Scenario
    replay: Replay
    drawn: dict[str, Any] = field(default_factory=dict)
    differences: list[str] = field(default_factory=list)
    scenario_from: str = "embedded"

    @property
    def confirmed(self) -> bool:
        """Whether the recorded violation happened again."""
        return self.replay.confirmed


def _trace_scenario(data: dict[str, Any], trace: Path) -> tuple[Scenario, str]:
    """The scenario a trace ran on: embedded document, then source file, then built-in name."""
    document = data.get("scenario_document")
    if isinstance(document, dict):
        from keos.scenarios import parse_scenario

        source = data.get("scenario_source")
        return parse_scenario(document, source if isinstance(source, str) and source else f"{trace}"), "embedded"
    source = data.get("scenario_source")
    if isinstance(source, str) and source and not source.startswith("scenarios/"):
        for candidate in (Path(source), trace.parent / source):
            if candidate.is_file():
                return resolve_scenario(str(candidate)), f"file {candidate}"
    return resolve_scenario(data["scenario"]), "built-in"


def replay(trace: str | Path) -> ReplayReport:
    """Re-execute a trace file on the model; :attr:`ReplayReport.confirmed` says whether it violates.

    The scenario embedded in the trace is preferred over a built-in of the same name, so a trace
    replays the same from any directory and on any machine.
    """
    data = load_trace(trace)
    scenario, origin = _trace_scenario(data, Path(trace))
    model = build_model(scenario, _variant(data["variant"]))
    result = _replay(model, data)
    drawn, differences = _redraw(model, data, result)
    return ReplayReport(data, scenario, result, drawn, differences, origin)


def _redraw(model: Any, data: dict[str, Any], result: Replay) -> tuple[dict[str, Any], list[str]]:
    """The trace as re-executed, and where its stored steps differ from that."""
    from keos.checker.trace import TraceError

    try:
        actions = [model.action_from_json(a) for a in data["actions"]]
    except ModelError as exc:  # pragma: no cover - _replay decoded them already
        raise TraceError(f"bad action in trace: {exc}") from None
    steps = [
        {"action": model.format_action(a), "events": list(ev), "fingerprint": model.fingerprint(st)}
        for a, ev, st in zip(actions, result.events[1:], result.states[1:])
    ]
    props = {p.name: p for p in model.properties()}
    prop = props[data["invariant"]]
    final = result.states[-1] if result.states else None
    drawn = dict(data)
    drawn["steps"] = steps
    drawn["actions"] = data["actions"][: len(steps)]
    drawn["final_state"] = model.state_to_json(final) if final is not None else None
    drawn["explanation"] = prop.explain(final) if (prop.explain and final is not None and result.confirmed) else ""
    differences: list[str] = []
    stored = data.get("steps")
    if isinstance(stored, list):
        if len(stored) != len(actions):
            differences.append(f"the trace stores {len(stored)} steps for {len(actions)} actions")
        for i, (old, new) in enumerate(zip(stored, steps), start=1):
            if not isinstance(old, dict) or old.get("fingerprint") != new["fingerprint"]:
                differences.append(f"step {i}: the stored state differs from the re-executed one")
                break
    if len(steps) < len(actions):
        differences.append(f"only {len(steps)} of {len(actions)} actions could be executed")
    return drawn, differences
