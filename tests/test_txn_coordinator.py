"""One test per row of the coordinator's by-state rules (kafka_facts.md §1.2-1.6), on the pure handlers."""

from __future__ import annotations

import pytest
from txn_config import kafka_cc

from keos.model.coordinator.transaction.transaction_coordinator import (
    APPEND_IN_FLIGHT,
    OFFSETS_PARTITION_BASE,
    TransactionMetadata,
    abort_transit,
    complete_target,
    complete_transaction,
    complete_transit,
    expire_transactional_id,
    fence_and_abort,
    from_log_value,
    handle_add_offsets,
    handle_add_partitions,
    handle_end_txn,
    handle_init_producer_id,
    handle_marker_response,
    handle_verify_partition,
    prepare_complete,
    timeout_abort,
)
from keos.model.coordinator.transaction.transaction_state import (
    SCALA_2024_10_PREPARE_ABORT,
    STATES,
    VALID_PREVIOUS_STATES,
    is_valid_transition,
)
from keos.model.protocol.errors import Errors

TV1 = kafka_cc(transaction_version=1)
TV2 = kafka_cc(transaction_version=2)
SMALL = kafka_cc(transaction_version=1, max_producer_epoch=5)  # exhausted at epoch >= 4


def md(state: str = "Empty", epoch: int = 3, partitions: tuple[int, ...] = (), **kw: object) -> TransactionMetadata:
    return TransactionMetadata(0, 7, epoch, state=state, partitions=partitions, **kw)  # type: ignore[arg-type]


# -- §1.1 the table is data -------------------------------------------------------------------------


def test_table_covers_every_state_and_matches_java_source() -> None:
    assert set(VALID_PREVIOUS_STATES) == set(STATES)
    assert VALID_PREVIOUS_STATES["PrepareAbort"] == (
        "Ongoing",
        "PrepareEpochFence",
        "Empty",
        "CompleteCommit",
        "CompleteAbort",
    )
    assert set(SCALA_2024_10_PREPARE_ABORT) < set(VALID_PREVIOUS_STATES["PrepareAbort"])
    assert is_valid_transition("Ongoing", "PrepareCommit")
    assert not is_valid_transition("Empty", "PrepareCommit")
    assert not is_valid_transition("PrepareCommit", "Ongoing")


# -- §1.2 InitProducerId ----------------------------------------------------------------------------


def test_init_new_id_creates_metadata_and_bumps_to_epoch_0() -> None:
    out = handle_init_producer_id(None, 0, -1, -1, 42, TV1)
    assert (out.error, out.producer_id, out.producer_epoch, out.used_fresh_pid) == (Errors.NONE, 42, 0, True)
    assert out.metadata is not None and out.metadata.state == "Empty" and out.written is not None


def test_init_pending_transition_is_concurrent() -> None:
    out = handle_init_producer_id(md(pending_state="Ongoing"), 0, -1, -1, 42, TV1)
    assert out.error == Errors.CONCURRENT_TRANSACTIONS and not out.wrote


def test_init_expected_pid_mismatch_is_fenced() -> None:
    assert handle_init_producer_id(md(), 0, 99, 3, 42, TV1).error == Errors.PRODUCER_FENCED


def test_init_expected_accepted_when_stored_epoch_is_minus_one() -> None:
    out = handle_init_producer_id(md(epoch=-1), 0, 99, 3, 42, TV1)
    assert out.error == Errors.NONE and out.producer_epoch == 0


@pytest.mark.parametrize("state", ["PrepareCommit", "PrepareAbort"])
def test_init_in_prepare_is_concurrent(state: str) -> None:
    assert handle_init_producer_id(md(state), 0, -1, -1, 42, TV1).error == Errors.CONCURRENT_TRANSACTIONS


@pytest.mark.parametrize("state", ["Empty", "CompleteCommit", "CompleteAbort"])
def test_init_without_expected_bumps_epoch(state: str) -> None:
    out = handle_init_producer_id(md(state), 0, -1, -1, 42, TV1)
    assert (out.error, out.producer_epoch) == (Errors.NONE, 4)
    assert out.metadata is not None and out.metadata.last_producer_epoch == -1 and out.metadata.state == "Empty"
    assert f"txn:{state}->Empty" in out.events


def test_init_expected_current_epoch_bumps_and_remembers_last() -> None:
    out = handle_init_producer_id(md("CompleteAbort"), 0, 7, 3, 42, TV1)
    assert out.producer_epoch == 4 and out.metadata is not None and out.metadata.last_producer_epoch == 3


