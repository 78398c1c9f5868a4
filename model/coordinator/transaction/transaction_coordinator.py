"""The transaction coordinator: ``TransactionMetadata`` and its request handlers.

KIP-98 §6-8; ``TransactionCoordinator.scala``, ``TransactionMetadata.scala``/``.java``,
``TransactionStateManager.scala`` (apache/kafka trunk ``1eb7644349cb``, 2024-10, and the 4.0 changes cited
where they apply).  For every ``transactional.id`` the coordinator keeps a :class:`TransactionMetadata`.
Every change is a *two-phase transition*: the handler checks the request under the metadata's lock and
prepares a target (``prepareTransitionTo`` sets ``pendingState``), ``TransactionStateManager.
appendTransactionToLog`` appends the target to ``__transaction_state`` (acks=-1), and only in the append's
callback does the cache change (``completeTransitionTo``, then the request's response) -- or, when the append
fails, the pending state is reset and the client gets the append's error (``COORDINATOR_NOT_AVAILABLE``;
KAFKA-5351).  While a transition is pending every other handler answers ``CONCURRENT_TRANSACTIONS``, the
timeout abort and the id expiry skip the entry, and ``prepareTransitionTo`` itself throws
``IllegalStateException`` if asked to prepare a second transition (the model answers UNKNOWN_SERVER_ERROR and
reports an ``illegal:`` event).  After PrepareCommit/PrepareAbort is logged the EndTxn callback calls
``prepareComplete``: the entry stays in Prepare* with ``pendingState`` CompleteCommit/CompleteAbort while its
markers are written (``TransactionMarkerChannelManager``), then CompleteCommit/CompleteAbort is appended in
turn; a failed complete append is retried with the pending state kept (KAFKA-5416).  On the fence path a
failed append sets ``hasFailedEpochFence`` (KAFKA-9666).

Each handler takes ``append_ok``:

* ``True`` / ``False``: prepare, append and callback in the handler's own step, the append succeeding or
  failing (the atomic granularity; ``AppendFailure`` is then a request delivered with a failing append);
* ``None`` (:data:`APPEND_IN_FLIGHT`): the handler only prepares -- the returned metadata carries the
  ``pending_state``, :attr:`Outcome.transit` the target to append -- and the system finishes the transition
  in later steps with :func:`complete_transit` (the append's success callback) or :func:`abort_transit`
  (its failure callback).  A scenario chooses this granularity with ``pending_transitions = true``
  (:mod:`model.systems.transactions`).

Handlers are pure functions of the current metadata (``None`` = no entry for the id) and the request; each
returns an :class:`Outcome`: the new cache entry, the error code for the client, the (pid, epoch) to return,
the value written to the log (if any) and events (``txn:Ongoing->PrepareCommit``,
``error:CONCURRENT_TRANSACTIONS``, ``fence``).  The legality of every transition is read from
:data:`model.coordinator.transaction.transaction_state.VALID_PREVIOUS_STATES`.

Unreachable by design (each guard is marked, with its reason): no entry is ever stored in Dead (the expiry's
callback removes it from the cache) or PrepareEpochFence (a pending state only), so the handlers'
fall-through for those states (Kafka's IllegalStateException, UNKNOWN_SERVER_ERROR here) is marked
unreachable.

Simplifications: time is not modelled (the timeout abort and id expiry are actions the environment takes
while their preconditions hold); the transaction timeout is fixed, so INVALID_TRANSACTION_TIMEOUT never
arises.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.codec import record
from keos.model.coordinator.transaction.transaction_log import TransactionLogValue
from keos.model.coordinator.transaction.transaction_state import (
    EXPIRATION_ALLOWED,
    TransactionState,
    is_valid_transition,
)
from keos.model.log.txn_markers import MarkerRules, marker_rules
from keos.model.protocol.errors import Errors

__all__ = [
    "APPEND_IN_FLIGHT",
    "MARKER_RETRIABLE_ERRORS",
    "SHORT_MAX_VALUE",
    "CoordinatorConfig",
    "Outcome",
    "TransactionMetadata",
    "TxnLogAppend",
    "abort_transit",
    "append_error_answer",
    "complete_target",
    "complete_transaction",
    "complete_transit",
    "coordinator_config",
    "end_transaction",
    "end_txn_answer",
    "expire_transactional_id",
    "from_log_value",
    "handle_add_offsets",
    "handle_add_partitions",
    "handle_end_txn",
    "handle_init_producer_id",
    "handle_marker_response",
    "handle_verify_partition",
    "is_epoch_exhausted",
    "prepare_complete",
    "timeout_abort",
]

S = TransactionState
PREPARE = (S.PREPARE_COMMIT, S.PREPARE_ABORT)
COMPLETE = (S.COMPLETE_COMMIT, S.COMPLETE_ABORT)

#: Partition index of a consumer group's ``__consumer_offsets`` partition (AddOffsetsToTxn).
OFFSETS_PARTITION_BASE = 1000

#: ``Short.MAX_VALUE``: the producer epoch is a 16-bit field (``RecordBatch``), the default epoch limit.
SHORT_MAX_VALUE = 32767

#: ``append_ok`` of a handler whose append is left in flight: it only prepares the transition.
APPEND_IN_FLIGHT = None


@record
class TransactionMetadata(NamedTuple):
    """The coordinator's cache entry for one transactional id (``TransactionMetadata.java``).

    ``partitions`` is ``topicPartitions``: in Prepare* it shrinks as markers
    complete (``TransactionMarkerRequestCompletionHandler`` removes each
    partition), the log record keeps the full set.  ``txn_started`` stands for
    ``txnStartTimestamp != -1``.
    """

    transactional_id: int
    producer_id: int
    producer_epoch: int = -1
    last_producer_epoch: int = -1
    prev_producer_id: int = -1
    next_producer_id: int = -1
    state: str = S.EMPTY
    partitions: tuple[int, ...] = ()
    pending_state: str = ""
    has_failed_epoch_fence: bool = False
    client_tv: int = 0
    txn_started: bool = False


class CoordinatorConfig(NamedTuple):
    """Broker settings the handlers read.

    No field has a default: every system builds its configuration from its protocol variant's flags with
    :func:`coordinator_config`, so Kafka's behaviour is stated once (``model.variants.Flags``).
    """

    transaction_version: int
    max_producer_epoch: int
    timeout_abort_bumps_epoch: bool
    failed_fence_keeps_bump: bool
    concurrent_before_epoch_check: bool
    commit_retry_after_abort_fenced: bool
    tv2_empty_abort_in_table: bool
    single_fence_bump: bool
    empty_abort_rotates_producer_id: bool
    init_pid_retry_by_last_epoch: bool
    append_failure_resets_pending: bool
    timeout_abort_skips_pending: bool
    end_txn_answers_completed_ids: bool
    fence_rotates_exhausted_producer_id: bool
    transit_records_previous_producer_id: bool
    #: the partition leaders' marker rules (the coordinator's markers land under them; Connect's cluster writes
    #: its markers itself)
    markers: MarkerRules


def coordinator_config(flags: Any, max_producer_epoch: int) -> CoordinatorConfig:
    """The coordinator's settings under a protocol variant's ``flags`` (``model.variants.Flags``)."""
    return CoordinatorConfig(
        flags.transaction_version,
        max_producer_epoch,
        flags.timeout_abort_bumps_epoch,
        flags.failed_fence_keeps_bump,
        flags.end_txn_concurrent_in_prepare,
        flags.commit_retry_after_abort_fenced,
        flags.tv2_empty_abort_in_table,
        flags.single_fence_bump,
        flags.empty_abort_rotates_producer_id,
        flags.init_pid_retry_by_last_epoch,
        flags.append_failure_resets_pending,
        flags.timeout_abort_skips_pending,
        flags.end_txn_answers_completed_ids,
        flags.fence_rotates_exhausted_producer_id,
        flags.transit_records_previous_producer_id,
        marker_rules(flags),
    )


class Outcome(NamedTuple):
    """A handler's result.

    ``transit``: with the append in flight (:data:`APPEND_IN_FLIGHT`), the prepared target
    (``TxnTransitMetadata``) the system appends; ``metadata`` is then the cache entry with its
    ``pending_state`` set, and the response waits for the append's callback.
    """

    metadata: TransactionMetadata | None
    error: str
    producer_id: int = -1
    producer_epoch: int = -1
    written: TransactionLogValue | None = None
    wrote: bool = False
    used_fresh_pid: bool = False
    events: tuple[str, ...] = ()
    transit: TransactionMetadata | None = None


@record
class TxnLogAppend(NamedTuple):
    """An append to ``__transaction_state`` in flight and the callback that runs when it completes.

    ``replicaManager.appendRecords`` with acks=-1 answers once the record is replicated (or failed);
    ``TransactionStateManager.appendTransactionToLog``'s ``updateCacheCallback`` then completes or aborts
    the pending transition and calls the request's own callback.  ``origin`` says which:

    * ``client``: a client's InitProducerId / AddPartitionsToTxn / AddOffsetsToTxn / EndTxn (``request``,
      answered to ``reply_to``; an EndTxn's callback is ``sendTxnMarkersCallback``);
    * ``fence``: an epoch fence (``prepareFenceProducerEpoch`` then the internal abort) that fences
      ``fenced_epoch`` -- of a fencing InitProducerId (``request``, answered CONCURRENT_TRANSACTIONS) or of
      the timeout abort (no request);
    * ``timeout``: the timeout abort without an epoch bump (before the KAFKA-6119 fix);
    * ``complete``: CompleteCommit/CompleteAbort once every marker is written (``tryAppendToLog``; a
      failure re-enqueues it, ``txnLogAppendRetryQueue``);
    * ``expire``: the tombstone of an expired transactional id (``writeTombstonesForExpiredTransactionalIds``).

    ``replicated``: a deposed coordinator's append whose record reached the new ``__transaction_state`` leader
    before the leadership moved (``CoordinatorFailoverReplicated``): the new instance loaded it, and the old
    instance's callback gets NONE from the leader but fails the coordinator-epoch check (NOT_COORDINATOR).
    """

    transactional_id: int
    origin: str
    transit: TransactionMetadata
    request: Any = None
    reply_to: str = ""
    fenced_epoch: int = -1
    replicated: bool = False


#: ``TransactionStateManager.appendTransactionToLog``'s ``updateCacheCallback`` (apache/kafka ``core/src/main/scala/
#: kafka/coordinator/transaction/TransactionStateManager.scala`` @1eb7644349cb): the ``__transaction_state`` leader's
#: append error -> the coordinator's answer.  Timeouts and a shrunk ISR are retriable where the coordinator stays
#: (COORDINATOR_NOT_AVAILABLE: the client retries, the complete append is re-enqueued, KAFKA-5416); a leader that
#: lost the partition or its log directory means the coordinator moves (NOT_COORDINATOR: the client looks the
#: coordinator up again); a record too large is a server bug (UNKNOWN_SERVER_ERROR); anything else passes as is.
APPEND_ERROR_ANSWERS: dict[str, str] = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.REQUEST_TIMED_OUT: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
    Errors.RECORD_LIST_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
}


#: The leader's error of ``AppendFailure``: the ISR shrank below min.insync.replicas (others: ``AppendError``).
APPEND_FAULT_ERROR = Errors.NOT_ENOUGH_REPLICAS


def append_error_answer(log_error: str) -> str:
    """The coordinator's answer to a failed ``__transaction_state`` append (:data:`APPEND_ERROR_ANSWERS`)."""
    return APPEND_ERROR_ANSWERS.get(log_error, log_error)


