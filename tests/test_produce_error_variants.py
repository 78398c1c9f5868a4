"""Weakened variants of the client's reading of a partition leader's refusals and late errors.

Session 33 let the leader answer a produce with every error Kafka's leader gives before the append
(NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR) and after it (REQUEST_TIMED_OUT,
NOT_ENOUGH_REPLICAS_AFTER_APPEND from the produce purgatory): ``[broker] refusal_error`` /
``delayed_produce_error`` in the idempotence model, ``[faults] produce_error`` in transactions and EOS.  These
variants are the client defects those answers exercise, each shaped like a real one (``model/variants.py``):

* ``storage_error_unknown_to_client`` -- KAFKA_STORAGE_ERROR read as the non-retriable UnknownServerException
  (a Produce v3 client, KIP-112 / KAFKA-4763): a send Kafka retries fails;
* ``retriable_error_bumps_epoch`` -- a retried RetriableException re-stamps the batch at a bumped epoch
  (librdkafka #4953, KAFKA-14034's shape): a batch the leader appended before answering late is appended twice;
* ``failed_batch_leaves_transaction`` -- a batch the Sender gives up skips ``handleFailedBatch`` (KAFKA-5385's
  shape): the transaction commits without the record.
* ``produce_retries_every_error`` -- the other direction: ``canRetry`` retries any error (the old Scala
  producer's ``DefaultEventHandler``): a batch the verification refused INVALID_TXN_STATE is sent again.  Only the
  transactional side is caught: an idempotent producer that retries a stale-epoch refusal ends as Kafka's does once
  its retries are spent (the idempotence model has no judge of needless retries).

Each must be caught, by the properties its row names, on every scenario it names; the scenarios hold on Kafka
(``tests/test_refusal_errors.py``, ``tests/test_txn_produce_errors.py``).
"""

from __future__ import annotations

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios

#: (variant, scenario) -> the properties the full search must find violated there.
_CAUGHT = {
    ("storage_error_unknown_to_client", "reach_idempotence_storage_error"): {"failed_sends_explained",
                                                                            "no_duplicate_append"},
    ("storage_error_unknown_to_client", "txn_produce_errors"): {"batch_failures_explained"},
    ("retriable_error_bumps_epoch", "reach_idempotence_storage_error"): {"no_duplicate_append",
                                                                        "per_partition_order", "epoch_bump_needed"},
    ("failed_batch_leaves_transaction", "txn_produce_errors"): {"client_reacts_as_kafka",
                                                                "healthy_producer_not_failed"},
    ("failed_batch_leaves_transaction", "txn_eos_produce_errors"): {"client_reacts_as_kafka",
                                                                    "exactly_once_processing"},
    ("produce_retries_every_error", "txn_coordinator_faults"): {"batch_failures_explained"},
}


#: Scenarios too large to search to the end here (txn_coordinator_faults: ~35 CPU-s): the search stops at the first
#: violation, which must be the named one (as keos mutants' run_weakened stops).
_FIRST_ONLY = {"txn_coordinator_faults"}


def _violated(variant: str, name: str) -> set[str]:
    scenario = builtin_scenarios()[name]
    options = ExploreOptions(stop_on_first=name in _FIRST_ONLY)
    result = explore(build_model(scenario, variant), name, variant, options)[0]
    return {p.name for p in result.properties if p.verdict is Verdict.VIOLATED}


def test_each_variant_names_the_scenarios_and_properties_of_its_table_row() -> None:
    for variant in {v for v, _ in _CAUGHT}:
        v = VARIANTS[variant]
        assert v.weakened and v.bug
        assert set(v.scenarios) == {s for w, s in _CAUGHT if w == variant}
        assert set().union(*(want for (w, _), want in _CAUGHT.items() if w == variant)) <= set(v.breaks)


@pytest.mark.parametrize(("variant", "scenario"), sorted(_CAUGHT))
def test_the_variant_is_caught_on_its_scenario(variant: str, scenario: str) -> None:
    violated = _violated(variant, scenario)
    assert _CAUGHT[variant, scenario] <= violated, violated


def test_the_idempotence_scenario_holds_on_kafka() -> None:
    assert _violated("kafka", "reach_idempotence_storage_error") == set()
