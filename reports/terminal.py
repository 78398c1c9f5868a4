"""Rich terminal output: the run summary, the mutation table, progress and coverage.

What a person at a terminal needs after ``keos check`` is one table that
answers *did every invariant hold, and was it really exercised?*  Each row is
one engine run over one scenario and protocol variant; its verdict cell lists
every ``always`` property:

* ``✓ holds`` (green) -- no counterexample, and the ``sometimes`` partners
  fired, so the states the invariant speaks about were reached;
* ``✗ violated`` (red) -- a replayed counterexample exists;
* ``~ permitted`` (blue) -- a counterexample the scenario declares allowed
  (e.g. ``acks=1`` loses acknowledged records on failover, by design);
* ``? untested`` (black on yellow) -- no counterexample, *but* a partner never
  fired, so the invariant was not exercised.  It is drawn unlike ``holds`` on
  purpose: a green tick for an unexercised invariant is how verifiers lie.

Then the ``sometimes`` score (``6/6 reached``, unreached ones named) and the
engine's statistics.  The last line totals everything and says PASS or FAIL
(FAIL iff some invariant is violated and not permitted -- the CLI's exit 1).

:func:`render_mutants` shows the mutation score: each weakened protocol
variant (a historical Kafka bug re-enabled, see ``model/variants.py``) must be
*caught* by some invariant in some scenario.  :func:`make_progress` and
:func:`explore_progress` give long explicit-state runs a live line;
:func:`render_coverage` groups the events a run observed by kind (broker error
codes, transaction transitions, faults).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import Progress, ProgressColumn, SpinnerColumn, Task, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from keos.checker.results import EngineResult, Verdict, partial_reason
from keos.model.interface import Expectation
from keos.reports.common import (
    VERDICT_LOOK,
    always_and_sometimes,
    coverage_groups,
    format_duration,
    format_stats,
)

__all__ = [
    "MutantRow",
    "explore_progress",
    "make_progress",
    "render_coverage",
    "render_mutants",
    "render_summary",
    "summary_totals",
]


def summary_totals(results: Sequence[EngineResult]) -> dict[str, int]:
    """Counts over all runs: verdicts of always properties, sometimes reached/total, runs."""
    totals = {v.value: 0 for v in Verdict}
    for r in results:
        for p in r.properties:
            totals[p.verdict.value] += 1
    totals["runs"] = len(results)
    return totals


def _verdict_cell(r: EngineResult) -> Text:
    always, sometimes = always_and_sometimes(r)
    cell = Text()
    for i, p in enumerate(always):
        if i:
            cell.append("\n")
        look = VERDICT_LOOK[p.verdict]
        cell.append(f"{look.glyph} {look.word}", style=look.style)
        cell.append(f" {p.name}", style="bold" if p.verdict is not Verdict.HOLDS else "")
        if p.expectation is Expectation.EVENTUALLY:
            cell.append(" (eventually)", style="dim")
        if p.verdict is Verdict.HOLDS and not r.complete:
            cell.append(" (bounded)", style="dim")
        if p.trace is not None:
            cell.append(f" — {len(p.trace.actions)} steps", style="dim")
        if p.detail:
            cell.append(f"\n    {p.detail}", style="red" if p.verdict is Verdict.VIOLATED else "dim")
    if sometimes:
        reached = [p for p in sometimes if p.verdict is Verdict.REACHED]
        missing = [p.name for p in sometimes if p.verdict is not Verdict.REACHED]
        cell.append("\n" if always else "")
        cell.append(f"sometimes: {len(reached)}/{len(sometimes)} reached", style="green" if not missing else "yellow")
        if missing:
            cell.append(f"\n    never reached: {', '.join(missing)}", style="yellow")
    return cell


def render_summary(
    console: Console,
    results: list[EngineResult],
    title: str = "keos — verification summary",
    stopped: str | None = None,
    not_run: Sequence[str] = (),
) -> None:
    """One row per (scenario, variant, engine): verdict of every invariant and the engine's stats.

    Weakened variants (anything but ``kafka``) are shown in magenta.  ``stopped`` (why the command ended
    before every run was done: interrupted, out of memory) and ``not_run`` (the runs never finished,
    ``engine/scenario/variant``) make the last line PARTIAL and say so: a stopped command never reads PASS.
    """
    # Stretched to a terminal's width; in a CI log (a wide, non-terminal console) at its natural width.
    table = Table(title=title, box=box.ROUNDED, show_lines=True, title_style="bold", expand=console.is_terminal)
    table.add_column("scenario\nvariant\nengine", overflow="fold")
    table.add_column("verdict per invariant", overflow="fold", ratio=2)
    table.add_column("stats", overflow="fold", ratio=1, max_width=40)  # long reasons wrap, verdicts keep room
    for r in results:
        stats = format_stats(r.stats)
        if r.seed is not None:
            stats.append(f"seed {r.seed}")
        stats.append("exhaustive" if r.complete else "bounded")
        run = Text(r.scenario, style="bold")
        run.append(f"\n{r.variant}", style="magenta" if r.variant != "kafka" else "")
        run.append(f"\n{r.engine}", style="dim")
        table.add_row(run, _verdict_cell(r), "\n".join(stats))
    console.print(table)
    for r in results:
        for p in r.violations():
            if p.trace_path is not None:
                look = VERDICT_LOOK[p.verdict]
                replay = Text(f"{look.glyph} {p.name}", style=look.style)
                replay.append(f"  keos replay {p.trace_path}", style="dim")
                console.print(replay, soft_wrap=True)

    t = summary_totals(results)
    elapsed = sum(float(r.stats.get("elapsed_s") or 0) for r in results)
    failed = t[Verdict.VIOLATED.value] > 0
    partial = [(r, why) for r in results if (why := partial_reason(r)) is not None]
    line = Text()
    if failed:
        line.append("FAIL", style="bold white on red")
    elif partial or stopped or not_run:
        line.append("PARTIAL", style="bold black on yellow")
    else:
        line.append("PASS", style="bold black on green")
    if stopped or not_run:
        line.append(f"  {t['runs']} of {t['runs'] + len(not_run)} runs finished ({stopped or 'stopped'}): ")
    else:
        line.append(f"  {t['runs']} run{'s' if t['runs'] != 1 else ''}: ")
    parts = [
        (Verdict.HOLDS, t[Verdict.HOLDS.value]),
        (Verdict.VIOLATED, t[Verdict.VIOLATED.value]),
        (Verdict.PERMITTED, t[Verdict.PERMITTED.value]),
        (Verdict.UNTESTED, t[Verdict.UNTESTED.value]),
    ]
    for i, (v, n) in enumerate(parts):
        if i:
            line.append(", ")
        line.append(f"{n} {v.value}", style=VERDICT_LOOK[v].style if n else "dim")
    reached = t[Verdict.REACHED.value]
    line.append(f"; sometimes {reached}/{reached + t[Verdict.UNREACHED.value]} reached")
    line.append(f"; {format_duration(elapsed)}")
    bounded = sum(1 for r in results if not r.complete and not r.violated)
    if bounded and not partial:
        line.append(f"; {bounded} bounded (not exhaustive)", style="dim")
    console.print(line)
    for r, why in partial:
        console.print(Text(f"  partial: {r.engine} on {r.scenario} ({r.variant}) stopped early: {why}",
                           style="yellow"), soft_wrap=True)
    if not_run:
        console.print(Text(f"  not run ({stopped or 'stopped'}): {', '.join(not_run)}", style="yellow"),
                      soft_wrap=True)


@dataclass(frozen=True)
class MutantRow:
    """One weakened variant's outcome in a mutation run.

    Attributes:
        variant: the variant name (``small_duplicate_window``).
        caught: whether some invariant was violated.
        invariant: the invariant that caught it (the shortest counterexample).
        scenario: the scenario it was caught in.
        trace_length: steps of that counterexample.
        elapsed_s: time spent on this variant.
        expected: the invariants the variant is documented to break.
        bug: the historical bug it re-enables.
        trace_path: where the counterexample was written, if it was.
        covered: whether the engine can exercise this variant at all (an
            engine may not model the component the variant weakens); an
            uncovered variant is neither caught nor escaped.
        engine: the engine that ran it.
        timed_out: not caught, but the engine ran out of its time budget
            before the bound it was asked for (bmc): the variant is *not
            caught in time*, which is not the same as escaping the invariants.
        depth_reached: how deep a bounded engine searched (``None``: unbounded).
        missed: the variant's scenarios that did not catch it; a variant is caught only on each of them
            (``scenario`` then names one that did).
    """

    variant: str
    caught: bool
    invariant: str | None = None
    scenario: str | None = None
    trace_length: int | None = None
    elapsed_s: float = 0.0
    expected: tuple[str, ...] = ()
    bug: str = ""
    trace_path: str | None = None
    covered: bool = True
    engine: str = ""
    timed_out: bool = False
    depth_reached: int | None = None
    missed: tuple[str, ...] = ()

    @classmethod
    def from_results(
        cls, variant: str, results: Iterable[EngineResult], expected: tuple[str, ...] = (), bug: str = ""
    ) -> MutantRow:
        """The row for ``variant`` from its runs: caught by the shortest non-permitted counterexample."""
        runs = [r for r in results if r.variant == variant]
        best: tuple[int, str, str, str | None] | None = None
        for r in runs:
            for p in r.properties:
                if p.verdict is Verdict.VIOLATED and p.trace is not None:
                    cand = (len(p.trace.actions), p.name, r.scenario, str(p.trace_path) if p.trace_path else None)
                    if best is None or cand[:3] < best[:3]:
                        best = cand
        elapsed = sum(float(r.stats.get("elapsed_s") or 0) for r in runs)
        if best is None:
            return cls(variant, False, elapsed_s=elapsed, expected=expected, bug=bug)
        return cls(variant, True, best[1], best[2], best[0], elapsed, expected, bug, best[3])


def _as_row(row: MutantRow | Mapping[str, Any]) -> MutantRow:
    if isinstance(row, MutantRow):
        return row
    known = set(MutantRow.__dataclass_fields__)
    data = {k: v for k, v in row.items() if k in known}
    if "trace_path" not in data and row.get("trace") is not None:
        data["trace_path"] = str(row["trace"])
    for key in ("expected", "missed"):
        if key in data:
            data[key] = tuple(data[key] or ())
    return MutantRow(**data)


def render_mutants(console: Console, rows: Sequence[MutantRow | Mapping[str, Any]]) -> None:
    """Mutation table: weakened variant → caught? by which invariant, where, how long; then the uncovered.

    ``rows`` are :class:`MutantRow` objects or dicts with the same keys (unknown
    keys are ignored; ``trace`` is read as ``trace_path``).
    """
    items = [_as_row(r) for r in rows]
    table = Table(title="keos — mutants (weakened protocol variants)", box=box.ROUNDED, title_style="bold",
                  expand=console.is_terminal)
    engines = any(m.engine for m in items)
    if engines:
        table.add_column("engine", no_wrap=True)
    table.add_column("variant · bug it re-enables", overflow="fold", ratio=3, min_width=16)
    table.add_column("result", no_wrap=True)
    table.add_column("caught by · in scenario", overflow="fold", ratio=2, min_width=12)
    table.add_column("steps", justify="right", no_wrap=True)
    table.add_column("time", justify="right", no_wrap=True)
    for m in items:
        variant = Text(m.variant, style="bold")
        if m.bug:
            variant.append(f"\n{m.bug}", style="dim")
        if not m.covered:
            caught = Text("– uncovered", style="bold yellow")
            by = Text("not exercised by this engine", style="dim")
        elif m.caught:
            caught = Text("✓ caught", style="bold green")
            by = Text(m.invariant or "?")
            by.append(f"\n{m.scenario or '-'}", style="dim")
            if m.expected and m.invariant not in m.expected:
                by.append(f"\n(documented: {', '.join(m.expected)})", style="yellow")
        elif m.timed_out:
            caught = Text("⧗ out of time", style="bold white on red")
            by = Text(f"no violation up to depth {m.depth_reached}" if m.depth_reached is not None else "time budget")
            by.append(f"\nexpected: {', '.join(m.expected)}" if m.expected else "", style="dim")
        else:
            caught = Text("✗ escaped", style="bold white on red")
            by = Text(f"expected: {', '.join(m.expected)}" if m.expected else "-", style="dim")
            if m.scenario and m.missed:  # caught on some of its scenarios, not on each
                by.append(f"\ncaught in {m.scenario}, not in {', '.join(m.missed)}", style="yellow")
        table.add_row(
            *([m.engine] if engines else []),
            variant,
            caught,
            by,
            str(m.trace_length) if m.trace_length is not None else "-",
            format_duration(m.elapsed_s),
        )
    console.print(table)
    covered = [m for m in items if m.covered]
    caught_n = sum(1 for m in covered if m.caught)
    line = Text(
        f"mutation score {caught_n}/{len(covered)}", style="bold green" if caught_n == len(covered) else "bold red"
    )
    escaped = [_mutant_name(m) for m in covered if not m.caught and not m.timed_out]
    out_of_time = [_mutant_name(m) for m in covered if not m.caught and m.timed_out]
    uncovered = [_mutant_name(m) for m in items if not m.covered]
    if escaped:
        line.append(f"; escaped (no invariant caught them): {', '.join(escaped)}", style="red")
    if out_of_time:
        line.append(f"; not caught within the time budget (--time-budget): {', '.join(out_of_time)}", style="red")
    if not escaped and not out_of_time:
        line.append("; every exercised weakened variant is caught", style="green")
    if uncovered:
        line.append(f"; uncovered (not exercised by the engine): {', '.join(uncovered)}", style="yellow")
    console.print(line)


def _mutant_name(m: MutantRow) -> str:
    return f"{m.variant} ({m.engine})" if m.engine else m.variant


class _StatsColumn(ProgressColumn):
    """``12,345 states · 40,000 transitions · depth 17 · 9,100 states/s`` from the task's fields."""

    def render(self, task: Task) -> Text:
        f = task.fields
        if "states" not in f:
            return Text("")
        return Text(
            f"{f.get('states', 0):,} states · {f.get('transitions', 0):,} transitions · "
            f"depth {f.get('depth', 0)} · {f.get('rate', 0):,} states/s",
            style="cyan",
        )


