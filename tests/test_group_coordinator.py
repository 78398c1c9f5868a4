"""One test per group-coordinator rule of kafka_facts.md §3.2-3.3, on the pure handlers."""

from __future__ import annotations

from keos.model.coordinator.group.group_coordinator import (
    COMPLETING_REBALANCE,
    OFFSET_COMMIT_CHECKS,
    STABLE,
    GroupMetadata,
    append_txn_offset_commit,
    committed_offset,
    form_group,
    handle_offset_commit,
    handle_offset_fetch,
    handle_txn_marker,
    rebalance,
    sync_group,
    validate_offset_commit,
)
from keos.model.coordinator.transaction.transaction_coordinator import OFFSETS_PARTITION_BASE
from keos.model.log.txn_markers import marker_rules as _marker_rules
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import WriteTxnMarkersRequest
from keos.model.variants import ProtocolFlags as _ProtocolFlags

KAFKA_RULES = _marker_rules(_ProtocolFlags())  # Kafka's marker rules (model.log.txn_markers.MarkerRules)

PID = 7


def handle_txn_offset_commit(g: GroupMetadata, pid: int, epoch: int, member: int, generation: int, partition: int,
                             offset: int, check_generation: bool = True) -> tuple[GroupMetadata, str, tuple[str, ...]]:
    """TxnOffsetCommit after the transaction check, as the eos model runs it: validate, then append."""
    error = validate_offset_commit(g, member, generation, True, check_generation)
    if error != Errors.NONE:
        return g, error, (f"txn_offset_commit_rejected:{error}",)
    return append_txn_offset_commit(g, pid, epoch, partition, offset)


def group() -> GroupMetadata:
    return form_group(0, (0, 1), (0,))


def marker(committed: bool, epoch: int = 1) -> WriteTxnMarkersRequest:
    return WriteTxnMarkersRequest(0, PID, epoch, 0, committed, OFFSETS_PARTITION_BASE)


def staged(g: GroupMetadata, offset: int = 1, epoch: int = 0) -> GroupMetadata:
    g, err, _ = handle_txn_offset_commit(g, PID, epoch, 0, g.generation, 0, offset)
    assert err == Errors.NONE
    return g


def test_join_bumps_generation_and_sync_makes_the_group_stable() -> None:
    g = group()
    assert (g.generation, g.state) == (1, STABLE)
    g = rebalance(g, g.members, (1,))
    assert (g.generation, g.state, g.assignment) == (2, COMPLETING_REBALANCE, (1,))
    g = sync_group(g, 1)
    assert g.state == COMPLETING_REBALANCE and g.synced == (1,)
    g = sync_group(g, 0)
    assert g.state == STABLE


def test_txn_offset_commit_from_an_old_generation_is_illegal_generation() -> None:
    g = rebalance(group(), (0, 1), (1,))
    _, err, events = handle_txn_offset_commit(g, PID, 0, 0, 1, 0, 1)
    assert err == Errors.ILLEGAL_GENERATION and "txn_offset_commit_rejected:ILLEGAL_GENERATION" in events
    _, err, _ = handle_txn_offset_commit(g, PID, 0, 0, 1, 0, 1, check_generation=False)
    assert err == Errors.NONE  # the pre-KAFKA-2555 coordinator (variant no_generation_fencing)


def test_txn_offset_commit_from_an_unknown_member_is_unknown_member_id() -> None:
    _, err, _ = handle_txn_offset_commit(group(), PID, 0, 5, 1, 0, 1)
    assert err == Errors.UNKNOWN_MEMBER_ID


def test_transactional_commit_accepted_during_completing_rebalance_plain_commit_not() -> None:
    g = rebalance(group(), (0, 1), (1,))
    g2, err, events = handle_txn_offset_commit(g, PID, 0, 1, 2, 0, 1)
    assert err == Errors.NONE and "txn_offset_commit_during_completing_rebalance" in events and g2.pending
    _, err, _ = handle_offset_commit(g, 1, 2, 0, 1)
    assert err == Errors.REBALANCE_IN_PROGRESS


