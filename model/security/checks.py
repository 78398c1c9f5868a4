"""The authorization gate at the top of each request handler, as ``KafkaApis`` does it.

Kafka 4.0 (``core/src/main/scala/kafka/server/KafkaApis.scala`` at apache/kafka
1eb7644, 4.0.0-SNAPSHOT); each function returns the error the broker answers
with, ``NONE`` when the request may go on to the coordinator or the log:

* ``handleInitProducerIdRequest`` with a transactional.id: Write on it, else
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
* ``handleAddPartitionsToTxnRequest`` (client versions < 4): Write on the
  transactional.id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then Write on
  every topic, else TOPIC_AUTHORIZATION_FAILED (the whole request fails).
* ``handleAddOffsetsToTxnRequest``, ``handleTxnOffsetCommitRequest``: Write on
  the transactional.id, then Read on the group, else
  GROUP_AUTHORIZATION_FAILED.  (TxnOffsetCommit then filters its topics by
  Read, answering TOPIC_AUTHORIZATION_FAILED per partition; not modelled: the
  consume-transform-produce model authorizes no Fetch of its input topic.)
* ``handleEndTxnRequest``: Write on the transactional.id.
* ``handleWriteTxnMarkersRequest`` (inter-broker only): Alter or ClusterAction
  on the cluster, else CLUSTER_AUTHORIZATION_FAILED.
* ``handleProduceRequest``: a request with transactional batches needs a
  transactional.id and Write on it (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for
  the whole request), then Write on the topic (TOPIC_AUTHORIZATION_FAILED);
  ``LogValidator`` then refuses control batches from clients ("Clients are
  not allowed to write control records", INVALID_RECORD).

Not modelled (issue 23 removed their unreached checks): FindCoordinator's
Describe check (no model has a FindCoordinator round trip for transactions)
and an idempotent producer's InitProducerId (IdempotentWrite on the cluster or
Write on some topic; the idempotence model has no authorizer).

The switches of :class:`model.variants.ProtocolFlags` drop checks for ``keos
mutants``: ``authorize_*`` a binding in every handler,
``authorization_check_skipped`` one ``Api:ResourceType`` check of one handler
(:func:`_checks`).  Note what no check looks at: the producer id and epoch in a
request.  The transactional.id is authorized, the producer id is not bound to
it (KIP-98 §9, "Discussion on coordinator authorization").
"""

from __future__ import annotations

from keos.model.protocol.errors import Errors
from keos.model.security.authorizer import (
    CLUSTER_NAME,
    Operation,
    ResourceType,
    group_name,
    topic_name,
)
from keos.model.security.records import SecurityConfig
from keos.model.variants import ProtocolFlags

__all__ = [
    "add_offsets_to_txn",
    "add_partitions_to_txn",
    "end_txn",
    "init_producer_id",
    "produce",
    "txn_offset_commit",
    "write_txn_markers",
]

OK = Errors.NONE


def _checks(flags: ProtocolFlags, check: str) -> bool:
    """Whether the handler makes ``check`` (``Api:ResourceType``): every one but the one a weakened variant
    leaves out (``ProtocolFlags.authorization_check_skipped``)."""
    return flags.authorization_check_skipped != check


def _txn_id(sec: SecurityConfig, principal: str, tid: str, flags: ProtocolFlags, api: str) -> str:
    """Write on the transactional.id, the first check of every coordinator request ``api``."""
    if (
        flags.authorize_transactional_id
        and _checks(flags, f"{api}:TransactionalId")
        and not sec.may_write_transactional_id(principal, tid)
    ):
        return Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    return OK


def init_producer_id(sec: SecurityConfig, principal: str, tid: str, flags: ProtocolFlags) -> str:
    """InitProducerId of a transactional producer: Write on the transactional.id."""
    return _txn_id(sec, principal, tid, flags, "InitProducerId")


def add_partitions_to_txn(
    sec: SecurityConfig, principal: str, tid: str, partitions: tuple[int, ...], flags: ProtocolFlags
) -> str:
    """AddPartitionsToTxn from a client: Write on the transactional.id, then Write on every topic."""
    error = _txn_id(sec, principal, tid, flags, "AddPartitionsToTxn")
    if error != OK:
        return error
    if flags.authorize_add_partitions_topic and not all(sec.may_write_topic(principal, q) for q in partitions):
        return Errors.TOPIC_AUTHORIZATION_FAILED
    return OK


def add_offsets_to_txn(sec: SecurityConfig, principal: str, tid: str, group: int, flags: ProtocolFlags) -> str:
    """AddOffsetsToTxn: Write on the transactional.id, then Read on the group."""
    return _offsets(sec, principal, tid, group, flags, "AddOffsetsToTxn")


def txn_offset_commit(sec: SecurityConfig, principal: str, tid: str, group: int, flags: ProtocolFlags) -> str:
    """TxnOffsetCommit: the same two checks as AddOffsetsToTxn, made by its own handler (topic Read per partition
    is not modelled)."""
    return _offsets(sec, principal, tid, group, flags, "TxnOffsetCommit")


def _offsets(sec: SecurityConfig, principal: str, tid: str, group: int, flags: ProtocolFlags, api: str) -> str:
    error = _txn_id(sec, principal, tid, flags, api)
    if error != OK:
        return error
    group_read = sec.allows(principal, Operation.READ, ResourceType.GROUP, group_name(group))
    if flags.authorize_offsets_group and _checks(flags, f"{api}:Group") and not group_read:
        return Errors.GROUP_AUTHORIZATION_FAILED
    return OK


def end_txn(sec: SecurityConfig, principal: str, tid: str, flags: ProtocolFlags) -> str:
    """EndTxn: Write on the transactional.id."""
    return _txn_id(sec, principal, tid, flags, "EndTxn")


def write_txn_markers(sec: SecurityConfig, principal: str, flags: ProtocolFlags) -> str:
    """WriteTxnMarkers: Alter or ClusterAction on the cluster (inter-broker only)."""
    allowed = sec.allows(principal, Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME) or sec.allows(
        principal, Operation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_NAME
    )
    if flags.authorize_marker_cluster_action and not allowed:
        return Errors.CLUSTER_AUTHORIZATION_FAILED
    return OK


def produce(sec: SecurityConfig, principal: str, tid: str, partition: int, control: bool, flags: ProtocolFlags) -> str:
    """Produce of one transactional batch to ``partition``: transactional.id, topic, then no control batch from a
    client.  Every Produce the gate sees is transactional and names a transactional.id: the transactions system
    sends only transactional batches (the idempotence model has no authorizer), so KafkaApis' other branches --
    a non-transactional batch needs no TransactionalId, a transactional one without a transactional.id is refused
    -- are not modelled."""
    if flags.authorize_transactional_produce and not sec.may_write_transactional_id(principal, tid):
        return Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if _checks(flags, "Produce:Topic") and not sec.allows(
        principal, Operation.WRITE, ResourceType.TOPIC, topic_name(partition)
    ):
        return Errors.TOPIC_AUTHORIZATION_FAILED
    if control and flags.reject_client_control_records:
        return Errors.INVALID_RECORD
    return OK
