"""The judge of the coordinator's answers (``coordinator_errors_as_kafka``) against the model's own handlers.

A generated family: every stored state (with and without a pending transition, with a failed fence), every
request kind, current/stale/foreign/new (pid, epoch), TV1 and TV2, the append succeeding or failing -- each
handler's answer must be one the judge accepts; and errors Kafka's handler cannot return in a state are flagged.
"""

from __future__ import annotations

import itertools

import pytest
from txn_config import kafka_cc

from keos.model.coordinator.transaction.answer_table import Ask, table_mismatch
from keos.model.coordinator.transaction.response_errors import unexpected_error
from keos.model.coordinator.transaction.transaction_coordinator import (
    TransactionMetadata,
    handle_add_partitions,
    handle_end_txn,
    handle_init_producer_id,
    handle_verify_partition,
)
from keos.model.protocol.errors import Errors

STORED = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort")
PENDING = {
    "Empty": ("", "Ongoing"),
    "Ongoing": ("", "PrepareCommit"),
    "PrepareCommit": ("", "CompleteCommit"),
    "PrepareAbort": ("", "CompleteAbort"),
    "CompleteCommit": ("", "Empty"),
    "CompleteAbort": ("", "Ongoing"),
}


def _entries() -> list[TransactionMetadata | None]:
    out: list[TransactionMetadata | None] = [None]
    for state in STORED:
        for pending in PENDING[state]:
            for failed in (False, True):
                parts = (0,) if state in ("Ongoing", "PrepareCommit", "PrepareAbort") else ()
                out.append(
                    TransactionMetadata(
                        0,
                        7,
                        3,
                        2,
                        5,
                        -1,
                        state,
                        parts,
                        pending_state=pending,
                        has_failed_epoch_fence=failed and state == "Ongoing",
                    )
                )
    return out


IDS = ((7, 3), (7, 2), (7, 4), (5, 3), (9, 0), (-1, -1))


@pytest.mark.parametrize("tv", [1, 2])
def test_every_handler_answer_is_one_kafka_returns(tv: int) -> None:
    cc = kafka_cc(transaction_version=tv)
    for md, (pid, epoch), ok in itertools.product(_entries(), IDS, (True, False)):
        if pid >= 0:
            out = handle_add_partitions(md, pid, epoch, (0, 1), ok)
            assert unexpected_error("AddPartitionsToTxn", out.error, md, pid, epoch, ok, tv) is None, (md, pid, epoch)
            for committed in (True, False):
                out = handle_end_txn(md, pid, epoch, committed, 40, cc, ok)
                assert unexpected_error("EndTxn", out.error, md, pid, epoch, ok, tv) is None, (md, pid, epoch)
            verdict = handle_verify_partition(md, pid, epoch, 1)
            assert unexpected_error("VerifyPartition", verdict, md, pid, epoch, True, tv) is None
        out = handle_init_producer_id(md, 0, pid, epoch, 40, cc, ok)
        assert unexpected_error("InitProducerId", out.error, md, pid, epoch, ok, tv) is None, (md, pid, epoch, out)