def test_init_expected_last_epoch_is_a_retry_returning_current() -> None:
    # prepareIncrementProducerEpoch keeps (epoch, last epoch) for the retry but still logs the move to Empty
    out = handle_init_producer_id(md("CompleteCommit", epoch=4, last_producer_epoch=3), 0, 7, 3, 42, TV1)
    assert (out.error, out.producer_epoch, out.wrote) == (Errors.NONE, 4, True)
    assert out.metadata is not None and (out.metadata.state, out.metadata.last_producer_epoch) == ("Empty", 3)
    assert "init_pid_retry" in out.events and "txn:CompleteCommit->Empty" in out.events


def test_init_expected_other_epoch_is_fenced() -> None:
    assert handle_init_producer_id(md(epoch=5, last_producer_epoch=3), 0, 7, 1, 42, TV1).error == Errors.PRODUCER_FENCED


def test_init_exhausted_epoch_rotates_producer_id() -> None:
    out = handle_init_producer_id(md(epoch=4), 0, 7, 4, 42, SMALL)
    assert (out.producer_id, out.producer_epoch, out.used_fresh_pid) == (42, 0, True)
    assert out.metadata is not None and out.metadata.prev_producer_id == 7 and out.metadata.last_producer_epoch == 4
    retry = handle_init_producer_id(out.metadata, 0, 7, 4, 43, SMALL)
    assert (retry.error, retry.producer_id, retry.producer_epoch) == (Errors.NONE, 42, 0)


def test_every_transition_records_the_producer_id_it_starts_from() -> None:
    # TransactionMetadata.prepareTransitionTo (Java, 2025): prevProducerId = the current producerId, installed by
    # completeTransitionTo -- a rotation leaves the old id there only until the next transition
    bumped = handle_init_producer_id(md(epoch=2, prev_producer_id=5), 0, 7, 2, 42, TV1).metadata
    assert bumped is not None and (bumped.producer_epoch, bumped.prev_producer_id) == (3, 7)
    rotated = handle_init_producer_id(md(epoch=4), 0, 7, 4, 42, SMALL).metadata
    assert rotated is not None and (rotated.producer_id, rotated.prev_producer_id) == (42, 7)
    ongoing = handle_add_partitions(rotated, 42, 0, (0,), True, SMALL).metadata
    assert ongoing is not None and ongoing.prev_producer_id == 42
    # the old id's instance at its exhausted epoch no longer passes the producer-id check: fenced, no abort
    stale = handle_init_producer_id(ongoing, 0, 7, 4, 43, SMALL)
    assert (stale.error, stale.wrote) == (Errors.PRODUCER_FENCED, False)
    kept = kafka_cc(transaction_version=1, max_producer_epoch=5, transit_records_previous_producer_id=False)
    old = handle_add_partitions(rotated, 42, 0, (0,), True, kept).metadata
    assert old is not None and old.prev_producer_id == 7  # weakened variant previous_producer_id_kept


def test_init_at_exhausted_epoch_fences_a_stale_epoch_instead_of_rotating() -> None:
    # a zombie of the same producer id names an epoch below the exhausted one: PRODUCER_FENCED, no new id
    # (prepareInitProducerIdTransit rotates only as the bump of the current epoch)
    stale = handle_init_producer_id(md(epoch=4), 0, 7, 1, 42, SMALL)
    assert (stale.error, stale.used_fresh_pid, stale.wrote) == (Errors.PRODUCER_FENCED, False, False)


def test_init_ongoing_fences_and_aborts_with_epoch_bump() -> None:
    out = handle_init_producer_id(md("Ongoing", partitions=(0, 1)), 0, -1, -1, 42, TV1)
    assert out.error == Errors.CONCURRENT_TRANSACTIONS
    assert out.metadata is not None and out.metadata.state == "PrepareAbort" and out.metadata.producer_epoch == 4
    assert out.metadata.partitions == (0, 1)
    assert "txn:Ongoing->PrepareEpochFence" in out.events and "txn:PrepareEpochFence->PrepareAbort" in out.events


