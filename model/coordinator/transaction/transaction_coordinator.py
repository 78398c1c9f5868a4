"""The transaction coordinator: ``TransactionMetadata`` and its request handlers.

KIP-98 §6-8; ``TransactionCoordinator.scala``, ``TransactionMetadata.java``.  For every ``transactional.id`` the
coordinator keeps a :class:`TransactionMetadata` (``TransactionMetadata.java``).
Every change is a *two-phase transition*
(``prepareTransitionTo`` / ``completeTransitionTo``): the handler prepares a
target, the target is appended to the transaction log, and only when the
append succeeds does the cache change.  The model performs prepare, append and
complete in one step (the append is atomic and replicated, ``TransactionLog``), except that
an append may *fail* (a fault the system injects): the pending state is then
cleared and the client gets ``COORDINATOR_NOT_AVAILABLE`` (``TransactionState.java``, ``TransactionLog``).  On the
fence path a failed append sets ``hasFailedEpochFence`` (``TransactionCoordinator.endTransaction``).

Handlers are pure functions of the current metadata (``None`` = no entry for
the id) and the request; each returns an :class:`Outcome`: the new cache entry,
the error code for the client, the (pid, epoch) to return, the value written
to the log (if any) and events (``txn:Ongoing->PrepareCommit``,
``error:CONCURRENT_TRANSACTIONS``, ``fence``).  The legality of every
transition is read from :data:`model.coordinator.transaction.transaction_state.VALID_PREVIOUS_STATES`.

Unreachable by design (each guard is marked unreachable, with its reason): Kafka's handlers
first answer CONCURRENT_TRANSACTIONS while a transition is pending (``pendingTransitionInProgress``);
the model appends and completes in the handler's own step, so no stored metadata ever has a pending
state (README, "Modelling choices") and those guards never decide.  Likewise no entry is ever stored in
Dead (expiry removes it from the cache) or PrepareEpochFence (a pending state only): the handlers'
fall-through for those states (Kafka's IllegalStateException, UNKNOWN_SERVER_ERROR here) is marked
unreachable too.

Simplifications: time is not modelled (the timeout abort and id expiry are
actions the environment takes while their preconditions hold); the
transaction timeout is fixed, so INVALID_TRANSACTION_TIMEOUT never arises.
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.codec import record
from keos.model.coordinator.transaction.transaction_log import TransactionLogValue
from keos.model.coordinator.transaction.transaction_state import (
    EXPIRATION_ALLOWED,
    TransactionState,
    is_valid_transition,
)
from keos.model.protocol.errors import Errors

__all__ = [
    "CoordinatorConfig",
    "Outcome",
    "TransactionMetadata",
    "complete_transaction",
    "end_transaction",
    "expire_transactional_id",
    "from_log_value",
    "handle_add_offsets",
    "handle_add_partitions",
    "handle_end_txn",
    "handle_init_producer_id",
    "handle_marker_response",
    "handle_verify_partition",
    "is_epoch_exhausted",
    "timeout_abort",
]

S = TransactionState
PREPARE = (S.PREPARE_COMMIT, S.PREPARE_ABORT)
COMPLETE = (S.COMPLETE_COMMIT, S.COMPLETE_ABORT)

#: Partition index of a consumer group's ``__consumer_offsets`` partition (AddOffsetsToTxn).
OFFSETS_PARTITION_BASE = 1000


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
    """Broker settings the handlers read."""

    transaction_version: int = 2
    max_producer_epoch: int = 32767
    timeout_abort_bumps_epoch: bool = True
    failed_fence_keeps_bump: bool = True
    concurrent_before_epoch_check: bool = True
    commit_retry_after_abort_fenced: bool = True
    tv2_empty_abort_in_table: bool = True
    single_fence_bump: bool = True
    empty_abort_rotates_producer_id: bool = True
    init_pid_retry_by_last_epoch: bool = True


class Outcome(NamedTuple):
    """A handler's result."""

    metadata: TransactionMetadata | None
    error: str
    producer_id: int = -1
    producer_epoch: int = -1
    written: TransactionLogValue | None = None
    wrote: bool = False
    used_fresh_pid: bool = False
    events: tuple[str, ...] = ()


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
    )


