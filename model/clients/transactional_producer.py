"""The transactional producer client: Kafka's ``TransactionManager`` state machine.

KIP-98 §6-8; ``Sender.java``, ``TransactionManager.java``, KIP-360.  A :class:`TxnClient` wraps the idempotent
data path of :mod:`model.clients.producer` (batches, sequences, drain, produce
responses, delivery timeouts) and adds the transaction API and states::

    UNINITIALIZED -initTransactions-> INITIALIZING -InitProducerId-> READY
    READY -beginTransaction-> IN_TRANSACTION -commit/abort-> COMMITTING/ABORTING_TRANSACTION
    COMMITTING/ABORTING -EndTxn NONE-> READY (or INITIALIZING for a KIP-360 bump)
    any -abortable error-> ABORTABLE_ERROR -abortTransaction-> ABORTING_TRANSACTION
    any -fatal error-> FATAL_ERROR

Error classification (``TransactionManager`` handlers, Kafka 3.9; the data is
:data:`COORDINATOR_ERROR_CLASSES`, one of :class:`ErrorClass`):

* *fenced*: PRODUCER_FENCED, INVALID_PRODUCER_EPOCH from the coordinator ->
  ``fatalError(ProducerFencedException)``: the producer must be closed; the
  client records ``fenced``.
* *fatal*: INVALID_TXN_STATE, TRANSACTIONAL_ID_AUTHORIZATION_FAILED and every
  error InitProducerId's or EndTxn's handler does not expect ("Unexpected error in ...Response",
  UNKNOWN_SERVER_ERROR among them).  ``AddPartitionsToTxnHandler`` instead counts an error it does not
  name as a partition error (``hasPartitionErrors``) and ends with ``abortableError`` (no epoch bump).
* *abortable*: TRANSACTION_ABORTABLE; UNKNOWN_PRODUCER_ID and
  INVALID_PRODUCER_ID_MAPPING on AddPartitionsToTxn / EndTxn are
  ``abortableErrorIfPossible`` (abortable with a KIP-360 epoch bump, fatal
  without KIP-360).  While the client is already aborting,
  ``transitionToAbortableError`` skips the transition: a failed batch or an
  AddPartitionsToTxn in flight when the abort began leaves the abort going on;
  the abort's own EndTxn answered so fails the abort, which nothing re-enqueues
  and a second ``abortTransaction()`` cannot restart (ABORTING -> ABORTING is
  not a valid transition): only ``close()`` is left, the model's FATAL.
* *retriable*: CONCURRENT_TRANSACTIONS, COORDINATOR_NOT_AVAILABLE,
  NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS -> the request is retried.
* A failed produce batch (expired, INVALID_PRODUCER_EPOCH (KIP-588),
  TRANSACTION_ABORTABLE, INVALID_TXN_STATE, retries exhausted) -> abortable; with KIP-360 and TV<2
  it also sets ``epochBumpRequired``: after the abort the client sends
  InitProducerId(pid, epoch) and restarts its sequences.
* OUT_OF_ORDER_SEQUENCE_NUMBER -> abortable with KIP-360, fatal without.

The Sender sends one coordinator request at a time.  Under TV<2 a batch for a
partition not yet in the transaction waits for AddPartitionsToTxn; under TV2
the client sends no AddPartitionsToTxn (the leader adds the partition) and
EndTxn returns the bumped epoch.  Commit waits until every batch is
acknowledged (``flush``); abort drops undrained batches and waits for the
in-flight ones (``Sender.maybeSendAndPollTransactionalRequest``).
Without KIP-360 the sequence of a failed batch is reused by the next batch
(``adjustSequencesDueToFailedBatch``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.clients import producer as prod
from keos.model.codec import record
from keos.model.log.producer_state import next_sequence
from keos.model.protocol.errors import AUTHORIZATION_ERRORS, Errors
from keos.model.protocol.messages import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceResponse,
)
from keos.model.variants import KAFKA_SEQUENCE_SPACE

__all__ = [
    "COORDINATOR_ERROR_CLASSES",
    "FENCED_ERRORS",
    "ClientState",
    "ErrorClass",
    "TxnClient",
    "abortable_error",
    "coordinator_error_class",
    "fatal_error",
    "new_client",
    "resolve_sequences",
    "sequences_to_resolve",
]

RETRIABLE_COORDINATOR_ERRORS = (
    Errors.CONCURRENT_TRANSACTIONS,
    Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_COORDINATOR,
    Errors.COORDINATOR_LOAD_IN_PROGRESS,
)


#: Errors that mean "another instance took over this transactional.id" (``ProducerFencedException``).
FENCED_ERRORS = (Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH)


class ErrorClass:
    """How ``TransactionManager`` treats an error code in a coordinator response."""

    NONE = "none"
    RETRIABLE = "retriable"
    ABORTABLE = "abortable"
    ABORTABLE_IF_POSSIBLE = "abortable_if_possible"
    FENCED = "fenced"
    FATAL = "fatal"


def _classes(abortable: tuple[str, ...], if_possible: tuple[str, ...]) -> dict[str, str]:
    table = {e: ErrorClass.RETRIABLE for e in RETRIABLE_COORDINATOR_ERRORS}
    table.update({e: ErrorClass.FENCED for e in FENCED_ERRORS})
    table.update({e: ErrorClass.ABORTABLE for e in abortable})
    table.update({e: ErrorClass.ABORTABLE_IF_POSSIBLE for e in if_possible})
    table[Errors.NONE] = ErrorClass.NONE
    return table


_UNKNOWN_PRODUCER = (Errors.UNKNOWN_PRODUCER_ID, Errors.INVALID_PRODUCER_ID_MAPPING)

#: Per request, the class of each error its handler expects; any other error is fatal
#: (``InitProducerIdHandler``, ``AddPartitionsToTxnHandler``, ``EndTxnHandler`` in Kafka 3.9).
COORDINATOR_ERROR_CLASSES: dict[str, dict[str, str]] = {
    "InitProducerId": _classes((Errors.TRANSACTION_ABORTABLE,), ()),
    "AddPartitionsToTxn": {
        **_classes((Errors.TRANSACTION_ABORTABLE,), _UNKNOWN_PRODUCER),
        Errors.INVALID_TXN_STATE: ErrorClass.FATAL,
    },
    "AddOffsetsToTxn": _classes((Errors.TRANSACTION_ABORTABLE,), _UNKNOWN_PRODUCER),
    "EndTxn": _classes((Errors.TRANSACTION_ABORTABLE,), _UNKNOWN_PRODUCER),
}


def coordinator_error_class(request: str, error: str, unexpected_add_abortable: bool = True) -> str:
    """The :class:`ErrorClass` of ``error`` in the response to ``request``.

    An error the handler does not name is fatal ("Unexpected error in InitProducerIdResponse", "Unhandled error in
    EndTxnResponse", "Unexpected error in AddOffsetsToTxnResponse"), except in ``AddPartitionsToTxnHandler``: there it
    is a partition error (``hasPartitionErrors``, "Could not add partition ... due to unexpected error") and the
    handler ends with ``abortableError`` -- UNKNOWN_SERVER_ERROR of a ``__transaction_state`` record too large
    among them (``TransactionManager.java`` @1eb7644349cb L1426-1444).  ``unexpected_add_abortable`` off (weakened
    variant ``add_partitions_unexpected_error_fatal``): fatal there too, as the model had it before session 22.
    """
    table = COORDINATOR_ERROR_CLASSES[request]
    if error in table:
        return table[error]
    if request == "AddPartitionsToTxn" and unexpected_add_abortable:
        return ErrorClass.ABORTABLE
    return ErrorClass.FATAL


class ClientState:
    """``TransactionManager.State``."""

    UNINITIALIZED = "UNINITIALIZED"
    INITIALIZING = "INITIALIZING"
    READY = "READY"
    IN_TRANSACTION = "IN_TRANSACTION"
    COMMITTING = "COMMITTING_TRANSACTION"
    ABORTING = "ABORTING_TRANSACTION"
    ABORTABLE_ERROR = "ABORTABLE_ERROR"
    FATAL_ERROR = "FATAL_ERROR"


C = ClientState


@record
class TxnClient(NamedTuple):
    """One transactional producer instance.

    ``txn`` is the index of the application's current (or next) transaction;
    ``added`` the partitions the coordinator confirmed (TV2: produced to);
    ``pending_add`` partitions waiting for AddPartitionsToTxn; ``fenced``: the
    client is in FATAL_ERROR because of a ``ProducerFencedException``.
    """

    transactional_id: int
    data: prod.Producer
    state: str = C.UNINITIALIZED
    tc_connection: int = 0
    inflight: bool = False
    txn: int = 0
    added: tuple[int, ...] = ()
    pending_add: tuple[int, ...] = ()
    epoch_bump_required: bool = False
    fenced: bool = False


def new_client(transactional_id: int, partitions: int) -> TxnClient:
    """A producer before ``initTransactions``."""
    return TxnClient(transactional_id, prod.new_producer(partitions))


# -- application API ------------------------------------------------------------------------------


def init_transactions(c: TxnClient) -> TxnClient | None:
    """``initTransactions()``."""
    return c._replace(state=C.INITIALIZING) if c.state == C.UNINITIALIZED else None


def begin_transaction(c: TxnClient, transactions: int) -> TxnClient | None:
    """``beginTransaction()`` (local), while the application has transactions left."""
    if c.state != C.READY or c.txn >= transactions:
        return None
    return c._replace(state=C.IN_TRANSACTION, added=(), pending_add=())


def send(c: TxnClient, partition: int, rid: int, tv: int) -> TxnClient:
    """``send()``: the record is batched; under TV<2 its partition awaits AddPartitionsToTxn."""
    c = c._replace(data=prod.send(c.data, partition, rid))
    if tv < 2 and partition not in c.added and partition not in c.pending_add:
        c = c._replace(pending_add=tuple(sorted((*c.pending_add, partition))))
    return c


def send_rejected(c: TxnClient, tv: int, kip_360: bool, aborts: bool = True) -> TxnClient:
    """``send()`` failed synchronously: ``KafkaProducer.doSend`` caught an ``ApiException`` before the record reached
    the accumulator (``RecordTooLargeException``, ``TopicAuthorizationException``, ``TimeoutException``) and returned
    it as a failed future; the application's send call returns and the record is lost to this transaction.

    Since KAFKA-9279 (PR #11508, Kafka 3.2; apache/kafka ``KafkaProducer.java`` ``doSend``'s ``catch (ApiException
    e)`` and ``TransactionManager.maybeTransitionToErrorState`` @1eb7644349cb) the producer then goes through
    ``maybeTransitionToErrorState``: a transactional producer's transaction becomes abortable (``epochBumpRequired``
    when ``canBumpEpoch() && !isCompleting()``), so ``commitTransaction`` throws and the transaction cannot commit
    without the record.  ``aborts`` off is Kafka before 3.2: the state is unchanged and the transaction may commit
    with the record missing (weakened variant ``send_error_ignored``).
    """
    c = c._replace(data=c.data._replace(next_record=c.data.next_record + 1))
    return _abortable(c, tv, kip_360) if aborts else c


def commit_transaction(c: TxnClient) -> TxnClient | None:
    """``commitTransaction()``."""
    return c._replace(state=C.COMMITTING) if c.state == C.IN_TRANSACTION else None


def abort_transaction(c: TxnClient) -> TxnClient | None:
    """``abortTransaction()``: undrained batches are dropped."""
    if c.state not in (C.IN_TRANSACTION, C.ABORTABLE_ERROR):  # no branch: the application aborts an open one only
        return None
    return _drop_undrained(c)._replace(state=C.ABORTING)


def _drop_undrained(c: TxnClient) -> TxnClient:
    batches = tuple(b for b in c.data.batches if b.has_sequence)
    pending = c.pending_add if c.inflight else ()
    return c._replace(data=c.data._replace(batches=batches), pending_add=pending)


# -- the Sender's coordinator requests -----------------------------------------------------------------


def next_txn_request(
    c: TxnClient, index: int, tv: int, kip_360: bool, resolve: bool = True
) -> tuple[TxnClient, Any] | None:
    """The next coordinator request (``TransactionManager.nextRequest``), or a local completion.

    Returns ``(client, request)``; ``request`` is ``None`` when the client
    completes a transaction that never reached the coordinator.
    """
    if c.inflight:
        return None
    conn = c.tc_connection
    sent = c._replace(inflight=True)
    if c.state == C.INITIALIZING:
        pid, epoch = (c.data.producer_id, c.data.producer_epoch) if kip_360 else (-1, -1)
        return sent, InitProducerIdRequest(index, conn, c.transactional_id, pid, epoch)
    # ABORTING keeps only the partitions of an AddPartitionsToTxn that was in flight; if it was lost (a
    # reset connection, a coordinator failover) the handler re-enqueues it, as Kafka's does on a disconnect.
    if c.state in (C.IN_TRANSACTION, C.COMMITTING, C.ABORTING) and c.pending_add:
        return sent, AddPartitionsToTxnRequest(
            index, conn, c.transactional_id, c.data.producer_id, c.data.producer_epoch, c.pending_add
        )
    if c.state in (C.COMMITTING, C.ABORTING) and not c.data.batches and not c.pending_add:
        if not c.added:
            return _finish(c, tv, kip_360, resolve=resolve), None
        committed = c.state == C.COMMITTING
        return sent, EndTxnRequest(
            index, conn, c.transactional_id, c.data.producer_id, c.data.producer_epoch, committed
        )
    return None


def _finish(
    c: TxnClient, tv: int, kip_360: bool, pid: int = -1, epoch: int = -1, resolve: bool = True
) -> TxnClient:
    """The transaction is over: next transaction, fresh sequences if the epoch changed.

    ``TransactionManager.completeTransaction`` (trunk @1eb7644349cb) moves to READY (INITIALIZING when an epoch
    bump is owed) and clears the transaction's partitions; it leaves every ``TxnPartitionEntry`` as it is -- an
    unresolved sequence was settled before the EndTxn could be sent (:func:`resolve_sequences`).  ``resolve`` off
    (weakened variant ``txn_unresolved_reset_at_end``): the partitions the client never resolved restart after
    their last acknowledged sequence here, as the model did before.
    """
    data = c.data
    if pid >= 0 and (pid, epoch) != (data.producer_id, data.producer_epoch):
        data = _fresh_data(data, pid, epoch)
    elif resolve:
        data = data._replace(epoch_bump_required=False)
    else:  # no branch: variant txn_unresolved_reset_at_end only
        parts = tuple(
            e._replace(
                next_sequence=next_sequence(e.last_acked_sequence, 1, KAFKA_SEQUENCE_SPACE),
                unresolved=False,
                unresolved_sequence=-1,
                rewrite=False,
            )
            if e.unresolved or e.rewrite
            else e
            for e in data.partitions
        )
        data = data._replace(partitions=parts, epoch_bump_required=False)
    bump = c.epoch_bump_required and kip_360 and tv < 2
    state = C.INITIALIZING if bump else C.READY
    return c._replace(data=data, state=state, txn=c.txn + 1, added=(), pending_add=(), inflight=False)


def sequences_to_resolve(c: TxnClient, wait_inflight: bool = True) -> tuple[int, ...]:
    """The partitions ``maybeResolveSequences`` settles now: an unresolved sequence and no sequenced batch of the
    partition left (``!hasInflightBatches``).  ``wait_inflight`` off (weakened variant
    ``unresolved_settled_before_inflight_answered``): also a partition whose later batches are still out."""
    d = c.data
    ready = tuple(not wait_inflight or not prod.sequenced_outstanding(d, q) for q in range(len(d.partitions)))
    return tuple(q for q, e in enumerate(d.partitions) if e.unresolved and ready[q])


def resolve_sequences(
    c: TxnClient, tv: int, kip_360: bool, wait_inflight: bool = True
) -> tuple[TxnClient, tuple[str, ...]]:
    """``TransactionManager.maybeResolveSequences`` for a transactional producer (trunk @1eb7644349cb).

    The Sender runs it first in every ``runOnce``, before it sends a coordinator request or drains a batch.  For
    each partition of :func:`sequences_to_resolve`: if the last acknowledged sequence is the one before the next
    sequence (``isNextSequence``: a later batch succeeded, so the expired one was written) the partition is
    resolved; otherwise the client cannot tell whether the expired batch is in the log and -- a transactional
    producer cannot re-sequence on its own -- with ``canBumpEpoch()`` (KIP-360) it sets ``epochBumpRequired``
    and moves to an abortable error (``transitionToAbortableError``, skipped while ABORTING_TRANSACTION: the abort
    then ends with InitProducerId(pid, epoch)); without it the producer is fatal ("It isn't safe to continue").
    Either way the partition leaves ``partitionsWithUnresolvedSequences``.
    """
    parts = list(c.data.partitions)
    lost = False
    for q in sequences_to_resolve(c, wait_inflight):
        e = parts[q]
        if e.next_sequence != e.last_acked_sequence + 1:  # isNextSequence(sequenceNumber(tp)) (no ack: -1)
            lost = True
        parts[q] = e._replace(unresolved=False, unresolved_sequence=-1)
    c = c._replace(data=c.data._replace(partitions=tuple(parts)))
    if not lost:
        return c, ("sequence_resolved",)
    if not kip_360:
        return _fatal(c), ("sequence_unresolved", "client_fatal")
    if c.state == C.ABORTING and tv < 2:  # epochBumpRequired is set first, with no isCompleting() test
        c = c._replace(epoch_bump_required=True)
    return _abortable(c, tv, kip_360), ("sequence_unresolved", "epoch_bump_requested")


def _fresh_data(data: prod.Producer, pid: int, epoch: int) -> prod.Producer:
    fresh = prod.new_producer(len(data.partitions), data.connection, data.next_record)
    # the requests of batches expired in flight stay with NetworkClient: their answers still reach completeBatch
    return fresh._replace(producer_id=pid, producer_epoch=epoch, batches=data.batches, expired=data.expired)


def _fatal(c: TxnClient, fenced: bool = False) -> TxnClient:
    if c.state == C.FATAL_ERROR:
        return c._replace(inflight=False)
    return c._replace(state=C.FATAL_ERROR, inflight=False, fenced=fenced)


def _abortable(c: TxnClient, tv: int, kip_360: bool, bump: bool = True) -> TxnClient:
    """``transitionToAbortableError``, after ``epochBumpRequired`` is set when ``bump`` and KIP-360 under TV < 2
    (``canBumpEpoch``) allow it; skipped while ABORTING_TRANSACTION (and a fatal producer stays fatal).

    Under TV2 the client never asks for the bump: KAFKA-17898 (PR #17849, Kafka 4.0; the review of KAFKA-14562's
    client half, PR #17402) made ``canBumpEpoch`` false for a transactional producer whose coordinator runs TV2
    (EndTxn v5+: only the coordinator bumps), while every path that sets ``epochBumpRequired`` under TV1 -- a
    failed batch (``maybeTransitionToErrorState``), ``abortableErrorIfPossible``, an unresolved sequence in
    ``maybeResolveSequences`` -- still makes the transaction abortable.  The abort's EndTxn then returns the bumped
    epoch (or the next producer id) and the client restarts its sequences from it (``resetSequenceNumbers``,
    :func:`_finish`): no InitProducerId follows the abort.
    """
    if c.state in (C.FATAL_ERROR, C.ABORTING):
        return c
    required = c.epoch_bump_required or (bump and kip_360 and tv < 2)
    return _drop_undrained(c._replace(state=C.ABORTABLE_ERROR, epoch_bump_required=required))


def handle_txn_response(
    c: TxnClient, resp: Any, tv: int, kip_360: bool, resolve: bool = True, unexpected_add_abortable: bool = True
) -> tuple[TxnClient, str, tuple[str, ...]]:
    """Handle a coordinator response; returns the client, the transaction outcome
    (``"committed"``, ``"aborted"`` or ``""``) and events (``resolve``: :func:`_finish`; ``unexpected_add_abortable``:
    :func:`coordinator_error_class`)."""
    if resp.connection != c.tc_connection or not c.inflight:
        return c, "", ("stale_response",)
    c = c._replace(inflight=False)
    err = resp.error
    request = type(resp).__name__.removesuffix("Response")
    known = request in COORDINATOR_ERROR_CLASSES
    cls = coordinator_error_class(request, err, unexpected_add_abortable) if known else ErrorClass.NONE
    if cls == ErrorClass.RETRIABLE:
        return c, "", (f"client_error:{err}", "retry")
    if err in AUTHORIZATION_ERRORS:
        return authorization_error(c, resp, tv, kip_360)
    # abortableErrorIfPossible sets epochBumpRequired (canBumpEpoch), abortableError (TRANSACTION_ABORTABLE) does not
    if_possible = cls == ErrorClass.ABORTABLE_IF_POSSIBLE
    if if_possible:
        cls = ErrorClass.ABORTABLE if kip_360 else ErrorClass.FATAL
    if cls == ErrorClass.ABORTABLE and c.state == C.ABORTING:
        if isinstance(resp, AddPartitionsToTxnResponse):
            # transitionToAbortableError skips an abortable error while aborting: the abort goes on (its
            # EndTxn is queued already), the failed partitions are simply not in the transaction
            bump = if_possible and tv < 2  # abortableErrorIfPossible (KIP-360 here) sets epochBumpRequired first
            return _abortable_while_aborting(c, resp, bump), "", (f"client_error:{err}", "abortable_skipped")
        # EndTxn(ABORT) answered so: the abort's own result fails and nothing re-enqueues it; a second
        # abortTransaction() is refused (ABORTING -> ABORTING is no valid transition): only close() is left
        cls = ErrorClass.FATAL
    if cls in (ErrorClass.FENCED, ErrorClass.FATAL):
        event = "client_fenced" if cls == ErrorClass.FENCED else "client_fatal"
        return _fatal(c, cls == ErrorClass.FENCED), "", (f"client_error:{err}", event)
    if cls == ErrorClass.ABORTABLE:
        return _abortable(c, tv, kip_360, if_possible), "", (f"client_error:{err}", "client_abortable")
    if isinstance(resp, InitProducerIdResponse):
        data = _fresh_data(c.data, resp.producer_id, resp.producer_epoch)._replace(batches=())
        return c._replace(data=data, state=C.READY, epoch_bump_required=False), "", ("client_initialized",)
    if isinstance(resp, AddPartitionsToTxnResponse):
        added = tuple(sorted(set(c.added) | set(resp.partitions)))
        pending = tuple(p for p in c.pending_add if p not in resp.partitions)
        return c._replace(added=added, pending_add=pending), "", ()
    # the only response left is EndTxn's (consume-transform-produce answers AddOffsetsToTxn itself)
    outcome = "committed" if c.state == C.COMMITTING else "aborted"
    pid, epoch = (resp.producer_id, resp.producer_epoch) if tv >= 2 else (-1, -1)
    return _finish(c, tv, kip_360, pid, epoch, resolve), outcome, (f"client_txn_{outcome}",)


def _abortable_while_aborting(c: TxnClient, resp: AddPartitionsToTxnResponse, bump: bool) -> TxnClient:
    """An AddPartitionsToTxn that was in flight when the abort began, answered with an abortable error.

    ``TransactionManager.transitionToAbortableError`` (Kafka 4.0-SNAPSHOT @1eb7644349cb, since KAFKA-5427)
    skips the transition while ABORTING_TRANSACTION; ``abortableErrorIfPossible`` (``bump``: UNKNOWN_PRODUCER_ID /
    INVALID_PRODUCER_ID_MAPPING with KIP-360 under TV < 2) has set ``epochBumpRequired`` first, ``abortableError``
    (TRANSACTION_ABORTABLE, an unexpected partition error) leaves it.  The partitions were not added, and the
    model's Sender does not re-send them (its re-send of a pending AddPartitionsToTxn stands for a request that
    got no answer).
    """
    pending = tuple(p for p in c.pending_add if p not in resp.partitions)
    return c._replace(pending_add=pending, epoch_bump_required=c.epoch_bump_required or bump)


def handle_produce_response(
    c: TxnClient,
    resp: ProduceResponse,
    config: Any,
    tv: int,
    kip_360: bool,
    outside_completion: bool = True,
    adjust_failed: bool = True,
    storage_error_known: bool = True,
    failed_batch_errs: bool = True,
    retriable_only: bool = True,
) -> tuple[TxnClient, tuple[int, ...], tuple[str, ...]]:
    """The data path's response; a failed batch makes the transaction abortable (or fatal) (``adjust_failed``,
    ``storage_error_known``, ``retriable_only``: :func:`model.clients.producer.complete_batch`).

    ``Sender.failBatch`` hands every batch the Sender gives up to ``TransactionManager.handleFailedBatch``
    (trunk @1eb7644349cb), whose ``maybeTransitionToErrorState`` makes the transaction abortable: a commit must
    not go through once a record of it failed.  ``failed_batch_errs`` off (weakened variant
    ``failed_batch_leaves_transaction``): the batch's future fails but the transaction manager is not told -- the
    shape of KAFKA-5385, where batches expired in the accumulator skipped ``failBatch`` and commits went through.
    """
    out = prod.handle_produce_response(
        c.data,
        resp,
        config,
        KAFKA_SEQUENCE_SPACE,
        transactional=True,
        adjust_failed=adjust_failed,
        storage_error_known=storage_error_known,
        retriable_only=retriable_only,
    )
    c = c._replace(data=out.producer._replace(epoch_bump_required=False))
    if not out.failed:
        return c, out.acked, out.events
    if not failed_batch_errs:  # no branch: variant failed_batch_leaves_transaction only
        return c, out.acked, (*out.events, "batch_failed")
    failed = classify_batch_failure(c, resp.error, tv, kip_360, outside_completion)
    return failed, out.acked, (*out.events, "batch_failed")


def classify_batch_failure(
    c: TxnClient, error: str, tv: int, kip_360: bool, outside_completion: bool = True
) -> TxnClient:
    """``TransactionManager.handleFailedBatch`` / ``maybeTransitionToErrorState`` (trunk @1eb7644349cb).

    Only ``ClusterAuthorizationException``, ``TransactionalIdAuthorizationException``, ``ProducerFencedException``
    and ``UnsupportedVersionException`` are fatal; every other exception of a failed batch makes a transactional
    producer abortable -- INVALID_TXN_STATE (a partition the verification finds outside the transaction,
    ``InvalidTxnStateException``) and INVALID_PRODUCER_EPOCH (``InvalidProducerEpochException``, KIP-588)
    included.  Without KIP-360 an OUT_OF_ORDER_SEQUENCE_NUMBER cannot be repaired by a bump: fatal.  With it (TV < 2)
    ``epochBumpRequired`` is set unless the producer is completing a transaction (``!isCompleting()``).
    """
    if error in FATAL_AUTHORIZATION_ERRORS:
        return _fatal(c)
    if error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and not kip_360:
        return _fatal(c)
    # canBumpEpoch() && !isCompleting(): no bump owed for a batch failing while COMMITTING_TRANSACTION (ABORTING
    # skips the transition); ``outside_completion`` off: weakened variant failed_batch_bumps_while_committing
    return _abortable(c, tv, kip_360, c.state != C.COMMITTING or not outside_completion)


def abortable_error(c: TxnClient) -> TxnClient:
    """An abortable error outside the data path, with no epoch bump.

    ``TxnOffsetCommitHandler``: UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION (a
    ``CommitFailedException``), TRANSACTION_ABORTABLE (KIP-447).
    """
    if c.state in (C.FATAL_ERROR, C.ABORTING):
        return c
    return _drop_undrained(c._replace(state=C.ABORTABLE_ERROR))


def fatal_error(c: TxnClient, error: str = Errors.UNKNOWN_SERVER_ERROR) -> TxnClient:
    """A fatal error outside the coordinator requests (``TxnOffsetCommitHandler``, ``AddOffsetsToTxnHandler``).

    PRODUCER_FENCED / INVALID_PRODUCER_EPOCH are a ``ProducerFencedException``.
    """
    return _fatal(c, error in FENCED_ERRORS)


def txn_request_timeout(c: TxnClient) -> TxnClient | None:
    """``request.timeout.ms`` for the coordinator request: new connection, retry later."""
    if not c.inflight:  # no branch: the callers time out (or reset) a connection with a request on it only
        return None
    return c._replace(inflight=False, tc_connection=c.tc_connection + 1)


#: Errors that end a producer only without KIP-360 (``abortableErrorIfPossible`` / ``handleFailedBatch``:
#: with KIP-360 the client bumps its epoch instead).
PRE_KIP_360_FATAL = (  # no mutate: the table of a judge (healthy_producer_not_failed exempts these), not a rule
    Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
    Errors.UNKNOWN_PRODUCER_ID,
    Errors.INVALID_PRODUCER_ID_MAPPING,
)

#: ``maybeTransitionToErrorState``: a batch failed with one of these makes the producer fatal.
FATAL_AUTHORIZATION_ERRORS = (Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Errors.CLUSTER_AUTHORIZATION_FAILED)


def authorization_error(c: TxnClient, resp: Any, tv: int, kip_360: bool) -> tuple[TxnClient, str, tuple[str, ...]]:
    """A coordinator's *_AUTHORIZATION_FAILED answer, as ``TransactionManager`` handles it (Kafka 4.0, e512b63).

    * InitProducerId: TRANSACTIONAL_ID / CLUSTER_AUTHORIZATION_FAILED are abortable
      and the Sender then moves the producer back to UNINITIALIZED, so the
      application may call ``initTransactions`` again once the ACL is fixed
      (KAFKA-13668, PR #12149).
    * AddPartitionsToTxn: TOPIC_AUTHORIZATION_FAILED is abortable (the batches of
      the unauthorized topic fail); TRANSACTIONAL_ID_AUTHORIZATION_FAILED is fatal.
    * AddOffsetsToTxn / TxnOffsetCommit: GROUP_AUTHORIZATION_FAILED is abortable;
      TRANSACTIONAL_ID_AUTHORIZATION_FAILED is fatal.
    * EndTxn: TRANSACTIONAL_ID_AUTHORIZATION_FAILED is fatal.

    Any other authorization code is one the request's handler does not name ("Unexpected error in
    ...Response"): fatal.  (AddOffsetsToTxn / TxnOffsetCommit are answered in ``model.systems.eos``.)
    """
    err = resp.error
    events: tuple[str, ...] = (f"client_error:{err}",)
    if isinstance(resp, InitProducerIdResponse) and err in FATAL_AUTHORIZATION_ERRORS:
        return c._replace(state=C.UNINITIALIZED, inflight=False), "", (*events, "client_uninitialized")
    if isinstance(resp, AddPartitionsToTxnResponse) and err == Errors.TOPIC_AUTHORIZATION_FAILED:
        pending = tuple(p for p in c.pending_add if p not in resp.partitions)
        return abortable_error(c._replace(pending_add=pending)), "", (*events, "client_abortable")
    return _fatal(c), "", (*events, "client_fatal")


# The Sender's guards a search asks of every client in every state, cached by their arguments' values
# (model/memo.py); rebound here, after every definition, so that the lines above keep their positions (mutant ids
# hash positions).
from keos.model.memo import memoised  # noqa: E402  (here, not at the top: see above)

sequences_to_resolve = memoised(sequences_to_resolve)  # no mutate: a cache of a pure function
next_txn_request = memoised(next_txn_request)  # no mutate: a cache of a pure function
