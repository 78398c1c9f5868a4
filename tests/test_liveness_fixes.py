"""The model fixes of issue 13, each replayed as the trace that showed the old behaviour.

Every test replays an explicit action list on the weakened variant (the old behaviour, kept as a named
switch) and shows the stuck outcome, then replays the same prefix on the real protocol and shows that
every continuation without faults settles: no coordinator transaction open, every LSO at its high
watermark, the committed records committed.
"""

from __future__ import annotations

from dataclasses import replace

from replay_helpers import play, protocol_reachable, protocol_terminals
from txn_config import kafka_cc

from keos.invariants.progress import open_transactions, pending_markers, unstable_partitions
from keos.model.clients.consumer import COMMITTED, record_fates
from keos.model.clients.transactional_producer import ClientState
from keos.model.coordinator.transaction.transaction_coordinator import (
    TransactionMetadata,
    handle_init_producer_id,
)
from keos.model.coordinator.transaction.transaction_state import TransactionState as S
from keos.model.log.partition import last_stable_offset
from keos.model.protocol.errors import Errors
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()


def _settled(s: object) -> bool:
    return not open_transactions(s) and not unstable_partitions(s)  # type: ignore[arg-type]


# The fault-free 23 steps of txn_kafka_17754_delayed_endtxn that hung before the KAFKA-14563 check.
SEVENTEEN_SEVEN_FIVE_FOUR = [
    "InitTransactions(producer=0)",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
    "Deliver(message=tc->p0#0:InitProducerIdResponse(error=NONE, producer_id=0, producer_epoch=0))",
    "BeginTransaction(producer=0)",
    "Send(producer=0)",
    "CommitTransaction(producer=0)",
    "SendProduce(producer=0, partition=0)",
    "Deliver(message=p0->b0#0:Produce(p0, pid=0, epoch=0, seq=0, [p0.r0]))",
    "Deliver(message=b0->p0#0:ProduceResponse(p0, epoch=0, seq=0, NONE))",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#0:EndTxn(transactional_id=0, producer_id=0, producer_epoch=0, committed=True))",
    "Deliver(message=tc->p0#0:EndTxnResponse(error=NONE, producer_id=0, producer_epoch=1))",
    "BeginTransaction(producer=0)",
    "Send(producer=0)",
    "CommitTransaction(producer=0)",
    "SendProduce(producer=0, partition=0)",
    "Deliver(message=p0->b0#0:Produce(p0, pid=0, epoch=1, seq=0, [p0.r1]))",
    "Deliver(message=tc->b0#0:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=1, "
    "coordinator_epoch=0, committed=True, partition=0))",
    "Deliver(message=b0->p0#0:ProduceResponse(p0, epoch=1, seq=0, NONE))",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#0:EndTxn(transactional_id=0, producer_id=0, producer_epoch=1, committed=True))",
    "Deliver(message=tc->p0#0:EndTxnResponse(error=CONCURRENT_TRANSACTIONS, producer_id=-1, producer_epoch=-1))",
]


def _fault_free_17754() -> object:
    base = SCENARIOS["txn_kafka_17754_delayed_endtxn"]
    assert base.txn is not None
    return replace(base, txn=replace(base.txn, faults=replace(base.txn.faults, total=0)))


def test_batch_of_next_epoch_joined_the_open_transaction_before_kafka_14563() -> None:
    scenario = _fault_free_17754()
    old = build_model(scenario, "ongoing_txn_check_without_epoch")  # type: ignore[arg-type]
    s = play(old, SEVENTEEN_SEVEN_FIVE_FOUR)
    md = s.coordinator[0]
    assert md.state == S.PREPARE_COMMIT and md.producer_epoch == 1
    assert pending_markers(s)  # the COMMIT marker at epoch 1 was rejected
    # Whatever protocol steps follow, the client retries CONCURRENT_TRANSACTIONS forever (a livelock):
    # the coordinator stays in PrepareCommit, p0.r0 (told committed) is never committed, the LSO hangs.
    for t in protocol_reachable(old, s):
        assert t.coordinator[0].state == S.PREPARE_COMMIT
        assert record_fates(t.partitions[0]).get(0) != COMMITTED
        assert last_stable_offset(t.partitions[0]) < t.partitions[0].high_watermark
        assert t.clients[0].state == ClientState.COMMITTING

    real = build_model(scenario, "kafka")  # type: ignore[arg-type]
    s = play(real, SEVENTEEN_SEVEN_FIVE_FOUR[:18])  # the epoch-1 batch is verified: CONCURRENT_TRANSACTIONS
    terminals = protocol_terminals(real, s)
    assert terminals and all(_settled(t) for t in terminals)
    assert all(t.clients[0].state == ClientState.READY and t.clients[0].txn == 2 for t in terminals)


