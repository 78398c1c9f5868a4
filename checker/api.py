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
in :mod:`keos.reports` take; nothing here prints.  Exit-code semantics (0 holds, 1 violation, 3 engine
disagreement) are given by :attr:`CheckReport.exit_code`, so the CLI is a thin layer over this module.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from keos.checker.engines import ENGINES, EngineOptions
from keos.checker.explore import engine as _explore_engine  # noqa: F401  (registers the explore engine)
from keos.checker.explore.search import ExploreOptions
from keos.checker.explore.search import explore as _explore
from keos.checker.results import EngineResult, PropertyResult, Verdict
from keos.checker.stateful import machine as _stateful  # noqa: F401  (registers the hypothesis engine)
from keos.checker.trace import KEOS_VERSION, Replay, load_trace
from keos.checker.trace import replay as _replay
from keos.model.interface import ModelError
from keos.model.variants import VARIANTS
from keos.scenarios import Scenario, build_model, builtin_scenarios, resolve_scenario

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_ENGINE_DISAGREEMENT",
    "EXIT_OK",
    "EXIT_VIOLATION",
    "CheckReport",
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

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_ENGINE_DISAGREEMENT = 0, 1, 2, 3

# Optional engines register themselves on import; a missing one is simply not offered.
for _module in ("keos.checker.bmc.engine", "keos.checker.explore.spark_bfs"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_module)

Progress = Callable[[str, dict[str, Any]], None]


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


def write_summary(out: Path, results: Sequence[EngineResult], command: str) -> Path:
    """Write ``out/summary.json`` with every run so far (called after each run, so none is lost)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "summary.json"
    data = {"keos_version": KEOS_VERSION, "command": command, "runs": [r.to_json() for r in results]}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


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

    @property
    def exit_code(self) -> int:
        """0 all hold, 1 a violation (or, when strict, an untested property), 3 engine disagreement."""
        if self.disagreements():
            return EXIT_ENGINE_DISAGREEMENT
        if self.violated or (self.strict and self.untested()):
            return EXIT_VIOLATION
        return EXIT_OK


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
    time_budget_s: float = 60.0,
    strict: bool = False,
    out: Path | str | None = None,
    progress: Progress | None = None,
    on_run: Callable[[Scenario, str, str], None] | None = None,
    workers: int = 1,
    max_memory_mb: int = 0,
) -> CheckReport:
    """Check the scenarios' invariants (default: the default gate's scenarios) with ``engine``.

    ``engine`` is a registered engine name (``explore``, ``hypothesis``, ``bmc``) or ``all``;
    ``variant`` overrides each scenario's own.  With ``out``, each violation's trace and a running
    ``summary.json`` are written there as soon as each run finishes.  ``workers`` processes share
    an explore search (0: all cores); ``max_memory_mb`` stops it with partial results.
    """
    chosen = _scenarios(scenarios)
    v_override = _variant(variant)
    engines = _engines(engine)
    for scenario in chosen:  # validate every combination before any work
        build_model(scenario, v_override or scenario.variant)
    out_dir = Path(out) if out is not None else None
    options = EngineOptions(
        seed=seed,
        max_depth=max_depth,
        max_states=max_states,
        stop_on_first=stop_on_first,
        examples=examples,
        time_budget_s=time_budget_s,
        out_dir=out_dir or Path("keos-out"),
        progress=progress,
        workers=workers,
        max_memory_mb=max_memory_mb,
    )
    report = CheckReport(strict=strict)
    for scenario in chosen:
        v = v_override or scenario.variant
        for name in engines:
            run, _ = ENGINES[name]
            if on_run is not None:
                on_run(scenario, name, v)
            result = run(scenario, v, options)
            _add_transition_coverage(result)
            if out_dir is not None:
                write_traces(result, out_dir, scenario)
            report.results.append(result)
            if out_dir is not None:
                write_summary(out_dir, report.results, "check")
    return report


# -- mutants -------------------------------------------------------------------------------------


def mutants(
    engine: str = "explore",
    *,
    seed: int = 0,
    examples: int = 0,
    max_depth: int = 0,
    time_budget_s: float = 300.0,
    out: Path | str = "keos-out",
    on_run: Callable[[str, str, str], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every weakened variant on the scenarios it names; one row per (engine, variant).

    A row says whether the variant was caught, by which invariant, on which scenario, with which
    replayed trace and how fast; ``covered`` is False where the engine cannot express the variant.
    """
    options = EngineOptions(
        seed=seed, examples=examples, max_depth=max_depth, time_budget_s=time_budget_s, out_dir=Path(out)
    )
    rows: list[dict[str, Any]] = []
    for name in _engines(engine):
        for row in _mutant_rows(name, options, on_run):
            row["engine"] = name
            rows.append(row)
    return rows