def test_validation_order_and_missing_group() -> None:
    assert [e for _, e in OFFSET_COMMIT_CHECKS][-3:] == [
        Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION, Errors.REBALANCE_IN_PROGRESS]
    completing = group()._replace(state=COMPLETING_REBALANCE)
    assert validate_offset_commit(completing, 0, 99, False) == Errors.ILLEGAL_GENERATION  # real broker's order
    assert validate_offset_commit(completing, 0, completing.generation, False) == Errors.REBALANCE_IN_PROGRESS
    assert validate_offset_commit(group(), -1, -1, True) == Errors.NONE  # TxnOffsetCommit without group metadata
    assert validate_offset_commit(None, 0, -1, True) == Errors.NONE
    assert validate_offset_commit(None, 0, 3, True) == Errors.ILLEGAL_GENERATION
    assert validate_offset_commit(group()._replace(state="Dead"), 0, 1, True) == Errors.COORDINATOR_NOT_AVAILABLE
    assert validate_offset_commit(GroupMetadata(0), 9, -1, False) == Errors.NONE  # Empty group, generation -1


def test_pending_offsets_materialise_on_commit_marker() -> None:
    g = staged(group())
    assert committed_offset(g, 0) is None
    g, err, events = handle_txn_marker(g, marker(True), 2, KAFKA_RULES)
    assert err == Errors.NONE and "offsets_materialised" in events
    c = committed_offset(g, 0)
    assert c is not None and c.offset == 1 and not g.pending


def test_pending_offsets_lose_to_a_newer_plain_commit() -> None:
    g = staged(group(), offset=1)
    g, err, _ = handle_offset_commit(g, 0, 1, 0, 5)
    assert err == Errors.NONE
    g, _, events = handle_txn_marker(g, marker(True), 2, KAFKA_RULES)
    c = committed_offset(g, 0)
    assert "offsets_superseded" in events and c is not None and c.offset == 5


def test_pending_offsets_discarded_on_abort_marker() -> None:
    g = staged(group())
    g, err, events = handle_txn_marker(g, marker(False), 2, KAFKA_RULES)
    assert err == Errors.NONE and "offsets_discarded" in events
    assert committed_offset(g, 0) is None and not g.pending


def test_stale_marker_is_rejected_under_tv2() -> None:
    g = staged(group(), epoch=1)
    _, err, _ = handle_txn_marker(g, marker(True, epoch=1), 2, KAFKA_RULES)
    assert err == Errors.INVALID_PRODUCER_EPOCH


def test_txn_offset_commit_with_an_old_producer_epoch_is_rejected() -> None:
    g = staged(group(), epoch=3)
    _, err, _ = handle_txn_offset_commit(g, PID, 2, 0, 1, 0, 1)
    assert err == Errors.INVALID_PRODUCER_EPOCH


def test_require_stable_fetch_is_unstable_while_offsets_are_pending() -> None:
    g = staged(group())
    assert handle_offset_fetch(g, 0, require_stable=True) == (Errors.UNSTABLE_OFFSET_COMMIT, -1)
    assert handle_offset_fetch(g, 0, require_stable=False) == (Errors.NONE, -1)
    g, _, _ = handle_txn_marker(g, marker(True), 2, KAFKA_RULES)
    assert handle_offset_fetch(g, 0, require_stable=True) == (Errors.NONE, 1)


def test_txn_offset_commit_verification_answers_as_kafka() -> None:
    """KAFKA-15449 (trunk 1eb7644): the transaction is verified before the group's checks;
    AddPartitionsToTxnManager turns PRODUCER_FENCED into INVALID_PRODUCER_EPOCH and passes the rest."""
    from keos.model.coordinator.group.group_coordinator import verification_error

    assert verification_error(Errors.PRODUCER_FENCED) == Errors.INVALID_PRODUCER_EPOCH
    for verdict in (Errors.NONE, Errors.INVALID_PRODUCER_ID_MAPPING, Errors.TRANSACTION_ABORTABLE,
                    Errors.CONCURRENT_TRANSACTIONS):
        assert verification_error(verdict) == verdict


