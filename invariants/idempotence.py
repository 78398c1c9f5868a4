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

Besides the log facts (no duplicate, no acknowledged loss, order, the sequence
table), ``produce_answer_per_kafka`` judges every answer of the leader against
Kafka's ``ProducerStateManager`` read from the log, and three judge what the
application is told, in faulty runs too:
``acknowledged_offset_in_log`` (a successful ProduceResponse -- a duplicate's
included -- names the offset of its batch), ``failed_sends_explained`` (a record
fails only when Kafka's producer gives up on it: delivery timeout, spent
retries, an error it does not retry) and ``healthy_producer_not_failed`` (without
a fault: no error, no failed record, no epoch bump).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache

from keos.invariants._common import no_findings, sometimes_state
from keos.invariants.idempotence_progress import idempotence_progress_properties
from keos.model.clients.producer import TxnPartitionEntry, correlation_id, record_id, record_label, record_owner
from keos.model.interface import Expectation, Property
from keos.model.log.partition import NO_PRODUCER_ID, LogEntry, PartitionLeader
from keos.model.log.producer_state import BatchMetadata, next_sequence
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse
from keos.model.systems.idempotence import FAULT_KINDS, SystemState

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


# -- no_duplicate_within_epoch -------------------------------------------------------------


def _same_identity_duplicates(partitions: tuple[PartitionLeader, ...]) -> list[tuple[int, int, int, int]]:
    """``(partition, record, producer id, epoch)`` for every record written twice under one producer identity."""
    found: list[tuple[int, int, int, int]] = []
    for q, leader in enumerate(partitions):
        seen: set[tuple[int, int, int]] = set()
        for e in leader.log:
            for r in e.records:
                key = (r, e.producer_id, e.producer_epoch)
                if key in seen:
                    found.append((q, r, e.producer_id, e.producer_epoch))
                seen.add(key)
    return found


@lru_cache(maxsize=65536)
def _no_same_identity_duplicates(partitions: tuple[PartitionLeader, ...]) -> bool:
    return not _same_identity_duplicates(partitions)


def no_duplicate_within_epoch(s: SystemState) -> bool:
    """No record appears twice in a partition's log under one producer identity (producer id, epoch)."""
    return _no_same_identity_duplicates(s.partitions)


def _explain_same_identity(s: SystemState) -> str:
    return "; ".join(
        f"record {record_label(r)} appended twice to partition {q} under producer id {pid}, epoch {epoch}"
        for q, r, pid, epoch in _same_identity_duplicates(s.partitions)
    )


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


def _table_problems(leader: PartitionLeader, space: int, expiry: bool = False) -> list[str]:
    """What is wrong with ``leader``'s producer state and its log; ``expiry``: ids may have been expired."""
    problems: list[str] = []
    for held in leader.producers:
        # No transactional batch is ever written here: an entry with an open transaction (or a marker's coordinator
        # epoch) would hold the last stable offset below the high watermark, and read_committed consumers would never
        # see the producer's records (``ProducerStateEntry.currentTxnFirstOffset``, ``UnifiedLog.lastStableOffset``).
        if held.current_txn_first_offset >= 0 or held.coordinator_epoch >= 0:
            problems.append(
                f"pid {held.producer_id}: open transaction at offset {held.current_txn_first_offset} "
                f"(coordinator epoch {held.coordinator_epoch}) without any transactional batch"
            )
    for r in leader.pending:
        # ``DelayedProduce`` (the produce purgatory) parks the answer to a batch the leader holds in its log above
        # the high watermark, with the batch's own offset, until the followers reach it; it lives in the leader's
        # memory, so a new leader (a restart or a move) starts with an empty purgatory and the old one answers what
        # it held NOT_LEADER_OR_FOLLOWER (``completeDelayedOperationsWhenNotPartitionLeader``, KAFKA-2960)
        at = leader.log[r.base_offset] if leader.high_watermark <= r.base_offset < len(leader.log) else None
        if r.error != Errors.NONE or at is None or (at.producer_epoch, at.base_sequence) != (
            r.producer_epoch,
            r.base_sequence,
        ):
            problems.append(
                f"the purgatory holds an answer {r.error} at offset {r.base_offset} (epoch {r.producer_epoch}, seq "
                f"{r.base_sequence}) that is not for a batch the log holds above the high watermark "
                f"{leader.high_watermark}"
            )
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
                    # After producer.id.expiration.ms the leader validates the id's next batch against
                    # ProducerStateEntry.empty, which accepts any sequence (KIP-360, KAFKA-8710): a gap is Kafka's
                    # behaviour there (a batch that overtook one answered NOT_LEADER_OR_FOLLOWER, KAFKA-19880)
                    if e.base_sequence != expected and not expiry:
                        problems.append(f"pid {pid}: sequence {e.base_sequence} follows {prev.base_sequence}")
            prev = e
        stored = leader.entry(pid)
        last = entries[-1][1]
        if stored is None and expiry:
            continue  # producer.id.expiration.ms dropped it; the log keeps its batches
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


def _all_table_problems(s: SystemState, space: int, expiry: bool) -> list[str]:
    out: list[str] = []
    for q, leader in enumerate(s.partitions):
        out.extend(f"partition {q}: {p}" for p in _table_problems(leader, space, expiry))
    return out


# -- acknowledged_offset_in_log ------------------------------------------------------------


def acknowledged_offset_in_log(s: SystemState) -> bool:
    """Every successful ProduceResponse named the offset where its batch is in the log.

    Judged when the leader answers (``model.systems.idempotence.misplaced_ack``, kept in the ghost only when
    broken): a state predicate over the network would be re-evaluated in nearly every state.
    """
    return not s.ghost.misplaced_acks


# -- healthy_producer_not_failed ------------------------------------------------------------


def _unhealthy(s: SystemState) -> list[str]:
    if any(s.faults_used):
        return []
    return [f"record {record_label(r)} failed" for r in s.ghost.failed] + list(s.ghost.unhealthy)


