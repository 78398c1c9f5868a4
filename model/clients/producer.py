"""The idempotent producer client: Kafka's ``Sender`` and ``TransactionManager``.

KIP-98 §5: a producer with ``enable.idempotence=true`` obtains a producer id
and epoch with ``InitProducerId`` and stamps every batch with
``(producer_id, producer_epoch, base_sequence)``, the sequence counting records
per partition from 0.  A retried batch keeps its stamp, so the partition
leader recognises it (``model/producer_state.py``).

What the model keeps of the client (``RecordAccumulator``, ``Sender``,
``TransactionManager`` in ``clients/.../producer/internals``):

* **Draining.**  A batch gets its sequence when first drained.  At most
  ``max.in.flight.requests.per.connection`` requests are in flight on the
  connection to the broker.  With idempotence a *retried* batch is sent only
  when it is the lowest unacknowledged sequence of its partition
  (``RecordAccumulator.shouldStopDrainBatchesForPartition``), so retries
  cannot overtake.
* **Responses** (``Sender.completeBatch``, ``TransactionManager.canRetry`` /
  ``handleFailedBatch``, ``Sender.java``, ``TransactionManager.java``):
  NONE and DUPLICATE_SEQUENCE_NUMBER complete the batch; an idempotent
  producer retries OUT_OF_ORDER_SEQUENCE_NUMBER while ``retries`` allow, and
  when the batch is the next one after the last acknowledged sequence (no
  earlier batch explains the gap) it also requests an epoch bump, which
  re-stamps it from sequence 0 before it is resent (KIP-360,
  ``TransactionManager.canRetry``); once its retries are spent the batch fails
  and the bump is requested all the same (``handleFailedBatch``).  On a
  partition with an unresolved sequence the refusal is judged by that sequence
  instead (``isNextSequenceForUnresolvedPartition``, KAFKA-8710): the batch
  right after the failed one requests the bump, a later one is retried as it
  is, and a transactional producer gives the batch up.
  Any other error is retried while ``retries`` allow only if Kafka's exception
  for it is a ``RetriableException`` (:data:`model.protocol.errors.RETRIABLE`);
  INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, TRANSACTION_ABORTABLE, INVALID_RECORD and
  the authorization failures fail the batch at once.
* **Timeouts.**  ``request.timeout.ms`` closes the connection: every in-flight
  request fails and its batch is retried on a new connection (the old request
  may still reach the broker).  ``delivery.timeout.ms`` fails a batch; if it
  had been sent, its partition has an *unresolved sequence*: no new batch of
  the partition is drained (retries still are), and once no sequenced batch of
  the partition is left, ``TransactionManager.maybeResolveSequences`` either
  finds the last acknowledged sequence caught up (a later batch succeeded, so
  the expired one was written) or requests an epoch bump.
* **Epoch bump** (KIP-360, ``bumpIdempotentProducerEpoch``): epoch + 1, or a
  new producer id at the epoch limit; the sequenced batches of the partitions
  that triggered it are re-stamped from sequence 0.  Each partition entry
  (``TxnPartitionEntry``) keeps the epoch its sequences belong to; a partition
  moves to the new epoch, restarting at 0, when it next drains a new batch and
  has no older batch outstanding (``maybeUpdateProducerIdAndEpoch``).
  Simplification: the model bumps only when no request is in flight, so a
  re-stamped batch is never on the wire under its old stamp.
* **Restart** of the application: a new producer instance, a new producer id;
  records the old instance had not completed are abandoned (never reported
  acknowledged).

Batches carry one record unless a scenario sets ``records_per_batch``: the
broker then checks sequence *ranges* (a batch's first and last sequence) and
recognises a retry by its cached (first, last) pair.  Not modelled: linger and
``batch.size`` in bytes (a batch is closed when it is drained or full),
MESSAGE_TOO_LARGE splits, compression, metadata refresh, multiple brokers per
producer.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.clients.producer_config import ProducerConfig
from keos.model.codec import record
from keos.model.log.producer_state import next_sequence
from keos.model.protocol.errors import RETRIABLE, Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse
from keos.model.variants import KAFKA_SEQUENCE_SPACE

__all__ = [
    "Outcome",
    "Producer",
    "ProducerBatch",
    "TxnPartitionEntry",
    "answers",
    "bump_epoch",
    "can_bump_epoch",
    "can_drain",
    "can_time_out",
    "complete_batch",
    "correlation_id",
    "disconnect",
    "drain",
    "expire_batch",
    "handle_produce_response",
    "init_producer_id",
    "needs_producer_id",
    "new_producer",
    "orphan_requests",
    "record_id",
    "request_timeout",
    "resolve_sequence",
    "restart",
    "send",
    "sequenced_outstanding",
]

#: Record ids encode the producer: ``producer * RECORDS_PER_PRODUCER + n``.
RECORDS_PER_PRODUCER = 1000


def record_id(producer: int, n: int) -> int:
    """The id of the ``n``-th record the application hands to ``producer``."""
    return producer * RECORDS_PER_PRODUCER + n


def record_owner(rid: int) -> tuple[int, int]:
    """``(producer, n)`` for a record id."""
    return divmod(rid, RECORDS_PER_PRODUCER)


def record_label(rid: int) -> str:
    """Human label ``p0.r1`` for a record id."""
    p, n = record_owner(rid)
    return f"p{p}.r{n}"


@record
class ProducerBatch(NamedTuple):
    """A batch the client has not completed yet (``ProducerBatch``)."""

    partition: int
    records: tuple[int, ...]
    producer_epoch: int = -1
    base_sequence: int = -1
    in_flight: bool = False
    attempts: int = 0

    @property
    def has_sequence(self) -> bool:
        """Whether the batch was stamped with a sequence (it was drained once)."""
        return self.base_sequence >= 0


@record
class TxnPartitionEntry(NamedTuple):
    """The client's sequence bookkeeping for one partition (``TxnPartitionEntry``)."""

    producer_epoch: int = -1
    next_sequence: int = 0
    last_acked_sequence: int = -1
    unresolved: bool = False
    rewrite: bool = False
    #: ``TransactionManager.partitionsWithUnresolvedSequences``' value: the sequence after the last record of the
    #: failed batch (``markSequenceUnresolved``: ``lastSequence() + 1``, the largest over the failed batches), so
    #: ``isNextSequenceForUnresolvedPartition`` can tell the batch right after it; -1 while not ``unresolved``.
    unresolved_sequence: int = -1


