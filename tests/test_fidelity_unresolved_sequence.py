"""The producer's unresolved sequences (``TransactionManager.canRetry``, KAFKA-8710) and failed-batch reactions.

Kafka trunk @1eb7644349cb: a partition whose sent batch failed without an answer has an unresolved sequence,
``partitionsWithUnresolvedSequences`` keeping the sequence after that batch.  An OUT_OF_ORDER_SEQUENCE_NUMBER on
such a partition is judged by it: an idempotent producer requests the KIP-360 bump for the batch right after the
failed one (``isNextSequenceForUnresolvedPartition``) and retries a batch further on unchanged; a transactional
producer gives the batch up.  A failed batch makes a transactional producer abortable unless its exception is
one ``maybeTransitionToErrorState`` lists as fatal.
"""

from __future__ import annotations

from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.clients.producer_config import ProducerConfig
from keos.model.clients.txn_reactions import unexpected_batch_failure_reaction
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceResponse
from keos.model.systems.txn_produce_judge import kafka_retries, needless_batch_retries
from keos.model.variants import KAFKA_SEQUENCE_SPACE

CONFIG = ProducerConfig(retries=3, max_in_flight=5)
OOO = Errors.OUT_OF_ORDER_SEQUENCE_NUMBER


def _pipelined(records: int) -> prod.Producer:
    """A producer with ``records`` batches of partition 0 sent once, in flight at epoch 0."""
    p = prod.init_producer_id(prod.new_producer(1), 7)
    for n in range(records):
        p = prod.send(p, 0, n)
    for _ in range(records):
        drained = prod.drain(p, 0, 0, CONFIG, KAFKA_SEQUENCE_SPACE)
        assert drained is not None
        p = drained[0]
    return p


def _expire_first_after_timeout(records: int) -> prod.Producer:
    """Every request times out (the batches wait for a retry), then the first batch expires: unresolved."""
    out = prod.request_timeout(_pipelined(records), CONFIG)
    assert out is not None
    expired = prod.expire_batch(out.producer, 0, CONFIG)
    assert expired is not None and expired.failed == (0,)
    return expired.producer


def _resend_and_refuse(p: prod.Producer, seq: int, transactional: bool = False, **kw: bool) -> prod.Outcome:
    drained = prod.drain(p, 0, 0, CONFIG, KAFKA_SEQUENCE_SPACE)
    assert drained is not None and drained[1].base_sequence == seq
    p = drained[0]
    resp = ProduceResponse(0, p.connection, 0, 0, seq, OOO, -1, drained[1].correlation_id)
    return prod.handle_produce_response(p, resp, CONFIG, KAFKA_SEQUENCE_SPACE, transactional=transactional, **kw)


def test_expiry_marks_the_sequence_after_the_failed_batch() -> None:
    entry = _expire_first_after_timeout(2).partitions[0]
    assert entry.unresolved and entry.unresolved_sequence == 1 and entry.last_acked_sequence == -1


def test_batch_right_after_the_expired_one_bumps_the_epoch() -> None:
    out = _resend_and_refuse(_expire_first_after_timeout(2), 1)
    assert out.producer.epoch_bump_required and out.producer.partitions[0].rewrite
    assert not out.failed and "epoch_bump_requested" in out.events


def test_without_the_unresolved_rule_the_batch_is_retried_unchanged() -> None:
    out = _resend_and_refuse(_expire_first_after_timeout(2), 1, by_unresolved=False)
    assert not out.producer.epoch_bump_required and not out.failed and "retry" in out.events


def test_a_batch_further_on_waits_for_the_sequence_to_resolve() -> None:
    p = _expire_first_after_timeout(3)
    assert [b.base_sequence for b in p.batches] == [1, 2]
    # the attempt of seq 2 on the old connection is answered on it before the reset; here its retry is in flight
    p = p._replace(batches=(p.batches[0], p.batches[1]._replace(in_flight=True, attempts=2)))
    resp = ProduceResponse(0, p.connection, 0, 0, 2, OOO, -1, prod.correlation_id(p.batches[1]))
    out = prod.handle_produce_response(p, resp, CONFIG, KAFKA_SEQUENCE_SPACE)
    assert not out.producer.epoch_bump_required and not out.failed
    assert "awaiting_resolution" in out.events


