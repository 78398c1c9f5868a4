"""Connect fidelity (issue 14): FAILED tasks and restart requests; tombstone offsets and the combined view.

``DistributedHerder.startWork`` (Kafka 3.9) starts only the assigned tasks that
are not in the running assignment; a failed ``WorkerTask`` is still in it, so a
rebalance that keeps the task on its worker does not restart it.  Only
``restartTask`` (``POST /connectors/{c}/tasks/{n}/restart``) does.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from keos.invariants.connect_logs import committed_offsets, tombstoned_partitions
from keos.invariants.connect_offsets import resurrected_offsets
from keos.model.connect.offsets import combined_offsets, decode_offset_record, offset_record, offset_tombstone
from keos.model.connect.records import CONNECTOR_OFFSETS, GLOBAL_OFFSETS, ConnectState
from keos.model.connect.worker import TaskPhase
from keos.model.interface import Action, ModelError
from keos.model.systems.connect import ConnectSystem
from keos.model.variants import VARIANTS, Variant
from keos.scenarios import build_model, parse_scenario, resolve_scenario


def _model(flags_override: dict[str, bool] | None = None) -> ConnectSystem:
    table = {"workers": ["enabled", "enabled"], "leader": 0, "task_counts": [1], "owners": [[0]], "records": 1}
    sc = parse_scenario({"name": "t", "model": "connect", "connect": table, "faults": {"crash": 1, "total": 1}})
    variant: Variant | str = "kafka"
    if flags_override:
        variant = Variant("eager_restart", "test", replace(VARIANTS["kafka"].flags, **flags_override))
    m = build_model(sc, variant)
    assert isinstance(m, ConnectSystem)
    return m


def _failed_then_rebalanced(m: ConnectSystem) -> ConnectState:
    s = m.init_states()[0]
    step = m.step(s, Action("StartTask", (0, 0)))
    assert step is not None
    s = step.state
    inst = s.workers[0].instance(0)
    assert inst is not None
    # The task fails (e.g. its producer is fenced, or the connector throws): WorkerTask state FAILED.
    s = s._replace(workers=(s.workers[0].with_instance(inst._replace(phase=TaskPhase.FAILED)), *s.workers[1:]))
    step = m.step(s._replace(rebalance_pending=True), Action("Rebalance", ()))
    assert step is not None
    return step.state


def test_rebalance_keeps_a_failed_task_failed_until_a_restart_request() -> None:
    m = _model()
    s = _failed_then_rebalanced(m)
    inst = s.workers[0].instance(0)
    assert inst is not None and inst.phase == TaskPhase.FAILED
    kinds = {(a.kind, a.args) for a in m.actions(s)}
    assert ("StartTask", (0, 0)) not in kinds
    assert ("RestartFailedTask", (0, 0)) in kinds
    step = m.step(s, Action("RestartFailedTask", (0, 0)))
    assert step is not None and step.events[0] == "failed_task_restart_requested"
    restarted = step.state.workers[0].instance(0)
    assert restarted is not None and restarted.phase == TaskPhase.FENCING_REQUESTED
    assert step.state.faults_used == s.faults_used  # a protocol step, not a fault


def test_eager_rebalance_restarts_a_failed_task() -> None:
    m = _model({"connect_failed_task_stays_failed": False})
    s = _failed_then_rebalanced(m)
    assert s.workers[0].instance(0) is None
    assert Action("StartTask", (0, 0)) in m.actions(s)


def test_restart_request_is_only_for_failed_tasks() -> None:
    m = _model()
    s = m.init_states()[0]
    step = m.step(s, Action("StartTask", (0, 0)))
    assert step is not None
    assert m.step(step.state, Action("RestartFailedTask", (0, 0))) is None


# -- tombstone offsets and the combined view (KIP-618 section 七, KAFKA-15018) -------------------------


def _tombstone_model(variant: str = "kafka") -> ConnectSystem:
    m = build_model(resolve_scenario("connect_offset_tombstones"), variant)
    assert isinstance(m, ConnectSystem)
    return m


def _finished_task(m: ConnectSystem) -> ConnectState:
    """Worker 0's task read its one record and committed offset 1 (connector topic, copied to the global one)."""
    s = m.init_states()[0]
    for kind, args in (
        ("StartTask", (0, 0)),
        ("FenceZombies", (0,)),
        ("WriteTaskCountRecord", (0,)),
        ("CommitTaskCountRecord", (0,)),
        ("InitProducer", (0, 0)),
        ("VerifyGeneration", (0, 0)),
        ("Poll", (0, 0)),
        ("CommitTransaction", (0, 0)),
    ):
        step = m.step(s, Action(kind, args))
        assert step is not None, kind
        s = step.state
    parts = s.kafka.partitions
    assert committed_offsets(parts[CONNECTOR_OFFSETS], 1) == committed_offsets(parts[GLOBAL_OFFSETS], 1) == (1,)
    return s