def test_fault_free_17754_commits_both_transactions_and_settles() -> None:
    model = build_model(_fault_free_17754(), "kafka")  # type: ignore[arg-type]
    terminals = protocol_terminals(model, model.init_states()[0])
    assert terminals
    both = 0
    for s in terminals:
        p = s.partitions[0]
        assert last_stable_offset(p) == p.high_watermark
        fates = record_fates(p)
        outcomes = [(o.txn, o.committed) for o in s.ghost.outcomes]
        if outcomes == [(0, True), (1, True)]:
            both += 1
            assert s.coordinator[0].state in (S.COMPLETE_COMMIT, S.EMPTY)
            assert [fates.get(model.record_of(0, n)) for n in (0, 1)] == [COMMITTED, COMMITTED]
        else:
            # the second batch used up retries=1 on CONCURRENT_TRANSACTIONS while the first commit's marker
            # was on its way; the application aborted it, and that abort completed too
            assert outcomes == [(0, True), (1, False)]
            assert s.coordinator[0].state == S.COMPLETE_ABORT
            assert fates.get(model.record_of(0, 0)) == COMMITTED
        assert s.clients[0].state == ClientState.READY and s.clients[0].txn == 2
    assert both


# txn_coordinator_faults: a timeout abort, then a failover; the new coordinator re-sends the marker.
KAFKA_19999 = [
    "InitTransactions(producer=0)",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
    "Deliver(message=tc->p0#0:InitProducerIdResponse(error=NONE, producer_id=0, producer_epoch=0))",
    "BeginTransaction(producer=0)",
    "Send(producer=0)",
    "SendProduce(producer=0, partition=0)",
    "Deliver(message=p0->b0#0:Produce(p0, pid=0, epoch=0, seq=0, [p0.r0]))",
    "TxnTimeout(transactional_id=0)",
    "CoordinatorFailover()",
    "Deliver(message=tc->b0#0:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=1, "
    "coordinator_epoch=0, committed=False, partition=0))",
    "Deliver(message=tc->b0#1:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=1, "
    "coordinator_epoch=1, committed=False, partition=0))",
]


def test_marker_retry_after_failover_hung_before_kafka_19999() -> None:
    scenario = SCENARIOS["txn_coordinator_faults"]
    old = build_model(scenario, "no_kafka_19999_fix")
    s = play(old, KAFKA_19999)
    assert s.coordinator[0].state == S.PREPARE_ABORT
    assert open_transactions(s) and pending_markers(s)
    # the re-sent marker was rejected: whatever the client does next, the abort never completes
    assert all(t.coordinator[0].state == S.PREPARE_ABORT for t in protocol_reachable(old, s))

    real = build_model(scenario, "kafka")
    before = play(real, KAFKA_19999[:-1])
    resent = next(a for a in real.actions(before) if real.format_action(a) == KAFKA_19999[-1])
    step = real.step(before, resent)
    assert step is not None and "marker_retry_accepted" in step.events  # the idempotent retry of KAFKA-19999
    s = step.state
    terminals = protocol_terminals(real, s)
    assert terminals and all(_settled(t) for t in terminals)
    # the timed-out transaction is aborted: p0.r0 is never committed
    assert all(record_fates(t.partitions[0]).get(0) != COMMITTED for t in terminals)