def _mutant_rows(
    engine: str, options: EngineOptions, on_run: Callable[[str, str, str], None] | None
) -> list[dict[str, Any]]:
    run, _ = ENGINES[engine]
    builtins = builtin_scenarios()
    module = importlib.import_module(run.__module__)
    covers = getattr(module, "covers", None) or getattr(module, f"{engine}_covers", None)
    rows: list[dict[str, Any]] = []
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
            rows.append(row)
            continue
        start = time.perf_counter()
        for scenario in scenarios:
            if covers is not None and not covers(scenario, v.name):
                continue
            if on_run is not None:
                on_run(engine, v.name, scenario.name)
            result = run(scenario, v.name, replace(options, stop_on_first=True))
            write_traces(result, options.out_dir / "mutants", scenario)
            found = result.violations()
            if not found:
                row["timed_out"] = row.get("timed_out", False) or bool(result.stats.get("timed_out"))
                if result.stats.get("depth_reached") is not None:
                    row["depth_reached"] = result.stats["depth_reached"]
            if found:
                best = min(found, key=lambda p: len(p.trace.actions) if p.trace else 0)
                row.update(
                    caught=True,
                    scenario=scenario.name,
                    invariant=best.name,
                    trace=str(best.trace_path) if best.trace_path else None,
                    trace_length=len(best.trace.actions) if best.trace else None,
                    expected_invariant=best.name in v.breaks,
                    timed_out=False,
                )
                break
        row["elapsed_s"] = round(time.perf_counter() - start, 3)
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
    workers: int = 1,
    max_memory_mb: int = 0,
    compact: bool = False,
    spill_dir: Path | None = None,
    engine: str = "local",
    master: str = "local[*]",
) -> tuple[EngineResult, Any]:
    """Breadth-first search of one scenario; with ``graph``, also its state graph (networkx).

    ``workers`` processes share the search (0: all cores); ``max_memory_mb`` stops it with a
    partial result (``stats["partial"]``); ``compact`` keeps visited fingerprints in sorted arrays
    (``spill_dir``: memory-mapped files there).
    ``engine="spark"`` runs the search on Spark at ``master`` (no graph).
    """
    sc = scenario if isinstance(scenario, Scenario) else load_scenario(scenario)
    v = _variant(variant) or sc.variant
    if engine not in ("local", "spark"):
        raise ModelError(f"unknown explore engine {engine!r} (known: local, spark)")
    if engine == "spark":
        if graph:
            raise ModelError("graph export needs the local engine")
        from keos.checker.explore.spark_bfs import spark_explore

        build_model(sc, v)
        result = spark_explore(sc, v, master=master, max_depth=max_depth or sc.bounds.max_depth,
                               max_states=max_states or sc.bounds.max_states)
        _add_transition_coverage(result)
        return result, None
    model = build_model(sc, v)
    opts = ExploreOptions(
        max_depth=max_depth or sc.bounds.max_depth,
        max_states=max_states or sc.bounds.max_states,
        graph=graph,
        workers=workers,
        max_memory_mb=max_memory_mb,
        compact=compact,
        spill_dir=spill_dir,
    )
    result, g = _explore(
        model, sc.name, v, opts, sc.permitted, progress, model_factory=lambda: build_model(sc, v)
    )
    _add_transition_coverage(result)
    return result, g


@dataclass(frozen=True)
class ReplayReport:
    """The outcome of re-executing a trace: the trace's data, the scenario it ran on, the replay."""

    data: dict[str, Any]
    scenario: Scenario
    replay: Replay

    @property
    def confirmed(self) -> bool:
        """Whether the recorded violation happened again."""
        return self.replay.confirmed


def replay(trace: str | Path) -> ReplayReport:
    """Re-execute a trace file on the model; :attr:`ReplayReport.confirmed` says whether it violates."""
    data = load_trace(trace)
    try:
        scenario = resolve_scenario(data["scenario"])
    except ModelError:
        source = data.get("scenario_source")
        if not isinstance(source, str) or not source:
            raise
        scenario = resolve_scenario(source)
    model = build_model(scenario, _variant(data["variant"]))
    return ReplayReport(data, scenario, _replay(model, data))
