"""``keos conform``: check a real Kafka client and broker against keos's anomalies.

::

    keos conform [--target librdkafka-mock|tansu] [--workload NAME | --scenario NAME|FILE] [--seed N]
    keos conform --target kafka [--kafka-home DIR] [--nodes 1|3]   # real Apache Kafka, started by keos
        [--nemesis all|KIND,... --time-limit S]                    # a seeded random nemesis
    keos conform --bootstrap-servers HOST:PORT[,...]     # your own cluster
    keos conform --history FILE.json|history.edn          # a recorded history (keos or Jepsen)
        [--out DIR] [--json] [--html FILE] [--junit FILE] [--export-edn FILE] [--strict]

Exit codes as ``keos check``: 0 no new finding (documented deviations of the
target's profile are shown but do not fail), 1 a new anomaly, 2 bad input or a
target that cannot run here (missing ``conformance`` extra, a broker that does
not start), 3 an anomaly whose evidence did not show it again when checked
alone (a checker bug, never shown as a finding).  The history is written under
``--out`` as JSON (and as Jepsen EDN with ``--export-edn``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["cmd_conform", "register"]

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_DISAGREEMENT = 0, 1, 2, 3


def register(sub: Any) -> None:
    """Add ``conform`` to ``keos``'s subcommands."""
    from keos.checker.conform.workload import WORKLOADS

    s = sub.add_parser("conform", help="check a real Kafka client and broker (or a recorded history) for anomalies")
    s.add_argument(
        "--target", choices=("librdkafka-mock", "tansu", "bootstrap", "kafka"), help="default: librdkafka-mock"
    )
    s.add_argument(
        "--kafka-home",
        metavar="DIR",
        help="--target kafka: an unpacked Kafka distribution (default: $KAFKA_HOME, else ../shared/kafka)",
    )
    s.add_argument("--nodes", type=int, choices=(1, 3), default=1, help="--target kafka: KRaft nodes to start")
    s.add_argument(
        "--bootstrap-servers", metavar="HOST:PORT[,...]", help="your own cluster (implies --target bootstrap)"
    )
    s.add_argument("--workload", choices=tuple(WORKLOADS), default="default")
    s.add_argument(
        "--nemesis",
        metavar="KINDS",
        help="a seeded random nemesis: all, none, or a comma list of kill,pause,partition,reset,drop,leader,"
        "client-pause (each target supports some); the schedule comes from --seed and is written into the history",
    )
    s.add_argument(
        "--time-limit", type=float, default=120.0, metavar="S", help="with --nemesis: seconds of workload (120)"
    )
    s.add_argument("--scenario", metavar="NAME|FILE", help="derive the workload and producer settings from a scenario")
    s.add_argument("--history", metavar="FILE", help="check a recorded history (.json, or Jepsen's .edn) instead")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", default="keos-out", help="directory for the history and findings")
    s.add_argument("--json", action="store_true", help="findings as JSON on stdout")
    s.add_argument("--html", metavar="FILE", help="write an HTML report")
    s.add_argument("--junit", metavar="FILE", help="write a JUnit XML report")
    s.add_argument("--export-edn", metavar="FILE", help="also write the history as Jepsen's history.edn")
    s.add_argument("--strict", action="store_true", help="exit 1 when a check is untested")
    s.set_defaults(func=cmd_conform)


def _fail(message: str) -> int:
    print(f"keos: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def cmd_conform(args: argparse.Namespace) -> int:
    """``keos conform``."""
    from rich.console import Console

    from keos.checker.conform.edn import history_to_edn
    from keos.checker.conform.history import HistoryError, dump_json
    from keos.checker.conform.report import anomalies_json, render_evidence, to_engine_result
    from keos.checker.conform.runner import ConformRun, KafkaOptions, NemesisOptions, check_file, run
    from keos.checker.conform.targets import TargetUnavailable
    from keos.checker.conform.workload import WorkloadConfig
    from keos.checker.results import Verdict
    from keos.model.interface import ModelError

    if args.bootstrap_servers and args.target not in (None, "bootstrap"):
        return _fail(f"--target {args.target} and --bootstrap-servers cannot be combined: --target starts a broker "
                     "keos controls, --bootstrap-servers names your own cluster; give one")
    target = args.target or ("bootstrap" if args.bootstrap_servers else "librdkafka-mock")
    if args.history and (args.target or args.bootstrap_servers):
        return _fail("--history checks a recorded history; it takes no --target or --bootstrap-servers")
    if args.scenario and (args.history or args.workload != "default"):
        return _fail("--scenario gives the workload; it takes no --workload or --history")
    if (args.kafka_home or args.nodes != 1) and target != "kafka":
        return _fail("--kafka-home and --nodes are for --target kafka")
    if args.nemesis and args.history:
        return _fail("--nemesis runs a workload; it takes no --history")
    if target == "bootstrap" and not args.bootstrap_servers:
        return _fail("--target bootstrap needs --bootstrap-servers HOST:PORT[,...]")
    console = Console(stderr=args.json)
    try:
        if args.history:
            result: ConformRun = check_file(args.history)
        else:
            what = f"scenario={args.scenario}" if args.scenario else f"workload={args.workload}"
            console.print(f"[bold]conform[/bold] {target} [dim]{what} seed={args.seed}[/dim]")
            kafka = KafkaOptions(args.kafka_home, args.nodes, str(Path(args.out) / "kafka-logs"))
            nemesis = NemesisOptions(args.nemesis, args.time_limit) if args.nemesis else None
            result = run(
                target,
                args.workload,
                WorkloadConfig(seed=args.seed),
                args.bootstrap_servers,
                args.scenario,
                kafka,
                nemesis,
            )
    except (HistoryError, TargetUnavailable, ValueError, ModelError) as exc:
        return _fail(str(exc))
    except ImportError as exc:
        return _fail(f"{exc} (install the conformance extra: pip install 'keos[conformance]')")
    except Exception as exc:  # a broker or client failure: never a traceback, never a violation
        return _fail(f"the run against {target} failed: {type(exc).__name__}: {exc}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"conform-{result.target.name}-{Path(result.workload).stem}"
    if not args.history:
        console.print(f"history: {dump_json(result.history, out / f'{stem}.history.json')}")
    findings = anomalies_json(result)
    (out / f"{stem}.anomalies.json").write_text(json.dumps(findings, indent=2, default=str) + "\n")
    if args.export_edn:
        edn_path = Path(args.export_edn)
        edn_path.parent.mkdir(parents=True, exist_ok=True)
        edn_path.write_text(history_to_edn(result.history))
        console.print(f"history.edn: {edn_path}")

    engine_result = to_engine_result(result)
    if args.json:
        print(json.dumps(findings, indent=2, default=str))
    from keos.reports.terminal import render_summary

    render_summary(console, [engine_result], title=f"keos conform — {result.target.name} ({result.target.version})")
    render_evidence(console, result)
    if args.html:
        from keos.reports.html import write_html

        console.print(f"HTML report: {write_html(Path(args.html), [engine_result], title='keos conformance report')}")
    if args.junit:
        from keos.reports.junit import write_junit

        console.print(f"JUnit report: {write_junit(Path(args.junit), [engine_result])}")
    if result.unconfirmed:
        for a in result.unconfirmed:
            console.print(f"[red bold]checker disagreement[/red bold]: {a.kind} not shown by its own evidence")
        return EXIT_DISAGREEMENT
    verdicts = {p.verdict for p in engine_result.properties}
    if Verdict.VIOLATED in verdicts or (args.strict and Verdict.UNTESTED in verdicts):
        return EXIT_VIOLATION
    return EXIT_OK
