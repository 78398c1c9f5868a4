"""KIP-890 verification as Kafka's round trip (``verification_round_trip``): the leader's VerificationStateEntry and
guard, the guarded callback, the error translation, and the weakened variants the round-trip scenarios catch.

Kafka trunk ``1eb7644349cb``: ``UnifiedLog.maybeStartTransactionVerification`` / ``analyzeAndValidateProducerState``,
``ProducerStateManager.maybeCreateVerificationStateEntry``, ``ReplicaManager.handleProduceAppend``; trunk 2025:
``UnifiedLog.updateProducers`` (``isV2NextTransactionStarted``), PR #20534 (stale epoch before the guard).
"""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.invariants.transactions import _stale_verifications
from keos.model import network as net
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.interface import ModelError
from keos.model.log import partition as part
from keos.model.log.producer_state import BatchMetadata, ProducerStateEntry
from keos.model.log.txn_markers import append_end_txn_marker
from keos.model.log.txn_markers import marker_rules as _marker_rules
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, WriteTxnMarkersRequest
from keos.model.systems.transactions import TransactionalSystem
from keos.model.variants import VARIANTS, ProtocolFlags
from keos.scenarios import ScenarioError, build_model, builtin_scenarios, parse_scenario

KAFKA_RULES = _marker_rules(ProtocolFlags())  # Kafka's marker rules (model.log.txn_markers.MarkerRules)

FLAGS = ProtocolFlags()
SCENARIOS = builtin_scenarios()


def _batch(epoch: int = 0, seq: int = 0, pid: int = 7) -> ProduceRequest:
    return ProduceRequest(0, 0, 0, pid, epoch, seq, (1,), True)


def _marker(epoch: int, committed: bool = False, pid: int = 7) -> WriteTxnMarkersRequest:
    return WriteTxnMarkersRequest(0, pid, epoch, 0, committed, 0)


def test_one_entry_per_producer_id_and_a_fresh_guard_after_it_is_cleared() -> None:
    leader, g0 = part.start_transaction_verification(part.PartitionLeader(), 7, 0, False)
    again, g1 = part.start_transaction_verification(leader, 7, 0, False)
    assert g0 == g1 and again.guards_issued == 1  # computeIfAbsent: a retry presents the same guard
    bumped, g2 = part.start_transaction_verification(leader, 7, 3, False)
    assert g2 == g0 and (v := bumped.verification_entry(7)) is not None and v.epoch == 3
    cleared = part.clear_transaction_verification(leader, 7)
    assert cleared.verification_guard(7) == part.NO_VERIFICATION_GUARD
    _, g3 = part.start_transaction_verification(cleared, 7, 0, False)
    assert g3 != g0  # the ABA the guard exists for: a new entry never verifies an old request
    restarted = part.restart_leader(leader, FLAGS)
    assert restarted.verifying == () and restarted.guards_issued == leader.guards_issued


def test_callback_appends_only_with_the_current_guard() -> None:
    leader, guard = part.start_transaction_verification(part.PartitionLeader(), 7, 0, False)
    ok, resp, events = part.append_verified_txn_batch(leader, _batch(), FLAGS, Errors.NONE, guard)
    assert resp.error == Errors.NONE and len(ok.log) == 1 and "append" in events
    assert ok.verification_entry(7) is None  # the data batch cleared the entry
    # the abort marker of the transaction the coordinator verified lands before the callback
    ended, error, _ = append_end_txn_marker(leader, _marker(0), 1, KAFKA_RULES)
    assert error == Errors.NONE and ended.verification_entry(7) is None
    late, resp, events = part.append_verified_txn_batch(ended, _batch(), FLAGS, Errors.NONE, guard)
    assert resp.error == Errors.INVALID_TXN_STATE and late.log == ended.log and "verification_guard_mismatch" in events
    weak = replace(FLAGS, verification_guard_checked=False)
    hang, resp, _ = part.append_verified_txn_batch(ended, _batch(), weak, Errors.NONE, guard)
    assert resp.error == Errors.NONE and (e := hang.entry(7)) is not None and e.current_txn_first_offset == 1


def test_stale_epoch_is_answered_before_the_guard() -> None:
    leader, guard = part.start_transaction_verification(part.PartitionLeader(), 7, 0, True)
    # a timeout abort's marker at the bumped epoch
    fenced, error, _ = append_end_txn_marker(leader, _marker(1), 2, KAFKA_RULES)
    assert error == Errors.NONE
    _, resp, _ = part.append_verified_txn_batch(fenced, _batch(epoch=0), FLAGS, Errors.NONE, guard)
    assert resp.error == Errors.INVALID_PRODUCER_EPOCH  # recoverable, not the fatal INVALID_TXN_STATE


@pytest.mark.parametrize(
    ("refusal", "answer"),
    [
        (Errors.NETWORK_EXCEPTION, Errors.NOT_ENOUGH_REPLICAS),
        (Errors.NOT_COORDINATOR, Errors.NOT_ENOUGH_REPLICAS),
        (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_ENOUGH_REPLICAS),
        (Errors.CONCURRENT_TRANSACTIONS, Errors.NOT_ENOUGH_REPLICAS),
        (Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH),
        (Errors.TRANSACTION_ABORTABLE, Errors.TRANSACTION_ABORTABLE),
        (Errors.INVALID_PRODUCER_ID_MAPPING, Errors.INVALID_TXN_STATE),
    ],
)
def test_refusals_are_translated_and_append_nothing(refusal: str, answer: str) -> None:
    leader, guard = part.start_transaction_verification(part.PartitionLeader(), 7, 0, False)
    after, resp, _ = part.append_verified_txn_batch(leader, _batch(), FLAGS, refusal, guard)
    assert resp.error == answer and after == leader and resp.base_offset == -1


