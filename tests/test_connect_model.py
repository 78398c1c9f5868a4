"""Kafka Connect (KIP-618) components: config topic, fencing round, start-up steps, producers, preflight.

Each test drives the shared Kafka handlers through the Connect modules and
asserts the protocol outcome (phases, errors, log contents), not just that a
step was enabled.
"""

from __future__ import annotations

import tomllib

import pytest
from txn_config import kafka_cc

from keos.invariants.connect_bounds import connect_bounds_properties, work_bound
from keos.invariants.connect_logs import (
    committed_offsets,
    config_record_label,
    entry_fates,
    task_count_follows_generation,
)
from keos.model.connect import config_topic as cfgt
from keos.model.connect.herder import FENCE, NOTHING_TO_DO, WRITE_ONLY, assignment, fencing_plan, preflight_errors
from keos.model.connect.offsets import combined_offsets, offset_record, offset_tombstone, read_offsets
from keos.model.connect.producers import (
    KafkaCluster,
    append_plain,
    end_transaction,
    fence_producers,
    init_transactions,
    send_transactional,
)
from keos.model.connect.records import CONFIG_TOPIC, GLOBAL_OFFSETS, OUTPUT, ConnectState
from keos.model.connect.worker import TaskPhase, decode_source_record
from keos.model.interface import Action, ModelError
from keos.model.log.partition import PartitionLeader
from keos.model.protocol.errors import Errors
from keos.model.systems.connect import ConnectSystem
from keos.model.variants import VARIANTS
from keos.scenarios import ScenarioError, build_model, builtin_scenarios, parse_scenario

CC = kafka_cc()
FLAGS = VARIANTS["kafka"].flags


def _cluster(tids: int = 3) -> KafkaCluster:
    return KafkaCluster(tuple(PartitionLeader() for _ in range(4)), (None,) * tids, 0)


def _run(model: ConnectSystem, state: ConnectState, *actions: tuple[str, tuple[int, ...]]) -> ConnectState:
    for kind, args in actions:
        step = model.step(state, Action(kind, args))
        assert step is not None, (
            f"{kind}{args} not enabled; enabled: {[model.format_action(a) for a in model.actions(state)]}"
        )
        state = step.state
    return state


def _model(variant: str = "kafka", **connect: object) -> ConnectSystem:
    table = {"workers": ["enabled", "enabled"], "leader": 0, "task_counts": [1], "owners": [[0]], **connect}
    sc = parse_scenario({"name": "t", "model": "connect", "connect": table, "faults": {"pause": 1, "total": 1}})
    m = build_model(sc, variant)
    assert isinstance(m, ConnectSystem)
    return m


# -- config topic (KafkaConfigBackingStore, read_committed) ------------------------------------------------


def test_config_snapshot_generation_pending_fencing_and_task_count_record() -> None:
    k = _cluster()
    rec = cfgt.config_record
    k, _ = append_plain(k, CONFIG_TOPIC, (rec(cfgt.TASK_CONFIG, -1, 0, 0), rec(cfgt.COMMIT, -1, 0, 1)), FLAGS)
    leader = k.partitions[CONFIG_TOPIC]
    snap = cfgt.snapshot(leader, len(leader.log))
    assert (snap.generation, snap.task_count, snap.pending_fencing, snap.task_count_record) == (0, 1, True, -1)
    assert cfgt.snapshot(leader, 0).generation == -1  # nothing read: no generation applied
    k, _ = append_plain(k, CONFIG_TOPIC, (rec(cfgt.TASK_COUNT, 0, 0, 1),), FLAGS)
    leader = k.partitions[CONFIG_TOPIC]
    snap = cfgt.snapshot(leader, len(leader.log))
    assert (snap.pending_fencing, snap.task_count_record) == (False, 1)
    assert task_count_follows_generation(leader, 0)
    assert not task_count_follows_generation(leader, 1)


def test_config_topic_is_read_committed_an_aborted_leader_write_is_invisible() -> None:
    k = _cluster()
    k, h, _ = init_transactions(k, 0, 4, CC)
    assert h is not None
    rid = cfgt.config_record(cfgt.TASK_COUNT, 0, 0, 2)
    k, h, err, _ = send_transactional(k, h, CONFIG_TOPIC, (rid,), FLAGS)
    assert err == Errors.NONE
    leader = k.partitions[CONFIG_TOPIC]
    assert cfgt.read_to_end(leader) == 0  # the open transaction holds the LSO: readers stop before it
    # A new leader claims the topic: initTransactions fences the old producer and aborts its transaction.
    k, h2, events = init_transactions(k, 0, 4, CC)
    assert h2 is not None and h2.producer_epoch > h.producer_epoch and "fence" in events
    leader = k.partitions[CONFIG_TOPIC]
    assert cfgt.snapshot(leader, cfgt.read_to_end(leader)).task_count_record == -1
    assert entry_fates(leader)[0] == "aborted"
    # The deposed leader's commit is refused.
    _, _, err, _ = end_transaction(k, h, True, CC)
    assert err == Errors.PRODUCER_FENCED


