"""Real Apache Kafka as a ``keos conform`` target: ``--target kafka [--kafka-home DIR] [--nodes 1|3]``.

keos starts the brokers itself (:class:`keos.checker.conform.targets.kafka_broker.KafkaCluster`),
each behind a keos :class:`~keos.checker.conform.proxy.Proxy` (the brokers advertise the
proxies' addresses, so every client connection crosses one), and offers the workload
faults Kafka's own clients meet in production:

* retriable produce errors: the proxies reset every client connection, so requests in
  flight are lost and retried (KIP-98 §5.2: the broker must recognise a retried batch
  by its sequence number);
* late produce responses: the proxies drop the brokers' answers for longer than the
  client's ``request.timeout.ms``, then reset those connections;
* a bounce: ``kill -9`` of a broker (on one node, the whole cluster) and a restart from
  its data;
* a transaction-coordinator move: the node leading the ``__transaction_state``
  partition of the transactional id (``abs(String.hashCode) % partitions``,
  ``TransactionStateManager.partitionFor``, Kafka 4.0) is killed and restarted, so the
  coordinator moves to another replica (three nodes) or is reloaded from the log (one node).

Kafka's coordinator aborts a transaction whose producer went silent once
``transaction.timeout.ms`` passed, checked every
``transaction.abort.timed.out.transaction.cleanup.interval.ms``
(``TransactionCoordinator.abortTimedOutTransactions``); keos lowers that interval to
1 s (Kafka's default is 10 s) so stalled-producer phases stay short, and records
the value in the history (``abort_interval_ms``) for ``commit-after-expiry``.

The profile is empty: every anomaly on real Kafka is a finding.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..nemesis import NemesisDriver
from ..workload import Faults
from . import TargetInfo
from .kafka_broker import KafkaCluster

__all__ = ["ABORT_INTERVAL_MS", "KafkaFaults", "KafkaNemesis", "KafkaTarget", "transaction_partition"]

#: ``transaction.abort.timed.out.transaction.cleanup.interval.ms`` keos gives its brokers.
ABORT_INTERVAL_MS = 1000


def _java_string_hash(s: str) -> int:
    """``java.lang.String.hashCode`` (UTF-16 code units, 32-bit wrap-around)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + int.from_bytes(data[i : i + 2], "big")) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def transaction_partition(transactional_id: str, partitions: int) -> int:
    """The ``__transaction_state`` partition owning ``transactional_id`` (``Utils.abs(hashCode) % n``)."""
    return (_java_string_hash(transactional_id) & 0x7FFFFFFF) % partitions


class KafkaFaults(Faults):
    """Faults on keos-started Kafka: proxy resets and lost answers, kill -9 and restart of brokers."""

    def __init__(self, cluster: KafkaCluster, request_timeout_ms: int, restarts: bool = True) -> None:
        self.cluster = cluster
        self.request_timeout_ms = request_timeout_ms
        self.restarts = restarts  # kill -9 + restart costs a node's start-up time (~25 s for one node)
        self.log: list[str] = []

    def _say(self, what: str) -> str:
        self.log.append(what)
        return what

    def retriable_produce_errors(self, key_topic: str, partition: int) -> str | None:
        n = sum(node.proxy.reset_all() for node in self.cluster.nodes if node.proxy is not None)
        return self._say(f"proxies reset {n} client connection(s): requests in flight are retried")

    def late_produce_response(self, key_topic: str, partition: int) -> str | None:
        window = (self.request_timeout_ms + 800) / 1000
        for node in self.cluster.nodes:
            if node.proxy is not None:
                node.proxy.drop_responses(window)
        return self._say(f"proxies drop the brokers' answers for {window:.1f} s, then reset those connections")

    def _bounce_node(self, node_id: int) -> None:
        self.cluster.kill(node_id)
        time.sleep(0.5)
        self.cluster.restart(node_id)
        self.cluster.wait_ready(90)

    def leader_of(self, topic: str, partition: int) -> int | None:
        """The node leading ``topic``-``partition`` now (Metadata), or ``None``."""
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap_servers})
        try:
            md = admin.list_topics(topic, timeout=10)
            leader = md.topics[topic].partitions[partition].leader
        except Exception:
            return None
        return int(leader) if leader is not None and leader >= 0 else None

    def bounce(self) -> str | None:
        if not self.restarts:
            return None
        node_id = self.cluster.nodes[-1].node_id
        self._bounce_node(node_id)
        return self._say(f"kill -9 of Kafka node {node_id}, restarted from its log")

    def move_transaction_coordinator(self, transactional_id: str) -> str | None:
        if not self.restarts:
            return None
        parts = int(self.cluster.properties.get("transaction.state.log.num.partitions", "50"))
        p = transaction_partition(transactional_id, parts)
        leader = self.leader_of("__transaction_state", p)
        if leader is None:
            return None
        self._bounce_node(leader)
        after = self.leader_of("__transaction_state", p)
        return self._say(
            f"coordinator of {transactional_id} (__transaction_state-{p}, node {leader}) killed -9 and restarted; "
            f"the partition is now led by node {after}"
        )