def test_init_ongoing_after_failed_fence_does_not_bump_again() -> None:
    failed = handle_init_producer_id(md("Ongoing", partitions=(0,)), 0, -1, -1, 42, TV1, append_ok=False)
    assert failed.metadata is not None and failed.metadata.has_failed_epoch_fence and failed.metadata.state == "Ongoing"
    assert failed.metadata.producer_epoch == 4  # KAFKA-9666: the bump stays in the cache
    out = handle_init_producer_id(failed.metadata, 0, -1, -1, 42, TV1)
    assert out.metadata is not None and out.metadata.producer_epoch == 4


@pytest.mark.parametrize("state", ["Dead", "PrepareEpochFence"])
def test_init_in_dead_or_fence_state_is_illegal(state: str) -> None:
    assert handle_init_producer_id(md(state), 0, -1, -1, 42, TV1).error == Errors.UNKNOWN_SERVER_ERROR


def test_init_append_failure_clears_pending_and_reports() -> None:
    out = handle_init_producer_id(md(), 0, -1, -1, 42, TV1, append_ok=False)
    assert out.error == Errors.COORDINATOR_NOT_AVAILABLE and out.metadata == md()


# -- §1.3 AddPartitionsToTxn / AddOffsetsToTxn / verification -------------------------------------------


def test_add_without_metadata_is_invalid_mapping() -> None:
    assert handle_add_partitions(None, 7, 3, (0,)).error == Errors.INVALID_PRODUCER_ID_MAPPING


def test_add_pid_mismatch_is_invalid_mapping() -> None:
    assert handle_add_partitions(md(), 8, 3, (0,)).error == Errors.INVALID_PRODUCER_ID_MAPPING


def test_add_epoch_mismatch_is_fenced() -> None:
    assert handle_add_partitions(md(), 7, 2, (0,)).error == Errors.PRODUCER_FENCED


def test_add_pending_is_concurrent() -> None:
    assert handle_add_partitions(md(pending_state="Ongoing"), 7, 3, (0,)).error == Errors.CONCURRENT_TRANSACTIONS


@pytest.mark.parametrize("state", ["PrepareCommit", "PrepareAbort"])
def test_add_in_prepare_is_concurrent(state: str) -> None:
    assert handle_add_partitions(md(state), 7, 3, (0,)).error == Errors.CONCURRENT_TRANSACTIONS


def test_add_known_partitions_in_ongoing_writes_nothing() -> None:
    out = handle_add_partitions(md("Ongoing", partitions=(0, 1)), 7, 3, (1,))
    assert (out.error, out.wrote) == (Errors.NONE, False)


@pytest.mark.parametrize("state", ["Empty", "CompleteCommit", "CompleteAbort"])
def test_add_starts_transaction(state: str) -> None:
    out = handle_add_partitions(md(state), 7, 3, (1,))
    assert out.metadata is not None and out.metadata.state == "Ongoing" and out.metadata.txn_started
    assert out.metadata.partitions == (1,)


def test_add_new_partition_to_ongoing_unions() -> None:
    out = handle_add_partitions(md("Ongoing", partitions=(0,), txn_started=True), 7, 3, (1,))
    assert out.metadata is not None and out.metadata.partitions == (0, 1) and "txn:Ongoing->Ongoing" in out.events


def test_add_offsets_adds_the_groups_offsets_partition() -> None:
    out = handle_add_offsets(md(), 7, 3, 2)
    assert out.metadata is not None and out.metadata.partitions == (OFFSETS_PARTITION_BASE + 2,)


@pytest.mark.parametrize(
    ("metadata", "pid", "epoch", "expected"),
    [
        (None, 7, 3, Errors.INVALID_PRODUCER_ID_MAPPING),
        (md("Ongoing", partitions=(0,)), 8, 3, Errors.INVALID_PRODUCER_ID_MAPPING),
        (md("Ongoing", partitions=(0,)), 7, 2, Errors.PRODUCER_FENCED),
        (md("PrepareCommit", partitions=(0,)), 7, 3, Errors.CONCURRENT_TRANSACTIONS),
        (md("Ongoing", partitions=(0,)), 7, 3, Errors.NONE),
        (md("Ongoing", partitions=(1,)), 7, 3, Errors.TRANSACTION_ABORTABLE),
        (md("CompleteAbort"), 7, 3, Errors.TRANSACTION_ABORTABLE),
        (md("Ongoing", partitions=(0,), pending_state="PrepareCommit"), 7, 3, Errors.NONE),
    ],
)
def test_verify_partition_rows(metadata: TransactionMetadata | None, pid: int, epoch: int, expected: str) -> None:
    assert handle_verify_partition(metadata, pid, epoch, 0) == expected


