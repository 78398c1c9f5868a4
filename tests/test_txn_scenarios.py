"""The transaction scenarios under the real protocol and the pre-fix variants (explicit-state BFS).

State counts and trace lengths are pinned (Stateright style): a semantic change
to the model shows up here.  BFS traces are shortest by construction; each is
replayed on a freshly built model.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
from replay_helpers import play
from variant_search import holds_then_violated

from keos.checker.coverage import error_coverage, transition_coverage, transition_graph
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.checker.trace import replay_actions
from keos.model.systems.transactions import COORDINATOR
from keos.model.variants import VARIANTS
from keos.scenarios import ScenarioError, build_model, builtin_scenarios, parse_scenario

SCENARIOS = builtin_scenarios()

# scenario -> distinct states under the real protocol.  (Until records compared by class, a state
# with an EndTxnResponse in flight was the same state as one with an equal InitProducerIdResponse,
# and the search lost 4, 74 and 484 states of the first, second and fourth.)
REAL = {
    "txn_kafka_12671_hanging": 248,
    "txn_kafka_17754_delayed_endtxn": 1428,  # + the Sender loop that runs maybeResolveSequences before the abort
    "txn_kafka_6119_timeout_zombie": 169,
    "txn_producer_state_expiry": 9126,  # INVALID_TXN_STATE fails a batch at once (Sender.canRetry), abortable
    "txn_pending_transitions": 10365,
    # since h18-txn: a TV2 epoch fence bumps once, inside its abort, and caches nothing before the append
    # (KAFKA-19367, PRs #19910/#19976): 27331 -> 25419 and 2960 -> 3182 (bisected to that branch's tip)
    "txn_pending_zombie": 25419,
    "txn_pending_append_failures": 3182,
    "txn_pending_append_errors": 501,  # every retriable / coordinator-moving leader error of the append (h21b)
}

# (scenario, variant) -> {invariant: shortest trace length}
CAUGHT = {
    ("txn_kafka_12671_hanging", "pre_kip_890"): {
        "no_hanging_transaction": 16,
        "lso_reaches_high_watermark": 18,
        "lso_reaches_high_watermark_eventually": 19,
    },
    ("txn_kafka_12671_hanging", "complete_without_markers"): {"markers_before_complete": 11},
    ("txn_kafka_17754_delayed_endtxn", "pre_kip_890"): {
        "atomic_commit": 31,
        "no_hanging_transaction": 16,
        "lso_reaches_high_watermark": 18,
        "committed_transactions_visible": 34,
        "lso_reaches_high_watermark_eventually": 32,
    },
    ("txn_kafka_17754_delayed_endtxn", "no_kip_360"): {
        "atomic_commit": 30,  # the client's Kafka-exact failBatch rules (h16-client): a longer torn commit, and
        "healthy_producer_not_failed": 33,  # no run left in which the commit stays invisible for ever
    },
    ("txn_kafka_6119_timeout_zombie", "timeout_abort_without_epoch_bump"): {
        "atomic_commit": 25,
        "zombie_fencing": 25,
        "healthy_producer_not_failed": 23,
    },
    ("txn_producer_state_expiry", "expire_producers_with_open_transactions"): {
        "no_aborted_read": 9,
        "lso_per_kafka": 9,
        # a fetch from an offset inside the expired producer's aborted range (h17-log's index scan)
        "read_committed_from_any_offset": 17,
    },
    # the append callback's answer table (h16-coord) flags the kept pending state at the failed append itself;
    # the flagged states are new states, so the shortest hang found by the search is another one
    ("txn_pending_transitions", "append_failure_keeps_pending"): {
        "coordinator_answers_per_kafka_table": 4,
        "transactions_complete": 18,
        "clients_settle": 18,
        "lso_reaches_high_watermark_eventually": 18,
    },
    ("txn_pending_transitions", "complete_retry_resets_pending"): {
        "coordinator_answers_per_kafka_table": 16,
        "no_illegal_transition_attempt": 17,
        "transactions_complete": 21,
        "clients_settle": 30,
    },
    ("txn_pending_transitions", "timeout_abort_ignores_pending"): {"no_illegal_transition_attempt": 14},
    ("txn_pending_append_failures", "expiry_failure_keeps_pending_dead"): {
        "coordinator_answers_per_kafka_table": 6,
        "transactions_complete": 13,
        "clients_settle": 19,
    },
}


@pytest.mark.parametrize(("name", "states"), sorted(REAL.items()))
def test_real_protocol_holds_and_partners_reached(name: str, states: int) -> None:
    scenario = SCENARIOS[name]
    assert scenario.default and scenario.model == "transactions"
    result, _ = explore(build_model(scenario, "kafka"), name, "kafka", ExploreOptions())
    assert result.complete and not result.violated
    verdicts = {p.name: p.verdict for p in result.properties}
    assert all(v in (Verdict.HOLDS, Verdict.REACHED) for v in verdicts.values()), verdicts
    assert result.stats["distinct_states"] == states


@pytest.mark.parametrize(("key", "lengths"), sorted(CAUGHT.items()))
def test_pre_fix_variant_caught_with_minimal_replayable_trace(key: tuple[str, str], lengths: dict[str, int]) -> None:
    name, variant = key
    assert name in VARIANTS[variant].scenarios and VARIANTS[variant].weakened
    scenario = SCENARIOS[name]
    result, _ = explore(build_model(scenario, variant), name, variant, ExploreOptions())
    found = {p.name: p for p in result.violations()}
    assert {n: len(p.trace.actions) for n, p in found.items() if p.trace} == lengths
    # A hang also shows as the progress properties (Expectation.EVENTUALLY) that it stops.
    consequences = {"lso_reaches_high_watermark", "no_hanging_transaction", "lso_reaches_high_watermark_eventually"}
    consequences |= {"committed_transactions_visible", "transactions_complete"}
    assert set(lengths) <= set(VARIANTS[variant].breaks) | consequences
    fresh = build_model(scenario, variant)
    props = {p.name: p for p in fresh.properties()}
    for inv, prop_result in found.items():
        assert prop_result.trace is not None
        loop_start = prop_result.trace.loop_start  # a livelock's lasso is confirmed where its cycle starts
        replay = replay_actions(fresh, prop_result.trace.actions, props[inv], loop_start)
        at = len(prop_result.trace.actions) if loop_start is None else loop_start
        assert replay.confirmed and replay.violated_at == at, replay.reason


def test_variant_registry_names_existing_scenarios() -> None:
    for v in VARIANTS.values():
        for s in v.scenarios:
            assert s in SCENARIOS, (v.name, s)


def test_delayed_endtxn_commits_the_next_transaction_before_kip_890() -> None:
    """Scenario C alone (no batch expiry): a stale EndTxn(COMMIT) lands in the next transaction."""
    from dataclasses import replace

    base = SCENARIOS["txn_kafka_17754_delayed_endtxn"]
    assert base.txn is not None
    scenario = replace(base, txn=replace(base.txn, faults=replace(base.txn.faults, batch_expiry=0)))
    model = build_model(scenario, "pre_kip_890")
    result, _ = explore(model, "c_only", "pre_kip_890", ExploreOptions())
    atomic = next(p for p in result.properties if p.name == "atomic_commit")
    assert atomic.verdict is Verdict.VIOLATED and atomic.trace is not None
    labels = [model.format_action(a) for a in atomic.trace.actions]
    stale_end = [i for i, a in enumerate(labels) if "p0->tc#0:EndTxn" in a]
    fresh_add = [i for i, a in enumerate(labels) if "p0->tc#1:AddPartitionsToTxn" in a]
    assert stale_end and fresh_add and stale_end[-1] > fresh_add[-1]
    assert "committed transaction 1" in atomic.detail
    real, _ = explore(build_model(scenario, "kafka"), "c_only", "kafka", ExploreOptions())
    assert not real.violated


@pytest.mark.slow
def test_coordinator_faults_scenario_covers_the_table() -> None:
    scenario = SCENARIOS["txn_coordinator_faults"]
    result, _ = explore(build_model(scenario, "kafka"), scenario.name, "kafka", ExploreOptions())
    assert not result.violated and result.complete
    cov = transition_coverage(result.coverage)
    assert not cov.illegal
    assert [f"{a}->{b}" for a, b in cov.unobserved] == ["Ongoing->Ongoing"]
    errors = error_coverage(result.coverage)
    for code in ("CONCURRENT_TRANSACTIONS", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "COORDINATOR_NOT_AVAILABLE"):
        assert code in errors
    graph = transition_graph(result.coverage)
    assert graph.edges["Ongoing", "PrepareCommit"]["observed"]
    assert not graph.edges["Ongoing", "Ongoing"]["observed"]


#: The first violation the breadth-first search of ``txn_coordinator_faults`` under ``tv1`` meets (30 steps, one
#: request timeout; session 31 took it from ``explore(..., ExploreOptions(stop_on_first=True))``, 27.9 CPU-s, and the
#: test replays it instead): the first transaction's EndTxn(commit) times out and is re-sent; the retry commits; the
#: late original EndTxn(commit) then arrives in the next transaction, which the application aborts -- the
#: coordinator answers the abort INVALID_TXN_STATE and the producer, still holding its transactional.id, is fatal.
TV1_TWO_FAULTS = [
    "InitTransactions(producer=0)",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#0:InitProducerId(transactional_id=0, producer_id=-1, producer_epoch=-1))",
    "Deliver(message=tc->p0#0:InitProducerIdResponse(error=NONE, producer_id=0, producer_epoch=0))",
    "BeginTransaction(producer=0)",
    "Send(producer=0)",
    "CommitTransaction(producer=0)",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#0:AddPartitionsToTxn(transactional_id=0, producer_id=0, producer_epoch=0, "
    "partitions=(0,)))",
    "Deliver(message=tc->p0#0:AddPartitionsToTxnResponse(error=NONE, partitions=(0,)))",
    "SendProduce(producer=0, partition=0)",
    "Deliver(message=p0->b0#0:Produce(p0, pid=0, epoch=0, seq=0, [p0.r0]))",
    "Deliver(message=b0->p0#0:ProduceResponse(p0, epoch=0, seq=0, NONE))",
    "SendTxnRequest(producer=0)",
    "RequestTimeout(producer=0)",
    "SendTxnRequest(producer=0)",
    "Deliver(message=p0->tc#1:EndTxn(transactional_id=0, producer_id=0, producer_epoch=0, committed=True))",
    "Deliver(message=tc->b0#0:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=0, "
    "coordinator_epoch=0, committed=True, partition=0))",
    "Deliver(message=tc->p0#1:EndTxnResponse(error=NONE, producer_id=0, producer_epoch=0))",
    "BeginTransaction(producer=0)",
    "Send(producer=0)",
    "SendTxnRequest(producer=0)",
    "AbortTransaction(producer=0)",
    "Deliver(message=p0->tc#1:AddPartitionsToTxn(transactional_id=0, producer_id=0, producer_epoch=0, "
    "partitions=(1,)))",
    "Deliver(message=p0->tc#0:EndTxn(transactional_id=0, producer_id=0, producer_epoch=0, committed=True))",
    "Deliver(message=tc->p0#1:AddPartitionsToTxnResponse(error=NONE, partitions=(1,)))",
    "SendTxnRequest(producer=0)",
    "Deliver(message=tc->b0#0:WriteTxnMarkers(transactional_id=0, producer_id=0, producer_epoch=0, "
    "coordinator_epoch=0, committed=True, partition=1))",
    "Deliver(message=p0->tc#1:EndTxn(transactional_id=0, producer_id=0, producer_epoch=0, committed=False))",
    "Deliver(message=tc->p0#1:EndTxnResponse(error=INVALID_TXN_STATE, producer_id=-1, producer_epoch=-1))",
]


def test_tv1_is_not_safe_under_two_faults() -> None:
    """TV1 with verification and KIP-360: a delayed EndTxn of the previous transaction lands in the next one at the
    same epoch (no per-transaction epoch bump before KIP-890 part 2): the producer that aborts it is told
    INVALID_TXN_STATE while it still holds its id.  The witness replays step by step under ``tv1`` (every step
    enabled), the property holds before its last step and is violated after it."""
    scenario = SCENARIOS["txn_coordinator_faults"]
    model = build_model(scenario, "tv1")
    prop = {p.name: p for p in model.properties()}["healthy_producer_not_failed"]
    before = play(model, TV1_TWO_FAULTS[:-1])
    assert prop.holds(before)
    after = play(model, TV1_TWO_FAULTS[-1:], before)
    assert not prop.holds(after) and prop.explain is not None and "INVALID_TXN_STATE" in prop.explain(after)
    assert sum(after.faults_used) == 1


def test_append_errors_are_kafka_leader_errors_and_need_pending_transitions() -> None:
    """``[faults] append_errors``: only errors Kafka's append to __transaction_state answers, and (other than the
    default shrunk ISR) only where the append's callback is a step of its own."""
    doc: dict[str, Any] = {"name": "x", "model": "transactions"}
    doc["faults"] = {"append_failure": 1, "append_errors": ["REQUEST_TIMED_OUT"]}
    with pytest.raises(ScenarioError, match="pending_transitions"):
        parse_scenario(doc)
    doc["faults"] = {"append_failure": 1, "append_errors": ["NOT_COORDINATOR"]}
    with pytest.raises(ScenarioError, match="not an error Kafka's append"):
        parse_scenario(doc)
    doc["transactions"] = {"pending_transitions": True}
    doc["faults"] = {"append_errors": ["KAFKA_STORAGE_ERROR", "KAFKA_STORAGE_ERROR"]}
    assert parse_scenario(doc).txn.faults.append_errors == ("KAFKA_STORAGE_ERROR",)