def test_labels_name_connect_keys() -> None:
    assert config_record_label(cfgt.config_record(cfgt.TASK_COUNT, 2, 1, 3)) == (
        "tasks-fencing-source{task-count=3} by w2"
    )
    assert config_record_label(cfgt.config_record(cfgt.COMMIT, -1, 0, 2)) == "commit-source{tasks=2}@g0"


# -- the zombie-fencing round (DistributedHerder.doFenceZombieSourceTasks) ----------------------------------


@pytest.mark.parametrize(
    ("pending", "record", "count", "outcome", "fenced"),
    [
        (False, 2, 2, NOTHING_TO_DO, ()),
        (True, -1, 3, WRITE_ONLY, ()),  # first start with EOS: no task-count record yet
        (True, 1, 1, WRITE_ONLY, ()),  # the 1 -> 1 shortcut
        (True, 2, 2, FENCE, (0, 1)),  # multi-task, same count: still fenced
        (True, 1, 2, FENCE, (0,)),
        (True, 2, 1, FENCE, (0, 1)),
    ],
)
def test_fencing_plan(pending: bool, record: int, count: int, outcome: str, fenced: tuple[int, ...]) -> None:
    snap = cfgt.ConfigSnapshot(1, count, pending, record, 9)
    assert fencing_plan(snap) == (outcome, fenced)


def test_admin_fence_producers_aborts_the_zombies_open_transaction_and_fences_it() -> None:
    k = _cluster()
    k, zombie, _ = init_transactions(k, 1, 4, CC)
    assert zombie is not None
    k, zombie, err, _ = send_transactional(k, zombie, OUTPUT, (7,), FLAGS)
    assert err == Errors.NONE
    k, ok, events = fence_producers(k, (1, 2), CC)
    assert ok and "fence" in events and "error:CONCURRENT_TRANSACTIONS" in events  # retried in place
    assert entry_fates(k.partitions[OUTPUT])[0] == "aborted"
    md = k.coordinator[1]
    assert md is not None and md.producer_epoch > zombie.producer_epoch
    assert k.coordinator[2] is not None  # an id nobody used yet is fenced too (a producer not yet created)
    k, _, err, _ = send_transactional(k, zombie._replace(in_transaction=False, added=()), OUTPUT, (8,), FLAGS)
    assert err == Errors.INVALID_PRODUCER_EPOCH


def test_round_409_at_once_when_new_task_configs_are_read_during_fencing() -> None:
    """DistributedHerder.ConfigUpdateListener.onTaskConfigUpdate (Kafka 4.0): the active round fails at once with
    409 and is gone, so the new generation's request starts a new round and its task starts."""
    m = _model(task_counts=[2, 2], owners=[[1], [1]])
    s = m.init_states()[0]
    s = _run(m, s, ("StartTask", (1, 1)), ("FenceZombies", (0,)))
    s = _run(m, s, ("Reconfigure", (0,)))
    step = m.step(s, Action("CommitTaskConfigs", (0,)))
    assert step is not None and "fencing_409_conflict" in step.events
    inst = step.state.workers[1].instance(1)
    assert inst is not None and inst.phase == TaskPhase.FAILED
    assert step.state.workers[0].fencing is None
    assert Action("WriteTaskCountRecord", (0,)) not in m.actions(step.state)
    s = _run(m, step.state, ("Rebalance", ()), ("StartTask", (1, 1)), ("FenceZombies", (0,)))
    s = _run(m, s, ("WriteTaskCountRecord", (0,)), ("CommitTaskCountRecord", (0,)))
    inst = s.workers[1].instance(1)
    assert inst is not None and inst.generation == 1 and inst.phase == TaskPhase.FENCING_DONE


def test_round_409_at_the_record_when_the_round_survives_config_updates() -> None:
    """The weakened variant fencing_round_survives_config_update: the round fails only at its re-read."""
    m = _model("fencing_round_survives_config_update", task_counts=[2, 2], owners=[[1], [1]])
    s = m.init_states()[0]
    s = _run(m, s, ("StartTask", (1, 1)), ("FenceZombies", (0,)), ("Reconfigure", (0,)), ("CommitTaskConfigs", (0,)))
    step = m.step(s, Action("WriteTaskCountRecord", (0,)))
    assert step is not None and "fencing_409_conflict" in step.events
    inst = step.state.workers[1].instance(1)
    assert inst is not None and inst.phase == TaskPhase.FAILED
    assert step.state.workers[0].fencing is None