def is_epoch_exhausted(epoch: int, cfg: CoordinatorConfig) -> bool:
    """``TransactionMetadata.isEpochExhausted``: epoch >= Short.MAX_VALUE - 1 (``TransactionState.java``)."""
    return epoch >= cfg.max_producer_epoch - 1


def to_log_value(md: TransactionMetadata) -> TransactionLogValue:
    """What the log stores for ``md`` (``TransactionLog``)."""
    return TransactionLogValue(
        md.producer_id,
        md.producer_epoch,
        md.state,
        md.partitions,
        md.prev_producer_id,
        md.next_producer_id,
        md.client_tv,
        md.last_producer_epoch,
    )


def from_log_value(tid: int, v: TransactionLogValue, restore_last_epoch: bool = True) -> TransactionMetadata:
    """A cache entry rebuilt from the log (``TransactionStateManager.loadTransactionMetadata``).

    ``restore_last_epoch``: the record's lastProducerEpoch is read back (KAFKA-20357, PR #22096: a tagged field of
    the flexible records); off, the entry starts at NO_PRODUCER_EPOCH (-1) as before the fix and in v0 records.
    """
    return TransactionMetadata(
        tid,
        v.producer_id,
        v.producer_epoch,
        v.last_producer_epoch if restore_last_epoch else -1,
        v.prev_producer_id,
        v.next_producer_id,
        v.state,
        v.partitions,
        client_tv=v.client_tv,
        txn_started=v.state not in (S.EMPTY, *COMPLETE),
    )


