"""Invariants of the idempotent producer and the partition leader's sequence table.

The predicates depend only on the partitions (and the acknowledged records),
which most successor states share unchanged, so they are memoised on those
values (an LRU cache of immutable, hashable tuples: a pure function of its
argument, so memoisation cannot change a verdict).

Each ``always`` predicate below is a fact KIP-98 promises for one producer
session, stated over the model's state (logs, producer state, ghost history),
and each names the ``sometimes`` partners that prove the states it speaks
about are reached at all -- an invariant whose partner never fires is
reported *untested*, not *holds*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from keos.invariants.idempotence_progress import idempotence_progress_properties
from keos.model.clients.producer import record_label, record_owner
from keos.model.interface import Expectation, Property
from keos.model.log.partition import NO_PRODUCER_ID, LogEntry, PartitionLeader
from keos.model.log.producer_state import BatchMetadata, next_sequence
from keos.model.systems.idempotence import SystemState

__all__ = ["idempotence_properties"]


# -- no_duplicate_append --------------------------------------------------------------------


def _duplicates(s: SystemState) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for q, leader in enumerate(s.partitions):
        seen: set[int] = set()
        for e in leader.log:
            for r in e.records:
                if r in seen:
                    found.append((q, r))
                seen.add(r)
    return found


@lru_cache(maxsize=65536)
def _no_duplicates_in(partitions: tuple[PartitionLeader, ...]) -> bool:
    for leader in partitions:
        records = [r for e in leader.log for r in e.records]
        if len(records) != len(set(records)):
            return False
    return True


def no_duplicate_append(s: SystemState) -> bool:
    """No record appears twice in a partition's log."""
    return _no_duplicates_in(s.partitions)


def _explain_duplicates(s: SystemState) -> str:
    return "; ".join(f"record {record_label(r)} appended twice to partition {q}" for q, r in _duplicates(s))


# -- no_acked_loss --------------------------------------------------------------------------


def _lost(s: SystemState) -> list[int]:
    present = {r for leader in s.partitions for e in leader.log for r in e.records}
    return [r for r in s.ghost.acked if r not in present]


@lru_cache(maxsize=65536)
def _all_present(partitions: tuple[PartitionLeader, ...], acked: tuple[int, ...]) -> bool:
    present = {r for leader in partitions for e in leader.log for r in e.records}
    return all(r in present for r in acked)


def no_acked_loss(s: SystemState) -> bool:
    """Every record the producer reported acknowledged is in its partition's log."""
    return not s.ghost.acked or _all_present(s.partitions, s.ghost.acked)


def _explain_lost(s: SystemState) -> str:
    return "; ".join(f"record {record_label(r)} was acknowledged but is not in the log" for r in _lost(s))


# -- per_partition_order --------------------------------------------------------------------


def _order_breaks(s: SystemState) -> list[tuple[int, int, int]]:
    return _order_breaks_in(s.partitions)


def _order_breaks_in(partitions: tuple[PartitionLeader, ...]) -> list[tuple[int, int, int]]:
    found: list[tuple[int, int, int]] = []
    for q, leader in enumerate(partitions):
        last: dict[tuple[int, int], int] = {}
        for e in leader.log:
            for r in e.records:
                producer, n = record_owner(r)
                key = (producer, e.producer_id)
                prev = last.get(key)
                if prev is not None and n < prev:
                    found.append((q, prev, r))
                last[key] = max(n, prev) if prev is not None else n
    return found


@lru_cache(maxsize=65536)
def _ordered(partitions: tuple[PartitionLeader, ...]) -> bool:
    return not _order_breaks_in(partitions)


def per_partition_order(s: SystemState) -> bool:
    """Within one producer session, a partition's log holds records in send order."""
    return _ordered(s.partitions)


def _explain_order(s: SystemState) -> str:
    out = []
    for q, prev, r in _order_breaks(s):
        producer, _ = record_owner(r)
        out.append(f"partition {q}: record {record_label(r)} appended after p{producer}.r{prev}")
    return "; ".join(out)


# -- sequence_table_consistent -------------------------------------------------------------


