"""Source offsets: the worker's global offsets topic and a connector's own (KIP-618 §Atomic offset writes, §Migration).

``KafkaOffsetBackingStore`` / ``ConnectorOffsetBackingStore``: a source task's
offsets are records ``{partition} -> {offset}`` in an offsets topic.  Under
exactly-once support the task writes them with its *transactional* producer
inside the transaction that carries the records they describe
(``ExactlyOnceWorkerSourceTask.commitTransaction``), and every worker reads offsets with
``isolation.level=read_committed``.

A connector may have its own offsets topic (``offsets.storage.topic``).  It
then sees a **combined view**: the offsets of its own topic, falling back to
the worker's global topic for source partitions its own topic does not know
(KIP-618 §Migration, the ``CatsStandingUp`` example).  After an exactly-once
commit the worker also copies the committed offsets to the global topic with
a plain producer (KIP-618 §Atomic offset writes), so a later downgrade still finds them.

An offset record's value is the position of the next record to read; it is
encoded as an int record id ``(source partition, position)``.

**Tombstones.**  A connector may commit a ``null`` offset for a source
partition (a tombstone).  ``KafkaOffsetBackingStore`` removes the key when it
reads one, so the combined view cannot tell a tombstoned partition from one
the connector topic never knew: it falls back to the global topic.  A
tombstone written only to the connector's topic therefore resurrects the
partition's old offset from the global topic.  Since KAFKA-15018 (Kafka 3.8,
``ConnectorOffsetBackingStore.set``) a commit that carries tombstones writes
them to the global topic *first* and writes the connector topic only if that
succeeded; the other offsets still go to the global topic afterwards, and a
failure there is only logged.
"""

from __future__ import annotations

from functools import lru_cache

from keos.model.clients.consumer import ABORTED, COMMITTED, READ_COMMITTED, UNDECIDED, fetch
from keos.model.log.partition import CONTROL_COMMIT, PartitionLeader

__all__ = [
    "combined_offsets",
    "committed_offsets",
    "committed_records",
    "decode_offset_record",
    "entry_fates",
    "is_tombstone",
    "offset_record",
    "offset_record_label",
    "offset_tombstone",
    "read_offsets",
    "tombstoned_partitions",
]

_BASE = 20_000_000


def offset_record(source_partition: int, position: int) -> int:
    """The offset record ``{partition: p} -> {position}``."""
    return _BASE + source_partition * 100 + position


_TOMBSTONE_BASE = 21_000_000


def offset_tombstone(source_partition: int) -> int:
    """The tombstone ``{partition: p} -> null``."""
    return _TOMBSTONE_BASE + source_partition


def is_tombstone(rid: int) -> bool:
    """Whether an offsets-topic record is a tombstone."""
    return _TOMBSTONE_BASE <= rid < _TOMBSTONE_BASE + 100


def decode_offset_record(rid: int) -> tuple[int, int]:
    """``(source partition, position)`` of an offset record; position -1 for a tombstone (no offset)."""
    if is_tombstone(rid):
        return rid - _TOMBSTONE_BASE, -1
    return divmod(rid - _BASE, 100)


def offset_record_label(rid: int) -> str:
    """``offset{src0=1}``, ``offset{src0=null}`` for a tombstone."""
    p, k = decode_offset_record(rid)
    return f"offset{{src{p}={'null' if k < 0 else k}}}"


def _latest(records: tuple[int, ...], source_partitions: int) -> tuple[int, ...]:
    out = [-1] * source_partitions
    for rid in records:
        p, k = decode_offset_record(rid)
        if 0 <= p < source_partitions:
            out[p] = k
    return tuple(out)


@lru_cache(maxsize=65536)
def read_offsets(leader: PartitionLeader, source_partitions: int) -> tuple[int, ...]:
    """What ``OffsetStorageReader`` returns from one topic (read_committed): position per partition, -1 if none."""
    return _latest(fetch(leader, READ_COMMITTED), source_partitions)


def combined_offsets(
    connector_topic: PartitionLeader | None, global_topic: PartitionLeader, source_partitions: int
) -> tuple[int, ...]:
    """The combined view: the connector's own topic first, the global topic for partitions it lacks."""
    glob = read_offsets(global_topic, source_partitions)
    if connector_topic is None:
        return glob
    own = read_offsets(connector_topic, source_partitions)
    return tuple(o if o >= 0 else g for o, g in zip(own, glob))


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
    return _latest(tuple(rid for _, rid in committed_records(leader)), source_partitions)


@lru_cache(maxsize=65536)
def tombstoned_partitions(leader: PartitionLeader, source_partitions: int) -> tuple[int, ...]:
    """Ground truth: the source partitions whose latest *committed* offset record is a tombstone."""
    last: dict[int, int] = {}
    for _, rid in committed_records(leader):
        last[decode_offset_record(rid)[0]] = rid
    return tuple(p for p in range(source_partitions) if p in last and is_tombstone(last[p]))