def _view(s: ConnectState) -> tuple[int, ...]:
    parts = s.kafka.partitions
    return combined_offsets(parts[CONNECTOR_OFFSETS], parts[GLOBAL_OFFSETS], 1)


def test_tombstone_goes_to_the_global_topic_first_and_the_view_forgets_the_partition() -> None:
    m = _tombstone_model()
    s = _finished_task(m)
    glob_end = len(s.kafka.partitions[GLOBAL_OFFSETS].log)
    step = m.step(s, Action("CommitTombstone", (0, 0)))
    assert step is not None and step.events[-1] == "offset_tombstone_committed"
    s = step.state
    assert s.kafka.partitions[GLOBAL_OFFSETS].log[glob_end].records == (offset_tombstone(0),)
    assert tombstoned_partitions(s.kafka.partitions[CONNECTOR_OFFSETS], 1) == (0,)
    assert _view(s) == (-1,) and s.deleted_sources == (0,)
    assert not resurrected_offsets(1, s)
    # The task that takes over after a crash reads no offset but does not read the deleted partition again.
    for kind, args in (("CrashWorker", (0,)), ("Rebalance", ())):
        step = m.step(s, Action(kind, args))
        assert step is not None, kind
        s = step.state
    for kind, args in (
        ("StartTask", (1, 0)),
        ("FenceZombies", (1,)),  # the task-count record already follows generation 0: nothing to write
        ("InitProducer", (1, 0)),
        ("VerifyGeneration", (1, 0)),
    ):
        step = m.step(s, Action(kind, args))
        assert step is not None, f"{kind} not enabled: {[m.format_action(a) for a in m.actions(s)]}"
        s = step.state
    inst = s.workers[1].instance(0)
    assert inst is not None and inst.phase == TaskPhase.RUNNING and inst.positions == (1,)
    assert Action("Poll", (1, 0)) not in m.actions(s)


def test_failed_second_write_keeps_the_old_offset_with_kafka_15018_and_resurrects_it_without() -> None:
    m = _tombstone_model()
    s = _finished_task(m)
    step = m.step(s, Action("FailOffsetWrite", (0, 0)))
    assert step is not None and "connector_offsets_write_failed" in step.events
    assert _view(step.state) == (1,) and step.state.deleted_sources == ()  # the commit failed as a whole
    assert not resurrected_offsets(1, step.state)
    weak = _tombstone_model("tombstone_to_connector_topic_first")
    step = weak.step(s, Action("FailOffsetWrite", (0, 0)))
    assert step is not None and "global_offsets_write_failed" in step.events
    assert _view(step.state) == (1,)  # the tombstone removed the key; the fallback finds the old offset
    assert resurrected_offsets(1, step.state)
    prop = next(p for p in weak.properties() if p.name == "tombstoned_offsets_stay_deleted")
    assert not prop.holds(step.state)


def test_tombstone_decoding() -> None:
    assert decode_offset_record(offset_tombstone(1)) == (1, -1)
    assert decode_offset_record(offset_record(1, 2)) == (1, 2)


# -- issue 23 (h8-connect): stale leaders, revoked start-ups, connector deletion, connector-defined aborts --------


def _connect(table: dict[str, object], faults: dict[str, int], variant: str = "kafka") -> ConnectSystem:
    base: dict[str, object] = {"workers": ["enabled", "enabled"], "leader": 0, "task_counts": [1], "owners": [[0]]}
    sc = parse_scenario({"name": "t", "model": "connect", "connect": {**base, **table}, "faults": faults})
    m = build_model(sc, variant)
    assert isinstance(m, ConnectSystem)
    return m