def from_log_value(tid: int, v: TransactionLogValue) -> TransactionMetadata:
    """A cache entry rebuilt from the log (lastProducerEpoch is not persisted, ``TransactionLog``)."""
    return TransactionMetadata(
        tid,
        v.producer_id,
        v.producer_epoch,
        -1,
        v.prev_producer_id,
        v.next_producer_id,
        v.state,
        v.partitions,
        client_tv=v.client_tv,
        txn_started=v.state not in (S.EMPTY, *COMPLETE),
    )


def _fail(md: TransactionMetadata | None, error: str, extra: tuple[str, ...] = ()) -> Outcome:
    return Outcome(md, error, events=(*extra, f"error:{error}"))


def _transit(
    md: TransactionMetadata, target: TransactionMetadata, append_ok: bool, events: tuple[str, ...] = ()
) -> Outcome:
    """prepareTransitionTo + log append + completeTransitionTo (``TransactionState.java``)."""
    if md.pending_state not in ("", S.PREPARE_EPOCH_FENCE):  # unreachable: one-step log append, nothing pending
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    src = S.PREPARE_EPOCH_FENCE if md.pending_state == S.PREPARE_EPOCH_FENCE else md.state
    if not is_valid_transition(src, target.state) or (target.state != S.DEAD and target.producer_epoch < 0):
        return _fail(md._replace(pending_state=""), Errors.UNKNOWN_SERVER_ERROR, (f"illegal:{src}->{target.state}",))
    if not append_ok:
        failed = md._replace(pending_state="", has_failed_epoch_fence=md.pending_state == S.PREPARE_EPOCH_FENCE)
        return Outcome(
            failed,
            Errors.COORDINATOR_NOT_AVAILABLE,
            events=(*events, "txn_log_append_failed", "error:COORDINATOR_NOT_AVAILABLE"),
        )
    new = target._replace(pending_state="")
    evs = (*events, f"txn:{src}->{target.state}")
    return Outcome(new, Errors.NONE, new.producer_id, new.producer_epoch, to_log_value(new), True, events=evs)


# -- InitProducerId (``TransactionCoordinator.handleInitProducerId``) ----------------------------------------


def handle_init_producer_id(
    md: TransactionMetadata | None,
    tid: int,
    expected_pid: int,
    expected_epoch: int,
    fresh_pid: int,
    cfg: CoordinatorConfig,
    append_ok: bool = True,
) -> Outcome:
    """``TransactionCoordinator.handleInitProducerId`` for a transactional id."""
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
    append_ok: bool,
) -> Outcome:
    if md.pending_state:  # unreachable: one-step log append, nothing pending
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    if expected_pid >= 0 and not (
        md.producer_epoch == -1
        or expected_pid == md.producer_id
        or (expected_pid == md.prev_producer_id and is_epoch_exhausted(expected_epoch, cfg))
    ):
        return _fail(md, Errors.PRODUCER_FENCED)
    if md.state in PREPARE:
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    if md.state == S.ONGOING:
        out = fence_and_abort(md, cfg, append_ok)
        if not out.wrote:  # the append's own error (COORDINATOR_NOT_AVAILABLE), as Kafka's callback returns it
            return out
        return out._replace(error=Errors.CONCURRENT_TRANSACTIONS, events=(*out.events, "error:CONCURRENT_TRANSACTIONS"))
    if md.state not in (S.EMPTY, *COMPLETE):  # unreachable: no Dead/PrepareEpochFence entry is stored
        return _fail(md, Errors.UNKNOWN_SERVER_ERROR)
    base = md._replace(state=S.EMPTY, partitions=(), txn_started=False, pending_state=S.EMPTY)
    if is_epoch_exhausted(md.producer_epoch, cfg) and (expected_epoch < 0 or expected_epoch == md.producer_epoch):
        if fresh_pid < 0:
            return _fail(md, Errors.COORDINATOR_NOT_AVAILABLE)
        last = md.producer_epoch if expected_epoch >= 0 else -1
        target = base._replace(
            producer_id=fresh_pid, producer_epoch=0, prev_producer_id=md.producer_id, last_producer_epoch=last
        )
        return _transit(md, target, append_ok, ("producer_id_rotated",))._replace(used_fresh_pid=append_ok)
    if expected_epoch < 0:
        target = base._replace(producer_epoch=md.producer_epoch + 1, last_producer_epoch=-1)
    elif expected_epoch == md.producer_epoch or md.producer_epoch == -1:
        target = base._replace(producer_epoch=md.producer_epoch + 1, last_producer_epoch=md.producer_epoch)
    elif expected_epoch == md.last_producer_epoch and cfg.init_pid_retry_by_last_epoch:
        # KIP-360: a retry of a bump whose response was lost names the epoch it bumped from (lastProducerEpoch)
        return Outcome(md, Errors.NONE, md.producer_id, md.producer_epoch, events=("init_pid_retry",))
    else:
        return _fail(md, Errors.PRODUCER_FENCED)
    return _transit(md, target, append_ok, ("epoch_bump",))


