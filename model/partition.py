"""A data partition's leader: the log, the high watermark and produce handling.

This abstracts Kafka's ``UnifiedLog`` plus the replication it relies on:

* The log is a sequence of record batches (:class:`LogEntry`); the batch index
  is its offset (each modelled batch holds one record, so batch and record
  offsets coincide).
* ``acks=all``: the leader answers only once the batch is replicated to the
  in-sync replicas, so append and high-watermark advance are one step.
  ``acks=1``: the leader answers after its local append; a separate
  ``ReplicatePartition`` action advances the high watermark.  ``acks=0``: no
  answer at all.
* A leader restart (crash and election of an in-sync follower) keeps the log
  up to the high watermark and loses the rest; the follower's producer state
  is rebuilt from the log it kept (``ProducerStateManager.truncateAndReload``
  rebuilds from snapshots and the log; replicas apply batches without
  sequence checks).
"""

from __future__ import annotations

from typing import NamedTuple

from model.codec import record
from model.errors import Errors
from model.messages import ProduceRequest, ProduceResponse
from model.producer_state import ProducerStateEntry, append_batch, next_sequence, validate_batch
from model.variants import ProtocolFlags

__all__ = ["LogEntry", "PartitionLeader", "handle_produce", "replicate", "restart_leader"]

#: The producer id carried by batches of a non-idempotent producer.
NO_PRODUCER_ID = -1


@record
class LogEntry(NamedTuple):
    """A record batch in the log."""

    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: tuple[int, ...]
    transactional: bool = False


@record
class PartitionLeader(NamedTuple):
    """The leader replica of one partition."""

    log: tuple[LogEntry, ...] = ()
    high_watermark: int = 0
    producers: tuple[ProducerStateEntry, ...] = ()
    leader_epoch: int = 0

    def entry(self, producer_id: int) -> ProducerStateEntry | None:
        """The producer state entry for ``producer_id``, if any."""
        for e in self.producers:
            if e.producer_id == producer_id:
                return e
        return None


def _put_entry(entries: tuple[ProducerStateEntry, ...], new: ProducerStateEntry) -> tuple[ProducerStateEntry, ...]:
    rest = tuple(e for e in entries if e.producer_id != new.producer_id)
    return tuple(sorted(rest + (new,)))


def handle_produce(
    leader: PartitionLeader, request: ProduceRequest, acks: str, flags: ProtocolFlags
) -> tuple[PartitionLeader, ProduceResponse | None, tuple[str, ...]]:
    """Validate and append one batch; return the leader, the response and events."""
    count = len(request.records)
    events: tuple[str, ...] = ()
    if request.producer_id == NO_PRODUCER_ID:
        error, dup_offset = Errors.NONE, -1
    else:
        last_seq = next_sequence(request.base_sequence, count - 1, flags.sequence_space)
        error, dup_offset = validate_batch(
            leader.entry(request.producer_id), request.producer_epoch, request.base_sequence, last_seq, flags
        )
    offset = -1
    if error == Errors.NONE and dup_offset >= 0:
        offset = dup_offset
        events = ("dedup",)
    elif error == Errors.NONE:
        offset = len(leader.log)
        entry = LogEntry(
            request.producer_id, request.producer_epoch, request.base_sequence, request.records, request.transactional
        )
        producers = leader.producers
        if request.producer_id != NO_PRODUCER_ID:
            last_seq = next_sequence(request.base_sequence, count - 1, flags.sequence_space)
            new_entry = append_batch(
                leader.entry(request.producer_id),
                request.producer_id,
                request.producer_epoch,
                request.base_sequence,
                last_seq,
                offset,
                flags,
            )
            producers = _put_entry(producers, new_entry)
        log = leader.log + (entry,)
        hw = len(log) if acks == "all" else leader.high_watermark
        leader = leader._replace(log=log, high_watermark=hw, producers=producers)
        events = ("append",)
    else:
        events = (f"error:{error}",)
    if acks == "0":
        return leader, None, events
    response = ProduceResponse(
        request.producer,
        request.connection,
        request.partition,
        request.producer_epoch,
        request.base_sequence,
        error,
        offset,
    )
    return leader, response, events


def replicate(leader: PartitionLeader) -> PartitionLeader | None:
    """Followers catch up: the high watermark moves to the log end (acks=1 only)."""
    if leader.high_watermark == len(leader.log):
        return None
    return leader._replace(high_watermark=len(leader.log))


def rebuild_producer_state(log: tuple[LogEntry, ...], flags: ProtocolFlags) -> tuple[ProducerStateEntry, ...]:
    """Producer state implied by a log (replication origin: no checks)."""
    entries: dict[int, ProducerStateEntry] = {}
    for offset, e in enumerate(log):
        if e.producer_id == NO_PRODUCER_ID:
            continue
        last_seq = next_sequence(e.base_sequence, len(e.records) - 1, flags.sequence_space)
        entries[e.producer_id] = append_batch(
            entries.get(e.producer_id), e.producer_id, e.producer_epoch, e.base_sequence, last_seq, offset, flags
        )
    return tuple(sorted(entries.values()))


def restart_leader(leader: PartitionLeader, flags: ProtocolFlags) -> PartitionLeader:
    """A new leader takes over: the log is cut to the high watermark."""
    log = leader.log[: leader.high_watermark]
    return PartitionLeader(
        log=log,
        high_watermark=len(log),
        producers=rebuild_producer_state(log, flags),
        leader_epoch=leader.leader_epoch + 1,
    )