def test_errors_kafka_cannot_return_are_flagged() -> None:
    empty = TransactionMetadata(0, 7, 3, state="Empty")
    ongoing = TransactionMetadata(0, 7, 3, state="Ongoing", partitions=(0,))
    # a retriable code where Kafka answers a fence or a completion in progress
    assert unexpected_error("AddPartitionsToTxn", Errors.COORDINATOR_LOAD_IN_PROGRESS, ongoing, 7, 3)
    assert unexpected_error("EndTxn", Errors.CONCURRENT_TRANSACTIONS, empty, 7, 3, tv=2)
    # CONCURRENT_TRANSACTIONS for an open transaction only from InitProducerId (the fence)
    assert unexpected_error("InitProducerId", Errors.CONCURRENT_TRANSACTIONS, ongoing, -1, -1) is None
    assert unexpected_error("AddPartitionsToTxn", Errors.CONCURRENT_TRANSACTIONS, ongoing, 7, 3)
    # a fence names a stale (pid, epoch); a new instance is never fenced
    assert unexpected_error("AddPartitionsToTxn", Errors.PRODUCER_FENCED, ongoing, 7, 3)
    assert unexpected_error("InitProducerId", Errors.PRODUCER_FENCED, ongoing, -1, -1)
    assert unexpected_error("AddPartitionsToTxn", Errors.PRODUCER_FENCED, ongoing, 7, 2) is None
    # INVALID_PRODUCER_ID_MAPPING only for a producer id the entry does not hold
    assert unexpected_error("EndTxn", Errors.INVALID_PRODUCER_ID_MAPPING, ongoing, 7, 3)
    assert unexpected_error("EndTxn", Errors.INVALID_PRODUCER_ID_MAPPING, None, 7, 3) is None
    assert unexpected_error("InitProducerId", Errors.INVALID_PRODUCER_ID_MAPPING, None, -1, -1)
    # INVALID_TXN_STATE: EndTxn with nothing open; never for an open one nor another request
    assert unexpected_error("EndTxn", Errors.INVALID_TXN_STATE, ongoing, 7, 3)
    assert unexpected_error("EndTxn", Errors.INVALID_TXN_STATE, empty, 7, 3) is None
    assert unexpected_error("AddPartitionsToTxn", Errors.INVALID_TXN_STATE, empty, 7, 3)
    # COORDINATOR_NOT_AVAILABLE only for a failed append; codes of other requests never
    assert unexpected_error("EndTxn", Errors.COORDINATOR_NOT_AVAILABLE, ongoing, 7, 3, append_ok=True)
    assert unexpected_error("EndTxn", Errors.COORDINATOR_NOT_AVAILABLE, ongoing, 7, 3, append_ok=False) is None
    assert unexpected_error("EndTxn", Errors.INVALID_RECORD, ongoing, 7, 3)
    assert unexpected_error("VerifyPartition", Errors.CLUSTER_AUTHORIZATION_FAILED, ongoing, 7, 3)
    assert unexpected_error("AddPartitionsToTxn", Errors.TRANSACTION_ABORTABLE, ongoing, 7, 3)


def _target(out: object) -> str | None:
    transit = getattr(out, "transit", None)
    if transit is not None:
        return str(transit.state)
    md = getattr(out, "metadata", None)
    return str(md.state) if getattr(out, "wrote", False) and md is not None else None


@pytest.mark.parametrize("tv", [1, 2])
def test_every_handler_answer_is_kafkas_table_row(tv: int) -> None:
    """The exact table (``coordinator_answers_per_kafka_table``) agrees with every handler on the whole family:
    succeeding, failing and in-flight appends, every kind, every stored state, current/stale/foreign ids."""
    cc = kafka_cc(transaction_version=tv)
    checked = 0
    for md, (pid, epoch), ok in itertools.product(_entries(), IDS, (True, False, None)):
        for committed in (True, False):
            if pid < 0:
                continue
            out = handle_end_txn(md, pid, epoch, committed, 40, cc, ok)
            ask = Ask("EndTxn", md, pid, epoch, committed, (), tv, cc)
            assert table_mismatch(ask, out.error, _target(out), ok) is None, (md, pid, epoch, committed, ok, out)
            checked += 1
        if pid >= 0:
            out = handle_add_partitions(md, pid, epoch, (0, 1), ok)
            ask = Ask("AddPartitionsToTxn", md, pid, epoch, False, (0, 1), tv, cc)
            assert table_mismatch(ask, out.error, _target(out), ok) is None, (md, pid, epoch, ok, out)
            for q in (0, 1):
                verdict = handle_verify_partition(md, pid, epoch, q)
                assert (
                    table_mismatch(Ask("VerifyPartition", md, pid, epoch, False, (q,), tv, cc), verdict, None, True)
                    is None
                )
        out = handle_init_producer_id(md, 0, pid, epoch, 40, cc, ok)
        ask = Ask("InitProducerId", md, pid, epoch, False, (), tv, cc)
        assert table_mismatch(ask, out.error, _target(out), ok) is None, (md, pid, epoch, ok, out)
        checked += 1
    assert checked > 300


