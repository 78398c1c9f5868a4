"""The ``keos`` command line: argument parsing and rendering over :mod:`keos.checker.api`.

Commands (exit codes: 0 every invariant holds, 1 a violation, 2 bad input, 3 an
engine disagreement -- an engine's counterexample did not replay on the model,
which is a keos bug and is never shown as a violation):

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

Bad input (an unknown flag, scenario, variant, a malformed scenario or trace
file) prints one line, ``keos: error: ...``, and exits 2.  Results computed
before a failure are already on disk: each run's traces and the summary are
written as soon as the run finishes.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console

from keos.checker import api
from keos.checker.api import EXIT_BAD_INPUT, EXIT_ENGINE_DISAGREEMENT, EXIT_OK, EXIT_VIOLATION
from keos.checker.engines import ENGINES
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import EngineResult
from keos.checker.trace import KEOS_VERSION, TraceError
from keos.model.interface import ModelError
from keos.model.variants import VARIANTS
from keos.scenarios import Scenario, build_model, builtin_scenarios, resolve_scenario

__all__ = ["EXIT_BAD_INPUT", "EXIT_ENGINE_DISAGREEMENT", "EXIT_OK", "EXIT_VIOLATION", "main"]




class UsageError(Exception):
    """Bad command-line input: one line, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _scenarios(refs: Sequence[str] | None) -> list[Scenario]:
    return [resolve_scenario(r) for r in refs] if refs else list(api.list_scenarios(default_only=True).values())


def _variant(name: str | None) -> str | None:
    if name is not None and name not in VARIANTS:
        raise UsageError(f"unknown variant {name!r} (known: {', '.join(sorted(VARIANTS))})")
    return name


def _engines(name: str) -> list[str]:
    if name != "all" and name not in ENGINES:
        raise UsageError(f"unknown engine {name!r} (known: {', '.join([*ENGINES, 'all'])})")
    return list(ENGINES) if name == "all" else [name]


def _console(json_mode: bool) -> Console:
    # Machine-readable output owns stdout; human output then goes to stderr.
    return Console(stderr=json_mode, highlight=False)


def _progress_reporter(console: Console) -> Any:
    """Progress lines for long runs: at most one a second, and only on a terminal."""
    last = [time.monotonic()]

    def report(engine: str, data: dict[str, Any]) -> None:
        now = time.monotonic()
        if not console.is_terminal or now - last[0] < 1.0:
            return
        last[0] = now
        console.print(
            f"  [dim]{engine}: {data.get('states', 0):,} states, {data.get('transitions', 0):,} transitions, "
            f"depth {data.get('depth', 0)}[/dim]"
        )

    return report


