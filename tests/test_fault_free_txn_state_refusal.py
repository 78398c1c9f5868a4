"""``sole_producer_not_fenced`` judges transaction-state refusals of a fault-free sole producer (session 34).

A partition leader that refuses a transactional batch INVALID_TXN_STATE or TRANSACTION_ABORTABLE says "this batch is
not part of your ongoing transaction here"; the producer's transaction turns abortable (or the producer fatal) with no
cause the application could see.  Without a fault and with no other instance of the transactional.id, Kafka never
answers so -- except when ``transactional.id.expiration.ms`` removed the idle id.  KAFKA-18575 (PR #18604, Kafka 4.0)
was such a refusal: the next TV2 transaction's first batch lost its verification entry to the previous transaction's
marker.  Before session 34 only Kafka's answer table (``txn_produce_answer_per_kafka``) objected to it.
"""

from __future__ import annotations

from typing import Any

from variant_search import holds_then_violated

from keos.model.coordinator.transaction.transaction_coordinator import TransactionMetadata
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest
from keos.model.systems.transactions import SEQUENCE_REFUSALS, TXN_STATE_REFUSALS, _fault_free_refusal
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()


def _initial(name: str) -> tuple[Any, Any]:
    scenario = SCENARIOS[name]
    model = build_model(scenario, "kafka")
    (init,) = model.init_states()
    return model, init


def test_the_two_refusal_classes_are_disjoint_and_named() -> None:
    assert set(TXN_STATE_REFUSALS) == {Errors.INVALID_TXN_STATE, Errors.TRANSACTION_ABORTABLE}
    assert not set(TXN_STATE_REFUSALS) & set(SEQUENCE_REFUSALS)


def test_a_transaction_state_refusal_is_flagged_only_for_a_fault_free_sole_producer_whose_id_exists() -> None:
    _, s = _initial("txn_producer_state_expiry")
    req = ProduceRequest(0, 0, 0, 0, 0, 0, (1,), transactional=True)
    # the id is in the coordinator's cache once InitProducerId ran; the initial state has none: the expiry excuse
    assert s.coordinator[0] is None
    assert _fault_free_refusal(s, "p0", req, Errors.INVALID_TXN_STATE) is None
    # an epoch refusal is judged whatever the coordinator holds (unchanged by the excuse)
    assert _fault_free_refusal(s, "p0", req, Errors.INVALID_PRODUCER_EPOCH) is not None
    _, t = _initial("txn_verification_round_trip_tv2")
    t = t._replace(coordinator=(TransactionMetadata(0, 0, 0),))
    for error in TXN_STATE_REFUSALS:
        label = _fault_free_refusal(t, "p0", req, error)
        assert label is not None and error in label and "without faults" in label
    # a retriable answer is never judged; a run with a fault used excuses everything
    assert _fault_free_refusal(t, "p0", req, Errors.NOT_ENOUGH_REPLICAS) is None
    faulty = t._replace(faults_used=tuple(1 for _ in t.faults_used))
    assert _fault_free_refusal(faulty, "p0", req, Errors.INVALID_TXN_STATE) is None


def test_kafka_18575_is_caught_in_users_terms_and_kafka_holds() -> None:
    """The whole search of ``txn_verification_round_trip_tv2``: Kafka's rules hold; with the marker clearing the next
    TV2 transaction's fresh verification entry (the weakened variant ``marker_clears_next_transaction_verification``,
    KAFKA-18575's defect) the fault-free sole producer is refused INVALID_TXN_STATE and ``sole_producer_not_fenced``
    objects beside the answer table."""
    variant = "marker_clears_next_transaction_verification"
    violated = holds_then_violated("txn_verification_round_trip_tv2", variant)
    assert {"sole_producer_not_fenced", "txn_produce_answer_per_kafka"} <= violated[variant]


def test_a_txn_offset_commit_refused_for_its_transaction_state_is_flagged_too() -> None:
    """The group coordinator's KIP-890 verification of ``__consumer_offsets`` (``model.systems.eos``): a fault-free
    sole producer's TxnOffsetCommit answered INVALID_TXN_STATE or TRANSACTION_ABORTABLE gets the same label."""
    from keos.model.systems.eos import _fault_free_offsets_refusal

    _, s = _initial("txn_eos_tv1_txn_offset_commit_round_trip")
    assert _fault_free_offsets_refusal(s, 0, Errors.TRANSACTION_ABORTABLE) is s  # no entry for the id yet: excused
    s = s._replace(coordinator=(TransactionMetadata(0, 0, 0),))
    for error in TXN_STATE_REFUSALS:
        labels = _fault_free_offsets_refusal(s, 0, error).ghost.bad_transitions
        assert any(b.startswith("fault_free_refusal:") and "TxnOffsetCommit" in b and error in b for b in labels)
    for error in (Errors.NONE, Errors.CONCURRENT_TRANSACTIONS, Errors.ILLEGAL_GENERATION):
        assert _fault_free_offsets_refusal(s, 0, error) is s
    faulty = s._replace(faults_used=tuple(1 for _ in s.faults_used))
    assert _fault_free_offsets_refusal(faulty, 0, Errors.INVALID_TXN_STATE) is faulty
