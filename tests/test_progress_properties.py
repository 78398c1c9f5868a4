"""The progress, client-outcome and epoch properties, judged on concrete states.

Each predicate is false on a state built by replaying the trace that shows the bug it catches (under the
weakened variant that reintroduces it) and true on a settled state of the real protocol.  Until the
engines judge ``EVENTUALLY`` properties, these tests are what checks their predicates.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Any

from replay_helpers import play, protocol_actions, protocol_reachable, protocol_terminals
from test_liveness_fixes import FAILED_FENCE, KAFKA_18464_PREFIX, KAFKA_19999, SEVENTEEN_SEVEN_FIVE_FOUR

from keos.model import network as net
from keos.model.connect.worker import TaskPhase
from keos.model.interface import Expectation
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import EndTxnResponse
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()


def _props(model: Any) -> dict[str, Any]:
    return {p.name: p for p in model.properties()}


def _no_faults(name: str) -> Any:
    base = SCENARIOS[name]
    return replace(base, txn=replace(base.txn, faults=replace(base.txn.faults, total=0)))


def test_every_model_kind_states_progress_with_fairness_and_partners() -> None:
    kinds: set[str] = set()
    for scenario in SCENARIOS.values():
        model = build_model(scenario)
        props = _props(model)
        eventually = [p for p in props.values() if p.expectation is Expectation.EVENTUALLY]
        assert eventually, scenario.name
        kinds.add(scenario.model)
        for p in eventually:
            assert p.predicate is not None and p.fairness and "faults stop" in p.fairness[0]
            assert p.partners and set(p.partners) <= set(props), (scenario.name, p.name)
            assert "KIP" in p.source and p.catches
    assert kinds == {"idempotence", "transactions", "eos", "connect", "groups"}


def test_transaction_progress_predicates_on_the_14563_hang() -> None:
    old = build_model(_no_faults("txn_kafka_17754_delayed_endtxn"), "ongoing_txn_check_without_epoch")
    stuck = play(old, SEVENTEEN_SEVEN_FIVE_FOUR)
    p = _props(old)
    for name in (
        "transactions_complete",
        "lso_reaches_high_watermark_eventually",
        "committed_transactions_visible",
        "clients_settle",
        "prepared_transaction_has_markers",
    ):
        assert not p[name].holds(stuck), name
    assert "PrepareCommit" in p["transactions_complete"].explain(stuck)
    assert "p0.r0 of committed transaction 0" in p["committed_transactions_visible"].explain(stuck)
    assert "COMMITTING_TRANSACTION" in p["clients_settle"].explain(stuck)
    # the hang is a livelock: every state the protocol can still reach keeps all four false
    for s in protocol_reachable(old, stuck):
        assert not any(p[n].holds(s) for n in ("transactions_complete", "committed_transactions_visible"))

    real = build_model(_no_faults("txn_kafka_17754_delayed_endtxn"), "kafka")
    terminals = protocol_terminals(real, real.init_states()[0])
    q = _props(real)
    for s in terminals:
        for name in (
            "transactions_complete",
            "lso_reaches_high_watermark_eventually",
            "committed_transactions_visible",
            "clients_settle",
            "prepared_transaction_has_markers",
        ):
            assert q[name].holds(s), (name, q[name].explain(s))


def test_prepared_transaction_has_markers_on_the_19999_hang() -> None:
    scenario = SCENARIOS["txn_coordinator_faults"]
    old = build_model(scenario, "no_kafka_19999_fix")
    stuck = play(old, KAFKA_19999)
    prop = _props(old)["prepared_transaction_has_markers"]
    assert not prop.holds(stuck) and "no marker for partition 0" in prop.explain(stuck)
    real = build_model(scenario, "kafka")
    before_resend = play(real, KAFKA_19999[:-1])  # the re-sent marker is in flight
    assert _props(real)["prepared_transaction_has_markers"].holds(before_resend)


def test_sole_producer_not_fenced_on_the_18464_self_fencing() -> None:
    scenario = _no_faults("txn_kafka_17754_delayed_endtxn")
    old = build_model(scenario, "no_kafka_18464_fix")
    fenced = play(
        old,
        [
            *KAFKA_18464_PREFIX,
            "Deliver(message=tc->p0#0:EndTxnResponse(error=PRODUCER_FENCED, producer_id=-1, producer_epoch=-1))",
        ],
    )
    prop = _props(old)["sole_producer_not_fenced"]
    assert not prop.holds(fenced) and "was fenced in a run without faults" in prop.explain(fenced)
    # a fault excuses it: the same state with a fault charged is not judged
    assert prop.holds(fenced._replace(faults_used=(1, *fenced.faults_used[1:])))
    real = build_model(scenario, "kafka")
    assert all(
        _props(real)["sole_producer_not_fenced"].holds(s) for s in protocol_terminals(real, real.init_states()[0])
    )


ZOMBIE_TOLD_INVALID_TXN_STATE = [
    "InitTransactions(producer=0)",
    "SendTxnRequest(producer=0)",
    "InitTransactions(producer=1)",
    "SendTxnRequest(producer=1)",
    "Deliver(message=p0->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
    "Deliver(message=tc->p0#0:InitProducerIdResponse(error=NONE, producer_id=0, producer_epoch=0))",
    "BeginTransaction(producer=0)",
    "Send(producer=0)",
    "CommitTransaction(producer=0)",
    "SendProduce(producer=0, partition=0)",
    "Deliver(message=p0->b0#0:Produce(p0, pid=0, epoch=0, seq=0, [p0.r0]))",
    "Deliver(message=p1->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
    "Deliver(message=b0->p0#0:ProduceResponse(p0, epoch=0, seq=0, NONE))",
    "SendTxnRequest(producer=0)",
    "Deliver(message=tc->b0#0:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=1, "
    "coordinator_epoch=0, committed=False, partition=0))",
    "Deliver(message=tc->p1#0:InitProducerIdResponse(error=CONCURRENT_TRANSACTIONS, producer_id=0, producer_epoch=1))",
    "SendTxnRequest(producer=1)",
    "Deliver(message=p0->tc#0:EndTxn(transactional_id=0, producer_id=0, producer_epoch=0, committed=True))",
    "Deliver(message=p1->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
]


def test_zombie_fenced_not_fatal_on_the_20785_answer() -> None:
    scenario = SCENARIOS["txn_fence_append_failures"]
    old = build_model(scenario, "no_kafka_20785_fix")
    s = play(
        old,
        [
            *ZOMBIE_TOLD_INVALID_TXN_STATE,
            "Deliver(message=tc->p0#0:EndTxnResponse(error=INVALID_TXN_STATE, producer_id=-1, producer_epoch=-1))",
            "Deliver(message=tc->p1#0:InitProducerIdResponse(error=NONE, producer_id=0, producer_epoch=2))",
        ],
    )
    prop = _props(old)["zombie_fenced_not_fatal"]
    assert not prop.holds(s) and "ended fatal, not fenced" in prop.explain(s)
    real = build_model(scenario, "kafka")
    s = play(
        real,
        [
            *ZOMBIE_TOLD_INVALID_TXN_STATE,
            "Deliver(message=tc->p0#0:EndTxnResponse(error=PRODUCER_FENCED, producer_id=-1, producer_epoch=-1))",
            "Deliver(message=tc->p1#0:InitProducerIdResponse(error=NONE, producer_id=0, producer_epoch=2))",
        ],
    )
    assert s.clients[0].fenced and _props(real)["zombie_fenced_not_fatal"].holds(s)


def test_illegal_attempt_and_unknown_server_error_on_the_2024_table() -> None:
    scenario = SCENARIOS["txn_coordinator_faults"]
    trace = [
        "InitTransactions(producer=0)",
        "SendTxnRequest(producer=0)",
        "Deliver(message=p0->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
        "Deliver(message=tc->p0#0:InitProducerIdResponse(error=NONE, producer_id=0, producer_epoch=0))",
        "BeginTransaction(producer=0)",
        "Send(producer=0)",
        "SendProduce(producer=0, partition=0)",
        "AbortTransaction(producer=0)",
        "ExpireBatch(producer=0, partition=0)",
        "SendTxnRequest(producer=0)",
        "Deliver(message=p0->tc#0:EndTxn(transactional_id=0, producer_id=0, producer_epoch=0, committed=False))",
    ]
    old = build_model(scenario, "tv2_with_2024_transition_table")
    s = play(old, trace)
    p = _props(old)
    assert not p["no_illegal_transition_attempt"].holds(s)
    assert "Empty->PrepareAbort" in p["no_illegal_transition_attempt"].explain(s)
    assert not p["no_unknown_server_error"].holds(s) and "EndTxnResponse" in p["no_unknown_server_error"].explain(s)
    assert p["valid_coordinator_transitions"].holds(s)  # attempted, not taken
    real = build_model(scenario, "kafka")
    s = play(real, trace)
    q = _props(real)
    assert q["no_illegal_transition_attempt"].holds(s) and q["no_unknown_server_error"].holds(s)
    # the predicate reads every response on the wire
    bad = s._replace(
        network=net.send(s.network, net.Envelope("tc", "p0", 0, EndTxnResponse(0, 0, Errors.UNKNOWN_SERVER_ERROR)))
    )
    assert not q["no_unknown_server_error"].holds(bad)


def test_epoch_properties_on_the_19367_double_bump_and_the_rolled_back_fence() -> None:
    scenario = SCENARIOS["txn_fence_append_failures"]
    prefix = FAILED_FENCE[:10]
    double = build_model(scenario, "kafka_19367_double_bump")
    s = play(
        double,
        [*prefix, "Deliver(message=p0->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))"],
    )
    p = _props(double)
    assert not p["epoch_bump_at_most_one"].holds(s) and "epoch_jump:0:0->2" in p["epoch_bump_at_most_one"].explain(s)

    rolled = build_model(scenario, "failed_fence_rolls_back_epoch")
    s = play(rolled, FAILED_FENCE)
    assert not _props(rolled)["fence_raises_epoch"].holds(s)

    real = build_model(scenario, "kafka")
    q = _props(real)
    after_failed = play(real, FAILED_FENCE[:12])
    # TV2 (Kafka 4.0.1+, KAFKA-19367 PRs #19910/#19976): the failed fence cached nothing, the log and cache agree
    md = after_failed.coordinator[0]
    assert not md.has_failed_epoch_fence and q["cached_epoch_follows_log"].holds(after_failed)
    ahead = md._replace(producer_epoch=md.producer_epoch + 1)  # a cache one ahead of its log, no fence pending
    assert not q["cached_epoch_follows_log"].holds(after_failed._replace(coordinator=(ahead,)))
    s = play(real, FAILED_FENCE)
    for name in ("epoch_bump_at_most_one", "fence_raises_epoch", "cached_epoch_follows_log", "epoch_within_limit"):
        assert q[name].holds(s), name
    limit = scenario.txn.max_producer_epoch
    over = s.clients[0]._replace(data=s.clients[0].data._replace(producer_epoch=limit + 1))
    assert not q["epoch_within_limit"].holds(s._replace(clients=(over, *s.clients[1:])))


def _connect_states(name: str, limit: int = 20_000) -> list[Any]:
    model = build_model(SCENARIOS[name])
    init = model.init_states()[0]
    seen, queue, out = {model.fingerprint(init)}, deque([init]), []
    while queue and len(out) < limit:
        s = queue.popleft()
        out.append(s)
        for a in protocol_actions(model, s):
            step = model.step(s, a)
            assert step is not None
            fp = model.fingerprint(step.state)
            if fp not in seen:
                seen.add(fp)
                queue.append(step.state)
    return out


def test_connect_progress_predicates() -> None:
    model = build_model(SCENARIOS["connect_worker_lag_before_producer"])
    p = _props(model)
    states = _connect_states("connect_worker_lag_before_producer")
    starting = next(
        s for s in states if any(i.phase == TaskPhase.FENCING_REQUESTED for w in s.workers for i in w.tasks)
    )
    assert not p["assigned_tasks_run"].holds(starting) and "FENCING_REQUESTED" in p["assigned_tasks_run"].explain(
        starting
    )
    polled = next(s for s in states if any(i.pending for w in s.workers for i in w.tasks))
    assert not p["started_tasks_commit"].holds(polled)
    terminals = [s for s in states if not protocol_actions(model, s)]
    assert terminals
    for s in terminals:
        assert p["assigned_tasks_run"].holds(s), p["assigned_tasks_run"].explain(s)
        assert p["started_tasks_commit"].holds(s), p["started_tasks_commit"].explain(s)


def test_epoch_within_limit_catches_an_empty_abort_past_the_limit() -> None:
    """txn_epoch_overflow (limit 3): the TV2 empty abort must rotate the producer id at the exhausted epoch."""
    from keos.checker.explore.search import ExploreOptions, explore
    from keos.checker.trace import replay_actions

    scenario = SCENARIOS["txn_epoch_overflow"]
    old = build_model(scenario, "empty_abort_without_rotation")
    result, _ = explore(old, scenario.name, "empty_abort_without_rotation", ExploreOptions(stop_on_first=True))
    found = {p.name: p for p in result.violations()}
    assert set(found) == {"epoch_within_limit"}
    trace = found["epoch_within_limit"].trace
    assert trace is not None and "> 3" in found["epoch_within_limit"].detail
    replay = replay_actions(
        build_model(scenario, "empty_abort_without_rotation"), trace.actions, _props(old)["epoch_within_limit"]
    )
    assert replay.confirmed
    real, _ = explore(build_model(scenario, "kafka"), scenario.name, "kafka", ExploreOptions())
    # the scenario's permitted finding (the abort naming the rotated id while the markers are written) aside
    assert {p.name for p in real.violations()} <= set(scenario.permitted)
    assert "epoch_within_limit" not in {p.name for p in real.violations()}


def test_connect_task_failed_without_a_fault_is_not_progress() -> None:
    """Issue 23: FAILED settles ``assigned_tasks_run`` only in a run that injected a fault."""
    model = build_model(SCENARIOS["connect_worker_lag_before_producer"])
    p = _props(model)["assigned_tasks_run"]
    states = _connect_states("connect_worker_lag_before_producer")
    running = next(
        s for s in states
        if not any(s.faults_used) and any(i.phase == TaskPhase.RUNNING for w in s.workers for i in w.tasks)
        and p.holds(s)
    )
    w = next(k for k, wk in enumerate(running.workers) if any(i.phase == TaskPhase.RUNNING for i in wk.tasks))
    inst = next(i for i in running.workers[w].tasks if i.phase == TaskPhase.RUNNING)
    failed_wk = running.workers[w].with_instance(inst._replace(phase=TaskPhase.FAILED))
    failed = running._replace(workers=(*running.workers[:w], failed_wk, *running.workers[w + 1 :]))
    assert not p.holds(failed) and "no fault was injected" in p.explain(failed)
    faulty = failed._replace(faults_used=(1, *failed.faults_used[1:]))
    assert p.holds(faulty)