def test_transactional_producer_gives_the_batch_up() -> None:
    out = _resend_and_refuse(_expire_first_after_timeout(2), 1, transactional=True)
    assert out.failed == (1,)


def test_bump_clears_the_unresolved_sequence() -> None:
    out = _resend_and_refuse(_expire_first_after_timeout(2), 1)
    bumped = prod.bump_epoch(out.producer, 32767)
    assert bumped is not None
    entry = bumped.partitions[0]
    assert (entry.unresolved, entry.unresolved_sequence, entry.producer_epoch) == (False, -1, 1)


def test_resolution_clears_the_unresolved_sequence() -> None:
    p = _expire_first_after_timeout(1)
    out = prod.resolve_sequence(p, 0)
    assert out is not None and out.producer.partitions[0].unresolved_sequence == -1


def test_invalid_txn_state_on_a_batch_is_abortable() -> None:
    c = tp.new_client(0, 1)._replace(state=tp.C.IN_TRANSACTION)
    after = tp.classify_batch_failure(c, Errors.INVALID_TXN_STATE, 1, True)
    assert after.state == tp.C.ABORTABLE_ERROR
    fatal = tp.classify_batch_failure(c, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 1, True)
    assert fatal.state == tp.C.FATAL_ERROR and not fatal.fenced


def test_failed_batch_reaction_judge() -> None:
    ab, fatal, aborting = "ABORTABLE_ERROR", "FATAL_ERROR", "ABORTING_TRANSACTION"
    assert unexpected_batch_failure_reaction(Errors.INVALID_TXN_STATE, "IN_TRANSACTION", ab, False, True, 0) is None
    assert unexpected_batch_failure_reaction(Errors.INVALID_TXN_STATE, "IN_TRANSACTION", fatal, False, True, 0)
    assert unexpected_batch_failure_reaction("TIMEOUT", aborting, aborting, False, True, 0) is None
    assert unexpected_batch_failure_reaction("TIMEOUT", aborting, ab, False, True, 0)
    assert unexpected_batch_failure_reaction(OOO, "IN_TRANSACTION", fatal, False, False, 0) is None
    assert unexpected_batch_failure_reaction(OOO, "IN_TRANSACTION", fatal, False, True, 0)
    assert unexpected_batch_failure_reaction(Errors.CLUSTER_AUTHORIZATION_FAILED, "IN_TRANSACTION", ab, False, True, 0)


def test_kafka_retries_reference() -> None:
    assert kafka_retries(Errors.NOT_ENOUGH_REPLICAS, 1, 1, False, False)
    assert not kafka_retries(Errors.NOT_ENOUGH_REPLICAS, 2, 1, False, False)
    assert not kafka_retries(Errors.INVALID_PRODUCER_EPOCH, 1, 3, False, False)
    assert kafka_retries(OOO, 1, 3, False, False)
    assert not kafka_retries(OOO, 1, 3, False, True)
    assert not kafka_retries(OOO, 1, 3, True, False)


def test_needless_retry_is_flagged() -> None:
    p = _pipelined(1)
    cid = prod.correlation_id(p.batches[0])
    resp = ProduceResponse(0, p.connection, 0, 0, 0, Errors.INVALID_PRODUCER_EPOCH, -1, cid)
    failed = prod.handle_produce_response(p, resp, CONFIG, KAFKA_SEQUENCE_SPACE, transactional=True)
    assert failed.failed == (0,) and needless_batch_retries(p, failed.producer, resp, 3, 0) == ()
    kept = p._replace(batches=tuple(b._replace(in_flight=False) for b in p.batches))
    assert needless_batch_retries(p, kept, resp, 3, 0) == ("needless_retry:0:INVALID_PRODUCER_EPOCH:0",)