def fence_and_abort(md: TransactionMetadata, cfg: CoordinatorConfig, append_ok: bool) -> Outcome:
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
    """
    bump = not md.has_failed_epoch_fence and md.producer_epoch < cfg.max_producer_epoch
    epoch = md.producer_epoch + 1 if bump else md.producer_epoch
    if bump and cfg.transaction_version >= 2 and not cfg.single_fence_bump:
        epoch += 1  # KAFKA-19367 (Kafka 4.0.0): the fence bumps, then the TV2 abort bumps again
    fencing = md._replace(pending_state=S.PREPARE_EPOCH_FENCE)
    target = md._replace(state=S.PREPARE_ABORT, producer_epoch=epoch, last_producer_epoch=-1)
    out = _transit(fencing, target, append_ok, ("fence", f"txn:{S.ONGOING}->{S.PREPARE_EPOCH_FENCE}"))
    failed = out.metadata if not out.wrote else None
    if failed is not None and failed.has_failed_epoch_fence and cfg.failed_fence_keeps_bump:
        out = out._replace(metadata=failed._replace(producer_epoch=epoch, last_producer_epoch=-1))
    return out


# -- AddPartitionsToTxn / AddOffsetsToTxn / verification (``handleAddPartitionsToTransaction``) -------------


def handle_add_partitions(
    md: TransactionMetadata | None, pid: int, epoch: int, partitions: tuple[int, ...], append_ok: bool = True
) -> Outcome:
    """``handleAddPartitionsToTransaction`` (also the TV2 implicit add by a partition leader)."""
    if md is None or pid != md.producer_id:
        return _fail(md, Errors.INVALID_PRODUCER_ID_MAPPING)
    if epoch != md.producer_epoch:
        return _fail(md, Errors.PRODUCER_FENCED)
    if md.pending_state or md.state in PREPARE:
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    if md.state == S.ONGOING and all(p in md.partitions for p in partitions):
        return Outcome(md, Errors.NONE, md.producer_id, md.producer_epoch)
    union = tuple(sorted(set(md.partitions) | set(partitions)))
    target = md._replace(state=S.ONGOING, partitions=union, txn_started=True)
    return _transit(md, target, append_ok)


def handle_add_offsets(
    md: TransactionMetadata | None, pid: int, epoch: int, group: int, append_ok: bool = True
) -> Outcome:
    """``AddOffsetsToTxn``: add the group's ``__consumer_offsets`` partition through the same path."""
    return handle_add_partitions(md, pid, epoch, (OFFSETS_PARTITION_BASE + group,), append_ok)


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
    append_ok: bool = True,
) -> Outcome:
    """A client's EndTxn, on the TV0/TV1 or the TV2 path."""
    return end_transaction(md, pid, epoch, committed, True, fresh_pid, cfg, append_ok)