def test_table_flags_a_legal_but_different_answer() -> None:
    cc = kafka_cc(transaction_version=1)
    prepare = TransactionMetadata(0, 7, 3, state="PrepareCommit", partitions=(0,), pending_state="CompleteCommit")
    # verification in Prepare*: CONCURRENT_TRANSACTIONS, never the partition's membership answer
    assert table_mismatch(Ask("VerifyPartition", prepare, 7, 3, False, (0,), 1, cc), Errors.NONE, None, True)
    ongoing = TransactionMetadata(0, 7, 3, state="Ongoing", partitions=(0,))
    # a commit that moves the entry to PrepareAbort is a valid edge, but not Kafka's answer to EndTxn(COMMIT)
    assert table_mismatch(Ask("EndTxn", ongoing, 7, 3, True, (), 1, cc), Errors.NONE, "PrepareAbort", True)
    assert table_mismatch(Ask("EndTxn", ongoing, 7, 3, True, (), 1, cc), Errors.NONE, "PrepareCommit", True) is None
    assert table_mismatch(Ask("EndTxn", ongoing, 7, 3, True, (), 1, cc), Errors.NONE, "PrepareCommit", False)


def test_log_transitions_per_kafka_table() -> None:
    """``completeTransitionTo``'s checks over consecutive records of ``__transaction_state``."""
    from keos.model.coordinator.transaction.transaction_log import TransactionLogValue as V
    from keos.model.coordinator.transaction.transit_table import log_transition_problems as problems

    def v(*args: object, prev: int = 7, **kw: object) -> V:  # prevProducerId: the id the entry held before
        return V(*args, prev_producer_id=prev, **kw)  # type: ignore[arg-type]

    empty = v(7, 3, "Empty")
    ongoing = v(7, 3, "Ongoing", (0, 1))
    # accepted: a bump, a KIP-360 retry, a rotation, an add, a TV1/TV2 end, a completion, a TV2 rotation
    assert problems([empty], [v(7, 4, "Empty")]) == []
    assert problems([empty], [v(7, 3, "Empty")]) == []
    assert problems([empty], [v(8, 0, "Empty")]) == []
    assert problems([None], [v(8, 0, "Empty", prev=8)]) == []
    assert problems([ongoing], [v(7, 3, "Ongoing", (0, 1, 2))]) == []
    assert problems([ongoing], [v(7, 3, "PrepareCommit", (0, 1))]) == []
    assert problems([ongoing], [v(7, 4, "PrepareAbort", (0, 1))]) == []
    assert problems([v(7, 4, "PrepareCommit", (0,))], [v(7, 4, "CompleteCommit")]) == []
    rotating = v(7, 4, "PrepareCommit", (0,), next_producer_id=9)
    assert problems([rotating], [v(9, 0, "CompleteCommit")]) == []
    assert problems([empty], [v(7, 4, "CompleteAbort")]) == []  # TV2 empty abort, both records in one step
    # refused: a jump, an epoch change while Ongoing, a lost partition, another id, the wrong completion
    assert problems([empty], [v(7, 5, "Empty")])
    assert problems([ongoing], [v(7, 4, "Ongoing", (0, 1))])
    assert problems([ongoing], [v(7, 3, "Ongoing", (0,))])
    assert problems([ongoing], [v(8, 3, "PrepareCommit", (0, 1))])
    assert problems([ongoing], [v(7, 3, "PrepareCommit", (0,))])
    assert problems([v(7, 4, "PrepareCommit", (0,))], [v(7, 4, "CompleteAbort")])
    assert problems([v(7, 4, "PrepareCommit", (0,))], [v(7, 5, "CompleteCommit")])
    # refused: a record that keeps an older id as prevProducerId (prepareTransitionTo records the current one)
    assert problems([v(8, 0, "Empty")], [v(8, 1, "Empty")])
    assert problems([None], [v(8, 0, "Empty", prev=-1)])


def _moved(out: object) -> object:
    transit = getattr(out, "transit", None)
    if transit is not None:
        return transit
    md = getattr(out, "metadata", None)
    return md if getattr(out, "wrote", False) else None


