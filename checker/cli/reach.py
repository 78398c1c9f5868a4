"""``keos coverage`` and ``keos mutate``: how much of ``model/`` the gate reaches, and how many defects it kills.

``keos coverage [--set NAME | --scenario NAME|FILE ...] [--variant V] [--out DIR] [--html DIR] [--json F]
[--fail-under PCT] [--module GLOB ...]`` runs the scenarios' explicit searches (the gate's engine)
under coverage.py with branch coverage of ``model/`` and ``invariants/``, one dynamic context per
scenario (:mod:`keos.checker.reach.branches`).  It prints a table per module, the handlers with
branches never taken (a *partial* line is a guard that never decided the other way in any state of
any scenario), and every exclusion mark with its reason.  It writes ``OUT/reach.json`` (the report,
with the map line -> scenarios that ``keos mutate`` reads) and ``OUT/.coverage`` (coverage.py's data
file with the contexts: ``coverage report --data-file OUT/.coverage`` works on it).

A line counts once it ran for some state of some scenario: the search memoises predicates by the
fields they read and never revisits a state, so coverage means "ran at least once".

``keos mutate [--list] [--module GLOB ...] [--operator NAME ...] [--sample N --seed S] [--resume]
[--time-budget S] [--total-budget S] [--equivalents FILE] [--reach FILE] [--scenarios-only] [--jobs N] [--local-python |
--master URL] [--out DIR] [--json F] [--html F] [--junit F] [--fail-under PCT]`` mutates ``model/`` one
point at a time (:mod:`keos.checker.reach.mutators`) and runs each mutant on the scenarios that reach
it (:mod:`keos.checker.reach.mutation`).

Exit codes (both commands): 0 done (and at or above ``--fail-under``); 1 below ``--fail-under`` (the
model's branch coverage, or the mutation score); 2 bad input (one line); 3 keos crashed (crash report);
4 partial (Ctrl-C, SIGTERM, ``--total-budget``, or a scenario's search hit its budget) -- a partial
run is never judged against ``--fail-under``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from keos.checker.api import EXIT_BAD_INPUT, EXIT_OK, EXIT_PARTIAL, EXIT_VIOLATION
from keos.checker.cli import guard
from keos.checker.cli.guard import budget_seconds, non_negative_factor, non_negative_int, positive_int

__all__ = ["DEFAULT_SAMPLE", "cmd_coverage", "cmd_mutate", "register"]

#: Mutants ``keos mutate`` runs without ``--sample``/``--all``: a stratified sample (every module), since
#: all of ``model/`` (about 6,500 mutants) takes hours on this project's two cores (README, "Reach and kill power").
DEFAULT_SAMPLE = 1000

_EXIT = """exit codes:
  0  done (at or above --fail-under, when given)
  1  below --fail-under
  2  bad input (one line "keos: error: ..."; checked before any work starts)
  3  keos crashed (a crash report file is written)
  4  partial results: interrupted, --total-budget ran out, or a search hit its budget (never judged)"""


class ReachUsageError(Exception):
    """Bad input (exit 2)."""


def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a percentage 0..100, got {text!r}") from None
    if not 0.0 <= value <= 100.0:
        raise argparse.ArgumentTypeError(f"expected a percentage 0..100, got {text!r}")
    return value


def _console(json_to_stdout: bool = False) -> Console:
    """Human output: stdout, or stderr when ``--json -`` owns stdout."""
    from keos.checker.cli.main import _console as console

    return console(json_to_stdout)


def _fail(message: str) -> int:
    print(f"keos: error: {' '.join(message.split())}", file=sys.stderr)
    return EXIT_BAD_INPUT


def _scenario_refs(args: argparse.Namespace) -> list[str]:
    """Validated scenario references: ``--set`` plus ``--scenario``, else the default gate's."""
    from keos.scenarios import builtin_scenarios, resolve_scenario, scenario_set

    refs: list[str] = []
    if args.set:
        refs += list(scenario_set(args.set))
    from keos.checker.reach.gate_checks import GATE_CHECKS

    for ref in args.scenario or ():
        if ref in GATE_CHECKS:  # a gate check that is not a scenario (@assignors, @differential, @sweep)
            refs.append(ref)
            continue
        sc = resolve_scenario(ref)
        refs.append(sc.name if ref == sc.name else str(Path(ref).resolve()))
    if not refs:  # the gate: its default scenarios and its checks that are not scenarios (keos assignors)
        refs = [n for n, s in builtin_scenarios().items() if s.default] + list(GATE_CHECKS)
    if args.variant is not None:
        from keos.model.variants import VARIANTS
        from keos.scenarios import build_model

        if args.variant not in VARIANTS:
            raise ReachUsageError(f"unknown variant {args.variant!r} (known: {', '.join(sorted(VARIANTS))})")
        for ref in refs:
            if not ref.startswith("@"):
                build_model(resolve_scenario(ref), args.variant)
    return list(dict.fromkeys(refs))