def healthy_producer_not_failed(s: SystemState) -> bool:
    """In a run without faults, no send fails, no epoch is bumped and the leader returns no error."""
    return not _unhealthy(s)


#: Properties about producer ids, epochs and sequences: vacuous for a producer configured without
#: idempotence (no producer id, no sequence table), whose duplicate check never runs.
SEQUENCE_PROPERTIES = frozenset(
    {
        "sequence_table_consistent",
        "epoch_bumped",
        "out_of_order_rejected",
        "retry_deduplicated",
        "no_duplicate_within_epoch",
        "produce_answer_per_kafka",
        "epoch_bump_needed",
        "epoch_bump_restarts_sequences",
        "out_of_order_failure_requests_bump",
    }
)


#: Judged in scenarios where a batch can reach the leader behind a retried one (``not_leader`` or ``reorder``
#: faults): TCP's FIFO connections and in-order retries keep every other scenario from ever trying.
RETRIED_BATCH_NOT_OVERTAKEN = (
    no_findings(
        name="retried_batch_not_overtaken",
        fact="While the idempotent producer still retries a batch of a partition, no later batch of the same "
        "producer session is appended there: a batch that fails and is retried is never overtaken by the batch "
        "sent after it (the leader accepts batch n+1 only after batch n).",
        source="``ProducerConfig`` docs of ``max.in.flight.requests.per.connection`` and ``retries`` (ordering is "
        "preserved with idempotence); ``ProducerAppendInfo.checkSequence``; KAFKA-15591 (PR #23234)",
        catches="a leader that appends an unknown producer's later batch on a partition that never held a record "
        "(KAFKA-15591), a gap accepted after a lost first request",
        findings=lambda s: s.ghost.overtaken,
        partners=("batch_arrived_behind_retry",),
    ),
    Property(
        name="batch_arrived_behind_retry",
        expectation=Expectation.SOMETIMES,
        fact="A batch reached the leader while an earlier batch of its partition and session was still being "
        "retried and not in the log (a first request answered NOT_LEADER_OR_FOLLOWER, or reordered).",
        source="KAFKA-15591 (PR #23234); ``Sender.completeBatch`` (NOT_LEADER_OR_FOLLOWER is retried)",
        catches="reachability of a batch arriving ahead of a retried one",
        event="batch_behind_retry",
    ),
)

#: Partner of ``no_acked_loss`` in a separate-replication scenario (``[broker] separate_replication``).
UNREPLICATED_TRUNCATED = Property(
    name="unreplicated_batches_truncated",
    expectation=Expectation.SOMETIMES,
    fact="A leader failed over while its log held batches the followers did not have: the new leader cut "
    "them off and rebuilt its producer state from the log it kept.",
    source="``UnifiedLog.truncateTo`` / ``ProducerStateManager.truncateAndReload`` on leader election",
    catches="reachability of a failover with unreplicated batches (acks=1, or acks=all with separate replication)",
    event="unreplicated_batches_truncated",
)


# -- high_watermark_within_log ---------------------------------------------------------------


def _watermark_problems_in(leader: PartitionLeader) -> list[str]:
    """How ``leader``'s high watermark or produce purgatory breaks the replication bookkeeping, if it does."""
    out: list[str] = []
    if not 0 <= leader.high_watermark <= len(leader.log):
        out.append(f"high watermark {leader.high_watermark} outside the log [0, {len(leader.log)}]")
    if not 0 <= leader.log_start_offset <= leader.high_watermark:
        # UnifiedLog.maybeIncrementLogStartOffset refuses an offset above the high watermark: only committed
        # records are deleted (DeleteRecords, retention), so a failover cannot resurrect or lose a deleted range
        out.append(f"log start offset {leader.log_start_offset} outside [0, high watermark {leader.high_watermark}]")
    out.extend(
        f"a response for offset {r.base_offset} is still parked although the high watermark is {leader.high_watermark}"
        for r in leader.pending
        if r.base_offset < leader.high_watermark
    )
    return out


@lru_cache(maxsize=65536)
def _watermarks_sound(partitions: tuple[PartitionLeader, ...]) -> bool:
    return not any(_watermark_problems_in(leader) for leader in partitions)


def high_watermark_within_log(s: SystemState) -> bool:
    """Every leader's high watermark lies within its log, and only batches above it wait in the purgatory."""
    return _watermarks_sound(s.partitions)


def _explain_watermarks(s: SystemState) -> str:
    return "; ".join(
        f"partition {q}: {p}" for q, leader in enumerate(s.partitions) for p in _watermark_problems_in(leader)
    )


# -- sends_accounted_for ---------------------------------------------------------------------

_PRODUCER_RESTART = FAULT_KINDS.index("producer_restart")


def _unaccounted(s: SystemState) -> list[str]:
    """Records the application sent that its producer neither holds in a batch nor completed (acked or failed),
    and records completed more than once, or completed while a batch of the producer still holds them.

    ``ProducerBatch.done`` completes a batch's future once (``finalState``): an answer to a batch already
    completed -- expired, failed, or answered before on a duplicated message -- only logs.  The missing futures
    are not judged once a producer process restarted: the application's pending futures die with the process.
    """
    completions = (*s.ghost.acked, *s.ghost.failed)
    done = set(completions)
    out: list[str] = []
    if len(done) < len(completions):
        out.extend(
            f"{record_label(r)} completed {n} times (acknowledged {s.ghost.acked.count(r)}, failed "
            f"{s.ghost.failed.count(r)})"
            for r, n in sorted(Counter(completions).items())
            if n > 1
        )
    out.extend(
        f"{record_label(r)} completed while producer {i} still holds it"
        for i, p in enumerate(s.producers)
        for b in p.batches
        for r in b.records
        if r in done
    )
    if s.faults_used[_PRODUCER_RESTART]:
        return out
    for i, p in enumerate(s.producers):
        held = {r for b in p.batches for r in b.records}
        out.extend(
            f"{record_label(record_id(i, n))} left producer {i} without being acknowledged or failed"
            for n in range(p.next_record)
            if record_id(i, n) not in held and record_id(i, n) not in done
        )
    return out