def _fail(md: TransactionMetadata | None, error: str, extra: tuple[str, ...] = ()) -> Outcome:
    return Outcome(md, error, events=(*extra, f"error:{error}"))


def _concurrent(md: TransactionMetadata) -> Outcome:
    """CONCURRENT_TRANSACTIONS because a transition is pending (``pendingTransitionInProgress``)."""
    return _fail(md, Errors.CONCURRENT_TRANSACTIONS, ("pending_transition_in_progress",))


def _pending(md: TransactionMetadata) -> bool:
    """``pendingTransitionInProgress``, except the fence's own PrepareEpochFence (``endTransaction``)."""
    return md.pending_state not in ("", S.PREPARE_EPOCH_FENCE)


def _transit(
    md: TransactionMetadata,
    target: TransactionMetadata,
    append_ok: bool | None,
    events: tuple[str, ...] = (),
    cfg: CoordinatorConfig | None = None,
) -> Outcome:
    """``prepareTransitionTo``, the log append and, in the append's callback, ``completeTransitionTo``.

    With ``append_ok`` None the append is left in flight: the entry gets its ``pending_state`` and the
    outcome carries the target (:attr:`Outcome.transit`).  Every target records the entry's current producer id
    as its ``prevProducerId`` (:func:`_with_previous_id`).
    """
    if _pending(md):  # unreachable: every handler answers CONCURRENT_TRANSACTIONS for a pending transition first
        # prepareTransitionTo: "Preparing transaction state transition to X while it already a pending state"
        return _fail(md, Errors.UNKNOWN_SERVER_ERROR, (f"illegal:{md.state}->{target.state}:pending",))
    src = S.PREPARE_EPOCH_FENCE if md.pending_state == S.PREPARE_EPOCH_FENCE else md.state
    if (  # no branch: taken only under the weakened variant tv2_with_2024_transition_table
        not is_valid_transition(src, target.state) or (target.state != S.DEAD and target.producer_epoch < 0)
    ):
        return _fail(md._replace(pending_state=""), Errors.UNKNOWN_SERVER_ERROR, (f"illegal:{src}->{target.state}",))
    target = _with_previous_id(md, target, cfg)
    if append_ok is APPEND_IN_FLIGHT:
        prepared = md._replace(pending_state=target.state)
        return Outcome(prepared, Errors.NONE, events=(*events, f"pending:{target.state}"), transit=target)
    if not append_ok:
        failed = md._replace(pending_state="", has_failed_epoch_fence=md.pending_state == S.PREPARE_EPOCH_FENCE)
        error = append_error_answer(APPEND_FAULT_ERROR)
        return Outcome(failed, error, events=(*events, "txn_log_append_failed", f"error:{error}"))
    new = target._replace(pending_state="")
    evs = (*events, f"txn:{src}->{target.state}")
    return Outcome(new, Errors.NONE, new.producer_id, new.producer_epoch, to_log_value(new), True, events=evs)


def _with_previous_id(
    md: TransactionMetadata, target: TransactionMetadata, cfg: CoordinatorConfig | None
) -> TransactionMetadata:
    """The target with ``prevProducerId`` = the entry's producer id before the transition.

    ``TransactionMetadata.prepareTransitionTo`` builds every ``TxnTransitMetadata`` with the current
    ``producerId`` as its ``prevProducerId`` and ``completeTransitionTo`` copies every field of it into the entry
    (``TransactionMetadata.java`` @07b06d06, 2025; the Oct-2024 Scala class wrote it to the log the same way):
    after a bump, an AddPartitionsToTxn, an EndTxn or a completion ``prevProducerId`` is the entry's own id, and
    only a producer-id rotation (InitProducerId at an exhausted epoch, a TV2 completion at one) leaves the old id
    there -- until the next transition.  So ``handleInitProducerId``'s "expected id is the previous one at an
    exhausted epoch" case (``isValidProducerId``) serves a retry of the rotation only while the rotated entry is
    untouched.  ``cfg.transit_records_previous_producer_id`` off (weakened variant ``previous_producer_id_kept``):
    the entry keeps an older rotation's id, as the model did before session 20.
    """
    if cfg is not None and not cfg.transit_records_previous_producer_id:
        return target
    return target._replace(prev_producer_id=md.producer_id)


def complete_transit(md: TransactionMetadata | None, transit: TransactionMetadata, fence: bool = False) -> Outcome:
    """The append's success callback: ``completeTransitionTo`` (``TransactionStateManager.appendTransactionToLog``).

    The cache takes the appended target only if it is the pending one; otherwise Kafka's
    ``completeTransitionTo`` throws IllegalStateException ("completing transaction state transition while
    it does not have a pending state").  Dead is never completed: the expiry's callback removes the entry
    (``removeFromCacheCallback``).  A fence reports the chain Ongoing -> PrepareEpochFence -> PrepareAbort.
    """
    if md is None or md.pending_state != transit.state:  # unreachable: one append in flight per id, lost at failover
        held = "no entry" if md is None else md.pending_state or "nothing"
        return _fail(md, Errors.UNKNOWN_SERVER_ERROR, (f"illegal:complete:{transit.state}:{held}",))
    if transit.state == S.DEAD:
        return Outcome(None, Errors.NONE, wrote=True, events=(f"txn:{md.state}->{S.DEAD}", "transactional_id_expired"))
    new = transit._replace(pending_state="")
    chain: tuple[str, ...]
    if fence:
        chain = ("fence", f"txn:{md.state}->{S.PREPARE_EPOCH_FENCE}", f"txn:{S.PREPARE_EPOCH_FENCE}->{new.state}")
    else:
        chain = (f"txn:{md.state}->{new.state}",)
    return Outcome(new, Errors.NONE, new.producer_id, new.producer_epoch, to_log_value(new), True, events=chain)


