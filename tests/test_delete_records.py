"""The log start offset (DeleteRecords, retention) and the producer state it must leave alone (KAFKA-7190).

``UnifiedLog.maybeIncrementLogStartOffset`` takes any offset up to the high watermark;
``ProducerStateManager.onLogStartOffsetIncremented`` keeps every producer's entry (Kafka 2.5+, KIP-360), so the
retry of a written-then-deleted batch is still recognised as a duplicate.  The weakened variant
``no_kafka_7190_fix`` forgets the producers whose last batch was deleted (``truncateHead`` before 2.5).
"""

from __future__ import annotations

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.trace import replay_actions
from keos.model.interface import Action
from keos.model.log.partition import LogEntry, PartitionLeader, delete_records, restart_leader
from keos.model.log.producer_state import BatchMetadata, ProducerStateEntry
from keos.model.variants import VARIANTS, ProtocolFlags
from keos.scenarios import build_model, resolve_scenario

SCENARIO = "idempotence_delete_records"


def _leader(high_watermark: int) -> PartitionLeader:
    log = (LogEntry(7, 0, 0, (1,)), LogEntry(7, 0, 1, (2,)))
    entry = ProducerStateEntry(7, 0, (BatchMetadata(0, 0, 0), BatchMetadata(1, 1, 1)))
    return PartitionLeader(log=log, high_watermark=high_watermark, producers=(entry,))


def test_the_log_start_offset_moves_to_the_high_watermark_and_the_producer_state_stays() -> None:
    flags = ProtocolFlags()
    result = delete_records(_leader(2), flags)
    assert result is not None
    leader, events = result
    assert leader.log_start_offset == 2 and leader.producers == _leader(2).producers
    assert leader.log == _leader(2).log  # the model keeps the deleted batches as the history the judges read
    assert events == ("log_start_offset_advanced",)
    assert delete_records(leader, flags) is None  # nothing below the high watermark is left to delete
    assert delete_records(_leader(0), flags) is None  # never past the high watermark
    # a new leader keeps the log start offset and the producer state it built replicating the log
    assert restart_leader(leader, flags).log_start_offset == 2
    assert restart_leader(leader, flags).producers == leader.producers


def test_before_kafka_7190_the_deleted_producer_is_forgotten() -> None:
    weak = VARIANTS["no_kafka_7190_fix"].flags
    result = delete_records(_leader(1), weak)
    assert result is not None and result[0].producers == _leader(1).producers  # its last batch (offset 1) stays
    result = delete_records(_leader(2), weak)
    assert result is not None and result[0].producers == ()


def test_delete_records_is_a_protocol_step_offered_only_by_the_scenario_switch() -> None:
    m = build_model(resolve_scenario(SCENARIO))
    assert m.fault_kind(Action("DeleteRecords", (0,))) is None
    s = m.init_states()[0]
    assert not any(a.kind == "DeleteRecords" for a in m.actions(s))  # empty log: nothing to delete
    full = s._replace(partitions=(_leader(2),))
    assert Action("DeleteRecords", (0,)) in m.actions(full)
    step = m.step(full, Action("DeleteRecords", (0,)))
    assert step is not None and step.state.partitions[0].log_start_offset == 2
    other = build_model(resolve_scenario("idempotence_retry"))  # [broker] delete_records off
    assert Action("DeleteRecords", (0,)) not in other.actions(other.init_states()[0]._replace(partitions=(_leader(2),)))


def test_the_gate_catches_kafka_7190_with_a_replaying_trace() -> None:
    sc = resolve_scenario(SCENARIO)
    held, _ = explore(build_model(sc), SCENARIO, "kafka", ExploreOptions())
    assert not held.violated
    model = build_model(sc, "no_kafka_7190_fix")
    result, _ = explore(model, SCENARIO, "no_kafka_7190_fix", ExploreOptions(stop_on_first=True))
    found = {p.name: p for p in result.violations()}
    assert set(found) <= set(VARIANTS["no_kafka_7190_fix"].breaks) and found
    name, violation = next(iter(found.items()))
    trace = violation.trace
    assert trace is not None and any(a.kind == "DeleteRecords" for a in trace.actions)
    prop = next(p for p in model.properties() if p.name == name)
    replayed = replay_actions(model, trace.actions, prop)
    assert replayed.confirmed and replayed.violated_at == len(trace.actions)