# -- §1.4 EndTxn, TV0/TV1 ---------------------------------------------------------------------------------


def test_end_tv1_pid_mismatch_is_invalid_mapping() -> None:
    assert handle_end_txn(md("Ongoing"), 8, 3, True, -1, TV1).error == Errors.INVALID_PRODUCER_ID_MAPPING


def test_end_tv1_epoch_mismatch_is_fenced() -> None:
    assert handle_end_txn(md("Ongoing"), 7, 2, True, -1, TV1).error == Errors.PRODUCER_FENCED


def test_end_tv1_pending_is_concurrent() -> None:
    assert (
        handle_end_txn(md("Ongoing", pending_state="Ongoing"), 7, 3, True, -1, TV1).error
        == Errors.CONCURRENT_TRANSACTIONS
    )


@pytest.mark.parametrize(("committed", "target"), [(True, "PrepareCommit"), (False, "PrepareAbort")])
def test_end_tv1_ongoing_prepares_at_same_epoch(committed: bool, target: str) -> None:
    out = handle_end_txn(md("Ongoing", partitions=(0,), txn_started=True), 7, 3, committed, -1, TV1)
    assert out.metadata is not None and out.metadata.state == target and out.metadata.producer_epoch == 3


@pytest.mark.parametrize(
    ("state", "committed", "expected"),
    [
        ("CompleteCommit", True, Errors.NONE),
        ("CompleteAbort", False, Errors.NONE),
        ("CompleteCommit", False, Errors.INVALID_TXN_STATE),
        ("CompleteAbort", True, Errors.INVALID_TXN_STATE),
        ("PrepareCommit", True, Errors.CONCURRENT_TRANSACTIONS),
        ("PrepareAbort", False, Errors.CONCURRENT_TRANSACTIONS),
        ("PrepareCommit", False, Errors.INVALID_TXN_STATE),
        ("PrepareAbort", True, Errors.INVALID_TXN_STATE),
        ("Empty", True, Errors.INVALID_TXN_STATE),
        ("Dead", True, Errors.UNKNOWN_SERVER_ERROR),
        ("PrepareEpochFence", True, Errors.UNKNOWN_SERVER_ERROR),
    ],
)
def test_end_tv1_by_state(state: str, committed: bool, expected: str) -> None:
    out = handle_end_txn(md(state), 7, 3, committed, -1, TV1)
    assert out.error == expected and not out.wrote


# -- §1.4 EndTxn, TV2 (the state/result table) --------------------------------------------------------------

PF, ITS, NONE, EB = Errors.PRODUCER_FENCED, Errors.INVALID_TXN_STATE, Errors.NONE, "EB"


@pytest.mark.parametrize(
    ("state", "cells"),
    [
        # (Abort retry, Abort current, Commit retry, Commit current)
        ("Empty", (PF, EB, PF, ITS)),
        ("CompleteAbort", (NONE, EB, PF, ITS)),  # Commit retry in CompleteAbort: PF since PR #23204
        ("CompleteCommit", (ITS, EB, NONE, ITS)),
    ],
)
def test_end_tv2_table(state: str, cells: tuple[str, str, str, str]) -> None:
    for (committed, epoch), expected in zip([(False, 2), (False, 3), (True, 2), (True, 3)], cells, strict=True):
        out = handle_end_txn(md(state), 7, epoch, committed, -1, TV2)
        if expected == EB:
            assert out.error == NONE and out.metadata is not None
            assert out.metadata.state == "CompleteAbort" or out.metadata.state == "PrepareAbort"
            assert out.producer_epoch == 4 and f"txn:{state}->PrepareAbort" in out.events
        else:
            assert out.error == expected, (state, committed, epoch)


def test_end_tv2_ongoing_bumps_epoch_and_returns_it() -> None:
    out = handle_end_txn(md("Ongoing", partitions=(0,), txn_started=True), 7, 3, True, -1, TV2)
    assert out.metadata is not None and out.metadata.state == "PrepareCommit"
    assert (out.producer_epoch, out.metadata.last_producer_epoch) == (4, 3)


def test_end_tv2_ongoing_requires_current_epoch() -> None:
    assert handle_end_txn(md("Ongoing", partitions=(0,)), 7, 2, True, -1, TV2).error == PF


