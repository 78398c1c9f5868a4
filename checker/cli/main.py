"""The ``keos`` command line: argument parsing and rendering over :mod:`keos.checker.api`.

Exit codes, the same for every command:

* 0 -- every invariant holds (within the search; a bounded search says so);
* 1 -- a violation, replayed on the model before it is shown (``--strict``: also an untested
  invariant; the reason is printed);
* 2 -- bad input: an unknown flag, value, scenario, variant, engine; a malformed scenario, trace
  or witness file; an output path that cannot be written.  One line ``keos: error: ...``, checked
  before any work starts;
* 3 -- keos is at fault, not your system: an engine and the model disagree (a counterexample that
  does not replay), or keos crashed -- the traceback is written to a crash report file whose path
  is printed, never to the terminal;
* 4 -- partial results: a time, memory or state budget ran out, memory was exhausted, or the
  run was interrupted (Ctrl-C).  ``summary.json`` says ``"partial": true`` and the HTML and JUnit
  reports are still written.

Commands:

* ``keos list [--json]`` -- components, invariants, scenarios, variants.
* ``keos check [--scenario NAME|FILE ...] [--engine NAME|all] [--variant NAME]
  [--out DIR] [--json] [--html FILE] [--junit FILE]`` -- run engines; every
  counterexample is replayed, minimal, and written as a trace under ``--out``.
* ``keos mutants [--engine NAME] [--json]`` -- run every weakened variant on
  the scenarios it names; exit 0 only if each one is caught.
* ``keos explore --scenario S`` -- breadth-first search with statistics, and
  an optional state-graph export (GraphML or DOT).
* ``keos replay TRACE [--json] [--mermaid]`` -- re-execute a trace, confirm or
  refute its violation.
* ``keos config-space --scenario S [--invariant NAME ...] [--retries 0,1,2]
  [--max-in-flight 1,2,5] [--max-depth 12] [--time-budget 60]`` -- which
  producer configurations admit a violation (z3 BMC per configuration); each
  witness is replayed from a derived scenario file written under ``--out``.
  Exit 0 when every query is answered (an admitted violation is an answer).
* ``keos sweep ...`` -- randomized failure-injection sweeps on Spark.
* ``keos bench`` -- explicit-state throughput on the default scenarios.
* ``keos assignors [--assignor NAME|MODULE:FUNCTION ...] [--cases N] [--seed S]`` -- the
  partition assignors' properties, balance and movement (:mod:`keos.checker.cli.assignors`);
  exit 1 if a property an assignor promises fails.

Bad input (an unknown flag, scenario, variant, a malformed scenario or trace
file) prints one line, ``keos: error: ...``, and exits 2.  Results computed
before a failure are already on disk: each run's traces and the summary are
written as soon as the run finishes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from keos.checker import api, logs
from keos.checker.api import EXIT_BAD_INPUT, EXIT_ENGINE_DISAGREEMENT, EXIT_OK, EXIT_PARTIAL, EXIT_VIOLATION
from keos.checker.cli import guard
from keos.checker.cli.guard import budget_seconds, non_negative_int, positive_int
from keos.checker.cli.threat import acl_summary, threat_rows, threat_table
from keos.checker.engines import ENGINES
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import STOPPED_AT_FIRST, EngineResult
from keos.checker.trace import KEOS_VERSION, TraceError
from keos.model.interface import Expectation, ModelError
from keos.model.variants import VARIANTS
from keos.scenarios import Scenario, build_model, builtin_scenarios, resolve_scenario, scenario_set
from keos.scenarios.input_files import MAX_TRACE_BYTES, InputFileError, read_user_file

__all__ = ["EXIT_BAD_INPUT", "EXIT_ENGINE_DISAGREEMENT", "EXIT_OK", "EXIT_PARTIAL", "EXIT_VIOLATION", "main"]

#: Printed at the end of ``keos --help`` and of every command's help.
EXIT_CODES = """exit codes:
  0  every invariant holds (a bounded search says so)
  1  a violation, replayed on the model (--strict: or an untested invariant; the reason is printed)
  2  bad input (one line "keos: error: ..."; checked before any work starts)
  3  keos is at fault: engine/model disagreement, or a crash (a crash report file is written)
  4  partial results: a time/memory/state budget ran out, or interrupted (summary.json "partial")"""

#: Deepest unrolling a z3 query may ask for: the encoding is built for every step before solving starts, so
#: the time budget cannot stop it (issue 15: --max-depth 100000 ran for minutes and took 7.5 GB).
MAX_BMC_DEPTH = 1000

#: Width of human output when stdout/stderr is not a terminal (CI logs): wide enough that no table is cut or
#: ellipsised (rich lays a table out at its natural width when it fits; on 80 columns the tables of sweep,
#: assignors and mutants cut scenario and variant names, issue 24).
CI_WIDTH = 1000


class UsageError(Exception):
    """Bad command-line input: one line, exit 2."""


#: Attribute of the parsed namespace that records which flags were given (removed before commands see it).
_GIVEN = "_keos_given_flags"

#: Flags that contradict each other: both given is bad input naming both (issue 24), with why.
CONFLICTING_FLAGS = (
    ("--mermaid", "--json", "both write stdout (the diagram, the verdict as JSON); give one, or --itf for a file"),
    ("--local-python", "--master", "--local-python runs without Spark, --master names the Spark cluster to use"),
)


def _given(namespace: argparse.Namespace, action: argparse.Action, option_string: str | None, value: Any) -> None:
    """Record a flag given on the command line; the same option twice is bad input naming both values."""
    given: dict[str, str] = namespace.__dict__.setdefault(_GIVEN, {})
    if option_string is None:
        return
    if action.dest in given and isinstance(action, argparse._StoreAction):
        before = getattr(namespace, action.dest, None)
        raise UsageError(f"{given[action.dest]} {before} and {option_string} {value} both given: "
                         f"{action.dest.replace('_', '-')} takes one value (run keos once per value)")
    for flag in action.option_strings:
        given[flag] = option_string
    given[action.dest] = option_string


class _StoreOnce(argparse._StoreAction):
    """``store``, but a repeated option is an error instead of silently keeping the last value."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        _given(namespace, self, option_string, values)
        super().__call__(parser, namespace, values, option_string)