def _steps(m: ConnectSystem, s: ConnectState, *actions: tuple[str, tuple[int, ...]]) -> tuple[ConnectState, tuple]:
    events: tuple[str, ...] = ()
    for kind, args in actions:
        step = m.step(s, Action(kind, args))
        assert step is not None, f"{kind}{args} not enabled: {[m.format_action(a) for a in m.actions(s)]}"
        s, events = step.state, step.events
    return s, events


def test_a_leader_elected_again_writes_with_its_kept_producer_is_fenced_and_reclaims() -> None:
    """KafkaConfigBackingStore keeps the fencable producer when the worker stops leading (Kafka 3.9)."""
    m = _connect({}, {"pause": 1, "crash": 1, "total": 2})
    s = m.init_states()[0]
    first = s.workers[0].config_producer
    s, _ = _steps(m, s, ("PauseWorker", (0,)), ("Rebalance", ()))
    assert s.leader == 1 and s.workers[1].config_producer is not None  # w1 claimed: w0's producer is fenced
    s, _ = _steps(m, s, ("ResumeWorker", (0,)), ("CrashWorker", (1,)), ("Rebalance", ()))
    assert s.leader == 0 and s.workers[0].config_producer == first  # claimWritePrivileges is a no-op
    assert Action("ClaimWritePrivileges", (0,)) not in m.actions(s)
    s, events = _steps(m, s, ("StartTask", (0, 0)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)))
    assert events[-1] == "config_write_fenced"
    wk = s.workers[0]
    assert wk.fenced_from_config_topic and wk.config_producer is None and wk.fencing is None
    inst = wk.instance(0)
    assert inst is not None and inst.phase == TaskPhase.FAILED  # the round's 500 fails the requesting task
    s, events = _steps(m, s, ("ClaimWritePrivileges", (0,)))
    assert events[-1] == "claimed_write_privileges" and not s.workers[0].fenced_from_config_topic


def test_a_task_revoked_while_waiting_for_its_round_returns_before_init_transactions() -> None:
    """Step 4: w1's task 0 is revoked (w0 rejoins) after its round; it must not fence w0's new instance."""
    m = _connect({}, {"crash": 1, "total": 1})
    s = m.init_states()[0]
    s, _ = _steps(m, s, ("CrashWorker", (0,)), ("Rebalance", ()), ("StartTask", (1, 0)), ("FenceZombies", (1,)))
    s, _ = _steps(m, s, ("WriteTaskCountRecord", (1,)), ("CommitTaskCountRecord", (1,)), ("RestartWorker", (0,)))
    s, events = _steps(m, s, ("Rebalance", ()))
    assert "task_stopping_in_startup" in events
    stale = s.workers[1].instance(0)
    assert stale is not None and stale.stopping and stale.phase == TaskPhase.FENCING_DONE
    s, _ = _steps(m, s, ("StartTask", (0, 0)), ("FenceZombies", (1,)), ("InitProducer", (0, 0)))
    s, events = _steps(m, s, ("InitProducer", (1, 0)))
    assert events == ("startup_stopped_before_producer",) and s.workers[1].instance(0) is None
    assert not s.ghost.live_fenced
    weak = _connect({}, {"crash": 1, "total": 1}, "revoked_task_initializes_producer")
    state = weak.init_states()[0]
    state, _ = _steps(weak, state, ("CrashWorker", (0,)), ("Rebalance", ()), ("StartTask", (1, 0)))
    state, _ = _steps(weak, state, ("FenceZombies", (1,)), ("WriteTaskCountRecord", (1,)))
    state, _ = _steps(weak, state, ("CommitTaskCountRecord", (1,)), ("RestartWorker", (0,)), ("Rebalance", ()))
    state, _ = _steps(weak, state, ("StartTask", (0, 0)), ("FenceZombies", (1,)), ("InitProducer", (0, 0)))
    state, _ = _steps(weak, state, ("InitProducer", (1, 0)))
    assert state.ghost.live_fenced == ((0, 0, 0, 0),)  # the new owner w0's task 0 was fenced
    prop = next(p for p in weak.properties() if p.name == "live_tasks_never_fenced")
    assert not prop.holds(state)