def end_transaction(
    md: TransactionMetadata | None,
    pid: int,
    epoch: int,
    committed: bool,
    from_client: bool,
    fresh_pid: int,
    cfg: CoordinatorConfig,
    append_ok: bool = True,
) -> Outcome:
    """``endTransaction``: dispatch on the transaction version."""
    if cfg.transaction_version >= 2:
        return _end_tv2(md, pid, epoch, committed, fresh_pid, cfg, append_ok)
    return _end_tv1(md, pid, epoch, committed, from_client, append_ok)


def _end_tv1(
    md: TransactionMetadata | None, pid: int, epoch: int, committed: bool, from_client: bool, append_ok: bool
) -> Outcome:
    """``endTransactionWithTV1`` (Kafka's coordinator)."""
    if md is None or pid != md.producer_id:
        return _fail(md, Errors.INVALID_PRODUCER_ID_MAPPING)
    if (from_client and epoch != md.producer_epoch) or (not from_client and epoch < md.producer_epoch):
        return _fail(md, Errors.PRODUCER_FENCED)
    if md.pending_state not in ("", S.PREPARE_EPOCH_FENCE):  # unreachable: one-step log append, nothing pending
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    same = S.COMPLETE_COMMIT if committed else S.COMPLETE_ABORT
    if md.state == S.ONGOING:
        return _transit(md, _prepare_end(md, committed, md.producer_epoch, md.last_producer_epoch), append_ok)
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
    append_ok: bool,
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
    if md.pending_state not in ("", S.PREPARE_EPOCH_FENCE):  # unreachable: one-step log append, nothing pending
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    current = pid == md.producer_id and epoch == md.producer_epoch
    retry = (pid == md.producer_id and epoch == md.producer_epoch - 1) or overflow_retry
    ok = (md.producer_id, md.producer_epoch)
    if md.state == S.ONGOING:
        if not current:
            return _fail(md, Errors.PRODUCER_FENCED)
        nxt = fresh_pid if is_epoch_exhausted(md.producer_epoch, cfg) else -1
        out = _transit(md, _prepare_end(md, committed, md.producer_epoch + 1, md.producer_epoch, nxt), append_ok)
        return out._replace(used_fresh_pid=nxt >= 0 and out.wrote)
    if md.state in PREPARE and cfg.concurrent_before_epoch_check:
        # KAFKA-18464 (PR #18467, Kafka 4.0): while the markers of the previous transaction are being
        # written (pending CompleteCommit/CompleteAbort) the answer is CONCURRENT_TRANSACTIONS, before any
        # epoch check, so a client that already holds the bumped epoch does not fence itself.
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS)
    if md.state in PREPARE:
        if not retry:
            return _fail(md, Errors.PRODUCER_FENCED)
        ours = md.state == (S.PREPARE_COMMIT if committed else S.PREPARE_ABORT)
        return _fail(md, Errors.CONCURRENT_TRANSACTIONS if ours else Errors.INVALID_TXN_STATE)
    if md.state in (S.EMPTY, *COMPLETE):
        same = md.state == (S.COMPLETE_COMMIT if committed else S.COMPLETE_ABORT)
        if not committed and current:
            if not cfg.tv2_empty_abort_in_table:
                # PrepareAbort's Oct-2024 row (Ongoing, PrepareEpochFence only): prepareTransitionTo throws
                illegal = (f"illegal:{md.state}->{S.PREPARE_ABORT}",)
                return _fail(md, Errors.UNKNOWN_SERVER_ERROR, illegal)
            # generateTxnTransitMetadataForTxnCompletion serves the empty abort too: an exhausted epoch
            # allocates the next producer id here as well (found by epoch_within_limit at max epoch 3)
            rotate = cfg.empty_abort_rotates_producer_id and is_epoch_exhausted(md.producer_epoch, cfg)
            nxt = fresh_pid if rotate else -1
            target = _prepare_end(md, False, md.producer_epoch + 1, md.producer_epoch, nxt)._replace(partitions=())
            out = _transit(md, target, append_ok, ("empty_abort",))
            return out._replace(used_fresh_pid=nxt >= 0 and out.wrote)
        if retry and same:
            return Outcome(md, Errors.NONE, *ok, events=("end_txn_retry",))
        if retry and md.state == S.COMPLETE_ABORT and committed and not cfg.commit_retry_after_abort_fenced:
            # before KAFKA-20785 (PR #23204): a commit racing the coordinator's own abort is INVALID_TXN_STATE
            return _fail(md, Errors.INVALID_TXN_STATE)
        if retry and md.state == S.COMPLETE_COMMIT and not committed:
            return _fail(md, Errors.INVALID_TXN_STATE)
        if current and committed:
            return _fail(md, Errors.INVALID_TXN_STATE)
        return _fail(md, Errors.PRODUCER_FENCED)
    return _fail(md, Errors.UNKNOWN_SERVER_ERROR)  # unreachable: no Dead/PrepareEpochFence entry is stored