def test_marker_errors_are_kafka_leader_errors() -> None:
    """``[faults] marker_errors``: only errors a partition leader answers a failed WriteTxnMarkers append with."""
    doc: dict[str, Any] = {"name": "x", "model": "transactions"}
    doc["faults"] = {"marker_failure": 1, "marker_errors": ["INVALID_PRODUCER_EPOCH"]}
    with pytest.raises(ScenarioError, match="not an error Kafka's partition leader"):
        parse_scenario(doc)
    doc["faults"] = {"marker_failure": 1, "marker_errors": []}
    with pytest.raises(ScenarioError, match="non-empty list"):
        parse_scenario(doc)
    doc["faults"] = {"marker_errors": ["KAFKA_STORAGE_ERROR", "KAFKA_STORAGE_ERROR"]}
    assert parse_scenario(doc).txn.faults.marker_errors == ("KAFKA_STORAGE_ERROR",)


def _first_marker_error(model: Any, error: str) -> tuple[Any, Any]:
    """A state (breadth first) where the marker fault ``error`` is enabled, and that action."""
    seen: set[Any] = set()
    queue = deque(model.init_states())
    while queue:
        s = queue.popleft()
        if s in seen:
            continue
        seen.add(s)
        for a in model.actions(s):
            if a.kind == "MarkerError" and a.args[1] == error:
                return s, a
            step = model.step(s, a)
            if step is not None:
                queue.append(step.state)
    raise AssertionError(f"no MarkerError {error} in the search")