def test_round_shortcut_one_task_to_one_task_writes_only_the_record() -> None:
    m = _model(task_counts=[1, 1], owners=[[0], [0]])
    s = m.init_states()[0]
    s = _run(m, s, ("StartTask", (0, 0)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)))
    s = _run(m, s, ("CommitTaskCountRecord", (0,)), ("Reconfigure", (0,)), ("CommitTaskConfigs", (0,)))
    s = _run(m, s, ("Rebalance", ()))
    # Generation 0's instance was revoked before initTransactions: step 4, it returns and is gone.
    stale = s.workers[0].instance(0)
    assert stale is not None and stale.stopping and stale.phase == TaskPhase.FENCING_DONE
    assert Action("StartTask", (0, 0)) not in m.actions(s)  # the worker awaits the old instance's stop
    step = m.step(s, Action("InitProducer", (0, 0)))
    assert step is not None and step.events == ("startup_stopped_before_producer",)
    assert step.state.kafka == s.kafka and step.state.workers[0].instance(0) is None
    s = _run(m, step.state, ("StartTask", (0, 0)))
    step = m.step(s, Action("FenceZombies", (0,)))
    assert step is not None and step.events == ("fencing_skipped", "fencing_shortcut_1_to_1")


def test_assignment_is_round_robin_over_members() -> None:
    assert assignment((0, 2), 3, 3) == ((0, 2), (), (1,))


# -- the start-up protocol and the send loop (fact sheet §5.5) -----------------------------------------------


def test_start_up_steps_and_offsets_in_the_records_transaction() -> None:
    m = _model(records=1)
    s = m.init_states()[0]
    s = _run(m, s, ("StartTask", (0, 0)))
    assert s.workers[0].tasks[0].phase == TaskPhase.FENCING_REQUESTED
    assert {a.kind for a in m.actions(s)} >= {"FenceZombies"}
    assert not any(a.kind == "InitProducer" for a in m.actions(s))  # step 5 waits for the round
    s = _run(m, s, ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)), ("CommitTaskCountRecord", (0,)))
    assert s.workers[0].tasks[0].phase == TaskPhase.FENCING_DONE
    assert task_count_follows_generation(s.kafka.partitions[CONFIG_TOPIC], 0)
    s = _run(m, s, ("InitProducer", (0, 0)))
    inst = s.workers[0].tasks[0]
    assert inst.phase == TaskPhase.PRODUCER_READY and inst.producer is not None
    s = _run(m, s, ("VerifyGeneration", (0, 0)), ("Poll", (0, 0)))
    assert read_offsets(s.kafka.partitions[GLOBAL_OFFSETS], 1) == (-1,)
    assert not any(a.kind == "Poll" for a in m.actions(s))  # poll boundary: commit before the next poll
    s = _run(m, s, ("CommitTransaction", (0, 0)))
    out, offs = s.kafka.partitions[OUTPUT], s.kafka.partitions[GLOBAL_OFFSETS]
    assert out.log[0].transactional and offs.log[0].transactional
    assert out.log[0].producer_id == offs.log[0].producer_id  # one transaction carries records and offsets
    assert committed_offsets(offs, 1) == (1,)
    assert decode_source_record(out.log[0].records[0])[3:] == (0, 0)


def test_verify_generation_aborts_start_up_after_a_reconfiguration() -> None:
    """Step 6: the re-read after initTransactions sees generation 1 and aborts; without it the task runs."""
    table = {"task_counts": [1, 1], "owners": [[0], [0]]}
    m = _model(**table)
    s = m.init_states()[0]
    s = _run(m, s, ("StartTask", (0, 0)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)))
    s = _run(m, s, ("CommitTaskCountRecord", (0,)), ("InitProducer", (0, 0)))
    s = _run(m, s, ("Reconfigure", (0,)), ("CommitTaskConfigs", (0,)))
    step = m.step(s, Action("VerifyGeneration", (0, 0)))
    assert step is not None and step.events == ("startup_aborted_new_generation",)
    assert step.state.workers[0].tasks[0].phase == TaskPhase.FAILED
    weak = _model(variant="no_reread_after_producer_init", **table)
    step = weak.step(s, Action("VerifyGeneration", (0, 0)))
    assert step is not None and "task_started_exactly_once" in step.events


