"""Conformance workloads derived from keos scenarios."""

from __future__ import annotations

import pytest

from keos.checker.conform.scenario_workload import from_scenario
from keos.scenarios import resolve_scenario


def test_an_idempotence_scenario_sets_the_real_producer() -> None:
    w = from_scenario(resolve_scenario("idempotence_retry"))
    assert w.phases == ("idempotent", "late-response")
    assert w.producer_overrides == {
        "enable.idempotence": True,
        "acks": "all",
        "retries": 1,
        "max.in.flight.requests.per.connection": 2,
    }
    assert w.permitted == {}


def test_a_scenario_without_idempotence_expects_duplicates_and_losses() -> None:
    w = from_scenario(resolve_scenario("acks_one_failover"))
    assert w.producer_overrides["enable.idempotence"] is False and w.producer_overrides["acks"] == 1
    assert set(w.permitted) == {"duplicate", "lost-write"}  # max_in_flight 1: order is kept


def test_transaction_scenarios_pick_their_phases() -> None:
    assert from_scenario(resolve_scenario("txn_eos_consume_transform_produce")).phases == ("transactions", "ctp")
    assert from_scenario(resolve_scenario("txn_kafka_6119_timeout_zombie")).phases == ("transactions", "zombie")


def test_connect_scenarios_have_no_workload() -> None:
    with pytest.raises(ValueError, match="no workload"):
        from_scenario(resolve_scenario("connect_worker_crash"))
