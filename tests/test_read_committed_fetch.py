"""The read_committed fetch path: the leader's aborted-transactions list for a range and the consumer's filter.

* ``collect_aborted_transactions`` (``TransactionIndex.collectAbortedTxns``) lists the index entries overlapping
  ``[fetch_offset, upper_bound_offset)`` and stops its scan at an entry whose last stable offset reaches the bound.
* An ABORT records the partition's LSO once it completed (``ProducerStateManager.lastStableOffset``): the first
  offset of another producer's open transaction, else the marker's offset + 1.
* ``fetch_range`` (``CompletedFetch``) returns exactly the committed records of any range below the LSO, also when
  two transactions interleave and the later-opened one aborts first; with the weakened variant
  ``aborted_txn_lso_ignores_open_transactions`` a fetch that ends before the earlier one's marker returns its
  aborted record, and the property ``read_committed_from_any_offset`` catches it.
"""

from __future__ import annotations

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.model.clients.consumer import READ_COMMITTED, fetch, fetch_range
from keos.model.log.leader_election import replayed_state
from keos.model.log.partition import (
    PartitionLeader,
    collect_aborted_transactions,
    handle_txn_produce,
    last_stable_offset,
)
from keos.model.log.txn_markers import append_end_txn_marker
from keos.model.log.txn_markers import marker_rules as _marker_rules
from keos.model.protocol.messages import ProduceRequest, WriteTxnMarkersRequest
from keos.model.variants import VARIANTS
from keos.model.variants import ProtocolFlags as _ProtocolFlags
from keos.scenarios import build_model, builtin_scenarios

KAFKA_RULES = _marker_rules(_ProtocolFlags())  # Kafka's marker rules (model.log.txn_markers.MarkerRules)

FLAGS = VARIANTS["kafka"].flags


def _produce(pid: int, record: int) -> ProduceRequest:
    return ProduceRequest(pid, 0, 0, pid, 0, 0, (record,), True)


def _abort(pid: int) -> WriteTxnMarkersRequest:
    return WriteTxnMarkersRequest(pid, pid, 0, 0, False, 0)


def _interleaved(counts_open: bool = True) -> PartitionLeader:
    """p0 writes record 10 at offset 0, p1 writes 11 at 1, p1 aborts at 2 (p0 still open), p0 aborts at 3."""
    leader = PartitionLeader()
    leader, _, _ = handle_txn_produce(leader, _produce(0, 10), FLAGS)
    leader, _, _ = handle_txn_produce(leader, _produce(1, 11), FLAGS)
    leader, _, _ = append_end_txn_marker(leader, _abort(1), 0, KAFKA_RULES._replace(lso_counts_open=counts_open))
    leader, _, _ = append_end_txn_marker(leader, _abort(0), 0, KAFKA_RULES._replace(lso_counts_open=counts_open))
    return leader


def test_an_abort_records_the_lso_of_the_other_open_transactions() -> None:
    leader = _interleaved()
    assert [(a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset) for a in leader.aborted] == [
        (1, 1, 2, 0),
        (0, 0, 3, 4),
    ]
    assert last_stable_offset(leader) == 4
    # a replica replaying the log indexes the same entries
    assert replayed_state(leader.log, FLAGS)[1] == leader.aborted


def test_collect_lists_the_overlapping_entries_and_stops_at_the_bound() -> None:
    leader = _interleaved()
    assert [a.producer_id for a in collect_aborted_transactions(leader, 0, 1)] == [0]
    assert [a.producer_id for a in collect_aborted_transactions(leader, 1, 2)] == [1, 0]
    assert [a.producer_id for a in collect_aborted_transactions(leader, 3, 4)] == [0]


def test_every_fetch_range_drops_both_aborted_transactions() -> None:
    leader = _interleaved()
    assert fetch(leader, READ_COMMITTED) == ()
    for start in range(4):
        for upper in range(start + 1, 5):
            assert fetch_range(leader, start, upper) == (), (start, upper)


def test_an_lso_ignoring_open_transactions_leaks_an_aborted_record() -> None:
    leader = _interleaved(counts_open=False)
    assert leader.aborted[0].last_stable_offset == 3
    assert fetch_range(leader, 0, 1) == (10,)


def test_the_weakened_variant_is_caught_by_read_committed_from_any_offset() -> None:
    name = "reach_txn_interleaved_aborts"
    variant = VARIANTS["aborted_txn_lso_ignores_open_transactions"]
    assert variant.weakened and name in variant.scenarios
    scenario = builtin_scenarios()[name]
    result, _ = explore(build_model(scenario, variant.name), name, variant.name, ExploreOptions())
    violated = {p.name for p in result.properties if p.verdict is Verdict.VIOLATED}
    assert set(variant.breaks) <= violated
    real, _ = explore(build_model(scenario), name, "kafka", ExploreOptions())
    verdicts = {p.name: p.verdict for p in real.properties}
    assert verdicts["read_committed_from_any_offset"] is Verdict.HOLDS
    assert verdicts["aborted_data_filtered"] is Verdict.REACHED