def test_tv2_marker_keeps_the_next_transactions_entry() -> None:
    entry = ProducerStateEntry(7, 0, (BatchMetadata(0, 0, 0),), -1, 0)
    leader = part.PartitionLeader(log=(part.LogEntry(7, 0, 0, (1,), True),), high_watermark=1, producers=(entry,))
    verifying, guard = part.start_transaction_verification(leader, 7, 1, True)  # next transaction, epoch 1
    kept, error, _ = append_end_txn_marker(verifying, _marker(1, committed=True), 2, KAFKA_RULES)
    assert error == Errors.NONE and kept.verification_guard(7) == guard
    _, resp, _ = part.append_verified_txn_batch(kept, _batch(epoch=1), FLAGS, Errors.NONE, guard)
    assert resp.error == Errors.NONE
    unconditional = KAFKA_RULES._replace(keeps_next_verification=False)
    cleared, _, _ = append_end_txn_marker(verifying, _marker(1, committed=True), 2, unconditional)
    assert cleared.verification_entry(7) is None  # the pre-fix unconditional clear


def test_round_trip_scenarios_hold_and_the_weakened_variants_are_caught() -> None:
    for name, variant, states in (
        ("txn_verification_round_trip_tv1", "tv1", 767),
        ("txn_verification_round_trip_tv2", "kafka", 1099),
    ):
        result, _ = explore(build_model(SCENARIOS[name], variant), name, variant, ExploreOptions())
        assert result.complete and not result.violated and result.stats["distinct_states"] == states
    for variant in ("verification_append_ignores_guard", "marker_keeps_verification_guard",
                    "marker_clears_next_transaction_verification"):
        v = VARIANTS[variant]
        assert v.weakened and len(v.scenarios) == 1
        result, _ = explore(build_model(SCENARIOS[v.scenarios[0]], variant), variant, variant, ExploreOptions())
        assert {p.name for p in result.violations()} & set(v.breaks), variant


def test_round_trip_is_refused_with_pending_transitions() -> None:
    text = {
        "name": "x",
        "model": "transactions",
        "transactions": {"verification_round_trip": True, "pending_transitions": True},
    }
    with pytest.raises(ScenarioError, match="verification_round_trip"):
        parse_scenario(text, "x.toml")
    scenario = SCENARIOS["txn_verification_round_trip_tv2"]
    assert scenario.txn is not None
    topo = replace(scenario.txn.topology, pending_transitions=True)
    with pytest.raises(ModelError, match="verification_round_trip"):
        TransactionalSystem(replace(scenario.txn, topology=topo), VARIANTS["kafka"])


def test_a_verification_entry_left_over_an_append_is_a_finding() -> None:
    """``UnifiedLog.updateProducers`` clears the entry when the transaction's first batch is appended; one left with
    the open transaction's epoch is judged by ``producer_state_per_log``."""
    leader, guard = part.start_transaction_verification(part.PartitionLeader(), 7, 0, False)
    ok, _, _ = part.append_verified_txn_batch(leader, _batch(), FLAGS, Errors.NONE, guard)
    assert _stale_verifications(SimpleNamespace(partitions=(ok,))) == []  # type: ignore[arg-type]
    left = ok._replace(verifying=leader.verifying)
    assert _stale_verifications(SimpleNamespace(partitions=(left,)))  # type: ignore[arg-type]
    # TV2: the next transaction (epoch 1) may verify while the previous one (epoch 0) is still open
    nxt, _ = part.start_transaction_verification(ok, 7, 1, True)
    assert _stale_verifications(SimpleNamespace(partitions=(nxt,))) == []  # type: ignore[arg-type]


def test_verification_asks_about_the_transactional_id_the_request_names() -> None:
    """``ReplicaManager.handleProduceAppend`` verifies a batch under the Produce request's transactionalId, never under
    an id found by its producer id: a client whose producer id is stale (its id re-initialised under another one)
    meets its own entry's state -- under TV2 a pending transition is answered CONCURRENT_TRANSACTIONS before the
    producer id is compared (KAFKA-18660), a settled one INVALID_PRODUCER_ID_MAPPING."""
    system = build_model(SCENARIOS["reach_txn_tv2_double_rotation"], "kafka")
    assert isinstance(system, TransactionalSystem)
    s0 = system.init_states()[0]
    tid = s0.clients[0].transactional_id
    stale = ProduceRequest(0, 0, 0, 7, 0, 0, (1,), True)  # producer id 7: no entry holds it any more
    env = net.Envelope("p0", "broker", 0, stale)
    answers: dict[str, str] = {}
    for pending in ("", tc.TransactionState.PREPARE_COMMIT):
        md = tc.TransactionMetadata(tid, 9, 0, state=tc.TransactionState.ONGOING, partitions=(0,))
        md = md._replace(pending_state=pending)
        s = s0._replace(coordinator=(md,))
        t = system._verification_tid(s, env, stale)
        assert t == tid
        _, answers[pending], _ = system._coordinator_verifies(s, t, stale, True)
    assert answers == {"": Errors.INVALID_PRODUCER_ID_MAPPING, tc.TransactionState.PREPARE_COMMIT:
                       Errors.CONCURRENT_TRANSACTIONS}
