"""Issue 23 (idempotence half): separate replication, producer-id expiry on the leader, OUT_OF_ORDER retries
with a KIP-360 bump, and the client-outcome properties that judge faulty runs -- by behaviour."""

from __future__ import annotations

from keos.invariants.idempotence import acknowledged_offset_in_log, healthy_producer_not_failed
from keos.model.clients import producer as prod
from keos.model.clients.producer_config import ProducerConfig
from keos.model.log import partition as part
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse
from keos.model.systems.idempotence import (
    Ghost,
    misplaced_ack,
    unexplained_failures,
    unrequested_bump,
    unrestarted_sequences,
)
from keos.model.variants import ProtocolFlags
from keos.scenarios import build_model, builtin_scenarios

REAL = ProtocolFlags()


def request(seq: int, record: int, connection: int = 0) -> ProduceRequest:
    return ProduceRequest(0, connection, 0, 7, 0, seq, (record,))


class TestSeparateReplication:
    """acks=all answered from the produce purgatory (``DelayedProduce``) once the high watermark passes the batch."""

    def test_append_parks_the_response_until_replication(self) -> None:
        leader, response, events = part.handle_produce(part.PartitionLeader(), request(0, 0), "all", REAL, True)
        assert response is None and "awaiting_replication" in events
        assert leader.high_watermark == 0 and len(leader.log) == 1 and len(leader.pending) == 1
        replicated = part.replicate(leader)
        assert replicated is not None
        leader, released = replicated
        assert leader.high_watermark == 1 and not leader.pending
        assert [r.error for r in released] == [Errors.NONE] and released[0].base_offset == 0

    def test_a_duplicate_of_a_replicated_batch_is_answered_at_once(self) -> None:
        leader, _, _ = part.handle_produce(part.PartitionLeader(), request(0, 0), "all", REAL, True)
        again, response, _ = part.handle_produce(leader, request(0, 0, connection=1), "all", REAL, True)
        assert response is None and len(again.pending) == 2  # the original is not replicated yet: it waits
        replicated = part.replicate(leader)
        assert replicated is not None
        leader = replicated[0]
        leader, response, events = part.handle_produce(leader, request(0, 0, connection=1), "all", REAL, True)
        assert events == ("dedup",) and response is not None and response.base_offset == 0

    def test_errors_are_answered_at_once(self) -> None:
        leader, _, _ = part.handle_produce(part.PartitionLeader(), request(0, 0), "all", REAL, True)
        _, response, _ = part.handle_produce(leader, request(5, 1), "all", REAL, True)
        assert response is not None and response.error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER

    def test_failover_cuts_the_unreplicated_tail_and_rebuilds_the_producer_state(self) -> None:
        leader, _, _ = part.handle_produce(part.PartitionLeader(), request(0, 0), "all", REAL, True)
        replicated = part.replicate(leader)
        assert replicated is not None
        leader, _, _ = part.handle_produce(replicated[0], request(1, 1), "all", REAL, True)
        new = part.restart_leader(leader, REAL)
        assert len(new.log) == 1 and not new.pending and new.leader_epoch == 1
        entry = new.entry(7)
        assert entry is not None and entry.last_seq == 0  # the retry of sequence 1 is appended, not a duplicate


class TestProducerIdExpiry:
    def test_expired_producer_continues_at_its_sequence(self) -> None:
        sc = builtin_scenarios()["reach_idempotence_expiry"]
        model = build_model(sc)
        s = model.init_states()[0]
        for kind, args in (("InitProducerId", (0,)), ("Send", (0,)), ("SendProduce", (0, 0))):
            step = model.step(s, type(model.actions(s)[0])(kind, args))
            assert step is not None
            s = step.state
        kinds = {a.kind for a in model.actions(s)}
        assert "ExpireProducerState" not in kinds  # the request is on the wire: nothing expires yet
        while s.network:  # deliver the request and its response
            step = model.step(s, next(a for a in model.actions(s) if a.kind == "Deliver"))
            assert step is not None
            s = step.state
        expire = next(a for a in model.actions(s) if a.kind == "ExpireProducerState")
        step = model.step(s, expire)
        assert step is not None and "producer_state_expired" in step.events
        assert step.state.partitions[0].entry(0) is None


