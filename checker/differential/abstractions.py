"""Named abstractions: differences between the model and Kafka that the model makes on purpose.

Each entry names one way the model deliberately simplifies a Kafka handler, says why, cites the
Kafka code path (trunk ``1eb7644``, 2024-10-25, the shared 4.0.0-SNAPSHOT build) and matches the
differences it explains.  A difference an entry matches is reported under the entry's name and
does not fail the run; any other difference does (exit 1).  The README's "Modelling choices"
lists the same entries; ``tests/test_differential.py`` replays each entry's case on Kafka.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from keos.checker.differential.cases import Case, step
from keos.model.coordinator.transaction.transaction_state import TransactionState

__all__ = ["ABSTRACTIONS", "Abstraction", "classify"]


class Abstraction(NamedTuple):
    """One deliberate simplification, the differences it accounts for, and a case that shows it."""

    name: str
    handler: str
    summary: str
    kafka_code: str
    matches: Callable[[Any, Any, Any], bool]  # (difference.what, model value, kafka value)
    case: Case
    example: tuple[Any, Any]  # (model answer, kafka answer) the case shows
    #: where in a case the difference may show (case, index of the differing step); None: anywhere
    where: Callable[[Case, int], bool] | None = None
    #: what differs in the example: ``answer`` or an observer (``runner.OBSERVERS``)
    what: str = "answer"
    #: the client's transaction version the case needs (2: a broker with ``transaction.version`` 2)
    transaction_version: int = 1


def _answer(model: tuple[str, ...], kafka: tuple[str, ...]) -> Callable[[Any, Any, Any], bool]:
    return lambda what, m, k: what == "answer" and m == model and k == kafka


def _errors(model: set[str], kafka: set[str]) -> Callable[[Any, Any, Any], bool]:
    return lambda what, m, k: (what == "answer" and len(m) == 1 and len(k) == 1 and m != k
                               and m[0] in model and k[0] in kafka)


_INIT = step("init", transactional=True, pid="-1", epoch=-1)


def _model_before(case: Case, index: int, transaction_version: int = 1) -> Any:
    """The model after the case's steps before ``index``.  Up to the first difference the model agreed with
    Kafka on every answer and every observation (logs, producer state, coordinator state), so its state there
    is what Kafka's showed."""
    from keos.checker.differential.cases import execute_model
    from keos.checker.differential.sides import ModelSide

    model = ModelSide(transaction_version)
    for s in case.steps[:index]:
        execute_model(model, s)
        model.settle()
    return model


def _empty_log(case: Case, index: int) -> bool:
    """The differing step is a Produce to a partition that never held a record (data or marker)."""
    s = case.steps[index]
    return s.kind == "produce" and not _model_before(case, index).leaders[s.get("partition")].log


def _open_at_older_epoch(case: Case, index: int) -> bool:
    """The differing step is a transactional Produce or a TxnOffsetCommit at an epoch above the one of the
    transaction its producer id has open on that partition (the data partition's producer state, or the group's
    ``__consumer_offsets`` partition's)."""
    s = case.steps[index]
    pid = s.get("pid", "")
    if not pid.startswith("p"):
        return False
    model = _model_before(case, index)
    if s.kind == "produce" and s.get("transactional"):
        entry = model.leaders[s.get("partition")].entry(model.pid_int(pid))
    elif s.kind == "txn_offset_commit":
        entry = model.offsets.offsets_log.entry(model.pid_int(pid))
    else:
        return False
    return entry is not None and entry.current_txn_first_offset >= 0 and entry.producer_epoch < s.get("epoch")


def _after_a_lower_verified_sequence(case: Case, index: int) -> bool:
    """The differing step is a Produce (transactional or not: ``checkSequence`` reads the verification entry
    either way) and an earlier transactional Produce of the same producer id to the same partition, with a lower
    first sequence, may have started a verification there."""
    s = case.steps[index]
    if s.kind != "produce":
        return False
    return any(e.kind == "produce" and e.get("transactional") and e.get("pid") == s.get("pid")
               and e.get("partition") == s.get("partition") and e.get("base_sequence") < s.get("base_sequence")
               for e in case.steps[:index])


_NO_TXN = (TransactionState.EMPTY, TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT)


