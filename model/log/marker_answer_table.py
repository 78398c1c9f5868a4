"""Kafka's answer table for a partition leader's WriteTxnMarkers: the rows a COMMIT/ABORT marker is checked
in, each a condition on the producer's state the marker found and the one error Kafka answers when it holds.

A judge, not a handler (property ``coordinator_answers_per_kafka_table``, label ``answer_table:WriteTxnMarkers``):
a leader that checks the coordinator epoch before the producer epoch, answers one error for the other, accepts a
stale marker or refuses a current one (or answers NONE without writing the control batch, or writes it on a
refusal) is caught on every marker the scenarios deliver, on the data partitions and the group's
``__consumer_offsets`` partition alike.

Rows, first match wins (apache/kafka trunk ``1eb7644349cb`` ``storage/.../internals/log/ProducerAppendInfo.java``
``appendEndTxnMarker``: ``checkProducerEpoch`` first, then the coordinator epoch; KIP-890 / KIP-1228 for TV2;
KAFKA-19999, PR #21176 for the TV2 retry):

1. ``producer_epoch`` -- a stored entry whose epoch the marker's does not pass: TV0/TV1 a marker epoch below
   the stored one; TV2 a marker epoch at or below it, except the idempotent retry (the stored epoch, no
   transaction open on the partition: a resent marker after a coordinator failover or a lost response; the
   configured ``marker_retry_same_epoch`` is read, it is the KAFKA-19999 fix) -> INVALID_PRODUCER_EPOCH;
2. ``coordinator_epoch`` -- the stored coordinator epoch above the marker's (a deposed coordinator's marker)
   -> TRANSACTION_COORDINATOR_FENCED;
3. otherwise NONE, and the control batch is appended.

Re-read against Kafka's source (apache/kafka ``1eb7644349cb``, this session): ``ProducerAppendInfo.appendEndTxnMarker``
calls ``checkProducerEpoch`` then ``checkCoordinatorEpoch`` (rows 1, 2 in that order; the TV2 strict row is KIP-1228,
after that commit).  ``KafkaApis.handleWriteTxnMarkersRequest`` adds request-level rows the model does not drive:
CLUSTER_ACTION authorization (the coordinator's own principal), UNKNOWN_TOPIC_OR_PARTITION /
UNSUPPORTED_FOR_MESSAGE_FORMAT from ``replicaManager.getMagic``, and, for ``__consumer_offsets`` under the new
group coordinator, ``completeTransaction``'s COORDINATOR_NOT_AVAILABLE / COORDINATOR_LOAD_IN_PROGRESS /
NOT_COORDINATOR translated to NOT_LEADER_OR_FOLLOWER (the transaction coordinator retries it).  The append itself is
``replicaManager.appendRecords`` with acks=-1: NOT_LEADER_OR_FOLLOWER before the log is touched, and
NOT_ENOUGH_REPLICAS_AFTER_APPEND after it (the model's ``marker_failure`` fault kinds).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.protocol.answer_rows import Row, first_answer, mismatch_label
from keos.model.protocol.errors import Errors

__all__ = ["ROWS", "MarkerAsk", "kafka_marker_answer", "marker_table_mismatch"]


class MarkerAsk(NamedTuple):
    """What the judge reads of a marker and the producer's entry it found on the partition (None: none)."""

    entry: Any  # ProducerStateEntry | None
    producer_epoch: int
    coordinator_epoch: int
    tv: int
    accept_retry: bool


def _producer_epoch(a: MarkerAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    e = a.entry
    if e is None:
        return None
    if a.tv < 2:
        return Errors.INVALID_PRODUCER_EPOCH if a.producer_epoch < e.producer_epoch else None
    retry = a.accept_retry and a.producer_epoch == e.producer_epoch and e.current_txn_first_offset < 0
    return Errors.INVALID_PRODUCER_EPOCH if a.producer_epoch <= e.producer_epoch and not retry else None


def _coordinator_epoch(a: MarkerAsk) -> str | None:  # no mutate: the judge (a property), not a rule
    fenced = a.entry is not None and a.entry.coordinator_epoch > a.coordinator_epoch
    return Errors.TRANSACTION_COORDINATOR_FENCED if fenced else None


#: The rows in Kafka's order: (name, the row's answer or None when the marker passes it).
ROWS: tuple[Row, ...] = (  # no mutate: the judge's table, not a rule
    ("producer_epoch", _producer_epoch),
    ("coordinator_epoch", _coordinator_epoch),
)


def kafka_marker_answer(a: MarkerAsk) -> tuple[str, str, bool]:  # no mutate: the judge (a property), not a rule
    """(error, the row that answered, whether the control batch is appended)."""
    return first_answer(ROWS, a, "written")


def marker_table_mismatch(a: MarkerAsk, error: str, written: bool) -> str | None:  # no mutate: the judge
    """A ghost label if the leader answered the marker ``a`` with ``error`` (and wrote its control batch or not)
    where Kafka's table says otherwise."""
    return mismatch_label("WriteTxnMarkers", ROWS, a, "written", error, written)