def sends_accounted_for(s: SystemState) -> bool:
    """Every record the application handed to a producer is still held by it, or completed."""
    return not _unaccounted(s)


def _over_retries(s: SystemState, retries: int) -> list[str]:
    """Batches a producer has sent more than ``retries + 1`` times."""
    return [
        f"producer {i}: {','.join(record_label(r) for r in b.records)} sent {b.attempts} times with retries={retries}"
        for i, p in enumerate(s.producers)
        for b in p.batches
        if b.attempts > retries + 1
    ]


def retry_properties(retries: int) -> tuple[Property, ...]:
    """``sends_within_retries`` for a producer configured with ``retries``, and its partner."""
    return (
        no_findings(
            name="sends_within_retries",
            fact="A batch is sent at most retries + 1 times: once its retries are spent, the producer fails it on "
            "the next error or disconnect instead of sending it again (with retries=0 a record is sent at most "
            "once).",
            source="``ProducerConfig`` docs of ``retries``; ``Sender.canRetry`` (``batch.attempts() < retries``), "
            "``Sender.completeBatch``/``failBatch``, ``TransactionManager.canRetry`` (Kafka 3.9)",
            catches="a client that re-sends a batch whose retries are spent (a disconnect, a leader failover or an "
            "error path that forgets the count), an attempt counter that is not advanced on a re-send",
            findings=lambda s: _over_retries(s, retries),
            partners=("batch_on_last_attempt",),
        ),
        sometimes_state(
            "batch_on_last_attempt",
            "A batch was in flight on its last attempt (retries + 1 sends).",
            lambda s: any(b.in_flight and b.attempts == retries + 1 for p in s.producers for b in p.batches),
        ),
    )


# -- requests_in_flight_per_kafka ----------------------------------------------------------------

_DUPLICATE = FAULT_KINDS.index("duplicate")


def _in_flight_problems(s: SystemState, max_in_flight: int) -> list[str]:
    """Produce requests on a producer's live connection for batches it holds but does not await, or too many, or
    requests the client holds that are nowhere.

    ``NetworkClient``'s ``InFlightRequests`` holds a request from the moment it is sent until its response is
    read or the connection closes, and ``canSendMore`` admits at most ``max.in.flight.requests.per.connection``
    of them; the ``RecordAccumulator`` re-enqueues a batch (``reenqueue``) only after its request completed.  So
    a batch the client still holds and has not marked in flight has no request or response on the live
    connection, and the requests on it -- named by correlation id: a request, its answer on the way back, or its
    acks=all answer parked in a leader's purgatory -- number at most ``max_in_flight``, those of batches the client
    completed included (a batch expired in flight by ``Sender.getExpiredInflightBatches`` leaves its request in
    ``InFlightRequests`` until it is answered).  Not judged once the network duplicated a message (TCP never does:
    the ``duplicate`` fault stands for a request delivered twice, whose second copy no client awaits).

    Conversely every request the client holds -- a batch marked in flight, or a batch ``delivery.timeout.ms``
    failed while its request was in flight (:attr:`Producer.expired`) -- is outstanding on the live connection:
    its request, its answer or its parked answer is there (a request leaves ``InFlightRequests`` only when its
    answer is read or its connection closes, and then the client forgets it).  A request remembered that is not
    outstanding is one the client waits for in vain -- or one whose stale answer it would take for its own.
    """
    out: list[str] = []
    for i, p in enumerate(s.producers):
        held = {correlation_id(b) for b in p.batches if b.in_flight} | {cid for cid, _, _ in p.expired}
        if not held:
            continue
        outstanding = {
            r.correlation_id
            for ld in s.partitions
            for r in ld.pending
            if r.producer == i and r.connection == p.connection
        }
        outstanding.update(
            env.body.correlation_id
            for env in s.network
            if env.connection == p.connection
            and isinstance(env.body, (ProduceRequest, ProduceResponse))
            and env.body.producer == i
        )
        lost = held - outstanding
        if lost:
            out.append(
                f"producer {i} holds request(s) {sorted(lost)} as in flight on connection {p.connection}, but neither "
                f"the request nor its answer is outstanding there"
            )
    if s.faults_used[_DUPLICATE] or not s.network:
        return out
    crowded = len(s.network) + sum(len(ld.pending) for ld in s.partitions) > max_in_flight
    for i, p in enumerate(s.producers):
        waiting = {r for b in p.batches if not b.in_flight for r in b.records}
        if not waiting and not crowded:
            continue
        me = f"p{i}"
        requests: set[int] = {
            r.correlation_id
            for ld in s.partitions
            for r in ld.pending
            if r.producer == i and r.connection == p.connection
        }
        for env in s.network:
            body = env.body
            if env.connection != p.connection:
                continue
            if env.src == me and isinstance(body, ProduceRequest):
                held = waiting.intersection(body.records)
                if held:
                    out.append(
                        f"producer {i} holds {','.join(record_label(r) for r in sorted(held))} for a retry or a "
                        f"first send while its request is on connection {p.connection}"
                    )
                requests.add(body.correlation_id)
            elif env.dst == me and isinstance(body, ProduceResponse):
                requests.add(body.correlation_id)
        if len(requests) > max_in_flight:
            out.append(
                f"producer {i} has {len(requests)} produce requests in flight on connection {p.connection} with "
                f"max.in.flight.requests.per.connection={max_in_flight}"
            )
    return out


