"""A data partition's leadership moving to an in-sync follower (``model.log.leader_election``).

* The follower's producer state and aborted index, replayed from the log, are the leader's own in every reachable
  state of transactions scenarios (the leader's updates and the replay are one set of functions, and nothing the
  leader holds is missing from its log).
* After an election the last stable offset still stops at the open transaction, the aborted ranges survive, and a
  verification the deposed leader started answers NOT_LEADER_OR_FOLLOWER.
* The weakened variant ``follower_forgets_transactions`` is caught by the properties it names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.model.log.leader_election import elect_follower, replayed_state
from keos.model.log.partition import (
    LogEntry,
    PartitionLeader,
    append_verified_txn_batch,
    handle_txn_produce,
    last_stable_offset,
    start_transaction_verification,
)
from keos.model.log.txn_markers import append_end_txn_marker
from keos.model.log.txn_markers import marker_rules as _marker_rules
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, WriteTxnMarkersRequest
from keos.model.variants import VARIANTS
from keos.model.variants import ProtocolFlags as _ProtocolFlags
from keos.scenarios import ScenarioError, build_model, builtin_scenarios, load_scenario

KAFKA_RULES = _marker_rules(_ProtocolFlags())  # Kafka's marker rules (model.log.txn_markers.MarkerRules)

SCENARIOS = builtin_scenarios()
FLAGS = VARIANTS["kafka"].flags


def _produce(seq: int, record: int, epoch: int = 0) -> ProduceRequest:
    return ProduceRequest(0, 0, 0, 0, epoch, seq, (record,), True)


def _marker(committed: bool, epoch: int, coordinator_epoch: int) -> WriteTxnMarkersRequest:
    return WriteTxnMarkersRequest(0, 0, epoch, coordinator_epoch, committed, 0)


def _reachable(model: Any, limit: int) -> list[Any]:
    """The first ``limit`` states a breadth-first walk of ``model`` reaches."""
    seen = list(model.init_states())
    known = set(seen)
    i = 0
    while i < len(seen) and len(seen) < limit:
        state = seen[i]
        i += 1
        for action in model.actions(state):
            step = model.step(state, action)
            if step is not None and step.state not in known:
                known.add(step.state)
                seen.append(step.state)
    return seen


@pytest.mark.parametrize("name", ["txn_verification_round_trip_tv2", "txn_tv1_failover_consecutive"])
def test_the_replayed_state_is_the_leaders_in_every_reachable_state(name: str) -> None:
    states = _reachable(build_model(SCENARIOS[name], SCENARIOS[name].variant), 4000)
    assert len(states) > 100
    checked = 0
    for s in states:
        for leader in s.partitions:
            producers, aborted = replayed_state(leader.log, FLAGS)
            assert (producers, aborted) == (leader.producers, leader.aborted), leader
            checked += bool(leader.log)
    assert checked > 50


def test_an_elected_follower_holds_the_lso_keeps_aborted_ranges_and_forgets_verifications() -> None:
    leader = PartitionLeader()
    leader, response, _ = handle_txn_produce(leader, _produce(0, 1), FLAGS)
    assert response.error == Errors.NONE
    leader, error, _ = append_end_txn_marker(leader, _marker(False, 0, 3), 1, KAFKA_RULES)
    assert error == Errors.NONE and leader.aborted
    leader, _, _ = handle_txn_produce(leader, _produce(1, 2), FLAGS)  # a second transaction, still open
    leader, guard = start_transaction_verification(leader, 0, 0, False)
    elected = elect_follower(leader, FLAGS)
    assert last_stable_offset(elected) == last_stable_offset(leader) == 2
    assert elected.aborted == leader.aborted and elected.producers == leader.producers
    assert elected.leader_epoch == leader.leader_epoch + 1 and not elected.verifying
    assert elected.log[1] == LogEntry(0, 0, -1, (), True, "ABORT", 3)  # the marker's coordinator epoch is kept
    # the deposed leader's verification callback: NOT_LEADER_OR_FOLLOWER, nothing appended
    after, answer, events = append_verified_txn_batch(elected, _produce(2, 3), FLAGS, Errors.NONE, guard, 0)
    assert answer.error == Errors.NOT_LEADER_OR_FOLLOWER and after is elected and "verification_leader_moved" in events
    # a deposed coordinator's marker is fenced by the coordinator epoch the follower rebuilt
    _, stale, _ = append_end_txn_marker(elected, _marker(True, 0, 2), 1, KAFKA_RULES)
    assert stale == Errors.TRANSACTION_COORDINATOR_FENCED


def test_a_follower_that_forgets_transactions_is_caught() -> None:
    name = "txn_partition_leader_election"
    variant = VARIANTS["follower_forgets_transactions"]
    assert variant.weakened and name in variant.scenarios
    result, _ = explore(build_model(SCENARIOS[name], variant.name), name, variant.name, ExploreOptions())
    violated = {p.name for p in result.properties if p.verdict is Verdict.VIOLATED}
    assert set(variant.breaks) <= violated
    real, _ = explore(build_model(SCENARIOS[name]), name, "kafka", ExploreOptions())
    verdicts = {p.name: p.verdict for p in real.properties}
    assert verdicts["producer_state_per_log"] is Verdict.HOLDS
    assert all(verdicts[w] is Verdict.REACHED for w in (
        "leader_elected_mid_transaction", "leader_elected_with_aborted_range", "verification_on_deposed_leader"))


def test_leader_election_with_producer_expiry_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(
        'name = "bad"\nmodel = "transactions"\n[transactions]\nproducers = 1\npartitions = 1\n'
        "producer_id_expiration = true\n[faults]\nleader_election = 1\ntotal = 1\n"
    )
    with pytest.raises(ScenarioError, match="leader_election"):
        load_scenario(path)