class _StoreTrueSeen(argparse._StoreTrueAction):
    """``store_true`` that records it was given (for :data:`CONFLICTING_FLAGS`)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        _given(namespace, self, option_string, values)
        super().__call__(parser, namespace, values, option_string)


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2; a repeated single-value flag is an error too."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        if args and str(args[0]).startswith("-"):
            action = kwargs.get("action")
            if action in (None, "store"):
                kwargs["action"] = _StoreOnce
            elif action == "store_true":
                kwargs["action"] = _StoreTrueSeen
        return super().add_argument(*args, **kwargs)


def _conflicts(args: argparse.Namespace) -> None:
    """Refuse flags that contradict each other (:data:`CONFLICTING_FLAGS`), naming both."""
    given: dict[str, str] = vars(args).pop(_GIVEN, {})
    for a, b, why in CONFLICTING_FLAGS:
        if a in given and b in given:
            raise UsageError(f"{given[a]} and {given[b]} cannot be combined: {why}")


def _scenarios(refs: Sequence[str] | None) -> list[Scenario]:
    return [resolve_scenario(r) for r in refs] if refs else list(api.list_scenarios(default_only=True).values())


def _chosen(refs: Sequence[str] | None) -> list[Scenario] | None:
    """The ``--scenario`` values resolved, or ``None`` for the default gate (the API then picks)."""
    return [resolve_scenario(r) for r in refs] if refs else None


def _variant(name: str | None) -> str | None:
    if name is not None and name not in VARIANTS:
        raise UsageError(f"unknown variant {name!r} (known: {', '.join(sorted(VARIANTS))})")
    return name


def _engines(name: str) -> list[str]:
    if name != "all" and name not in ENGINES:
        raise UsageError(f"unknown engine {name!r} (known: {', '.join([*ENGINES, 'all'])})")
    return list(ENGINES) if name == "all" else [name]


def _console(json_mode: bool) -> Console:
    """Human output: stdout, or stderr when machine-readable output owns stdout.

    Not on a terminal (a CI log, a file), lines are not cut at 80 columns: the width is ``COLUMNS``
    when set, else :data:`CI_WIDTH`.
    """
    console = Console(stderr=json_mode, highlight=False)
    if not console.is_terminal:
        columns = os.environ.get("COLUMNS", "")
        console = Console(stderr=json_mode, highlight=False, width=int(columns) if columns.isdigit() else CI_WIDTH)
    return console


#: Seconds between progress lines when stderr is not a terminal (a CI log).
PROGRESS_EVERY_S = 5.0


def _progress_reporter(console: Console) -> Any:
    """Progress lines for long runs: one a second on a terminal, one every few seconds to stderr in CI."""
    last = [time.monotonic()]
    err = _console(True)  # progress goes to stderr, so stdout carries only results (README: "Commands")

    def report(engine: str, data: dict[str, Any]) -> None:
        now = time.monotonic()
        every = 1.0 if console.is_terminal else PROGRESS_EVERY_S
        if now - last[0] < every:
            return
        last[0] = now
        line = (
            f"  {engine}: {data.get('states', 0):,} states, {data.get('transitions', 0):,} transitions, "
            f"depth {data.get('depth', 0)}"
        )
        err.print(f"[dim]{line}[/dim]" if err.is_terminal else line, soft_wrap=True)

    return report


def _render_reports(
    args: argparse.Namespace, results: list[EngineResult], console: Console, report: api.CheckReport | None = None
) -> None:
    from keos.reports.terminal import render_summary

    # A stopped command (Ctrl-C, out of memory) is partial in every format, never a PASS.
    stop: dict[str, Any] = {"stopped": report.stopped, "not_run": report.not_run} if report is not None else {}
    render_summary(console, results, **stop)
    if getattr(args, "html", None):
        from keos.reports.html import write_html

        traces = {
            str(p.trace_path): json.loads(p.trace_path.read_text(encoding="utf-8"))
            for r in results
            for p in r.violations()
            if p.trace_path and p.trace_path.is_file()
        }
        console.print(f"HTML report: {write_html(Path(args.html), results, traces, **stop)}")
    if getattr(args, "junit", None):
        from keos.reports.junit import write_junit

        console.print(f"JUnit report: {write_junit(Path(args.junit), results, **stop)}")
    if getattr(args, "sarif", None):
        from keos.reports.sarif import write_sarif

        props = {p.name: p for sc in _scenarios(args.scenario) for p in build_model(sc).properties()}
        console.print(f"SARIF report: {write_sarif(Path(args.sarif), results, props, **stop)}")


def _explain_exit(console: Console, report: api.CheckReport) -> None:
    """Say why the exit code is not 0 (``--strict`` and partial runs included), one line per reason."""
    from rich.markup import escape

    for line in report.reasons():
        style = "red" if line.startswith(("violated", "engine", "--strict")) else "yellow"
        console.print(f"[{style}]{escape(line)}[/{style}]", soft_wrap=True)
    code = report.exit_code
    if code != EXIT_OK:
        meaning = {
            EXIT_VIOLATION: "violation",
            EXIT_ENGINE_DISAGREEMENT: "engine disagreement",
            EXIT_PARTIAL: "partial results",
        }.get(code, "")
        console.print(f"exit {code} ({meaning})")


# -- commands -----------------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    """``keos list``."""
    scenarios = builtin_scenarios()
    props: dict[str, Any] = {}
    for sc in scenarios.values():
        for p in build_model(sc).properties():
            props.setdefault(
                p.name,
                {
                    "name": p.name,
                    "expectation": p.expectation.value,
                    "fact": p.fact,
                    "source": p.source,
                    "catches": p.catches,
                    "partners": list(p.partners),
                    "fairness": list(p.fairness),
                    "models": [],
                },
            )
            if sc.model not in props[p.name]["models"]:
                props[p.name]["models"].append(sc.model)
    data: dict[str, Any] = {
        "components": _components(),
        "engines": {name: desc for name, (_, desc) in ENGINES.items()},
        "invariants": list(props.values()),
        "threat_model": threat_rows(),
        "scenarios": [
            {
                "name": s.name,
                "model": s.model,
                "default": s.default,
                "variant": s.variant,
                "permitted": list(s.permitted),
                "sets": list(s.sets),
                "description": " ".join(s.description.split()),
                "source": s.source,
                "acls": acl_summary(s.txn.security) if s.txn is not None and s.txn.security is not None else [],
            }
            for s in scenarios.values()
        ],
        "variants": [
            {
                "name": v.name,
                "weakened": v.weakened,
                "description": v.description,
                "breaks": list(v.breaks),
                "scenarios": list(v.scenarios),
                "bug": v.bug,
            }
            for v in VARIANTS.values()
        ],
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return EXIT_OK
    from rich.table import Table

    console = _console(False)
    t = Table(title="Components (model/)", show_lines=False)
    t.add_column("module")
    t.add_column("Kafka component")
    for name, desc in data["components"].items():
        t.add_row(name, desc)
    console.print(t)
    t = Table(title="Invariants")
    for col in ("name", "kind", "fact", "partners"):
        t.add_column(col)
    for p in data["invariants"]:
        kind = p["expectation"]
        if p["expectation"] == "eventually":
            kind += "\nassuming: " + ("; ".join(p["fairness"]) or "weak fairness of protocol steps, faults stop")
        t.add_row(p["name"], kind, p["fact"], ", ".join(p["partners"]))
    console.print(t)
    t = Table(title="Scenarios")
    for col in ("name", "model", "default / set", "description"):
        t.add_column(col)
    for s in data["scenarios"]:
        acls = "".join(f"\n  {line}" for line in s["acls"])
        default = "yes" if s["default"] else ", ".join(s["sets"])
        t.add_row(s["name"], s["model"], default, s["description"] + acls)
    console.print(t)
    t = Table(title="Variants")
    for col in ("name", "weakened", "expected to break", "bug / rule"):
        t.add_column(col)
    for v in data["variants"]:
        t.add_row(v["name"], "[red]weakened[/red]" if v["weakened"] else "real", ", ".join(v["breaks"]), v["bug"])
    console.print(t)
    console.print(threat_table(data["threat_model"]))
    t = Table(title="Engines")
    t.add_column("name")
    t.add_column("description")
    for name, desc in data["engines"].items():
        t.add_row(name, desc)
    console.print(t)
    return EXIT_OK


def _components() -> dict[str, str]:
    import keos.model as model_pkg

    out: dict[str, str] = {}
    for info in sorted(pkgutil.walk_packages(model_pkg.__path__, "keos.model."), key=lambda i: i.name):
        if info.ispkg or info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        mod = importlib.import_module(info.name)
        doc = (mod.__doc__ or "").strip().splitlines()
        out[info.name.removeprefix("keos.model.")] = doc[0] if doc else ""
    return out


def _check_scenarios(args: argparse.Namespace) -> list[Scenario] | None:
    """``--set NAME`` (a named scenario set, e.g. ``deep``) plus any ``--scenario``; else the default gate.

    ``--skip-default`` drops the set's scenarios that are also default ones: the gate checks the default
    scenarios in one step and ``--set reach --skip-default`` in the next, so no scenario is searched twice.
    """
    if not args.set:
        if args.skip_default:
            raise UsageError("--skip-default needs --set NAME (it drops that set's default scenarios)")
        return _chosen(args.scenario)
    chosen = [s for s in scenario_set(args.set).values() if not (args.skip_default and s.default)]
    if not chosen and not args.scenario:
        raise UsageError(f"--set {args.set} --skip-default: every scenario of the set is a default one")
    return chosen + [resolve_scenario(r) for r in args.scenario or ()]


def cmd_check(args: argparse.Namespace) -> int:
    """``keos check``."""
    started = time.monotonic()
    chosen = _check_scenarios(args)
    _variant(args.variant)
    if "bmc" in _engines(args.engine) and args.max_depth > MAX_BMC_DEPTH:
        raise UsageError(
            f"--max-depth {args.max_depth}: at most {MAX_BMC_DEPTH} with the bmc engine (z3 encodes "
            "every step before the time budget can stop it)"
        )
    console = _console(args.json)
    try:
        report = api.check(
            chosen,
            variant=args.variant,
            engine=args.engine,
            seed=args.seed,
            max_depth=args.max_depth,
            max_states=args.max_states,
            stop_on_first=args.stop_on_first,
            examples=args.examples,
            time_budget_s=args.time_budget,
            max_memory_mb=args.max_memory,
            strict=args.strict,
            out=Path(args.out),
            progress=_progress_reporter(console),
            on_run=lambda sc, engine, v: _console(True).print(
                f"[bold]{engine}[/bold] {sc.name} [dim]variant={v}[/dim]"),
            jobs=args.jobs,
            **_search_args(args),
        )
    except api.Interrupted as stop:
        report = stop.report
        console.print("[yellow]interrupted: the finished runs are reported; summary.json is marked partial[/yellow]")
    results = report.results
    elapsed = time.monotonic() - started
    if args.json:
        summary: dict[str, Any] = {
            "keos_version": KEOS_VERSION,
            "partial": report.exit_code == EXIT_PARTIAL,
            "exit_code": report.exit_code,
            "reasons": report.reasons(),
            "stopped": report.stopped,
            "not_run": report.not_run,
            "runs": [r.to_json() for r in results],
        }
        if args.set:
            summary.update({"set": args.set, "elapsed_s": round(elapsed, 2)})
        print(json.dumps(summary, indent=2))
    _render_reports(args, results, console, report)
    if args.set and not args.json:
        console.print(f"set {args.set}: {len(results)} run(s) checked in {elapsed:.1f} s")
    if args.strict:
        _print_untested(console, report)
    _explain_exit(console, report)
    return report.exit_code


def _print_untested(console: Console, report: api.CheckReport) -> None:
    """One line per untested invariant (which partner never fired: it fails the strict gate), and a note per
    sometimes property never reached."""
    for r, p in report.untested():
        if any(q.detail == STOPPED_AT_FIRST for q in r.properties):
            continue  # a run cut short at its first violation: one "not judged" line says so (CheckReport.reasons)
        where = f"({r.scenario}, {r.variant}, {r.engine})"
        if p.expectation is Expectation.SOMETIMES:
            console.print(f"[yellow]note[/yellow] sometimes property {p.name} {where} never fired")
            continue
        if p.detail and not p.detail.startswith("partner never reached: "):  # e.g. a documented finding not reproduced
            console.print(f"[red bold]untested[/red bold] {p.name} {where}: {p.detail}")
            continue
        missing = (p.detail or "").removeprefix("partner never reached: ") or "its partners"
        console.print(f"[red bold]untested[/red bold] {p.name} {where}: partner {missing} never fired")


def cmd_mutants(args: argparse.Namespace) -> int:
    """``keos mutants``."""
    _engines(args.engine)
    console = _console(args.json)
    out = Path(args.out)
    interrupted = False
    try:
        all_rows = api.mutants(
            args.engine,
            seed=args.seed,
            examples=args.examples,
            max_depth=args.max_depth,
            time_budget_s=args.time_budget,
            max_memory_mb=args.max_memory,
            out=out,
            on_run=lambda engine, v, sc: _console(True).print(f"[bold]{engine}[/bold] mutant {v} on {sc}"),
        )
    except api.MutantsInterrupted as stop:  # Ctrl-C: the variants finished so far are reported, exit 4
        all_rows, interrupted = stop.rows, True
    out.mkdir(parents=True, exist_ok=True)
    (out / "mutants.json").write_text(json.dumps(all_rows, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps({"keos_version": KEOS_VERSION, "mutants": all_rows}, indent=2))
    from keos.reports.terminal import render_mutants

    render_mutants(console, all_rows)
    if args.junit:
        from keos.reports.junit import write_mutants_junit

        console.print(f"JUnit report: {write_mutants_junit(Path(args.junit), all_rows)}")
    missed = [r for r in all_rows if r["covered"] and not r["caught"]]
    timed_out = [r for r in missed if r.get("timed_out")]
    for r in missed:
        why = "its time budget ran out first" if r.get("timed_out") else "no invariant caught it"
        console.print(f"[red]not caught: {r['variant']} ({r['engine']}): {why}[/red]", soft_wrap=True)
    if interrupted:
        console.print(f"[yellow]PARTIAL: interrupted after {len(all_rows)} variant(s); mutants.json holds them "
                      "(exit 4)[/yellow]")
        return EXIT_VIOLATION if len(timed_out) < len(missed) else EXIT_PARTIAL
    if missed and len(timed_out) == len(missed):
        return EXIT_PARTIAL
    return EXIT_VIOLATION if missed else EXIT_OK


def cmd_explore(args: argparse.Namespace) -> int:
    """``keos explore``: BFS with statistics and an optional graph export."""
    scenario = resolve_scenario(args.scenario)
    variant = _variant(args.variant) or scenario.variant
    build_model(scenario, variant)  # validate the combination before any work
    graph_path = Path(args.graph) if args.graph else None
    if graph_path is not None and graph_path.suffix not in (".graphml", ".dot", ".gv"):
        raise UsageError(f"--graph must end in .graphml or .dot, got {graph_path.name!r}")
    console = _console(args.json)
    from keos.reports.terminal import explore_progress, make_progress

    progress = make_progress(console)
    progress.disable = not console.is_terminal
    ci_progress = _progress_reporter(console)
    out = Path(args.out)
    api.clear_stale_traces(out)
    try:
        with progress:
            bar = explore_progress(progress, f"explore {scenario.name} ({variant})")

            def callback(states: int, transitions: int, depth: int) -> None:
                bar(states, transitions, depth)
                if not console.is_terminal:
                    ci_progress("explore", {"states": states, "transitions": transitions, "depth": depth})

            result, graph = api.explore(
                scenario,
                variant=variant,
                max_depth=args.max_depth,
                max_states=args.max_states,
                graph=graph_path is not None,
                progress=callback,
                time_budget_s=args.time_budget,
                max_memory_mb=args.max_memory,
                engine=args.engine,
                **_search_args(args),
            )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except MemoryError:
        api.write_summary(out, [], "explore", stopped="out of memory (MemoryError)")
        print("keos: out of memory; set --max-memory below the machine's memory (exit 4)", file=sys.stderr)
        return EXIT_PARTIAL
    except KeyboardInterrupt:
        api.write_summary(out, [], "explore", stopped="interrupted")
        print("keos: interrupted; summary.json is marked partial (exit 4)", file=sys.stderr)
        return EXIT_PARTIAL
    api.write_traces(result, out, scenario)
    api.write_summary(out, [result], "explore")
    if graph is not None and graph_path is not None:
        import networkx as nx

        from keos.reports.graph import label_graph, to_dot

        label_graph(graph, result)
        graph_path.parent.mkdir(parents=True, exist_ok=True)
        if graph_path.suffix == ".graphml":
            nx.write_graphml(graph, graph_path)
        else:
            graph_path.write_text(to_dot(graph), encoding="utf-8")
        console.print(f"state graph ({graph.number_of_nodes()} states, {graph.number_of_edges()} edges): {graph_path}")
    stats = result.stats
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    console.print(
        f"distinct states: {stats['distinct_states']:,}  transitions: {stats['transitions']:,}  "
        f"max depth: {stats['max_depth']}  time: {stats['elapsed_s']:.2f}s  states/s: {stats['states_per_s']:,}"
    )
    from keos.reports.terminal import render_coverage, render_summary, render_transition_coverage

    render_summary(console, [result])
    render_coverage(console, result.coverage)
    if any(e.startswith("txn:") for e in result.coverage):
        from keos.checker.coverage import transition_coverage

        render_transition_coverage(console, transition_coverage(result.coverage))
    report = api.CheckReport(results=[result])
    _explain_exit(console, report)
    return report.exit_code


def cmd_replay(args: argparse.Namespace) -> int:
    """``keos replay TRACE``: confirm (exit 1) or refute (exit 0) a recorded violation."""
    outcome = api.replay(args.trace)
    data, result, drawn = outcome.data, outcome.replay, outcome.drawn
    # Stdout carries one thing (JSON, the Mermaid diagram or the drawing); the verdict goes to stderr
    # whenever stdout is machine-readable, so `keos replay T --mermaid > f.mmd` writes only the diagram.
    console = _console(args.json or args.mermaid)
    summary = {
        "trace": str(args.trace),
        "scenario": outcome.scenario.name,
        "scenario_from": outcome.scenario_from,
        "variant": data["variant"],
        "invariant": data["invariant"],
        "confirmed": result.confirmed,
        "reason": result.reason,
        "steps": len(data["actions"]),
        "first_violation_at": result.violated_at,
        "liveness": data.get("liveness"),
        "loop_start": data.get("loop_start"),
        "differences": outcome.differences,
    }
    if args.itf:
        from keos.reports.itf import write_itf

        summary["itf"] = str(write_itf(Path(args.itf), outcome))
    if args.json:
        print(json.dumps(summary, indent=2))
    elif args.mermaid:
        from keos.reports.trace_text import sequence_diagram

        print(sequence_diagram(drawn))
    else:
        from keos.reports.trace_text import render_trace

        render_trace(console, drawn)
    from rich.markup import escape

    console.print(
        f"[dim]drawn: the {len(drawn['steps'])} steps re-executed on scenario {outcome.scenario.name} "
        f"({outcome.scenario_from}), not the stored ones[/dim]"
    )
    for line in outcome.differences:
        console.print(f"[yellow]the trace file differs from its replay: {escape(line)}[/yellow]")
    if args.itf:
        console.print(f"ITF trace: {summary['itf']}")
    verdict = "[red]CONFIRMED[/red]" if result.confirmed else "[green]REFUTED[/green]"
    console.print(f"{verdict}: {escape(result.reason)}")
    return EXIT_VIOLATION if result.confirmed else EXIT_OK


def cmd_export_itf(args: argparse.Namespace) -> int:
    """``keos export-itf TRACE --output F``: the re-executed trace in Apalache's Informal Trace Format."""
    from keos.reports.itf import write_itf

    outcome = api.replay(args.trace)
    path = write_itf(Path(args.output), outcome)
    console = _console(False)
    console.print(f"ITF trace ({len(outcome.drawn['steps']) + 1} states): {path}")
    return EXIT_OK