def abort_transit(
    md: TransactionMetadata | None, transit: TransactionMetadata, cfg: CoordinatorConfig, fenced_epoch: int = -1
) -> TransactionMetadata | None:
    """The append's failure callback: reset the pending state (KAFKA-5351, PR #3184) and, for an epoch
    fence, set ``hasFailedEpochFence`` (KAFKA-9666: the bumped epoch stays in the cache).

    A failed CompleteCommit/CompleteAbort keeps its pending state and is re-enqueued
    (``retryOnError`` for COORDINATOR_NOT_AVAILABLE, KAFKA-5416, PR #3287): that is the caller's.  With
    ``cfg.append_failure_resets_pending`` off (a weakened rule: Kafka before KAFKA-5351) the pending state
    stays and every later request is answered CONCURRENT_TRANSACTIONS.  With ``cfg.failed_fence_keeps_bump``
    off the fence's bump is rolled back (see :func:`fence_and_abort`).
    """
    if md is None:  # unreachable: the entry is removed only by the expiry's own successful callback
        return None
    failed = md._replace(pending_state="") if cfg.append_failure_resets_pending else md
    tv2_fence = cfg.transaction_version >= 2 and cfg.single_fence_bump  # nothing cached: see _fence_tv2
    if fenced_epoch >= 0 and not (tv2_fence and cfg.failed_fence_keeps_bump):
        failed = failed._replace(has_failed_epoch_fence=True)
        if (  # no branch: taken only under the weakened variant failed_fence_rolls_back_epoch
            not cfg.failed_fence_keeps_bump
        ):
            failed = failed._replace(producer_epoch=fenced_epoch)
    return failed


# -- InitProducerId (``TransactionCoordinator.handleInitProducerId``) ----------------------------------------


def handle_init_producer_id(
    md: TransactionMetadata | None,
    tid: int,
    expected_pid: int,
    expected_epoch: int,
    fresh_pid: int,
    cfg: CoordinatorConfig,
    append_ok: bool | None = True,
) -> Outcome:
    """``TransactionCoordinator.handleInitProducerId`` for a transactional id.

    A new entry is created in the cache before the append (``putTransactionStateIfNotExists``) and stays
    there, at epoch -1, if the append fails.
    """
    used = False
    if md is None:
        md, used = TransactionMetadata(tid, fresh_pid), True
    out = _init_by_state(md, expected_pid, expected_epoch, fresh_pid if not used else -1, cfg, append_ok)
    return out._replace(used_fresh_pid=used or out.used_fresh_pid)


def _init_by_state(
    md: TransactionMetadata,
    expected_pid: int,
    expected_epoch: int,
    fresh_pid: int,
    cfg: CoordinatorConfig,
    append_ok: bool | None,
) -> Outcome:
    """``prepareInitProducerIdTransit``: the pending check comes first, before the producer id is validated."""
    if md.pending_state:
        return _concurrent(md)
    if expected_pid >= 0 and not (
        md.producer_epoch == -1
        or expected_pid == md.producer_id
        or (expected_pid == md.prev_producer_id and is_epoch_exhausted(expected_epoch, cfg))
    ):
        return _fail(md, Errors.PRODUCER_FENCED)
    if md.state in PREPARE:  # unreachable: a Prepare* entry always has CompleteX pending (prepareComplete), above
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    if md.state == S.ONGOING:
        out = fence_and_abort(md, cfg, append_ok, fresh_pid)
        if not out.wrote:  # the append's own error, as Kafka's callback returns it, or the append is in flight
            return out
        return out._replace(error=Errors.CONCURRENT_TRANSACTIONS, events=(*out.events, "error:CONCURRENT_TRANSACTIONS"))
    if md.state not in (S.EMPTY, *COMPLETE):  # unreachable: no Dead/PrepareEpochFence entry is stored
        return _fail(md, Errors.UNKNOWN_SERVER_ERROR)
    base = md._replace(state=S.EMPTY, partitions=(), txn_started=False, pending_state=S.EMPTY)
    if is_epoch_exhausted(md.producer_epoch, cfg) and (expected_epoch < 0 or expected_epoch == md.producer_epoch):
        if fresh_pid < 0:  # unreachable: only a new entry (epoch -1, never exhausted) comes without a fresh id
            return _fail(md, Errors.COORDINATOR_NOT_AVAILABLE)
        last = md.producer_epoch if expected_epoch >= 0 else -1
        target = base._replace(
            producer_id=fresh_pid, producer_epoch=0, prev_producer_id=md.producer_id, last_producer_epoch=last
        )
        # generateProducerId runs before the append: an append in flight has taken the id already
        out = _transit(md, target, append_ok, ("producer_id_rotated",), cfg)
        return out._replace(used_fresh_pid=out.wrote or out.transit is not None)
    if expected_epoch < 0:
        target = base._replace(producer_epoch=md.producer_epoch + 1, last_producer_epoch=-1)
    elif expected_epoch == md.producer_epoch or md.producer_epoch == -1:
        target = base._replace(producer_epoch=md.producer_epoch + 1, last_producer_epoch=md.producer_epoch)
    elif expected_epoch == md.last_producer_epoch and cfg.init_pid_retry_by_last_epoch:
        # KIP-360: a retry of a bump whose response was lost names the epoch it bumped from (lastProducerEpoch);
        # prepareIncrementProducerEpoch keeps (producerEpoch, lastProducerEpoch) but still transitions to Empty
        # through the log like any InitProducerId (TransactionMetadata.scala @1eb7644349cb)
        target = base._replace(last_producer_epoch=md.last_producer_epoch)
        return _transit(md, target, append_ok, ("init_pid_retry",), cfg)
    else:
        return _fail(md, Errors.PRODUCER_FENCED)
    return _transit(md, target, append_ok, ("epoch_bump",), cfg)