@record
class Producer(NamedTuple):
    """One producer instance (``KafkaProducer``)."""

    producer_id: int
    producer_epoch: int
    connection: int
    next_record: int
    partitions: tuple[TxnPartitionEntry, ...]
    batches: tuple[ProducerBatch, ...] = ()
    epoch_bump_required: bool = False
    #: Batches ``delivery.timeout.ms`` failed while their request was in flight, as ``(correlation id, partition,
    #: last sequence)``: ``NetworkClient`` still holds the request with the batch, so its answer still reaches
    #: ``Sender.completeBatch`` (:func:`handle_produce_response`); dropped when the connection closes
    #: (:func:`disconnect`, :func:`request_timeout`), whether or not a batch of the producer was in flight on it.
    expired: tuple[tuple[int, int, int], ...] = ()

    @property
    def in_flight(self) -> int:
        """Requests in flight on the connection."""
        return sum(1 for b in self.batches if b.in_flight)


class Outcome(NamedTuple):
    """A client-side transition: the producer, what completed, and the events."""

    producer: Producer
    acked: tuple[int, ...] = ()
    failed: tuple[int, ...] = ()
    events: tuple[str, ...] = ()


def new_producer(partitions: int, connection: int = 0, next_record: int = 0) -> Producer:
    """A producer instance before ``InitProducerId``."""
    return Producer(-1, -1, connection, next_record, (TxnPartitionEntry(),) * partitions)


def needs_producer_id(p: Producer, config: ProducerConfig) -> bool:
    """Whether an idempotent producer must send InitProducerId: it holds no producer id.

    ``TransactionManager``: a fresh instance has none, and ``bumpIdempotentEpochAndResetIdIfNeeded`` forgets
    it at the epoch limit (:func:`bump_epoch`).  The one guard of the step: the system offers the action
    and performs it under this same test.
    """
    return config.enable_idempotence and p.producer_id < 0


def init_producer_id(p: Producer, producer_id: int) -> Producer:
    """InitProducerId for an idempotent producer: a fresh id at epoch 0 (``handleInitProducerId``)."""
    return p._replace(producer_id=producer_id, producer_epoch=0)


def send(p: Producer, partition: int, rid: int, batch_records: int = 1) -> Producer:
    """The application calls ``send``: ``RecordAccumulator.append`` adds the record to the partition's batch.

    The record joins the partition's newest batch if that batch was never
    drained (no sequence yet) and holds fewer than ``batch_records`` records
    (``batch.size`` in records); otherwise it opens a new batch.  With the
    default of one record per batch every record is its own batch.
    """
    n = p.next_record + 1
    for i in range(len(p.batches) - 1, -1, -1):
        b = p.batches[i]
        if b.partition != partition:
            continue
        if b.attempts == 0 and len(b.records) < batch_records:  # never drained (a drained batch is closed)
            return p._replace(next_record=n, batches=_set(p.batches, i, b._replace(records=(*b.records, rid))))
        break
    return p._replace(next_record=n, batches=p.batches + (ProducerBatch(partition, (rid,)),))