def test_combined_offsets_prefer_the_connectors_own_topic() -> None:
    k = _cluster()
    k, _ = append_plain(k, GLOBAL_OFFSETS, (offset_record(0, 4), offset_record(1, 2)), FLAGS)
    k, _ = append_plain(k, 2, (offset_record(1, 5),), FLAGS)
    assert combined_offsets(k.partitions[2], k.partitions[GLOBAL_OFFSETS], 3) == (4, 5, -1)
    assert combined_offsets(None, k.partitions[GLOBAL_OFFSETS], 3) == (4, 2, -1)


def test_kafkas_combined_read_never_falls_back_to_the_global_topic() -> None:
    """ConnectorOffsetBackingStore.get (apache/kafka 1eb7644): the connector store answers null for a key its topic
    lacks, and putAll lets that null replace the worker store's value (offsets_read = "kafka-4.0")."""
    k = _cluster()
    k, _ = append_plain(k, GLOBAL_OFFSETS, (offset_record(0, 4), offset_record(1, 2)), FLAGS)
    k, _ = append_plain(k, 2, (offset_record(1, 5), offset_tombstone(2)), FLAGS)
    own, glob = k.partitions[2], k.partitions[GLOBAL_OFFSETS]
    assert combined_offsets(own, glob, 3, falls_back=False) == (-1, 5, -1)
    assert combined_offsets(own, glob, 3, own_first=False, falls_back=False) == (4, 2, -1)
    assert combined_offsets(None, glob, 3, falls_back=False) == (4, 2, -1)  # no connector store: the global one


def test_worker_without_support_runs_at_least_once_without_fencing() -> None:
    m = _model(workers=["disabled", "enabled"], leader=1)
    s = m.init_states()[0]
    step = m.step(s, Action("StartTask", (0, 0)))
    assert step is not None and step.events == ("task_started_at_least_once",)
    s = _run(m, step.state, ("Poll", (0, 0)))
    assert not s.kafka.partitions[OUTPUT].log[0].transactional
    assert {a.kind for a in m.actions(s)} >= {"CommitOffsets"}


# -- scenario input: preflight validation and schema errors --------------------------------------------------


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            {"exactly_once_support": "required", "connector_exactly_once": "UNSUPPORTED"},
            "does not provide exactly-once",
        ),
        ({"exactly_once_support": "required", "connector_exactly_once": "null"}, "cannot determine"),
        (
            {"exactly_once_support": "required", "workers": ["disabled", "enabled"]},
            "exactly.once.source.support=enabled",
        ),
        ({"transaction_boundary": "connector"}, "transaction.boundary"),
        ({"transaction_boundary": "connector", "connector_boundaries": "null"}, "transaction.boundary"),
        ({"workers": ["sometimes"]}, "exactly.once.source.support"),
        ({"task_counts": [1, 2], "owners": [[0]]}, "owners"),
        ({"owners": [[3]]}, "task >= its task count"),
        ({"leader": 5}, "leader"),
        ({"records": 0}, "records"),
        ({"surprise": 1}, "unknown key"),
    ],
)
def test_bad_connect_scenarios_are_one_line_errors(table: dict[str, object], message: str) -> None:
    base = {"workers": ["enabled", "enabled"], "leader": 0, "task_counts": [1], "owners": [[0]]}
    with pytest.raises(ScenarioError) as err:
        parse_scenario({"name": "t", "model": "connect", "connect": {**base, **table}}, "bad.toml")
    text = str(err.value)
    assert message in text and "\n" not in text and text.startswith("bad.toml: ")


def test_preflight_accepts_supported_configurations() -> None:
    assert preflight_errors("required", "SUPPORTED", "connector", "SUPPORTED", "enabled") == []
    assert preflight_errors("requested", "null", "poll", "UNSUPPORTED", "disabled") == []


def test_connect_faults_section_rejects_other_models_keys() -> None:
    with pytest.raises(ScenarioError, match=r"\[faults\] unknown key 'drop'"):
        parse_scenario({"name": "t", "model": "connect", "connect": {}, "faults": {"drop": 1}})
    with pytest.raises(ScenarioError, match="needs model"):
        parse_scenario({"name": "t", "connect": {}})


def test_actions_round_trip_through_json_and_reject_malformed_input() -> None:
    m = _model()
    for a in (Action("StartTask", (1, 0)), Action("Rebalance", ()), Action("FenceZombies", (0,))):
        assert m.action_from_json(m.action_to_json(a)) == a
    assert m.format_action(Action("FenceZombies", (2,))) == "FenceZombies(worker=2, connector=source)"
    for bad in ({"kind": "StartTask", "worker": 1}, {"kind": "Nope"}, {"kind": "PauseWorker", "worker": -1}, [1]):
        with pytest.raises(ModelError):
            m.action_from_json(bad)
    assert m.step(m.init_states()[0], Action("InitProducer", (0, 0))) is None