def fence_and_abort(
    md: TransactionMetadata, cfg: CoordinatorConfig, append_ok: bool | None, fresh_pid: int = -1
) -> Outcome:
    """``prepareFenceProducerEpoch`` then ``endTransaction(ABORT, isFromClient=false)`` (``TransactionCoordinator``).

    A failed append of the fence follows KAFKA-9666 (PR #8239; Kafka 2.5 to
    3.9, ``TransactionCoordinator.endTransaction`` with ``isEpochFence``): the
    bumped epoch is installed in the cached metadata *before* the append
    (``txnMetadata.producerEpoch = producerEpoch``, ``lastProducerEpoch = -1``)
    and stays there when the append fails; ``hasFailedEpochFence`` is set, so
    the next fence does not bump again and writes PrepareAbort at the epoch the
    cache already holds -- still one above the fenced producer's.  The fenced
    producer gets PRODUCER_FENCED from the coordinator meanwhile, and the
    epoch in the cache runs ahead of the log by exactly this one pending fence
    (a failover reloads the log's epoch and forgets the flag).

    With ``cfg.failed_fence_keeps_bump`` off (a weakened rule, not a Kafka
    release) the epoch is rolled back but the flag stays set: the next fence
    writes PrepareAbort at the *unchanged* epoch, its marker does not fence the
    zombie at the partition (TV2 rejects it), and the transaction hangs.

    With the append in flight the cache holds the bumped epoch and the pending PrepareAbort; the fence's
    events (``fence`` and the PrepareEpochFence chain) come with :func:`complete_transit`.  Asked to fence
    an entry with a transition pending, ``prepareFenceProducerEpoch`` throws IllegalStateException.

    Under TV2 the fence's abort is a TV2 completion (``generateTxnTransitMetadataForTxnCompletion``): at an
    exhausted epoch it allocates ``nextProducerId`` (``fresh_pid``) into the PrepareAbort, so CompleteAbort moves
    the id to (nextProducerId, 0) and a late EndTxn(ABORT) of the fenced producer at the exhausted epoch is the
    overflow retry (KAFKA-20090, PR #21506, 2026: the ``!isEpochFence`` guard removed).  With
    ``cfg.fence_rotates_exhausted_producer_id`` off (Kafka 4.0-4.2) the fence completes at Short.MAX_VALUE on the
    old id, the late abort is answered NONE with that epoch, and the producer's next end of transaction bumps
    past it (the transaction is stuck Ongoing in Kafka, an epoch past the limit here).
    """
    if md.pending_state:  # unreachable: its callers (InitProducerId, the timeout abort) skip a pending entry first
        return _fail(md, Errors.UNKNOWN_SERVER_ERROR, (f"illegal:{md.state}->{S.PREPARE_EPOCH_FENCE}:pending",))
    if cfg.transaction_version >= 2 and cfg.single_fence_bump:
        return _fence_tv2(md, cfg, append_ok, fresh_pid)
    bump = not md.has_failed_epoch_fence and md.producer_epoch < cfg.max_producer_epoch
    epoch = md.producer_epoch + 1 if bump else md.producer_epoch
    if (  # no branch: taken only under the weakened variant kafka_19367_double_bump
        bump and cfg.transaction_version >= 2 and not cfg.single_fence_bump
    ):
        epoch += 1  # KAFKA-19367 (Kafka 4.0.0): the fence bumps, then the TV2 abort bumps again
    fencing = md._replace(pending_state=S.PREPARE_EPOCH_FENCE)
    in_flight = append_ok is APPEND_IN_FLIGHT
    chain = ("fence_prepared",) if in_flight else ("fence", f"txn:{md.state}->{S.PREPARE_EPOCH_FENCE}")  # its own state
    # the fence's abort is endTransaction(ABORT, isFromClient=false) at the bumped epoch, with the TV0/TV1 checks
    # under every version (currentTxnMetadataIsAtLeastTransactionsV2 is false while PrepareEpochFence is pending)
    out = _end_tv1(fencing, md.producer_id, epoch, False, False, cfg, append_ok)
    out = out._replace(events=(*chain, *out.events))
    failed = out.metadata if not out.wrote and out.transit is None else None
    if (  # no branch: taken only under the weakened variant failed_fence_rolls_back_epoch
        failed is not None and failed.has_failed_epoch_fence and not cfg.failed_fence_keeps_bump
    ):
        out = out._replace(
            metadata=failed._replace(producer_epoch=md.producer_epoch, last_producer_epoch=md.last_producer_epoch)
        )
    return out


def _fence_tv2(md: TransactionMetadata, cfg: CoordinatorConfig, append_ok: bool | None, fresh_pid: int) -> Outcome:
    """The TV2 epoch fence: ``prepareFenceProducerEpoch`` then the TV2 ``endTransaction(ABORT, isFromClient=false)``.

    Since KAFKA-19367 (PR #19910, Kafka 4.0.1/4.1) the fence bumps the epoch once, in the abort's own
    ``prepareAbortOrCommit``: the cached epoch is not raised before the append, and the PrepareAbort carries
    (epoch + 1, lastProducerEpoch = the fenced epoch) like every TV2 completion.  A failed append leaves the
    cache as it was, with no ``hasFailedEpochFence`` (PR #19976: "we don't bump the epoch with this change";
    the next fence bumps from the same epoch again; ``cfg.failed_fence_keeps_bump`` off: the flag is still set, as
    between the two PRs, and the next fence does not bump).  At an exhausted epoch the abort allocates
    ``nextProducerId`` (KAFKA-20090, PR #21506: the ``!isEpochFence`` guard removed; with
    ``cfg.fence_rotates_exhausted_producer_id`` off, Kafka 4.0-4.2, it does not), and at Short.MAX_VALUE itself
    it does not bump past it (PR #21469).  The fenced producer's late EndTxn(ABORT) is then the retry of this
    end, its InitProducerId(pid, fenced epoch) the retry of a bump (``lastProducerEpoch``).
    """
    bump = not md.has_failed_epoch_fence and md.producer_epoch < cfg.max_producer_epoch
    epoch = md.producer_epoch + 1 if bump else md.producer_epoch
    rotate = cfg.fence_rotates_exhausted_producer_id and is_epoch_exhausted(md.producer_epoch, cfg)
    nxt = fresh_pid if rotate else -1
    fencing = md._replace(pending_state=S.PREPARE_EPOCH_FENCE)
    in_flight = append_ok is APPEND_IN_FLIGHT
    chain = ("fence_prepared",) if in_flight else ("fence", f"txn:{md.state}->{S.PREPARE_EPOCH_FENCE}")  # its own state
    out = _transit(fencing, _prepare_end(md, False, epoch, md.producer_epoch, nxt), append_ok, (), cfg)
    out = out._replace(events=(*chain, *out.events), used_fresh_pid=nxt >= 0 and (out.wrote or out.transit is not None))
    if not out.wrote and out.transit is None:  # the append failed: nothing of the fence stays in the cache
        # (cfg.failed_fence_keeps_bump off: PR #19910 before PR #19976 still set hasFailedEpochFence here)
        out = out._replace(metadata=md if cfg.failed_fence_keeps_bump else md._replace(has_failed_epoch_fence=True))
    return out


# -- AddPartitionsToTxn / AddOffsetsToTxn / verification (``handleAddPartitionsToTransaction``) -------------


def handle_add_partitions(
    md: TransactionMetadata | None,
    pid: int,
    epoch: int,
    partitions: tuple[int, ...],
    append_ok: bool | None = True,
    cfg: CoordinatorConfig | None = None,
) -> Outcome:
    """``handleAddPartitionsToTransaction`` (also the TV2 implicit add by a partition leader).

    A pending transition is answered CONCURRENT_TRANSACTIONS before the producer id and epoch are checked
    (KAFKA-18660, PR #18730, Kafka 4.0): a TV2 producer that already holds the epoch or producer id its
    EndTxn moved to must not be fenced while the previous transaction's markers are written.
    """
    if md is None:
        return _fail(md, Errors.INVALID_PRODUCER_ID_MAPPING)
    if md.pending_state:
        return _concurrent(md)
    if pid != md.producer_id:
        return _fail(md, Errors.INVALID_PRODUCER_ID_MAPPING)
    if epoch != md.producer_epoch:
        return _fail(md, Errors.PRODUCER_FENCED)
    if md.state in PREPARE:
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    if md.state == S.ONGOING and all(p in md.partitions for p in partitions):
        return Outcome(md, Errors.NONE, md.producer_id, md.producer_epoch)
    union = tuple(sorted(set(md.partitions) | set(partitions)))
    target = md._replace(state=S.ONGOING, partitions=union, txn_started=True)
    return _transit(md, target, append_ok, (), cfg)