def in_flight_properties(max_in_flight: int) -> tuple[Property, ...]:
    """``requests_in_flight_per_kafka`` for a producer configured with ``max_in_flight``, and its partner."""
    return (
        no_findings(
            name="requests_in_flight_per_kafka",
            fact="A batch the producer holds but has not marked in flight has no request on the live connection (a "
            "batch is re-sent only after its request completed or its connection closed), and at most "
            "max.in.flight.requests.per.connection requests of held batches are outstanding.",
            source="``NetworkClient.InFlightRequests``/``canSendMore``, ``Sender.sendProducerData``, "
            "``RecordAccumulator.drain``/``reenqueue`` (Kafka 3.9); ``ProducerConfig`` docs of "
            "``max.in.flight.requests.per.connection``",
            catches="a batch drained again while its request is still outstanding (an in-flight mark not set or "
            "lost), more requests in flight than the configuration admits, a request sent for a batch the client "
            "no longer holds",
            findings=lambda s: _in_flight_problems(s, max_in_flight),
            partners=("produce_request_on_the_wire",),
        ),
        sometimes_state(
            "produce_request_on_the_wire",
            "A produce request was on a producer's live connection.",
            lambda s: any(
                isinstance(env.body, ProduceRequest) and env.connection == s.producers[int(env.src[1:])].connection
                for env in s.network
                if env.src.startswith("p")
            ),
        ),
    )


def _message_duplicated(s: SystemState) -> bool:
    """Whether the network holds two copies of one message (what a ``duplicate`` fault leaves behind)."""
    return len(set(s.network)) < len(s.network)


#: Per fault kind, a state the fault's effect leaves (the fault changed something), when the kind's event alone
#: cannot tell an injected fault from a no-op.
_FAULT_EFFECTS: dict[str, tuple[str, Callable[[SystemState], bool]]] = {
    "duplicate": ("A message was on the network twice (a duplicate fault took effect).", _message_duplicated),
}


def fault_partners(kinds: tuple[str, ...]) -> tuple[Property, ...]:
    """One ``sometimes`` property per fault kind the scenario budgets: that fault was injected at all.

    A scenario that gives a fault a budget claims its properties hold under that fault; a fault that can never
    fire (a handler never offered, a precondition that never holds) leaves that claim untested.  For the kinds
    of :data:`_FAULT_EFFECTS` the partner is the state the fault leaves, not its event: a fault whose handler
    stopped doing anything would otherwise still count as injected.
    """
    effects = tuple(
        sometimes_state(f"fault_took_effect_{kind}", _FAULT_EFFECTS[kind][0], _FAULT_EFFECTS[kind][1])
        for kind in kinds
        if kind in _FAULT_EFFECTS
    )
    return effects + tuple(
        Property(
            name=f"fault_injected_{kind}",
            expectation=Expectation.SOMETIMES,
            fact=f"A {kind.replace('_', ' ')} fault was injected (the scenario budgets it).",
            source="the scenario's [faults] budget",
            catches=f"reachability of the {kind} fault",
            event=f"fault:{kind}",
        )
        for kind in kinds
    )


def _consumed_not_durable(s: SystemState) -> list[str]:
    """What a partition's read_uncommitted consumer returned that the partition does not hold for good.

    The oracle is the current leader's log itself: the consumer's records must be exactly the records of the
    log's first ``position`` batches, in log order, and its position must not pass the high watermark (every later
    leader keeps the log below it: ``Partition.makeLeader`` elects an in-sync replica, which holds it all).  A read
    past the high watermark shows up once a failover cuts the tail it read (the record read is gone or another
    took its offset), a read that skipped or repeated a batch at once.
    """
    out: list[str] = []
    for q, c in enumerate(s.consumers):
        leader = s.partitions[q]
        if c.position > leader.high_watermark:
            out.append(f"partition {q}: the consumer's position {c.position} is past the high watermark "
                       f"{leader.high_watermark}")
        held = tuple(r for e in leader.log[: c.position] for r in e.records)
        if c.delivered != held:
            read = ", ".join(record_label(r) for r in c.delivered) or "nothing"
            log = ", ".join(record_label(r) for r in held) or "nothing"
            out.append(f"partition {q}: the consumer read {read}; the log below its position {c.position} holds {log}")
    return out


#: The judge of the read_uncommitted consumers (``[broker] read_uncommitted_consumer``) and its reach witnesses.
CONSUMER_PROPERTIES = (
    no_findings(
        name="consumed_records_durable",
        fact="A consumer (read_uncommitted, Kafka's default isolation level) reads each record of a partition once, "
        "in log order, and only records the high watermark has passed: a record it has read is never lost, "
        "replaced or reordered by a leader failover.",
        source="KIP-98 §7 (read_uncommitted reads up to the high watermark); ``UnifiedLog.read`` with "
        "``FetchIsolation.HIGH_WATERMARK``; ``Partition.makeLeader`` (an in-sync replica holds the log below the "
        "high watermark); Kafka documentation §4.7 (a committed message is not lost while one in-sync replica "
        "lives); apache/kafka trunk @1eb7644349cb",
        catches="a read bounded past the high watermark (KAFKA-9196's stale high-watermark metadata), a high "
        "watermark advanced before replication or not cut back with the log, a position moved past or short of "
        "the batches a response carried",
        findings=_consumed_not_durable,
        partners=("consumer_fetched", "consumer_fetched_beside_unreplicated_tail"),
    ),
    Property(
        name="consumer_fetched",
        expectation=Expectation.SOMETIMES,
        fact="A consumer's Fetch returned records.",
        source="ReplicaManager.fetchMessages / readFromLog",
        catches="reachability (consumer_fetched)",
        event="consumer_fetched",
    ),
    Property(
        name="consumer_fetched_beside_unreplicated_tail",
        expectation=Expectation.SOMETIMES,
        fact="A consumer fetched while the leader held batches above its high watermark (appended, not yet "
        "replicated): the read had a tail to leave alone.",
        source="UnifiedLog.read (maxOffset = highWatermark); Partition.maybeIncrementLeaderHW",
        catches="reachability (consumer_fetched_beside_unreplicated_tail)",
        event="consumer_fetched_beside_unreplicated_tail",
    ),
)