def test_a_deleted_connector_keeps_its_task_count_record_and_its_recreation_fences_the_old_ids() -> None:
    m = build_model(resolve_scenario("connect_connector_recreated"))
    assert isinstance(m, ConnectSystem)
    s = m.init_states()[0]
    s, _ = _steps(m, s, ("StartTask", (1, 1)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)))
    s, _ = _steps(m, s, ("CommitTaskCountRecord", (0,)), ("InitProducer", (1, 1)), ("VerifyGeneration", (1, 1)))
    s, _ = _steps(m, s, ("Poll", (1, 1)), ("PauseWorker", (1,)), ("Rebalance", ()))
    assert Action("Reconfigure", (0,)) not in m.actions(s)  # generation 1 belongs to a re-created connector
    s, events = _steps(m, s, ("DeleteConnector", (0,)))
    assert events[-1] == "connector_deleted"
    snap = m._latest(s)
    assert not snap.exists and snap.task_count == 0 and snap.task_count_record == 2 and snap.generation == 0
    s, events = _steps(m, s, ("Rebalance", ()), ("Reconfigure", (0,)))
    assert events[-2:] == ("task_configs_written", "connector_recreated")
    assert m._latest(s).generation == 0  # putTaskConfigs' commit record is its second privileged write
    s, events = _steps(m, s, ("CommitTaskConfigs", (0,)))
    assert events[-1] == "reconfigured"
    snap = m._latest(s)
    assert snap.exists and snap.generation == 1 and snap.task_count == 1 and snap.pending_fencing
    s, _ = _steps(m, s, ("Rebalance", ()), ("StartTask", (0, 0)))
    s, events = _steps(m, s, ("FenceZombies", (0,)))
    assert "fence_producers" in events  # task ids 0 and 1: the paused worker's task 1 is a zombie
    s, _ = _steps(m, s, ("ResumeWorker", (1,)))
    s, events = _steps(m, s, ("CommitTransaction", (1, 1)))
    assert events == ("task_producer_fenced",)


def test_a_task_of_a_deleted_connector_gets_404_from_the_round() -> None:
    """After the leader's deletion tick, or when the handler refreshes before its check (fencing_refreshes_first)."""
    for variant, next_tick in (("kafka", True), ("fencing_refreshes_first", False)):
        m = build_model(resolve_scenario("connect_connector_recreated"), variant)
        assert isinstance(m, ConnectSystem)
        s = m.init_states()[0]
        s, _ = _steps(m, s, ("StartTask", (1, 1)), ("DeleteConnector", (0,)))
        if next_tick:  # the leader's next herder tick has refreshed its configState
            s = m._put(s, 0, s.workers[0]._replace(deleted_this_tick=False))
        s, events = _steps(m, s, ("FenceZombies", (0,)))
        assert events[-1] == "fencing_connector_not_found"
        inst = s.workers[1].instance(1)
        assert inst is not None and inst.phase == TaskPhase.FAILED


def test_a_fencing_request_in_the_deletion_tick_gets_a_round_of_the_deleted_connector() -> None:
    """doFenceZombieSourceTasks checks the herder's configState, not refreshed since the deletion, then refreshes:
    no task-count record yet, so it writes one of 0 (the deleted connector's task count) and answers 200."""
    m = build_model(resolve_scenario("connect_connector_recreated"))
    assert isinstance(m, ConnectSystem)
    s = m.init_states()[0]
    s, _ = _steps(m, s, ("StartTask", (1, 1)), ("DeleteConnector", (0,)))
    assert s.workers[0].deleted_this_tick
    s, events = _steps(m, s, ("FenceZombies", (0,)))
    assert events == ("fencing_request_in_deletion_tick", "fencing_skipped")
    s, _ = _steps(m, s, ("WriteTaskCountRecord", (0,)), ("CommitTaskCountRecord", (0,)))
    snap = m._latest(s)
    assert (snap.exists, snap.task_count_record, snap.pending_fencing) == (False, 0, False)
    inst = s.workers[1].instance(1)
    assert inst is not None and inst.phase == TaskPhase.FENCING_DONE


