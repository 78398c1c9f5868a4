"""The Connect scenarios under KIP-618 as implemented and under the weakened variants (explicit-state BFS).

State counts and trace lengths are pinned: a semantic change to the model
shows up here.  Every counterexample is replayed on a freshly built model and
read in Connect terms (workers, tasks, generations).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import EngineResult, Verdict
from keos.checker.trace import replay_actions
from keos.model.interface import Action, Model
from keos.model.variants import VARIANTS
from keos.reports.lanes import trace_view
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()

# scenario -> distinct states under the real protocol
REAL = {
    "connect_connector_boundaries": 8911,
    "connect_offset_tombstones": 778,
    "connect_duplicate_task_instances": 11246,
    "connect_fencing_round_faults": 6147,
    "connect_worker_crash": 664,
    "connect_worker_lag_before_producer": 20515,
    "connect_zombie_leader": 43514,
    "connect_single_worker_required": 85,
    "connect_disabled_leader_upgrade": 3672,
    "connect_tv1_zombie_task": 8893,
    "connect_tv1_reconfiguration": 518,
    "connect_reconfiguration_during_fencing_round": 906,
    "connect_connector_deleted_refresh_first": 519,
    "connect_recreated_after_failed_fencing_refresh_first": 1664,
    "connect_zombie_task_tombstone": 3451,
    "connect_tombstone_two_partitions": 2407,
    "connect_task_configs_uncommitted": 518,
    "connect_offset_copy_failure": 185,
    "connect_commit_failure_earlier_offsets": 59,
    "connect_plain_leader_write_failure": 17278,
    "connect_foreign_offset_record": 113,
    "connect_offsets_migrated": 9,
    "connect_at_least_once_send_failure": 7177,
}

# scenarios whose violations KIP-618 section 十四 permits
PERMITTED = {
    "connect_heterogeneous_cluster": ("exactly_once_source_delivery", 7),
    "connect_rolling_upgrade": ("exactly_once_source_delivery", 7),
}

# (scenario, variant) -> {invariant: shortest trace length}
CAUGHT = {
    ("connect_connector_deleted", "deleted_connector_tasks_kept"): {
        "deleted_connector_tasks_unassigned": 2,
    },
    ("connect_reconfiguration_during_fencing_round", "fencing_round_survives_config_update"): {
        "healthy_task_never_failed": 16,
        "task_lifecycle_legal": 16,
    },
    ("connect_send_failure", "records_committed_without_offsets"): {
        "exactly_once_source_delivery": 15,
        "offsets_committed_with_records": 8,
    },
    ("connect_worker_lag_before_producer", "no_reread_after_producer_init"): {
        "exactly_once_source_delivery": 17,
        "no_commit_by_fenced_generation": 15,
    },
    ("connect_worker_lag_before_producer", "no_zombie_fencing_round"): {
        "exactly_once_source_delivery": 14,
        "task_starts_after_task_count_record": 3,
        "no_commit_by_fenced_generation": 12,
    },
    ("connect_plain_leader_write_failure", "plain_config_write_failure_unseen"): {
        "acknowledged_config_writes_durable": 2,
    },
    ("connect_zombie_leader", "leader_writes_without_transactions"): {
        "exactly_once_source_delivery": 20,
        "no_commit_by_fenced_generation": 19,
        "no_config_write_by_deposed_leader": 5,
        "task_count_record_counts_latest_tasks": 9,
        "live_tasks_never_fenced": 15,
    },
    ("connect_offset_tombstones", "tombstone_to_connector_topic_first"): {
        "forgotten_offsets_stay_forgotten": 9,
        "tombstoned_offsets_stay_deleted": 9,
    },
    ("connect_connector_boundaries", "empty_abort_fails_task"): {
        "healthy_task_never_failed": 7,
        "task_lifecycle_legal": 7,
    },
    ("connect_connector_boundaries", "connector_abort_reprocesses"): {
        "exactly_once_source_delivery": 10,
    },
    ("connect_connector_boundaries", "connector_boundary_commits_on_stop"): {
        "task_lifecycle_legal": 11,
    },
    ("connect_worker_lag_before_producer", "revoked_task_initializes_producer"): {
        "live_tasks_never_fenced": 9,
    },
    ("connect_task_configs_uncommitted", "uncommitted_task_configs_effective"): {
        # task_count_record_counts_latest_tasks is violated first (7 steps); the shortest trace found is then 10
        "task_starts_after_task_count_record": 10,
        "healthy_task_never_failed": 3,
        "task_count_record_counts_latest_tasks": 7,
        "task_lifecycle_legal": 3,
        "tasks_run_committed_task_configs": 3,
    },
    ("connect_offset_copy_failure", "global_offsets_first"): {
        "exactly_once_source_delivery": 19,
    },
    # a record the offsets reader cannot parse ends its fetch (KAFKA-15800): the restarted task resumes too early
    ("connect_foreign_offset_record", "offsets_reader_stops_at_foreign_key"): {
        "exactly_once_source_delivery": 14,
        "offsets_committed_with_records": 16,
    },
    # an at-least-once task's failed send only logged (KAFKA-8586): the next flush commits a lost record's offset
    ("connect_at_least_once_send_failure", "plain_send_failure_ignored"): {
        "exactly_once_source_delivery": 3,
        "offsets_committed_with_records": 3,
        "task_acknowledges_only_committed_records": 3,
        "every_source_record_delivered": 14,
    },
    ("connect_worker_crash", "source_offsets_outside_transaction"): {
        "exactly_once_source_delivery": 17,
        "offsets_committed_with_records": 8,
        "task_offsets_only_in_transactions": 10,
        "task_acknowledges_only_committed_records": 11,
    },
}


# scenario -> events its search under the real protocol must take (judged on the same search as REAL's, which
# costs 10-20 CPU-s for the larger scenarios: one search per scenario, not one per test)
COVERS = {
    # the deposed leader's task-count write fails (fencedFromConfigTopic) under the protocol, and a zombie
    # task's write is refused too
    "connect_zombie_leader": ("config_write_fenced", "task_producer_fenced"),
    # new task configs committed while a real round (Admin.fenceProducers) awaits its record: the 409
    "connect_reconfiguration_during_fencing_round": ("fence_producers", "fencing_409_conflict"),
    # each commit failure at a boundary, with offsets of an earlier run in both offsets topics, and the restart
    "connect_commit_failure_earlier_offsets": (
        "task_failed:REQUEST_TIMED_OUT",
        "offset_flush_failed",
        "offsets_copied_before_commit",
        "task_failed:commit_timeout",
        "failed_task_restart_requested",
    ),
    # a plain (exactly.once.source.support=disabled) leader's commit record is lost: putTaskConfigs fails
    "connect_plain_leader_write_failure": ("privileged_write_failed", "task_configs_uncommitted"),
    # the fencing round's shortcut, 409 and failures
    "connect_fencing_round_faults": (
        "fencing_shortcut_1_to_1",
        "fence_producers",
        "fencing_409_conflict",
        "fencing_failed",
        "privileged_write_failed",
        "startup_aborted_new_generation",
    ),
}


@pytest.mark.parametrize(("name", "states"), sorted(REAL.items()))
def test_protocol_holds_with_every_partner_reached(name: str, states: int) -> None:
    scenario = SCENARIOS[name]
    assert scenario.default and scenario.model == "connect" and not scenario.permitted
    result, _ = explore(build_model(scenario), name, scenario.variant, ExploreOptions())
    assert result.complete and not result.violated
    verdicts = {p.name: p.verdict for p in result.properties}
    assert all(v in (Verdict.HOLDS, Verdict.REACHED) for v in verdicts.values()), verdicts
    assert result.stats["distinct_states"] == states
    for event in COVERS.get(name, ()):
        assert result.coverage.get(event, 0) > 0, event


def test_the_covered_events_are_judged_on_searched_scenarios() -> None:
    assert set(COVERS) <= set(REAL)


@pytest.mark.parametrize(("name", "expected"), sorted(PERMITTED.items()))
def test_section_14_heterogeneous_cluster_is_a_permitted_violation(name: str, expected: tuple[str, int]) -> None:
    invariant, length = expected
    scenario = SCENARIOS[name]
    assert scenario.permitted == (invariant,)
    result, _ = explore(build_model(scenario), name, scenario.variant, ExploreOptions(), scenario.permitted)
    verdicts = {p.name: p.verdict for p in result.properties}
    assert verdicts[invariant] is Verdict.PERMITTED
    assert not result.violated  # reported apart from real failures
    assert all(v is not Verdict.VIOLATED for v in verdicts.values())
    found = next(p for p in result.properties if p.name == invariant)
    assert found.trace is not None and len(found.trace.actions) == length
    assert "committed twice" in found.detail and "w0/t0@g0" in found.detail


def test_offsets_copied_to_the_global_topic_before_a_failed_commit_lose_records() -> None:
    """setPrimaryThenSecondary copies on the primary's acknowledgement, before EndTxn: a failed commit leaves the
    copy, and the next instance resumes from it (connect_offset_copy_before_commit, permitted findings)."""
    scenario = SCENARIOS["connect_offset_copy_before_commit"]
    assert scenario.default and set(scenario.permitted) == {
        "exactly_once_source_delivery", "offsets_committed_with_records", "every_source_record_delivered",
        "task_acknowledges_only_committed_records",
    }
    result, _ = explore(build_model(scenario), scenario.name, "kafka", ExploreOptions(), scenario.permitted)
    assert not result.violated and result.stats["distinct_states"] == 80
    found = {p.name: p for p in result.properties if p.verdict is Verdict.PERMITTED}
    assert set(found) == set(scenario.permitted)
    assert "committed at 1 but src0[0] is not" in found["offsets_committed_with_records"].detail
    trace = found["offsets_committed_with_records"].trace
    assert trace is not None and "FailCommit" in [a.kind for a in trace.actions]
    # the restarted instance resumes from the copy: its committed positions run ahead of the committed records
    assert "src0 committed up to 1, but src0[0] is not committed" in found[
        "task_acknowledges_only_committed_records"
    ].detail


def test_kafkas_offsets_read_repeats_a_partition_only_the_global_topic_knows() -> None:
    """A connector moved onto its own offsets topic: the earlier run's offset is in the global topic only.  Read as
    documented (KIP-618, the Javadoc of ConnectorOffsetBackingStore.get) the task resumes after it; read as Kafka's
    code does (putAll of the connector store's null answer) it starts src0 again and commits src0[0] twice."""
    faithful = SCENARIOS["connect_offsets_migrated_kafka_read"]
    twin = SCENARIOS["connect_offsets_migrated"]
    assert faithful.permitted == ("exactly_once_source_delivery",) and not twin.permitted
    assert (faithful.connect.topology.offsets_read, twin.connect.topology.offsets_read) == ("kafka-4.0", "kip-618")
    result, _ = explore(build_model(faithful), faithful.name, "kafka", ExploreOptions(), faithful.permitted)
    assert not result.violated
    found = next(p for p in result.properties if p.name == "exactly_once_source_delivery")
    assert found.verdict is Verdict.PERMITTED and found.trace is not None and len(found.trace.actions) == 8
    assert "src0[0] is committed twice" in found.detail and "w0/t0@g-1" in found.detail
    assert all(p.verdict is not Verdict.VIOLATED for p in result.properties)


def test_fencing_request_in_the_deletion_tick_gets_a_round_of_the_deleted_connector() -> None:
    """doFenceZombieSourceTasks checks configState before refreshing it (Kafka trunk): a permitted duplicate.

    The twin under fencing_refreshes_first holds (test_protocol_holds_with_every_partner_reached)."""
    scenario = SCENARIOS["connect_connector_deleted"]
    assert scenario.permitted == ("exactly_once_source_delivery", "no_commit_by_fenced_generation")
    result, _ = explore(build_model(scenario), scenario.name, "kafka", ExploreOptions(), scenario.permitted)
    assert not result.violated and result.stats["distinct_states"] == 717
    found = {p.name: p for p in result.properties if p.verdict is Verdict.PERMITTED}
    assert {n: len(p.trace.actions) for n, p in found.items() if p.trace} == {
        "exactly_once_source_delivery": 19,
        "no_commit_by_fenced_generation": 17,
    }
    steps = [a.kind for a in found["exactly_once_source_delivery"].trace.actions]  # type: ignore[union-attr]
    assert steps[:3] == ["DeleteConnector", "StartTask", "FenceZombies"]
    assert result.coverage.get("fencing_request_in_deletion_tick", 0) > 0


def test_a_round_that_failed_to_start_in_the_deletion_tick_blocks_the_recreated_connector() -> None:
    """The round doFenceZombieSourceTasks put in activeZombieFencings for the deleted connector throws in start() and
    stays: the re-created connector, which needs a fencing round, joins it and fails on every request (permitted
    liveness findings); every safety property holds whatever a leader with that round does (session 33: a leader
    offered its task-count record steps with an unstarted round is caught by acknowledged_config_writes_durable)."""
    scenario = SCENARIOS["connect_recreated_after_failed_fencing"]
    assert scenario.default and set(scenario.permitted) == {
        "healthy_task_never_failed", "every_source_record_delivered", "assigned_tasks_run",
    }
    result, _ = explore(build_model(scenario), scenario.name, "kafka", ExploreOptions(), scenario.permitted)
    assert result.complete and not result.violated and result.stats["distinct_states"] == 1941
    found = {p.name: p for p in result.properties if p.verdict is Verdict.PERMITTED}
    assert {n: len(p.trace.actions) for n, p in found.items() if p.trace} == {
        "healthy_task_never_failed": 15,
        "every_source_record_delivered": 17,
        "assigned_tasks_run": 17,
    }
    trace = found["healthy_task_never_failed"].trace
    assert trace is not None
    model = build_model(scenario)
    state, events = model.init_states()[0], []
    for action in trace.actions:
        step = model.step(state, action)
        assert step is not None
        state, events = step.state, [*events, *step.events]
    assert events.index("fencing_round_failed_to_start") < events.index("fencing_joined_unstarted_round")
    assert all(p.verdict in (Verdict.HOLDS, Verdict.REACHED, Verdict.PERMITTED) for p in result.properties)


@pytest.mark.parametrize(("key", "lengths"), sorted(CAUGHT.items()))
def test_weakened_variant_caught_with_minimal_replayable_trace(key: tuple[str, str], lengths: dict[str, int]) -> None:
    name, variant = key
    v = VARIANTS[variant]
    assert v.weakened and name in v.scenarios and set(v.breaks) <= set(lengths)
    scenario = SCENARIOS[name]
    model = build_model(scenario, variant)
    result, _ = explore(model, name, variant, ExploreOptions())
    found = {p.name: p for p in result.violations()}
    assert {n: len(p.trace.actions) for n, p in found.items() if p.trace} == lengths
    if key == WORKER_LAG:  # read in Connect terms on this same search (it costs ~8 CPU-s)
        _worker_lag_counterexample_reads_in_connect_terms(model, result)
    fresh = build_model(scenario, variant)
    props = {p.name: p for p in fresh.properties()}
    for inv, prop_result in found.items():
        assert prop_result.trace is not None
        replay = replay_actions(fresh, prop_result.trace.actions, props[inv])
        assert replay.confirmed and replay.violated_at == len(prop_result.trace.actions), replay.reason
        # The same actions are harmless under the protocol (the variant's rule is what breaks).
        real = build_model(scenario, "kafka")
        assert not replay_actions(
            real, prop_result.trace.actions, {p.name: p for p in real.properties()}[inv]
        ).confirmed


#: The worker-lag counterexample of section 十三, read in Connect terms by the CAUGHT test of this key.
WORKER_LAG = ("connect_worker_lag_before_producer", "no_reread_after_producer_init")


def test_the_worker_lag_case_is_caught_and_read() -> None:
    assert WORKER_LAG in CAUGHT


def _worker_lag_counterexample_reads_in_connect_terms(model: Model, result: EngineResult) -> None:
    """Section 十三: the lagging worker's generation-0 task writes src0 after generation 1's task did."""
    trace = next(p.trace for p in result.violations() if p.name == "exactly_once_source_delivery")
    assert trace is not None
    assert trace.explanation == (
        "src0[0] is committed twice: offset 0 src0[0] (w0/t0@g1) and offset 2 src0[0] (w1/t1@g0)"
    )
    text = [s["action"] for s in trace.steps]
    assert text[0] == "StartTask(worker=1, task=1)"
    assert "Reconfigure(worker=0, connector=source)" in text and "InitProducer(worker=1, task=1)" in text
    assert text.index("VerifyGeneration(worker=0, task=0)") < text.index("InitProducer(worker=1, task=1)")
    view = trace_view(trace.to_json(model))
    assert view.lanes == ("w0", "w1", "w2")


def test_keos_check_and_replay_exit_codes(tmp_path: Path) -> None:
    keos = [sys.executable, "-m", "keos"]
    ok = subprocess.run([*keos, "check", "--scenario", "connect_worker_crash", "--out", str(tmp_path)], check=False)
    assert ok.returncode == 0
    bad = subprocess.run(
        [
            *keos,
            "check",
            "--scenario",
            "connect_worker_crash",
            "--variant",
            "source_offsets_outside_transaction",
            "--out",
            str(tmp_path),
            "--json",
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1
    trace = (
        tmp_path
        / "explore/connect_worker_crash/source_offsets_outside_transaction/offsets_committed_with_records.trace.json"
    )
    assert json.loads(trace.read_text())["actions"][0]["kind"]
    replayed = subprocess.run([*keos, "replay", str(trace)], check=False, capture_output=True, text=True)
    assert replayed.returncode == 1 and "CONFIRMED" in replayed.stdout
    broken = tmp_path / "bad.toml"
    broken.write_text(
        'name = "x"\nmodel = "connect"\n[connect]\ntransaction_boundary = "connector"\n', encoding="utf-8"
    )
    err = subprocess.run([*keos, "check", "--scenario", str(broken)], check=False, capture_output=True, text=True)
    assert err.returncode == 2 and "transaction.boundary" in err.stderr and err.stderr.count("\n") == 1


SEED_STORY = [
    ("StartTask", (1, 1)),  # 2-3. F (w1) is assigned task 1 (src0) and requests a fencing round
    ("FenceZombies", (2,)),  # L (w2): first start, no task-count record -> no fencing needed
    ("WriteTaskCountRecord", (2,)),
    ("CommitTaskCountRecord", (2,)),  # F reads the task-count record
    ("PauseWorker", (1,)),  # 4. F blocks before instantiating task 1's producer
    ("Reconfigure", (2,)), ("CommitTaskConfigs", (2,)),  # 5. new task configs: src0 moves to task 0
    ("Rebalance", ()),  # 6. F has left the group: task 0 goes to O (w0)
    ("StartTask", (0, 0)),  # 7. O requests a round: L fences the producers of generation 0 ...
    ("FenceZombies", (2,)),
    ("WriteTaskCountRecord", (2,)),
    ("CommitTaskCountRecord", (2,)),
    ("InitProducer", (0, 0)),
    ("VerifyGeneration", (0, 0)),
    ("Poll", (0, 0)),  # ... and O processes src0 (transaction open)
    ("ResumeWorker", (1,)),  # 8. F unblocks and instantiates task 1's producer: nobody fences it
    ("InitProducer", (1, 1)),
    ("VerifyGeneration", (1, 1)),
]


def test_seed_section_13_story_f_o_l_replays_step_by_step() -> None:
    """The seed's eight steps, literally: the re-read aborts F's start-up; without it src0[0] is written twice."""
    scenario = SCENARIOS["connect_worker_lag_before_producer"]
    real = build_model(scenario, "kafka")
    state = real.init_states()[0]
    seen: list[tuple[str, ...]] = []
    for kind, args in SEED_STORY:
        step = real.step(state, Action(kind, args))
        assert step is not None, (kind, args)
        state = step.state
        seen.append(step.events)
    assert "fence_producers" in seen[9]  # L fenced task ids 0 and 1 of generation 0 (F had no producer yet)
    events = seen[-1]
    assert events == ("startup_aborted_new_generation",)
    weak = build_model(scenario, "no_reread_after_producer_init")
    story = [*SEED_STORY, ("Poll", (1, 1)), ("CommitTransaction", (1, 1)), ("CommitTransaction", (0, 0))]
    prop = next(p for p in weak.properties() if p.name == "exactly_once_source_delivery")
    replay = replay_actions(weak, [Action(k, a) for k, a in story], prop)
    assert replay.confirmed and replay.violated_at == len(story)
    assert prop.explain is not None
    assert prop.explain(replay.states[-1]) == (
        "src0[0] is committed twice: offset 0 src0[0] (w0/t0@g1) and offset 1 src0[0] (w1/t1@g0)"
    )
