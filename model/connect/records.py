"""Configuration, ghost history and state records of the Connect model (:mod:`model.systems.connect`).

Layout of the Kafka cluster the Connect cluster uses:

* partitions: :data:`CONFIG_TOPIC` (the config topic, one partition),
  :data:`GLOBAL_OFFSETS` (the worker's global offsets topic),
  :data:`CONNECTOR_OFFSETS` (the connector's own ``offsets.storage.topic``,
  used when configured), :data:`OUTPUT` (the connector's target topic);
* transactional ids: :data:`LEADER_TID` = ``connect-cluster-${groupId}``,
  ``task_tid(n)`` = ``${groupId}-${connector}-${n}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from keos.model.codec import record
from keos.model.connect.config_topic import CONNECTOR
from keos.model.connect.producers import KafkaCluster
from keos.model.connect.worker import ConnectWorker

__all__ = [
    "CONFIG_TOPIC",
    "CONNECTOR_OFFSETS",
    "CONNECT_FAULT_KINDS",
    "GLOBAL_OFFSETS",
    "LEADER_TID",
    "OUTPUT",
    "PARTITION_NAMES",
    "SUPPORT_LEVELS",
    "ConnectConfig",
    "ConnectFaultBudget",
    "ConnectGhost",
    "ConnectState",
    "ConnectTopology",
    "task_tid",
]

CONFIG_TOPIC, GLOBAL_OFFSETS, CONNECTOR_OFFSETS, OUTPUT = 0, 1, 2, 3
PARTITION_NAMES = ("connect-configs", "connect-offsets", f"{CONNECTOR}-offsets", f"{CONNECTOR}-output")
LEADER_TID = 0

#: ``exactly.once.source.support`` values (``DistributedConfig``).
SUPPORT_LEVELS = ("disabled", "preparing", "enabled")

CONNECT_FAULT_KINDS = (
    "pause",
    "crash",
    "fencing_failure",
    "config_write_failure",
    "manual_restart",
    "offset_write_failure",
    "send_failure",
    "offset_copy_failure",
    "foreign_offset_record",
)


def task_tid(task: int) -> int:
    """The coordinator index of task ``task``'s transactional id."""
    return 1 + task


@dataclass(frozen=True)
class ConnectTopology:
    """The Connect cluster and the connector.

    Attributes:
        workers: ``exactly.once.source.support`` of each worker.
        leader: the initial leader.
        task_counts: the task count of each task-config generation; generation
            0 is committed in the config topic initially, each later one is
            written by a reconfiguration.
        owners: per generation, the task that reads each source partition.
        records: records per source partition.
        transaction_boundary: ``poll`` | ``interval`` | ``connector``.
        exactly_once_support: the connector's ``exactly.once.support``
            (``requested`` | ``required``).
        connector_exactly_once: what ``SourceConnector::exactlyOnceSupport``
            returns (``SUPPORTED`` | ``UNSUPPORTED`` | ``null``).
        connector_boundaries: what ``canDefineTransactionBoundaries`` returns.
        offsets_topic: ``global`` or ``connector`` (``offsets.storage.topic`` set).
        max_connector_aborts: how often the connector may abort a transaction
            (``TransactionContext.abortTransaction``).
        max_tombstones: how many source partitions the connector may finish
            and forget by committing a ``null`` offset for them (a tombstone).
        recreated_at: the generation whose task configs a connector deleted
            (``DELETE /connectors/{c}``) and created again writes; 0: the
            connector is never deleted.
        delivered: per source partition, how many of its records an earlier run
            of the connector delivered before the scenario starts (committed in
            the output topic, written by worker 0's task 0 of generation -1); empty:
            none.  Their source offset (the next position) is committed where
            ``delivered_offsets`` says.
        delivered_offsets: per source partition, where that earlier run's offset
            is: ``global`` (the worker's global offsets topic only: the connector
            ran before it had its own ``offsets.storage.topic``, KIP-618
            §Migration), ``connector`` (its own topic only: the copy into the global
            topic failed, which ``ConnectorOffsetBackingStore`` only logs) or
            ``both`` (its own topic and the copy in the global one).
        offsets_read: how a worker reads the offsets of a connector with its own
            offsets topic (:func:`model.connect.offsets.combined_offsets`):
            ``kip-618`` (the documented contract: the connector's topic, the
            global topic for partitions it lacks -- KIP-618 §Migration and the
            Javadoc of ``ConnectorOffsetBackingStore.get``) or ``kafka-4.0``
            (what the code of apache/kafka 1eb7644 does: the connector's topic
            only, its missing partitions read as no offset).
    """

    workers: tuple[str, ...] = ("enabled", "enabled")  # no mutate: scenario default
    leader: int = 0  # no mutate: scenario default
    task_counts: tuple[int, ...] = (1,)  # no mutate: scenario default
    owners: tuple[tuple[int, ...], ...] = ((0,),)  # no mutate: scenario default
    records: int = 1  # no mutate: scenario default
    transaction_boundary: str = "poll"  # no mutate: scenario default
    exactly_once_support: str = "requested"  # no mutate: scenario default
    connector_exactly_once: str = "SUPPORTED"  # no mutate: scenario default
    connector_boundaries: str = "UNSUPPORTED"  # no mutate: scenario default
    offsets_topic: str = "global"  # no mutate: scenario default
    max_connector_aborts: int = 0  # no mutate: scenario default
    max_tombstones: int = 0  # no mutate: scenario default
    recreated_at: int = 0  # no mutate: scenario default
    delivered: tuple[int, ...] = ()  # no mutate: scenario default
    delivered_offsets: tuple[str, ...] = ()  # no mutate: scenario default
    offsets_read: str = "kip-618"  # no mutate: scenario default

    @property
    def source_partitions(self) -> int:
        """Number of source partitions."""
        return len(self.owners[0])

    @property
    def max_tasks(self) -> int:
        """The largest task count of any generation."""
        return max(self.task_counts)

    def to_json(self) -> dict[str, Any]:
        """The topology as JSON."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)}


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class ConnectFaultBudget:
    """Fault budgets per kind (:data:`CONNECT_FAULT_KINDS`) and in total."""

    pause: int = 0  # no mutate: scenario default
    crash: int = 0  # no mutate: scenario default
    fencing_failure: int = 0  # no mutate: scenario default
    config_write_failure: int = 0  # no mutate: scenario default
    manual_restart: int = 0  # no mutate: scenario default
    offset_write_failure: int = 0  # no mutate: scenario default
    send_failure: int = 0  # no mutate: scenario default
    offset_copy_failure: int = 0  # no mutate: scenario default
    #: a record the Connect reader cannot parse appended to the offsets topic the tasks read first (KAFKA-15800)
    foreign_offset_record: int = 0  # no mutate: scenario default
    total: int = 1  # no mutate: scenario default

    def limits(self) -> tuple[int, ...]:
        """Per-kind limits in :data:`CONNECT_FAULT_KINDS` order."""
        return tuple(getattr(self, k) for k in CONNECT_FAULT_KINDS)

    def to_json(self) -> dict[str, int]:
        """The budget as JSON."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class ConnectConfig:
    """Everything that parameterises the Connect model."""

    topology: ConnectTopology = field(default_factory=ConnectTopology)
    faults: ConnectFaultBudget = field(default_factory=ConnectFaultBudget)