def test_shipped_connect_scenarios_parse_and_name_existing_variants() -> None:
    connect = {n: s for n, s in builtin_scenarios().items() if s.model == "connect"}
    assert len(connect) >= 8
    for v in VARIANTS.values():
        for name in v.scenarios:
            if name.startswith("connect_"):
                assert name in connect
    for name in connect:
        with open(f"scenarios/{name}.toml", "rb") as f:
            assert tomllib.load(f)["model"] == "connect"


def test_connect_writes_bounded_flags_a_write_loop_and_not_the_scenarios_work() -> None:
    """A leader that rewrote its task configs without end overruns the scenario's bound; the initial state does not."""
    m = _model(task_counts=[2, 2], owners=[[1], [1]])
    (prop,) = connect_bounds_properties(m.config)
    s = m.init_states()[0]
    assert prop.predicate(s)
    bound = work_bound(m.config)
    assert bound == 4 * (2 + 1 + 1) * (2 + 1) + 2 * 1
    kafka = s.kafka
    while len(kafka.partitions[CONFIG_TOPIC].log) <= bound:  # generation 0's commit record written again and again
        kafka, _ = append_plain(kafka, CONFIG_TOPIC, (cfgt.config_record(cfgt.COMMIT, 0, 0, 2),), m.flags)
    assert not prop.predicate(s._replace(kafka=kafka))
    assert "the config topic holds" in prop.explain(s._replace(kafka=kafka))


def _gen2_requests_while_gen1_round(variant: str) -> tuple[ConnectSystem, ConnectState]:
    """Generation 1's real round (fences task id 0) is active when generation 2's task configs are committed."""
    m = _model(variant, task_counts=[1, 2, 2], owners=[[0], [0], [1]], records=1)
    s = m.init_states()[0]
    s = _run(m, s, ("StartTask", (0, 0)), ("FenceZombies", (0,)), ("WriteTaskCountRecord", (0,)))
    s = _run(m, s, ("CommitTaskCountRecord", (0,)), ("Reconfigure", (0,)), ("CommitTaskConfigs", (0,)))
    s = _run(m, s, ("Rebalance", ()))
    s = _run(m, s, ("InitProducer", (0, 0)), ("StartTask", (0, 0)))
    step = m.step(s, Action("FenceZombies", (0,)))
    assert step is not None and "fence_producers" in step.events
    s = _run(m, step.state, ("Reconfigure", (0,)), ("CommitTaskConfigs", (0,)))
    s = _run(m, s, ("Rebalance", ()), ("StartTask", (1, 1)))
    return m, s


def test_new_generation_request_starts_a_new_round_after_the_update_failed_the_stale_one() -> None:
    """onTaskConfigUpdate removed generation 1's round: generation 2's request starts (and passes) its own."""
    m, s = _gen2_requests_while_gen1_round("kafka")
    assert s.workers[0].fencing is None
    step = m.step(s, Action("FenceZombies", (0,)))
    assert step is not None and "fencing_request_joined_round" not in step.events
    round_ = step.state.workers[0].fencing
    assert round_ is not None and round_.generation == 2
    s = _run(m, step.state, ("WriteTaskCountRecord", (0,)), ("CommitTaskCountRecord", (0,)))
    inst = s.workers[1].instance(1)
    assert inst is not None and inst.generation == 2 and inst.phase == TaskPhase.FENCING_DONE


def test_new_generation_request_joins_a_round_that_outlived_the_update_and_gets_its_409() -> None:
    """doFenceZombieSourceTasks joins the active round (addCallback): a stale round answers the new request 409."""
    m, s = _gen2_requests_while_gen1_round("fencing_round_survives_config_update")
    stale = s.workers[0].fencing
    assert stale is not None and stale.generation == 1
    step = m.step(s, Action("FenceZombies", (0,)))
    assert step is not None and step.events == ("fencing_request_joined_round",)
    assert step.state.kafka == s.kafka  # joining fences nothing
    joined = step.state.workers[0].fencing
    assert joined is not None and joined.joined == 2
    assert Action("FenceZombies", (0,)) not in m.actions(step.state)  # nobody left to join
    step = m.step(step.state, Action("WriteTaskCountRecord", (0,)))
    assert step is not None and "fencing_409_conflict" in step.events
    inst = step.state.workers[1].instance(1)
    assert inst is not None and inst.generation == 2 and inst.phase == TaskPhase.FAILED