def _render_reports(args: argparse.Namespace, results: list[EngineResult], console: Console) -> None:
    from keos.reports.terminal import render_summary

    render_summary(console, results)
    if getattr(args, "html", None):
        from keos.reports.html import write_html

        traces = {
            str(p.trace_path): json.loads(p.trace_path.read_text())
            for r in results
            for p in r.violations()
            if p.trace_path
        }
        console.print(f"HTML report: {write_html(Path(args.html), results, traces)}")
    if getattr(args, "junit", None):
        from keos.reports.junit import write_junit

        console.print(f"JUnit report: {write_junit(Path(args.junit), results)}")


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
                    "models": [],
                },
            )
            if sc.model not in props[p.name]["models"]:
                props[p.name]["models"].append(sc.model)
    data: dict[str, Any] = {
        "components": _components(),
        "engines": {name: desc for name, (_, desc) in ENGINES.items()},
        "invariants": list(props.values()),
        "scenarios": [
            {
                "name": s.name,
                "model": s.model,
                "default": s.default,
                "variant": s.variant,
                "permitted": list(s.permitted),
                "description": " ".join(s.description.split()),
                "source": s.source,
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

    console = Console(highlight=False)
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
        t.add_row(p["name"], p["expectation"], p["fact"], ", ".join(p["partners"]))
    console.print(t)
    t = Table(title="Scenarios")
    for col in ("name", "model", "default", "description"):
        t.add_column(col)
    for s in data["scenarios"]:
        t.add_row(s["name"], s["model"], "yes" if s["default"] else "", s["description"])
    console.print(t)
    t = Table(title="Variants")
    for col in ("name", "weakened", "expected to break", "bug / rule"):
        t.add_column(col)
    for v in data["variants"]:
        t.add_row(v["name"], "[red]weakened[/red]" if v["weakened"] else "real", ", ".join(v["breaks"]), v["bug"])
    console.print(t)
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


def cmd_check(args: argparse.Namespace) -> int:
    """``keos check``."""
    scenarios = _scenarios(args.scenario)
    _variant(args.variant)
    _engines(args.engine)
    console = _console(args.json)
    report = api.check(
        scenarios,
        variant=args.variant,
        engine=args.engine,
        seed=args.seed,
        max_depth=args.max_depth,
        max_states=args.max_states,
        stop_on_first=args.stop_on_first,
        examples=args.examples,
        time_budget_s=args.time_budget,
        strict=args.strict,
        out=Path(args.out),
        progress=None if args.json else _progress_reporter(console),
        on_run=lambda sc, engine, v: console.print(f"[bold]{engine}[/bold] {sc.name} [dim]variant={v}[/dim]"),
        workers=args.workers,
        max_memory_mb=args.max_memory,
    )
    results = report.results
    if args.json:
        print(json.dumps({"keos_version": KEOS_VERSION, "runs": [r.to_json() for r in results]}, indent=2))
    _render_reports(args, results, console)
    for r, d in report.disagreements():
        console.print(f"[red bold]engine disagreement[/red bold] ({r.engine}, {r.scenario}, {r.variant}): {d}")
    return report.exit_code


def cmd_mutants(args: argparse.Namespace) -> int:
    """``keos mutants``."""
    _engines(args.engine)
    console = _console(args.json)
    out = Path(args.out)
    all_rows = api.mutants(
        args.engine,
        seed=args.seed,
        examples=args.examples,
        max_depth=args.max_depth,
        time_budget_s=args.time_budget,
        out=out,
        on_run=lambda engine, v, sc: console.print(f"[bold]{engine}[/bold] mutant {v} on {sc}"),
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "mutants.json").write_text(json.dumps(all_rows, indent=2) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps({"keos_version": KEOS_VERSION, "mutants": all_rows}, indent=2))
    from keos.reports.terminal import render_mutants

    render_mutants(console, all_rows)
    missed = [r for r in all_rows if r["covered"] and not r["caught"]]
    return EXIT_VIOLATION if missed else EXIT_OK


def cmd_explore(args: argparse.Namespace) -> int:
    """``keos explore``: BFS with statistics and an optional graph export."""
    scenario = resolve_scenario(args.scenario)
    variant = _variant(args.variant) or scenario.variant
    build_model(scenario, variant)  # validate the combination before any work
    graph_path = Path(args.graph) if args.graph else None
    if graph_path is not None and graph_path.suffix not in (".graphml", ".dot", ".gv"):
        raise UsageError(f"--graph must end in .graphml or .dot, got {graph_path.name!r}")
    if args.spill_dir:
        try:
            Path(args.spill_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--spill-dir {args.spill_dir}: {exc.strerror}") from None
    console = _console(args.json)
    from keos.reports.terminal import explore_progress, make_progress

    progress = make_progress(console)
    progress.disable = not console.is_terminal
    try:
        with progress:
            callback = explore_progress(progress, f"explore {scenario.name} ({variant})")
            result, graph = api.explore(
                scenario,
                variant=variant,
                max_depth=args.max_depth,
                max_states=args.max_states,
                graph=graph_path is not None,
                progress=callback,
                workers=args.workers,
                max_memory_mb=args.max_memory,
                compact=args.compact_visited or args.spill_dir is not None,
                spill_dir=Path(args.spill_dir) if args.spill_dir else None,
                engine=args.engine,
                master=args.master,
            )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    out = Path(args.out)
    api.write_traces(result, out, scenario)
    api.write_summary(out, [result], "explore")
    if graph is not None and graph_path is not None:
        import networkx as nx

        graph_path.parent.mkdir(parents=True, exist_ok=True)
        if graph_path.suffix == ".graphml":
            nx.write_graphml(graph, graph_path)
        else:
            graph_path.write_text(_to_dot(graph), encoding="utf-8")
        console.print(f"state graph ({graph.number_of_nodes()} states, {graph.number_of_edges()} edges): {graph_path}")
    stats = result.stats
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    console.print(
        f"distinct states: {stats['distinct_states']:,}  transitions: {stats['transitions']:,}  "
        f"max depth: {stats['max_depth']}  time: {stats['elapsed_s']:.2f}s  states/s: {stats['states_per_s']:,}"
    )
    if stats.get("partial"):
        console.print(f"[yellow]partial result[/yellow]: stopped by {stats['stopped_by']} (not exhaustive)")
    from keos.reports.terminal import render_coverage, render_summary, render_transition_coverage

    render_summary(console, [result])
    render_coverage(console, result.coverage)
    if any(e.startswith("txn:") for e in result.coverage):
        from keos.checker.coverage import transition_coverage

        render_transition_coverage(console, transition_coverage(result.coverage))
    return EXIT_VIOLATION if result.violated else EXIT_OK


def _to_dot(graph: Any) -> str:
    lines = ["digraph keos {", "  node [shape=point];"]
    for node, data in graph.nodes(data=True):
        attrs = ' [shape=doublecircle, label=""]' if data.get("initial") else ""
        lines.append(f'  "{node}"{attrs};')
    for a, b, data in graph.edges(data=True):
        label = str(data.get("action", "")).replace('"', "'")
        lines.append(f'  "{a}" -> "{b}" [label="{label}"];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def cmd_replay(args: argparse.Namespace) -> int:
    """``keos replay TRACE``: confirm (exit 1) or refute (exit 0) a recorded violation."""
    outcome = api.replay(args.trace)
    data, result = outcome.data, outcome.replay
    console = _console(args.json)
    summary = {
        "trace": str(args.trace),
        "scenario": outcome.scenario.name,
        "variant": data["variant"],
        "invariant": data["invariant"],
        "confirmed": result.confirmed,
        "reason": result.reason,
        "steps": len(data["actions"]),
        "first_violation_at": result.violated_at,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    elif args.mermaid:
        from keos.reports.trace_text import sequence_diagram

        print(sequence_diagram(data))
    else:
        from keos.reports.trace_text import render_trace

        render_trace(console, data)
    verdict = "[red]CONFIRMED[/red]" if result.confirmed else "[green]REFUTED[/green]"
    console.print(f"{verdict}: {result.reason}")
    return EXIT_VIOLATION if result.confirmed else EXIT_OK


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
    scenario = resolve_scenario(args.scenario)
    invariants = tuple(args.invariant) if args.invariant else DEFAULT_INVARIANTS
    retries = _list_arg("--retries", args.retries, int, "integers")
    max_in_flight = _list_arg("--max-in-flight", args.max_in_flight, int, "integers")
    acks = _list_arg("--acks", args.acks, str, "all, 1 or 0")
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
            data = Path(args.circuit).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {args.circuit}: {exc.strerror}") from None
        at = data.rfind(f"\n{EXPORT_TAG} ".encode())
        try:
            line = data[at + len(EXPORT_TAG) + 2:].split(b"\n", 1)[0]
            recorded = json.loads(line) if at >= 0 else None
        except ValueError:
            recorded = None
        if not isinstance(recorded, dict):
            raise UsageError(f"{args.circuit}: no {EXPORT_TAG} settings line (not written by keos export-aiger?)")
        for key, attr in (("scenario", "scenario"), ("variant", "variant"), ("slots", "slots"), ("bits", "bits"),
                          ("invariants", "invariant")):
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
    settings = {"scenario": given, "variant": variant, "slots": enc.K, "bits": enc.width,
                "invariants": invariants}
    comments = [f"{EXPORT_TAG} {json.dumps(settings)}",
                f"keos {KEOS_VERSION} export-aiger: scenario {scenario.name}, variant {variant}",
                f"slots {enc.K}, bits {enc.width}; inputs k = template number, m = message slot",
                "templates: " + ", ".join(f"{i}={t.kind}{list(t.args)}" for i, t in enumerate(enc.templates)),
                "bad 0 (overflow) reachable: a bound of the encoding is too small, raise --slots or --bits"]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as stream:
        aig.write(stream, comments)
    data = {"keos_version": KEOS_VERSION, "command": "export-aiger", "scenario": scenario.name,
            "variant": variant, "output": str(out), "slots": enc.K, "bits": enc.width,
            "inputs": len(aig.inputs), "latches": len(aig.latches), "ands": len(aig.ands),
            "bad": [name for name, _ in aig.bad]}
    if args.json:
        print(json.dumps(data, indent=2))
        return EXIT_OK
    console = _console(False)
    console.print(f"[bold]export-aiger[/bold] {scenario.name} [dim]variant={variant}[/dim] -> {out}")
    console.print(f"  {len(aig.inputs)} inputs, {len(aig.latches)} latches, {len(aig.ands)} AND gates; "
                  f"bad outputs: " + ", ".join(f"{i}={name}" for i, (name, _) in enumerate(aig.bad)))
    console.print(f"  [dim]e.g. berkeley-abc -c 'read_aiger {out}; pdr -a' (bad 0 = a bound to raise, "
                  "not a protocol bug)[/dim]")
    return EXIT_OK


def cmd_import_witness(args: argparse.Namespace) -> int:
    """``keos import-witness``: a model checker's counterexample on the exported circuit, as a replayed trace."""
    from keos.checker.bmc.fixed import witness_actions
    from keos.checker.trace import make_trace

    _circuit_settings(args)
    scenario, variant, model, enc, invariants = _fixed_encoding(args)
    try:
        text = Path(args.witness).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {args.witness}: {exc.strerror}") from None
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
        raise UsageError(f"{args.witness}: its {len(actions)} steps violate none of {', '.join(invariants)} on "
                         f"{scenario.name} (variant {variant}); a witness of bad output 0 (overflow) means "
                         "--slots or --bits is too small")
    prop = broken[0]
    trace = make_trace(model, prop, actions[:n], "aiger-witness", scenario.name, variant,
                       permitted=prop.name in scenario.permitted)
    path = trace.write(model, Path(args.out) / "aiger-witness" / scenario.name / variant / f"{prop.name}.trace.json")
    console = _console(args.json)
    if args.json:
        print(json.dumps({"keos_version": KEOS_VERSION, "command": "import-witness", "scenario": scenario.name,
                          "variant": variant, "invariant": prop.name, "steps": n, "trace": str(path)}, indent=2))
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
        assert best is not None
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


def _search_arguments(s: argparse.ArgumentParser) -> None:
    """``--workers`` and ``--max-memory`` of the explicit search (explore and check)."""
    s.add_argument("--workers", type=int, default=0, help="processes sharing an explore search (default 0: all cores)")
    s.add_argument("--max-memory", type=int, default=0, metavar="MB",
                   help="stop an explore search with partial results once it has grown by this many MiB")


def _parser() -> _Parser:
    p = _Parser(prog="keos", description="Verify Apache Kafka's exactly-once semantics on an executable model.")
    p.add_argument("--version", action="version", version=f"keos {KEOS_VERSION}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    s = sub.add_parser("list", help="components, invariants, scenarios, variants")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_list)

    s = sub.add_parser("check", help="check invariants on scenarios (exit 1 on a violation)")
    s.add_argument("--scenario", action="append", metavar="NAME|FILE", help="repeatable; default: default scenarios")
    s.add_argument("--engine", default="explore", help="explore, hypothesis, bmc, ... or all")
    s.add_argument("--variant", help="protocol variant (default: the scenario's)")
    s.add_argument("--out", default="keos-out", help="directory for traces and summary.json")
    s.add_argument("--json", action="store_true", help="machine-readable summary on stdout")
    s.add_argument("--html", metavar="FILE", help="write an HTML report")
    s.add_argument("--junit", metavar="FILE", help="write a JUnit XML report")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--max-depth", type=int, default=0)
    s.add_argument("--max-states", type=int, default=0)
    s.add_argument("--examples", type=int, default=0, help="hypothesis: examples per run")
    s.add_argument("--stop-on-first", action="store_true")
    s.add_argument("--strict", action="store_true", help="exit 1 when an invariant is untested")
    s.add_argument(
        "--time-budget", type=float, default=60.0,
        help="seconds per scenario for engines that honour it (bmc: the depth reached is reported; 0 = none)",
    )
    _search_arguments(s)
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("mutants", help="prove the gate catches every weakened variant")
    s.add_argument("--engine", default="explore")
    s.add_argument("--out", default="keos-out")
    s.add_argument("--json", action="store_true")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--examples", type=int, default=0)
    s.add_argument("--max-depth", type=int, default=0)
    s.add_argument(
        "--time-budget", type=float, default=300.0, help="seconds per variant for engines that honour it (bmc)"
    )
    s.set_defaults(func=cmd_mutants)

    s = sub.add_parser("explore", help="breadth-first search with statistics and graph export")
    s.add_argument("--scenario", required=True, metavar="NAME|FILE")
    s.add_argument("--variant")
    s.add_argument("--graph", metavar="FILE", help="export the state graph (.graphml or .dot)")
    s.add_argument("--max-depth", type=int, default=0)
    s.add_argument("--max-states", type=int, default=0)
    _search_arguments(s)
    s.add_argument("--compact-visited", action="store_true", help="visited fingerprints as sorted int64 arrays")
    s.add_argument("--spill-dir", metavar="DIR", help="keep the (compact) visited set in memory-mapped files in DIR")
    s.add_argument("--engine", default="local", choices=("local", "spark"), help="local processes or Spark")
    s.add_argument("--master", default="local[*]", help="with --engine spark: local[*], spark://HOST:PORT, sc://HOST:PORT")
    s.add_argument("--out", default="keos-out")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_explore)

    s = sub.add_parser("replay", help="re-execute a trace and confirm its violation")
    s.add_argument("trace")
    s.add_argument("--json", action="store_true")
    s.add_argument("--mermaid", action="store_true", help="print a Mermaid sequence diagram")
    s.set_defaults(func=cmd_replay)

    s = sub.add_parser(
        "config-space", help="which producer configs admit a duplicate or reordering (z3, replayed witnesses)"
    )
    s.add_argument("--scenario", required=True, metavar="NAME|FILE", help="an idempotence scenario")
    s.add_argument(
        "--invariant", action="append", metavar="NAME", help="repeatable; default: a duplicate and a reordering"
    )
    s.add_argument("--max-depth", type=int, default=12, help="steps per query")
    s.add_argument("--time-budget", type=float, default=60.0, help="seconds for the whole grid (0 = unlimited)")
    s.add_argument("--retries", default="0,1,2", metavar="LIST", help="retries values, comma-separated")
    s.add_argument("--max-in-flight", default="1,2,5", metavar="LIST", help="max.in.flight values, comma-separated")
    s.add_argument("--acks", default="all,1,0", metavar="LIST", help="acks values, comma-separated")
    s.add_argument("--idempotence", default="true,false", metavar="LIST", help="enable.idempotence values")
    s.add_argument("--out", default="keos-out", help="directory for derived scenarios, traces and summary.json")
    s.add_argument("--json", action="store_true", help="the rows as JSON on stdout")
    s.set_defaults(func=cmd_config_space)

    s = sub.add_parser(
        "export-aiger", help="the idempotence core as an AIGER circuit, for hardware model checkers such as ABC"
    )
    s.add_argument("--scenario", required=True, metavar="NAME|FILE", help="an idempotence scenario")
    s.add_argument("--variant", help="protocol variant (default: the scenario's)")
    s.add_argument("--invariant", action="append", metavar="NAME", help="repeatable; default: every encoded one")
    s.add_argument("--output", metavar="FILE", help="default: SCENARIO.aig")
    s.add_argument("--slots", type=int, help="network slots (default: from the in-flight limit)")
    s.add_argument("--bits", type=int, default=6, help="bits per integer (default 6)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_export_aiger)

    s = sub.add_parser(
        "import-witness", help="a model checker's counterexample on an export-aiger circuit, replayed as a trace"
    )
    s.add_argument("witness", help="AIGER witness (e.g. berkeley-abc's write_cex -a)")
    s.add_argument("--circuit", metavar="FILE", help="the export-aiger file: its settings are used for the rest")
    s.add_argument("--scenario", metavar="NAME|FILE", help="as given to export-aiger (required without --circuit)")
    s.add_argument("--variant", help="as given to export-aiger")
    s.add_argument("--invariant", action="append", metavar="NAME", help="as given to export-aiger")
    s.add_argument("--slots", type=int, help="as given to export-aiger")
    s.add_argument("--bits", type=int, help="as given to export-aiger (default 6)")
    s.add_argument("--out", default="keos-out", help="directory for the trace")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_import_witness)

    s = sub.add_parser("bench", help="explicit-state throughput on the default scenarios")
    s.add_argument("--scenario", action="append", metavar="NAME|FILE")
    s.add_argument("--repeat", type=int, default=3)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_bench)

    try:
        sweep = importlib.import_module("keos.checker.sweep.campaign")
    except ImportError:
        sweep = None
    if sweep is not None and hasattr(sweep, "add_sweep_arguments"):
        s = sub.add_parser("sweep", help="randomized failure-injection sweeps on Spark")
        sweep.add_sweep_arguments(s)
        s.set_defaults(func=sweep.run_sweep_command)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``keos`` command."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_BAD_INPUT
        for name in ("max_depth", "max_states", "examples", "repeat", "time_budget", "workers", "max_memory"):
            if getattr(args, name, 0) is not None and getattr(args, name, 0) < 0:
                raise UsageError(f"--{name.replace('_', '-')} must be >= 0")
        code: int = args.func(args)
        return code
    except (UsageError, ModelError, TraceError) as exc:
        print(f"keos: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("keos: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