def idempotence_properties(
    sequence_space: int,
    idempotent: bool = True,
    producer_id_expiration: bool = False,
    separate_replication: bool = False,
    out_of_order_arrivals: bool = False,
    retries: int | None = None,
    fault_kinds: tuple[str, ...] = (),
    max_in_flight: int | None = None,
    bumps_reachable: bool = True,
    partitions: int = 1,
    read_uncommitted_consumer: bool = False,
) -> tuple[Property, ...]:
    """The idempotence properties for a model whose sequences wrap at ``sequence_space``.

    A scenario whose producer is configured with ``enable.idempotence=false`` (``idempotent=False``) keeps the
    properties Kafka's users rely on (no duplicate, no loss, order -- each may be *permitted* there) and drops
    :data:`SEQUENCE_PROPERTIES`, whose partners could never fire; ``no_duplicate_append`` then needs no
    duplicate-check partner (a retry that lands twice is what it judges), and ``acknowledged_offset_in_log``
    is exercised by any acknowledgement.  A weakened variant that forces
    idempotence off (``no_idempotence``) runs on idempotent scenarios and keeps them all.
    ``producer_id_expiration``: the leaders may expire producer ids, so a producer id with batches in the
    log may have no entry (``sequence_table_consistent`` then judges the entries that exist).
    ``separate_replication``: acks=all is answered after a separate replication step, and ``no_acked_loss``
    is exercised only once a failover has cut batches the followers did not have.
    ``out_of_order_arrivals``: the scenario can deliver a batch ahead of an earlier one of its partition (a
    ``not_leader`` or ``reorder`` fault budget), so ``retried_batch_not_overtaken`` is judged (for an idempotent
    producer: without sequences a retried batch may be overtaken, as Kafka documents).
    ``retries``: the producer's ``retries``, judged by ``sends_within_retries`` (``None``: not judged).
    ``max_in_flight``: the producer's ``max.in.flight.requests.per.connection``, judged by
    ``requests_in_flight_per_kafka`` (``None``: not judged).
    ``fault_kinds``: the fault kinds the scenario budgets (:meth:`FaultBudget.kinds`); each must be injected
    somewhere (``fault_injected_<kind>``, partners of ``failed_sends_explained``, which judges faulty runs).
    ``bumps_reachable``: a KIP-360 epoch bump can happen at all.  Kafka's idempotent producer bumps only when a
    sequence is in doubt -- a batch in retry that expires (``markSequenceUnresolved`` needs ``inRetry``), or a
    refusal the batches before it do not explain -- which takes two faults (the first makes a batch retry or
    loses an attempt); in a scenario with a single fault no bump is reachable, so the properties that judge bumps
    are judged without the ``epoch_bumped`` witness (a defect that bumps is still caught by them).
    ``partitions``: with ``producer_id_expiration``, the expiry itself must happen (``producer_state_expired``),
    and over two partitions or more also while the producer still writes to another one
    (``producer_expired_beside_traffic``: expiry is per partition), both partners of the properties that judge
    what a leader does with a forgotten producer (:data:`EXPIRY_JUDGES`).
    ``read_uncommitted_consumer``: each partition has a consumer, judged by ``consumed_records_durable``
    (:data:`CONSUMER_PROPERTIES`).
    """
    props = _idempotence_properties(sequence_space, producer_id_expiration)
    if read_uncommitted_consumer:
        props = (*props, *CONSUMER_PROPERTIES)
    if producer_id_expiration and idempotent:
        witnesses = EXPIRY_WITNESSES if partitions > 1 else EXPIRY_WITNESSES[:1]
        names = tuple(w.name for w in witnesses)
        props = (
            *(replace(p, partners=(*p.partners, *names)) if p.name in EXPIRY_JUDGES else p for p in props),
            *witnesses,
        )
    if not bumps_reachable:
        props = tuple(
            replace(p, partners=tuple(x for x in p.partners if x != "epoch_bumped")) if "epoch_bumped" in p.partners
            else p
            for p in props
        )
    if retries is not None:
        props = (*props, *retry_properties(retries))
    if max_in_flight is not None:
        props = (*props, *in_flight_properties(max_in_flight))
    if fault_kinds:
        injected = fault_partners(fault_kinds)
        props = (
            *(
                replace(p, partners=(*p.partners, *(f.name for f in injected)))
                if p.name == "failed_sends_explained"
                else p
                for p in props
            ),
            *injected,
        )
    if out_of_order_arrivals and idempotent:
        props = (*props, *RETRIED_BATCH_NOT_OVERTAKEN)
    if separate_replication:
        props = (
            *(
                replace(p, partners=(*p.partners, UNREPLICATED_TRUNCATED.name)) if p.name == "no_acked_loss" else p
                for p in props
            ),
            UNREPLICATED_TRUNCATED,
        )
    if idempotent:
        return props
    partners = {"no_duplicate_append": (), "acknowledged_offset_in_log": ("record_acknowledged",)}
    return (
        *(replace(p, partners=partners[p.name]) if p.name in partners else p
          for p in props
          if p.name not in SEQUENCE_PROPERTIES),
        NO_SEQUENCE_STATE_WITHOUT_IDEMPOTENCE,
    )


def _sequence_state_without_idempotence(s: SystemState) -> list[str]:
    """What a producer configured with ``enable.idempotence=false`` holds that only a ``TransactionManager`` keeps.

    ``KafkaProducer.configureTransactionState`` builds no ``TransactionManager`` when idempotence is off, and every
    piece of sequence bookkeeping hangs off it: the producer id (``InitProducerId``), the sequence stamped on a batch
    (``RecordAccumulator.drain``: ``transactionManager != null``), the unresolved mark of an expired batch in retry
    (``Sender.sendProducerData``: ``transactionManager != null && expiredBatch.inRetry()``), the re-sequencing and
    epoch bump of a failed batch (``Sender.failBatch`` -> ``TransactionManager.handleFailedBatch``, only with a
    transaction manager).  Kafka trunk @1eb7644349cb, ``KafkaProducer.java``, ``Sender.java``,
    ``RecordAccumulator.java``; KIP-91 (``delivery.timeout.ms``) for the expiry.
    """
    out: list[str] = []
    blank = TxnPartitionEntry()
    for i, p in enumerate(s.producers):
        if p.producer_id != NO_PRODUCER_ID:
            out.append(f"producer {i} holds producer id {p.producer_id}")
        if p.epoch_bump_required:
            out.append(f"producer {i} requires an epoch bump")
        for q, e in enumerate(p.partitions):
            if e != blank:
                out.append(f"producer {i} keeps sequence state for partition {q}: {tuple(e)}")
        for b in p.batches:
            if b.has_sequence:
                out.append(f"producer {i} stamped sequence {b.base_sequence} on {record_label(b.records[0])}")
    for env in s.network:
        body = env.body
        if isinstance(body, ProduceRequest) and body.producer_id != NO_PRODUCER_ID:
            out.append(f"a Produce request of producer {body.producer} names producer id {body.producer_id}")
    return out


