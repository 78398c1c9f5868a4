"""The judges of the client's and the leader's bookkeeping, on hand-built states (no search: milliseconds).

* ``epoch_bump_restarts_sequences``: a KIP-360 bump leaves a re-sequenced partition's entry fresh (no last
  acknowledged sequence of the old epoch, no unresolved mark) and the other partitions' entries untouched;
* ``requests_in_flight_per_kafka``: every request the client holds (a batch in flight, or one expired in flight)
  is outstanding on its live connection;
* ``sequence_table_consistent``: the produce purgatory holds answers only for batches above the high watermark;
* ``txn_produce_answer_per_kafka``: a batch verified inline that Kafka would not verify is a wrong answer.
"""

from __future__ import annotations

from keos.invariants.idempotence import _in_flight_problems, _table_problems
from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.clients.producer_config import ProducerConfig
from keos.model.log import partition as part
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest
from keos.model.systems.idempotence import FAULT_KINDS, Ghost, SystemState, unrestarted_sequences
from keos.model.systems.txn_produce_judge import unexpected_txn_answer
from keos.model.variants import ProtocolFlags


def _needs_bump() -> prod.Producer:
    p = prod.init_producer_id(prod.new_producer(2), 7)
    entry = prod.TxnPartitionEntry(producer_epoch=0, next_sequence=4, last_acked_sequence=3, rewrite=True)
    other = prod.TxnPartitionEntry(producer_epoch=0, next_sequence=2, last_acked_sequence=1)
    return p._replace(partitions=(entry, other), epoch_bump_required=True)


def test_bump_judge_accepts_the_model_and_wants_a_fresh_entry() -> None:
    before = _needs_bump()
    after = prod.bump_epoch(before, 5)
    assert after is not None
    assert unrestarted_sequences(before, after, 5) is None
    kept = after._replace(partitions=(after.partitions[0]._replace(last_acked_sequence=3), after.partitions[1]))
    assert "fresh" in (unrestarted_sequences(before, kept, 5) or "")
    touched = after._replace(partitions=(after.partitions[0], prod.TxnPartitionEntry(producer_epoch=1)))
    assert "did not ask" in (unrestarted_sequences(before, touched, 5) or "")


def _state(p: prod.Producer, network: tuple[net.Envelope, ...] = ()) -> SystemState:
    return SystemState((p,), (part.PartitionLeader(),), network, 1, (0,) * len(FAULT_KINDS), Ghost())


def test_a_held_request_must_be_outstanding_on_the_live_connection() -> None:
    p = prod.init_producer_id(prod.new_producer(1), 0)
    p = prod.send(p, 0, prod.record_id(0, 0))
    drained = prod.drain(p, 0, 0, ProducerConfig(), 1 << 31)
    assert drained is not None
    p, request = drained
    on_wire = (net.Envelope("p0", "b0", p.connection, request),)
    assert _in_flight_problems(_state(p, on_wire), 5) == []
    assert _in_flight_problems(_state(p), 5)  # the request is nowhere
    expired = p._replace(batches=(), expired=((request.correlation_id, 0, 0),))
    assert _in_flight_problems(_state(expired, on_wire), 5) == []
    assert _in_flight_problems(_state(expired._replace(connection=1), on_wire), 5)


def test_the_purgatory_holds_answers_above_the_high_watermark_only() -> None:
    request = ProduceRequest(0, 0, 0, 7, 0, 0, (1,), correlation_id=1)
    leader, answer, _ = part.handle_produce(part.PartitionLeader(), request, "all", ProtocolFlags(), deferred=True)
    assert answer is None and len(leader.pending) == 1
    assert _table_problems(leader, 1 << 31) == []
    parked = leader.pending[0]
    assert _table_problems(leader._replace(pending=(parked._replace(base_offset=1),)), 1 << 31)
    assert _table_problems(leader._replace(high_watermark=1), 1 << 31)


def test_an_inline_verification_kafka_would_not_make_is_a_wrong_answer() -> None:
    request = ProduceRequest(0, 0, 0, 7, 0, 0, (1,), True)
    before = part.PartitionLeader()
    after, response, _ = part.handle_txn_produce(before, request, ProtocolFlags())
    args = (before, after, request, Errors.NONE, True, response.error, response.base_offset, 1 << 31)
    assert unexpected_txn_answer(*args, verification_enabled=True, inline=True) is None
    assert "does not verify" in (unexpected_txn_answer(*args, verification_enabled=False, inline=True) or "")
    assert "does not verify" in (unexpected_txn_answer(*args, verification_enabled=False) or "")