def _set(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return items[:i] + (value,) + items[i + 1 :]


def sequenced_outstanding(p: Producer, partition: int) -> bool:
    """Whether the partition has a sequenced batch not yet completed (in flight or retrying)."""
    return any(b.partition == partition and b.has_sequence for b in p.batches)


def _sendable_index(p: Producer, partition: int, config: ProducerConfig, in_turn: bool = True) -> int:
    """Index of the batch the Sender would drain for ``partition``, or -1.

    ``RecordAccumulator.shouldStopDrainBatchesForPartition``: a sequenced
    (retried) batch goes only when it is the first sequenced batch still
    outstanding; a new batch waits while the partition has an unresolved
    sequence or outstanding batches from an older epoch.  ``in_turn`` off (weakened variant
    ``retry_drained_out_of_turn``): a retried batch goes whenever it is not in flight.
    """
    first_sequenced = -1
    for i, b in enumerate(p.batches):
        if b.partition != partition:
            continue
        if b.has_sequence and first_sequenced < 0:
            first_sequenced = i
        if b.in_flight:
            continue
        if not config.enable_idempotence:
            return i
        if b.has_sequence:
            return i if i == first_sequenced or not in_turn else -1
        entry = p.partitions[partition]
        if entry.unresolved:
            return -1
        if entry.producer_epoch != p.producer_epoch and sequenced_outstanding(p, partition):
            return -1
        return i
    return -1


def can_drain(p: Producer, partition: int, config: ProducerConfig, orphans: int = 0, in_turn: bool = True) -> bool:
    """Whether :func:`drain` would send a batch of ``partition`` (no objects built).

    ``max.in.flight.requests.per.connection`` bounds the *requests* ``NetworkClient`` holds on the connection
    (``InFlightRequests.canSendMore``): a request stays there until its response is read or the connection
    closes, also when its batch is done -- expired by ``delivery.timeout.ms`` while in flight
    (``Sender.getExpiredInflightBatches`` fails the batch; its request is still on the wire).  ``orphans``
    counts those requests, which the producer's batches no longer show (the system reads them off the network).
    """
    if config.enable_idempotence and (p.producer_id < 0 or p.epoch_bump_required):
        return False
    if p.in_flight + orphans >= config.max_in_flight:
        return False
    return _sendable_index(p, partition, config, in_turn) >= 0


def drain(
    p: Producer,
    index: int,
    partition: int,
    config: ProducerConfig,
    sequence_space: int,
    orphans: int = 0,
    in_turn: bool = True,
) -> tuple[Producer, ProduceRequest] | None:
    """The Sender drains the next batch of ``partition`` into a ProduceRequest (``orphans``: :func:`can_drain`)."""
    if not can_drain(p, partition, config, orphans, in_turn):
        return None
    i = _sendable_index(p, partition, config, in_turn)
    b = p.batches[i]
    entries = p.partitions
    if config.enable_idempotence and not b.has_sequence:
        entry = entries[partition]
        if entry.producer_epoch != p.producer_epoch:
            entry = TxnPartitionEntry(producer_epoch=p.producer_epoch)
        b = b._replace(producer_epoch=p.producer_epoch, base_sequence=entry.next_sequence)
        entry = entry._replace(next_sequence=next_sequence(entry.next_sequence, len(b.records), sequence_space))
        entries = _set(entries, partition, entry)
    b = b._replace(in_flight=True, attempts=b.attempts + 1)
    request = ProduceRequest(
        producer=index,
        connection=p.connection,
        partition=partition,
        producer_id=p.producer_id if config.enable_idempotence else -1,
        producer_epoch=b.producer_epoch,
        base_sequence=b.base_sequence,
        records=b.records,
        correlation_id=correlation_id(b),
    )
    return p._replace(batches=_set(p.batches, i, b), partitions=entries), request


#: Attempts a batch may make, at most: the correlation id of a batch's request is unique below it.
MAX_ATTEMPTS = 1 << 16


def correlation_id(b: ProducerBatch) -> int:
    """The correlation id of the request that carries ``b``'s current attempt.

    Kafka's ``NetworkClient`` numbers every request it sends from a counter (``RequestHeader.correlationId``).
    The model sends one batch per request, so a number unique per (batch, attempt) names each request just as
    well, and keeps states that differ only in how many requests went before equal: the batch's first record id
    (unique for the producer's lifetime) and its attempt count.
    """
    return b.records[0] * MAX_ATTEMPTS + b.attempts


def answers(b: ProducerBatch, resp: ProduceResponse) -> bool:
    """Whether ``resp`` answers the request ``b`` awaits (``NetworkClient`` hands a response to its request's
    callback by correlation id; ``Sender.handleProduceResponse`` completes that request's batches)."""
    return b.in_flight and correlation_id(b) == resp.correlation_id


def orphan_requests(p: Producer, index: int, messages: Any) -> int:
    """How many requests of producer ``index`` are in flight on its connection for batches it no longer awaits.

    ``messages``: ``(connection, body)`` pairs of what is on the wire (and parked in a leader's purgatory).
    ``NetworkClient.InFlightRequests`` holds a request until its response is read or the connection closes; a
    batch expired in flight (``Sender.getExpiredInflightBatches``) leaves its request there, still counted
    against ``max.in.flight.requests.per.connection`` (:func:`can_drain`).  Counted by correlation id: the
    request, or its answer on the way back.
    """
    awaited = {correlation_id(b) for b in p.batches if b.in_flight}
    orphans = {
        body.correlation_id
        for connection, body in messages
        if connection == p.connection
        and isinstance(body, (ProduceRequest, ProduceResponse))
        and body.producer == index
        and body.correlation_id not in awaited
    }
    return len(orphans)


def _late_answer(p: Producer, resp: ProduceResponse, late_ack: bool = True) -> Outcome:
    """The answer to a request whose batch ``delivery.timeout.ms`` already failed (:attr:`Producer.expired`).

    ``Sender.completeBatch`` (trunk @1eb7644349cb) runs for it like for any answer: ``canRetry`` is false (the
    batch ``isDone``), so NONE and DUPLICATE_SEQUENCE_NUMBER reach ``completeBatch(batch, response)``, whose
    ``TransactionManager.handleCompletedBatch`` raises the partition's last acknowledged sequence to the batch's
    last one (``maybeUpdateLastAckedSequence``: a plain comparison, whatever epoch the partition is at by now; a
    partition it still tracks) before ``ProducerBatch.complete`` finds the final state FAILED and only logs it:
    the application keeps the failure it was told.  So a written batch the client gave up still counts for
    ``maybeResolveSequences``.  Any other error goes to ``failBatch``, where ``completeExceptionally`` returns
    false: nothing.  ``late_ack`` off
    (weakened variant ``late_success_ignored``): every such answer is ignored.
    """
    for n, (cid, q, last) in enumerate(p.expired):
        if cid != resp.correlation_id:
            continue
        p = p._replace(expired=p.expired[:n] + p.expired[n + 1 :])
        if resp.error not in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER) or not late_ack:
            return Outcome(p, events=("stale_response",))
        entry = p.partitions[q]
        # TxnPartitionMap.maybeUpdateLastAckedSequence updates a tracked partition only: after InitProducerId's
        # resetSequenceNumbers (txnPartitionMap.reset) the entry is gone until the partition is drained again
        if last > entry.last_acked_sequence and entry.producer_epoch >= 0:
            p = p._replace(partitions=_set(p.partitions, q, entry._replace(last_acked_sequence=last)))
        return Outcome(p, events=("late_success",))
    return Outcome(p, events=("stale_response",))