@pytest.mark.parametrize(("error", "written"), [("KAFKA_STORAGE_ERROR", False), ("REQUEST_TIMED_OUT", True)])
def test_a_failed_marker_is_retried_whatever_retriable_error_the_leader_answers(error: str, written: bool) -> None:
    """``txn_marker_errors``: a WriteTxnMarkers answered with any of Kafka's retriable errors is re-enqueued
    (``TransactionMarkerRequestCompletionHandler``); before the append nothing is in the log, after it the control
    batch stands.  Before KAFKA-9749 (variant ``no_kafka_9749_fix``) a KAFKA_STORAGE_ERROR dropped the markers."""
    scenario = SCENARIOS["txn_marker_errors"]
    model = build_model(scenario)
    s, action = _first_marker_error(model, error)
    step = model.step(s, action)
    assert step is not None and "marker_retried" in step.events
    grew = [len(b.log) - len(a.log) for a, b in zip(s.partitions, step.state.partitions, strict=True)]
    assert (sum(grew) == 1) is written
    if error == "KAFKA_STORAGE_ERROR":
        old = build_model(scenario, "no_kafka_9749_fix")
        step = old.step(s, action)
        assert step is not None and "markers_dropped" in step.events


def test_a_record_too_large_answers_unknown_server_error_and_the_producer_is_fatal() -> None:
    """MESSAGE_TOO_LARGE / RECORD_LIST_TOO_LARGE -> UNKNOWN_SERVER_ERROR (``appendTransactionToLog``), fatal in the
    producer's EndTxnHandler: the scenario's permitted Kafka weakness, and nothing else."""
    scenario = SCENARIOS["txn_pending_append_too_large"]
    result, _ = explore(build_model(scenario, "kafka"), scenario.name, "kafka", ExploreOptions(), scenario.permitted)
    assert result.complete and result.stats["distinct_states"] == 135
    found = {p.name: p.verdict for p in result.properties if p.verdict not in (Verdict.HOLDS, Verdict.REACHED)}
    assert set(found) == {"healthy_producer_not_failed", "no_unknown_server_error"}, found


