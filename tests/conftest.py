"""Shared fixtures: one real Kafka node for every test that needs one (started once per session)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

# -- the JVMs the tests start: C1 only -------------------------------------------------------------------
# Spark drivers and executors, a standalone Spark cluster, the Spark Connect server, Kafka's StorageTool and
# brokers all live for seconds to a minute here, where C2 (the optimising JIT) spends more CPU compiling than
# its code saves; on 2 cores that CPU is the suite's wall time.  ``-XX:TieredStopAtLevel=1`` keeps the JVMs on C1
# (what they compute is the same; only how fast their hot code runs).  Measured alone (all CPU of the processes
# started, JVMs included, at a load of 9-14): tests/test_conform_kafka.py 31.7 -> 18.2 CPU-s (132 -> 77 s);
# test_sweep's two Spark tests on one local[2] JVM 101.9 -> 78.9 (C1 with serial GC, which Kafka's own
# -XX:+UseG1GC forbids, so C1 only here).  JAVA_TOOL_OPTIONS reaches every JVM a test starts, directly or through
# keos; each prints "Picked up JAVA_TOOL_OPTIONS" on its stderr.  ``KEOS_TEST_FULL_JIT=1`` leaves the JVMs alone.


def _c1_only_jvms() -> None:
    import os

    options = os.environ.get("JAVA_TOOL_OPTIONS", "")
    if os.environ.get("KEOS_TEST_FULL_JIT") != "1" and "TieredStopAtLevel" not in options:
        os.environ["JAVA_TOOL_OPTIONS"] = f"{options} -XX:TieredStopAtLevel=1".strip()


_c1_only_jvms()


def _started(cluster: Any) -> Iterator[Any]:
    """Start ``cluster``, yield it, stop it; the teardown checks that stopping left no process and no directory."""
    cluster.start()
    try:
        yield cluster
    finally:
        procs = [n.proc for n in cluster.nodes]
        run_dir = cluster.run_dir
        cluster.stop()
        assert all(p is not None and p.poll() is not None for p in procs), "a Kafka JVM survived stop()"
        assert run_dir is not None and not run_dir.exists(), f"{run_dir} survived stop()"


@pytest.fixture(scope="session")
def kafka_node() -> Iterator[Any]:
    """One combined KRaft node from ``../shared/kafka`` (or ``KAFKA_HOME``), with fast transaction expiry.

    ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` is 1 s (Kafka's default
    is 10 s) so a stalled producer's transaction is aborted soon after its timeout.  The
    teardown checks that stopping left no process and no directory behind.  The broker
    advertises a keos proxy, so ``keos conform``'s proxy faults work on it too.
    """
    from keos.checker.conform.targets.kafka_broker import KafkaCluster

    cluster = KafkaCluster(
        1,
        proxied=True,
        broker_properties={
            "transaction.abort.timed.out.transaction.cleanup.interval.ms": 1000,
            "transaction.remove.expired.transaction.cleanup.interval.ms": 60000,
        },
    )
    yield from _started(cluster)


@pytest.fixture(scope="session")
def kafka_node_tv2() -> Iterator[Any]:
    """One combined KRaft node with ``transaction.version`` 2 finalized, as ``keos differential
    --transaction-version 2`` starts it (``TV2_FORMAT_ARGS``, ``TV2_BROKER_PROPERTIES``): only the tests that judge
    the TV2 abstractions ask for it, so a session without them starts no second broker."""
    from keos.checker.cli.differential import BROKER_PROPERTIES, TV2_BROKER_PROPERTIES, TV2_FORMAT_ARGS
    from keos.checker.conform.targets.kafka_broker import KafkaCluster

    cluster = KafkaCluster(1, broker_properties={**BROKER_PROPERTIES, **TV2_BROKER_PROPERTIES},
                           format_args=TV2_FORMAT_ARGS)
    yield from _started(cluster)


# -- per-test CPU seconds (opt-in) ---------------------------------------------------------------------
# Wall-clock ``--durations`` measure the machine's load as much as a test; with ``KEOS_TEST_CPU=FILE`` every
# test appends "<cpu seconds>\t<node id>" to FILE: user + system time of this process and of the child
# processes it reaped during the test (``keos`` CLI subprocesses, Spark and Kafka JVMs once they exit), so
# the suite's budget can be spent where its CPU goes, on a loaded machine too.


def _cpu_now() -> float:
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    import os

    path = os.environ.get("KEOS_TEST_CPU")
    start = _cpu_now() if path else 0.0
    _SEARCH_LOG["test"] = item.nodeid
    yield
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(f"{_cpu_now() - start:.2f}\t{item.nodeid}\n")


# -- every explicit search, with the test that ran it (opt-in) -----------------------------------------------
# With ``KEOS_TEST_SEARCHES=FILE`` every ``explore()`` run in a test process appends one JSON line to FILE: the
# test's node id, scenario, variant, options, permitted properties, the model's configuration, distinct states
# and CPU seconds.  Grouping the lines by (scenario, variant, options, configuration) shows the same search run
# by several tests -- work to share (README, "Test-suite cost").  Searches in ``keos`` subprocesses are not seen.
_SEARCH_LOG: dict[str, str] = {"test": "?"}


def pytest_configure(config: pytest.Config) -> None:
    import os

    path = os.environ.get("KEOS_TEST_SEARCHES")
    if not path:
        return
    import json
    import resource

    from keos.checker.explore import search

    inner = search._explore

    def logged(model: Any, scenario: str, variant: str, options: Any, permitted: tuple[str, ...],
               progress: Any) -> Any:
        own = resource.getrusage(resource.RUSAGE_SELF)
        start = own.ru_utime + own.ru_stime
        result = inner(model, scenario, variant, options, permitted, progress)
        own = resource.getrusage(resource.RUSAGE_SELF)
        row = {"test": _SEARCH_LOG["test"], "scenario": scenario, "variant": variant, "options": repr(options),
               "permitted": list(permitted), "config": repr(getattr(model, "config", None)),
               "states": result[0].stats.get("distinct_states"),
               "cpu_s": round(own.ru_utime + own.ru_stime - start, 2)}
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(row) + "\n")
        return result

    search._explore = logged  # type: ignore[assignment]
