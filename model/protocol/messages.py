"""Request and response records exchanged over the modelled network.

Each record is an immutable, registered ``NamedTuple`` so it can sit inside a
state, be compared, and appear in a JSON trace.  Field names follow Kafka's
protocol schemas (``ProduceRequest.json``: ``producerId``, ``producerEpoch``,
``baseSequence``) in snake case.

``connection`` is the client's connection incarnation to the broker: Kafka
closes a connection when a request times out (``NetworkClient`` disconnects the
node), and every request still in flight on it fails.  Responses written to a
closed connection are lost; the model lets them be delivered and the client
drops any response whose connection is not its current one.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.codec import record

__all__ = [
    "AddOffsetsToTxnRequest",
    "AddOffsetsToTxnResponse",
    "AddPartitionsToTxnRequest",
    "AddPartitionsToTxnResponse",
    "EndTxnRequest",
    "EndTxnResponse",
    "InitProducerIdRequest",
    "InitProducerIdResponse",
    "OffsetCommitRequest",
    "OffsetCommitResponse",
    "ProduceRequest",
    "ProduceResponse",
    "TxnOffsetCommitRequest",
    "TxnOffsetCommitResponse",
    "VerifyPartitionRequest",
    "VerifyPartitionResponse",
    "VerifyTxnOffsetCommitRequest",
    "VerifyTxnOffsetCommitResponse",
    "WriteTxnMarkersRequest",
]


@record
class ProduceRequest(NamedTuple):
    """A produce request carrying one record batch for one partition (KIP-98 §5)."""

    producer: int
    connection: int
    partition: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: tuple[int, ...]
    transactional: bool = False
    #: The request header's correlation id (``RequestHeader.correlationId``): the broker echoes it in its
    #: response, and ``NetworkClient`` hands the response to the callback of that very request, whose batches
    #: ``Sender.handleProduceResponse`` completes (-1: a request no client awaits, e.g. a hostile one).
    correlation_id: int = -1


@record
class ProduceResponse(NamedTuple):
    """The partition leader's answer: an error code and the batch's base offset.

    ``correlation_id`` is the answered request's (``ResponseHeader.correlationId``), so the client completes the
    batches of that request only, whatever their stamp is by then.
    """

    producer: int
    connection: int
    partition: int
    producer_epoch: int
    base_sequence: int
    error: str
    base_offset: int
    correlation_id: int = -1


# -- transactions (KIP-98 §6-8): client <-> transaction coordinator, coordinator -> leaders ------------


@record
class InitProducerIdRequest(NamedTuple):
    """InitProducerId for a transactional.id; ``producer_id``/``producer_epoch`` are the
    KIP-360 "expected" identity (-1 when absent)."""

    producer: int
    connection: int
    transactional_id: int
    producer_id: int = -1
    producer_epoch: int = -1


@record
class InitProducerIdResponse(NamedTuple):
    """The coordinator's answer: an error or the producer's (pid, epoch)."""

    producer: int
    connection: int
    error: str
    producer_id: int = -1
    producer_epoch: int = -1


@record
class AddPartitionsToTxnRequest(NamedTuple):
    """AddPartitionsToTxn (client version, TV0/TV1): add data partitions to the transaction."""

    producer: int
    connection: int
    transactional_id: int
    producer_id: int
    producer_epoch: int
    partitions: tuple[int, ...]


@record
class AddPartitionsToTxnResponse(NamedTuple):
    """One error for the whole request (the model adds partitions all-or-nothing)."""

    producer: int
    connection: int
    error: str
    partitions: tuple[int, ...]


@record
class EndTxnRequest(NamedTuple):
    """EndTxn: commit (``committed=True``) or abort the transaction."""

    producer: int
    connection: int
    transactional_id: int
    producer_id: int
    producer_epoch: int
    committed: bool


@record
class EndTxnResponse(NamedTuple):
    """EndTxn's answer; under TV2 it carries the bumped (pid, epoch) for the next transaction."""

    producer: int
    connection: int
    error: str
    producer_id: int = -1
    producer_epoch: int = -1


@record
class WriteTxnMarkersRequest(NamedTuple):
    """One WriteTxnMarkers entry for one partition (``TransactionMarkerChannelManager``): a COMMIT or ABORT marker."""

    transactional_id: int
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    committed: bool
    partition: int


# -- consumer groups (KIP-98 §consume-transform-produce, KIP-447): client <-> coordinators -------------


