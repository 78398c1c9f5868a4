"""The judge of transactional produce answers and of the LSO (model.systems.txn_produce_judge) against the
partition leader's rules (model.log.partition.handle_txn_produce, model.log.txn_markers)."""

from __future__ import annotations

from keos.model.log.partition import PartitionLeader, handle_txn_produce, last_stable_offset
from keos.model.log.txn_markers import append_end_txn_marker
from keos.model.log.txn_markers import marker_rules as _marker_rules
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, WriteTxnMarkersRequest
from keos.model.systems.txn_produce_judge import (
    kafka_lso,
    kafka_txn_produce_answer,
    lso_mismatch,
    unexpected_txn_answer,
)
from keos.model.variants import KAFKA_SEQUENCE_SPACE, ProtocolFlags
from keos.model.variants import ProtocolFlags as _ProtocolFlags

KAFKA_RULES = _marker_rules(_ProtocolFlags())  # Kafka's marker rules (model.log.txn_markers.MarkerRules)

FLAGS = ProtocolFlags()
SPACE = KAFKA_SEQUENCE_SPACE


def req(epoch: int, seq: int, rec: int, pid: int = 7) -> ProduceRequest:
    return ProduceRequest(0, 0, 0, pid, epoch, seq, (rec,), True)


def produce(leader: PartitionLeader, r: ProduceRequest, verification: str = Errors.NONE) -> tuple[PartitionLeader, str]:
    after, response, _ = handle_txn_produce(leader, r, FLAGS, verification)
    verdict = unexpected_txn_answer(leader, after, r, verification, True, response.error, response.base_offset, SPACE)
    assert verdict is None, verdict
    return after, response.error


def test_judge_agrees_with_the_leader_along_a_transaction_and_its_marker() -> None:
    leader, error = produce(PartitionLeader(), req(0, 0, 1))
    assert error == Errors.NONE and last_stable_offset(leader) == kafka_lso(leader) == 0
    leader, error = produce(leader, req(0, 0, 1))  # the retry: a duplicate at offset 0
    assert error == Errors.NONE and len(leader.log) == 1
    leader, error = produce(leader, req(0, 5, 2))
    assert error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
    marker = WriteTxnMarkersRequest(0, 7, 1, 0, True, 0)  # TV2: the marker carries the bumped epoch
    leader, marker_error, _ = append_end_txn_marker(leader, marker, 2, KAFKA_RULES)
    assert marker_error == Errors.NONE and lso_mismatch(0, leader) is None and kafka_lso(leader) == 2
    leader, error = produce(leader, req(0, 1, 3))  # the old epoch after the marker
    assert error == Errors.INVALID_PRODUCER_EPOCH
    leader, error = produce(leader, req(1, 0, 4), Errors.CONCURRENT_TRANSACTIONS)
    assert error == Errors.NOT_ENOUGH_REPLICAS
    leader, error = produce(leader, req(1, 0, 4))  # the new epoch starts at 0 (the marker cleared the batches)
    assert error == Errors.NONE and kafka_lso(leader) == last_stable_offset(leader) == 2


def test_judge_objects_to_an_unverified_opening_batch_and_a_wrong_offset() -> None:
    r = req(0, 0, 1)
    after, _response, _ = handle_txn_produce(PartitionLeader(), r, FLAGS)
    unverified = unexpected_txn_answer(PartitionLeader(), after, r, Errors.NONE, False, Errors.NONE, 0, SPACE)
    assert unverified is not None and "without verification" in unverified
    assert unexpected_txn_answer(PartitionLeader(), after, r, Errors.NONE, False, Errors.NONE, 0, SPACE, False) is None
    wrong = unexpected_txn_answer(PartitionLeader(), after, r, Errors.NONE, True, Errors.NONE, 3, SPACE)
    assert wrong is not None and "offset 3" in wrong
    fenced = unexpected_txn_answer(
        PartitionLeader(), PartitionLeader(), r, Errors.PRODUCER_FENCED, True, Errors.PRODUCER_FENCED, -1, SPACE
    )
    assert fenced is not None and "INVALID_PRODUCER_EPOCH" in fenced
    assert kafka_txn_produce_answer(after, req(0, 1, 2), Errors.NONE, SPACE) == (Errors.NONE, -1, False)


def test_lso_judge_reads_open_transactions_from_the_log() -> None:
    leader, _ = produce(PartitionLeader(), req(0, 0, 1))
    forgotten = leader._replace(producers=tuple(e._replace(current_txn_first_offset=-1) for e in leader.producers))
    problem = lso_mismatch(0, forgotten)
    assert problem is not None and "last stable offset 1" in problem