def _check_paths(pairs: list[tuple[str | None, str, bool]]) -> None:
    for value, flag, is_dir in pairs:
        if value is None or value == "-":
            continue
        why = guard.check_output_dir(value, flag) if is_dir else guard.check_output_file(value, flag)
        if why:
            raise ReachUsageError(why)


# -- keos coverage --------------------------------------------------------------------------------


def _check_module_globs(globs: Any) -> None:
    """Every ``--module`` glob must match a file of ``model/`` or ``invariants/`` (checked before the run)."""
    import fnmatch

    from keos.checker.reach.branches import package_root

    root = package_root()
    files = [f.relative_to(root).as_posix() for d in ("model", "invariants") for f in (root / d).rglob("*.py")]
    for g in globs:
        if not any(fnmatch.fnmatch(f, g) for f in files):
            raise ReachUsageError(f"--module {g}: matches no file of model/ or invariants/ (e.g. 'model/log/*')")


def _measure(args: argparse.Namespace, refs: list[str], out: Path, console: Console) -> Any:
    from keos.checker.reach.branches import measure

    console.print(f"measuring branch coverage of model/ and invariants/ over {len(refs)} scenario(s) "
                  f"(coverage.py, one context per scenario) ...", soft_wrap=True)
    return measure(refs, out, variant=args.variant, time_budget_s=args.time_budget,
                   total_budget_s=args.total_budget)