@pytest.mark.parametrize(
    ("state", "committed", "epoch", "expected"),
    [
        ("PrepareCommit", True, 2, Errors.CONCURRENT_TRANSACTIONS),
        ("PrepareCommit", False, 2, ITS),
        ("PrepareAbort", False, 2, Errors.CONCURRENT_TRANSACTIONS),
        ("PrepareCommit", True, 3, PF),
    ],
)
def test_end_tv2_prepare_accepts_only_retries_before_kafka_18464(
    state: str, committed: bool, epoch: int, expected: str
) -> None:
    old = TV2._replace(concurrent_before_epoch_check=False)
    assert handle_end_txn(md(state, partitions=(0,)), 7, epoch, committed, -1, old).error == expected


@pytest.mark.parametrize("state", ["PrepareCommit", "PrepareAbort"])
@pytest.mark.parametrize(("committed", "epoch"), [(True, 2), (False, 2), (True, 3), (False, 3), (False, 1)])
def test_end_tv2_prepare_is_concurrent_before_any_epoch_check(state: str, committed: bool, epoch: int) -> None:
    """KAFKA-18464: while markers are written, every EndTxn of the id is answered CONCURRENT_TRANSACTIONS."""
    assert handle_end_txn(md(state, partitions=(0,)), 7, epoch, committed, -1, TV2).error == (
        Errors.CONCURRENT_TRANSACTIONS
    )


def test_end_tv2_pending_checked_before_epoch() -> None:
    assert handle_end_txn(md("Ongoing", pending_state="PrepareCommit"), 7, 1, False, -1, TV2).error == (
        Errors.CONCURRENT_TRANSACTIONS
    )


def test_end_tv2_epoch_overflow_moves_to_next_producer_id() -> None:
    cfg = kafka_cc(transaction_version=2, max_producer_epoch=5)
    out = handle_end_txn(md("Ongoing", epoch=4, partitions=(0,), txn_started=True), 7, 4, True, 42, cfg)
    assert out.metadata is not None and out.metadata.next_producer_id == 42 and out.used_fresh_pid
    done = complete_transaction(out.metadata._replace(partitions=()))
    assert done.metadata is not None and (done.metadata.producer_id, done.metadata.producer_epoch) == (42, 0)
    retry = handle_end_txn(done.metadata, 7, 4, True, -1, cfg)
    assert (retry.error, retry.producer_id, retry.producer_epoch) == (NONE, 42, 0)


def test_tv2_fence_at_exhausted_epoch_allocates_next_producer_id() -> None:
    """KAFKA-20090 (PR #21506): the timeout abort's and InitProducerId's fence rotate like every TV2 completion."""
    cfg = kafka_cc(transaction_version=2, max_producer_epoch=5)
    ongoing = md("Ongoing", epoch=4, partitions=(0,), txn_started=True)
    out = timeout_abort(ongoing, cfg, True, 42)
    assert out is not None and out.metadata is not None and out.used_fresh_pid
    assert (out.metadata.state, out.metadata.producer_epoch, out.metadata.next_producer_id) == ("PrepareAbort", 5, 42)
    done = complete_transaction(out.metadata._replace(partitions=()))
    assert done.metadata is not None
    assert (done.metadata.producer_id, done.metadata.producer_epoch, done.metadata.prev_producer_id) == (42, 0, 7)
    late = handle_end_txn(done.metadata, 7, 4, False, -1, cfg)  # the fenced producer's own abort: the overflow retry
    assert (late.error, late.producer_id, late.producer_epoch) == (NONE, 42, 0)
    init = handle_init_producer_id(ongoing, 0, -1, -1, 43, cfg)
    assert init.error == Errors.CONCURRENT_TRANSACTIONS and init.metadata is not None
    assert init.metadata.next_producer_id == 43 and init.used_fresh_pid
    before = kafka_cc(transaction_version=2, max_producer_epoch=5, fence_rotates_exhausted_producer_id=False)
    old = timeout_abort(ongoing, before, True, 42)
    assert old is not None and old.metadata is not None and old.metadata.next_producer_id == -1
    not_exhausted = timeout_abort(md("Ongoing", epoch=2, partitions=(0,), txn_started=True), cfg, True, 42)
    assert not_exhausted is not None and not_exhausted.metadata is not None
    assert not_exhausted.metadata.next_producer_id == -1 and not not_exhausted.used_fresh_pid
    tv1 = timeout_abort(ongoing, kafka_cc(transaction_version=1, max_producer_epoch=5), True, 42)
    assert tv1 is not None and tv1.metadata is not None and tv1.metadata.next_producer_id == -1