def _list_arg(flag: str, text: str, convert: Any, what: str) -> tuple[Any, ...]:
    """A comma-separated flag value (``--retries 0,1,2``), converted item by item, duplicates dropped."""
    items = [t.strip() for t in text.split(",")]
    try:
        values = tuple(convert(t) for t in items if t)
    except ValueError:
        values = ()
    if not values or len(values) != len(items):
        raise UsageError(f"{flag} must be a comma-separated list of {what}, got {text!r}")
    return tuple(dict.fromkeys(values))


def _acks_item(text: str) -> str:
    if text not in ("all", "1", "0", "-1"):
        raise ValueError(text)
    return "all" if text == "-1" else text


def _bool_item(text: str) -> bool:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise ValueError(text)


def cmd_config_space(args: argparse.Namespace) -> int:
    """``keos config-space``: which producer configs admit a violation, as z3 queries with replayed witnesses."""
    try:
        from keos.checker.bmc.config_space import DEFAULT_INVARIANTS, config_space
    except ImportError as exc:
        raise UsageError(f"config-space needs the z3 solver ({exc})") from None
    if args.max_depth > MAX_BMC_DEPTH:
        raise UsageError(
            f"--max-depth {args.max_depth}: at most {MAX_BMC_DEPTH} for z3 queries (every step is "
            "encoded before the time budget can stop it)"
        )
    scenario = resolve_scenario(args.scenario)
    invariants = tuple(args.invariant) if args.invariant else DEFAULT_INVARIANTS
    retries = _list_arg("--retries", args.retries, int, "integers")
    max_in_flight = _list_arg("--max-in-flight", args.max_in_flight, int, "integers")
    acks = _list_arg("--acks", args.acks, _acks_item, "all, 1 or 0")
    idempotence = _list_arg("--idempotence", args.idempotence, _bool_item, "true or false")
    out = Path(args.out)
    console = _console(args.json)

    def progress(row: Any) -> None:
        if console.is_terminal:
            console.print(
                f"  [dim]bmc: idempotence={str(row.enable_idempotence).lower()} acks={row.acks} "
                f"retries={row.retries} max.in.flight={row.max_in_flight}[/dim]"
            )

    console.print(f"[bold]config-space[/bold] {scenario.name} [dim]depth={args.max_depth}[/dim]")
    rows = config_space(
        scenario,
        invariants,
        args.max_depth,
        args.time_budget,
        retries,
        max_in_flight,
        out_dir=out,
        acks=acks,
        idempotence=idempotence,
        progress=progress,
    )
    data = {
        "keos_version": KEOS_VERSION,
        "command": "config-space",
        "scenario": scenario.name,
        "scenario_source": scenario.source,
        "variant": "kafka",
        "invariants": list(dict.fromkeys(invariants)),
        "max_depth": args.max_depth,
        "time_budget_s": args.time_budget,
        "rows": [r.to_json() for r in rows],
    }
    summary = out / "config-space" / "summary.json"
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(data, indent=2))
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    table = Table(title=f"producer configurations on {scenario.name} (z3 BMC, variant kafka, depth {args.max_depth})")
    for col in ("enable.idempotence", "acks", "retries", "max.in.flight"):
        table.add_column(col, justify="right")
    table.add_column("status", overflow="fold")
    for r in rows:
        style = "red" if r.traces or r.disagreements else ("dim" if r.outcome != "checked" else "green")
        table.add_row(
            str(r.enable_idempotence).lower(),
            r.acks,
            str(r.retries),
            str(r.max_in_flight),
            Text("\n".join(r.status_parts()), style=style),
        )
    console.print(table)
    console.print(f"summary: {escape(str(summary))}")
    disagreeing = [(r, name, why) for r in rows for name, why in r.disagreements.items()]
    for r, name, why in disagreeing:
        console.print(
            f"[red bold]engine disagreement[/red bold] (idempotence={r.enable_idempotence}, acks={r.acks}, "
            f"retries={r.retries}, max.in.flight={r.max_in_flight}) {name}: {escape(why)}"
        )
    return EXIT_ENGINE_DISAGREEMENT if disagreeing else EXIT_OK