@record
class ConnectGhost(NamedTuple):
    """History kept only for checking.

    ``claims``: (worker, config-topic log end) each time a worker claimed the
    right to write the config topic (a transactional leader's
    ``claimWritePrivileges``; a plain leader's election).  ``starts``:
    (generation, output log end) when the first instance of a newer task-config
    generation entered its send loop.  ``live_fenced``: (worker, task,
    generation of the instance, generation fenced for) each time a task's
    current instance was fenced by something that is not a zombie: the group
    leader's zombie-fencing round (an instance of the generation the round
    read, past its own round), or initTransactions of another instance whose
    worker is in the group -- not a zombie that missed a rebalance (recorded
    only when it happens, so the state space does not grow).
    ``discarded``: (source partition, position) of every record whose
    transaction the connector aborted (``TransactionContext.abortTransaction``).
    ``illegal``: every transaction-coordinator transition a Connect producer's
    request made that ``TransactionState``'s table does not allow, every
    transition the coordinator itself refused as illegal, and (``task:``) every
    change to a task instance that :mod:`model.connect.lifecycle` does not
    allow (recorded only when it happens).
    ``unwritten``: (config record id, what the herder did with it) each time the herder went on as if a
    config-topic write had succeeded -- answered the request that asked for it, applied its effect -- while the
    config topic's read_committed view does not hold the record (recorded only when it happens).
    """

    claims: tuple[tuple[int, int], ...] = ()
    starts: tuple[tuple[int, int], ...] = ()
    live_fenced: tuple[tuple[int, int, int, int], ...] = ()
    discarded: tuple[tuple[int, int], ...] = ()
    illegal: tuple[str, ...] = ()
    unwritten: tuple[tuple[int, str], ...] = ()


@record
class ConnectState(NamedTuple):
    """The Connect cluster and its Kafka cluster at one instant.

    ``deleted_sources``: source partitions the connector finished and deleted
    in the source system (it committed a tombstone offset for each), which no
    task reads again.
    """

    workers: tuple[ConnectWorker, ...]
    leader: int
    rebalance_pending: bool
    kafka: KafkaCluster
    connector_aborts: int
    faults_used: tuple[int, ...]
    ghost: ConnectGhost
    deleted_sources: tuple[int, ...] = ()