def handle_add_offsets(
    md: TransactionMetadata | None,
    pid: int,
    epoch: int,
    group: int,
    append_ok: bool | None = True,
    cfg: CoordinatorConfig | None = None,
) -> Outcome:
    """``AddOffsetsToTxn``: add the group's ``__consumer_offsets`` partition through the same path."""
    return handle_add_partitions(md, pid, epoch, (OFFSETS_PARTITION_BASE + group,), append_ok, cfg)


def handle_verify_partition(md: TransactionMetadata | None, pid: int, epoch: int, partition: int) -> str:
    """``handleVerifyPartitionsInTransaction`` (verifyOnly, KIP-890 part 1); pending is not checked."""
    if md is None or pid != md.producer_id:
        return Errors.INVALID_PRODUCER_ID_MAPPING
    if epoch != md.producer_epoch:
        return Errors.PRODUCER_FENCED
    if md.state in PREPARE:
        return Errors.CONCURRENT_TRANSACTIONS
    return Errors.NONE if partition in md.partitions else Errors.TRANSACTION_ABORTABLE


# -- EndTxn (``TransactionCoordinator.endTransaction``) ------------------------------------------------------


def _prepare_end(
    md: TransactionMetadata, committed: bool, epoch: int, last: int, next_pid: int = -1
) -> TransactionMetadata:
    return md._replace(
        state=S.PREPARE_COMMIT if committed else S.PREPARE_ABORT,
        producer_epoch=epoch,
        last_producer_epoch=last,
        next_producer_id=next_pid,
    )


def handle_end_txn(
    md: TransactionMetadata | None,
    pid: int,
    epoch: int,
    committed: bool,
    fresh_pid: int,
    cfg: CoordinatorConfig,
    append_ok: bool | None = True,
) -> Outcome:
    """A client's EndTxn, on the TV0/TV1 or the TV2 path; a logged PrepareCommit/PrepareAbort is answered with
    :func:`end_txn_answer` (with the append in flight, the system answers in the append's callback)."""
    out = end_transaction(md, pid, epoch, committed, True, fresh_pid, cfg, append_ok)
    if out.wrote and out.metadata is not None and out.metadata.state in PREPARE:
        answer_pid, answer_epoch = end_txn_answer(out.metadata, cfg)
        return out._replace(producer_id=answer_pid, producer_epoch=answer_epoch)
    return out


def end_transaction(
    md: TransactionMetadata | None,
    pid: int,
    epoch: int,
    committed: bool,
    from_client: bool,
    fresh_pid: int,
    cfg: CoordinatorConfig,
    append_ok: bool | None = True,
) -> Outcome:
    """``endTransaction``: dispatch on the transaction version.

    A pending transition (an append in flight, or PrepareCommit/PrepareAbort with its markers being
    written: ``pendingState`` CompleteCommit/CompleteAbort) is answered CONCURRENT_TRANSACTIONS right
    after the producer-id check, before the epoch check (KAFKA-18464, PR #18467, Kafka 4.0, for every
    transaction version); with ``cfg.concurrent_before_epoch_check`` off, after it (Kafka 3.x).
    """
    if cfg.transaction_version >= 2:
        return _end_tv2(md, pid, epoch, committed, fresh_pid, cfg, append_ok)
    return _end_tv1(md, pid, epoch, committed, from_client, cfg, append_ok)


def _end_tv1(
    md: TransactionMetadata | None,
    pid: int,
    epoch: int,
    committed: bool,
    from_client: bool,
    cfg: CoordinatorConfig,
    append_ok: bool | None,
    next_pid: int = -1,
) -> Outcome:
    """``endTransaction`` for TV0/TV1 (strict epoch equality for a client's request) and for every epoch fence.

    ``isValidEpoch`` for TV0/TV1 (``TransactionCoordinator.scala`` @1eb7644349cb): a client's request must name the
    entry's epoch; the coordinator's own abort (``isFromClient=false``: the fence of InitProducerId or of the
    timeout abort, which :func:`fence_and_abort` sends through here at the bumped epoch) any epoch not below it.
    """
    if md is None or pid != md.producer_id:
        return _fail(md, Errors.INVALID_PRODUCER_ID_MAPPING)
    if _pending(md) and cfg.concurrent_before_epoch_check:
        return _concurrent(md)
    if (from_client and epoch != md.producer_epoch) or (not from_client and epoch < md.producer_epoch):
        return _fail(md, Errors.PRODUCER_FENCED)
    if _pending(md):  # no branch: taken only under the weakened variant no_kafka_18464_fix
        return _concurrent(md)
    same = S.COMPLETE_COMMIT if committed else S.COMPLETE_ABORT
    if md.state == S.ONGOING:
        if md.pending_state == S.PREPARE_EPOCH_FENCE:
            # isEpochFence: the bumped epoch goes into the cache before the append and stays if it fails (KAFKA-9666)
            md = md._replace(producer_epoch=epoch, last_producer_epoch=-1)
        target = _prepare_end(md, committed, md.producer_epoch, md.last_producer_epoch, next_pid)
        out = _transit(md, target, append_ok, (), cfg)
        return out._replace(used_fresh_pid=next_pid >= 0 and (out.wrote or out.transit is not None))
    if md.state == same:
        return Outcome(md, Errors.NONE, md.producer_id, md.producer_epoch, events=("end_txn_retry",))
    if md.state in PREPARE:
        ours = md.state == (S.PREPARE_COMMIT if committed else S.PREPARE_ABORT)
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS if ours else Errors.INVALID_TXN_STATE)
    if md.state in (S.EMPTY, *COMPLETE):
        return _fail(md, Errors.INVALID_TXN_STATE)
    return _fail(md, Errors.UNKNOWN_SERVER_ERROR)  # unreachable: no Dead/PrepareEpochFence entry is stored