#: Marks the comment line of an ``export-aiger`` file that records its settings (JSON), for ``import-witness``.
EXPORT_TAG = "keos-export"


def _circuit_settings(args: argparse.Namespace) -> None:
    """Fill ``import-witness`` settings not given on the command line from ``--circuit``'s recorded ones."""
    if args.circuit is not None:
        try:
            data = read_user_file(args.circuit, "circuit", MAX_TRACE_BYTES)
        except InputFileError as exc:
            raise UsageError(str(exc)) from None
        at = data.rfind(f"\n{EXPORT_TAG} ".encode())
        try:
            line = data[at + len(EXPORT_TAG) + 2 :].split(b"\n", 1)[0]
            recorded = json.loads(line) if at >= 0 else None
        except ValueError:
            recorded = None
        if not isinstance(recorded, dict):
            raise UsageError(f"{args.circuit}: no {EXPORT_TAG} settings line (not written by keos export-aiger?)")
        for key, attr in (
            ("scenario", "scenario"),
            ("variant", "variant"),
            ("slots", "slots"),
            ("bits", "bits"),
            ("invariants", "invariant"),
        ):
            if getattr(args, attr) is None:
                setattr(args, attr, recorded.get(key))
    if args.scenario is None:
        raise UsageError("import-witness needs --scenario (or --circuit)")
    if args.bits is None:
        args.bits = 6


