"""What the Connect model's logs hold, read from the control batches: the ground truth its invariants judge by.

Kafka's own readers (``read_committed`` consumers, ``KafkaConfigBackingStore``,
``KafkaOffsetBackingStore``: :mod:`keos.model.connect.config_topic`,
:mod:`keos.model.connect.offsets`) read up to the last stable offset.  The
invariants of :mod:`keos.invariants.connect` instead read the *fate* of each
batch from the COMMIT/ABORT markers, so a duplicate is caught as soon as its
transaction commits, and an offset is "committed" only when its transaction is.
None of this is Kafka's code: it is how the checker looks at the logs.
"""

from __future__ import annotations

from functools import lru_cache

from keos.model.clients.consumer import ABORTED, COMMITTED, READ_COMMITTED, UNDECIDED, fetch
from keos.model.connect import config_topic as cfgt
from keos.model.connect.offsets import decode_offset_record, is_foreign, is_tombstone, latest_offsets
from keos.model.log.partition import CONTROL_COMMIT, PartitionLeader

__all__ = [
    "committed_offsets",
    "committed_records",
    "config_record_label",
    "entry_fates",
    "task_count_follows_generation",
    "tombstoned_partitions",
]


def config_record_label(rid: int) -> str:
    """``task-source-1@g1``, ``commit-source{tasks=2}@g1``, ``connector-source=null``, ``tasks-fencing-source{...}``."""
    r = cfgt.decode_config_record(rid)
    by = f" by w{r.writer}" if r.writer >= 0 else ""
    if r.kind == cfgt.TASK_CONFIG:
        return f"task-{cfgt.CONNECTOR}-{r.value}@g{r.generation}{by}"
    if r.kind == cfgt.COMMIT:
        return f"commit-{cfgt.CONNECTOR}{{tasks={r.value}}}@g{r.generation}{by}"
    if r.kind == cfgt.CONNECTOR_CONFIG:
        return f"connector-{cfgt.CONNECTOR}{'' if r.value else '=null'}{by}"
    return f"tasks-fencing-{cfgt.CONNECTOR}{{task-count={r.value}}}{by}"


@lru_cache(maxsize=65536)
def entry_fates(leader: PartitionLeader) -> tuple[str, ...]:
    """The fate of every log entry (by offset): committed / aborted / undecided; control batches: "".

    The ground truth of :func:`model.clients.consumer.record_fates` per *batch*: a
    transactional batch is decided by the next control batch of its producer
    id; a non-transactional batch is committed when appended.  Per batch,
    because the same record value may be written twice (a retry after an
    abort, or a duplicate).
    """
    fates: list[str] = []
    open_by_pid: dict[int, list[int]] = {}
    for offset, e in enumerate(leader.log):
        if e.control:
            fates.append("")
            fate = COMMITTED if e.control == CONTROL_COMMIT else ABORTED
            for o in open_by_pid.pop(e.producer_id, []):
                fates[o] = fate
        elif e.transactional:
            open_by_pid.setdefault(e.producer_id, []).append(offset)
            fates.append(UNDECIDED)
        else:
            fates.append(COMMITTED)
    return tuple(fates)


@lru_cache(maxsize=65536)
def committed_records(leader: PartitionLeader) -> tuple[tuple[int, int], ...]:
    """``(offset, record id)`` of every committed data record, in log order (ground truth, not the LSO)."""
    fates = entry_fates(leader)
    return tuple(
        (offset, rid) for offset, e in enumerate(leader.log) if fates[offset] == COMMITTED for rid in e.records
    )


@lru_cache(maxsize=65536)
def committed_offsets(leader: PartitionLeader, source_partitions: int) -> tuple[int, ...]:
    """Ground truth: the latest *committed* offset per partition, from the control batches (not the LSO)."""
    return latest_offsets(tuple(rid for _, rid in committed_records(leader)), source_partitions)


@lru_cache(maxsize=65536)
def tombstoned_partitions(leader: PartitionLeader, source_partitions: int) -> tuple[int, ...]:
    """Ground truth: the source partitions whose latest *committed* offset record is a tombstone."""
    last: dict[int, int] = {}
    for _, rid in committed_records(leader):
        if not is_foreign(rid):  # a record that is not Connect's names no source partition
            last[decode_offset_record(rid)[0]] = rid
    return tuple(p for p in range(source_partitions) if p in last and is_tombstone(last[p]))


@lru_cache(maxsize=65536)
def task_count_follows_generation(leader: PartitionLeader, generation: int) -> bool:
    """Whether the committed topic has a task-count record after the commit of ``generation`` (KIP-618).

    Generations count the commit records of the connector while it has a config (a commit of a deleted
    connector is ignored, ``KafkaConfigBackingStore.processTasksCommitRecord``).
    """
    seen = -1
    after = False
    exists = True
    for rid in fetch(leader, READ_COMMITTED):
        r = cfgt.decode_config_record(rid)
        if r.kind == cfgt.COMMIT and exists:
            seen += 1
        elif r.kind == cfgt.TASK_COUNT and seen >= generation:
            after = True
        elif r.kind == cfgt.CONNECTOR_CONFIG:
            exists = r.value == 1
    return after and seen >= generation