def test_a_connector_abort_discards_the_records_and_commits_their_offsets() -> None:
    """TransactionContext.abortTransaction: not reprocessed (offsets committed in a new transaction)."""
    table = {"records": 2, "transaction_boundary": "connector", "connector_boundaries": "SUPPORTED",
             "max_connector_aborts": 1}
    m = _connect(table, {"total": 0})
    s = m.init_states()[0]
    s, _ = _steps(m, s, ("StartTask", (0, 0)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)))
    s, _ = _steps(m, s, ("CommitTaskCountRecord", (0,)), ("InitProducer", (0, 0)), ("VerifyGeneration", (0, 0)))
    s, events = _steps(m, s, ("Poll", (0, 0)), ("AbortTransaction", (0, 0)))
    assert events[-1] == "source_txn_committed" and "source_txn_aborted" in events
    assert s.ghost.discarded == ((0, 0),)
    assert committed_offsets(s.kafka.partitions[GLOBAL_OFFSETS], 1) == (1,)
    inst = s.workers[0].instance(0)
    assert inst is not None and inst.positions == inst.committed == (1,) and not inst.pending
    weak = _connect(table, {"total": 0}, "connector_abort_reprocesses")
    state = weak.init_states()[0]
    state, _ = _steps(weak, state, ("StartTask", (0, 0)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)))
    state, _ = _steps(weak, state, ("CommitTaskCountRecord", (0,)), ("InitProducer", (0, 0)))
    state, _ = _steps(weak, state, ("VerifyGeneration", (0, 0)), ("Poll", (0, 0)), ("AbortTransaction", (0, 0)))
    state, _ = _steps(weak, state, ("Poll", (0, 0)), ("CommitTransaction", (0, 0)))
    prop = next(p for p in weak.properties() if p.name == "exactly_once_source_delivery")
    assert not prop.holds(state)  # src0[0] came back although the connector aborted it


def test_recreated_at_must_name_a_reconfiguration() -> None:
    with pytest.raises(ModelError, match="recreated_at 1 names no reconfiguration"):
        _connect({"recreated_at": 1}, {"total": 0})


def _property(m: ConnectSystem, name: str):  # type: ignore[no-untyped-def]
    from keos.invariants.connect import connect_properties

    return next(p for p in connect_properties(m.config) if p.name == name)


def test_a_leader_fenced_with_its_own_claim_the_latest_breaks_healthy_leader_keeps_write_privileges() -> None:
    m = _connect({"task_counts": [1, 1], "owners": [[0], [0]]}, {"config_write_failure": 1, "total": 1})
    prop = _property(m, "healthy_leader_keeps_write_privileges")
    s = m.init_states()[0]
    assert prop.holds(s) and s.ghost.claims[-1][0] == 0
    # A leader that carried a stale producer over its last commit has its next privileged write refused.
    stale = s._replace(workers=(s.workers[0]._replace(config_producer=None, fenced_from_config_topic=True),
                                *s.workers[1:]))
    assert not prop.holds(stale) and "no worker claimed" in (prop.explain(stale) if prop.explain else "")
    # The same state after an injected write failure, or after another worker's claim, is Kafka's behaviour.
    assert prop.holds(stale._replace(faults_used=(0, 0, 0, 1, 0, 0)))
    assert prop.holds(stale._replace(ghost=stale.ghost._replace(claims=(*stale.ghost.claims, (1, 9)))))
    # Two commits with one producer: the task-count record, then new task configs (TV2 bumps the epoch at each).
    s, _ = _steps(m, s, ("StartTask", (0, 0)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)),
                  ("CommitTaskCountRecord", (0,)))
    s, events = _steps(m, s, ("Reconfigure", (0,)), ("CommitTaskConfigs", (0,)))
    assert "reconfigured" in events and prop.holds(s) and not s.workers[0].fenced_from_config_topic


def test_an_illegal_coordinator_transition_of_a_connect_producer_is_recorded_and_judged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = _connect({}, {})
    prop = _property(m, "connect_coordinator_transitions_legal")
    s = m.init_states()[0]
    action = m.actions(s)[0]
    legal = m.step(s, action)
    assert legal is not None and prop.holds(legal.state)

    def illegal(sys: ConnectSystem, state: ConnectState, *args: int) -> tuple[ConnectState, tuple[str, ...]]:
        return state, ("txn:Empty->CompleteCommit", "txn:Ongoing->PrepareCommit", "illegal:Ongoing->Dead")

    monkeypatch.setitem(ConnectSystem._HANDLERS, action.kind, illegal)
    step = m.step(s, action)
    assert step is not None and not prop.holds(step.state)
    assert step.state.ghost.illegal == ("txn:Empty->CompleteCommit", "illegal:Ongoing->Dead")


