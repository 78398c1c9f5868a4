"""Kafka's WriteTxnMarkers answer table (``coordinator_answers_per_kafka_table``) against the leader's handler.

A generated family: no entry, entries at epochs below, at and above the marker's, with and without a
transaction open, coordinator epochs below, at and above the marker's, TV1 and TV2, the KAFKA-19999 retry on
and off: ``append_end_txn_marker`` must answer every member as the table says (and write the control batch
exactly when it answers NONE).  Weakened leaders (the TV2 strict check lost, the checks answered with each
other's error) are caught on the same family.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from keos.model.log.marker_answer_table import ROWS, MarkerAsk, kafka_marker_answer, marker_table_mismatch
from keos.model.log.partition import PartitionLeader
from keos.model.log.producer_state import ProducerStateEntry
from keos.model.log.txn_markers import append_end_txn_marker
from keos.model.log.txn_markers import marker_rules as _marker_rules
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import WriteTxnMarkersRequest
from keos.model.variants import ProtocolFlags as _ProtocolFlags

KAFKA_RULES = _marker_rules(_ProtocolFlags())  # Kafka's marker rules (model.log.txn_markers.MarkerRules)

Handler = Callable[[PartitionLeader, WriteTxnMarkersRequest, int, bool], tuple[PartitionLeader, str, tuple[str, ...]]]


def _family() -> Iterator[tuple[PartitionLeader, WriteTxnMarkersRequest, int, bool, MarkerAsk]]:
    entries: list[ProducerStateEntry | None] = [None]
    for epoch, coordinator_epoch, open_at in itertools.product((2, 3, 4), (0, 1, 2), (-1, 0)):
        entries.append(ProducerStateEntry(7, epoch, (), coordinator_epoch, open_at))
    for entry, epoch, coordinator_epoch, committed, tv, retry in itertools.product(
        entries, (2, 3, 4), (0, 1, 2), (True, False), (1, 2), (True, False)
    ):
        leader = PartitionLeader(producers=() if entry is None else (entry,))
        marker = WriteTxnMarkersRequest(0, 7, epoch, coordinator_epoch, committed, 0)
        yield leader, marker, tv, retry, MarkerAsk(entry, epoch, coordinator_epoch, tv, retry)


def _mismatches(handler: Handler) -> list[str]:
    out = []
    for leader, marker, tv, retry, ask in _family():
        after, error, _ = handler(leader, marker, tv, KAFKA_RULES._replace(accept_retry=retry))
        label = marker_table_mismatch(ask, error, len(after.log) > len(leader.log))
        if label is not None:
            out.append(label)
    return out


def test_every_marker_answer_is_kafkas_table_row() -> None:
    assert _mismatches(append_end_txn_marker) == []
    rows = {kafka_marker_answer(ask)[1] for *_, ask in _family()}
    assert rows == {name for name, _ in ROWS} | {"written"}


def test_a_leader_without_the_tv2_strict_epoch_check_is_caught() -> None:
    def lax(leader: PartitionLeader, marker: WriteTxnMarkersRequest, tv: int, rules: Any) -> Any:
        return append_end_txn_marker(leader, marker, 1, rules)

    assert any(":producer_epoch:NONE->written:" in label for label in _mismatches(lax))


def test_a_leader_answering_one_check_with_the_others_error_is_caught() -> None:
    def swapped(leader: PartitionLeader, marker: WriteTxnMarkersRequest, tv: int, rules: Any) -> Any:
        after, error, events = append_end_txn_marker(leader, marker, tv, rules)
        other = {Errors.TRANSACTION_COORDINATOR_FENCED: Errors.INVALID_PRODUCER_EPOCH}
        return after, other.get(error, error), events

    assert any(":coordinator_epoch:INVALID_PRODUCER_EPOCH->-:" in label for label in _mismatches(swapped))