def cmd_coverage(args: argparse.Namespace) -> int:
    """``keos coverage``."""
    from keos.checker.reach.branches import filter_modules, write_html
    from keos.reports.mutation import render_coverage

    try:
        refs = _scenario_refs(args)
        _check_paths([(args.html_dir, "--html", True), (args.json_file, "--json", False)])
        _check_module_globs(args.module or ())
        if args.explain_set and not args.explain:
            raise ReachUsageError("--explain-set goes with --explain")
        args.explain_set = list(dict.fromkeys(args.explain_set or ["reach"]))
        if args.explain:
            from keos.scenarios import ScenarioError, scenario_set

            for name in args.explain_set:
                try:
                    scenario_set(name)
                except ScenarioError as exc:
                    raise ReachUsageError(f"--explain-set {name}: {exc}") from None
    except ReachUsageError as exc:
        return _fail(str(exc))
    console = _console(args.json_file == "-")
    out = Path(args.out)
    run = _measure(args, refs, out, console)
    report = run.to_json()
    explain_stopped = False
    if args.explain and not run.partial:
        report["untaken"], variant_reach = _explain(args, refs, run, out, console)
        if variant_reach is not None:
            report["variant_reach"] = variant_reach
        if report["untaken"] is None:
            # the measured searches are complete: their reach is written and reported all the same, marked
            # as lacking the explanation (a mutation run reading it then says it has no variant reach)
            explain_stopped = True
            del report["untaken"]
            report["explain"] = "interrupted"
    (out / "reach.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    modules = filter_modules(run, args.module or ())
    render_coverage(console, report, modules, handlers=not args.no_handlers)
    if report.get("untaken") is not None:
        from keos.reports.mutation import render_untaken

        paths = {m["path"] for m in modules}
        render_untaken(console, [u for u in report["untaken"] if u["path"] in paths])
    console.print(f"reach data: {out / 'reach.json'}; coverage.py data (contexts = scenarios): {run.data_file}",
                  soft_wrap=True)
    if args.html_dir:
        console.print(f"HTML report: {write_html(run, Path(args.html_dir))}")
    if args.json_file:
        text = json.dumps(report, indent=1) + "\n"
        if args.json_file == "-":
            sys.stdout.write(text)
        else:
            Path(args.json_file).write_text(text, encoding="utf-8")
    for name, s in report["scenarios"].items():
        if s.get("violated"):
            console.print(f"[yellow]note: {name} violated {', '.join(s['violated'])} (coverage still counted)[/yellow]")
    if explain_stopped:
        console.print("[yellow]--explain interrupted: the coverage above is complete, the explanation is missing; "
                      "partial results (exit 4)[/yellow]", soft_wrap=True)
        return EXIT_PARTIAL
    if run.partial:
        why = run.stopped or "; ".join(f"{n}: {s['partial']}" for n, s in report["scenarios"].items() if s["partial"])
        console.print(f"[yellow]partial results: {why} (exit 4)[/yellow]", soft_wrap=True)
        return EXIT_PARTIAL
    if args.fail_under is not None:
        got = report["totals"]["model"]["branch_percent"]
        if got < args.fail_under:
            console.print(f"[red]model/ branch coverage {got}% is below --fail-under {args.fail_under}% (exit 1)[/red]")
            return EXIT_VIOLATION
    return EXIT_OK


def _explain(args: argparse.Namespace, refs: list[str], run: Any, out: Path, console: Console) -> tuple[Any, Any]:
    """``--explain``: what takes each branch the measured searches never take (another coverage run).

    Also the *variant reach* of that run (which weakened variants' searches ran each line), which
    ``keos mutate`` reads to judge a mutant the way the gate's ``keos mutants`` would.
    """
    from keos.checker.reach.branches import explain_untaken, measure, variant_reach
    from keos.checker.reach.gate_checks import VARIANT_PREFIX
    from keos.model.variants import VARIANTS
    from keos.scenarios import builtin_scenarios

    measured = set(refs)
    sets: dict[str, list[str]] = {}
    for name, sc in builtin_scenarios().items():
        chosen = [s for s in sc.sets if s in args.explain_set]
        if chosen and name not in measured:
            sets[name] = chosen
    others = sorted(sets) + [VARIANT_PREFIX + v.name for v in VARIANTS.values() if v.weakened]
    console.print(f"--explain: measuring what takes the untaken branches: {len(sets)} scenario(s) of "
                  f"{', '.join(args.explain_set)} and {len(others) - len(sets)} weakened variant(s) as keos "
                  f"mutants runs them ...", soft_wrap=True)
    other = measure(others, out / "explain", variant=None, time_budget_s=args.time_budget,
                    total_budget_s=args.total_budget)
    if other.partial:
        return None, None
    return explain_untaken(run, other, sets), variant_reach(other)


def _measure_variants(args: argparse.Namespace, out: Path, console: Console) -> dict[str, Any] | None:
    """Which lines each weakened variant's search runs, as ``keos mutants`` runs it (None if interrupted)."""
    from keos.checker.reach.branches import measure, variant_reach
    from keos.checker.reach.gate_checks import VARIANT_PREFIX
    from keos.model.variants import VARIANTS

    refs = [VARIANT_PREFIX + v.name for v in VARIANTS.values() if v.weakened]
    console.print(f"measuring the reach of {len(refs)} weakened variant(s) as keos mutants runs them ...")
    run = measure(refs, out, variant=None, total_budget_s=args.total_budget)
    return None if run.partial else variant_reach(run)


# -- keos mutate ----------------------------------------------------------------------------------


def _default_equivalents() -> Path | None:
    from keos.checker.reach.branches import package_root

    path = package_root() / "docs" / "mutation" / "equivalent.toml"
    return path if path.is_file() else None


def _rerun_line_maps(reach_data: dict[str, Any] | None, root: Path) -> dict[str, dict[int, int]]:
    """Old line -> new line of each model file the ``--reach`` data recorded with other text than this tree's
    (its ``sources``): ``--rerun`` reads it to find a moved mutant among equal edits (``match_earlier``)."""
    from keos.checker.reach.carry import line_map

    out: dict[str, dict[int, int]] = {}
    for path, source in ((reach_data or {}).get("sources") or {}).items():
        text = source.get("text") if isinstance(source, dict) else None
        current = root / path
        if not isinstance(text, str) or not path.startswith("model/") or not current.is_file():
            continue
        now = current.read_text(encoding="utf-8")
        if now != text:
            out[path] = line_map(text.splitlines(), now.splitlines())
    return out


def cmd_mutate(args: argparse.Namespace) -> int:
    """``keos mutate``."""
    from keos.checker.reach import mutation as mu
    from keos.checker.reach.branches import load_reach, package_root
    from keos.reports import mutation as rep

    root = package_root()
    try:
        if args.sample is not None and args.sample < 1:
            raise ReachUsageError(f"--sample {args.sample}: expected an integer >= 1")
        if args.master is not None and args.local_python:
            raise ReachUsageError("--master and --local-python exclude each other")
        master = None if args.local_python else (args.master or "local[*]")
        if master is not None:
            from keos.checker.sweep.campaign import _MASTER

            if not _MASTER.match(master):
                raise ReachUsageError(f"bad Spark master {master!r} (local[*], local[N], spark://host:port, "
                                      "sc://host:port)")
        eq_path = Path(args.equivalents) if args.equivalents else _default_equivalents()
        equivalents = mu.load_equivalents(eq_path) if eq_path is not None else {}
        _check_paths([(args.json_file, "--json", False), (args.html, "--html", False), (args.junit, "--junit", False)])
        reach_data = None
        if args.reach:
            try:
                reach_data = load_reach(Path(args.reach))
            except FileNotFoundError:
                raise ReachUsageError(f"--reach {args.reach}: no such file") from None
            except (ValueError, OSError) as exc:
                raise ReachUsageError(f"--reach {args.reach}: {exc}") from None
        refs = _scenario_refs(args) if not args.list and reach_data is None else []
        mutants = mu.enumerate_mutants(root, args.module or (), args.operator or ())
        if args.all and args.sample is not None:
            raise ReachUsageError("--all and --sample exclude each other")
        rerun: dict[str, Any] | None = None
        if args.rerun_status and not args.rerun:
            raise ReachUsageError("--rerun-status needs --rerun")
        if args.rerun:
            if args.all or args.sample is not None:
                raise ReachUsageError("--rerun takes its mutants from the earlier run: no --all or --sample")
            statuses = tuple(s for part in (args.rerun_status or [",".join(mu.RERUN_STATUSES)])
                             for s in part.split(",") if s)
            bad = sorted(set(statuses) - set(mu.STATUSES))
            if bad:
                raise ReachUsageError(f"--rerun-status {','.join(bad)}: expected some of {', '.join(mu.STATUSES)}")
            try:
                earlier = mu.load_rows(Path(args.rerun))
            except mu.MutationError as exc:
                raise ReachUsageError(f"--rerun {exc}") from None
            mutants, gone = mu.match_earlier(mutants, earlier, statuses, _rerun_line_maps(reach_data, root))
            rerun = {"from": args.rerun, "statuses": list(statuses),
                     "earlier": sum(1 for r in earlier if r.get("status") in statuses),
                     "matched": len(mutants), "gone": [{k: r.get(k) for k in ("id", "path", "line", "function",
                                                       "operator", "original", "replacement", "status")}
                                                      for r in gone]}
            sample = None
        else:
            sample = None if args.all else (args.sample or DEFAULT_SAMPLE)
        if sample is not None:
            mutants = mu.stratified_sample(mutants, sample, args.seed)
    except (ReachUsageError, mu.MutationError) as exc:
        return _fail(str(exc))
    console = _console(args.json_file == "-")
    if args.list:
        if args.json_file:
            text = json.dumps([m.to_json() for m in mutants], indent=1) + "\n"
            if args.json_file == "-":
                sys.stdout.write(text)
            else:
                Path(args.json_file).write_text(text, encoding="utf-8")
        if args.json_file != "-":
            for m in mutants:
                mark = "  (equivalent)" if m.id in equivalents else ""
                console.print(f"{m.id}  {m.path}:{m.line}  {m.operator:<14} {m.original} -> {m.replacement}{mark}",
                              soft_wrap=True, markup=False, highlight=False)
            console.print(f"{len(mutants)} mutant(s) over {len({m.path for m in mutants})} module(s)")
        return EXIT_OK
    out = Path(args.out)
    if reach_data is None:
        cached = out / "coverage" / "reach.json"
        if args.resume and cached.is_file():
            reach_data = load_reach(cached)
            console.print(f"reusing the reach data of the run being resumed: {cached}", soft_wrap=True)
        else:
            run = _measure(args, refs, out / "coverage", console)
            if run.partial:
                console.print("[yellow]coverage run interrupted before mutation started (exit 4)[/yellow]")
                return EXIT_PARTIAL
            reach_data = run.to_json()
            if not args.scenarios_only:
                variants = _measure_variants(args, out / "coverage" / "variants", console)
                if variants is None:
                    console.print("[yellow]coverage run interrupted before mutation started (exit 4)[/yellow]")
                    return EXIT_PARTIAL
                reach_data["variant_reach"] = variants
            (out / "coverage" / "reach.json").write_text(json.dumps(reach_data, indent=1) + "\n", encoding="utf-8")
    if args.reach or args.resume:
        from keos.checker.reach.carry import carry_reach

        try:
            wanted = _scenario_refs(args)
        except ReachUsageError:
            wanted = []
        carried = carry_reach(reach_data, root, wanted)
        if carried.summary():
            console.print(carried.summary(), soft_wrap=True, markup=False, highlight=False)
        lines_note = "its line data carried as above" if carried.recorded else (
            "its line data (a line that moved since selects the scenarios of the line now there)")
    else:
        lines_note = "its line data"
    measured_in = reach_data.get("root")
    # Mutants are enumerated from this tree's model/ and are built from its files, whatever tree measured the
    # reach data (a --reach of another checkout would otherwise mutate that checkout's copy of the module).
    reach_data["root"] = str(root)
    if measured_in and Path(measured_in).resolve() != Path(root).resolve():
        console.print(f"note: --reach was measured in {measured_in}; mutating this tree ({root}) with {lines_note}",
                      soft_wrap=True)
    if not args.scenarios_only and not reach_data.get("variant_reach"):
        console.print("note: the reach data has no variant reach (keos coverage --explain writes it): mutants are "
                      "judged on the scenarios only, not on keos mutants' weakened variants", soft_wrap=True)
    if rerun is not None:
        console.print(f"--rerun: {rerun['matched']} of the {rerun['earlier']} earlier {'/'.join(rerun['statuses'])} "
                      f"mutant(s) found in this tree; {len(rerun['gone'])} gone (their code changed)", soft_wrap=True)
    console.print(f"{len(mutants)} mutant(s) over {len({m.path for m in mutants})} module(s); "
                  f"{'Spark ' + master if master else f'{args.jobs} local process(es)'}; "
                  f"budget per mutant: {args.time_budget:g} s wall (0 = none), {args.cpu_budget:g} CPU-s (0 = none)"
                  + (f" or {args.cpu_budget_factor:g}x its searches' baseline if more"
                     if args.cpu_budget and args.cpu_budget_factor else ""), soft_wrap=True)
    started = time.monotonic()

    def on_row(row: dict[str, Any]) -> None:
        if row["status"] in ("equivalent", "excluded", "uncovered"):
            return
        if row["status"] == "killed" and row.get("kind") == "weakened_variant":
            what = f"the weakened variant {row['invariant']} is no longer caught (keos mutants fails)"
        elif row["status"] == "killed" and row.get("kind") == "untested":
            what = f"{row['invariant']} became untested on {row['scenario']} (a sometimes-partner never fired)"
        elif row["status"] == "killed":
            what = f"{row['invariant']} in {row['steps']} steps on {row['scenario']}"
        else:
            what = (row.get("detail") or "")[:100]
        console.print(f"{row['status']:<9} {row['id']} {row['path']}:{row['line']} {row['operator']}: {what}",
                      soft_wrap=True, markup=False, highlight=False)

    result = mu.evaluate_mutants(
        mutants, reach_data, out, budget_s=args.time_budget, cpu_budget_s=args.cpu_budget,
        cpu_budget_factor=args.cpu_budget_factor,
        total_budget_s=args.total_budget,
        equivalents=equivalents, variant=args.variant, resume=args.resume, jobs=args.jobs, master=master,
        scenarios_only=args.scenarios_only, on_row=on_row)
    order = {m.id: i for i, m in enumerate(mutants)}
    rows = sorted(result.rows, key=lambda r: order.get(r["id"], len(order)))
    scores = mu.score(rows)
    from keos.checker.trace import KEOS_VERSION

    summary: dict[str, Any] = {
        "keos_version": KEOS_VERSION, "partial": result.partial, "stopped": result.stopped,
        "executor": result.executor, "elapsed_s": round(time.monotonic() - started, 2),
        "cpu_s": round(result.cpu_s, 2), "resumed": result.resumed,
        "settings": {"module": args.module, "operator": args.operator, "sample": sample, "seed": args.seed,
                     "time_budget_s": args.time_budget, "cpu_budget_s": args.cpu_budget,
                     "cpu_budget_factor": args.cpu_budget_factor,
                     "equivalents": str(eq_path) if eq_path else None},
        "scores": scores,
        "rerun": rerun,
        "equivalents": [{"id": k, "reason": v, "in_run": k in order} for k, v in sorted(equivalents.items())],
        "rows": rows,
    }
    ran = [r for r in rows if r["status"] in ("killed", "survived", "timeout", "crashed")]
    summary["evaluated"] = {
        "mutants": len(ran),
        "mean_seconds": round(sum(float(r.get("seconds") or 0) for r in ran) / len(ran), 3) if ran else None,
        "mean_cpu_seconds": round(sum(float(r.get("cpu_seconds") or 0) for r in ran) / len(ran), 3) if ran else None,
    }
    rep.write_parquet(out / "mutation.parquet", rows)
    rep.write_mutation_json(out / "mutation.json", summary)
    rep.render_mutation(console, rows, scores)
    ev = summary["evaluated"]
    per = f"; per mutant run {ev['mean_seconds']} s wall, {ev['mean_cpu_seconds']} CPU-s" if ev["mutants"] else ""
    console.print(f"results: {out / 'mutation.parquet'}, {out / 'mutation.json'}; {summary['elapsed_s']:.0f} s wall, "
                  f"{summary['cpu_s']:.0f} CPU-s in workers, {ev['mutants']} mutant(s) run{per}", soft_wrap=True)
    if args.json_file:
        if args.json_file == "-":
            sys.stdout.write(json.dumps(summary, indent=1) + "\n")
        else:
            rep.write_mutation_json(Path(args.json_file), summary)
    if args.html:
        console.print(f"HTML report: {rep.write_mutation_html(Path(args.html), summary)}")
    if args.junit:
        console.print(f"JUnit report: {rep.write_mutation_junit(Path(args.junit), summary)}")
    if result.partial:
        console.print(f"[yellow]partial results ({result.stopped}): rerun with --resume to continue (exit 4)[/yellow]")
        return EXIT_PARTIAL
    total = scores.get("total", {}).get("score")
    if args.fail_under is not None and total is not None and total < args.fail_under:
        console.print(f"[red]mutation score {total}% is below --fail-under {args.fail_under}% (exit 1)[/red]")
        return EXIT_VIOLATION
    return EXIT_OK


# -- parser ----------------------------------------------------------------------------------------


def _scenario_flags(s: Any) -> None:
    s.add_argument("--set", metavar="NAME", help="a named scenario set (default: the default gate's scenarios)")
    s.add_argument("--scenario", action="append", metavar="NAME|FILE", help="built-in name or TOML file; repeatable")
    s.add_argument("--variant", help="protocol variant for every scenario (default: each scenario's own)")


def register(sub: Any) -> None:
    """Add ``coverage`` and ``mutate`` to the ``keos`` parser."""
    from keos.checker.cli.main import EXIT_CODES, _command

    s = _command(sub, "coverage", "branch coverage of model/ by the scenarios' searches (coverage.py, per scenario)",
                 "  keos coverage\n  keos coverage --set deep --html keos-out/coverage/html --fail-under 95\n"
                 "  keos coverage --scenario idempotence_retry --module 'model/log/*'")
    s.epilog = (s.epilog or "").replace(EXIT_CODES, _EXIT)
    _scenario_flags(s)
    s.add_argument("--out", default="keos-out/coverage", metavar="DIR",
                   help="directory for reach.json and coverage.py's data file (.coverage, with contexts)")
    s.add_argument("--html", dest="html_dir", metavar="DIR", help="write coverage.py's HTML report (with contexts)")
    s.add_argument("--json", dest="json_file", metavar="FILE", help="write the JSON report (- for stdout)")
    s.add_argument("--fail-under", type=_percent, metavar="PCT",
                   help="exit 1 when model/'s branch coverage is below PCT percent")
    s.add_argument("--module", action="append", metavar="GLOB", help="report only these files (e.g. 'model/log/*')")
    s.add_argument("--no-handlers", action="store_true", help="only the per-module table, not the per-handler gaps")
    s.add_argument("--explain", action="store_true",
                   help="also say what takes each branch never taken: a scenario of a named set (--explain-set), "
                   "only a weakened variant as keos mutants runs it, or nothing (a second coverage run, minutes)")
    s.add_argument("--explain-set", action="append", metavar="NAME",
                   help="named sets --explain measures besides the variants, repeatable (default: reach)")
    s.add_argument("--time-budget", type=budget_seconds, default=0.0, metavar="SECONDS",
                   help="seconds per scenario's search (0 = none); a search that reaches it makes the run partial")
    s.add_argument("--total-budget", type=budget_seconds, default=0.0, metavar="SECONDS",
                   help="seconds for the whole run (0 = none); the rest is skipped, partial results (exit 4)")
    s.set_defaults(func=cmd_coverage)

    s = _command(sub, "mutate", "mutation analysis of model/: does the gate kill single-point defects?",
                 "  keos mutate --list --module 'model/log/*'\n"
                 "  keos mutate --local-python --jobs 2 --module model/log/producer_state.py\n"
                 "  keos mutate --sample 1000 --seed 1 --master 'local[*]' --html m.html --junit m.xml\n"
                 "  keos mutate --resume --out keos-out/mutate")
    s.epilog = (s.epilog or "").replace(EXIT_CODES, _EXIT)
    s.add_argument("--list", action="store_true", help="list the mutants (id, place, operator, edit) and exit")
    s.add_argument("--module", action="append", metavar="GLOB",
                   help="mutate only these modules: path or import-name glob, repeatable ('model/log/*')")
    s.add_argument("--operator", action="append", metavar="NAME",
                   help="only these operators, repeatable (relational, boundary, off_by_one, constant, negate, "
                   "drop_condition, bool_operator, drop_guard, error_swap, table_entry)")
    s.add_argument("--sample", type=int, metavar="N",
                   help=f"a stratified sample of N mutants, every module represented (default {DEFAULT_SAMPLE}: "
                   "all of model/ does not fit in an hour on two cores, see README)")
    s.add_argument("--all", action="store_true", help="every mutant, not a sample (hours: see README)")
    s.add_argument("--seed", type=non_negative_int, default=1, help="seed of --sample")
    s.add_argument("--resume", action="store_true", help="skip mutants whose results are already in --out")
    s.add_argument("--rerun", metavar="RESULTS",
                   help="evaluate again the mutants an earlier run did not kill (its mutation-results.jsonl, "
                   "mutation.json or --out directory), on this tree: matched by id, or by the same edit in the "
                   "same function when lines moved; the score is then over those mutants only")
    s.add_argument("--rerun-status", action="append", metavar="S[,S]",
                   help="which earlier outcomes --rerun takes, comma-separated, repeatable (default: survived, "
                   "uncovered, timeout and crashed: all the gate did not kill)")
    s.add_argument("--time-budget", type=budget_seconds, default=60.0, metavar="SECONDS",
                   help="seconds per mutant over its scenarios (0 = none); out of time = 'timeout'")
    s.add_argument("--cpu-budget", type=budget_seconds, default=0.0, metavar="SECONDS",
                   help="CPU seconds per mutant (0 = none): the same on an idle and a loaded machine, where a "
                   "wall-clock --time-budget turns slow mutants into timeouts (then give --time-budget 0)")
    s.add_argument("--cpu-budget-factor", type=non_negative_factor, default=1.0, metavar="F",
                   help="with --cpu-budget: a mutant may use F times the CPU its selected searches took in the "
                   "coverage run (which traces every line, ~3x a plain search), if that is more (default 1; 0 = "
                   "the flat --cpu-budget): timeout then means the mutant slowed its searches, not that many "
                   "scenarios reach its line")
    s.add_argument("--total-budget", type=budget_seconds, default=0.0, metavar="SECONDS",
                   help="seconds for the whole run (0 = none); then partial results (exit 4), --resume continues")
    s.add_argument("--scenarios-only", action="store_true",
                   help="judge each mutant on the scenarios only, not also on the weakened variants whose search "
                   "reaches it (the gate's keos mutants)")
    s.add_argument("--equivalents", metavar="FILE",
                   help="equivalent mutants, TOML [id] reason = '...' (default: docs/mutation/equivalent.toml)")
    s.add_argument("--reach", metavar="FILE",
                   help="reach.json of an earlier keos coverage run (default: measure it first, into OUT/coverage)")
    _scenario_flags(s)
    s.add_argument("--jobs", type=positive_int, default=2, help="local worker processes at a time (--local-python)")
    s.add_argument("--local-python", action="store_true", help="run mutants as plain local processes, not on Spark")
    s.add_argument("--master", help="Spark master: local[*] (default), local[N], spark://HOST:PORT, sc://HOST:PORT")
    s.add_argument("--out", default="keos-out/mutate", metavar="DIR",
                   help="directory for mutation-results.jsonl, mutation.parquet, mutation.json, the reach data")
    s.add_argument("--json", dest="json_file", metavar="FILE", help="write the JSON summary (- for stdout)")
    s.add_argument("--html", metavar="FILE", help="write an HTML report")
    s.add_argument("--junit", metavar="FILE", help="write a JUnit XML report (a test case per mutant)")
    s.add_argument("--fail-under", type=_percent, metavar="PCT", help="exit 1 when the total score is below PCT")
    s.set_defaults(func=cmd_mutate)