def test_the_task_lifecycle_table_allows_the_start_up_and_stops_and_nothing_else() -> None:
    from keos.model.connect.lifecycle import illegal_task_changes

    m = _connect({}, {"fencing_failure": 1, "total": 1})
    s = m.init_states()[0]
    started, _ = _steps(m, s, ("StartTask", (0, 0)))
    assert illegal_task_changes("StartTask", s, started) == ()
    assert illegal_task_changes("Poll", s, started) == ("task:w0.t0.g0:started by Poll",)
    inst = started.workers[0].instance(0)
    assert inst is not None and inst.phase == TaskPhase.FENCING_REQUESTED
    gone = started._replace(workers=(started.workers[0].without_instance(0), *started.workers[1:]))
    # A failed round fails its requester (FAILED stays on the worker); only a stopping requester is gone.
    assert illegal_task_changes("FailZombieFencing", started, gone) == (
        "task:w0.t0.g0:FENCING_REQUESTED->removed by FailZombieFencing",
    )
    stopping = started._replace(workers=(started.workers[0].with_instance(inst._replace(stopping=True)),
                                         *started.workers[1:]))
    assert illegal_task_changes("FailZombieFencing", stopping, gone) == ()
    assert illegal_task_changes("Rebalance", started, gone) == ()
    from keos.model.connect.herder import fail_zombie_fencing

    failed, _ = fail_zombie_fencing(m, started, 0)
    assert illegal_task_changes("FailZombieFencing", started, failed) == ()
    back = failed._replace(workers=(failed.workers[0].with_instance(inst), *failed.workers[1:]))
    assert illegal_task_changes("InitProducer", failed, back) == ("task:w0.t0.g0:FAILED->FENCING_REQUESTED",)


def test_a_rounds_answer_reaches_only_its_requesters_and_an_ended_round_answers_them_all() -> None:
    """DistributedHerder.ZombieFencing completes every callback it holds when its future completes; its answer
    removes only a stopping instance that waited on it."""
    from keos.model.connect.lifecycle import illegal_task_changes
    from keos.model.connect.worker import ZombieFencing

    m = _connect({}, {"fencing_failure": 1, "total": 1})
    s = m.init_states()[0]
    started, _ = _steps(m, s, ("StartTask", (0, 0)))
    inst = started.workers[0].instance(0)
    assert inst is not None and inst.phase == TaskPhase.FENCING_REQUESTED
    leader = started.workers[0]
    in_round = started._replace(workers=(leader._replace(fencing=ZombieFencing(0, 1)), *started.workers[1:]))
    # the round ends (fencing cleared by its own write step) but the requester still waits: a hung request
    assert illegal_task_changes("WriteTaskCountRecord", in_round, started) == (
        "task:w0.t0.g0:fencing request left unanswered when WriteTaskCountRecord ended the round",
    )
    # ... answered with the round's end: legal
    answered = m._answer_requesters(started, TaskPhase.FAILED)
    assert illegal_task_changes("WriteTaskCountRecord", in_round, answered) == ()
    # a stopping instance that was not waiting on the round is not the round's to remove
    running = inst._replace(phase=TaskPhase.RUNNING, stopping=True)
    before = started._replace(workers=(leader.with_instance(running), *started.workers[1:]))
    gone = started._replace(workers=(leader.without_instance(0), *started.workers[1:]))
    assert illegal_task_changes("FailZombieFencing", before, gone) == (
        "task:w0.t0.g0:RUNNING instance removed by FailZombieFencing, an answer it was not waiting on",
    )
    assert illegal_task_changes("Rebalance", before, gone) == ()