def _end_tv2(
    md: TransactionMetadata | None,
    pid: int,
    epoch: int,
    committed: bool,
    fresh_pid: int,
    cfg: CoordinatorConfig,
    append_ok: bool | None,
) -> Outcome:
    """``endTransaction`` for TV2 (KIP-890 part 2; the state/result table of ``endTransaction``)."""
    if md is None:
        return _fail(md, Errors.INVALID_PRODUCER_ID_MAPPING)
    overflow_retry = (
        pid == md.prev_producer_id
        and is_epoch_exhausted(epoch, cfg)
        and md.producer_epoch == 0
        and md.state in COMPLETE
    )
    if pid != md.producer_id and not overflow_retry:
        return _fail(md, Errors.INVALID_PRODUCER_ID_MAPPING)
    current = pid == md.producer_id and epoch == md.producer_epoch
    retry = (pid == md.producer_id and epoch == md.producer_epoch - 1) or overflow_retry
    if _pending(md):
        # Kafka 3.x checked the epoch first (isValidEpoch: the current epoch in Ongoing/Empty, a retry's after it)
        valid = current if md.state in (S.ONGOING, S.EMPTY) else retry
        return _concurrent(md) if cfg.concurrent_before_epoch_check or valid else _fail(md, Errors.PRODUCER_FENCED)
    ok = (md.producer_id, md.producer_epoch)
    if md.state == S.ONGOING:
        if not current:
            return _fail(md, Errors.PRODUCER_FENCED)
        nxt = fresh_pid if is_epoch_exhausted(md.producer_epoch, cfg) else -1
        target = _prepare_end(md, committed, md.producer_epoch + 1, md.producer_epoch, nxt)
        out = _transit(md, target, append_ok, (), cfg)
        return out._replace(used_fresh_pid=nxt >= 0 and (out.wrote or out.transit is not None))
    if md.state in PREPARE and cfg.concurrent_before_epoch_check:
        # KAFKA-18464 (PR #18467, Kafka 4.0): while the markers of the previous transaction are being
        # written (pending CompleteCommit/CompleteAbort) the answer is CONCURRENT_TRANSACTIONS, before any
        # epoch check, so a client that already holds the bumped epoch does not fence itself.
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    if md.state in PREPARE:  # unreachable: Kafka 3.x order, only the weakened variant no_kafka_18464_fix gets here
        if not retry:
            return _fail(md, Errors.PRODUCER_FENCED)
        ours = md.state == (S.PREPARE_COMMIT if committed else S.PREPARE_ABORT)
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS if ours else Errors.INVALID_TXN_STATE)
    if md.state in (S.EMPTY, *COMPLETE):
        same = md.state == (S.COMPLETE_COMMIT if committed else S.COMPLETE_ABORT)
        if not committed and current:
            if (  # no branch: taken only under the weakened variant tv2_with_2024_transition_table
                not cfg.tv2_empty_abort_in_table
            ):
                # PrepareAbort's Oct-2024 row (Ongoing, PrepareEpochFence only): prepareTransitionTo throws
                illegal = (f"illegal:{md.state}->{S.PREPARE_ABORT}",)
                return _fail(md, Errors.UNKNOWN_SERVER_ERROR, illegal)
            # generateTxnTransitMetadataForTxnCompletion serves the empty abort too: an exhausted epoch
            # allocates the next producer id here as well (found by epoch_within_limit at max epoch 3)
            rotate = cfg.empty_abort_rotates_producer_id and is_epoch_exhausted(md.producer_epoch, cfg)
            nxt = fresh_pid if rotate else -1
            target = _prepare_end(md, False, md.producer_epoch + 1, md.producer_epoch, nxt)._replace(partitions=())
            out = _transit(md, target, append_ok, ("empty_abort",), cfg)
            return out._replace(used_fresh_pid=nxt >= 0 and (out.wrote or out.transit is not None))
        if retry and same:
            return Outcome(md, Errors.NONE, *ok, events=("end_txn_retry",))
        if (  # no branch: taken only under the weakened variant no_kafka_20785_fix
            retry and md.state == S.COMPLETE_ABORT and committed and not cfg.commit_retry_after_abort_fenced
        ):
            # before KAFKA-20785 (PR #23204): a commit racing the coordinator's own abort is INVALID_TXN_STATE
            return _fail(md, Errors.INVALID_TXN_STATE)
        if retry and md.state == S.COMPLETE_COMMIT and not committed:
            return _fail(md, Errors.INVALID_TXN_STATE)
        if current and committed:
            return _fail(md, Errors.INVALID_TXN_STATE)
        return _fail(md, Errors.PRODUCER_FENCED)
    return _fail(md, Errors.UNKNOWN_SERVER_ERROR)  # unreachable: no Dead/PrepareEpochFence entry is stored


# -- markers, completion, timeout, expiry (``TransactionMarkerChannelManager``, ``TransactionStateManager``) ---


#: WriteTxnMarkers errors after which the coordinator re-enqueues the marker to the partition's (possibly new)
#: leader under the same coordinator epoch (``TransactionMarkerRequestCompletionHandler.onComplete``, "these are
#: retriable errors"): the leader moved, the ISR is below ``min.insync.replicas`` (before or after the local
#: append), the append timed out in the purgatory, or the log directory failed.
MARKER_RETRIABLE_ERRORS = frozenset(
    {
        # Kafka's case, each an answer of the marker_failure fault ([faults] marker_errors)
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.NOT_ENOUGH_REPLICAS,
        Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        Errors.REQUEST_TIMED_OUT,
        Errors.KAFKA_STORAGE_ERROR,  # since KAFKA-9749 (PR #8336, Kafka 2.6)
    }
)


def handle_marker_response(
    md: TransactionMetadata | None,
    producer_id: int,
    producer_epoch: int,
    partition: int,
    error: str,
    retry_retriable: bool = True,
) -> tuple[TransactionMetadata | None, bool]:
    """``TransactionMarkerRequestCompletionHandler`` for one partition.

    Returns the entry and whether marker sending for the transaction goes on.
    NONE removes the partition; a retriable error (:data:`MARKER_RETRIABLE_ERRORS`) keeps the partition, and
    the caller re-enqueues its marker (``addTxnMarkersToBrokerQueue``); INVALID_PRODUCER_EPOCH or
    TRANSACTION_COORDINATOR_FENCED drop the transaction's marker sending and leave it in Prepare*.  A response
    for another transaction is ignored.  ``retry_retriable`` off (the weakened variant
    ``marker_retriable_error_cancels``): a retriable error cancels the markers like a fatal one.
    The caller passes ``retry_retriable`` off for KAFKA_STORAGE_ERROR under the weakened variant ``no_kafka_9749_fix``
    (Kafka before 2.6): the code was not in the handler's retriable case; its ``case other`` threw an
    ``IllegalStateException``, which ``NetworkClient.completeResponses`` logs and swallows -- the marker is neither
    re-sent nor completed and the transaction stays in Prepare* (apache/kafka
    ``TransactionMarkerRequestCompletionHandler.scala``, fix 4c96b7d).
    """
    if (  # unreachable: a marker's response is handled at the coordinator epoch that sent it, one per partition
        md is None
        or md.state not in PREPARE
        or (md.producer_id, md.producer_epoch) != (producer_id, producer_epoch)
        or partition not in md.partitions
    ):
        return md, False
    if error == Errors.NONE:  # no branch: taken only under the weakened variant no_kafka_19999_fix
        return md._replace(partitions=tuple(p for p in md.partitions if p != partition)), True
    return md, error in MARKER_RETRIABLE_ERRORS and retry_retriable