def test_a_record_too_large_makes_add_partitions_abortable_under_tv1() -> None:
    """TV1: the client's own AddPartitionsToTxn answered UNKNOWN_SERVER_ERROR (its Ongoing record too large) is a
    partition error, abortable (``AddPartitionsToTxnHandler``); only EndTxn's is fatal (the permitted weakness)."""
    scenario = SCENARIOS["txn_tv1_pending_append_too_large"]
    result, _ = explore(build_model(scenario, "tv1"), scenario.name, "tv1", ExploreOptions(), scenario.permitted)
    assert result.complete and result.stats["distinct_states"] == 329
    found = {p.name: p.verdict for p in result.properties if p.verdict not in (Verdict.HOLDS, Verdict.REACHED)}
    assert set(found) == {"healthy_producer_not_failed", "no_unknown_server_error"}, found
    variant = "add_partitions_unexpected_error_fatal"
    caught, _ = explore(build_model(scenario, variant), scenario.name, variant, ExploreOptions(), scenario.permitted)
    assert "client_reacts_as_kafka" in {p.name for p in caught.violations()}


def _first_reload_with_request_in_flight(model: Any) -> tuple[Any, Any]:
    """A state (breadth first) where ``CoordinatorReloaded`` is enabled while a client's request to the coordinator
    is in flight, and that action."""
    seen: set[Any] = set()
    queue = deque(model.init_states())
    while queue:
        s = queue.popleft()
        if s in seen:
            continue
        seen.add(s)
        for a in model.actions(s):
            if a.kind == "CoordinatorReloaded" and any(e.dst == COORDINATOR for e in s.network):
                return s, a
            step = model.step(s, a)
            if step is not None:
                queue.append(step.state)
    raise AssertionError("no CoordinatorReloaded with a request in flight in the search")


