"""A partition's leadership moves while the old leader keeps running (``ReplicaManager.makeFollowers``): the produce
purgatory's answers go out NOT_LEADER_OR_FOLLOWER (KAFKA-2960), connections stay open; and a closed connection with
nothing in flight forgets the requests of expired batches (``Producer.expired``)."""

from __future__ import annotations

from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.clients.producer_config import ProducerConfig
from keos.model.interface import Action
from keos.model.log import partition as part
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse
from keos.model.variants import ProtocolFlags, get_variant
from keos.scenarios import build_model, builtin_scenarios

REAL = ProtocolFlags()


def request(seq: int, record: int, connection: int = 0) -> ProduceRequest:
    return ProduceRequest(0, connection, 0, 7, 0, seq, (record,))


def parked_leader() -> part.PartitionLeader:
    """Batch 0 replicated, batch 1 appended and its acks=all answer parked in the purgatory."""
    leader, _, _ = part.handle_produce(part.PartitionLeader(), request(0, 0), "all", REAL, True)
    replicated = part.replicate(leader)
    assert replicated is not None
    leader, response, _ = part.handle_produce(replicated[0], request(1, 1), "all", REAL, True)
    assert response is None and len(leader.pending) == 1
    return leader


class TestMoveLeader:
    def test_parked_answers_go_out_not_leader_and_the_tail_is_cut(self) -> None:
        moved, answers = part.move_leader(parked_leader(), REAL)
        assert [(a.error, a.base_offset) for a in answers] == [(Errors.NOT_LEADER_OR_FOLLOWER, -1)]
        assert len(moved.log) == 1 and moved.high_watermark == 1 and not moved.pending and moved.leader_epoch == 1
        entry = moved.entry(7)
        assert entry is not None and entry.last_seq == 0  # the retry of sequence 1 is appended again

    def test_a_caught_up_follower_keeps_the_tail_and_recognises_the_retry(self) -> None:
        moved, answers = part.move_leader(parked_leader(), REAL, caught_up=True)
        assert len(answers) == 1 and len(moved.log) == 2 and moved.high_watermark == 1
        again, response, events = part.handle_produce(moved, request(1, 1, connection=1), "all", REAL, True)
        assert response is None and "dedup" in events  # parked until the tail is replicated
        replicated = part.replicate(again)
        assert replicated is not None
        assert [(r.error, r.base_offset) for r in replicated[1]] == [(Errors.NONE, 1)]

    def test_the_kafka_2960_variant_keeps_the_parked_answer(self) -> None:
        flags = get_variant("purgatory_survives_leader_move").flags
        moved, answers = part.move_leader(parked_leader(), flags)
        assert answers == () and len(moved.pending) == 1 and len(moved.log) == 1


class TestSystemMove:
    def test_move_keeps_connections_and_answers_the_purgatory(self) -> None:
        model = build_model(builtin_scenarios()["reach_idempotence_leader_move"])
        s = model.init_states()[0]
        for kind, args in (("InitProducerId", (0,)), ("Send", (0,)), ("SendProduce", (0, 0))):
            step = model.step(s, Action(kind, args))
            assert step is not None
            s = step.state
        step = model.step(s, next(a for a in model.actions(s) if a.kind == "Deliver"))
        assert step is not None and s.producers[0].in_flight == 1
        s = step.state
        assert {a.args for a in model.actions(s) if a.kind == "MoveLeader"} == {(0, 0), (0, 1)}
        step = model.step(s, Action("MoveLeader", (0, 0)))
        assert step is not None and "purgatory_answered_not_leader" in step.events
        s = step.state
        (env,) = s.network
        assert isinstance(env.body, ProduceResponse) and env.body.error == Errors.NOT_LEADER_OR_FOLLOWER
        assert env.connection == s.producers[0].connection  # the client's connection is still open
        step = model.step(s, Action("Deliver", (env,)))
        assert step is not None and "retry" in step.events


class TestExpiredForgottenOnDisconnect:
    def test_disconnect_drops_the_expired_requests(self) -> None:
        p = prod.new_producer(1)._replace(producer_id=7, producer_epoch=0, expired=((5, 0, 0),))
        closed = prod.disconnect(p)
        assert closed.expired == () and closed.connection == 1

    def test_a_reset_with_nothing_in_flight_forgets_them(self) -> None:
        model = build_model(builtin_scenarios()["idempotence_retry"])
        s = model.init_states()[0]
        p = s.producers[0]._replace(producer_id=0, producer_epoch=0, expired=((5, 0, 0),))
        orphan = ProduceRequest(0, p.connection, 0, 0, 0, 0, (0,), correlation_id=5)
        s = s._replace(producers=(p, *s.producers[1:]), network=(net.Envelope("p0", "b0", p.connection, orphan),))
        cfg = ProducerConfig()
        assert prod.request_timeout(p, cfg) is None  # nothing of the producer in flight
        step = model.step(s, Action("DropMessage", (s.network[0],)))
        assert step is not None and step.state.producers[0].expired == ()