def late_ack_misjudged(  # no mutate: the reference of the late-acknowledgement judges (properties), not a rule
    before: TxnPartitionEntry, after: TxnPartitionEntry, last: int
) -> tuple[int, int] | None:
    """``(got, want)`` when a late NONE / DUPLICATE_SEQUENCE_NUMBER answer to a batch that expired in flight, whose
    last sequence is ``last``, left a partition's last acknowledged sequence other than Kafka's; else ``None``.

    Kafka's rule, stated apart from :func:`_late_answer` so that a defect there is judged by it:
    ``Sender.completeBatch`` -> ``TxnPartitionMap.maybeUpdateLastAckedSequence`` raises the sequence to ``last``
    for a partition still tracked (an epoch set), never lowers it.  Read by ``late_answer_misread`` (idempotence)
    and ``late_ack_misread`` (transactions).
    """
    want = max(before.last_acked_sequence, last) if before.producer_epoch >= 0 else before.last_acked_sequence
    got = after.last_acked_sequence
    return None if got == want else (got, want)  # no branch: the other side describes a defect


def _find_in_flight(p: Producer, resp: ProduceResponse) -> int:
    for i, b in enumerate(p.batches):
        if answers(b, resp):
            return i
    return -1


def _fail(p: Producer, i: int, config: ProducerConfig, adjust: bool = False, transactional: bool = False) -> Producer:
    """``Sender.failBatch`` -> ``TransactionManager.handleFailedBatch`` for a batch not refused out of order.

    Kafka (``Sender.java``/``TransactionManager.java``, trunk @1eb7644349cb) never marks a sequence unresolved
    here: it passes ``adjustSequenceNumbers`` = the batch had retries left (``attempts < retries``: it failed on
    an error that is not retried), and only then repairs the partition -- an idempotent producer requests a
    KIP-360 bump for it (``requestEpochBumpForPartition``), a transactional one pulls the sequences of the
    partition's later batches down over the failed one (``TxnPartitionMap.adjustSequencesDueToFailedBatch``).
    A batch whose retries are spent (or that expired) leaves the sequences as they are: Kafka cannot tell
    whether the leader wrote it.  ``adjust`` is that argument.
    """
    b = p.batches[i]
    p = p._replace(batches=p.batches[:i] + p.batches[i + 1 :])
    if not (config.enable_idempotence and adjust and b.has_sequence):
        return p
    if transactional:  # no branch: idempotence answers no error its producer does not retry
        return _adjust_sequences(p, b)
    return _request_bump(p, b.partition)


