"""A read_uncommitted consumer in the idempotence system, and what it may read (KAFKA-9196).

``UnifiedLog.read`` bounds a read_uncommitted Fetch (``FetchIsolation.HIGH_WATERMARK``) by the high watermark; every
later leader keeps the log below it, so a record a consumer read is never lost.  The weakened variant
``no_kafka_9196_fix`` bounds the read by the log end offset, as a read bounded by stale high-watermark offset
metadata did after a segment roll before the fix (7eafea0, Kafka 2.4).
"""

from __future__ import annotations

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.checker.trace import replay_actions
from keos.invariants.idempotence import _consumed_not_durable
from keos.model.clients.consumer import PartitionConsumer
from keos.model.interface import Action
from keos.model.log import fetch as fetch_path
from keos.model.log.partition import LogEntry, PartitionLeader
from keos.model.variants import VARIANTS, ProtocolFlags
from keos.scenarios import build_model, resolve_scenario

SCENARIO = "idempotence_consumer_failover"
ACKS1 = "reach_idempotence_consumer_acks1"


def _leader(high_watermark: int) -> PartitionLeader:
    log = (LogEntry(7, 0, 0, (1,)), LogEntry(7, 0, 1, (2,)), LogEntry(7, 0, 2, (3,)))
    return PartitionLeader(log=log, high_watermark=high_watermark)


def _read(leader: PartitionLeader, offset: int, flags: ProtocolFlags) -> tuple[int, int]:
    params = fetch_path.FetchParams(fetch_path.READ_UNCOMMITTED, offset)
    result = fetch_path.read_from_log(leader, params, flags)
    return result.fetch_offset, result.upper_bound


def test_a_read_uncommitted_read_stops_at_the_high_watermark_and_before_kafka_9196_at_the_log_end() -> None:
    real, weak = ProtocolFlags(), VARIANTS["no_kafka_9196_fix"].flags
    assert _read(_leader(1), 0, real) == (0, 1)
    assert not fetch_path.try_complete(_leader(1), fetch_path.FetchParams(fetch_path.READ_UNCOMMITTED, 1), real)
    assert _read(_leader(1), 0, weak) == (0, 3)  # the unreplicated tail is exposed
    assert fetch_path.try_complete(_leader(1), fetch_path.FetchParams(fetch_path.READ_UNCOMMITTED, 1), weak)
    # read_committed is bounded by the LSO either way
    committed = fetch_path.FetchParams(fetch_path.READ_COMMITTED, 0)
    assert fetch_path.read_from_log(_leader(1), committed, weak).upper_bound == 1


def test_the_judge_objects_to_a_record_read_past_the_high_watermark_or_lost_or_skipped() -> None:
    m = build_model(resolve_scenario(SCENARIO))
    s = m.init_states()[0]
    assert s.consumers == (PartitionConsumer(),)
    ok = s._replace(partitions=(_leader(2),), consumers=(PartitionConsumer(2, (1, 2)),))
    assert _consumed_not_durable(ok) == []
    past = s._replace(partitions=(_leader(2),), consumers=(PartitionConsumer(3, (1, 2, 3)),))
    assert _consumed_not_durable(past) == ["partition 0: the consumer's position 3 is past the high watermark 2"]
    cut = PartitionLeader(log=_leader(2).log[:1], high_watermark=1)  # a failover cut a record the consumer read
    lost = s._replace(partitions=(cut,), consumers=(PartitionConsumer(2, (1, 2)),))
    assert len(_consumed_not_durable(lost)) == 2
    skipped = s._replace(partitions=(_leader(2),), consumers=(PartitionConsumer(2, (2,)),))
    assert len(_consumed_not_durable(skipped)) == 1


def test_fetch_is_a_protocol_step_offered_only_by_the_scenario_switch() -> None:
    m = build_model(resolve_scenario(SCENARIO))
    assert m.fault_kind(Action("Fetch", (0,))) is None
    s = m.init_states()[0]
    assert not any(a.kind == "Fetch" for a in m.actions(s))  # empty log: nothing to read
    held = s._replace(partitions=(_leader(1),))
    assert Action("Fetch", (0,)) in m.actions(held)
    step = m.step(held, Action("Fetch", (0,)))
    assert step is not None
    assert step.state.consumers == (PartitionConsumer(1, (1,)),)
    assert step.events == ("consumer_fetched", "consumer_fetched_beside_unreplicated_tail")
    assert Action("Fetch", (0,)) not in m.actions(step.state)  # nothing more below the high watermark
    other = build_model(resolve_scenario("idempotence_retry"))  # [broker] read_uncommitted_consumer off
    plain = other.init_states()[0]
    assert plain.consumers == ()
    assert Action("Fetch", (0,)) not in other.actions(plain._replace(partitions=(_leader(1),)))
    assert other.step(plain._replace(partitions=(_leader(1),)), Action("Fetch", (0,))) is None


def test_the_gate_catches_kafka_9196_with_a_replaying_trace() -> None:
    for name in (SCENARIO, ACKS1):
        sc = resolve_scenario(name)
        held, _ = explore(build_model(sc), name, "kafka", ExploreOptions())
        verdicts = {p.name: p.verdict for p in held.properties}
        assert verdicts["consumed_records_durable"] is Verdict.HOLDS, name
        assert verdicts["consumer_fetched_beside_unreplicated_tail"] is Verdict.REACHED, name
        violated = {p.name for p in held.properties if p.verdict is Verdict.VIOLATED}
        assert violated <= set(sc.permitted), name  # acks=1: loss, duplicates and order are permitted
        model = build_model(sc, "no_kafka_9196_fix")
        result, _ = explore(model, name, "no_kafka_9196_fix", ExploreOptions(stop_on_first=True))
        found = {p.name: p for p in result.violations()}
        assert set(found) == {"consumed_records_durable"}, name
        trace = found["consumed_records_durable"].trace
        assert trace is not None and any(a.kind == "Fetch" for a in trace.actions)
        prop = next(p for p in model.properties() if p.name == "consumed_records_durable")
        replayed = replay_actions(model, trace.actions, prop)
        assert replayed.confirmed and replayed.violated_at == len(trace.actions)
