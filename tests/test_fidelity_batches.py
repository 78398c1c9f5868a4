"""Multi-record batches behind ``records_per_batch`` (issue 14): sequence ranges end to end.

``RecordAccumulator.append`` puts records into the partition's open batch; the
batch is stamped with its first sequence when drained and the next batch
starts after its last sequence.  The leader checks ``first == last cached + 1``
and recognises a retry by its cached (first, last) pair
(``ProducerStateEntry.findDuplicateBatch``).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from keos.checker.explore.search import explore
from keos.checker.results import Verdict
from keos.model.clients import producer as prod
from keos.model.clients.producer_config import ProducerConfig
from keos.model.interface import Action
from keos.model.log.producer_state import BatchMetadata, ProducerStateEntry, in_sequence, validate_batch
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse
from keos.model.systems.idempotence import KafkaSystem, SystemState, misstamped_batch
from keos.model.variants import ProtocolFlags
from keos.scenarios import ScenarioError, build_model, parse_scenario, resolve_scenario


def test_send_fills_the_open_batch_then_opens_a_new_one() -> None:
    p = prod.init_producer_id(prod.new_producer(1), 0)
    for n in range(3):
        p = prod.send(p, 0, n, batch_records=2)
    assert [b.records for b in p.batches] == [(0, 1), (2,)]
    one = prod.init_producer_id(prod.new_producer(1), 0)
    for n in range(2):
        one = prod.send(one, 0, n)
    assert [b.records for b in one.batches] == [(0,), (1,)]


def _take(m: KafkaSystem, s: SystemState, kind: str, body: type | None = None) -> tuple[SystemState, tuple[str, ...]]:
    action = next(a for a in m.actions(s) if a.kind == kind and (body is None or isinstance(a.args[0].body, body)))
    step = m.step(s, action)
    assert step is not None
    return step.state, step.events


def test_a_retried_two_record_batch_is_recognised_by_its_range() -> None:
    m = build_model(resolve_scenario("idempotence_batches"))
    assert isinstance(m, KafkaSystem)
    s = m.init_states()[0]
    s, _ = _take(m, s, "InitProducerId")
    for _ in range(3):
        s, _ = _take(m, s, "Send")
    s, _ = _take(m, s, "SendProduce")
    request = next(e for e in s.network if isinstance(e.body, ProduceRequest))
    assert (request.body.base_sequence, request.body.records) == (0, (0, 1))
    step = m.step(s, Action("DuplicateMessage", (request,)))
    assert step is not None
    s = step.state
    s, events = _take(m, s, "Deliver", ProduceRequest)
    assert events == ("append",)
    assert s.partitions[0].entry(0).batches == (BatchMetadata(0, 1, 0),)  # type: ignore[union-attr]
    s, events = _take(m, s, "Deliver", ProduceRequest)
    assert events == ("dedup",)  # the same (first, last) pair: answered with the original offset
    s, _ = _take(m, s, "Deliver", ProduceResponse)
    assert s.producers[0].partitions[0].last_acked_sequence == 1
    s, _ = _take(m, s, "SendProduce")
    second = next(e for e in s.network if isinstance(e.body, ProduceRequest) and e.body.records == (2,))
    assert second.body.base_sequence == 2  # after the last sequence of the two-record batch
    assert [r for e in s.partitions[0].log for r in e.records] == [0, 1]


def test_batches_scenario_holds_exhaustively_and_default_scenarios_keep_one_record() -> None:
    sc = resolve_scenario("idempotence_batches")
    assert sc.config.topology.records_per_batch == 2
    result, _ = explore(build_model(sc), sc.name, "kafka")
    assert result.complete and not result.violated
    assert all(p.verdict in (Verdict.HOLDS, Verdict.REACHED) for p in result.properties)
    # with the KAFKA-15591 first-sequence rule; 14728 since h16-client: markSequenceUnresolved only for a batch in
    # retry, and an expired batch's request still counted against max.in.flight; 15560 since h17-client: the answer
    # to a batch expired in flight still raises the last acknowledged sequence
    # 15504 since h18-logclient: a batch expired in flight is forgotten whenever its connection closes
    assert result.stats["distinct_states"] == 15504
    assert resolve_scenario("idempotence_retry").config.topology.records_per_batch == 1


def test_records_per_batch_must_be_positive() -> None:
    with pytest.raises(ScenarioError, match="records_per_batch must be >= 1"):
        parse_scenario({"name": "t", "topology": {"records_per_batch": 0}})


def test_in_sequence_reads_the_stored_last_sequence_as_kafka_does() -> None:
    """``ProducerAppendInfo.inSequence``: the stored last sequence is compared as it is (KAFKA-7692)."""
    assert in_sequence(-1, 0, 5) and in_sequence(3, 4, 5) and in_sequence(4, 0, 5)
    assert not in_sequence(5, 1, 5)  # a straddling batch stored unwrapped (4 + 2 - 1) expects no real sequence
    entry = ProducerStateEntry(7, 0, (BatchMetadata(2, 3, 1), BatchMetadata(4, 0, 2)))
    flags = replace(ProtocolFlags(), sequence_space=5)
    assert validate_batch(entry, 0, 1, 1, flags, 3) == (Errors.NONE, -1)  # the batch after (4, 0) starts at 1
    assert validate_batch(entry, 0, 4, 0, flags, 3) == (Errors.NONE, 2)  # a retry of (4, 0): its offset
    assert validate_batch(entry, 0, 0, 0, flags, 3)[0] == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_a_partition_restarted_under_a_new_epoch_forgets_its_acknowledged_sequence() -> None:
    """``TxnPartitionEntry.startSequencesAtBeginning``: the drain that moves a partition to the new epoch leaves it
    fresh; keeping the old epoch's ``lastAckedSequence`` is a finding of ``batch_stamped_per_kafka``."""
    old = prod.TxnPartitionEntry(producer_epoch=0, next_sequence=3, last_acked_sequence=2)
    before = prod.init_producer_id(prod.new_producer(1), 0)._replace(producer_epoch=1, partitions=(old,))
    before = prod.send(before, 0, 5)
    drained = prod.drain(before, 0, 0, ProducerConfig(enable_idempotence=True), 2**31)
    assert drained is not None
    after, request = drained
    assert (request.producer_epoch, request.base_sequence) == (1, 0)
    assert misstamped_batch(before, request, after, 2**31) is None
    kept = after._replace(partitions=(after.partitions[0]._replace(last_acked_sequence=2),))
    assert misstamped_batch(before, request, kept, 2**31) is not None