def _request_bump(p: Producer, partition: int) -> Producer:
    """``TransactionManager.requestEpochBumpForPartition``: bump the epoch, re-sequence ``partition``."""
    entry = p.partitions[partition]._replace(rewrite=True)
    return p._replace(partitions=_set(p.partitions, partition, entry), epoch_bump_required=True)


def _adjust_sequences(p: Producer, failed: ProducerBatch) -> Producer:
    """``TxnPartitionEntry.adjustSequencesDueToFailedBatch``: the failed batch's sequences are given back.

    The partition's next sequence goes down by the batch's record count, and every outstanding sequenced batch
    of the partition from the failed one's base sequence on is re-stamped that much lower (same producer id and
    epoch), so the leader sees no gap where the failed batch was.
    """
    q, n = failed.partition, len(failed.records)
    entry = p.partitions[q]
    entry = entry._replace(next_sequence=entry.next_sequence - n)
    batches = tuple(
        b._replace(base_sequence=b.base_sequence - n)
        if b.partition == q and b.has_sequence and b.base_sequence >= failed.base_sequence
        else b
        for b in p.batches
    )
    return p._replace(partitions=_set(p.partitions, q, entry), batches=batches)


def _mark_unresolved(p: Producer, b: ProducerBatch) -> Producer:
    """``TransactionManager.markSequenceUnresolved``: the partition waits for its outstanding batches to tell
    whether ``b`` was written; the value kept is the sequence after ``b`` (plain ``lastSequence() + 1``, the
    largest of the partition's failed batches)."""
    entry = p.partitions[b.partition]
    after = max(entry.unresolved_sequence, b.base_sequence + len(b.records))
    entry = entry._replace(unresolved=True, unresolved_sequence=after)
    return p._replace(partitions=_set(p.partitions, b.partition, entry))


def handle_produce_response(
    p: Producer,
    resp: ProduceResponse,
    config: ProducerConfig,
    sequence_space: int,
    defer_bump: bool = False,
    transactional: bool = False,
    bump_next: bool = True,
    by_unresolved: bool = True,
    late_ack: bool = True,
    ack_raises: bool = True,
    adjust_failed: bool = True,
    storage_error_known: bool = True,
    retriable_keeps_epoch: bool = True,
    retriable_only: bool = True,
) -> Outcome:
    """Complete, retry or fail the batch a ProduceResponse answers (the batch of the request it names:
    :func:`answers`).

    OUT_OF_ORDER_SEQUENCE_NUMBER (``Sender.completeBatch``, ``TransactionManager.canRetry``, Kafka 3.9):
    with retries left a batch that is not the next sequence after the last
    acknowledged one is retried (an earlier batch explains the error); the
    next one is retried too by an idempotent producer, which also requests an
    epoch bump (``requestEpochBumpForPartition``) that re-stamps it before it
    is resent, while a ``transactional`` producer fails it (OUT_OF_ORDER is
    not a ``RetriableException``; the transaction becomes abortable).  With its retries spent the
    batch fails and the bump is requested at once (``handleFailedBatch``), which
    re-stamps the partition's other outstanding batches from sequence 0 even if
    an earlier attempt of one was written: KAFKA-14034.  With ``defer_bump``
    (the fix proposed there) the partition's sequence is marked unresolved
    instead, and :func:`resolve_sequence` bumps only if the earlier batches do
    not close the gap.  ``bump_next`` off (weakened variant
    ``retry_refused_next_sequence_unchanged``): the next batch is retried unchanged, without a bump.

    A partition with an *unresolved* sequence (a sent batch failed without an answer, :func:`_fail`) is judged
    otherwise (``canRetry``, trunk @1eb7644349cb, KAFKA-7848/KAFKA-8710): the error is no longer explained by
    the batch's place after the last acknowledged sequence.  An idempotent producer retries every such batch and
    requests the bump only for the batch whose base sequence is the one right after the failed batch
    (``isNextSequenceForUnresolvedPartition``); a batch further on is retried as it is while the partition
    waits to resolve (:func:`resolve_sequence`).  A transactional producer does not retry it at all: the batch
    fails and the transaction becomes abortable.  ``by_unresolved`` off (weakened variant
    ``unresolved_sequence_ignored_on_retry``): the unresolved state is ignored, as before Kafka 2.5.

    The answer to a batch that already expired in flight: :func:`_late_answer` (``late_ack``).  ``ack_raises``,
    ``adjust_failed``, ``storage_error_known``, ``retriable_keeps_epoch``, ``retriable_only``:
    :func:`complete_batch`.
    """
    if resp.connection != p.connection:
        return Outcome(p, events=("stale_response",))
    i = _find_in_flight(p, resp)
    if i < 0:
        return _late_answer(p, resp, late_ack)
    return complete_batch(
        p,
        i,
        resp.error,
        config,
        sequence_space,
        defer_bump,
        transactional,
        bump_next,
        by_unresolved,
        ack_raises,
        adjust_failed,
        storage_error_known,
        retriable_keeps_epoch,
        retriable_only,
    )