#: ``enable.idempotence=false``: no producer id, no sequence, no unresolved mark, no epoch bump (judged only in
#: scenarios whose producer has idempotence off, where :data:`SEQUENCE_PROPERTIES` are dropped).
NO_SEQUENCE_STATE_WITHOUT_IDEMPOTENCE = no_findings(
    name="no_sequence_state_without_idempotence",
    fact="A producer with enable.idempotence=false has no TransactionManager: it asks for no producer id, stamps no "
    "sequence, and no failure -- an error answer, a request timeout, a batch that delivery.timeout.ms expires in "
    "retry -- marks a sequence unresolved, re-sequences a partition or requests an epoch bump; its batches are "
    "sent as plain at-least-once records.",
    source="KafkaProducer.configureTransactionState (no TransactionManager without idempotence), "
    "Sender.sendProducerData / failBatch, RecordAccumulator.drain (Kafka trunk @1eb7644349cb); KIP-91, KAFKA-5621",
    catches="a non-idempotent producer that marks an expired batch's sequence unresolved or requests an epoch bump "
    "(then waits for a resolution or an InitProducerId no broker answers it with), stamps a sequence, or keeps a "
    "producer id",
    findings=_sequence_state_without_idempotence,
    partners=("record_acknowledged",),
)


def _expired_beside_traffic(s: SystemState) -> bool:
    """A produce request in flight to one partition names a producer id that another partition's leader has
    forgotten (no entry) although its log holds a batch of that producer id: the other leader expired it."""
    return any(
        isinstance(env.body, ProduceRequest)
        and q != env.body.partition
        and leader.entry(env.body.producer_id) is None
        and any(e.producer_id == env.body.producer_id for e in leader.log)
        for env in s.network
        for q, leader in enumerate(s.partitions)
    )


#: The always properties whose expiry rules a scenario with ``producer.id.expiration.ms`` must exercise: the
#: sequence table's relaxation for a forgotten producer id, and the unknown producer's next batch (KIP-360).
EXPIRY_JUDGES = ("sequence_table_consistent", "no_duplicate_append")

#: Reach witnesses of producer expiry (``ProducerStateManager.removeExpiredProducers``, per partition).
EXPIRY_WITNESSES = (
    Property(
        name="producer_state_expired",
        expectation=Expectation.SOMETIMES,
        fact="A partition leader expires an idle producer id's state (producer.id.expiration.ms).",
        source="ProducerStateManager.removeExpiredProducers; KIP-360",
        catches="reachability (producer_state_expired)",
        event="producer_state_expired",
    ),
    Property(
        name="producer_expired_beside_traffic",
        expectation=Expectation.SOMETIMES,
        fact="One partition's leader expires a producer id while the producer has a request in flight to another "
        "partition: expiry is per partition (each ProducerStateManager reads its own entry's lastTimestamp).",
        source="ProducerStateManager.removeExpiredProducers / isProducerExpired (per partition); KIP-360",
        catches="reachability (producer_state_expired_beside_traffic)",
        event="producer_state_expired_beside_traffic",
        witness=_expired_beside_traffic,
    ),
)