# -- markers, completion, timeout, expiry, reload (§1.5-1.9) --------------------------------------------------


def test_marker_response_removes_partition_and_completion_follows() -> None:
    prepared = md("PrepareCommit", partitions=(0, 1))
    after, go_on = handle_marker_response(prepared, 7, 3, 0, NONE)
    assert go_on and after is not None and after.partitions == (1,)
    stuck, go_on = handle_marker_response(prepared, 7, 3, 0, Errors.INVALID_PRODUCER_EPOCH)
    assert not go_on and stuck == prepared
    done = complete_transaction(md("PrepareCommit"))
    assert done.metadata is not None and done.metadata.state == "CompleteCommit"


def test_marker_response_retriable_error_keeps_partition_and_goes_on() -> None:
    # TransactionMarkerRequestCompletionHandler: a retriable error re-enqueues the marker, the partition stays
    prepared = md("PrepareAbort", partitions=(0, 1))
    for error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
        again, go_on = handle_marker_response(prepared, 7, 3, 1, error)
        assert go_on and again == prepared
        cancelled, go_on = handle_marker_response(prepared, 7, 3, 1, error, retry_retriable=False)
        assert not go_on and cancelled == prepared
    fenced, go_on = handle_marker_response(prepared, 7, 3, 1, Errors.TRANSACTION_COORDINATOR_FENCED)
    assert not go_on and fenced == prepared


def test_timeout_abort_only_ongoing_and_bumps_epoch() -> None:
    assert timeout_abort(md("Empty"), TV1) is None
    assert timeout_abort(md("Ongoing", pending_state="PrepareCommit"), TV1) is None
    out = timeout_abort(md("Ongoing", partitions=(0,)), TV1)
    assert out is not None and out.metadata is not None and out.metadata.producer_epoch == 4 and "fence" in out.events


def test_timeout_abort_without_epoch_bump_keeps_epoch() -> None:
    cfg = kafka_cc(transaction_version=1, timeout_abort_bumps_epoch=False)
    out = timeout_abort(md("Ongoing", partitions=(0,)), cfg)
    assert out is not None and out.metadata is not None
    assert (out.metadata.state, out.metadata.producer_epoch) == ("PrepareAbort", 3)


@pytest.mark.parametrize(
    ("state", "expires"),
    [("Empty", True), ("CompleteCommit", True), ("CompleteAbort", True), ("Ongoing", False), ("PrepareCommit", False)],
)
def test_transactional_id_expiry_by_state(state: str, expires: bool) -> None:
    out = expire_transactional_id(md(state))
    assert (out is not None) == expires
    if out is not None:
        assert out.metadata is None and f"txn:{state}->Dead" in out.events


def test_reload_keeps_prepare_and_restores_last_epoch_only_from_flexible_records() -> None:
    out = handle_end_txn(md("Ongoing", partitions=(0,), txn_started=True, last_producer_epoch=2), 7, 3, True, -1, TV1)
    assert out.written is not None and out.written.last_producer_epoch == 2
    # KAFKA-20357 (PR #22096): the v1+ record carries lastProducerEpoch and the load restores it
    loaded = from_log_value(0, out.written)
    assert loaded.state == "PrepareCommit" and loaded.partitions == (0,) and loaded.last_producer_epoch == 2
    # a v0 record (or Kafka before the fix) has none: the loaded entry starts at NO_PRODUCER_EPOCH
    assert from_log_value(0, out.written, restore_last_epoch=False).last_producer_epoch == -1


# -- pending transitions (prepareTransitionTo / appendTransactionToLog / completeTransitionTo) -------------

def test_in_flight_append_prepares_only_and_the_callback_completes() -> None:
    out = handle_end_txn(md("Ongoing", partitions=(0,)), 7, 3, True, -1, TV2, APPEND_IN_FLIGHT)
    assert out.error == Errors.NONE and not out.wrote and out.written is None
    assert (
        out.metadata is not None and out.metadata.state == "Ongoing" and out.metadata.pending_state == "PrepareCommit"
    )
    assert out.metadata.producer_epoch == 3  # the TV2 bump is in the transit only, until the callback
    assert out.transit is not None and out.transit.state == "PrepareCommit" and out.transit.producer_epoch == 4
    done = complete_transit(out.metadata, out.transit)
    assert done.wrote and done.metadata is not None and done.metadata.pending_state == ""
    assert (done.metadata.state, done.metadata.producer_epoch) == ("PrepareCommit", 4)
    assert done.events == ("txn:Ongoing->PrepareCommit",)
    assert done.written is not None and done.written.state == "PrepareCommit"