def test_an_in_place_reload_answers_load_in_progress_on_the_same_connections() -> None:
    """``txn_coordinator_reload``: the coordinator's own broker is elected again (``onElection`` with no
    ``onResignation``): the coordinator epoch moves on and the partition loads, nobody is answered NOT_COORDINATOR,
    no client reconnects, and the request already in flight is answered COORDINATOR_LOAD_IN_PROGRESS until
    ``LoadTransactions``.  Before KAFKA-9307 (variant ``no_kafka_9307_fix``) the load threw: it never completes."""
    scenario = SCENARIOS["txn_coordinator_reload"]
    model = build_model(scenario)
    s, action = _first_reload_with_request_in_flight(model)
    step = model.step(s, action)
    assert step is not None and "coordinator_reloaded" in step.events
    new = step.state
    assert new.loading and not new.load_failed and new.coordinator_epoch == s.coordinator_epoch + 1
    assert [c.tc_connection for c in new.clients] == [c.tc_connection for c in s.clients]
    assert new.network == s.network  # the in-flight request stays; no NOT_COORDINATOR answer is sent
    request = next(e for e in new.network if e.dst == COORDINATOR)
    answered = model.step(new, next(a for a in model.actions(new) if a.kind == "Deliver" and a.args[0] == request))
    assert answered is not None and "error:COORDINATOR_LOAD_IN_PROGRESS" in answered.events
    assert any(a.kind == "LoadTransactions" for a in model.actions(new))
    old = build_model(scenario, "no_kafka_9307_fix")
    stuck = old.step(s, action)
    assert stuck is not None and stuck.state.load_failed
    assert not any(a.kind == "LoadTransactions" for a in old.actions(stuck.state))


def test_an_in_place_reload_holds_under_kafka_and_hangs_before_kafka_9307() -> None:
    """The whole search: every promise holds under Kafka's rules; with the load that throws the clients never
    settle and the transactions never complete."""
    variant = "no_kafka_9307_fix"
    violated = holds_then_violated("txn_coordinator_reload", variant)
    assert {"clients_settle", "transactions_complete"} <= violated[variant]