def complete_batch(
    p: Producer,
    i: int,
    error: str,
    config: ProducerConfig,
    sequence_space: int = KAFKA_SEQUENCE_SPACE,
    defer_bump: bool = False,
    transactional: bool = False,
    bump_next: bool = True,
    by_unresolved: bool = True,
    ack_raises: bool = True,
    adjust_failed: bool = True,
    storage_error_known: bool = True,
    retriable_keeps_epoch: bool = True,
    retriable_only: bool = True,
) -> Outcome:
    """``Sender.completeBatch`` for in-flight batch ``i`` answered ``error`` (see :func:`handle_produce_response`).

    A NONE or DUPLICATE_SEQUENCE_NUMBER answer raises the partition's last acknowledged sequence to the batch's
    last one, never lowers it (``TxnPartitionEntry.maybeUpdateLastAckedSequence``): answers may arrive out of
    order.  ``ack_raises`` off (weakened variant ``acked_sequence_lowered``): every answer sets it.
    ``adjust_failed`` off (weakened variant ``kafka_5494_failed_sequences_kept``): a failed batch never gives its
    sequences back (:func:`_fail`'s ``adjust``), as before KAFKA-5494.

    ``storage_error_known`` off (weakened variant ``storage_error_unknown_to_client``): the client does not know
    KAFKA_STORAGE_ERROR (code 56, KIP-112) and reads it as the non-retriable UNKNOWN_SERVER_ERROR, as a Produce v3
    client did (``Errors.forCode``).  ``retriable_keeps_epoch`` off (weakened variant
    ``retriable_error_bumps_epoch``): an idempotent producer answers every retried ``RetriableException`` like
    the refusal of its next sequence -- it requests an epoch bump that re-stamps the batch from sequence 0.
    ``retriable_only`` off (weakened variant ``produce_retries_every_error``): ``canRetry`` retries any error while
    retries are left, as the pre-0.9 Scala producer did (``DefaultEventHandler``): a fatal or abortable answer
    (INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, TRANSACTION_ABORTABLE, an authorization error) is sent again.

    Also the path of a request that got no answer: ``Sender.handleProduceResponse`` turns a request cancelled by
    a closed connection into NETWORK_EXCEPTION (``wasDisconnected``) or REQUEST_TIMED_OUT (``wasTimedOut``) for
    every batch of it, and completes each here (:func:`request_timeout`).
    """
    b = p.batches[i]
    if error == Errors.KAFKA_STORAGE_ERROR and not storage_error_known:  # no branch: variant only
        error = Errors.UNKNOWN_SERVER_ERROR  # Errors.forCode of a code the client's enum lacks
    if error in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER):
        p = p._replace(batches=p.batches[:i] + p.batches[i + 1 :])
        entry = p.partitions[b.partition]
        if config.enable_idempotence and entry.producer_epoch == b.producer_epoch:
            last = next_sequence(b.base_sequence, len(b.records) - 1, sequence_space)
            # TxnPartitionEntry.maybeUpdateLastAckedSequence compares plainly: past the wrap at Int.MAX_VALUE the
            # last acknowledged sequence stays at MAX_VALUE until a bump resets the partition (Kafka 3.9)
            if last > entry.last_acked_sequence or not ack_raises:
                entry = entry._replace(last_acked_sequence=last)
            p = p._replace(partitions=_set(p.partitions, b.partition, entry))
        return Outcome(p, acked=b.records)
    retry = b._replace(in_flight=False)
    # Sender.canRetry: ``batch.attempts() < retries`` where Kafka counts re-enqueues (the model counts sends); the
    # same test is failBatch's ``adjustSequenceNumbers``
    can_retry = b.attempts <= config.retries
    events: tuple[str, ...] = (f"client_error:{error}",)
    if error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and config.enable_idempotence:
        entry = p.partitions[b.partition]
        unresolved = entry.unresolved and by_unresolved  # hasUnresolvedSequence
        expected = entry.last_acked_sequence + 1  # isNextSequence: ``sequence - lastAckedSequence == 1``
        if can_retry and not unresolved and (b.base_sequence != expected or not bump_next):
            return Outcome(p._replace(batches=_set(p.batches, i, retry)), events=(*events, "retry"))
        if can_retry and not transactional:
            p = p._replace(batches=_set(p.batches, i, retry))
            # isNextSequenceForUnresolvedPartition: the batch right after the failed one has nothing before it
            # to fill the gap; one further on waits for the sequence to resolve
            if unresolved and (b.base_sequence != entry.unresolved_sequence or not bump_next):
                return Outcome(p, events=(*events, "retry", "awaiting_resolution"))
            return Outcome(_request_bump(p, b.partition), events=(*events, "retry", "epoch_bump_requested"))
        if transactional:
            # handleFailedBatch: OutOfOrderSequenceException requests the bump only for an idempotent producer; a
            # transactional one takes the common branch (its sequences adjusted if the batch had retries left)
            p = _fail(p, i, config, can_retry and adjust_failed, transactional)
            return Outcome(p, failed=b.records, events=events)
        if defer_bump and entry.producer_epoch == b.producer_epoch:  # no branch: variant kafka_14034_fix only
            p = _mark_unresolved(p._replace(batches=p.batches[:i] + p.batches[i + 1 :]), b)
            return Outcome(p, failed=b.records, events=(*events, "sequence_unresolved"))
        p = _request_bump(p._replace(batches=p.batches[:i] + p.batches[i + 1 :]), b.partition)
        return Outcome(p, failed=b.records, events=events)
    # ``Sender.canRetry`` / ``TransactionManager.canRetry``: any other error is retried only if its exception is a
    # ``RetriableException`` (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, NETWORK_EXCEPTION, REQUEST_TIMED_OUT, ...);
    # INVALID_PRODUCER_EPOCH, an authorization failure, INVALID_RECORD, INVALID_TXN_STATE or TRANSACTION_ABORTABLE
    # fail the batch at once
    if can_retry and (error in RETRIABLE or not retriable_only):
        p = p._replace(batches=_set(p.batches, i, retry))
        if not retriable_keeps_epoch and config.enable_idempotence and not transactional:  # no branch: variant only
            return Outcome(_request_bump(p, b.partition), events=(*events, "retry", "epoch_bump_requested"))
        return Outcome(p, events=events + ("retry",))
    return Outcome(_fail(p, i, config, can_retry and adjust_failed, transactional), failed=b.records, events=events)


