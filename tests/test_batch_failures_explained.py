"""``batch_failures_explained``: a transactional producer fails a batch only when Kafka's producer gives up on it.

The judge (``model/systems/txn_produce_judge.premature_batch_failure``) reads Kafka's ``RetriableException``
hierarchy (``KAFKA_RETRIABLE``), not the client's own table, so a client that stops retrying an error Kafka
retries -- here NOT_ENOUGH_REPLICAS, which a partition leader answers while the coordinator is completing the
previous transaction (KIP-890 verification, ``ReplicaManager``) -- is caught on a default scenario.
"""

from __future__ import annotations

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.model.clients import producer as prod
from keos.model.protocol.errors import RETRIABLE, Errors
from keos.model.protocol.messages import ProduceResponse
from keos.model.systems.txn_produce_judge import KAFKA_RETRIABLE, premature_batch_failure
from keos.scenarios import build_model, builtin_scenarios

SCENARIO = "authz_tv1_forged_end_txn"


def _verdict(name: str) -> Verdict:
    scenario = builtin_scenarios()[name]
    result = explore(build_model(scenario), name, scenario.variant, ExploreOptions())[0]
    return {p.name: p.verdict for p in result.properties}["batch_failures_explained"]


def test_the_clients_retriable_errors_are_kafkas() -> None:
    assert RETRIABLE <= KAFKA_RETRIABLE


def test_holds_on_the_model_and_catches_a_client_that_stops_retrying_not_enough_replicas(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert _verdict(SCENARIO) is Verdict.HOLDS
    monkeypatch.setattr(prod, "RETRIABLE", RETRIABLE - {Errors.NOT_ENOUGH_REPLICAS})
    assert _verdict(SCENARIO) is Verdict.VIOLATED


def _batch(attempts: int) -> prod.ProducerBatch:
    return prod.ProducerBatch(records=(7,), partition=0, producer_epoch=1, base_sequence=0, in_flight=True,
                              attempts=attempts)


@pytest.mark.parametrize(("error", "attempts", "flagged"), [
    (Errors.NOT_ENOUGH_REPLICAS, 1, True),  # retriable, retries left: Kafka retries
    (Errors.NOT_ENOUGH_REPLICAS, 4, False),  # retries (3) spent
    (Errors.INVALID_PRODUCER_EPOCH, 1, False),  # not a RetriableException
    (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, 1, False),  # an ApiException: the transactional producer aborts
])
def test_the_judge(error: str, attempts: int, flagged: bool) -> None:
    before = prod.new_producer(1)._replace(batches=(_batch(attempts),))
    after = before._replace(batches=())
    resp = ProduceResponse(0, before.connection, 0, 1, 0, error, -1, prod.correlation_id(_batch(attempts)))
    labels = premature_batch_failure(before, after, resp, 3, 0)
    assert bool(labels) is flagged, labels
    # a batch still queued (retried) is never flagged
    assert premature_batch_failure(before, before, resp, 3, 0) == ()


def test_a_transaction_aborted_for_a_retried_batch_is_caught_on_a_closed_connection() -> None:
    """The step judge (``TransactionalSystem._unexplained_aborts``): a connection reset or request timeout with
    the batches re-enqueued for a retry must not make the transaction abortable (Kafka: ``handleFailedBatch``
    runs from ``Sender.failBatch`` only) -- the weakened variant ``retried_batch_aborts_transaction`` does, and
    the default reach scenario catches it; the real model holds there."""
    scenario = builtin_scenarios()["reach_txn_tv1_faulty"]
    real = explore(build_model(scenario), scenario.name, scenario.variant, ExploreOptions())[0]
    assert {p.name: p.verdict for p in real.properties}["batch_failures_explained"] is Verdict.HOLDS
    weak = explore(build_model(scenario, "retried_batch_aborts_transaction"), scenario.name,
                   "retried_batch_aborts_transaction", ExploreOptions(stop_on_first=True))[0]
    assert {p.name: p.verdict for p in weak.properties}["batch_failures_explained"] is Verdict.VIOLATED