# txn_fence_append_failures: instance 1 is in a transaction; instance 0's fence fails to append, then retries.
FAILED_FENCE = [
    "InitTransactions(producer=0)",
    "SendTxnRequest(producer=0)",
    "InitTransactions(producer=1)",
    "SendTxnRequest(producer=1)",
    "Deliver(message=p1->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
    "Deliver(message=tc->p1#0:InitProducerIdResponse(error=NONE, producer_id=0, producer_epoch=0))",
    "BeginTransaction(producer=1)",
    "Send(producer=1)",
    "SendProduce(producer=1, partition=0)",
    "Deliver(message=p1->b0#0:Produce(p0, pid=0, epoch=0, seq=0, [p1.r0]))",
    "AppendFailure(message=p0->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
    "Deliver(message=tc->p0#0:InitProducerIdResponse(error=COORDINATOR_NOT_AVAILABLE, producer_id=-1, "
    "producer_epoch=-1))",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
]


def test_fence_after_failed_append_bumps_once_as_kafka_19367() -> None:
    """The rolled-back variant hangs; Kafka (TV2, 4.0.1+: KAFKA-19367, PRs #19910/#19976) caches nothing when the
    fence's append fails, and the retried fence bumps once, in the PrepareAbort it writes.  KAFKA-9666's
    ``hasFailedEpochFence`` (TV0/TV1) is pinned by ``test_failed_fence_unit_rows``."""
    scenario = SCENARIOS["txn_fence_append_failures"]
    old = build_model(scenario, "failed_fence_rolls_back_epoch")
    s = play(old, FAILED_FENCE)
    md = s.coordinator[0]
    assert md.state == S.PREPARE_ABORT and md.producer_epoch == 0  # the zombie's own epoch
    s = play(
        old,
        [
            "Deliver(message=tc->b0#0:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=0, "
            "coordinator_epoch=0, committed=False, partition=0))"
        ],
        s,
    )
    assert pending_markers(s)  # the marker was rejected: the fence can never complete
    assert all(t.coordinator[0].state == S.PREPARE_ABORT for t in protocol_reachable(old, s))

    real = build_model(scenario, "kafka")
    s = play(real, FAILED_FENCE[:12])
    assert s.coordinator[0].producer_epoch == 0 and not s.coordinator[0].has_failed_epoch_fence
    assert s.txn_log[0].producer_epoch == 0  # nothing cached ahead of the log
    s = play(real, FAILED_FENCE[12:], s)
    assert s.coordinator[0].state == S.PREPARE_ABORT and s.coordinator[0].producer_epoch == 1
    terminals = protocol_terminals(real, s)
    assert terminals and all(_settled(t) for t in terminals)
    for t in terminals:
        zombie, survivor = t.clients[1], t.clients[0]
        # the zombie is fenced, or its abort is answered as a TV2 retry of the fence's abort
        assert zombie.fenced if zombie.state == ClientState.FATAL_ERROR else zombie.state == ClientState.READY
        assert not any(o.committed for o in t.ghost.outcomes if o.producer == 1)
        assert survivor.state == ClientState.READY and not survivor.fenced and survivor.data.producer_epoch >= 2


def test_failed_fence_unit_rows() -> None:
    ongoing = TransactionMetadata(0, 7, 3, state=S.ONGOING, partitions=(0,), txn_started=True)
    keep = kafka_cc(transaction_version=1)
    failed = handle_init_producer_id(ongoing, 0, -1, -1, 42, keep, append_ok=False)
    assert failed.error == Errors.COORDINATOR_NOT_AVAILABLE
    assert (
        failed.metadata is not None and failed.metadata.producer_epoch == 4 and failed.metadata.has_failed_epoch_fence
    )
    again = handle_init_producer_id(failed.metadata, 0, -1, -1, 42, keep)
    assert again.metadata is not None and again.metadata.state == S.PREPARE_ABORT
    assert again.metadata.producer_epoch == 4 and again.written is not None and again.written.producer_epoch == 4

    rollback = kafka_cc(transaction_version=1, failed_fence_keeps_bump=False)
    failed = handle_init_producer_id(ongoing, 0, -1, -1, 42, rollback, append_ok=False)
    assert failed.metadata is not None and failed.metadata.producer_epoch == 3
    again = handle_init_producer_id(failed.metadata, 0, -1, -1, 42, rollback)
    assert again.written is not None and again.written.producer_epoch == 3  # the fenced epoch itself