def disconnect(p: Producer) -> Producer:
    """The connection to the leader closes while no batch of ``p`` is in flight on it: a new connection.

    ``NetworkClient.cancelInFlightRequests`` (trunk @1eb7644349cb) still completes the requests it held -- those of
    batches ``delivery.timeout.ms`` failed in flight (:attr:`Producer.expired`) -- as disconnected; their batches are
    done, so ``Sender.completeBatch`` changes nothing, and no answer to them can arrive any more: they are forgotten.
    """
    return p._replace(connection=p.connection + 1, expired=())


def can_time_out(p: Producer) -> bool:
    """Whether ``request.timeout.ms`` can fire for ``p``: a request of it is in flight."""
    return p.in_flight > 0


def request_timeout(
    p: Producer,
    config: ProducerConfig,
    error: str = Errors.REQUEST_TIMED_OUT,
    transactional: bool = False,
    retry: bool = True,
) -> Outcome | None:
    """The connection to the leader closes with requests in flight: each is answered ``error`` by the client.

    ``NetworkClient`` (trunk @1eb7644349cb): ``handleTimedOutRequests`` closes the connection when a request
    outlives ``request.timeout.ms`` and ``cancelInFlightRequests`` completes every request in flight on it as
    ``timedOut`` (REQUEST_TIMED_OUT); a connection the peer reset (or a broker that crashed) completes them as
    ``disconnected`` (NETWORK_EXCEPTION).  ``Sender.handleProduceResponse`` gives that error to every batch of
    each request (:func:`complete_batch`): both are retriable, so a batch with retries left is re-enqueued for
    the next connection (the old request may still reach the broker) and one with its retries spent fails
    without adjusting any sequence.  ``retry`` off (weakened variant ``disconnect_fails_batches``): every batch
    of a cancelled request fails at once.
    """
    if not can_time_out(p):
        return None
    p = p._replace(connection=p.connection + 1, expired=())  # cancelInFlightRequests: expired batches stay failed
    failed: list[int] = []
    for first in [b.records[0] for b in p.batches if b.in_flight]:
        i = next(n for n, b in enumerate(p.batches) if b.records[0] == first)
        if not retry:  # no branch: variant disconnect_fails_batches only
            failed.extend(p.batches[i].records)
            p = _fail(p, i, config)
            continue
        out = complete_batch(p, i, error, config, transactional=transactional)
        p = out.producer
        failed.extend(out.failed)
    return Outcome(p, failed=tuple(failed), events=("disconnect", "retry", f"client_error:{error}"))


def _in_retry(b: ProducerBatch) -> bool:
    """``ProducerBatch.inRetry``: the batch was re-enqueued after a failed attempt (the model counts sends)."""
    return b.attempts > 1 or not b.in_flight


