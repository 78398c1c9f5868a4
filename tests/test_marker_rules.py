"""Every partition's marker path runs its protocol variant's marker rules (``model.log.txn_markers.MarkerRules``).

Kafka appends a COMMIT/ABORT marker with the same ``UnifiedLog`` code on every partition: a data partition, the
group's ``__consumer_offsets`` partition, a Connect task's topics.  The rules therefore have no defaults: every
caller (the transactional system, the group coordinator, Connect's cluster, the differential checker) builds them
from its flags, so a weakened variant weakens every partition's marker path alike -- before, the group
coordinator's and Connect's calls took defaults no scenario could vary.
"""

from __future__ import annotations

import inspect

from keos.model.coordinator.group.group_coordinator import GroupMetadata, handle_txn_marker
from keos.model.coordinator.transaction.transaction_coordinator import SHORT_MAX_VALUE, coordinator_config
from keos.model.log.partition import PartitionLeader, handle_txn_produce
from keos.model.log.txn_markers import MarkerRules, append_end_txn_marker, marker_rules
from keos.model.protocol.messages import ProduceRequest, WriteTxnMarkersRequest
from keos.model.variants import VARIANTS


def test_no_marker_rule_has_a_default() -> None:
    assert not MarkerRules._field_defaults
    params = inspect.signature(append_end_txn_marker).parameters.values()
    assert all(p.default is inspect.Parameter.empty for p in params)
    handler = inspect.signature(handle_txn_marker).parameters["rules"]
    assert handler.default is inspect.Parameter.empty


def test_the_coordinator_config_carries_the_variants_marker_rules() -> None:
    for name in ("kafka", "aborted_txn_lso_ignores_open_transactions", "no_kafka_19999_fix",
                 "marker_keeps_verification_guard", "marker_clears_next_transaction_verification"):
        flags = VARIANTS[name].flags
        assert coordinator_config(flags, SHORT_MAX_VALUE).markers == marker_rules(flags)
    assert len(set(marker_rules(VARIANTS[n].flags) for n in (
        "kafka", "aborted_txn_lso_ignores_open_transactions", "no_kafka_19999_fix",
        "marker_keeps_verification_guard", "marker_clears_next_transaction_verification"))) == 5


def test_the_group_coordinators_offsets_partition_runs_the_variants_rules() -> None:
    """Two producers' transactions open on ``__consumer_offsets``; the later one aborts: its index entry's LSO is
    the other's first offset under Kafka's rules, the marker's offset + 1 under the weakened variant."""
    flags = VARIANTS["kafka"].flags
    leader = PartitionLeader()
    for pid in (0, 1):
        leader = handle_txn_produce(leader, ProduceRequest(pid, 0, 0, pid, 0, 0, (10 + pid,), True), flags)[0]
    group = GroupMetadata(0, offsets_log=leader)

    def lso(variant: str) -> list[int]:
        abort = WriteTxnMarkersRequest(1, 1, 0, 0, False, 0)
        after, _, _ = handle_txn_marker(group, abort, 1, marker_rules(VARIANTS[variant].flags))
        return [a.last_stable_offset for a in after.offsets_log.aborted]

    assert lso("kafka") == [0]
    assert lso("aborted_txn_lso_ignores_open_transactions") == [3]