class KafkaNemesis(NemesisDriver):
    """The random nemesis on keos-started Kafka: every fault kind of :data:`keos.checker.conform.nemesis.KINDS`."""

    def __init__(self, cluster: KafkaCluster, request_timeout_ms: int) -> None:
        self.cluster = cluster
        self.request_timeout_ms = request_timeout_ms
        multi = len(cluster.nodes) > 1
        # leader moves need a second replica to move to
        self.supported = tuple(
            k
            for k in ("kill", "pause", "partition", "reset", "drop", "leader", "client-pause")
            if multi or k != "leader"
        )

    def kill(self, node: int, down_s: float) -> str:
        self.cluster.kill(node)
        time.sleep(down_s)
        self.cluster.restart(node, wait_s=90)
        return f"kill -9 of node {node}; restarted from its log after {down_s:.1f} s"

    def pause(self, node: int, paused_s: float) -> str:
        self.cluster.pause(node)
        time.sleep(paused_s)
        self.cluster.resume(node)
        return f"SIGSTOP of node {node} for {paused_s:.1f} s, then SIGCONT"

    def partition(self, node: int, seconds: float) -> str:
        proxy = self.cluster.node(node).proxy
        if proxy is None:
            raise RuntimeError("the cluster was started without proxies")
        n = proxy.block(seconds)
        time.sleep(seconds)
        proxy.unblock()
        return f"node {node} cut off through its proxy for {seconds:.1f} s ({n} connection(s) reset)"

    def reset(self) -> str:
        n = sum(node.proxy.reset_all() for node in self.cluster.nodes if node.proxy is not None)
        return f"proxies reset {n} connection(s)"

    def drop(self) -> str:
        window = (self.request_timeout_ms + 800) / 1000
        for node in self.cluster.nodes:
            if node.proxy is not None:
                node.proxy.drop_responses(window)
        time.sleep(window)
        return f"the brokers' answers dropped for {window:.1f} s, then those connections reset"

    def leader(self) -> str:
        from confluent_kafka import ElectionType
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap_servers})
        # confluent-kafka 2.16.1 fails with SystemError when elect_leaders gets request_timeout or
        # operation_timeout keywords: call it bare and bound the wait on the future instead.
        fut = admin.elect_leaders(ElectionType.PREFERRED, None)
        result = fut.result(30)
        moved = sum(1 for err in (result or {}).values() if err is None)
        return f"preferred-replica election of every partition (ElectLeaders): {moved} leader(s) moved"

    def heal(self) -> str:
        done = []
        for node in self.cluster.nodes:
            if node.proxy is not None:
                node.proxy.unblock()
            if node.paused:
                self.cluster.resume(node.node_id)
                done.append(f"SIGCONT node {node.node_id}")
            if not node.alive:
                self.cluster.restart(node.node_id, wait_s=90)
                done.append(f"restarted node {node.node_id}")
        self.cluster.wait_ready(120)
        return "healed: " + (", ".join(done) or "every node up") + "; a transactional InitProducerId succeeds"


class KafkaTarget:
    """keos-started Apache Kafka (``nodes`` KRaft nodes, each behind a proxy); ``stop`` removes everything."""

    def __init__(
        self,
        nodes: int = 1,
        kafka_home: str | os.PathLike[str] | None = None,
        request_timeout_ms: int = 2000,
        broker_properties: dict[str, Any] | None = None,
        log_dir: str | os.PathLike[str] | None = None,
        cluster: KafkaCluster | None = None,
        restarts: bool = True,
    ) -> None:
        """Start a cluster, or use a started one (``cluster``, e.g. a test session's; then ``stop`` leaves it)."""
        self._owned = cluster is None
        if cluster is None:
            props = {"transaction.abort.timed.out.transaction.cleanup.interval.ms": ABORT_INTERVAL_MS}
            props.update(broker_properties or {})
            cluster = KafkaCluster(nodes, kafka_home, props, proxied=True, log_dir=log_dir)
            cluster.start()
        self.cluster = cluster
        nodes = len(cluster.nodes)
        self.bootstrap_servers = self.cluster.bootstrap_servers
        self.abort_interval_ms = int(
            self.cluster.properties.get("transaction.abort.timed.out.transaction.cleanup.interval.ms", 10000)
        )
        self.info = TargetInfo(
            "kafka",
            f"Apache Kafka {self.cluster.version} ({nodes} KRaft node{'s' if nodes > 1 else ''})",
            {},
            (
                f"distribution: {self.cluster.home}",
                f"logs: {', '.join(str(n.log_file) for n in self.cluster.nodes)}",
                "faults: keos proxies (connection resets, lost answers), kill -9 and restart of brokers",
            ),
        )
        self.faults = KafkaFaults(self.cluster, request_timeout_ms, restarts)
        self.nemesis = KafkaNemesis(self.cluster, request_timeout_ms)
        self.client_overrides: dict[str, Any] = {}
        self.claims_kafka_semantics = True

    def create_topic(self, topic: str, partitions: int) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        rf = min(3, len(self.cluster.nodes))
        futs = admin.create_topics([NewTopic(topic, partitions, rf)], request_timeout=30)
        for fut in futs.values():
            fut.result(40)

    def broker_trace(self) -> dict[str, Any]:
        return {
            "nodes": len(self.cluster.nodes),
            "abort_interval_ms": self.abort_interval_ms,
            "faults": list(self.faults.log),
            "node_events": {str(n.node_id): list(n.events) for n in self.cluster.nodes},
            "proxy_resets": sum(n.proxy.resets for n in self.cluster.nodes if n.proxy is not None),
        }

    def stop(self) -> None:
        if self._owned:
            self.cluster.stop()