class TestOutOfOrderRetry:
    """``TransactionManager.canRetry``: an idempotent producer retries OUT_OF_ORDER_SEQUENCE_NUMBER."""

    CONFIG = ProducerConfig(retries=2, max_in_flight=2)

    def producer_with_sent(self, *seqs: int) -> prod.Producer:
        p = prod.init_producer_id(prod.new_producer(1), 7)
        for n, _ in enumerate(seqs):
            p = prod.send(p, 0, n)
            drained = prod.drain(p, 0, 0, self.CONFIG, 2**31)
            assert drained is not None
            p = drained[0]
        return p

    def response(self, seq: int, error: str, attempts: int = 1) -> ProduceResponse:
        # the request of record ``seq``'s attempt (producer_with_sent stamps record n with sequence n)
        cid = prod.correlation_id(prod.ProducerBatch(0, (seq,), attempts=attempts))
        return ProduceResponse(0, 0, 0, 0, seq, error, -1, cid)

    def test_the_next_sequence_is_retried_with_an_epoch_bump(self) -> None:
        p = self.producer_with_sent(0, 1)
        out = prod.handle_produce_response(p, self.response(0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), self.CONFIG, 2**31)
        assert not out.failed and "epoch_bump_requested" in out.events
        assert out.producer.epoch_bump_required and out.producer.partitions[0].rewrite

    def test_a_later_sequence_is_retried_without_a_bump(self) -> None:
        p = self.producer_with_sent(0, 1)
        out = prod.handle_produce_response(p, self.response(1, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), self.CONFIG, 2**31)
        assert not out.failed and "retry" in out.events and not out.producer.epoch_bump_required

    def test_spent_retries_fail_the_batch_and_request_the_bump(self) -> None:
        config = ProducerConfig(retries=1, max_in_flight=2)
        p = self.producer_with_sent(0)
        p = p._replace(batches=(p.batches[0]._replace(attempts=2),))
        out = prod.handle_produce_response(p, self.response(0, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, 2), config, 2**31)
        assert out.failed == (0,) and out.producer.epoch_bump_required

    def test_the_judge_wants_the_bump_for_a_retried_next_sequence(self) -> None:
        """``out_of_order_failure_requests_bump`` (:func:`unrequested_bump`): the bump is owed for a retried batch
        that is the next sequence (``canRetry``), not for a later one; a client that resends it unchanged is caught."""
        p = self.producer_with_sent(0, 1)
        oos = Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
        for seq in (0, 1):
            out = prod.handle_produce_response(p, self.response(seq, oos), self.CONFIG, 2**31)
            assert unrequested_bump(p, out, self.response(seq, oos), defer=False) is None
        unchanged = prod.handle_produce_response(p, self.response(0, oos), self.CONFIG, 2**31, bump_next=False)
        assert "retry" in unchanged.events and not unchanged.producer.epoch_bump_required
        assert unrequested_bump(p, unchanged, self.response(0, oos), defer=False) is not None
        stale = self.response(0, oos)._replace(connection=1)  # another connection's answer is not the client's
        assert unrequested_bump(p, unchanged, stale, defer=False) is None

    def test_the_judge_wants_the_id_reset_exactly_at_the_last_epoch(self) -> None:
        """``epoch_bump_restarts_sequences`` (:func:`unrestarted_sequences`): the choice of
        ``bumpIdempotentEpochAndResetIdIfNeeded``."""
        p = self.producer_with_sent(0)._replace(epoch_bump_required=True)
        p = p._replace(batches=(p.batches[0]._replace(in_flight=False),))
        for max_epoch in (0, 1):
            bumped = prod.bump_epoch(p, max_epoch)
            assert bumped is not None and unrestarted_sequences(p, bumped, max_epoch) is None
            assert (bumped.producer_id < 0) == (max_epoch == 0)
        kept = p._replace(producer_epoch=1)  # the id kept although epoch 0 was the last one
        assert unrestarted_sequences(p, kept, 0) is not None

    def test_last_acked_sequence_compares_plainly_past_the_wrap(self) -> None:
        p = self.producer_with_sent(0)
        p = p._replace(partitions=(p.partitions[0]._replace(last_acked_sequence=5),))
        out = prod.handle_produce_response(p, self.response(0, Errors.NONE), self.CONFIG, 6)
        assert out.acked == (0,) and out.producer.partitions[0].last_acked_sequence == 5


class TestClientOutcomeProperties:
    def test_a_failure_with_retries_left_is_unexplained(self) -> None:
        p = TestOutOfOrderRetry().producer_with_sent(0)
        assert unexplained_failures(p, (0,), retries=1) != ()
        # no answer of the idempotence system is an error the producer does not retry: no ACLs (authorization
        # failures), no client control batches (INVALID_RECORD), and no other instance holds an idempotent
        # producer's id (a fence can only be its own client's defect)
        for error in (Errors.INVALID_RECORD, Errors.TOPIC_AUTHORIZATION_FAILED, Errors.INVALID_PRODUCER_EPOCH):
            assert unexplained_failures(p, (0,), retries=1, error=error) != ()
        spent = p._replace(batches=(p.batches[0]._replace(attempts=2),))
        assert unexplained_failures(spent, (0,), retries=1) == ()

    def test_healthy_run_judges_only_fault_free_states(self) -> None:
        model = build_model(builtin_scenarios()["idempotence_retry"])
        s = model.init_states()[0]
        failed = s._replace(ghost=Ghost(failed=(0,)))
        assert not healthy_producer_not_failed(failed)
        assert healthy_producer_not_failed(failed._replace(faults_used=(1,) + s.faults_used[1:]))

    def test_an_acknowledged_offset_must_hold_the_batch(self) -> None:
        leader, _, _ = part.handle_produce(part.PartitionLeader(), request(0, 0), "all", REAL)
        good = ProduceResponse(0, 0, 0, 0, 0, Errors.NONE, 0)
        assert misplaced_ack(leader, good, request(0, 0)) is None
        assert misplaced_ack(leader, good._replace(base_offset=1), request(0, 0)) is not None
        assert misplaced_ack(leader, good, request(1, 1)) is not None  # another batch's offset
        assert misplaced_ack(leader, good._replace(error=Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), request(1, 1)) is None
        model = build_model(builtin_scenarios()["idempotence_retry"])
        s = model.init_states()[0]
        assert acknowledged_offset_in_log(s)
        assert not acknowledged_offset_in_log(s._replace(ghost=Ghost(misplaced_acks=("p0.r0 at offset 1",))))

    def test_an_error_or_a_bump_without_a_fault_is_unhealthy(self) -> None:
        model = build_model(builtin_scenarios()["idempotence_retry"])
        s = model.init_states()[0]
        assert not healthy_producer_not_failed(s._replace(ghost=Ghost(unhealthy=("producer 0 bumped its epoch",))))
