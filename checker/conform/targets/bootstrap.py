"""A user's own cluster, reached through ``--bootstrap-servers``.

keos does not start or control it: it creates the run's topics (named per run,
so runs never share data), drives the workload and checks the history.  With no
access to the brokers and no way to make them advertise a proxy, the broker-side
faults are not available; the run exercises the protocol paths a healthy
cluster takes (idempotent sends, commits, aborts, fencing, offsets in
transactions, read_committed).  Faults a user injects meanwhile (a broker
restart, a partition) show up in the history like any others.

The profile is empty: every anomaly on a real Kafka cluster is a finding.
"""

from __future__ import annotations

from typing import Any

from keos.checker.logs import client_logger

from ..workload import NoFaults
from . import TargetInfo, TargetUnavailable

__all__ = ["BootstrapTarget"]


class BootstrapTarget:
    """An existing cluster; ``replication_factor`` -1 lets the brokers choose (KIP-464)."""

    def __init__(self, bootstrap_servers: str, replication_factor: int = -1, timeout_s: float = 6.0) -> None:
        try:
            from confluent_kafka.admin import AdminClient
        except ImportError:
            raise TargetUnavailable("confluent-kafka is not installed (pip install 'keos[conformance]')") from None
        self.bootstrap_servers = bootstrap_servers
        self.replication_factor = replication_factor
        self.client_overrides: dict[str, Any] = {}
        self.faults = NoFaults()
        conf: dict[str, Any] = {"bootstrap.servers": bootstrap_servers, "logger": client_logger("admin")}
        admin = AdminClient(conf)
        try:
            md = admin.list_topics(timeout=timeout_s)
        except Exception as exc:
            admin.poll(0)  # delivers librdkafka's queued log lines to the logger (keos.log)
            raise TargetUnavailable(f"cannot reach {bootstrap_servers}: {exc}") from None
        self.info = TargetInfo(
            "bootstrap",
            f"cluster {md.cluster_id} ({len(md.brokers)} broker(s))",
            {},
            (f"bootstrap.servers: {bootstrap_servers}", "faults: none injected by keos (no access to the brokers)"),
        )

    def create_topic(self, topic: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        conf: dict[str, Any] = {"bootstrap.servers": self.bootstrap_servers, "logger": client_logger("admin")}
        admin = AdminClient(conf)
        futs = admin.create_topics([NewTopic(topic, partitions, self.replication_factor)], request_timeout=15)
        for fut in futs.values():
            fut.result(20)

    def broker_trace(self) -> dict[str, Any]:
        return {}

    def stop(self) -> None:
        """Nothing to stop: the cluster is the user's (the run's topics are left for inspection)."""