def _idempotence_properties(sequence_space: int, expiry: bool) -> tuple[Property, ...]:

    @lru_cache(maxsize=65536)
    def consistent(partitions: tuple[PartitionLeader, ...]) -> bool:
        return not any(_table_problems(leader, sequence_space, expiry) for leader in partitions)

    def sequence_table_consistent(s: SystemState) -> bool:
        """Per producer id: non-decreasing epochs, gapless sequences, table matches log."""
        return consistent(s.partitions)

    def explain_table(s: SystemState) -> str:
        return "; ".join(_all_table_problems(s, sequence_space, expiry))

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
            name="no_duplicate_within_epoch",
            expectation=Expectation.ALWAYS,
            fact="No record is appended twice to a partition's log under one producer id and epoch: within an "
            "epoch the leader's duplicate check recognises every retry the client may have in flight.",
            source="KIP-98 §Idempotent producer; ``ProducerStateEntry.findDuplicateBatch`` (NUM_BATCHES_TO_RETAIN "
            "= 5 >= max.in.flight, KAFKA-5494); the one duplicate Kafka's producer can cause is a KIP-360 epoch "
            "bump re-stamping a batch whose earlier attempt was written unseen (KAFKA-14034 family: "
            "``TransactionManager.canRetry`` / ``handleFailedBatch``), a copy under a new epoch -- where a "
            "scenario reaches that, ``no_duplicate_append`` is permitted and this stays strict",
            catches="producers without idempotence, a leader whose duplicate check misses a retry of the same epoch",
            predicate=no_duplicate_within_epoch,
            partners=("retry_deduplicated",),
            explain=_explain_same_identity,
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
            name="acknowledged_offset_in_log",
            expectation=Expectation.ALWAYS,
            fact="A successful ProduceResponse carries the base offset of the producer's batch in the log -- for a "
            "retry recognised as a duplicate, the offset of the original append (RecordMetadata.offset()).",
            source="``UnifiedLog.analyzeAndValidateProducerState`` (a duplicate returns the cached batch's offset); "
            "``ProduceResponse.PartitionResponse.baseOffset``",
            catches="a duplicate answered with the log end or no offset, a response for another batch",
            predicate=acknowledged_offset_in_log,
            partners=("retry_deduplicated",),
            explain=lambda s: "; ".join(s.ghost.misplaced_acks),
        ),
        no_findings(
            name="produce_answer_per_kafka",
            fact="The partition leader answers every produce request as Kafka's ProducerStateManager does for the "
            "log it holds: a retry of one of the producer's last five batches at its epoch is a duplicate (NONE, "
            "not appended); an older epoch is INVALID_PRODUCER_EPOCH; a newer epoch must start at sequence 0 and "
            "the same epoch must continue right after the last batch, else OUT_OF_ORDER_SEQUENCE_NUMBER; an "
            "unknown producer id is appended at any sequence (at 0 only on a partition that never held a record) "
            "-- also for answers the client never reads (a stale connection, a duplicated request).",
            source="``UnifiedLog.analyzeAndValidateProducerState``, ``ProducerStateEntry.findDuplicateBatch`` and "
            "``NUM_BATCHES_TO_RETAIN``, ``ProducerAppendInfo.checkProducerEpoch``/``checkSequence``/``inSequence`` "
            "(Kafka trunk, October 2024); KAFKA-15591 (PR #23234)",
            catches="a validation rule dropped, reordered or answering another error; a duplicate cache that "
            "keeps fewer batches or the wrong ones; a wrap-around or new-epoch rule off by one; a ProduceResponse "
            "whose error or base offset is not Kafka's (an error answered with an offset, not INVALID_OFFSET -1)",
            findings=lambda s: s.ghost.wrong_answers,
            partners=("retry_deduplicated",),
        ),
        no_findings(
            name="epoch_bump_needed",
            fact="An idempotent producer bumps its epoch (KIP-360) only when a partition's sequence is in doubt -- "
            "never when, on every partition it re-sequences, the log holds its batches of the epoch without a gap "
            "and the batch before its next sequence was acknowledged (a batch that expired after a later one "
            "succeeded is known written), in faulty runs too.",
            source="KIP-360; ``TransactionManager.maybeResolveSequences``/``isNextSequence``, ``canRetry`` and "
            "``handleFailedBatch`` (Kafka trunk, October 2024)",
            catches="a client that forgets or misplaces its last acknowledged sequence, resolves an expired "
            "batch wrongly, or requests a bump for a partition whose sequence is intact",
            findings=lambda s: s.ghost.needless_bumps,
            partners=("epoch_bumped",),
        ),
        no_findings(
            name="epoch_bump_restarts_sequences",
            fact="A KIP-360 epoch bump restarts the sequences of every partition that asked for it: its outstanding "
            "batches carry the new epoch with sequences 0, 1, ... in send order and the partition continues after "
            "them; at the epoch limit (and only there) the producer id is reset and every outstanding batch is stamped "
            "afresh; below it the id is kept and the epoch goes up by one.",
            source="KIP-360; ``TransactionManager.bumpIdempotentProducerEpoch``/``startSequencesAtBeginning``, "
            "``bumpIdempotentEpochAndResetIdIfNeeded`` (Kafka trunk, October 2024)",
            catches="a bump that keeps a batch's old stamp (retried into OUT_OF_ORDER until it fails), numbers "
            "the re-stamped batches wrongly, or leaves the partition at the old epoch",
            findings=lambda s: s.ghost.unrestarted,
            partners=("epoch_bumped",),
        ),
        no_findings(
            name="out_of_order_failure_requests_bump",
            fact="When the idempotent producer gives up a batch the leader answered OUT_OF_ORDER_SEQUENCE_NUMBER, it "
            "requests an epoch bump that re-sequences the batch's partition: the leader's log has a gap no later "
            "batch of the epoch can fill (with the fix proposed for KAFKA-14034, the partition's sequence is marked "
            "unresolved until its earlier batches complete); when it retries such a batch that is the next sequence "
            "after the last acknowledged one (no earlier batch explains the refusal), it requests the bump first. "
            "A partition whose expired batch left its sequence unresolved is resolved without a bump only when its "
            "log holds the epoch's batch ending right before the next sequence (acks=all).",
            source="KIP-360; ``TransactionManager.handleFailedBatch``/``canRetry``/``requestEpochBumpForPartition`` "
            "(Kafka trunk, October 2024); KAFKA-14034 (PR #13796)",
            catches="a producer that fails the batch but keeps sending into the gap, retries the next batch "
            "unchanged into the same refusal until its retries are spent, or bumps without re-sequencing the "
            "partition that was refused, or resolves an unresolved sequence over a gap (maybeResolveSequences)",
            findings=lambda s: s.ghost.missed_bumps,
            partners=("record_failed",),
        ),
        no_findings(
            name="failed_batch_handled_per_kafka",
            fact="When the idempotent producer gives a batch up, its sequence bookkeeping is Kafka's: an expired "
            "batch leaves the partition's sequence unresolved exactly when it was in retry; an "
            "OUT_OF_ORDER_SEQUENCE_NUMBER, or an error it does not retry while it had retries left, requests an "
            "epoch bump that re-sequences the partition; an error with the retries spent, or a cancelled request's "
            "NETWORK_EXCEPTION / REQUEST_TIMED_OUT after the last retry, changes no sequence. Every NONE or "
            "DUPLICATE_SEQUENCE_NUMBER answer -- to a batch in flight or to one already given up -- raises the "
            "partition's last acknowledged sequence to the batch's last sequence, never lowers it.",
            source="``Sender.sendProducerData`` (``inRetry`` before ``markSequenceUnresolved``), ``Sender.failBatch``"
            " (``adjustSequenceNumbers``), ``TransactionManager.handleFailedBatch`` / ``handleCompletedBatch`` "
            "(``TxnPartitionEntry.maybeUpdateLastAckedSequence``; Kafka trunk @1eb7644349cb)",
            catches="a producer that marks every failed batch unresolved (holding its partition back for a bump "
            "Kafka never makes), forgets the mark for a retried batch that expired (the next batch drained into a "
            "sequence gap), or repairs (or fails to repair) a sequence after the wrong kind of failure, or lets an "
            "answer that arrives out of order lower (or leave behind) the last acknowledged sequence",
            findings=lambda s: s.ghost.misjudged_failures,
            partners=("record_failed",),
        ),
        no_findings(
            name="batch_stamped_per_kafka",
            fact="The idempotent producer stamps a batch when it first sends it with its current producer id and "
            "epoch and the partition's next sequence -- sequence 0 when the partition's sequences belong to an older "
            "id or epoch (after a bump, also on partitions that did not ask for it) -- and resends a batch with the "
            "stamp it was first sent with -- in its turn: a retried batch only as its partition's first sequence in "
            "flight, a new batch never while its partition's sequence is unresolved or batches of an older epoch "
            "are outstanding; a partition restarted under a new epoch forgets the old epoch's last acknowledged "
            "sequence (startSequencesAtBeginning).",
            source="``RecordAccumulator.drain``, ``TransactionManager.maybeUpdateProducerIdAndEpoch`` / "
            "``hasStaleProducerIdAndEpoch``, ``RecordAccumulator.shouldStopDrainBatchesForPartition`` (Kafka trunk "
            "@1eb7644349cb); KAFKA-12152",
            catches="a producer that keeps a partition's old sequences under a new epoch (KAFKA-12152), stamps a "
            "retry afresh, or numbers a batch off its partition's next sequence, or drains a batch out of its turn "
            "(a retry past an earlier one, a new batch into an unresolved sequence), or carries the old epoch's "
            "acknowledged sequence into the new one",
            findings=lambda s: s.ghost.misstamped,
            partners=("record_acknowledged",),
        ),
        Property(
            name="healthy_producer_not_failed",
            expectation=Expectation.ALWAYS,
            fact="In a run without faults every send succeeds: the leader answers each produce request NONE, no "
            "record fails and no producer bumps its epoch (KIP-360 bumps only after a lost or expired sequence).",
            source="KIP-98 §Idempotent producer; ``ProducerAppendInfo.checkSequence`` / ``checkProducerEpoch`` "
            "accept a well-behaved producer's batches; ``TransactionManager.handleFailedBatch``",
            catches="a leader that rejects an in-order batch (wrong expected sequence, epoch comparison reversed), "
            "a client that fails or re-stamps a batch that was acknowledged",
            predicate=healthy_producer_not_failed,
            partners=("record_acknowledged",),
            explain=lambda s: "; ".join(_unhealthy(s)),
        ),
        no_findings(
            name="failed_sends_explained",
            fact="A record fails only when Kafka's producer gives up on it: delivery.timeout.ms expired its batch, "
            "its retries are spent, or the leader answered an error the producer does not retry -- never while "
            "retries remain for a retriable error (OUT_OF_ORDER_SEQUENCE_NUMBER included, KIP-360).",
            source="``Sender.completeBatch``/``canRetry``/``failBatch``; ``TransactionManager.canRetry`` (Kafka 3.9); "
            "KIP-91 (delivery.timeout.ms)",
            catches="a client that fails a batch with retries left (a retry count off by one, an error class "
            "treated as fatal), or fails a batch whose request was merely re-sent",
            findings=lambda s: s.ghost.unexplained_failures,
            partners=("record_failed",),
        ),
        Property(
            name="high_watermark_within_log",
            expectation=Expectation.ALWAYS,
            fact="A leader's high watermark never passes its log end offset (a new leader's included), its log start "
            "offset never passes the high watermark (only committed records are deleted), and a produce response "
            "parked for replication waits only for a batch the high watermark has not passed.",
            source="``UnifiedLog.updateHighWatermark`` (upper-bounded by the log end offset), "
            "``Partition.maybeIncrementLeaderHW`` (the minimum log end of the ISR), ``DelayedProduce.tryComplete`` "
            "(completes once the high watermark reaches the batch), ``UnifiedLog.maybeIncrementLogStartOffset`` "
            "(OffsetOutOfRangeException above the high watermark); Kafka 4.0 (trunk, 2024-10)",
            catches="a leader that starts or restarts with a high watermark beyond its log (records exposed to "
            "read_committed readers and acks=all answered before replication), a purgatory never released, "
            "DeleteRecords or retention deleting records not yet replicated",
            predicate=high_watermark_within_log,
            partners=("record_acknowledged",),
            explain=_explain_watermarks,
        ),
        Property(
            name="sends_accounted_for",
            expectation=Expectation.ALWAYS,
            fact="A record the application sent stays in the producer until its send completes -- acknowledged, "
            "or failed with the error Kafka reports: the client never drops a batch without completing its future, "
            "in faulty runs too (a crashed producer process excepted: its futures die with it); and it completes "
            "once: a late or repeated answer to a batch already completed changes nothing the application sees.",
            source="``KafkaProducer.send`` (the returned future / callback always completes); ``ProducerBatch.done`` "
            "from ``Sender.completeBatch``, ``Sender.failBatch`` and ``RecordAccumulator.expiredBatches`` "
            "(Kafka 4.0, trunk 2024-10)",
            catches="a client that removes a batch it still owes an answer for (the wrong batch completed on a "
            "response, an acks=0 send that completes another in-flight batch, a reset that forgets a batch), or "
            "completes a batch again when a late answer arrives for it",
            predicate=sends_accounted_for,
            partners=("record_acknowledged",),
            explain=lambda s: "; ".join(_unaccounted(s)),
        ),
        sometimes_state(
            "record_failed",
            "The application saw a record fail.",
            lambda s: bool(s.ghost.failed),
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
            fact="The leader restarted, or its leadership moved, while acknowledged records were in the log.",
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
            witness=lambda s: any(p.in_flight >= 2 for p in s.producers),
        ),
        Property(
            name="retry_after_disconnect",
            expectation=Expectation.SOMETIMES,
            fact="A batch was re-sent after its request failed or timed out.",
            source="Sender retries (``Sender.java``, ``TransactionManager.java``)",
            catches="reachability of retries",
            event="resend",
            witness=lambda s: any(b.in_flight and b.attempts > 1 for p in s.producers for b in p.batches),
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
