"""Producer state expiry (issue 14): ``producer.id.expiration.ms`` and ``transactional.id.expiration.ms``.

``ProducerStateManager.isProducerExpired`` never expires a producer with an
ongoing transaction on the partition; the model's ``ExpireProducerState`` is a
timeout action (a protocol step, not a fault) that keeps that rule, and the
weakened variant ``expire_producers_with_open_transactions`` drops it.
"""

from __future__ import annotations

import pytest

from keos.model.interface import Action
from keos.model.log.partition import LogEntry, PartitionLeader
from keos.model.log.producer_expiry import expirable, expire_producer
from keos.model.log.producer_state import ProducerStateEntry
from keos.model.systems.transactions import TransactionalSystem
from keos.scenarios import ScenarioError, build_model, parse_scenario, resolve_scenario


def _leader(open_txn: bool) -> PartitionLeader:
    entry = ProducerStateEntry(7, 0, (), -1, 0 if open_txn else -1)
    return PartitionLeader(log=(LogEntry(7, 0, 0, (1,), True),), high_watermark=1, producers=(entry,))


def test_idle_producer_expires_but_not_while_its_transaction_is_open() -> None:
    result = expire_producer(_leader(open_txn=False), 7)
    assert result is not None and result[0].producers == () and result[1] == ("producer_state_expired",)
    assert result[0].log == _leader(False).log  # the log is untouched
    assert expire_producer(_leader(open_txn=True), 7) is None
    assert expire_producer(_leader(open_txn=False), 8) is None  # unknown producer id
    weak = expire_producer(_leader(open_txn=True), 7, keep_open_transactions=False)
    assert weak is not None and "open_transaction_expired" in weak[1]
    assert expirable(_leader(True).producers[0], False) and not expirable(_leader(True).producers[0])


def test_expiry_is_a_protocol_step_and_an_expired_producer_is_accepted_at_any_sequence() -> None:
    m = build_model(resolve_scenario("txn_producer_state_expiry"))
    assert isinstance(m, TransactionalSystem)
    s = m.init_states()[0]
    state = s._replace(partitions=(_leader(open_txn=False),))
    actions = m.actions(state)
    assert Action("ExpireProducerState", (0, 7)) in actions
    assert m.fault_kind(Action("ExpireProducerState", (0, 7))) is None
    step = m.step(state, Action("ExpireProducerState", (0, 7)))
    assert step is not None and step.state.faults_used == state.faults_used
    assert step.state.partitions[0].entry(7) is None
    opened = s._replace(partitions=(_leader(open_txn=True),))
    assert Action("ExpireProducerState", (0, 7)) not in m.actions(opened)
    assert m.step(opened, Action("ExpireProducerState", (0, 7))) is None
    weak = build_model(resolve_scenario("txn_producer_state_expiry"), "expire_producers_with_open_transactions")
    assert weak.step(opened, Action("ExpireProducerState", (0, 7))) is not None


def test_default_transaction_scenarios_do_not_expire_producers() -> None:
    m = build_model(resolve_scenario("txn_kafka_12671_hanging"))
    s = m.init_states()[0]._replace(partitions=(_leader(open_txn=False),))
    assert not any(a.kind == "ExpireProducerState" for a in m.actions(s))


def test_transactional_id_expiration_is_a_timeout_action_not_a_fault() -> None:
    m = build_model(resolve_scenario("txn_producer_state_expiry"))
    assert isinstance(m, TransactionalSystem)
    assert m.fault_kind(Action("ExpireTransactionalId", (0,))) is None
    assert "txn_id_expiry" not in m.fault_kinds()
    s = m.init_states()[0]
    for kind in ("InitTransactions", "SendTxnRequest"):
        step = m.step(s, next(a for a in m.actions(s) if a.kind == kind))
        assert step is not None
        s = step.state
    while s.coordinator[0] is None or s.network:  # deliver InitProducerId and its response
        step = m.step(s, next(a for a in m.actions(s) if a.kind == "Deliver"))
        assert step is not None
        s = step.state
    assert Action("ExpireTransactionalId", (0,)) in m.actions(s)  # Empty and idle: no budget needed
    step = m.step(s, Action("ExpireTransactionalId", (0,)))
    assert step is not None and "transactional_id_expired" in step.events
    assert step.state.coordinator[0] is None and step.state.faults_used == s.faults_used


def test_transactional_id_expiration_with_a_fault_budget_is_a_scenario_error() -> None:
    with pytest.raises(ScenarioError, match="txn_id_expiry must be 0"):
        parse_scenario(
            {
                "name": "t",
                "model": "transactions",
                "transactions": {"transactional_id_expiration": True},
                "faults": {"txn_id_expiry": 1, "total": 1},
            }
        )