def _tv2_end_of_no_transaction(case: Case, index: int) -> bool:
    """The differing step is an EndTxn at the entry's current epoch while the TV2 model's transaction is Empty or
    Complete* (the empty abort, or a commit at the bumped epoch)."""
    s = case.steps[index]
    if s.kind != "end_txn":
        return False
    md = _model_before(case, index, 2).md
    return md is not None and md.state in _NO_TXN and s.get("epoch") == md.producer_epoch


def _tv2_retry_of_other_end(case: Case, index: int) -> bool:
    """The differing step is an EndTxn(commit) at the epoch before the bump of a completed TV2 abort."""
    s = case.steps[index]
    if s.kind != "end_txn" or not s.get("committed"):
        return False
    md = _model_before(case, index, 2).md
    return (md is not None and md.state == TransactionState.COMPLETE_ABORT
            and s.get("epoch") == md.producer_epoch - 1)


def _tv2_init_at_pre_bump_epoch(case: Case, index: int) -> bool:
    """The differing step is an InitProducerId naming the epoch a completed TV2 end bumped from."""
    s = case.steps[index]
    if s.kind != "init" or not s.get("transactional"):
        return False
    md = _model_before(case, index, 2).md
    return (md is not None and md.state in _NO_TXN and s.get("epoch") >= 0
            and s.get("epoch") == md.last_producer_epoch and md.producer_epoch == s.get("epoch") + 1)


def _tv2_fence_of_ongoing(case: Case, index: int) -> bool:
    """The differing step fences an Ongoing transaction of the TV2 model (the timeout abort, or InitProducerId)."""
    s = case.steps[index]
    if s.kind not in ("wait_timeout", "init") or (s.kind == "init" and not s.get("transactional")):
        return False
    md = _model_before(case, index, 2).md
    return md is not None and md.state == TransactionState.ONGOING


def _one_more_bump(what: Any, m: Any, k: Any) -> bool:
    """DescribeTransactions shows the same state, partitions and producer id, Kafka's epoch one above."""
    return (what == "transaction" and isinstance(m, tuple) and isinstance(k, tuple) and len(m) == 4
            and len(k) == 4 and m[:3] == k[:3] and isinstance(m[3], int) and k[3] == m[3] + 1)


def _end_without_transaction(what: Any, m: Any, k: Any) -> bool:
    """The model's Kafka 4.0 answer (the empty abort's NONE with the bumped epoch, or INVALID_TXN_STATE for a
    commit), the build's INVALID_TXN_STATE (Empty) or PRODUCER_FENCED (Complete*)."""
    return (what == "answer" and m != k and m[0] in ("NONE", "INVALID_TXN_STATE")
            and k[0] in ("INVALID_TXN_STATE", "PRODUCER_FENCED"))