# KAFKA-18464: the next transaction's abort while the previous commit's markers are being written.
KAFKA_18464_PREFIX = SEVENTEEN_SEVEN_FIVE_FOUR[:15] + [
    "SendProduce(producer=0, partition=0)",
    "Deliver(message=p0->b0#0:Produce(p0, pid=0, epoch=1, seq=0, [p0.r1]))",
    "Deliver(message=b0->p0#0:ProduceResponse(p0, epoch=1, seq=0, NOT_ENOUGH_REPLICAS))",
    "SendProduce(producer=0, partition=0)",
    "Deliver(message=p0->b0#0:Produce(p0, pid=0, epoch=1, seq=0, [p0.r1]))",
    "Deliver(message=b0->p0#0:ProduceResponse(p0, epoch=1, seq=0, NOT_ENOUGH_REPLICAS))",
    "AbortTransaction(producer=0)",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#0:EndTxn(transactional_id=0, producer_id=0, producer_epoch=1, committed=False))",
]


def test_abort_during_previous_commit_fenced_the_producer_before_kafka_18464() -> None:
    scenario = _fault_free_17754()
    old = build_model(scenario, "no_kafka_18464_fix")  # type: ignore[arg-type]
    s = play(
        old,
        [
            *KAFKA_18464_PREFIX,
            "Deliver(message=tc->p0#0:EndTxnResponse(error=PRODUCER_FENCED, producer_id=-1, producer_epoch=-1))",
        ],
    )
    assert s.clients[0].state == ClientState.FATAL_ERROR and s.clients[0].fenced

    real = build_model(scenario, "kafka")  # type: ignore[arg-type]
    s = play(
        real,
        [
            *KAFKA_18464_PREFIX,
            "Deliver(message=tc->p0#0:EndTxnResponse(error=CONCURRENT_TRANSACTIONS, "
            "producer_id=-1, producer_epoch=-1))",
        ],
    )
    terminals = protocol_terminals(real, s)
    assert terminals and all(_settled(t) for t in terminals)
    assert all(t.clients[0].state == ClientState.READY and not t.clients[0].fenced for t in terminals)
    assert all([o.committed for o in t.ghost.outcomes] == [True, False] for t in terminals)


# txn_coordinator_faults: a commit's marker is out when the coordinator moves away and back (epoch 0 -> 1); the
# reloaded PrepareCommit re-sends it, then the marker of epoch 0 is answered before the one of epoch 1.
KAFKA_16352 = [
    *SEVENTEEN_SEVEN_FIVE_FOUR[:12],  # the commit up to its EndTxn, as there
    "CoordinatorFailover()",
    "Deliver(message=tc->b0#0:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=1, "
    "coordinator_epoch=0, committed=True, partition=0))",
    "Deliver(message=tc->b0#1:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=1, "
    "coordinator_epoch=1, committed=True, partition=0))",
]


def test_stale_marker_answer_cancelled_the_reloaded_completion_before_kafka_16352() -> None:
    scenario = SCENARIOS["txn_coordinator_faults"]
    old = build_model(scenario, "no_kafka_16352_fix")
    s = play(old, KAFKA_16352)
    # every marker is written, but the stale answer removed the reloaded transaction's pending completion
    assert s.coordinator[0].state == S.PREPARE_COMMIT and not s.coordinator[0].partitions
    assert not s.pending_markers
    assert all(t.coordinator[0].state == S.PREPARE_COMMIT for t in protocol_reachable(old, s))

    real = build_model(scenario, "kafka")
    s = play(real, KAFKA_16352[:-1])
    assert [e.coordinator_epoch for e in s.pending_markers] == [1]  # the stale answer removed nothing of epoch 1
    last = next(a for a in real.actions(s) if real.format_action(a) == KAFKA_16352[-1])
    step = real.step(s, last)
    assert step is not None and not step.state.pending_markers
    terminals = protocol_terminals(real, step.state)
    assert terminals and all(_settled(t) for t in terminals)
    assert all(record_fates(t.partitions[0]).get(0) == COMMITTED for t in terminals)
