"""A coordinator failover with the old leader's appends in flight (issue: infidelity (a)/(b) of session 17).

``CoordinatorFailoverReplicated``: the record reached the new ``__transaction_state`` leader, the new coordinator
loads it, the old instance's callback answers NOT_COORDINATOR (``appendTransactionToLog``: status NONE, then the
coordinator-epoch / ownership check).  ``AppendNotLeader``: the callback runs before the emigration under the same
coordinator epoch (NOT_LEADER_OR_FOLLOWER -> NOT_COORDINATOR, pending state reset), then the failover.
KAFKA-20357: the loaded entry keeps lastProducerEpoch (v1+ records), so the producer's retry is not fenced.
"""

from __future__ import annotations

from typing import Any

from keos.checker.api import load_scenario
from keos.model.interface import Action
from keos.scenarios import build_model


def _run(model: Any, kinds: list[str]) -> tuple[Any, list[tuple[str, ...]]]:
    """Step through the first enabled action of each kind (a Deliver of the channel head named by its body)."""
    s = model.init_states()[0]
    trail: list[tuple[str, ...]] = []
    for kind in kinds:
        name, _, body = kind.partition(":")
        acts = [a for a in model.actions(s) if a.kind == name and (not body or type(a.args[0].body).__name__ == body)]
        assert acts, (kind, [model.format_action(a) for a in model.actions(s)])
        step = model.step(s, acts[0])
        assert step is not None
        s = step.state
        trail.append(step.events)
    return s, trail


INIT = ["InitTransactions", "SendTxnRequest", "Deliver:InitProducerIdRequest"]


def test_replicated_append_is_loaded_and_its_old_callback_answers_not_coordinator() -> None:
    model = build_model(load_scenario("reach_txn_loading_window"))
    s, trail = _run(model, [*INIT, "CoordinatorFailoverReplicated", "Deliver:TxnLogAppend"])
    assert "txn_log_append_replicated_at_failover" in trail[3]
    assert s.txn_log[0] is not None and s.txn_log[0].producer_epoch == 0  # the new leader's log has the record
    assert "txn_log_append_stale_replicated" in trail[4] and "error:NOT_COORDINATOR" in trail[4]
    assert s.coordinator[0] is not None and not s.coordinator[0].pending_state  # the new instance's entry untouched


def test_lost_append_is_not_loaded() -> None:
    model = build_model(load_scenario("reach_txn_loading_window"))
    s, _ = _run(model, [*INIT, "CoordinatorFailover"])
    assert s.txn_log[0] is None


def test_append_not_leader_answers_before_the_failover_under_the_same_epoch() -> None:
    model = build_model(load_scenario("reach_txn_loading_window"))
    s, trail = _run(model, [*INIT, "AppendNotLeader"])
    events = trail[3]
    assert "txn_log_append_not_leader" in events and "error:NOT_COORDINATOR" in events
    assert "coordinator_failover" in events and s.txn_log[0] is None
    assert not any(e.startswith("answer_table:") for e in s.ghost.bad_transitions)


def test_replicated_bump_retry_is_answered_not_fenced_after_the_load() -> None:
    # KIP-360 bump InitProducerId(pid, epoch) logged by the old coordinator, answered NOT_COORDINATOR, retried
    model = build_model(load_scenario("reach_txn_tv1_init_retry_failover"))
    s = model.init_states()[0]
    for kind in [*INIT, "Deliver:TxnLogAppend", "Deliver:InitProducerIdResponse"]:
        name, _, body = kind.partition(":")
        a = next(a for a in model.actions(s) if a.kind == name and (not body or type(a.args[0].body).__name__ == body))
        s = model.step(s, a).state
    md = s.coordinator[0]
    assert md is not None and md.producer_epoch == 0
    # the restored entry after a replicated bump remembers the epoch it came from
    from keos.model.coordinator.transaction import transaction_coordinator as tc

    bumped = md._replace(producer_epoch=1, last_producer_epoch=0, state="Empty")
    loaded = tc.from_log_value(0, tc.to_log_value(bumped))
    out = tc.handle_init_producer_id(loaded, 0, md.producer_id, 0, -1, model.cc)
    assert out.error == "NONE" and out.producer_epoch == 1 and "init_pid_retry" in out.events
    before_fix = tc.from_log_value(0, tc.to_log_value(bumped), restore_last_epoch=False)
    assert tc.handle_init_producer_id(before_fix, 0, md.producer_id, 0, -1, model.cc).error == "PRODUCER_FENCED"


def test_actions_are_offered_only_with_an_append_in_flight() -> None:
    model = build_model(load_scenario("reach_txn_loading_window"))
    s = model.init_states()[0]
    kinds = {a.kind for a in model.actions(s)}
    assert "CoordinatorFailover" in kinds
    assert "CoordinatorFailoverReplicated" not in kinds and "AppendNotLeader" not in kinds
    assert Action("CoordinatorFailoverReplicated", ()) not in model.actions(s)