ABSTRACTIONS: tuple[Abstraction, ...] = (
    Abstraction(
        "offset_commit_unknown_group_v9",
        "offset_commit",
        "An OffsetCommit with a generation >= 0 for a group that does not exist: the model answers "
        "ILLEGAL_GENERATION, the answer before OffsetCommit v9; v9+ (the Java 4.0 client's version) gets "
        "GROUP_ID_NOT_FOUND.  Both are fatal for the committing member; the model keeps one API version.",
        "OffsetMetadataManager.validateOffsetCommit (group-coordinator, trunk 1eb7644): apiVersion >= 9 "
        "rethrows GroupIdNotFoundException, older versions throw ILLEGAL_GENERATION",
        _answer(("ILLEGAL_GENERATION",), ("GROUP_ID_NOT_FOUND",)),
        Case("abs-ocg", (step("offset_commit", member="c9-9", generation=0, partition=1, offset=7),)),
        (("ILLEGAL_GENERATION",), ("GROUP_ID_NOT_FOUND",)),
    ),
    Abstraction(
        "produce_verification_of_duplicates",
        "produce",
        "A transactional batch that repeats one of the last five batches (same epoch and sequences) of a "
        "producer with no transaction open on the partition: Kafka asks the coordinator first "
        "(KIP-890 part 1) and answers its verdict (TRANSACTION_ABORTABLE when the transaction ended); the "
        "model treats the batch as a duplicate before any verification and answers NONE with the cached "
        "offset.  A real client never resends a batch of a transaction that has ended.",
        "ReplicaManager.appendRecords -> maybeStartTransactionVerificationForPartition -> "
        "UnifiedLog.maybeStartTransactionVerification (no duplicate check; the duplicate check is in "
        "analyzeAndValidateProducerState, after verification), trunk 1eb7644",
        _errors({"NONE"}, {"TRANSACTION_ABORTABLE", "INVALID_TXN_STATE"}),
        Case("abs-pvd", (
            _INIT,
            step("add_partitions", pid="p0", epoch=0, partitions=(0,)),
            step("produce", pid="p0", epoch=0, partition=0, base_sequence=0, count=2, transactional=True,
                 first_value=1),
            step("end_txn", pid="p0", epoch=0, committed=True),
            step("produce", pid="p0", epoch=0, partition=0, base_sequence=0, count=2, transactional=True,
                 first_value=1),
        )),
        (("NONE",), ("TRANSACTION_ABORTABLE",)),
    ),
    Abstraction(
        "produce_verification_unknown_producer_id",
        "produce",
        "A transactional batch whose producer id the coordinator does not map to the transactional id: "
        "Kafka answers the coordinator's INVALID_PRODUCER_ID_MAPPING as is; the model translates it to "
        "INVALID_TXN_STATE (model/log/partition.py VERIFICATION_TO_PRODUCE_ERROR).  Both end the "
        "producer's transaction; only a forged or expired producer id reaches this path.",
        "AddPartitionsToTxnManager (only PRODUCER_FENCED and, for old produce versions, "
        "TRANSACTION_ABORTABLE are translated), trunk 1eb7644",
        _answer(("INVALID_TXN_STATE",), ("INVALID_PRODUCER_ID_MAPPING",)),
        Case("abs-pvu", (step("produce", pid="p0", epoch=0, partition=0, base_sequence=0, count=1,
                              transactional=True, first_value=1),)),
        (("INVALID_TXN_STATE",), ("INVALID_PRODUCER_ID_MAPPING",)),
    ),
    Abstraction(
        "produce_first_sequence_on_empty_log_kafka_4_5",
        "produce",
        "A batch of a producer id the partition does not know, first sequence above 0, on a partition that "
        "never held a record: the model follows Kafka 4.5's fix of KAFKA-15591 and answers "
        "OUT_OF_ORDER_SEQUENCE_NUMBER (such a batch overtook an earlier one, since no producer state can have "
        "been lost on an empty log); the 4.0 build here predates the fix and appends it.  A version "
        "difference, not a simplification: the variant no_kafka_15591_fix is the 4.0 rule.",
        "ProducerAppendInfo.checkSequence / ProducerStateManager.mapEndOffset (storage, KAFKA-15591, "
        "Kafka 4.5); trunk 1eb7644 accepts any sequence of an unknown producer (NO_PRODUCER_EPOCH)",
        _answer(("OUT_OF_ORDER_SEQUENCE_NUMBER",), ("NONE",)),
        Case("abs-fse", (_INIT, step("produce", pid="p0", epoch=0, partition=1, base_sequence=2, count=2,
                                     transactional=False, first_value=7))),
        (("OUT_OF_ORDER_SEQUENCE_NUMBER",), ("NONE",)),
        _empty_log,
    ),
    Abstraction(
        "ongoing_transaction_of_another_epoch_kafka_14563",
        "produce",
        "A transactional batch at an epoch above the one of the transaction its producer id has open on the "
        "partition: the model follows Kafka 4.0's KAFKA-14563 fix, under which only a transaction of the batch's "
        "own epoch counts as ongoing, so the batch is verified with the coordinator, which fences it "
        "(INVALID_PRODUCER_EPOCH); the 4.0.0-SNAPSHOT build here predates the fix, skips verification and "
        "answers what the sequence check says.  A version difference; flag ongoing_txn_check_epoch.",
        "UnifiedLog.hasOngoingTransaction (KAFKA-14563, PR #17698, merged after trunk 1eb7644)",
        _errors({"INVALID_PRODUCER_EPOCH"}, {"NONE", "OUT_OF_ORDER_SEQUENCE_NUMBER"}),
        Case("abs-ote", (
            _INIT,
            step("add_partitions", pid="p0", epoch=0, partitions=(0,)),
            step("produce", pid="p0", epoch=0, partition=0, base_sequence=0, count=2, transactional=True,
                 first_value=1),
            step("produce", pid="p0", epoch=1, partition=0, base_sequence=0, count=2, transactional=True,
                 first_value=7),
        )),
        (("INVALID_PRODUCER_EPOCH",), ("NONE",)),
        _open_at_older_epoch,
    ),
    Abstraction(
        "ongoing_offsets_transaction_of_another_epoch_kafka_14563",
        "txn_offset_commit",
        "The same version difference on the group's __consumer_offsets partition: a TxnOffsetCommit at an epoch "
        "above the open transaction's is verified (and fenced) by the model, as Kafka 4.0 does since "
        "KAFKA-14563; the build here skips verification and answers the group's checks.",
        "UnifiedLog.hasOngoingTransaction via CoordinatorRuntime.scheduleTransactionalWriteOperation "
        "(KAFKA-14563, PR #17698, merged after trunk 1eb7644)",
        _errors({"INVALID_PRODUCER_EPOCH"}, {"NONE", "ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID"}),
        Case("abs-oto", (
            _INIT,
            step("add_offsets", pid="p0", epoch=0),
            step("join", member=""),
            step("sync", member="c0-0", generation=1),
            step("txn_offset_commit", pid="p0", epoch=0, member="c0-0", generation=1, partition=0, offset=5),
            step("txn_offset_commit", pid="p0", epoch=1, member="", generation=-1, partition=1, offset=7),
        )),
        (("INVALID_PRODUCER_EPOCH",), ("NONE",)),
        _open_at_older_epoch,
    ),
    Abstraction(
        "verification_lowest_sequence",
        "produce",
        "A batch after an earlier verification of the same producer id on the partition started "
        "with a lower sequence: Kafka's VerificationStateEntry keeps the lowest sequence verified and answers "
        "OUT_OF_ORDER_SEQUENCE_NUMBER to a batch above it (against KAFKA-15212's loop); the model does not keep "
        "the lowest sequence (its producers have one request in flight, model/log/partition.py "
        "start_transaction_verification) and appends.",
        "VerificationStateEntry.maybeUpdateLowestSequenceAndEpoch, ProducerAppendInfo.checkSequence "
        "(KAFKA-15212), trunk 1eb7644",
        _errors({"NONE"}, {"OUT_OF_ORDER_SEQUENCE_NUMBER"}),
        Case("abs-vls", (
            _INIT,
            step("produce", pid="p0", epoch=0, partition=0, base_sequence=0, count=3, transactional=True,
                 first_value=2),
            step("add_partitions", pid="p0", epoch=0, partitions=(0,)),
            step("produce", pid="p0", epoch=0, partition=0, base_sequence=0, count=3, transactional=False,
                 first_value=5),
            step("produce", pid="p0", epoch=0, partition=0, base_sequence=3, count=2, transactional=True,
                 first_value=7),
        )),
        (("NONE",), ("OUT_OF_ORDER_SEQUENCE_NUMBER",)),
        _after_a_lower_verified_sequence,
    ),
    # transaction version 2 (``keos differential --transaction-version 2``): the 1eb7644 build is KIP-890 part 2
    # as of Oct 2024; the model follows Kafka 4.0's and 4.1's fixes made after it
    Abstraction(
        "tv2_end_without_transaction_kafka_14563",
        "end_txn",
        "EndTxn v5 with the current epoch while no transaction is open (Empty, CompleteCommit, CompleteAbort): "
        "the model follows Kafka 4.0, where the current epoch is valid there (isValidEpoch) because a TV2 "
        "producer aborts an empty transaction through the coordinator: the abort bumps the epoch (PrepareAbort "
        "from Empty/Complete*, answered NONE with the bumped epoch; its self-fencing race fixed by KAFKA-18464) "
        "and a commit is INVALID_TXN_STATE; the 1eb7644 build predates the empty abort and answers "
        "INVALID_TXN_STATE (Empty) or PRODUCER_FENCED (Complete*, where it accepts only a retry's epoch).  A "
        "version difference: the model's TV2 end is Kafka 4.0's.",
        "TransactionCoordinator.endTransaction (trunk 1eb7644: Empty -> logInvalidStateTransitionAndReturnError; "
        "the TV2 empty abort came with KAFKA-14563, PR #17698, merged after 1eb7644; KAFKA-18464, PR #18467)",
        _end_without_transaction,
        Case("abs-tea", (_INIT, step("end_txn", pid="p0", epoch=0, committed=False))),
        (("NONE", "p0", 1), ("INVALID_TXN_STATE", "", None)),
        _tv2_end_of_no_transaction,
        transaction_version=2,
    ),
    Abstraction(
        "tv2_fence_double_bump_kafka_19367",
        "describe_transactions",
        "The coordinator's epoch fence of an Ongoing TV2 transaction (the transaction timeout's abort, or "
        "InitProducerId): the model follows KAFKA-19367's fix (Kafka 4.0.1/4.1) and bumps the epoch once; the "
        "1eb7644 build bumps it for the fence and again in the TV2 abort (prepareAbortOrCommit), so "
        "DescribeTransactions shows CompleteAbort one epoch higher.  A version difference: the model's flag "
        "single_fence_bump=False (variant kafka_19367_double_bump) is the build's rule.",
        "TransactionCoordinator.abortTimedOutTransactions / handleInitProducerId -> prepareFenceProducerEpoch, "
        "then endTransaction -> TransactionMetadata.prepareAbortOrCommit (supportsEpochBump), trunk 1eb7644; "
        "KAFKA-19367, PR #19910",
        _one_more_bump,
        Case("abs-tdb", (_INIT, step("add_partitions", pid="p0", epoch=0, partitions=(0,)),
                         step("wait_timeout")), timeout_ms=1000),
        (("CompleteAbort", (), "p0", 1), ("CompleteAbort", (), "p0", 2)),
        _tv2_fence_of_ongoing,
        what="transaction",
        transaction_version=2,
    ),
    Abstraction(
        "tv2_commit_retry_after_abort_kafka_20785",
        "end_txn",
        "EndTxn v5 (commit) at the epoch before the bump of a completed abort (a commit racing the abort, "
        "retried): the model follows KAFKA-20785's fix and answers PRODUCER_FENCED, which the client treats as "
        "a fence; the 1eb7644 build accepts the epoch as a retry (endTxnEpochBumped) and answers the invalid "
        "CompleteAbort -> commit transition with INVALID_TXN_STATE (fatal for the client).  A version "
        "difference: the model's flag commit_retry_after_abort_fenced=False is the build's rule.",
        "TransactionCoordinator.endTransaction: CompleteAbort + COMMIT -> logInvalidStateTransitionAndReturnError "
        "(trunk 1eb7644); KAFKA-20785, PR #23204",
        _errors({"PRODUCER_FENCED"}, {"INVALID_TXN_STATE"}),
        Case("abs-tcr", (_INIT, step("add_partitions", pid="p0", epoch=0, partitions=(0,)),
                         step("end_txn", pid="p0", epoch=0, committed=False),
                         step("end_txn", pid="p0", epoch=0, committed=True))),
        (("PRODUCER_FENCED",), ("INVALID_TXN_STATE",)),
        _tv2_retry_of_other_end,
        transaction_version=2,
    ),
    Abstraction(
        "tv2_init_retry_of_pre_bump_epoch_kafka_14562",
        "init",
        "InitProducerId naming the epoch a completed TV2 commit or abort bumped from (a producer that did not see "
        "the EndTxn v5 answer): the model keeps that epoch as lastProducerEpoch through the completion, as "
        "Kafka 4.0 does, so the request is KIP-360's retry and is answered at the next epoch; the 1eb7644 "
        "build's prepareComplete overwrote lastProducerEpoch with the bumped epoch and answers PRODUCER_FENCED.  "
        "A version difference (KIP-890 part 2's follow-up).",
        "TransactionMetadata.prepareComplete (trunk 1eb7644: lastProducerEpoch = producerEpoch); KAFKA-14562 "
        "[2/3], PR #17402 (commit ed2ccd08, 'edit prepareComplete to include lastEpoch'), merged after 1eb7644",
        _answer(("NONE",), ("PRODUCER_FENCED",)),
        Case("abs-tir", (_INIT, step("add_partitions", pid="p0", epoch=0, partitions=(0,)),
                         step("end_txn", pid="p0", epoch=0, committed=True),
                         step("init", transactional=True, pid="p0", epoch=0))),
        (("NONE",), ("PRODUCER_FENCED",)),
        _tv2_init_at_pre_bump_epoch,
        transaction_version=2,
    ),
)


def classify(handler: str, what: str, model: Any, kafka: Any, case: Case | None = None, index: int = -1) -> str:
    """The name of the abstraction explaining a difference, or ``""``; an abstraction confined to a place
    in the case (``where``) explains it only when the case and the differing step's index are given."""
    for a in ABSTRACTIONS:
        placed = a.where is None or (case is not None and 0 <= index < len(case.steps) and a.where(case, index))
        if a.handler == handler and a.matches(what, model, kafka) and placed:
            return a.name
    return ""