def _table_problems(leader: PartitionLeader, space: int) -> list[str]:
    problems: list[str] = []
    by_pid: dict[int, list[tuple[int, LogEntry]]] = {}
    for offset, e in enumerate(leader.log):
        if e.producer_id != NO_PRODUCER_ID:
            by_pid.setdefault(e.producer_id, []).append((offset, e))
    for pid, entries in by_pid.items():
        prev: LogEntry | None = None
        for _, e in entries:
            if prev is not None:
                if e.producer_epoch < prev.producer_epoch:
                    problems.append(f"pid {pid}: epoch went back from {prev.producer_epoch} to {e.producer_epoch}")
                elif e.producer_epoch > prev.producer_epoch and e.base_sequence != 0:
                    problems.append(f"pid {pid}: epoch {e.producer_epoch} started at sequence {e.base_sequence}")
                elif e.producer_epoch == prev.producer_epoch:
                    expected = next_sequence(prev.base_sequence, len(prev.records), space)
                    if e.base_sequence != expected:
                        problems.append(f"pid {pid}: sequence {e.base_sequence} follows {prev.base_sequence}")
            prev = e
        stored = leader.entry(pid)
        last = entries[-1][1]
        if stored is None or stored.producer_epoch != last.producer_epoch:
            problems.append(
                f"pid {pid}: stored epoch {stored and stored.producer_epoch} != last batch's {last.producer_epoch}"
            )
            continue
        tail = [(o, e) for o, e in entries if e.producer_epoch == last.producer_epoch]
        implied = tuple(
            BatchMetadata(e.base_sequence, next_sequence(e.base_sequence, len(e.records) - 1, space), o)
            for o, e in tail
        )
        if not stored.batches or stored.batches != implied[-len(stored.batches) :]:
            problems.append(f"pid {pid}: cached batches {stored.batches} do not match the log")
    return problems


def _all_table_problems(s: SystemState, space: int) -> list[str]:
    out: list[str] = []
    for q, leader in enumerate(s.partitions):
        out.extend(f"partition {q}: {p}" for p in _table_problems(leader, space))
    return out


#: Properties about producer ids, epochs and sequences: vacuous for a producer configured without
#: idempotence (no producer id, no sequence table), whose duplicate check never runs.
SEQUENCE_PROPERTIES = frozenset(
    {"sequence_table_consistent", "epoch_bumped", "out_of_order_rejected", "retry_deduplicated"}
)


def idempotence_properties(sequence_space: int, idempotent: bool = True) -> tuple[Property, ...]:
    """The idempotence properties for a model whose sequences wrap at ``sequence_space``.

    A scenario whose producer is configured with ``enable.idempotence=false`` (``idempotent=False``) keeps the
    properties Kafka's users rely on (no duplicate, no loss, order -- each may be *permitted* there) and drops
    :data:`SEQUENCE_PROPERTIES`, whose partners could never fire; ``no_duplicate_append`` then needs no
    duplicate-check partner (a retry that lands twice is what it judges).  A weakened variant that forces
    idempotence off (``no_idempotence``) runs on idempotent scenarios and keeps them all.
    """
    props = _idempotence_properties(sequence_space)
    if idempotent:
        return props
    return tuple(
        replace(p, partners=()) if p.name == "no_duplicate_append" else p
        for p in props
        if p.name not in SEQUENCE_PROPERTIES
    )


def _idempotence_properties(sequence_space: int) -> tuple[Property, ...]:

    @lru_cache(maxsize=65536)
    def consistent(partitions: tuple[PartitionLeader, ...]) -> bool:
        return not any(_table_problems(leader, sequence_space) for leader in partitions)

    def sequence_table_consistent(s: SystemState) -> bool:
        """Per producer id: non-decreasing epochs, gapless sequences, table matches log."""
        return consistent(s.partitions)

    def explain_table(s: SystemState) -> str:
        return "; ".join(_all_table_problems(s, sequence_space))

    return (*_properties(sequence_table_consistent, explain_table), *idempotence_progress_properties())