def test_no_verification_while_a_transaction_is_open_on_the_offsets_partition() -> None:
    """UnifiedLog.maybeStartTransactionVerification: an ongoing transaction of the producer (KAFKA-14563:
    of the request's epoch) needs no round trip; Kafka 3.x looked at the producer id alone."""
    from keos.model.coordinator.group.group_coordinator import txn_offset_commit_needs_verification as needs

    g = group()
    assert needs(g, PID, 0)
    g, error, _ = handle_txn_offset_commit(g, PID, 0, 0, g.generation, 0, 1)
    assert error == Errors.NONE
    assert not needs(g, PID, 0)
    assert needs(g, PID, 1) and not needs(g, PID, 1, check_epoch=False)
    marker = WriteTxnMarkersRequest(0, PID, 0, 0, True, OFFSETS_PARTITION_BASE)
    g, error, _ = handle_txn_marker(g, marker, 1, KAFKA_RULES)
    assert error == Errors.NONE and needs(g, PID, 0)


def test_a_new_coordinator_loads_committed_and_pending_offsets_from_the_log() -> None:
    """OffsetMetadataManager.replay / replayEndTransactionMarker: plain commits committed, a transactional
    offset pending until its producer's marker, a later plain commit winning over an older transaction."""
    from keos.model.coordinator.group.group_coordinator import finish_load, has_pending, load_offsets

    g = group()
    g, _, _ = handle_offset_commit(g, 0, g.generation, 0, 1)
    g, _, _ = handle_txn_offset_commit(g, PID, 0, 0, g.generation, 0, 2)
    loaded = load_offsets(g)
    # the load is asynchronous: reads answer COORDINATOR_LOAD_IN_PROGRESS until it completes
    assert loaded.loading and handle_offset_fetch(loaded, 0, require_stable=False) == (
        Errors.COORDINATOR_LOAD_IN_PROGRESS,
        -1,
    )
    loaded = finish_load(loaded)
    assert loaded == g and has_pending(loaded, 0) and committed_offset(loaded, 0).offset == 1
    g, _, _ = handle_txn_marker(g, marker(True), 1, KAFKA_RULES)
    assert finish_load(load_offsets(g)) == g and committed_offset(g, 0).offset == 2
    # the weakened load takes the transactional offset as committed before any marker
    g2, _, _ = handle_txn_offset_commit(group(), PID, 0, 0, 1, 0, 5)
    assert committed_offset(load_offsets(g2, keep_pending=False), 0).offset == 5


def test_offset_fetch_table_judges_every_value_of_require_stable() -> None:
    """The OffsetFetch judge (model/systems/offset_fetch_table.py) asks the handler under requireStable=false as
    well -- the Admin client's default, which no consumer of the scenarios sends -- and names a handler that refuses
    it while a transaction is open (the weakened variant offset_fetch_unstable_without_require_stable)."""
    from keos.model.systems.offset_fetch_table import fetch_table_mismatches

    g = staged(group())
    assert fetch_table_mismatches(handle_offset_fetch, g, 0) == []
    assert fetch_table_mismatches(lambda g_, p, rs: handle_offset_fetch(g_, p, rs, True, False), g, 0) == [
        "answer_table:OffsetFetch:committed:requireStable=False:UNSTABLE_OFFSET_COMMIT@-1:kafka:NONE@-1"]
    loading = g._replace(loading=True)
    assert fetch_table_mismatches(handle_offset_fetch, loading, 0) == []
    assert len(fetch_table_mismatches(lambda g_, p, rs: handle_offset_fetch(g_, p, rs, False), loading, 0)) == 2