def _fixed_encoding(args: argparse.Namespace) -> tuple[Scenario, str, Any, Any, list[str]]:
    """Scenario, variant, model, fixed-size encoding and invariants of ``export-aiger`` / ``import-witness``."""
    try:
        from keos.checker.bmc.encoding import INVARIANTS
        from keos.checker.bmc.encoding import covers as encoding_covers
        from keos.checker.bmc.fixed import FixedEncoding
    except ImportError as exc:
        raise UsageError(f"{args.command} needs the z3 solver ({exc})") from None
    scenario = resolve_scenario(args.scenario)
    if scenario.model != "idempotence":
        raise UsageError(f"{args.command} covers idempotence scenarios; {scenario.name} is a {scenario.model} scenario")
    variant = args.variant or scenario.variant
    model = build_model(scenario, variant)
    ok, why = encoding_covers(model)  # type: ignore[arg-type]
    if not ok:
        raise UsageError(f"{scenario.name}: {why}")
    invariants = list(dict.fromkeys(getattr(args, "invariant", None) or INVARIANTS))
    unknown = [name for name in invariants if name not in INVARIANTS]
    if unknown:
        raise UsageError(f"unknown invariant(s) {', '.join(unknown)} (encoded: {', '.join(INVARIANTS)})")
    if (args.slots is not None and args.slots < 1) or not 4 <= args.bits <= 16:
        raise UsageError("--slots must be >= 1 and --bits between 4 and 16")
    enc = FixedEncoding(model, slots=args.slots, bits=args.bits)  # type: ignore[arg-type]
    return scenario, variant, model, enc, invariants


