"""``keos differential``: the model against a real Kafka broker, request by request (issue 26).

    keos differential --target kafka [--kafka-home DIR | --bootstrap-servers HOST:PORT]
                      --cases N --seed S [--transaction-version 2] [--out DIR] [--json] [--junit FILE]
                      [--time-budget SEC]

Starts one KRaft node from the distribution (``checker/conform/targets/kafka_broker.py``; short
``transaction.abort.timed.out.transaction.cleanup.interval.ms`` so timeout aborts are observable),
or uses a running broker, then runs the systematic cases and random walks of
:mod:`keos.checker.differential.cases` on the model and on the broker, comparing after every step.

Exit codes: 0 every compared step agreed; 1 a difference (shrunk and confirmed on both sides);
2 bad input or no Kafka/Java; 3 keos at fault (the broker answered something keos cannot decode,
or keos crashed); 4 partial (the time budget ran out before ``--cases`` sequences ran).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from keos.checker.cli import guard

__all__ = ["register"]

EXIT_OK, EXIT_DIFFERENCE, EXIT_BAD_INPUT, EXIT_KEOS, EXIT_PARTIAL = 0, 1, 2, 3, 4

#: Broker settings the cases rely on (timeout aborts within ~1 s; one partition per internal topic).
BROKER_PROPERTIES = {
    "transaction.abort.timed.out.transaction.cleanup.interval.ms": 500,
    "offsets.topic.num.partitions": 1,
    "transaction.state.log.num.partitions": 1,
    "auto.create.topics.enable": "false",
}

#: What transaction version 2 needs of the 1eb7644 build (KIP-890 part 2 still marked unstable there):
#: EndTxn v5 is ``latestVersionUnstable`` (``EndTxnRequest.json``) and ``transaction.version`` 2 is above the
#: latest production feature level (``Features.TRANSACTION_VERSION``, ``TransactionVersion.TV_2`` bootstraps
#: at ``IBP_4_0_IV2``), so the node is formatted with ``--release-version 4.0-IV2 --feature
#: transaction.version=2`` (``StorageTool.scala``) and allows unstable APIs and feature versions.
TV2_BROKER_PROPERTIES = {
    "unstable.api.versions.enable": "true",
    "unstable.feature.versions.enable": "true",
}
TV2_FORMAT_ARGS = ("--release-version", "4.0-IV2", "--feature", "transaction.version=2")


def register(sub: Any) -> None:
    """Add ``differential`` to ``keos``'s subcommands."""
    s = sub.add_parser("differential", help="compare the model with a real Kafka broker, request by request")
    s.add_argument("--target", choices=("kafka",), default="kafka")
    s.add_argument("--kafka-home", metavar="DIR", help="Kafka distribution (default: $KAFKA_HOME, ../shared/kafka)")
    s.add_argument("--bootstrap-servers", metavar="HOST:PORT", help="use this running broker instead of starting one")
    s.add_argument(
        "--cases", type=guard.positive_int, default=200, help="request sequences (systematic first, then random)"
    )
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--transaction-version", type=int, choices=(1, 2), default=1,
                   help="the client's transaction version: 2 sends EndTxn v5 to a broker with "
                        "transaction.version=2 (KIP-890 part 2); recorded in a corpus header")
    s.add_argument("--max-steps", type=guard.positive_int, default=10, help="longest random walk")
    s.add_argument("--no-systematic", action="store_true", help="random walks only")
    s.add_argument(
        "--time-budget", type=guard.budget_seconds, default=0.0, metavar="SEC", help="stop after SEC seconds (exit 4)"
    )
    mode = s.add_mutually_exclusive_group()
    mode.add_argument("--record", metavar="FILE",
                      help="also write Kafka's side of every agreeing case to FILE (a corpus --replay reads)")
    mode.add_argument("--replay", metavar="FILE", nargs="?", const="",
                      help="no broker: replay a recorded corpus on the model (default: the gate's, "
                      "scenarios/differential/kafka-4.0-tv1.jsonl.gz)")
    s.add_argument("--out", metavar="DIR", help="write summary.json and report.txt here")
    s.add_argument("--json", action="store_true", help="the summary as JSON on stdout")
    s.add_argument("--junit", metavar="FILE", help="write a JUnit XML report")
    s.set_defaults(func=cmd_differential)