def test_every_request_meets_a_pending_transition_with_concurrent_transactions() -> None:
    pending = md("Ongoing", partitions=(0,), pending_state="PrepareCommit")
    for out in (
        handle_init_producer_id(pending, 0, -1, -1, 99, TV2, APPEND_IN_FLIGHT),
        handle_add_partitions(pending, 7, 3, (1,), APPEND_IN_FLIGHT),
        handle_end_txn(pending, 7, 3, True, -1, TV2, APPEND_IN_FLIGHT),
        handle_end_txn(pending, 7, 3, False, -1, TV1, APPEND_IN_FLIGHT),
    ):
        assert out.error == Errors.CONCURRENT_TRANSACTIONS and out.metadata == pending and out.transit is None
        assert "pending_transition_in_progress" in out.events
    assert timeout_abort(pending, TV2, APPEND_IN_FLIGHT) is None
    assert expire_transactional_id(md("Empty", pending_state="Ongoing"), APPEND_IN_FLIGHT) is None


def test_kafka_4_answers_pending_before_the_epoch_check_and_3x_after_it() -> None:
    pending = md("Ongoing", partitions=(0,), pending_state="PrepareCommit")
    stale = handle_end_txn(pending, 7, 2, True, -1, TV1, APPEND_IN_FLIGHT)  # KAFKA-18464: pending first
    assert stale.error == Errors.CONCURRENT_TRANSACTIONS
    kafka_3 = kafka_cc(transaction_version=1, concurrent_before_epoch_check=False)
    assert handle_end_txn(pending, 7, 2, True, -1, kafka_3, APPEND_IN_FLIGHT).error == Errors.PRODUCER_FENCED
    tv2_3x = kafka_cc(transaction_version=2, concurrent_before_epoch_check=False)
    done = md("CompleteCommit", epoch=4, pending_state="PrepareAbort")  # an empty abort's append in flight
    assert handle_end_txn(done, 7, 4, False, -1, tv2_3x, APPEND_IN_FLIGHT).error == Errors.PRODUCER_FENCED
    assert handle_end_txn(done, 7, 3, True, -1, tv2_3x, APPEND_IN_FLIGHT).error == Errors.CONCURRENT_TRANSACTIONS
    # KAFKA-18660: AddPartitionsToTxn checks the pending transition before the producer id
    assert handle_add_partitions(pending, 8, 3, (1,)).error == Errors.CONCURRENT_TRANSACTIONS


def test_the_fence_caches_its_bump_before_its_append_and_keeps_it_when_the_append_fails() -> None:
    ongoing = md("Ongoing", partitions=(0,))
    out = handle_init_producer_id(ongoing, 0, -1, -1, 99, TV1, APPEND_IN_FLIGHT)
    assert out.metadata is not None and out.transit is not None
    assert (out.metadata.producer_epoch, out.metadata.pending_state, out.metadata.state) == (
        4,
        "PrepareAbort",
        "Ongoing",
    )
    assert "fence" not in out.events  # the fence's events come with the callback
    done = complete_transit(out.metadata, out.transit, fence=True)
    assert done.events[0] == "fence" and done.metadata is not None and done.metadata.state == "PrepareAbort"
    failed = abort_transit(out.metadata, out.transit, TV1, fenced_epoch=3)
    assert failed is not None and failed.has_failed_epoch_fence and failed.producer_epoch == 4
    assert failed.pending_state == "" and failed.state == "Ongoing"
    tv1_rolls_back = kafka_cc(transaction_version=1, failed_fence_keeps_bump=False)
    rolled_back = abort_transit(out.metadata, out.transit, tv1_rolls_back, 3)
    assert rolled_back is not None and rolled_back.producer_epoch == 3 and rolled_back.has_failed_epoch_fence