@record
class AddOffsetsToTxnRequest(NamedTuple):
    """AddOffsetsToTxn (TV0/TV1): add the group's ``__consumer_offsets`` partition to the transaction."""

    producer: int
    connection: int
    transactional_id: int
    producer_id: int
    producer_epoch: int
    group: int


@record
class AddOffsetsToTxnResponse(NamedTuple):
    """The transaction coordinator's answer to AddOffsetsToTxn."""

    producer: int
    connection: int
    error: str


@record
class TxnOffsetCommitRequest(NamedTuple):
    """TxnOffsetCommit v3+ to the group coordinator: one partition's offset, staged in the
    producer's transaction, with the consumer's group metadata (KIP-447: generation, member)."""

    producer: int
    connection: int
    transactional_id: int
    producer_id: int
    producer_epoch: int
    group: int
    generation: int
    member: int
    partition: int
    offset: int
    member_id: str = ""  # protocol mode: the classic group's member id (ConsumerGroupMetadata.memberId)
    group_instance_id: str = ""  # static membership (KIP-345) is not modelled: always null


@record
class VerifyTxnOffsetCommitRequest(NamedTuple):
    """The group coordinator's verification of a TxnOffsetCommit it holds back (``[eos]
    txn_offset_commit_round_trip``): ``GroupCoordinator.handleTxnCommitOffsets`` ->
    ``ReplicaManager.maybeStartTransactionVerificationForPartition`` on the group's ``__consumer_offsets``
    partition -> ``AddPartitionsToTxnManager`` (verifyOnly under TV0/TV1, KIP-890 part 1, KAFKA-15449; the
    implicit add under TV2, part 2).  ``request`` and ``client`` (its sender) wait for the callback with the
    partition's ``guard`` (the ``VerificationGuard``).  Kafka 3.7+ (KAFKA-15784, apache/kafka PR #14774)."""

    client: str
    request: TxnOffsetCommitRequest
    guard: int
    open_epoch: int = -1  # ghost: the epoch of the producer's open transaction on the partition when it arrived


@record
class VerifyTxnOffsetCommitResponse(NamedTuple):
    """The transaction coordinator's verdict on :class:`VerifyTxnOffsetCommitRequest`, back at the group
    coordinator's ``postVerificationCallback``.  ``coordinator``, ``loading`` and ``txn_append_ok`` are ghost
    fields: the transaction coordinator's entry and load state when it answered, and whether the
    ``__transaction_state`` append of a TV2 implicit add succeeded (the ``append_failure`` fault), read by the
    answer-table judge only."""

    client: str
    request: TxnOffsetCommitRequest
    guard: int
    verdict: str
    coordinator: Any
    loading: bool
    open_epoch: int = -1
    txn_append_ok: bool = True


@record
class TxnOffsetCommitResponse(NamedTuple):
    """The group coordinator's answer to TxnOffsetCommit."""

    producer: int
    connection: int
    error: str


@record
class OffsetCommitRequest(NamedTuple):
    """A plain (non-transactional) OffsetCommit of a classic group member."""

    producer: int
    connection: int
    group: int
    generation: int
    member: int
    partition: int
    offset: int


@record
class OffsetCommitResponse(NamedTuple):
    """The group coordinator's answer to OffsetCommit."""

    producer: int
    connection: int
    error: str


@record
class VerifyPartitionRequest(NamedTuple):
    """A partition leader's AddPartitionsToTxn to the transaction coordinator for a Produce it holds back.

    ``AddPartitionsToTxnManager.verifyTransaction``: verifyOnly under TV1 (KIP-890 part 1), the implicit add of
    the partition under TV2 (part 2).  The leader keeps the produce request, its sender and the batch's
    ``guard`` (the ``VerificationGuard``) for the callback.  ``leader_epoch`` and ``log_end`` are the
    partition's when verification started: ghost fields read by the answer judge only (a guard survives only
    while no transactional batch of the producer id reaches the log and the leader does not change).
    """

    client: str
    produce: ProduceRequest
    transactional_id: int
    guard: int
    leader_epoch: int
    log_end: int


@record
class VerifyPartitionResponse(NamedTuple):
    """The coordinator's answer to :class:`VerifyPartitionRequest`, back at the partition leader (same fields)."""

    client: str
    produce: ProduceRequest
    transactional_id: int
    guard: int
    leader_epoch: int
    log_end: int
    error: str
