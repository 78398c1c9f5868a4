"""Real Apache Kafka (``../shared/kafka``, KRaft): the broker launcher keos conform uses.

One node is started once per session (``kafka_node`` in ``conftest.py``) and shared
by every real-Kafka test.  CI has Java 17 and the distribution beside the clone, so
nothing here skips: a missing distribution or Java fails loudly.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from keos.checker.conform.targets import TargetUnavailable
from keos.checker.conform.targets.kafka_broker import KafkaUnavailable, find_java, process_state, resolve_kafka_home

pytestmark = pytest.mark.slow


def test_a_transactional_commit_on_real_kafka_is_read_committed(kafka_node: Any) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    topic = f"keos-launcher-{uuid.uuid4().hex[:6]}"
    admin = AdminClient({"bootstrap.servers": kafka_node.bootstrap_servers})
    for fut in admin.create_topics([NewTopic(topic, 1, 1)], request_timeout=15).values():
        fut.result(20)
    producer = Producer({"bootstrap.servers": kafka_node.bootstrap_servers, "transactional.id": topic})
    producer.init_transactions(30)
    for value, commit in ((b"committed", True), (b"aborted", False)):
        producer.begin_transaction()
        producer.produce(topic, value, partition=0)
        producer.flush(10)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    consumer = Consumer(
        {
            "bootstrap.servers": kafka_node.bootstrap_servers,
            "group.id": topic,
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    got = [m.value() for m in consumer.consume(10, 10) if m.error() is None]
    consumer.close()
    assert got == [b"committed"]
    assert kafka_node.version.startswith("4.")
    assert all(n.log_file.stat().st_size > 0 for n in kafka_node.nodes), "log4j2 wrote no broker log"


def test_pause_and_resume_a_node(kafka_node: Any) -> None:
    node = kafka_node.nodes[0]
    kafka_node.pause(1)
    assert node.paused and process_state(node.proc.pid) == "T"
    kafka_node.resume(1)
    assert not node.paused and process_state(node.proc.pid) in ("R", "S")
    kafka_node.wait_ready(30)


def test_a_missing_distribution_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(KafkaUnavailable, match="no Kafka distribution found"):
        resolve_kafka_home(tmp_path)
    monkeypatch.setenv("KAFKA_HOME", str(tmp_path))
    with pytest.raises(TargetUnavailable, match="KAFKA_HOME"):
        resolve_kafka_home()


def test_the_shared_distribution_is_found_beside_the_clone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_HOME", raising=False)
    home = resolve_kafka_home()
    assert (home / "libs").is_dir() and home.name == "kafka"


def test_missing_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", os.devnull)
    with pytest.raises(KafkaUnavailable, match="java not found"):
        find_java()


def test_conformance_run_on_real_kafka_passes_and_fences_an_open_transactions_zombie(kafka_node: Any) -> None:
    """A short ``keos conform --target kafka``: transactions, both zombie kinds, CTP, abandoned, drain.

    Real Kafka 4.0 (trunk 2024-10-25) shows no anomaly; the zombie fenced during its open
    transaction fails with a fencing error and its records stay invisible; proxy faults
    (resets, lost answers) are injected; the abandoned transaction is aborted in time.
    """
    from keos.checker.conform.runner import run
    from keos.checker.conform.targets.kafka import KafkaTarget
    from keos.checker.conform.workload import WorkloadConfig

    target = KafkaTarget(cluster=kafka_node, restarts=False)
    cfg = WorkloadConfig(transactions=4, ctp_batches=3, lso_grace_s=2.0, drain_timeout_s=5.0)
    result = run("kafka", "transactions", cfg, use_target=target)
    assert kafka_node.nodes[0].alive  # the session's broker is left running
    found = {k: v[0].summary for k, v in result.analysis.by_kind().items()}
    assert found == {} and result.unconfirmed == []
    ex = result.analysis.exercised
    assert ex["zombie-not-fenced"] and ex["G1a"] and ex["hanging-lso"] and ex["G1c"] is not None
    ops = result.history.ops
    open_zombie = [
        op
        for op in ops
        if op.f == "txn"
        and op.type != "invoke"
        and op.extra.get("instance") == 3
        and str(op.extra.get("transactional_id", "")).startswith("keos-conform-zombie")
    ]
    assert open_zombie and open_zombie[0].type != "ok"
    assert open_zombie[0].error in ("_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH")
    assert result.history.meta["kafka_semantics"] and result.history.meta["abort_interval_ms"] == 1000


def test_stop_kills_a_jvm_it_lost_track_of(tmp_path: Path) -> None:
    """A signal inside Popen (a restart under Ctrl-C) can leave a JVM outside ``node.proc``: stop finds it."""
    import subprocess
    import tempfile
    import time

    from keos.checker.conform.targets.kafka_broker import KafkaCluster

    cluster = KafkaCluster(1)
    cluster._run_dir = Path(tempfile.mkdtemp(prefix="keos-kafka-"))
    stray = subprocess.Popen(["sh", "-c", "sleep 300", str(cluster._run_dir)], start_new_session=True)
    time.sleep(0.3)
    assert stray.poll() is None
    cluster.stop()
    assert stray.wait(5) is not None and not cluster._run_dir.exists()