@pytest.mark.parametrize("tv", [1, 2])
def test_every_prepared_target_is_kafkas(tv: int) -> None:
    """The target judge (producer id, epoch, lastProducerEpoch, nextProducerId of the metadata a handler writes or
    prepares) agrees with every handler, the epoch fence of InitProducerId and of the timeout abort included, at
    ordinary and exhausted epochs (max_producer_epoch 5: epochs 4 and 5 are exhausted)."""
    from keos.model.coordinator.transaction.transaction_coordinator import timeout_abort

    cc = kafka_cc(transaction_version=tv, max_producer_epoch=5)
    checked = 0
    for state, epoch, last, failed, ok in itertools.product(
        STORED, (0, 2, 3, 4, 5), (-1, 1), (False, True), (True, False, None)
    ):
        parts = (0,) if state in ("Ongoing", "PrepareCommit", "PrepareAbort") else ()
        pending = "CompleteCommit" if state == "PrepareCommit" else "CompleteAbort" if state == "PrepareAbort" else ""
        md = TransactionMetadata(0, 7, epoch, last, 5, -1, state, parts, pending_state=pending,
                                 has_failed_epoch_fence=failed and state == "Ongoing" and tv < 2)
        for pid, ask_epoch in ((7, epoch), (7, last), (7, -1), (-1, -1), (5, 4)):
            out = handle_init_producer_id(md, 0, pid, ask_epoch, 40, cc, ok)
            ask = Ask("InitProducerId", md, pid, ask_epoch, False, (), tv, cc)
            assert table_mismatch(ask, out.error, _target(out), ok, _moved(out)) is None, (md, pid, ask_epoch, out)
            checked += 1
        for committed in (True, False):
            out = handle_end_txn(md, 7, epoch, committed, 40, cc, ok)
            ask = Ask("EndTxn", md, 7, epoch, committed, (), tv, cc)
            assert table_mismatch(ask, out.error, _target(out), ok, _moved(out)) is None, (md, committed, out)
        out = handle_add_partitions(md, 7, epoch, (0, 1), ok)
        ask = Ask("AddPartitionsToTxn", md, 7, epoch, False, (0, 1), tv, cc)
        assert table_mismatch(ask, out.error, _target(out), ok, _moved(out)) is None, (md, out)
        timed_out = timeout_abort(md, cc, ok, 40)
        if timed_out is not None:
            ask = Ask("TimeoutAbort", md, -1, -1, False, (), tv, cc)
            assert table_mismatch(ask, timed_out.error, _target(timed_out), ok, _moved(timed_out)) is None, md
    assert checked > 1000


def test_target_judge_flags_wrong_epochs_and_rotation() -> None:
    """A target Kafka would not prepare: a TV2 fence that forgets lastProducerEpoch or rotates a producer id whose
    epoch is not exhausted; a TV1 fence that keeps lastProducerEpoch (a zombie's stale InitProducerId would pass
    as a retry); a KIP-360 retry that bumps the epoch again."""
    cc2 = kafka_cc(transaction_version=2, max_producer_epoch=5)
    cc1 = kafka_cc(transaction_version=1, max_producer_epoch=5)
    ongoing = TransactionMetadata(0, 7, 3, 2, state="Ongoing", partitions=(0,))
    fence = Ask("InitProducerId", ongoing, -1, -1, False, (), 2, cc2)
    good = ongoing._replace(state="PrepareAbort", producer_epoch=4, last_producer_epoch=3)
    assert table_mismatch(fence, Errors.CONCURRENT_TRANSACTIONS, "PrepareAbort", True, good) is None
    assert table_mismatch(fence, Errors.CONCURRENT_TRANSACTIONS, "PrepareAbort", True,
                          good._replace(last_producer_epoch=-1))
    rotated = good._replace(next_producer_id=9)
    assert table_mismatch(fence, Errors.CONCURRENT_TRANSACTIONS, "PrepareAbort", True, rotated)
    timeout = Ask("TimeoutAbort", ongoing, -1, -1, False, (), 1, cc1)
    tv1 = ongoing._replace(state="PrepareAbort", producer_epoch=4, last_producer_epoch=-1)
    assert table_mismatch(timeout, Errors.NONE, "PrepareAbort", True, tv1) is None
    assert table_mismatch(timeout, Errors.NONE, "PrepareAbort", True, tv1._replace(last_producer_epoch=2))
    empty = TransactionMetadata(0, 7, 3, 2, state="Empty")
    retry = Ask("InitProducerId", empty, 7, 2, False, (), 1, cc1)
    assert table_mismatch(retry, Errors.NONE, "Empty", True, empty) is None
    assert table_mismatch(retry, Errors.NONE, "Empty", True, empty._replace(producer_epoch=4))