# -- markers, completion, timeout, expiry (``TransactionMarkerChannelManager``, ``TransactionStateManager``) ---


def handle_marker_response(
    md: TransactionMetadata | None, producer_id: int, producer_epoch: int, partition: int, error: str
) -> tuple[TransactionMetadata | None, bool]:
    """``TransactionMarkerRequestCompletionHandler`` for one partition.

    Returns the entry and whether marker sending for the transaction goes on.
    NONE removes the partition; INVALID_PRODUCER_EPOCH or
    TRANSACTION_COORDINATOR_FENCED drop the transaction's marker sending and
    leave it in Prepare*.  A response for another transaction is ignored.
    """
    if (
        md is None
        or md.state not in PREPARE
        or (md.producer_id, md.producer_epoch) != (producer_id, producer_epoch)
        or partition not in md.partitions
    ):
        return md, False
    if error == Errors.NONE:
        return md._replace(partitions=tuple(p for p in md.partitions if p != partition)), True
    return md, False


def complete_transaction(md: TransactionMetadata, append_ok: bool = True) -> Outcome:
    """``maybeWriteTxnCompletion``: CompleteCommit/CompleteAbort once every marker is written.

    Under a TV2 epoch overflow the producer id moves to ``nextProducerId`` at epoch 0.
    """
    target = md._replace(
        state=S.COMPLETE_COMMIT if md.state == S.PREPARE_COMMIT else S.COMPLETE_ABORT,
        partitions=(),
        txn_started=False,
        has_failed_epoch_fence=False,  # prepareComplete: the fence is in the log now
    )
    if md.next_producer_id >= 0:
        target = target._replace(
            producer_id=md.next_producer_id, producer_epoch=0, prev_producer_id=md.producer_id, next_producer_id=-1
        )
    return _transit(md, target, append_ok)


def timeout_abort(md: TransactionMetadata | None, cfg: CoordinatorConfig, append_ok: bool = True) -> Outcome | None:
    """``TransactionCoordinator.abortTimedOutTransactions`` for an Ongoing transaction with no pending transition.

    With the KAFKA-6119 fix the abort goes through PrepareEpochFence (epoch+1);
    without it (``timeout_abort_bumps_epoch=False``) it is a plain internal
    ABORT (TV1: same epoch; TV2 bumps in its own end path anyway).
    """
    if md is None or md.state != S.ONGOING or md.pending_state:
        return None
    if cfg.timeout_abort_bumps_epoch:
        return fence_and_abort(md, cfg, append_ok)
    return end_transaction(md, md.producer_id, md.producer_epoch, False, False, -1, cfg, append_ok)


def expire_transactional_id(md: TransactionMetadata | None, append_ok: bool = True) -> Outcome | None:
    """``transactionalId-expiration``: tombstone an idle id and drop it from the cache (``TransactionStateManager``)."""
    if md is None or md.state not in EXPIRATION_ALLOWED or md.pending_state:
        return None
    if not append_ok:
        return Outcome(md, Errors.COORDINATOR_NOT_AVAILABLE, events=("txn_log_append_failed",))
    return Outcome(None, Errors.NONE, wrote=True, events=(f"txn:{md.state}->{S.DEAD}", "transactional_id_expired"))
