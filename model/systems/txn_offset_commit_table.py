"""Kafka's answer table for a TxnOffsetCommit at the group coordinator: the rows its checks run in, each a
condition on what the request found and the one error Kafka answers when it holds.

A judge, not a handler (property ``coordinator_answers_per_kafka_table``, label ``answer_table:TxnOffsetCommit``).
``commits_fenced_exactly`` judges the member/generation rows alone; this table is the *whole* chain, so a
handler whose checks run in another order (the load check before the verification, the member checks before
the transaction's), that answers the transaction coordinator's verdict untranslated (PRODUCER_FENCED where the
client expects INVALID_PRODUCER_EPOCH), skips a row, or stages the offset on a refusal (or answers NONE without
staging it), is caught on every TxnOffsetCommit the eos scenarios drive.

Rows, first match wins, in the order of Kafka 4.0 (apache/kafka trunk ``1eb7644349cb``, the model's reading):

1. ``verification`` -- ``GroupCoordinatorService.commitTransactionalOffsets`` schedules a transactional write
   (``CoordinatorRuntime.scheduleTransactionalWriteOperation``) that first runs
   ``CoordinatorPartitionWriter.maybeStartTransactionVerification`` (KIP-890 part 1, KAFKA-15449) unless the
   producer already has a transaction of the request's epoch open on the group's ``__consumer_offsets``
   partition (``ProducerStateManager`` / ``hasOngoingTransaction(producerId, producerEpoch)``, the epoch since
   KAFKA-14563).  The verdict is the transaction coordinator's own table
   (:mod:`~keos.model.coordinator.transaction.answer_table`: ``handleVerifyPartitionsInTransaction`` on TV1,
   the implicit ``AddOffsetsToTxn``-style add on TV2, KIP-890 part 2); ``AddPartitionsToTxnManager`` turns
   PRODUCER_FENCED into INVALID_PRODUCER_EPOCH, every other code passes through
   (``CoordinatorOperationExceptionHelper.handleOperationException``, TxnOffsetCommit v4+).  Verification runs
   on TV2 always, on TV1 when ``transaction.partition.verification.enable`` (the configured value is read);
2. ``loading`` -- the write event finds the shard still loading (``CoordinatorRuntime.withActiveContextOrThrow``):
   COORDINATOR_LOAD_IN_PROGRESS;
3. ``member`` -- ``OffsetMetadataManager.validateTransactionalOffsetCommit`` -> ``ClassicGroup.validateOffsetCommit
   (isTransactional=true)``: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION (KIP-447; no REBALANCE_IN_PROGRESS for a
   TxnOffsetCommit), stated once in :func:`~keos.model.systems.commit_fencing.kafka_answer` and used here;
4. ``append`` -- the records' append fails: COORDINATOR_NOT_AVAILABLE, nothing staged;
5. ``producer_epoch`` -- ``ProducerAppendInfo.checkProducerEpoch`` on the group's partition: an epoch below the
   stored one is INVALID_PRODUCER_EPOCH, nothing staged;
6. otherwise NONE, and the offset is staged (``pendingTransactionalOffsets``) until the marker.

Re-read against Kafka's source (apache/kafka ``1eb7644349cb``, this session): the order holds.
``GroupCoordinatorService.commitTransactionalOffsets`` calls ``CoordinatorRuntime.scheduleTransactionalWriteOperation``,
which runs ``partitionWriter.maybeStartTransactionVerification`` *before* it enqueues the ``CoordinatorWriteEvent``
(row 1 before row 2); the event's ``withActiveContextOrThrow`` raises CoordinatorLoadInProgressException for a loading
shard (row 2) before ``commitTransactionalOffset`` validates the member (row 3); the records then go through
``CoordinatorPartitionWriter.append`` (``ReplicaManager.appendRecords`` with acks=1): a partition the broker no longer
hosts fails there before the log is touched (UNKNOWN_TOPIC_OR_PARTITION -> COORDINATOR_NOT_AVAILABLE, row 4), and
only the local log append runs ``ProducerAppendInfo.checkProducerEpoch`` (row 5).  Every exception is translated by
``CoordinatorOperationExceptionHelper.handleOperationException`` (NOT_ENOUGH_REPLICAS / REQUEST_TIMED_OUT /
UNKNOWN_TOPIC_OR_PARTITION -> COORDINATOR_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER / KAFKA_STORAGE_ERROR ->
NOT_COORDINATOR, NETWORK_EXCEPTION of a verification -> COORDINATOR_LOAD_IN_PROGRESS); the verification's verdict
passes ``AddPartitionsToTxnManager`` first (PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE ->
INVALID_TXN_STATE for TxnOffsetCommit below v5, a version the model's client does not send).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.coordinator.transaction.answer_table import Ask, kafka_answer
from keos.model.protocol.answer_rows import Row, first_answer, mismatch_label
from keos.model.protocol.errors import Errors
from keos.model.systems.commit_fencing import kafka_answer as member_answer

__all__ = ["PLAIN_ROWS", "ROWS", "OffsetAsk", "PlainOffsetAsk", "kafka_offset_answer", "offset_table_mismatch",
           "plain_offset_table_mismatch"]


class OffsetAsk(NamedTuple):
    """What the judge reads of a TxnOffsetCommit and the state it found (before the handler ran)."""

    md: Any  # the transaction coordinator's entry for the transactional id (None: none)
    pid: int
    epoch: int
    partition: int  # the group's __consumer_offsets partition (as the transaction coordinator names it)
    tv: int
    cfg: Any  # the transaction coordinator's configuration (CoordinatorConfig)
    verification_enabled: bool  # transaction.partition.verification.enable (a configuration, read)
    open_epoch: int  # epoch of the producer's open transaction on the group's partition (-1: none)
    stored_epoch: int  # the producer's epoch stored at the group's partition (-1: no entry)
    loading: bool
    member: str
    known: bool
    generation: int
    group_generation: int
    group_state: str
    append_ok: bool
    txn_loading: bool = False  # the transaction coordinator is loading the id's __transaction_state partition
    #: TV2: the transaction coordinator's ``__transaction_state`` append of the implicit add succeeded (a verification
    #: whose add writes nothing -- the partition already in the transaction -- cannot fail it)
    txn_append_ok: bool = True


#: ``AddPartitionsToTxnManager``'s translation of the verification's verdict for the TxnOffsetCommit's client, stated
#: here on its own (the judge does not read the handler's ``group_coordinator.VERIFICATION_ERRORS``, or a defect in
#: that table would be judged by itself): PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH, every other code passes
#: (Kafka trunk 1eb7644349cb, ``core/.../server/AddPartitionsToTxnManager.scala``).
KAFKA_VERDICT_TRANSLATION: dict[str, str] = {  # no mutate: the judge's table, not a rule
    Errors.PRODUCER_FENCED: Errors.INVALID_PRODUCER_EPOCH,
}


def _verification(a: OffsetAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    if a.tv < 2 and not a.verification_enabled:
        return None
    if a.open_epoch >= 0 and a.open_epoch == a.epoch:
        return None
    kind = "AddOffsetsToTxn" if a.tv >= 2 else "VerifyPartition"
    verdict, target = kafka_answer(Ask(kind, a.md, a.pid, a.epoch, False, (a.partition,), a.tv, a.cfg, a.txn_loading))
    if target and not a.txn_append_ok:
        # TV2's implicit add writes __transaction_state; a failed write (NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT) is
        # COORDINATOR_NOT_AVAILABLE (TransactionStateManager.appendTransactionToLog), passed through unchanged
        verdict = Errors.COORDINATOR_NOT_AVAILABLE
    return None if verdict == Errors.NONE else KAFKA_VERDICT_TRANSLATION.get(verdict, verdict)


def _loading(a: OffsetAsk | PlainOffsetAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    return Errors.COORDINATOR_LOAD_IN_PROGRESS if a.loading else None


def _member(a: OffsetAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    error = member_answer("TxnOffsetCommit", a.known, a.generation, a.group_generation, a.group_state, "", None,
                          a.member)
    return None if error == Errors.NONE else error


def _append(a: OffsetAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    return None if a.append_ok else Errors.COORDINATOR_NOT_AVAILABLE


def _producer_epoch(a: OffsetAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    return Errors.INVALID_PRODUCER_EPOCH if a.epoch < a.stored_epoch else None


#: The rows in Kafka's order: (name, the row's answer or None when the request passes it).
ROWS: tuple[Row, ...] = (  # no mutate: the judge's table, not a rule
    ("verification", _verification),
    ("loading", _loading),
    ("member", _member),
    ("append", _append),
    ("producer_epoch", _producer_epoch),
)


class PlainOffsetAsk(NamedTuple):
    """What the judge reads of a plain OffsetCommit (commitAsync beside the transactions) and the group it found."""

    loading: bool
    member: str
    known: bool
    generation: int
    group_generation: int
    group_state: str


def _plain_member(a: PlainOffsetAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    error = member_answer("OffsetCommit", a.known, a.generation, a.group_generation, a.group_state, "", None,
                          a.member)
    return None if error == Errors.NONE else error


#: A plain OffsetCommit's rows (Kafka trunk ``1eb7644349cb``): ``GroupCoordinatorService.commitOffsets`` schedules a
#: write event whose ``withActiveContextOrThrow`` answers a LOADING shard COORDINATOR_LOAD_IN_PROGRESS before
#: ``OffsetMetadataManager.commitOffset`` validates the member (``ClassicGroup.validateOffsetCommit(isTransactional=
#: false)``: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS); otherwise NONE and the offset is committed.
PLAIN_ROWS: tuple[Row, ...] = (  # no mutate: the judge's table, not a rule
    ("loading", _loading),
    ("member", _plain_member),
)


def plain_offset_table_mismatch(  # no mutate: the judge
    a: PlainOffsetAsk, error: str, committed: bool
) -> str | None:
    """A ghost label if the group coordinator answered a plain OffsetCommit ``a`` with ``error`` (and committed the
    offset or not) where :data:`PLAIN_ROWS` say otherwise."""
    return mismatch_label("OffsetCommit", PLAIN_ROWS, a, "committed", error, committed)


def kafka_offset_answer(a: OffsetAsk) -> tuple[str, str, bool]:  # no mutate: the judge (a property), not a rule
    """(error, the row that answered, whether the offset is staged)."""
    return first_answer(ROWS, a, "staged")


def offset_table_mismatch(a: OffsetAsk, error: str, staged: bool) -> str | None:  # no mutate: the judge
    """A ghost label if the group coordinator answered ``a`` with ``error`` (and staged the offset or not) where
    Kafka's table says otherwise."""
    return mismatch_label("TxnOffsetCommit", ROWS, a, "staged", error, staged)