def _properties(
    table_predicate: Callable[[SystemState], bool], table_explain: Callable[[SystemState], str]
) -> tuple[Property, ...]:
    return (
        Property(
            name="no_duplicate_append",
            expectation=Expectation.ALWAYS,
            fact="No record is appended twice to a partition's log, however often the producer retries.",
            source="KIP-98 §Idempotent producer; ``UnifiedLog.analyzeAndValidateProducerState`` duplicate check",
            catches="producers without idempotence, a duplicate cache smaller than max.in.flight (KAFKA-5494)",
            predicate=no_duplicate_append,
            partners=("retry_deduplicated",),
            explain=_explain_duplicates,
        ),
        Property(
            name="no_acked_loss",
            expectation=Expectation.ALWAYS,
            fact="A record the producer reported acknowledged is in its partition's log, across leader restarts.",
            source="KIP-98 (acks=all requirement of idempotence); UnifiedLog high watermark",
            catches="acks=1 with a leader failover; a leader that answers before replication",
            predicate=no_acked_loss,
            partners=("leader_restarted_with_acked_data",),
            explain=_explain_lost,
        ),
        Property(
            name="per_partition_order",
            expectation=Expectation.ALWAYS,
            fact="Within one producer session, records reach a partition's log in the order they were sent.",
            source="KIP-98 §Idempotent producer (ordering with max.in.flight <= 5); ProducerAppendInfo.checkSequence",
            catches="a leader that accepts sequence gaps; retried batches that overtake",
            predicate=per_partition_order,
            partners=("concurrent_in_flight", "retry_after_disconnect"),
            explain=_explain_order,
        ),
        Property(
            name="sequence_table_consistent",
            expectation=Expectation.ALWAYS,
            fact="Per producer id, a log's batches have non-decreasing epochs and gapless sequences from 0 "
            "at each new epoch, and the leader's sequence table matches the log.",
            source="KIP-98 §5; KIP-360 (epoch bump resets sequences); ``ProducerAppendInfo.java``",
            catches="a leader that skips the epoch check (late batch from before an epoch bump) or the sequence check",
            predicate=table_predicate,
            partners=("epoch_bumped",),
            explain=table_explain,
        ),
        Property(
            name="retry_deduplicated",
            expectation=Expectation.SOMETIMES,
            fact="A retried or duplicated batch reached the leader and was recognised as a duplicate.",
            source="``UnifiedLog.analyzeAndValidateProducerState``, the duplicate check",
            catches="reachability of the duplicate check",
            event="dedup",
        ),
        Property(
            name="leader_restarted_with_acked_data",
            expectation=Expectation.SOMETIMES,
            fact="The leader restarted while acknowledged records were in the log.",
            source="``ProducerStateManager`` (producer.id.expiration.ms)",
            catches="reachability of leader failover after acknowledgement",
            event="leader_restart_with_acked_data",
        ),
        Property(
            name="concurrent_in_flight",
            expectation=Expectation.SOMETIMES,
            fact="A producer had two or more produce requests in flight at once.",
            source="KIP-98; max.in.flight.requests.per.connection",
            catches="reachability of pipelined requests",
            event="concurrent_in_flight",
        ),
        Property(
            name="retry_after_disconnect",
            expectation=Expectation.SOMETIMES,
            fact="A batch was re-sent after its request failed or timed out.",
            source="Sender retries (``Sender.java``, ``TransactionManager.java``)",
            catches="reachability of retries",
            event="resend",
        ),
        Property(
            name="epoch_bumped",
            expectation=Expectation.SOMETIMES,
            fact="An idempotent producer bumped its epoch after an unresolved sequence (KIP-360).",
            source="KIP-360; TransactionManager.bumpIdempotentEpochAndResetIdIfNeeded",
            catches="reachability of the epoch bump",
            event="epoch_bump",
        ),
        Property(
            name="out_of_order_rejected",
            expectation=Expectation.SOMETIMES,
            fact="The leader rejected a batch with OUT_OF_ORDER_SEQUENCE_NUMBER.",
            source="``ProducerAppendInfo.checkSequence``",
            catches="reachability of the sequence check",
            event="error:OUT_OF_ORDER_SEQUENCE_NUMBER",
        ),
    )
