"""A data partition's leader: the log, the high watermark and produce handling.

This abstracts Kafka's ``UnifiedLog`` plus the replication it relies on:

* The log is a sequence of record batches (:class:`LogEntry`); the batch index
  is its offset (each modelled batch holds one record, so batch and record
  offsets coincide).
* ``acks=all``: the leader answers only once the batch is replicated to the
  in-sync replicas.  By default append and high-watermark advance are one
  step; with ``deferred`` (a scenario's ``separate_replication``) the append
  leaves the high watermark where it was and parks the response in the produce
  purgatory (:attr:`PartitionLeader.pending`, Kafka's ``DelayedProduce``),
  released by the separate ``ReplicatePartition`` step once the high watermark
  passes the batch -- so a leader can fail over with batches appended but not
  replicated, and a retry can reach it before its original is acknowledged.
  ``acks=1``: the leader answers after its local append; ``ReplicatePartition``
  advances the high watermark.  ``acks=0``: no answer at all; the followers
  still replicate the batch, so ``ReplicatePartition`` advances the high
  watermark as for acks=1 (the high watermark follows the followers' fetches,
  whatever acks the producer asked for: ``Partition.maybeIncrementLeaderHW``).
* A leader restart (crash and election of an in-sync follower) keeps the log
  up to the high watermark and loses the rest; the follower's producer state
  is rebuilt from the log it kept (``ProducerStateManager.truncateAndReload``
  rebuilds from snapshots and the log; replicas apply batches without
  sequence checks).
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.codec import record
from keos.model.log.producer_state import ProducerStateEntry, append_batch, next_sequence, validate_batch
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse
from keos.model.variants import ProtocolFlags

__all__ = [
    "CONTROL_ABORT",
    "CONTROL_COMMIT",
    "NO_VERIFICATION_GUARD",
    "AbortedTxn",
    "LogEntry",
    "PartitionLeader",
    "VerificationStateEntry",
    "append_verified_txn_batch",
    "can_replicate",
    "clear_transaction_verification",
    "collect_aborted_transactions",
    "delete_records",
    "entry_after_data_batch",
    "handle_produce",
    "handle_txn_produce",
    "last_stable_offset",
    "lso_after_completion",
    "move_leader",
    "replicate",
    "restart_leader",
    "start_transaction_verification",
    "txn_produce_needs_verification",
]

#: ``ControlRecordType`` of a transaction marker's control batch.
CONTROL_COMMIT = "COMMIT"
CONTROL_ABORT = "ABORT"

#: The producer id carried by batches of a non-idempotent producer.
NO_PRODUCER_ID = -1

#: ``VerificationGuard.SENTINEL``: no verification state entry (it never verifies).
NO_VERIFICATION_GUARD = -1


@record
class LogEntry(NamedTuple):
    """A record batch in the log.

    A control batch (``control`` COMMIT or ABORT) carries the ``EndTransactionMarker``'s ``coordinator_epoch``, which
    a replica that replays the log restores into its producer state (``ProducerAppendInfo.appendEndTxnMarker``).
    """

    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: tuple[int, ...]
    transactional: bool = False
    control: str = ""
    coordinator_epoch: int = -1


@record
class AbortedTxn(NamedTuple):
    """An entry of the aborted-transaction index (``AbortedTxn``, ``LogSegment.updateTxnIndex``).

    ``last_stable_offset``: the partition's last stable offset once the transaction completed
    (``ProducerStateManager.lastStableOffset(completedTxn)``, :func:`lso_after_completion`), which a fetch's
    index scan stops at (:func:`collect_aborted_transactions`); -1 in entries built without it.
    """

    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int = -1


@record
class VerificationStateEntry(NamedTuple):
    """``VerificationStateEntry.java``: a verification started for ``producer_id`` on this partition.

    ``guard`` (the ``VerificationGuard``), ``epoch`` (the highest epoch a verification of the entry started
    with: ``maybeUpdateLowestSequenceAndEpoch``) and ``supports_epoch_bump`` (the batch came from a TV2
    producer, produce v12+).  The lowest sequence and the timestamp (expiry) are not modelled.
    """

    producer_id: int
    guard: int
    epoch: int
    supports_epoch_bump: bool


@record
class PartitionLeader(NamedTuple):
    """The leader replica of one partition.

    ``aborted`` is the aborted-transaction index (``UnifiedLog.lastStableOffset``); it stays empty in the
    idempotence model.  ``pending`` is the produce purgatory (``DelayedProduce``): acks=all responses
    waiting for the high watermark to pass their batch (only with separate replication).

    ``verifying`` is ``ProducerStateManager.verificationStates`` (KIP-890 part 1, read only with the
    verification round trip, :func:`start_transaction_verification`): one :class:`VerificationStateEntry` per
    producer id, whose guard a verification in flight will present at its append.  A guard is an object
    identity in Kafka; here the number ``guards_issued`` had reached when it was created, so a guard created
    after another is never equal to it (the ABA the guard exists for).

    ``log_start_offset`` is ``UnifiedLog.logStartOffset``: the batches below it were deleted (DeleteRecords,
    retention; :func:`delete_records`).  The model keeps them in ``log`` -- the history the properties judge --
    and no replica or request reads below it.
    """

    log: tuple[LogEntry, ...] = ()
    high_watermark: int = 0
    producers: tuple[ProducerStateEntry, ...] = ()
    leader_epoch: int = 0
    aborted: tuple[AbortedTxn, ...] = ()
    pending: tuple[ProduceResponse, ...] = ()
    verifying: tuple[VerificationStateEntry, ...] = ()
    guards_issued: int = 0
    log_start_offset: int = 0

    def verification_entry(self, producer_id: int) -> VerificationStateEntry | None:
        """``ProducerStateManager.verificationStateEntry``: the producer id's entry, if a verification started."""
        for v in self.verifying:
            if v.producer_id == producer_id:
                return v
        return None

    def verification_guard(self, producer_id: int) -> int:
        """``UnifiedLog.verificationGuard``: the guard of the producer id's verification entry, else the sentinel."""
        v = self.verification_entry(producer_id)
        return NO_VERIFICATION_GUARD if v is None else v.guard

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
    leader: PartitionLeader, request: ProduceRequest, acks: str, flags: ProtocolFlags, deferred: bool = False
) -> tuple[PartitionLeader, ProduceResponse | None, tuple[str, ...]]:
    """Validate and append one batch; return the leader, the response (``None``: none yet) and events.

    ``deferred`` (acks=all with separate replication): a batch that was appended, or recognised as a
    duplicate of one the high watermark has not passed, is answered only when :func:`replicate`
    moves the high watermark past it (``ReplicaManager.appendRecords`` parks a ``DelayedProduce``
    whose required offset is the batch's last offset + 1; a duplicate's ``LogAppendInfo`` carries the
    original batch's offsets, so its retry waits for the same replication).  Errors are answered at once.
    """
    count = len(request.records)
    events: tuple[str, ...] = ()
    if request.producer_id == NO_PRODUCER_ID:
        error, dup_offset = Errors.NONE, -1
    else:
        last_seq = next_sequence(request.base_sequence, count - 1, flags.sequence_space)
        error, dup_offset = validate_batch(
            leader.entry(request.producer_id),
            request.producer_epoch,
            request.base_sequence,
            last_seq,
            flags,
            len(leader.log),
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
        hw = len(log) if acks == "all" and not deferred else leader.high_watermark
        leader = leader._replace(log=log, high_watermark=hw, producers=producers)
        events = ("append",)
    else:
        events = (f"error:{error}",)
    if acks == "0":
        return leader, None, events
    response = _produce_response(request, error, offset)
    if deferred and offset >= leader.high_watermark and flags.acks_all_waits_for_replication:
        return leader._replace(pending=(*leader.pending, response)), None, (*events, "awaiting_replication")
    return leader, response, events


def _produce_response(request: ProduceRequest, error: str, offset: int) -> ProduceResponse:
    """The leader's answer to ``request``: ``error`` and the batch's base offset (-1: none)."""
    return ProduceResponse(
        request.producer,
        request.connection,
        request.partition,
        request.producer_epoch,
        request.base_sequence,
        error,
        offset,
        request.correlation_id,
    )


def can_replicate(leader: PartitionLeader) -> bool:
    """Whether the followers have something to fetch: the high watermark lags the log end.

    After an acks=1 or acks=0 append, or an acks=all one with separate replication
    (``Partition.maybeIncrementLeaderHW``); the one test under which the step is offered and taken.
    """
    return leader.high_watermark < len(leader.log)


def replicate(leader: PartitionLeader) -> tuple[PartitionLeader, tuple[ProduceResponse, ...]] | None:
    """Followers catch up: the high watermark moves to the log end; the purgatory's responses go out.

    Only with acks=1 or separate replication (otherwise the high watermark is always the log end).
    Every parked response's batch is below the new high watermark, so all of them are released
    (``DelayedProduce.tryComplete`` once ``highWatermark >= requiredOffset``).
    """
    if not can_replicate(leader):  # no branch: replay/minimise only (actions() offers it under the same test)
        return None
    return leader._replace(high_watermark=len(leader.log), pending=()), leader.pending


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
    """A new leader takes over: the log is cut to the high watermark, the purgatory is emptied.

    The in-sync follower that is elected has the log up to the high watermark (it may have fetched
    more; the model takes the follower that did not), and builds its producer state from that log.
    Requests parked in the old leader's purgatory are never answered (Kafka completes them with
    NOT_LEADER_OR_FOLLOWER; either way the client retries them on the new leader).
    """
    log = leader.log[: leader.high_watermark]
    rebuilt = rebuild_producer_state(log, flags) if flags.truncation_rebuilds_producer_state else leader.producers
    return PartitionLeader(
        log=log,
        high_watermark=len(log),
        producers=rebuilt,
        leader_epoch=leader.leader_epoch + 1,
        guards_issued=leader.guards_issued,
        log_start_offset=leader.log_start_offset,
    )


def move_leader(
    leader: PartitionLeader, flags: ProtocolFlags, caught_up: bool = False
) -> tuple[PartitionLeader, tuple[ProduceResponse, ...]]:
    """Leadership moves to an in-sync follower while the old leader keeps running: its clients stay connected.

    A preferred-leader election, a reassignment or a controlled shutdown (Kafka trunk @1eb7644349cb):

    * the new leader (``Partition.makeLeader``) holds the log it fetched -- at least up to the high watermark;
      ``caught_up``: it had fetched the whole log (a follower fetches past the high watermark, which only advances
      once every in-sync replica has the batch), else only up to the high watermark -- and its producer state is
      what it built replicating that log (origin REPLICATION: :func:`rebuild_producer_state`).  The high watermark
      does not move: the caught-up leader's tail is committed by the next :func:`replicate`.
    * the old leader becomes a follower (``ReplicaManager.makeFollowers`` / ``applyLocalFollowersDelta``) and
      calls ``completeDelayedOperationsWhenNotPartitionLeader``: every ``DelayedProduce`` parked for the partition
      is tried again and, the broker no longer leading it (``Partition.checkEnoughReplicasReachOffset``: no
      local leader log), completes with NOT_LEADER_OR_FOLLOWER (``DelayedProduce.tryComplete``).  Those answers
      are returned; the client retries them (KAFKA-2960: before its fix the purgatory kept them, and a broker
      that led the partition again later answered them NONE once its high watermark passed their offsets, which
      its new log held other batches at -- acknowledged records lost).
    * responses already on the wire and requests still travelling stay on their connections: a request reaches
      the new leader (the old one would answer NOT_LEADER_OR_FOLLOWER and the client would resend it there after
      a metadata refresh: the same append, one round trip later).

    ``flags.leader_move_completes_purgatory`` off (weakened variant ``purgatory_survives_leader_move``, KAFKA-2960):
    the parked answers stay parked and are released by the next :func:`replicate` as NONE at their old offsets.
    """
    log = leader.log if caught_up else leader.log[: leader.high_watermark]
    moved = PartitionLeader(
        log=log,
        high_watermark=leader.high_watermark,
        producers=rebuild_producer_state(log, flags),
        leader_epoch=leader.leader_epoch + 1,
        guards_issued=leader.guards_issued,
        log_start_offset=leader.log_start_offset,
    )
    if not flags.leader_move_completes_purgatory:  # no branch: weakened variant purgatory_survives_leader_move
        return moved._replace(pending=leader.pending), ()
    answers = tuple(r._replace(error=Errors.NOT_LEADER_OR_FOLLOWER, base_offset=-1) for r in leader.pending)
    return moved, answers


def can_delete_records(leader: PartitionLeader) -> bool:
    """Whether the log start offset can move: it lies below the high watermark (DeleteRecords may not pass it)."""
    return leader.log_start_offset < leader.high_watermark


def delete_records(leader: PartitionLeader, flags: ProtocolFlags) -> tuple[PartitionLeader, tuple[str, ...]] | None:
    """The log start offset advances to the high watermark: a DeleteRecords request or retention removed the head.

    ``UnifiedLog.maybeIncrementLogStartOffset`` (apache/kafka trunk @1eb7644349cb, ``core/.../log/UnifiedLog.scala``)
    takes any offset up to the high watermark (``OffsetOutOfRangeException`` above it) -- from
    ``ReplicaManager.deleteRecords`` (the admin's DeleteRecords), from segment retention (time, size) or, on a
    follower, from the leader's log start offset in its fetch responses; the model takes the highest, the high
    watermark, which removes the most.  The producer state stays: ``ProducerStateManager.onLogStartOffsetIncremented``
    only drops unreplicated transactions and moves the map's offsets (``storage/.../internals/log/
    ProducerStateManager.java``).  Since KAFKA-7190 (PR #7388, Kafka 2.5, KIP-360) an entry outlives the batches it
    was built from and goes only by ``producer.id.expiration.ms``: a producer whose last batch was deleted still
    has its retry recognised as a duplicate.  ``flags.producer_state_survives_log_start_offset`` off (weakened
    variant ``no_kafka_7190_fix``): ``truncateHead`` as before 2.5 -- every producer whose last batch lies below the
    new log start offset is forgotten, idle or not.
    """
    if not can_delete_records(leader):  # no branch: replay/minimise only (actions() offers it under the same test)
        return None
    start = leader.high_watermark
    producers = leader.producers
    if not flags.producer_state_survives_log_start_offset:  # no branch: weakened variant no_kafka_7190_fix only
        producers = tuple(e for e in producers if not e.batches or e.batches[-1].offset >= start)
    return leader._replace(log_start_offset=start, producers=producers), ("log_start_offset_advanced",)


# -- transactions (``ProducerAppendInfo.java``, ``UnifiedLog.lastStableOffset``, ``VerificationStateEntry.java``) ---


def last_stable_offset(leader: PartitionLeader) -> int:
    """``UnifiedLog.lastStableOffset``: the first unstable offset if below the HW, else the HW."""
    first = [e.current_txn_first_offset for e in leader.producers if e.current_txn_first_offset >= 0]
    return min([*first, leader.high_watermark])


def lso_after_completion(
    producers: tuple[ProducerStateEntry, ...], producer_id: int, marker_offset: int, counts_open: bool = True
) -> int:
    """``ProducerStateManager.lastStableOffset(completedTxn)``: the last stable offset once ``producer_id``'s
    transaction completed with its marker at ``marker_offset`` -- the first offset of the earliest transaction
    still open on the partition of another producer id (``findNextIncompleteTxn``), else the marker's offset + 1.
    ``UnifiedLog.completeTransaction`` writes it into the transaction's :class:`AbortedTxn`, on the leader and on
    every replica (origin REPLICATION).  Kafka trunk ``1eb7644349cb``: ``storage/.../internals/log/
    ProducerStateManager.java``.  ``counts_open`` off (``ProtocolFlags.aborted_txn_lso_counts_open_transactions``,
    the weakened variant ``aborted_txn_lso_ignores_open_transactions``): always the marker's offset + 1."""
    if counts_open:
        others = [e.current_txn_first_offset for e in producers
                  if e.producer_id != producer_id and e.current_txn_first_offset >= 0]
        if others:
            return min(others)
    return marker_offset + 1


def collect_aborted_transactions(
    leader: PartitionLeader, fetch_offset: int, upper_bound_offset: int
) -> tuple[AbortedTxn, ...]:
    """The aborted transactions a read_committed fetch of ``[fetch_offset, upper_bound_offset)`` carries
    (``FetchResponse.abortedTransactions``): ``TransactionIndex.collectAbortedTxns`` scans the index in the order
    the ABORT markers were appended, takes every entry overlapping the range (``lastOffset >= fetchOffset`` and
    ``firstOffset < upperBoundOffset``) and stops after an entry whose ``lastStableOffset`` reaches the upper
    bound: every transaction aborted later was still open when that one completed, so it starts at or after
    that LSO, beyond the range (``UnifiedLog.collectAbortedTransactions`` walks the segments the same way).
    The upper bound is where the fetch's data ends (``LogSegment.fetchUpperBoundOffset``: the fetch size), at most
    the LSO.  Kafka trunk ``1eb7644349cb``: ``storage/.../internals/log/TransactionIndex.java``."""
    out: list[AbortedTxn] = []
    for a in leader.aborted:
        if a.last_offset >= fetch_offset and a.first_offset < upper_bound_offset:
            out.append(a)
        if a.last_stable_offset >= upper_bound_offset:
            break
    return tuple(out)


def _is_duplicate(leader: PartitionLeader, request: ProduceRequest, flags: ProtocolFlags) -> bool:
    last_seq = next_sequence(request.base_sequence, len(request.records) - 1, flags.sequence_space)
    entry = leader.entry(request.producer_id)
    error, dup = validate_batch(entry, request.producer_epoch, request.base_sequence, last_seq, flags, len(leader.log))
    return error == Errors.NONE and dup >= 0


def _has_open_txn(entry: ProducerStateEntry | None) -> bool:
    return entry is not None and entry.current_txn_first_offset >= 0


def txn_produce_needs_verification(leader: PartitionLeader, request: ProduceRequest, flags: ProtocolFlags) -> bool:
    """Whether the leader must ask the transaction coordinator before appending (``VerificationStateEntry.java``).

    Only for a transactional batch that would *open* a transaction on this
    partition, that is not a duplicate and not already stale (PR #20534: stale
    epochs are rejected first).  Under TV2 the same round trip adds the
    partition (produce v12).

    "Would open" is ``!UnifiedLog.hasOngoingTransaction(producerId,
    producerEpoch)``: since KAFKA-14563 (PR #17698, Kafka 4.0) a transaction
    open on the partition counts only if it has the batch's epoch.  Under TV2
    the epoch moves at every transaction end, so a batch of the next
    transaction (epoch e+1) that arrives before the marker of the previous one
    (epoch e) must be verified -- the coordinator, still in Prepare*, answers
    CONCURRENT_TRANSACTIONS and the batch is retried.  With
    ``flags.ongoing_txn_check_epoch`` off (Kafka 3.x's check on the producer
    id alone) the batch joins the open transaction of epoch e, the marker at
    epoch e+1 then finds the stored epoch already at e+1 and is rejected, and
    the transaction never completes.
    """
    if not request.transactional or not (flags.partition_verification or flags.transaction_version >= 2):
        return False
    entry = leader.entry(request.producer_id)
    if entry is not None and request.producer_epoch < entry.producer_epoch:
        return False
    if _has_ongoing_transaction(entry, request.producer_epoch, flags):
        return False
    return not _is_duplicate(leader, request, flags)


def _has_ongoing_transaction(entry: ProducerStateEntry | None, producer_epoch: int, flags: ProtocolFlags) -> bool:
    """``UnifiedLog.hasOngoingTransaction(producerId, producerEpoch)`` (Kafka 4.0; 3.x: producer id only)."""
    if not _has_open_txn(entry):
        return False
    assert entry is not None
    return entry.producer_epoch == producer_epoch or not flags.ongoing_txn_check_epoch


def _outside_open_txn(request: ProduceRequest, entry: ProducerStateEntry | None) -> bool:
    """A non-transactional batch of a producer id with a transaction open on the partition: INVALID_TXN_STATE.

    ``ProducerAppendInfo.appendDataBatch`` (trunk).  Every caller of :func:`handle_txn_produce` (transactions,
    Connect's producers, the adversary) sends transactional batches, so the model keeps the rule for fidelity only.
    """
    return not request.transactional and _has_open_txn(entry)


#: How a coordinator's verification refusal reaches the produce client (``ReplicaManager``, KIP-890); read only
#: for an error (a verified batch goes on to the append), any other error becomes INVALID_TXN_STATE.
VERIFICATION_TO_PRODUCE_ERROR = {
    Errors.TRANSACTION_ABORTABLE: Errors.TRANSACTION_ABORTABLE,
    Errors.INVALID_TXN_STATE: Errors.INVALID_TXN_STATE,
    Errors.PRODUCER_FENCED: Errors.INVALID_PRODUCER_EPOCH,
    Errors.INVALID_PRODUCER_ID_MAPPING: Errors.INVALID_TXN_STATE,
    Errors.CONCURRENT_TRANSACTIONS: Errors.NOT_ENOUGH_REPLICAS,
    Errors.COORDINATOR_NOT_AVAILABLE: Errors.NOT_ENOUGH_REPLICAS,
    Errors.COORDINATOR_LOAD_IN_PROGRESS: Errors.NOT_ENOUGH_REPLICAS,
    Errors.NOT_COORDINATOR: Errors.NOT_ENOUGH_REPLICAS,
    Errors.NETWORK_EXCEPTION: Errors.NOT_ENOUGH_REPLICAS,
}


def handle_txn_produce(
    leader: PartitionLeader, request: ProduceRequest, flags: ProtocolFlags, verification: str = Errors.NONE
) -> tuple[PartitionLeader, ProduceResponse, tuple[str, ...]]:
    """Validate and append a batch with the transactional checks (acks=all).

    Order (``ProducerAppendInfo.java``): duplicate -> stale epoch -> verification answer
    (``verification``, the coordinator's error for
    :func:`txn_produce_needs_verification`) -> sequence -> transaction mixing.
    The first transactional batch of a producer sets
    ``current_txn_first_offset``, which holds the LSO back until its marker.
    """
    pid = request.producer_id
    entry = leader.entry(pid)
    last_seq = next_sequence(request.base_sequence, len(request.records) - 1, flags.sequence_space)
    error, dup_offset = validate_batch(
        entry, request.producer_epoch, request.base_sequence, last_seq, flags, len(leader.log)
    )
    events: tuple[str, ...] = ()
    if not (error == Errors.NONE and dup_offset >= 0):
        if entry is not None and flags.check_epoch and request.producer_epoch < entry.producer_epoch:
            error = Errors.INVALID_PRODUCER_EPOCH
        elif verification != Errors.NONE:
            error = VERIFICATION_TO_PRODUCE_ERROR.get(verification, Errors.INVALID_TXN_STATE)
            events = ("verification_rejected",)
        elif error == Errors.NONE and _outside_open_txn(request, entry):  # unreachable: no caller sends such a batch
            error = Errors.INVALID_TXN_STATE
    offset = -1
    if error == Errors.NONE and dup_offset >= 0:
        offset, events = dup_offset, ("dedup",)
    elif error == Errors.NONE:
        offset = len(leader.log)
        batch = LogEntry(pid, request.producer_epoch, request.base_sequence, request.records, request.transactional)
        new = entry_after_data_batch(entry, batch, offset, flags)
        log = (*leader.log, batch)
        leader = leader._replace(log=log, high_watermark=len(log), producers=_put_entry(leader.producers, new))
        leader = clear_transaction_verification(leader, pid)
        events = (*events, "append")
        if request.transactional and (entry is None or entry.current_txn_first_offset < 0):
            events = (*events, "txn_opened_on_partition")
    else:
        events = (*events, f"error:{error}")
    response = _produce_response(request, error, offset)
    return leader, response, events


def entry_after_data_batch(
    entry: ProducerStateEntry | None, batch: LogEntry, offset: int, flags: ProtocolFlags
) -> ProducerStateEntry:
    """The producer id's entry after ``batch`` is appended at ``offset`` (``ProducerAppendInfo.appendDataBatch``).

    The same update runs on the leader after validation and on every replica that appends the batch while
    replicating it (origin REPLICATION: no validation), so a follower's entry is the leader's
    (:mod:`model.log.leader_election`).  The batch is added to the entry's cache (a new epoch clears it); the
    coordinator epoch of the last marker is kept; the first transactional batch of a transaction sets
    ``current_txn_first_offset``, which holds the LSO back until the transaction's marker.
    """
    last_seq = next_sequence(batch.base_sequence, len(batch.records) - 1, flags.sequence_space)
    new = append_batch(entry, batch.producer_id, batch.producer_epoch, batch.base_sequence, last_seq, offset, flags)
    first = offset
    if entry is not None:
        first = entry.current_txn_first_offset if entry.current_txn_first_offset >= 0 else offset
        new = new._replace(coordinator_epoch=entry.coordinator_epoch)
    if batch.transactional:  # no branch: every transactional caller sends transactional batches
        new = new._replace(current_txn_first_offset=first)
    return new


# -- the verification round trip (``ReplicaManager.handleProduceAppend``, ``UnifiedLog``, KIP-890 part 1) ----------


def start_transaction_verification(
    leader: PartitionLeader, producer_id: int, epoch: int, supports_epoch_bump: bool, fresh: bool = True
) -> tuple[PartitionLeader, int]:
    """``UnifiedLog.maybeStartTransactionVerification`` for a batch that needs it: the leader and the guard.

    ``ProducerStateManager.maybeCreateVerificationStateEntry`` is a ``computeIfAbsent``: a second batch of the
    producer id verified while the first is still in flight (a retry after a request timeout) gets the same
    guard.  The entry's lowest-sequence bookkeeping (``maybeUpdateLowestSequenceAndEpoch``, against the
    OutOfOrderSequence loop of KAFKA-15212) is not modelled: the model's producers have one request in flight.
    ``fresh`` off (``ProtocolFlags.verification_guard_fresh``, weakened variant ``verification_guard_reused``): the
    count of guards issued does not advance, so the next entry gets the guard a cleared entry's verification may
    still present.
    Kafka trunk ``1eb7644349cb``: ``core/src/main/scala/kafka/log/UnifiedLog.scala``,
    ``storage/.../internals/log/ProducerStateManager.java``, ``VerificationStateEntry.java``.
    """
    old = leader.verification_entry(producer_id)
    if old is not None:
        # maybeUpdateLowestSequenceAndEpoch: a higher epoch replaces the entry's
        if epoch > old.epoch:  # no branch: default gate; reach txn_verification_tv2_stale_entry_after_bump takes it
            leader = _put_verification(leader, old._replace(epoch=epoch))
        return leader, old.guard
    guard = leader.guards_issued
    entry = VerificationStateEntry(producer_id, guard, epoch, supports_epoch_bump)
    leader = leader._replace(guards_issued=guard + 1)
    if not fresh:  # no branch: weakened variant verification_guard_reused only
        leader = leader._replace(guards_issued=guard)
    return _put_verification(leader, entry), guard


def _put_verification(leader: PartitionLeader, entry: VerificationStateEntry) -> PartitionLeader:
    rest = tuple(v for v in leader.verifying if v.producer_id != entry.producer_id)
    return leader._replace(verifying=tuple(sorted((*rest, entry))))


def clear_transaction_verification(leader: PartitionLeader, producer_id: int) -> PartitionLeader:
    """``ProducerStateManager.clearVerificationStateEntry``: a transactional batch of the producer id -- data or
    a marker -- was appended (``UnifiedLog.updateProducers``): the transaction has a first offset or is over."""
    if not leader.verifying:
        return leader
    return leader._replace(verifying=tuple(v for v in leader.verifying if v.producer_id != producer_id))


def _missing_required_verification(
    leader: PartitionLeader, request: ProduceRequest, guard: int, flags: ProtocolFlags
) -> bool:
    """``UnifiedLog.analyzeAndValidateProducerState``: a transactional batch with no ongoing transaction of its
    producer id whose request's guard is not the producer id's current one (``batchMissingRequiredVerification``,
    ``VerificationGuard.verify``: the sentinel never verifies).  The verification answered for a transaction the
    partition no longer waits for: a marker ended it (or a new one was started) meanwhile."""
    if not (  # no branch: taken only under the weakened variant verification_append_ignores_guard
        request.transactional and flags.verification_guard_checked
    ):
        return False
    if _has_ongoing_transaction(  # no branch: one request in flight per producer: nothing opens it meanwhile
        leader.entry(request.producer_id), request.producer_epoch, flags
    ):
        return False
    return guard == NO_VERIFICATION_GUARD or leader.verification_guard(request.producer_id) != guard


def append_verified_txn_batch(
    leader: PartitionLeader,
    request: ProduceRequest,
    flags: ProtocolFlags,
    verification: str,
    guard: int,
    leader_epoch: int | None = None,
) -> tuple[PartitionLeader, ProduceResponse, tuple[str, ...]]:
    """The verification's callback: the coordinator answered ``verification`` for a batch that presented ``guard``.

    ``ReplicaManager.handleProduceAppend``'s ``postVerificationCallback`` answers a refusal at once, translated
    (:data:`VERIFICATION_TO_PRODUCE_ERROR`), without touching the log; a verified batch goes to
    ``appendRecords`` with its guard, where ``analyzeAndValidateProducerState`` answers a duplicate first, then
    refuses with INVALID_TXN_STATE a batch whose guard is no longer the partition's
    (:func:`_missing_required_verification`) -- after the stale-epoch check (PR #20534, 2025: a stale producer
    gets the recoverable INVALID_PRODUCER_EPOCH, not the fatal INVALID_TXN_STATE; Kafka trunk ``1eb7644349cb``
    checked the guard first) -- and :func:`handle_txn_produce` does the rest.  Kafka trunk ``1eb7644349cb``:
    ``core/src/main/scala/kafka/server/ReplicaManager.scala``, ``core/src/main/scala/kafka/log/UnifiedLog.scala``.

    ``leader_epoch``: the leader epoch of the replica that started the verification.  If leadership moved since
    (:mod:`model.log.leader_election`), the callback runs on a broker that no longer leads the partition:
    ``Partition.appendRecordsToLeader`` answers NOT_LEADER_OR_FOLLOWER and the client retries on the new leader.
    """
    def refuse(error: str, event: str) -> tuple[PartitionLeader, ProduceResponse, tuple[str, ...]]:
        return leader, _produce_response(request, error, -1), (event, f"error:{error}")

    if verification != Errors.NONE:
        error = VERIFICATION_TO_PRODUCE_ERROR.get(verification, Errors.INVALID_TXN_STATE)
        return refuse(error, "verification_rejected")
    if leader_epoch is not None and leader_epoch != leader.leader_epoch:
        return refuse(Errors.NOT_LEADER_OR_FOLLOWER, "verification_leader_moved")
    entry = leader.entry(request.producer_id)
    stale = entry is not None and flags.check_epoch and request.producer_epoch < entry.producer_epoch
    if not (stale or _is_duplicate(leader, request, flags)) and _missing_required_verification(
        leader, request, guard, flags
    ):
        return refuse(Errors.INVALID_TXN_STATE, "verification_guard_mismatch")
    return handle_txn_produce(leader, request, flags)


# The transactional append and its verification guard, asked on every produce a search delivers, cached by their
# arguments' values (the leader, the request), the variant's flags by identity (model/memo.py); rebound here, after
# every definition, so that the lines above keep their positions (mutant ids hash positions).
from keos.model.memo import memoised  # noqa: E402  (here, not at the top: see above)

handle_txn_produce = memoised(handle_txn_produce, identity=(2,))  # no mutate: a cache of a pure function
txn_produce_needs_verification = memoised(txn_produce_needs_verification, identity=(2,))  # no mutate: a cache