class TestFaultFreeRefusal:
    """``sole_producer_not_fenced`` also judges the data path: no sequence or epoch refusal without a fault."""

    def test_a_refusal_in_a_fault_free_run_is_recorded(self) -> None:
        from keos.model.systems.transactions import _fault_free_refusal

        model = build_model(builtin_scenarios()["txn_kafka_17754_delayed_endtxn"])
        s = model.init_states()[0]
        req = ProduceRequest(0, 0, 0, 0, 1, 3, (0,))
        label = _fault_free_refusal(s, "p0", req, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)
        assert label is not None and label.startswith("fault_free_refusal:")
        assert _fault_free_refusal(s, "p0", req, Errors.NOT_LEADER_OR_FOLLOWER) is None
        faulty = s._replace(faults_used=(1, *s.faults_used[1:]))
        assert _fault_free_refusal(faulty, "p0", req, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER) is None


class TestTv2NoClientBump:
    """KAFKA-17898 (Kafka 4.0): under TV2 only the coordinator bumps the epoch; the client's abortable errors do not
    set ``epochBumpRequired``, and the abort's EndTxn answer restarts the sequences at the new epoch."""

    def test_a_failed_batch_makes_the_transaction_abortable_without_a_client_bump(self) -> None:
        from keos.model.clients import transactional_producer as tp

        c = tp.new_client(0, 1)._replace(state=tp.C.IN_TRANSACTION)
        for tv, owed in ((1, True), (2, False)):
            out = tp.classify_batch_failure(c, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, tv, kip_360=True)
            assert out.state == tp.C.ABORTABLE_ERROR and out.epoch_bump_required is owed

    def test_the_tv2_abort_answer_restarts_the_sequences(self) -> None:
        from keos.model.clients import transactional_producer as tp
        from keos.model.protocol.messages import EndTxnResponse

        c = tp.new_client(0, 1)
        data = c.data._replace(producer_id=5, producer_epoch=3,
                               partitions=(prod.TxnPartitionEntry(producer_epoch=3, next_sequence=4,
                                                                  last_acked_sequence=3),))
        c = c._replace(state=tp.C.ABORTING, data=data, added=(0,), inflight=True)
        resp = EndTxnResponse(0, c.tc_connection, Errors.NONE, 5, 4)
        out, outcome, _ = tp.handle_txn_response(c, resp, 2, True)
        assert outcome == "aborted" and out.state == tp.C.READY
        assert (out.data.producer_id, out.data.producer_epoch) == (5, 4)
        assert out.data.partitions[0] == prod.TxnPartitionEntry()  # sequences restart at 0 at the new epoch


class TestLateAckJudge:
    """``late_ack_misread``: a late NONE raises a tracked partition's last acknowledged sequence, read from the log."""

    def test_the_judge_reads_the_batch_from_the_log(self) -> None:
        from keos.model.systems.txn_produce_judge import late_ack_misread

        batch = prod.ProducerBatch(0, (3, 4), producer_epoch=0, base_sequence=2, in_flight=True, attempts=1)
        cid = prod.correlation_id(batch)
        log = (part.LogEntry(5, 0, 0, (1, 2)), part.LogEntry(5, 0, 2, (3, 4)))
        before = prod.new_producer(1)._replace(producer_id=5, producer_epoch=1,
                                               partitions=(prod.TxnPartitionEntry(producer_epoch=1),))
        resp = ProduceResponse(0, 0, 0, 0, 2, Errors.NONE, 1, cid)
        raised = before._replace(partitions=(prod.TxnPartitionEntry(producer_epoch=1, last_acked_sequence=3),))
        assert late_ack_misread(before, raised, resp, log) is None
        label = late_ack_misread(before, before, resp, log)
        assert label is not None and "Kafka's is 3" in label
        untracked = before._replace(partitions=(prod.TxnPartitionEntry(),))
        assert late_ack_misread(untracked, untracked, resp, log) is None