def complete_target(md: TransactionMetadata, cfg: CoordinatorConfig | None = None) -> TransactionMetadata:
    """``prepareComplete``'s target: CompleteCommit/CompleteAbort, no partitions, the failed-fence flag cleared.

    Under a TV2 epoch overflow the producer id moves to ``nextProducerId`` at epoch 0.  ``lastProducerEpoch`` is
    kept -- the Prepare*'s, which under TV2 is the epoch the client last saw (``prepareComplete`` leaves it to
    ``TransitionData``'s copy of the current value, ``TransactionMetadata.java`` @07b06d06; the Oct-2024 Scala
    ``prepareComplete`` wrote the producer epoch there instead) -- and ``prevProducerId`` is the id the entry held
    (:func:`_with_previous_id`).
    """
    target = md._replace(
        state=S.COMPLETE_COMMIT if md.state == S.PREPARE_COMMIT else S.COMPLETE_ABORT,
        partitions=(),
        txn_started=False,
        pending_state="",
        has_failed_epoch_fence=False,  # prepareComplete: the fence is in the log now
    )
    if md.next_producer_id >= 0:
        target = target._replace(
            producer_id=md.next_producer_id, producer_epoch=0, prev_producer_id=md.producer_id, next_producer_id=-1
        )
    return _with_previous_id(md, target, cfg)


def end_txn_answer(md: TransactionMetadata, cfg: CoordinatorConfig) -> tuple[int, int]:
    """The (producer id, epoch) a successful EndTxn is answered with once its PrepareCommit/PrepareAbort ``md``
    is logged: ``sendTxnMarkersCallback`` answers with ``newPreSendMetadata`` -- the completion's id and epoch,
    under TV2 at an exhausted epoch the rotated ``nextProducerId`` at epoch 0 (KAFKA-18660, PR #18730, Kafka
    4.0; ``TransactionCoordinator.scala`` 4.3.1 L969-974).  Elsewhere the completion keeps the prepare's pair.
    With ``cfg.end_txn_answers_completed_ids`` off (Kafka before the fix) the prepare's own pair is answered.
    """
    if (  # no branch: taken only under the weakened variant no_kafka_18660_end_txn_answer
        not cfg.end_txn_answers_completed_ids
    ):
        return md.producer_id, md.producer_epoch
    done = complete_target(md)
    return done.producer_id, done.producer_epoch


def prepare_complete(md: TransactionMetadata) -> TransactionMetadata:
    """``prepareComplete`` once PrepareCommit/PrepareAbort is logged (the EndTxn callback, and loading the log on
    a new coordinator): the entry stays in Prepare* with CompleteCommit/CompleteAbort pending while its markers
    are written, and ``hasFailedEpochFence`` is cleared."""
    return md._replace(pending_state=complete_target(md).state, has_failed_epoch_fence=False)


def complete_transaction(
    md: TransactionMetadata, append_ok: bool = True, cfg: CoordinatorConfig | None = None
) -> Outcome:
    """``maybeWriteTxnCompletion`` in one step: CompleteCommit/CompleteAbort once every marker is written."""
    return _transit(md, complete_target(md, cfg), append_ok, (), cfg)


def timeout_abort(
    md: TransactionMetadata | None, cfg: CoordinatorConfig, append_ok: bool | None = True, fresh_pid: int = -1
) -> Outcome | None:
    """``TransactionCoordinator.abortTimedOutTransactions`` for an Ongoing transaction with no pending transition.

    ``TransactionStateManager.timedOutTransactions`` skips an entry with a transition pending (with
    ``cfg.timeout_abort_skips_pending`` off, a weakened rule, it does not, and the fence meets the pending
    transition).  With the KAFKA-6119 fix the abort goes through PrepareEpochFence (epoch+1); without it
    (``timeout_abort_bumps_epoch=False``) it is a plain internal ABORT (TV1: same epoch; TV2 bumps in its own
    end path anyway).
    """
    if md is None or md.state != S.ONGOING or (md.pending_state and cfg.timeout_abort_skips_pending):
        return None
    if (  # no branch: taken only under the weakened variant timeout_abort_without_epoch_bump
        cfg.timeout_abort_bumps_epoch
    ):
        return fence_and_abort(md, cfg, append_ok, fresh_pid)
    return end_transaction(md, md.producer_id, md.producer_epoch, False, False, -1, cfg, append_ok)


def expire_transactional_id(md: TransactionMetadata | None, append_ok: bool | None = True) -> Outcome | None:
    """``transactionalId-expiration``: tombstone an idle id and drop it from the cache (``TransactionStateManager``).

    With the tombstone's append in flight the entry is pending Dead (``prepareDead``); its callback removes
    the entry (:func:`complete_transit`) or, on failure, resets the pending state.
    """
    if md is None or md.state not in EXPIRATION_ALLOWED or md.pending_state:
        return None
    if append_ok is APPEND_IN_FLIGHT:
        return _transit(md, md._replace(state=S.DEAD), APPEND_IN_FLIGHT)
    return Outcome(None, Errors.NONE, wrote=True, events=(f"txn:{md.state}->{S.DEAD}", "transactional_id_expired"))


# The handlers a search calls most, cached by their arguments' values (model/memo.py); rebound here, after every
# definition, so that the lines above keep their positions (mutant ids hash positions).
from keos.model.memo import memoised  # noqa: E402  (here, not at the top: see above)

handle_add_partitions = memoised(handle_add_partitions)  # no mutate: a cache of a pure function
handle_add_offsets = memoised(handle_add_offsets)  # no mutate: a cache of a pure function
handle_init_producer_id = memoised(handle_init_producer_id)  # no mutate: a cache of a pure function
handle_end_txn = memoised(handle_end_txn)  # no mutate: a cache of a pure function