def test_a_delayed_fetch_reads_again_with_the_parked_parameters() -> None:
    """``DelayedFetch.onComplete`` re-reads the log at completion with the request's ``FetchParams``: a
    read_committed fetch parked at offset 0 while a transaction is open returns, once the transaction aborted and
    the LSO passed it, the aborted range with its aborted transaction -- so the consumer drops it.  Before KAFKA-5355
    the re-read was read_uncommitted (no list); before KAFKA-5376 the list was dropped: both return the aborted
    record."""
    from dataclasses import replace as dc_replace

    from keos.model.clients.consumer import filter_fetched
    from keos.model.log import fetch as fetch_path
    from keos.model.log.partition import CONTROL_ABORT, AbortedTxn, LogEntry, PartitionLeader
    from keos.model.variants import ProtocolFlags

    data = LogEntry(records=(7,), producer_id=0, producer_epoch=0, base_sequence=0, transactional=True)
    marker = LogEntry(records=(), producer_id=0, producer_epoch=0, base_sequence=-1, transactional=True,
                      control=CONTROL_ABORT)
    leader = PartitionLeader(log=(data, marker), high_watermark=2, aborted=(AbortedTxn(0, 0, 1, 2),))
    params = fetch_path.FetchParams(fetch_path.READ_COMMITTED, 0)
    assert fetch_path.try_complete(leader, params)
    kafka = fetch_path.complete_delayed_fetch(leader, params, ProtocolFlags())
    assert kafka == fetch_path.read_from_log(leader, params) and kafka.upper_bound == 2
    assert filter_fetched(leader, 0, kafka.upper_bound, kafka.aborted) == ()
    for flag in ("delayed_fetch_keeps_isolation", "delayed_fetch_carries_aborted"):
        r = fetch_path.complete_delayed_fetch(leader, params, dc_replace(ProtocolFlags(), **{flag: False}))
        assert filter_fetched(leader, 0, r.upper_bound, r.aborted) == (7,)


def test_a_read_committed_long_poll_holds_under_kafka_and_reads_aborted_records_before_kafka_5355_and_5376() -> None:
    """The whole search of ``txn_read_committed_long_poll``: the consumer returns exactly the committed records
    whichever path answered; each variant of the delayed path returns an aborted or undecided record."""
    violated = holds_then_violated("txn_read_committed_long_poll", "no_kafka_5355_fix", "no_kafka_5376_fix")
    for variant in ("no_kafka_5355_fix", "no_kafka_5376_fix"):
        assert "read_committed_consumer_reads_committed" in violated[variant]


def test_the_read_committed_consumer_is_modelled_without_eos() -> None:
    """``[transactions] read_committed_consumer`` gives the plain transactions model its consumers; the
    consume-transform-produce model has its own and refuses the knob."""
    doc: dict[str, Any] = {"name": "x", "model": "eos", "transactions": {"read_committed_consumer": True}}
    with pytest.raises(ScenarioError, match="read_committed_consumer is modelled without"):
        parse_scenario(doc)
    doc["model"] = "transactions"
    model = build_model(parse_scenario(doc), "kafka")
    (init,) = model.init_states()
    assert init.fetchers and all(f.position == 0 and not f.parked for f in init.fetchers)
    for bad in ({"consumer_fetch_batches": -1, "read_committed_consumer": True}, {"consumer_fetch_batches": 1}):
        with pytest.raises(ScenarioError, match="consumer_fetch_batches"):
            parse_scenario({"name": "x", "model": "transactions", "transactions": bad})


def test_a_small_fetch_starts_inside_an_aborted_transaction_and_drops_it() -> None:
    """``consumer_fetch_batches = 1``: a response ends after one batch, so the next fetch starts inside a
    transaction; the leader lists the aborted one (``lastOffset >= fetchOffset``) on both paths and the consumer
    drops its second record too."""
    from keos.model.clients.consumer import filter_fetched
    from keos.model.log import fetch as fetch_path
    from keos.model.log.partition import CONTROL_ABORT, AbortedTxn, LogEntry, PartitionLeader
    from keos.model.variants import ProtocolFlags

    d0, d1 = (LogEntry(records=(r,), producer_id=0, producer_epoch=0, base_sequence=r, transactional=True)
              for r in (0, 1))
    marker = LogEntry(records=(), producer_id=0, producer_epoch=0, base_sequence=-1, transactional=True,
                      control=CONTROL_ABORT)
    leader = PartitionLeader(log=(d0, d1, marker), high_watermark=3, aborted=(AbortedTxn(0, 0, 2, 3),))
    params = fetch_path.FetchParams(fetch_path.READ_COMMITTED, 1, max_batches=1)
    for r in (fetch_path.read_from_log(leader, params), fetch_path.complete_delayed_fetch(leader, params,
                                                                                          ProtocolFlags())):
        assert (r.fetch_offset, r.upper_bound, r.aborted) == (1, 2, (AbortedTxn(0, 0, 2, 3),))
        assert filter_fetched(leader, r.fetch_offset, r.upper_bound, r.aborted) == ()