def expire_batch(p: Producer, partition: int, config: ProducerConfig, in_retry_only: bool = True) -> Outcome | None:
    """``delivery.timeout.ms`` fires for the oldest sent batch of ``partition``.

    ``Sender.sendProducerData`` (trunk @1eb7644349cb) fails it without adjusting sequences
    (``failBatch(expiredBatch, TimeoutException, false)``) and marks its partition's sequence unresolved only if
    the batch is in retry (``expiredBatch.inRetry()``: ``markSequenceUnresolved``): a batch expired on its first
    attempt leaves the sequences as they are.  ``in_retry_only`` off (weakened variant
    ``unresolved_on_first_attempt_expiry``): every sent batch that expires marks it.
    """
    for i, b in enumerate(p.batches):
        if b.partition != partition:
            continue
        if b.attempts == 0:
            return None
        if b.in_flight and config.enable_idempotence:
            last = b.base_sequence + len(b.records) - 1
            p = p._replace(expired=(*p.expired, (correlation_id(b), b.partition, last)))
        p = _fail(p, i, config)
        if config.enable_idempotence and (_in_retry(b) or not in_retry_only):
            p = _mark_unresolved(p, b)
        return Outcome(p, failed=b.records, events=("batch_expired",))
    return None


def resolve_sequence(p: Producer, partition: int, by_last_ack: bool = True) -> Outcome | None:
    """``maybeResolveSequences`` for one partition with an unresolved sequence.

    Only once no sequenced batch of the partition is outstanding: if the last
    acknowledged sequence is the one before the next sequence, a later batch
    succeeded, so the expired one was written -- resolved.  Otherwise request
    an epoch bump that restarts the partition's sequences.  ``by_last_ack``
    off (weakened variant ``bump_on_every_expired_batch``): never resolved, always bumped.
    """
    entry = p.partitions[partition]
    if not entry.unresolved or sequenced_outstanding(p, partition):
        return None
    if by_last_ack and entry.next_sequence == entry.last_acked_sequence + 1:  # isNextSequence (no ack: -1)
        entry = entry._replace(unresolved=False, unresolved_sequence=-1)
        p = p._replace(partitions=_set(p.partitions, partition, entry))
        return Outcome(p, events=("sequence_resolved",))
    entry = entry._replace(unresolved=False, unresolved_sequence=-1, rewrite=True)
    p = p._replace(partitions=_set(p.partitions, partition, entry), epoch_bump_required=True)
    return Outcome(p, events=("epoch_bump_requested",))


def can_bump_epoch(p: Producer) -> bool:
    """Whether the KIP-360 bump can be made now: it was requested and nothing is in flight.

    ``Sender.maybeTransitionToErrorState``/``TransactionManager.bumpIdempotentEpochAndResetIdIfNeeded`` run
    once the partitions' in-flight batches are done (the model's simplification: none in flight at all).
    """
    return p.epoch_bump_required and p.in_flight == 0


def bump_epoch(p: Producer, max_epoch: int) -> Producer | None:
    """KIP-360 epoch bump (``bumpIdempotentProducerEpoch``) once nothing is in flight.

    The sequenced batches of the partitions that asked for it are re-stamped
    from sequence 0 at the new epoch.  At the epoch limit the producer forgets
    its id and must InitProducerId again; batches are then stamped afresh.
    """
    if not can_bump_epoch(p):  # no branch: replay/minimise only (actions() offers it under the same test)
        return None
    if p.producer_epoch + 1 > max_epoch:
        # The next producer id restarts epochs and sequences at 0, so a late response to a request of the old id
        # (a batch that expired in flight) may carry the (partition, epoch, sequence) of a batch of the new one;
        # the client completes a response's own request only (:func:`answers`, by correlation id), so it is
        # ignored, as Kafka ignores it (found by issue 23's reach_idempotence_epoch_exhaustion when the model
        # matched responses by their stamp)
        pid, epoch = -1, -1
    else:
        pid, epoch = p.producer_id, p.producer_epoch + 1
    batches = list(p.batches)
    entries = list(p.partitions)
    for q, entry in enumerate(entries):
        if not entry.rewrite and pid >= 0:
            continue
        seq = 0
        for i, b in enumerate(batches):
            if b.partition == q and b.has_sequence:
                if pid >= 0:
                    batches[i] = b._replace(producer_epoch=epoch, base_sequence=seq)
                    seq += len(b.records)
                else:
                    batches[i] = b._replace(producer_epoch=-1, base_sequence=-1)
        entries[q] = TxnPartitionEntry(producer_epoch=epoch, next_sequence=seq)
    return p._replace(
        producer_id=pid,
        producer_epoch=epoch,
        partitions=tuple(entries),
        batches=tuple(batches),
        epoch_bump_required=False,
    )


def restart(p: Producer) -> Producer:
    """The application restarts: a new instance, new connection, no producer id."""
    return new_producer(len(p.partitions), connection=p.connection + 1, next_record=p.next_record)


# The Sender's drain, asked of every producer and partition in every state, cached by its arguments' values
# (model/memo.py); rebound here, after every definition, so that the lines above keep their positions (mutant ids
# hash positions).
from keos.model.memo import memoised  # noqa: E402  (here, not at the top: see above)

drain = memoised(drain)  # no mutate: a cache of a pure function
