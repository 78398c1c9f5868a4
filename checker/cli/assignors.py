"""``keos assignors``: the partition assignors' properties, balance and movement, as a table.

Runs every built-in assignor (or those named with ``--assignor``, a built-in name or a user
callable ``module:function``) over the book's worked examples and ``--cases`` seeded random groups
(:mod:`keos.checker.assignor_check`), and prints one row per assignor: mean and worst spread
(partitions of the busiest minus the idlest member), how often z3 proves a better spread was
possible, partitions moved per rebalance against the minimum balance forces, and each property's
verdict.  A property the assignor promises that fails is a violation (exit 1, the failing case and
reason printed); a property it is known not to keep (Range's and RoundRobin's imbalance) shows its
counterexample and is not a failure.  A user assignor must keep ``exactly_once``.

Exit codes: 0 every promised property holds, 1 a violation, 2 bad input (unknown assignor,
unimportable callable), 4 a user assignor raised.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table

from keos.checker.api import EXIT_BAD_INPUT, EXIT_OK, EXIT_VIOLATION
from keos.checker.assignor_bounds import RangeSpreadProof, prove_range_spread
from keos.checker.assignor_check import AssignorReport, check_assignors, default_assignors
from keos.model.coordinator.group.assignors import AssignorError, load_assignor

EXIT_ASSIGNOR_CRASHED = 4

_MARK = {
    "holds": "[green]✓[/green]",
    "violation": "[bold red]✗ VIOLATED[/bold red]",
    "known": "[yellow]✗ (known)[/yellow]",
    "unjudged-fail": "[dim]✗[/dim]",
    "unjudged-ok": "[dim]✓[/dim]",
}


def register(sub: Any) -> None:
    """Add the ``assignors`` subcommand to the ``keos`` parser."""
    s = sub.add_parser("assignors", help="partition assignors: exactly-once, balance, stickiness (exit 1 if broken)")
    s.add_argument(
        "--assignor",
        action="append",
        metavar="NAME|MODULE:FUNCTION",
        help="repeatable; default: range, roundrobin, sticky, cooperative-sticky",
    )
    s.add_argument("--cases", type=int, default=200, help="seeded random groups besides the book's examples")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--no-z3", action="store_true", help="skip z3's optimal-spread comparison")
    s.add_argument("--json", action="store_true", help="machine-readable results on stdout")
    s.set_defaults(func=run)


def _mark(outcome_expected: str, failed: bool) -> str:
    if outcome_expected == "holds":
        return _MARK["violation"] if failed else _MARK["holds"]
    if outcome_expected == "known violation":
        return _MARK["known"] if failed else _MARK["holds"]
    return _MARK["unjudged-fail"] if failed else _MARK["unjudged-ok"]


def _as_json(report: AssignorReport) -> dict[str, Any]:
    return {
        "assignor": report.assignor,
        "cases": report.cases,
        "max_spread": report.max_spread,
        "mean_spread": report.spread_total / report.cases if report.cases else 0.0,
        "above_z3_optimum": report.above_optimum,
        "z3_checked": report.optimum_checked,
        "rebalances": report.rebalances,
        "moved": report.moved,
        "moved_equal": report.moved_equal,
        "forced_equal": report.forced,
        "cooperative_max_rounds": report.max_rounds,
        "error": report.error,
        "properties": {
            name: {
                "expected": p.expected,
                "checked": p.checked,
                "counterexample": None
                if p.first_failure is None
                else {"case": p.first_failure[0], "reason": p.first_failure[1]},
            }
            for name, p in report.properties.items()
        },
    }


def _proved(p: RangeSpreadProof) -> bool:
    return p.bound_proved and p.tight and p.round_robin_bound_proved


def run(args: argparse.Namespace) -> int:
    names = args.assignor or default_assignors()
    if args.cases < 0:
        print("keos: error: --cases must be >= 0", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        for name in names:
            load_assignor(name)
    except AssignorError as exc:
        print(f"keos: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    reports = check_assignors(names, random_count=args.cases, seed=args.seed, z3_optimum=not args.no_z3)
    proofs = [] if args.no_z3 else [prove_range_spread(t) for t in (1, 2, 3)]
    violated = any(r.violations for r in reports) or not all(_proved(p) for p in proofs)
    crashed = any(r.error for r in reports)
    if args.json:
        print(
            json.dumps(
                {
                    "assignors": [_as_json(r) for r in reports],
                    "violation": violated,
                    "z3_proofs": [p.__dict__ for p in proofs],
                },
                indent=2,
            )
        )
    else:
        console = Console(highlight=False)
        _render(console, reports, args)
        for p in proofs:
            mark = "[green]proved[/green]" if _proved(p) else "[bold red]NOT PROVED[/bold red]"
            console.print(
                f"z3 {mark}: with equal subscriptions to {p.topics} topic(s), any member and partition "
                f"counts, Range's spread <= {p.topics} (reached: {p.tight}) and RoundRobin's <= 1"
            )
    if violated:
        return EXIT_VIOLATION
    return EXIT_ASSIGNOR_CRASHED if crashed else EXIT_OK


def _render(console: Console, reports: list[AssignorReport], args: argparse.Namespace) -> None:
    balance = Table(title=f"Balance and movement: the book's examples + {args.cases} random groups (seed {args.seed})")
    balance.add_column("assignor", style="bold")
    balance.add_column("spread mean", justify="right")
    balance.add_column("spread max", justify="right")
    balance.add_column("z3: better spread existed", justify="right")
    balance.add_column("moved (rebalances)", justify="right")
    balance.add_column("equal subs: moved / forced", justify="right")
    for r in reports:
        mean = r.spread_total / r.cases if r.cases else 0.0
        name = r.assignor + (f" [dim](settles in ≤{r.max_rounds} rebalances)[/dim]" if r.max_rounds > 1 else "")
        balance.add_row(
            name,
            f"{mean:.2f}",
            str(r.max_spread),
            "—" if not r.optimum_checked else f"{r.above_optimum} of {r.optimum_checked}",
            f"{r.moved} ({r.rebalances})",
            f"{r.moved_equal} / {r.forced}",
        )
    console.print(balance)
    props = Table(title="Properties (✓ holds, ✗ (known) expected counterexample, ✗ VIOLATED promised but broken)")
    props.add_column("property", style="bold")
    for r in reports:
        props.add_column(r.assignor, justify="center")
    for name in list(reports[0].properties) if reports else []:
        props.add_row(name, *(_mark(r.properties[name].expected, r.properties[name].failed) for r in reports))
    console.print(props)
    for r in reports:
        if r.error:
            console.print(f"[bold red]{r.assignor} raised[/bold red] on {r.error}")
        for p in r.properties.values():
            if p.first_failure is None or p.expected == "not judged":
                continue
            case, reason = p.first_failure
            label = "[bold red]VIOLATION[/bold red]" if p.violation else "[yellow]known counterexample[/yellow]"
            console.print(f"{label} {r.assignor} / {p.name}: {case}: {reason}")
    console.print(
        "[dim]spread = partitions of the busiest member minus the idlest; 'z3: better spread existed' counts "
        "groups where z3 proves a smaller spread exists; 'forced' = the fewest owned partitions any "
        "balanced assignment must move.[/dim]"
    )