def _fail(message: str) -> int:
    print(f"keos: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def build_cases(n: int, seed: int, max_steps: int, systematic: bool, tag: str) -> list[Any]:
    """The first ``n`` cases: the systematic cover (in a seeded order) then seeded random walks."""
    from keos.checker.differential.cases import random_case, systematic_cases

    rng = random.Random(seed)
    cases = []
    if systematic:
        sys_cases = systematic_cases(f"{tag}-s")
        rng.shuffle(sys_cases) if n < len(sys_cases) else None
        cases = sys_cases[:n]
    i = 0
    while len(cases) < n:
        cases.append(random_case(rng, f"{tag}-r{i}", max_steps))
        i += 1
    return cases


def cmd_differential(args: argparse.Namespace) -> int:
    """``keos differential``."""
    from keos.checker.conform.targets import TargetUnavailable
    from keos.checker.differential.runner import run_cases
    from keos.checker.differential.wire import KafkaWire, WireError

    for path in (args.out, args.junit, args.record):
        if path is not None and Path(path).exists() and Path(path).is_dir() != (path == args.out):
            return _fail(f"cannot write {path}")
    if args.replay is not None:
        return _replay(args)
    cluster = None
    host, port, version = "", 0, ""
    try:
        if args.bootstrap_servers:
            try:
                host, port_text = args.bootstrap_servers.split(",")[0].rsplit(":", 1)
                port = int(port_text)
            except ValueError:
                return _fail(f"--bootstrap-servers: expected HOST:PORT, got {args.bootstrap_servers!r}")
        else:
            from keos.checker.conform.targets.kafka_broker import KafkaCluster

            try:
                logs = Path(args.out) / "broker-logs" if args.out else None  # kept for a post-mortem
                tv2 = args.transaction_version >= 2
                props = {**BROKER_PROPERTIES, **(TV2_BROKER_PROPERTIES if tv2 else {})}
                cluster = KafkaCluster(1, kafka_home=args.kafka_home, broker_properties=props,
                                       log_dir=logs, format_args=TV2_FORMAT_ARGS if tv2 else ())
            except TargetUnavailable as exc:
                return _fail(str(exc))
            if not args.json:
                print(f"starting Kafka {cluster.version} from {cluster.home} ...", file=sys.stderr)
            cluster.start()
            version = cluster.version
            host, port = "127.0.0.1", cluster.nodes[0].port
        try:
            wire = KafkaWire(host, port, transaction_version=args.transaction_version)
            wire.wait_ready()
        except WireError as exc:
            return _fail(str(exc)) if args.bootstrap_servers else _keos_fault(str(exc))
        tag = f"keos-{args.seed}-{int(time.time()) % 100000}"
        cases = build_cases(args.cases, args.seed, args.max_steps, not args.no_systematic, tag)
        deadline = time.monotonic() + args.time_budget if args.time_budget else None

        def progress(done: int, total: int, diffs: int) -> None:
            if not args.json and (done % 50 == 0 or done == total):
                print(f"  {done}/{total} sequences, {diffs} distinct difference(s)", file=sys.stderr)

        try:
            if args.record:
                from keos.checker.differential.corpus import Corpus, record, write_corpus

                recorded, result = record(wire, cases, args.transaction_version, progress=progress,
                                          deadline=deadline)
                header = {"kafka_version": version or "(running broker)", "seed": args.seed,
                          "requested_cases": args.cases, "max_steps": args.max_steps,
                          "systematic": not args.no_systematic, "transaction_version": args.transaction_version,
                          "api_versions": dict(sorted(wire.versions.items())),
                          "unexplained_cases_left_out": len(result.unexplained)}
                write_corpus(Path(args.record), Corpus(header, recorded))
                print(f"recorded {len(recorded)} of {result.cases} cases to {args.record}", file=sys.stderr)
            else:
                result = run_cases(wire, cases, progress=progress, deadline=deadline,
                                   transaction_version=args.transaction_version)
        except WireError as exc:
            return _keos_fault(str(exc))
        finally:
            wire.close()
    finally:
        if cluster is not None:
            cluster.stop()
    meta = {"target": "kafka", "kafka_version": version, "seed": args.seed, "requested_cases": args.cases,
            "transaction_version": args.transaction_version,
            "partial": result.cases < len(cases), "versions": wire.versions}
    return _report(args, result, meta)


def _replay(args: argparse.Namespace) -> int:
    """``--replay``: the model against a recorded corpus (no broker); exit 1 on any difference."""
    from keos.checker.differential.corpus import DEFAULT_CORPUS, CorpusError, load_corpus, replay

    if args.bootstrap_servers or args.kafka_home or args.record:
        return _fail("--replay runs no broker: --bootstrap-servers/--kafka-home do not apply")
    path = Path(args.replay) if args.replay else DEFAULT_CORPUS
    try:
        corpus = load_corpus(path)
    except CorpusError as exc:
        return _fail(str(exc))
    deadline = time.monotonic() + args.time_budget if args.time_budget else None
    result = replay(corpus, deadline=deadline)
    meta = {"target": f"recorded Kafka ({path.name})", "kafka_version": corpus.header.get("kafka_version", ""),
            "corpus": str(path), "recorded_cases": len(corpus.cases),
            "transaction_version": corpus.transaction_version,
            "partial": result.cases < len(corpus.cases)}
    return _report(args, result, meta)


def _report(args: argparse.Namespace, result: Any, meta: dict[str, Any]) -> int:
    """Write the summary, text and JUnit reports a run asked for; the exit code (1 an unexplained difference,
    4 partial, else 0)."""
    from keos.reports.differential import as_json, render_text, write_junit

    summary = as_json(result, meta)
    text = render_text(result, meta)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (out / "report.txt").write_text(text + "\n")
    if args.junit:
        write_junit(Path(args.junit), result)
    print(json.dumps(summary, indent=2) if args.json else text)
    if result.unexplained:
        return EXIT_DIFFERENCE
    return EXIT_PARTIAL if meta["partial"] else EXIT_OK


def _keos_fault(message: str) -> int:
    print(f"keos: keos at fault: {message}", file=sys.stderr)
    return EXIT_KEOS