def make_progress(console: Console) -> Progress:
    """A rich Progress for long runs; feed it with :func:`explore_progress` (or update fields yourself).

    Fields read per task: ``states``, ``transitions``, ``depth``, ``rate``.
    """
    return Progress(
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        _StatsColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def explore_progress(progress: Progress, description: str) -> Callable[[int, int, int], None]:
    """Add a task and return the ``progress(distinct_states, transitions, depth)`` callback of
    :func:`checker.explore.search.explore`, which also computes states/s."""
    task: TaskID = progress.add_task(description, total=None, states=0, transitions=0, depth=0, rate=0)
    start = time.perf_counter()

    def update(states: int, transitions: int, depth: int) -> None:
        elapsed = time.perf_counter() - start
        rate = round(states / elapsed) if elapsed > 0 else 0
        progress.update(task, states=states, transitions=transitions, depth=depth, rate=rate)

    return update


def render_coverage(console: Console, coverage: dict[str, int], expected: Iterable[str] = ()) -> None:
    """Events a run observed, grouped by prefix (``error:``, ``txn:``, ``fault:``, plain protocol events).

    ``expected`` names events that should have fired; those with no hit are listed as ``0``, in red.
    """
    counts = dict(coverage)
    for e in expected:
        counts.setdefault(e, 0)
    table = Table(title="coverage (events observed)", box=box.SIMPLE_HEAD, title_style="bold")
    table.add_column("group", style="bold")
    table.add_column("event")
    table.add_column("hits", justify="right")
    for group, events in coverage_groups(counts):
        for i, (event, n) in enumerate(events):
            table.add_row(group if i == 0 else "", event, Text(f"{n:,}", style="red bold" if n == 0 else ""))
        table.add_section()
    console.print(table)
    never = sorted(e for e, n in counts.items() if n == 0)
    if never:
        console.print(Text(f"never observed: {', '.join(never)}", style="red"))


def render_transition_coverage(console: Console, coverage: Any) -> None:
    """The coordinator transitions a run observed against the valid-previous-state table.

    ``coverage`` is a :class:`checker.coverage.TransitionCoverage`; observed legal edges are green with
    their counts, unobserved ones dim, and any observed edge the table forbids red.
    """
    table = Table(
        title=f"transaction coordinator transitions: {len(coverage.observed)}/"
        f"{len(coverage.observed) + len(coverage.unobserved)} of the table observed",
        box=box.SIMPLE_HEAD,
        title_style="bold",
    )
    table.add_column("from")
    table.add_column("to")
    table.add_column("hits", justify="right")
    for src, dst in coverage.observed:
        table.add_row(src, dst, Text(f"{coverage.counts[(src, dst)]:,}", style="green"))
    for src, dst in coverage.unobserved:
        table.add_row(Text(src, style="dim"), Text(dst, style="dim"), Text("0", style="dim"))
    for src, dst in coverage.illegal:
        table.add_row(Text(src, style="red bold"), Text(dst, style="red bold"), Text("ILLEGAL", style="red bold"))
    console.print(table)