def test_the_tv2_fence_bumps_once_in_its_abort_and_a_failed_append_leaves_the_cache() -> None:
    """KAFKA-19367 (PR #19910, #19976): the TV2 fence is the abort's own bump, lastProducerEpoch the fenced one."""
    ongoing = md("Ongoing", partitions=(0,), txn_started=True)
    out = handle_init_producer_id(ongoing, 0, -1, -1, 99, TV2, APPEND_IN_FLIGHT)
    assert out.metadata is not None and out.transit is not None and out.error == NONE
    assert (out.metadata.producer_epoch, out.metadata.pending_state) == (3, "PrepareAbort")
    assert (out.transit.producer_epoch, out.transit.last_producer_epoch) == (4, 3)
    failed = abort_transit(out.metadata, out.transit, TV2, fenced_epoch=3)
    assert failed == ongoing
    atomic = handle_init_producer_id(ongoing, 0, -1, -1, 99, TV2, False)
    assert atomic.metadata == ongoing and atomic.error == Errors.COORDINATOR_NOT_AVAILABLE
    logged = handle_init_producer_id(ongoing, 0, -1, -1, 99, TV2)
    assert logged.metadata is not None and logged.error == Errors.CONCURRENT_TRANSACTIONS
    assert (logged.metadata.state, logged.metadata.producer_epoch, logged.metadata.last_producer_epoch) == (
        "PrepareAbort",
        4,
        3,
    )
    assert "fence" in logged.events


def test_a_failed_append_resets_the_pending_state_unless_kafka_5351_is_undone() -> None:
    out = handle_add_partitions(md("Empty"), 7, 3, (0,), APPEND_IN_FLIGHT)
    assert out.metadata is not None and out.metadata.pending_state == "Ongoing" and out.transit is not None
    failed = abort_transit(out.metadata, out.transit, TV2)
    assert failed == md("Empty")
    stuck = abort_transit(out.metadata, out.transit, kafka_cc(append_failure_resets_pending=False))
    assert stuck is not None and stuck.pending_state == "Ongoing"


def test_completion_is_a_second_pending_transition_and_an_unprepared_completion_is_illegal() -> None:
    prepared = md("PrepareAbort", epoch=4, partitions=(0,), has_failed_epoch_fence=True)
    waiting = prepare_complete(prepared)
    assert waiting.pending_state == "CompleteAbort" and not waiting.has_failed_epoch_fence
    target = complete_target(waiting._replace(partitions=()))
    assert (target.state, target.partitions, target.pending_state) == ("CompleteAbort", (), "")
    done = complete_transit(waiting._replace(partitions=()), target)
    assert done.metadata is not None and done.metadata.state == "CompleteAbort" and done.wrote
    illegal = complete_transit(prepared, target)  # no pending state: completeTransitionTo throws
    assert illegal.error == Errors.UNKNOWN_SERVER_ERROR and not illegal.wrote
    assert any(e.startswith("illegal:complete") for e in illegal.events)


def test_preparing_over_a_pending_transition_is_illegal() -> None:
    pending = md("Ongoing", partitions=(0,), pending_state="PrepareCommit")
    out = timeout_abort(pending, kafka_cc(timeout_abort_skips_pending=False), APPEND_IN_FLIGHT)
    assert out is not None and out.error == Errors.UNKNOWN_SERVER_ERROR and out.transit is None
    assert any(e.startswith("illegal:") for e in out.events)


def test_the_expiry_tombstone_is_pending_dead_and_its_callback_removes_the_entry() -> None:
    out = expire_transactional_id(md("CompleteCommit"), APPEND_IN_FLIGHT)
    assert out is not None and out.metadata is not None and out.metadata.pending_state == "Dead"
    assert out.transit is not None
    done = complete_transit(out.metadata, out.transit)
    assert done.metadata is None and done.wrote and "transactional_id_expired" in done.events


@pytest.mark.parametrize("cfg", [TV1, TV2], ids=["tv1", "tv2"])
@pytest.mark.parametrize("state", ["Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "Empty"])
def test_fence_labels_the_transition_from_the_entrys_own_state(cfg: object, state: str) -> None:
    """``prepareFenceProducerEpoch`` goes through ``prepareTransitionTo``, whose valid previous state of
    PrepareEpochFence is Ongoing only: the fence's ``txn:`` label names the entry's real state, so a defect that
    fences another state (a timeout abort of a PrepareCommit, an InitProducerId fence of a completed id) shows as
    an illegal transition to the step judge (``model_contract``) instead of a legal-looking Ongoing one."""
    out = fence_and_abort(md(state, partitions=(0,), txn_started=True), cfg, True, 42)  # type: ignore[arg-type]
    labels = [e for e in out.events if e.startswith(f"txn:{state}->PrepareEpochFence")]
    assert labels == [f"txn:{state}->PrepareEpochFence"]
    assert is_valid_transition(state, "PrepareEpochFence") == (state == "Ongoing")