def cmd_export_aiger(args: argparse.Namespace) -> int:
    """``keos export-aiger``: the idempotence core as an AIGER circuit for hardware model checkers (ABC, ...)."""
    from keos.checker.bmc.fixed import circuit

    scenario, variant, _model, enc, invariants = _fixed_encoding(args)
    aig = circuit(enc, invariants)
    out = Path(args.output or f"{scenario.name}.aig")
    given = str(Path(args.scenario).resolve()) if args.scenario.endswith(".toml") else args.scenario
    settings = {"scenario": given, "variant": variant, "slots": enc.K, "bits": enc.width, "invariants": invariants}
    comments = [
        f"{EXPORT_TAG} {json.dumps(settings)}",
        f"keos {KEOS_VERSION} export-aiger: scenario {scenario.name}, variant {variant}",
        f"slots {enc.K}, bits {enc.width}; inputs k = template number, m = message slot",
        "templates: " + ", ".join(f"{i}={t.kind}{list(t.args)}" for i, t in enumerate(enc.templates)),
        "bad 0 (overflow) reachable: a bound of the encoding is too small, raise --slots or --bits",
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as stream:
        aig.write(stream, comments)
    data = {
        "keos_version": KEOS_VERSION,
        "command": "export-aiger",
        "scenario": scenario.name,
        "variant": variant,
        "output": str(out),
        "slots": enc.K,
        "bits": enc.width,
        "inputs": len(aig.inputs),
        "latches": len(aig.latches),
        "ands": len(aig.ands),
        "bad": [name for name, _ in aig.bad],
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return EXIT_OK
    console = _console(False)
    console.print(f"[bold]export-aiger[/bold] {scenario.name} [dim]variant={variant}[/dim] -> {out}")
    console.print(
        f"  {len(aig.inputs)} inputs, {len(aig.latches)} latches, {len(aig.ands)} AND gates; "
        f"bad outputs: " + ", ".join(f"{i}={name}" for i, (name, _) in enumerate(aig.bad))
    )
    console.print(
        f"  [dim]e.g. berkeley-abc -c 'read_aiger {out}; pdr -a' (bad 0 = a bound to raise, not a protocol bug)[/dim]"
    )
    return EXIT_OK


def cmd_import_witness(args: argparse.Namespace) -> int:
    """``keos import-witness``: a model checker's counterexample on the exported circuit, as a replayed trace."""
    from keos.checker.bmc.fixed import witness_actions
    from keos.checker.trace import make_trace

    _circuit_settings(args)
    scenario, variant, model, enc, invariants = _fixed_encoding(args)
    try:
        text = read_user_file(args.witness, "witness", MAX_TRACE_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise UsageError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.witness}: not an ASCII AIGER witness (byte {exc.start})") from None
    try:
        actions = witness_actions(enc, text)
    except ValueError as exc:
        raise UsageError(f"{args.witness}: {exc}") from None
    props = [p for p in model.properties() if p.name in invariants]
    state = model.init_states()[0]
    n, broken = 0, [p for p in props if not p.holds(state)]
    while not broken and n < len(actions):
        state = model.step(state, actions[n]).state
        n += 1
        broken = [p for p in props if not p.holds(state)]
    if not broken:
        raise UsageError(
            f"{args.witness}: its {len(actions)} steps violate none of {', '.join(invariants)} on "
            f"{scenario.name} (variant {variant}); a witness of bad output 0 (overflow) means "
            "--slots or --bits is too small"
        )
    prop = broken[0]
    trace = make_trace(
        model, prop, actions[:n], "aiger-witness", scenario.name, variant, permitted=prop.name in scenario.permitted
    )
    path = trace.write(model, Path(args.out) / "aiger-witness" / scenario.name / variant / f"{prop.name}.trace.json")
    console = _console(args.json)
    if args.json:
        print(
            json.dumps(
                {
                    "keos_version": KEOS_VERSION,
                    "command": "import-witness",
                    "scenario": scenario.name,
                    "variant": variant,
                    "invariant": prop.name,
                    "steps": n,
                    "trace": str(path),
                },
                indent=2,
            )
        )
    else:
        console.print(f"[red bold]violated[/red bold] {prop.name} -- {n} steps, replayed on the model: {path}")
    return EXIT_OK if prop.name in scenario.permitted else EXIT_VIOLATION


def cmd_bench(args: argparse.Namespace) -> int:
    """``keos bench``: explicit-state throughput (distinct states per second, one core)."""
    scenarios = _scenarios(args.scenario)
    console = _console(args.json)
    rows = []
    for scenario in scenarios:
        model = build_model(scenario)
        best: dict[str, Any] | None = None
        for _ in range(args.repeat):
            cpu = time.process_time()
            result, _ = explore(model, scenario.name, scenario.variant, ExploreOptions(), scenario.permitted)
            cpu = time.process_time() - cpu
            rate = round(result.stats["distinct_states"] / cpu)
            stats = dict(result.stats, cpu_s=round(cpu, 3), states_per_cpu_s=rate)
            if best is None or stats["states_per_cpu_s"] > best["states_per_cpu_s"]:
                best = stats
        if best is None:
            raise UsageError("--repeat must be >= 1")
        rows.append({"scenario": scenario.name, **best})
    if args.json:
        print(json.dumps({"keos_version": KEOS_VERSION, "bench": rows}, indent=2))
    from rich.table import Table

    table = Table(title=f"explicit-state search, best of {args.repeat} (one core, invariants checked)")
    for col in ("scenario", "distinct states", "transitions", "depth", "wall s", "states/s", "CPU s", "states/CPU-s"):
        table.add_column(col, justify="right" if col != "scenario" else "left")
    for r in rows:
        table.add_row(
            r["scenario"],
            f"{r['distinct_states']:,}",
            f"{r['transitions']:,}",
            str(r["max_depth"]),
            f"{r['elapsed_s']:.2f}",
            f"{r['states_per_s']:,}",
            f"{r['cpu_s']:.2f}",
            f"{r['states_per_cpu_s']:,}",
        )
    console.print(table)
    console.print(
        "[dim]states/CPU-s divides by the process's CPU time, so other load on the machine affects it far less "
        "than states/s (wall clock).[/dim]"
    )
    return EXIT_OK


# -- parser ---------------------------------------------------------------------------------------


class _Help(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Help text that keeps the examples' line breaks and shows every default."""


def _command(sub: Any, name: str, help: str, examples: str, aliases: Sequence[str] = ()) -> _Parser:
    """A subcommand with its one-line help, examples and the exit codes in its ``--help``."""
    parser: _Parser = sub.add_parser(
        name,
        help=help,
        description=help,
        aliases=list(aliases),
        formatter_class=_Help,
        epilog=f"examples:\n{examples}\n\n{EXIT_CODES}",
    )
    return parser


def _out_flag(s: _Parser, default: str = "keos-out", what: str = "traces and summary.json") -> None:
    s.add_argument("--out", "--output-dir", dest="out", default=default, metavar="DIR", help=f"directory for {what}")


def _budget_flags(s: _Parser, time_default: float | None, per: str) -> None:
    default = " (default: 60 for bmc, none for explore and hypothesis)" if time_default is None else ""
    s.add_argument(
        "--time-budget",
        type=budget_seconds,
        default=time_default,
        metavar="SECONDS",
        help=f"seconds {per}; a run that reaches it stops with partial results, exit 4 (0 = no limit)" + default,
    )
    s.add_argument(
        "--max-memory",
        type=non_negative_int,
        default=0,
        metavar="MIB",
        help="stop with partial results (exit 4) when keos's resident memory reaches this (0 = no limit)",
    )


def _kernel_flag(s: _Parser) -> None:
    """``--kernel``: the interpreted model (default) or its mypyc build (checker/kernel.py, issue 27)."""
    s.add_argument("--kernel", default="interpreted", choices=("interpreted", "compiled"),
                   help="compiled: run the model compiled with mypyc, built once per source hash into "
                        "~/.cache/keos (a stale build is never used: it is rebuilt, or the interpreted "
                        "model runs and says so on stderr); default interpreted")


def _search_flags(s: _Parser, spark: str) -> None:
    """The explicit search's processes, visited set and Spark master (check and explore)."""
    s.add_argument(
        "--workers",
        type=positive_int,
        default=1,
        metavar="N",
        help="processes sharing an explore search (default 1: the sequential reference search; N > 1: "
        "the level-synchronous search hash-partitioned over N forked workers -- same verdicts and "
        "shortest traces, stuck states but not fair livelocks; on this project's shared 2-core machine 2 "
        "workers ran at 0.93x one worker's wall time on 408k states, see README)",
    )
    s.add_argument(
        "--compact-visited",
        action="store_true",
        help="explore: visited states as sorted 64-bit fingerprints, 8 bytes a state (level-synchronous)",
    )
    s.add_argument(
        "--spill-dir",
        metavar="DIR",
        help="explore: keep the compact visited set in memory-mapped files in DIR (level-synchronous)",
    )
    s.add_argument(
        "--master",
        default="local[*]",
        help=f"Spark master of {spark}: local[*] (default), local[N], spark://HOST:PORT, sc://HOST:PORT",
    )


def _search_args(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "workers": args.workers,
        "compact_visited": args.compact_visited,
        "spill_dir": args.spill_dir,
        "master": args.master,
    }


def _parser() -> _Parser:
    p = _Parser(
        prog="keos",
        description="Verify Apache Kafka's exactly-once semantics on an executable model.",
        formatter_class=_Help,
        epilog="examples:\n  keos check                      # the default gate\n"
        "  keos check --scenario my.toml --html report.html --junit junit.xml\n"
        "  keos replay keos-out/explore/idempotence_retry/no_idempotence/no_duplicate_append.trace.json\n\n"
        + EXIT_CODES,
    )
    p.add_argument("--version", action="version", version=f"keos {KEOS_VERSION}")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="also show third-party logs (librdkafka, py4j, Spark) on stderr; they always go to "
                        "OUT/keos.log, summarised in one line (the flag may be given anywhere on the line)")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")

    s = _command(sub, "list", "components, invariants, scenarios, variants", "  keos list\n  keos list --json")
    s.add_argument("--json", action="store_true", help="machine-readable listing on stdout")
    s.set_defaults(func=cmd_list)

    s = _command(
        sub,
        "check",
        "check invariants on scenarios (exit 1 on a violation)",
        "  keos check\n  keos check --scenario idempotence_retry --variant small_duplicate_window\n"
        "  keos check --scenario my.toml --engine all --json --junit junit.xml --sarif keos.sarif\n"
        "  keos check --strict --set reach --skip-default --jobs 2   # the gate's second step",
    )
    s.add_argument(
        "--scenario",
        action="append",
        metavar="NAME|FILE",
        help="built-in name or TOML file; repeatable (default: the default scenarios)",
    )
    s.add_argument("--set", metavar="NAME", help="a named scenario set (e.g. deep: larger bounds, minutes)")
    s.add_argument(
        "--skip-default",
        action="store_true",
        help="with --set: leave out the set's scenarios that are default ones (the gate checks those in its "
        "first step; scripts/gate.sh runs --set reach --skip-default after it)",
    )
    s.add_argument(
        "--jobs",
        type=positive_int,
        default=1,
        metavar="N",
        help="runs (scenario x engine) at a time in a pool of forked processes; the report and "
        "exit code are those of --jobs 1 apart from timing figures; a worker that dies is exit 3",
    )
    s.add_argument("--engine", default="explore", help=f"{', '.join(ENGINES)} or all")
    s.add_argument("--variant", help="protocol variant (default: each scenario's own); see keos list")
    _out_flag(s)
    s.add_argument("--json", action="store_true", help="machine-readable summary on stdout (human output on stderr)")
    s.add_argument("--html", metavar="FILE", help="write an HTML report")
    s.add_argument("--junit", metavar="FILE", help="write a JUnit XML report")
    s.add_argument("--sarif", metavar="FILE", help="write a SARIF 2.1.0 report (CI code-scanning views)")
    s.add_argument("--seed", type=non_negative_int, default=0, help="seed of randomized engines")
    s.add_argument("--max-depth", type=non_negative_int, default=0, help="steps per run (0 = the scenario's bound)")
    s.add_argument(
        "--max-states",
        type=non_negative_int,
        default=0,
        help="distinct states per run; reaching it gives partial results, exit 4 (0 = the scenario's)",
    )
    s.add_argument("--examples", type=non_negative_int, default=0, help="hypothesis: examples per run (0 = 300)")
    s.add_argument("--stop-on-first", action="store_true", help="stop each run at its first violation")
    s.add_argument(
        "--strict",
        action="store_true",
        help="also exit 1 when an invariant is untested (a sometimes-partner never fired); says which",
    )
    _budget_flags(s, None, "per run (scenario x engine)")
    _search_flags(s, "--engine spark-bfs")
    _kernel_flag(s)
    s.set_defaults(func=cmd_check)

    s = _command(
        sub,
        "mutants",
        "prove the gate catches every weakened variant",
        "  keos mutants\n  keos mutants --engine bmc --junit mutants.xml",
    )
    s.add_argument("--engine", default="explore", help=f"{', '.join(ENGINES)} or all")
    _out_flag(s, what="mutants.json and the traces")
    s.add_argument("--json", action="store_true", help="machine-readable rows on stdout")
    s.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (one test case per variant)")
    s.add_argument("--seed", type=non_negative_int, default=0, help="seed of randomized engines")
    s.add_argument("--examples", type=non_negative_int, default=0, help="hypothesis: examples per run (0 = 300)")
    s.add_argument("--max-depth", type=non_negative_int, default=0, help="steps per run (0 = the scenario's bound)")
    _budget_flags(s, 300.0, "per variant")
    s.set_defaults(func=cmd_mutants)

    s = _command(
        sub,
        "explore",
        "breadth-first search with statistics and graph export",
        "  keos explore --scenario idempotence_retry\n"
        "  keos explore --scenario my.toml --variant no_idempotence --graph states.dot",
    )
    s.add_argument("--scenario", required=True, metavar="NAME|FILE", help="built-in name or TOML file")
    s.add_argument("--variant", help="protocol variant (default: the scenario's own)")
    s.add_argument(
        "--graph",
        metavar="FILE",
        help="export the state graph (.graphml or .dot): labelled states, the counterexample path marked",
    )
    s.add_argument("--max-depth", type=non_negative_int, default=0, help="steps (0 = the scenario's bound)")
    s.add_argument(
        "--max-states",
        type=non_negative_int,
        default=0,
        help="distinct states; reaching it gives partial results, exit 4 (0 = the scenario's)",
    )
    _out_flag(s)
    s.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    _budget_flags(s, 0.0, "for the search")
    s.add_argument(
        "--engine",
        default="local",
        choices=("local", "spark"),
        help="local: this machine's processes (default); spark: the level-synchronous search on Spark",
    )
    _search_flags(s, "--engine spark")
    _kernel_flag(s)
    s.set_defaults(func=cmd_explore)

    s = _command(
        sub,
        "replay",
        "re-execute a trace and confirm its violation (exit 1) or refute it (exit 0)",
        "  keos replay T.trace.json\n  keos replay T.trace.json --mermaid > t.mmd\n"
        "  keos replay T.trace.json --itf t.itf.json",
    )
    s.add_argument("trace", help="a .trace.json file written by keos")
    s.add_argument("--json", action="store_true", help="the verdict as JSON on stdout")
    s.add_argument(
        "--mermaid", action="store_true", help="only a Mermaid sequence diagram on stdout (the verdict goes to stderr)"
    )
    s.add_argument("--itf", metavar="FILE", help="also write the re-executed trace in Apalache's ITF (JSON)")
    s.set_defaults(func=cmd_replay)

    s = _command(
        sub,
        "export-itf",
        "write a trace, re-executed, in Apalache's Informal Trace Format",
        "  keos export-itf T.trace.json --output t.itf.json",
    )
    s.add_argument("trace", help="a .trace.json file written by keos")
    s.add_argument("--output", "-o", "--itf", dest="output", required=True, metavar="FILE", help="the ITF file")
    s.set_defaults(func=cmd_export_itf)

    s = _command(
        sub,
        "config-space",
        "which producer configs admit a duplicate or reordering (z3, replayed witnesses)",
        "  keos config-space --scenario idempotence_retry --retries 0,1 --max-in-flight 1,5",
    )
    s.add_argument("--scenario", required=True, metavar="NAME|FILE", help="an idempotence scenario")
    s.add_argument(
        "--invariant", action="append", metavar="NAME", help="repeatable; default: a duplicate and a reordering"
    )
    s.add_argument(
        "--max-depth",
        type=positive_int,
        default=12,
        help=f"steps per query (at most {MAX_BMC_DEPTH}: z3 encodes every step before it solves)",
    )
    s.add_argument(
        "--time-budget",
        type=budget_seconds,
        default=60.0,
        metavar="SECONDS",
        help="seconds for the whole grid (0 = unlimited)",
    )
    s.add_argument("--retries", default="0,1,2", metavar="LIST", help="retries values, comma-separated")
    s.add_argument("--max-in-flight", default="1,2,5", metavar="LIST", help="max.in.flight values, comma-separated")
    s.add_argument("--acks", default="all,1,0", metavar="LIST", help="acks values, comma-separated")
    s.add_argument("--idempotence", default="true,false", metavar="LIST", help="enable.idempotence values")
    _out_flag(s, what="derived scenarios, traces and summary.json")
    s.add_argument("--json", action="store_true", help="the rows as JSON on stdout")
    s.set_defaults(func=cmd_config_space)

    s = _command(
        sub,
        "export-aiger",
        "the idempotence core as an AIGER circuit, for hardware model checkers such as ABC",
        "  keos export-aiger --scenario idempotence_retry --variant no_idempotence --output retry.aig",
    )
    s.add_argument("--scenario", required=True, metavar="NAME|FILE", help="an idempotence scenario")
    s.add_argument("--variant", help="protocol variant (default: the scenario's)")
    s.add_argument("--invariant", action="append", metavar="NAME", help="repeatable; default: every encoded one")
    s.add_argument("--output", "-o", metavar="FILE", help="the circuit file (default: SCENARIO.aig)")
    s.add_argument("--slots", type=positive_int, help="network slots (default: from the in-flight limit)")
    s.add_argument("--bits", type=positive_int, default=6, help="bits per integer, 4..16")
    s.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    s.set_defaults(func=cmd_export_aiger)

    s = _command(
        sub,
        "import-witness",
        "a model checker's counterexample on an export-aiger circuit, replayed as a trace",
        "  keos import-witness retry.cex --circuit retry.aig",
    )
    s.add_argument("witness", help="AIGER witness (e.g. berkeley-abc's write_cex -a)")
    s.add_argument("--circuit", metavar="FILE", help="the export-aiger file: its settings are used for the rest")
    s.add_argument("--scenario", metavar="NAME|FILE", help="as given to export-aiger (required without --circuit)")
    s.add_argument("--variant", help="as given to export-aiger")
    s.add_argument("--invariant", action="append", metavar="NAME", help="as given to export-aiger")
    s.add_argument("--slots", type=positive_int, help="as given to export-aiger")
    s.add_argument("--bits", type=positive_int, help="as given to export-aiger (default 6)")
    _out_flag(s, what="the trace")
    s.add_argument("--json", action="store_true", help="machine-readable result on stdout")
    s.set_defaults(func=cmd_import_witness)

    s = _command(
        sub,
        "bench",
        "explicit-state throughput on the default scenarios",
        "  keos bench --repeat 1 --scenario idempotence_retry",
    )
    s.add_argument("--scenario", action="append", metavar="NAME|FILE", help="repeatable (default: the default ones)")
    s.add_argument("--repeat", type=positive_int, default=3, help="runs per scenario; the best is shown")
    s.add_argument("--json", action="store_true", help="machine-readable rows on stdout")
    _kernel_flag(s)
    s.set_defaults(func=cmd_bench)

    importlib.import_module("keos.checker.cli.conform").register(sub)  # keos conform (real clients and brokers)
    importlib.import_module("keos.checker.cli.assignors").register(sub)
    importlib.import_module("keos.checker.cli.differential").register(sub)  # keos differential (issue 26)
    importlib.import_module("keos.checker.cli.reach").register(sub)  # keos coverage, keos mutate (issue 23)

    try:
        sweep = importlib.import_module("keos.checker.sweep.campaign")
    except ImportError:
        sweep = None
    if sweep is not None and hasattr(sweep, "add_sweep_arguments"):
        s = sub.add_parser("sweep", help="randomized failure-injection sweeps on Spark")
        sweep.add_sweep_arguments(s)
        s.set_defaults(func=sweep.run_sweep_command)
    return p


#: Flags naming an output directory / an output file, checked before any work starts.
OUTPUT_DIRS = {"out": "--out", "spill_dir": "--spill-dir"}
OUTPUT_FILES = {
    "html": "--html",
    "junit": "--junit",
    "sarif": "--sarif",
    "graph": "--graph",
    "output": "--output",
    "itf": "--itf",
}


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse output paths that cannot be written, before the run (not after it)."""
    for attr, flag in OUTPUT_DIRS.items():
        value = getattr(args, attr, None)
        if value is not None and (why := guard.check_output_dir(value, flag)):
            raise UsageError(why)
    for attr, flag in OUTPUT_FILES.items():
        value = getattr(args, attr, None)
        if value is not None and (why := guard.check_output_file(value, flag)):
            raise UsageError(why)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``keos`` command: run one command and return its documented exit code.

    Nothing escapes as a traceback: bad input is one line and exit 2; a closed stdout pipe
    (``keos list | head -1``) silences the rest of the output; Ctrl-C and running out of memory
    exit 4 with what was finished; any other exception is a keos bug, written to a crash report
    file, exit 3.
    """
    argv_given = argv is not None
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout = sys.stdout
    # Every rich Console (the sweep's, the assignors', conform's too) reads COLUMNS when it is created: not on
    # a terminal and unset, make it wide, so a CI log gets whole tables instead of ones cut at 80 columns.
    columns = os.environ.get("COLUMNS")
    if columns is None and not stdout.isatty():
        os.environ["COLUMNS"] = str(CI_WIDTH)
    sys.stdout = guard.PipeSafeStream(stdout)
    restore_sigterm = guard.sigterm_as_interrupt()
    args: argparse.Namespace | None = None
    try:
        parser = _parser()
        verbose = any(a in ("--verbose", "-v") for a in argv)
        args = parser.parse_args([a for a in argv if a not in ("--verbose", "-v")])
        if args.command is None:
            raise UsageError("a command is required: list, check, mutants, explore, replay, ... (keos --help)")
        _conflicts(args)
        _check_outputs(args)
        if getattr(args, "kernel", "interpreted") == "compiled":  # re-run on the compiled model (checker/kernel.py)
            rerun = importlib.import_module("keos.checker.kernel").run_compiled(argv, replace_process=not argv_given)
            if rerun is not None:
                return int(rerun)
        out = getattr(args, "out", None)
        with logs.capture(Path(out) / "keos.log" if isinstance(out, str) else None, verbose):
            try:
                code: int = args.func(args)
            finally:
                if (line := logs.summary()) is not None and not verbose:
                    print(f"keos: {line}", file=sys.stderr)
        return code
    except (UsageError, ModelError, TraceError) as exc:
        print(f"keos: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (a CI job cancelled)
        print("keos: interrupted; finished results are kept (exit 4)", file=sys.stderr)
        return EXIT_PARTIAL
    except MemoryError:
        print(
            "keos: out of memory; finished results are kept, set --max-memory below the machine's memory (exit 4)",
            file=sys.stderr,
        )
        return EXIT_PARTIAL
    except OSError as exc:
        # The file system refused a read or write keos could not check beforehand (a disk filled up,
        # a file removed mid-run): the environment, not a verdict and not a keos bug.
        where = f" {exc.filename}" if exc.filename else ""
        print(f"keos: error: cannot access{where}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SystemExit as exc:  # argparse's --help / --version
        return exc.code if isinstance(exc.code, int) else EXIT_OK
    except Exception as exc:
        return _crash(argv, args, exc)
    finally:
        restore_sigterm()
        if columns is None:
            os.environ.pop("COLUMNS", None)
        safe = sys.stdout
        try:
            safe.flush()
        finally:
            sys.stdout = stdout
            if isinstance(safe, guard.PipeSafeStream) and safe.closed_by_reader:
                guard.silence_closed_stdout(stdout)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _crash(argv: Sequence[str], args: argparse.Namespace | None, exc: BaseException) -> int:
    path = guard.write_crash_report(argv, exc, getattr(args, "out", None))
    print(
        f"keos: internal error: {type(exc).__name__}: {_one_line(exc)[:200]} -- a bug in keos, not a verdict; "
        f"crash report: {path} (exit 3)",
        file=sys.stderr,
    )
    return EXIT_ENGINE_DISAGREEMENT


if __name__ == "__main__":
    sys.exit(main())