def test_a_fencing_request_is_answered_only_by_the_leaders_round() -> None:
    """A waiting task moves on only in a step that serves or completes a round (or fails it with 409)."""
    from keos.model.connect.herder import fail_zombie_fencing
    from keos.model.connect.lifecycle import illegal_task_changes

    m = _connect({}, {"fencing_failure": 1, "total": 1})
    s = m.init_states()[0]
    started, _ = _steps(m, s, ("StartTask", (0, 0)))
    failed, _ = fail_zombie_fencing(m, started, 0)
    assert illegal_task_changes("Reconfigure", started, failed, ("reconfigured",)) == (
        "task:w0.t0.g0:fencing request answered by Reconfigure",
    )
    # a 409 is an answer, but one owed only to a generation that newer committed task configs replaced: none here
    assert illegal_task_changes("Reconfigure", started, failed, ("reconfigured", "fencing_409_conflict")) == (
        "task:w0.t0.g0:answered 409 by Reconfigure although generation 0 is the latest committed",
    )
    assert illegal_task_changes("WriteTaskCountRecord", started, failed) == ()


@pytest.mark.parametrize("variant", ["kafka", "deleted_connector_commit_applied"])
def test_a_commit_record_read_after_the_connectors_tombstone_is_ignored(variant: str) -> None:
    """processTasksCommitRecord ignores a deleted connector's commit (KAFKA-16838's fix, apache/kafka PR #16122).

    The disabled leader w1 writes generation 1's task configs and pauses inside putTaskConfigs; w0 leads,
    commits its own generation 1 and deletes the connector; w1 resumes and its plain commit record lands after
    the tombstone.
    """
    m = build_model(resolve_scenario("connect_deposed_leader_commit_after_delete"), variant)
    assert isinstance(m, ConnectSystem)
    s = m.init_states()[0]
    s, _ = _steps(m, s, ("Reconfigure", (1,)), ("PauseWorker", (1,)), ("Rebalance", ()), ("Reconfigure", (0,)))
    s, _ = _steps(m, s, ("CommitTaskConfigs", (0,)), ("DeleteConnector", (0,)), ("ResumeWorker", (1,)))
    s, events = _steps(m, s, ("CommitTaskConfigs", (1,)))
    assert "reconfigured" in events
    snap = m._latest(s)
    assert not snap.exists
    if variant == "kafka":
        assert (snap.generation, snap.task_count) == (1, 0)
    else:  # the deleted connector's commit applied: its task count is back (the tombstone dropped the set itself)
        assert (snap.generation, snap.task_count) == (1, 1)
    s, _ = _steps(m, s, ("Rebalance", ()))
    assert any(wk.assigned for wk in s.workers) == (variant != "kafka")


def test_a_deleted_connectors_tasks_are_unassigned_at_the_next_rebalance() -> None:
    """processConnectorRemoval drops the task configs (KAFKA-8869's fix); the variant keeps them assigned."""
    for variant, assigned in (("kafka", False), ("deleted_connector_tasks_kept", True)):
        m = build_model(resolve_scenario("connect_connector_deleted"), variant)
        assert isinstance(m, ConnectSystem)
        s, _ = _steps(m, m.init_states()[0], ("DeleteConnector", (0,)), ("Rebalance", ()))
        assert any(wk.assigned for wk in s.workers) == assigned


def test_a_failed_commit_leaves_the_offsets_in_an_open_transaction_read_committed_skips() -> None:
    """FailCommit: the offsets were flushed into the transaction, then commitTransaction threw (KIP-618 offsets
    consumers read read_committed): the next instance aborts the transaction and resumes from the committed offset."""
    m = build_model(resolve_scenario("connect_send_failure"))
    assert isinstance(m, ConnectSystem)
    s = m.init_states()[0]
    s, _ = _steps(m, s, ("StartTask", (0, 0)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)))
    s, _ = _steps(m, s, ("CommitTaskCountRecord", (0,)), ("InitProducer", (0, 0)), ("VerifyGeneration", (0, 0)))
    s, events = _steps(m, s, ("Poll", (0, 0)), ("FailCommit", (0, 0)))
    assert "commit_failed" in events and events[-1] == "task_failed:commit_timeout"
    offsets = s.kafka.partitions[GLOBAL_OFFSETS]
    assert [decode_offset_record(r) for e in offsets.log for r in e.records] == [(0, 1)]
    assert committed_offsets(offsets, 1) == (-1,)  # read_committed: the open transaction's offset is not there
    inst = s.workers[0].instance(0)
    assert inst is not None and inst.phase == TaskPhase.FAILED and inst.pending
