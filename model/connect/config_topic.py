"""Kafka Connect's config topic as ``KafkaConfigBackingStore`` reads it (KIP-618).

The config topic is one partition (a :class:`~model.log.partition.PartitionLeader`)
holding, for the modelled connector ``source``:

* ``task-source-<n>``: the config of task ``n`` of a new set of task configs.
  ``processTaskConfigRecord`` only *defers* it (``deferredTaskUpdates``): a
  task config is not part of any snapshot until its commit record is read;
* ``commit-source``: the tasks-commit record with the task count, which makes
  the deferred task configs effective (``processTasksCommitRecord``).  An
  applied commit -- its deferred set covers tasks 0..count-1 -- increments the
  connector's ``taskConfigGeneration`` (from 0); every commit adds the
  connector to ``connectorsPendingFencing`` and clears the deferred set.  The
  leader writes the task configs and their commit record in two separate
  privileged writes (``KafkaConfigBackingStore.putTaskConfigs``, Kafka 4.0,
  apache/kafka 1eb7644: ``sendPrivileged`` of the task configs, a read to the
  end, then ``sendPrivileged`` of the commit), so a leader that pauses, crashes
  or is fenced in between leaves an uncommitted set in the topic, which no
  worker may act on;
* ``tasks-fencing-source``: the **task-count record** {task-count}.  Reading it
  sets ``connectorTaskCountRecords`` and removes the connector from
  ``connectorsPendingFencing`` (KIP-618 §Task count records: a task-count record that
  follows the latest task configs means the tasks may start without fencing);
* ``connector-source``: the connector's config; ``null`` (a tombstone) deletes
  the connector.  ``processConnectorRemoval`` drops its config, task count and
  task configs but keeps its task-count record, task-config generation and
  pending fencing: a zombie task of the deleted connector must still be fenced
  if the connector is created again (KAFKA-14147 review, PR #12490).  A commit
  record of a connector without a config is ignored (``processTasksCommitRecord``).

Records are written by the leader's transactional producer
(``connect-cluster-${groupId}``, KIP-618 §Leader access to config topic) or, without exactly-once
support on the leader, by a plain producer.  Every worker reads the topic with
``isolation.level=read_committed``: the snapshot of a worker that has read up
to offset ``upto`` is :func:`model.clients.consumer.fetch` (read_committed) of the log
prefix -- records below a worker's read position were decided when it read
them, so the prefix view is stable.

Record values are ints (the model's record ids) that encode the key, the
generation the writer observed, the task or count, and -- for explanations
and the invariants only -- the writing worker.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from keos.model.clients.consumer import READ_COMMITTED, fetch
from keos.model.log.partition import PartitionLeader, last_stable_offset

__all__ = [
    "COMMIT",
    "CONNECTOR",
    "CONNECTOR_CONFIG",
    "GROUP_ID",
    "TASK_CONFIG",
    "TASK_COUNT",
    "ConfigRecord",
    "ConfigSnapshot",
    "config_record",
    "decode_config_record",
    "read_to_end",
    "snapshot",
]

#: The modelled connector's name and the Connect cluster's ``group.id``.
CONNECTOR = "source"
GROUP_ID = "connect"

#: Record kinds (the key prefixes of ``KafkaConfigBackingStore``).
TASK_CONFIG = 1
COMMIT = 2
TASK_COUNT = 3
CONNECTOR_CONFIG = 4

_BASE = 10_000_000


class ConfigRecord(NamedTuple):
    """A decoded config-topic record: key kind, writing worker (-1: history), generation, task or count."""

    kind: int
    writer: int
    generation: int
    value: int


def config_record(kind: int, writer: int, generation: int, value: int) -> int:
    """Encode a config-topic record as a record id."""
    return _BASE + kind * 1_000_000 + (writer + 1) * 10_000 + generation * 100 + value


def decode_config_record(rid: int) -> ConfigRecord:
    """Decode :func:`config_record`."""
    rest = rid - _BASE
    kind, rest = divmod(rest, 1_000_000)
    w1, rest = divmod(rest, 10_000)
    generation, value = divmod(rest, 100)
    return ConfigRecord(kind, w1 - 1, generation, value)


class ConfigSnapshot(NamedTuple):
    """``ClusterConfigState`` for the connector, as of a read position.

    ``generation`` is ``taskConfigGeneration`` (-1 before any commit),
    ``task_count`` the task count of the latest commit (0 while the connector is
    deleted), ``pending_fencing`` whether the connector is in
    ``connectorsPendingFencing``, ``task_count_record`` the latest task-count
    record (-1: none) and ``exists`` whether the connector has a config.
    """

    generation: int
    task_count: int
    pending_fencing: bool
    task_count_record: int
    offset: int
    exists: bool = True


def read_to_end(leader: PartitionLeader) -> int:
    """``KafkaBasedLog.readToEnd`` with read_committed: the end offset is the LSO."""
    return last_stable_offset(leader)


def _prefix(leader: PartitionLeader, upto: int) -> PartitionLeader:
    # Everything below ``upto`` was decided when the worker read it: a log cut there
    # has no open transaction, so its LSO is ``upto``.
    return leader._replace(log=leader.log[:upto], high_watermark=upto, producers=())


@lru_cache(maxsize=65536)
def snapshot(
    leader: PartitionLeader,
    upto: int,
    deferred_until_commit: bool = True,
    ignore_deleted_commits: bool = True,
    tombstone_drops_tasks: bool = True,
) -> ConfigSnapshot:
    """The snapshot of a worker that has read the config topic up to ``upto`` (read_committed).

    ``KafkaConfigBackingStore`` (Kafka 4.0, apache/kafka 1eb7644): a task-config record joins the
    connector's deferred set; a commit record of a connector with a config applies the deferred set if it
    covers tasks 0..count-1 (``completeTaskIdSet``; else the connector is inconsistent and keeps its
    generation -- only compaction, not modelled, leaves such a set), sets the task count, marks the connector
    pending fencing and clears the deferred set; a connector tombstone drops the deferred set
    (``processConnectorRemoval``).  ``deferred_until_commit`` off (a weakened variant) makes a set of
    task configs effective as soon as it is read, before (or without) its commit record.
    ``ignore_deleted_commits`` off (the weakened variant ``deleted_connector_commit_applied``, KAFKA-16838 before
    its fix, apache/kafka PR #16122) applies a commit record read after the connector's tombstone;
    ``tombstone_drops_tasks`` off (the weakened variant ``deleted_connector_tasks_kept``, KAFKA-8869 before its
    fix, PR #8444) keeps a deleted connector's task count in the snapshot.  A commit record after a tombstone is
    written by a deposed leader without exactly-once support finishing ``putTaskConfigs`` (the reach scenario
    ``connect_deposed_leader_commit_after_delete``).
    """
    generation, count, pending, record, exists = -1, 0, False, -1, True
    deferred: set[int] = set()
    for rid in fetch(_prefix(leader, upto), READ_COMMITTED):
        r = decode_config_record(rid)
        if r.kind == TASK_CONFIG and deferred_until_commit:
            deferred.add(r.value)
        elif r.kind == TASK_CONFIG:  # no branch: the weakened variant uncommitted_task_configs_effective only
            generation, count, pending = generation + (r.value == 0), r.value + 1, True
        elif r.kind == COMMIT and (exists or not ignore_deleted_commits):
            complete = all(n in deferred for n in range(r.value))
            applied = complete and bool(deferred) and deferred_until_commit
            generation, count, pending = generation + applied, r.value, True
            deferred = set()
        # A deleted connector's commit (processConnectorRemoval dropped the set, processTasksCommitRecord ignores the
        # commit, KAFKA-16838): written by a deposed leader without exactly-once support finishing putTaskConfigs
        # after a deletion (connect_deposed_leader_commit_after_delete, reach set).
        elif r.kind == COMMIT:
            deferred = set()
        elif r.kind == TASK_COUNT:
            record, pending = r.value, False
        elif r.kind == CONNECTOR_CONFIG:  # no branch: every config record is one of the four kinds
            exists = r.value == 1
            count = count if exists or not tombstone_drops_tasks else 0
            deferred = set()
    return ConfigSnapshot(generation, count, pending, record, upto, exists)
