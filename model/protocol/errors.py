"""Kafka protocol error codes used by the model, named as in Kafka's ``Errors`` enum.

The model passes error names as strings (they appear verbatim in traces and
coverage reports).  Only the codes the modelled handlers can return are listed;
each group says which handler returns it and how the client classifies it
(``Errors.java``; ``TransactionCoordinator.scala``, ``ProducerAppendInfo.java``).
"""

from __future__ import annotations

__all__ = ["AUTHORIZATION_ERRORS", "MEMBER_ID_REQUIRED", "RETRIABLE", "Errors"]


class Errors:
    """Error-code names (``org.apache.kafka.common.protocol.Errors``)."""

    NONE = "NONE"
    # Produce / ProducerStateManager (``ProducerAppendInfo.java``): sequence and epoch validation.
    OUT_OF_ORDER_SEQUENCE_NUMBER = "OUT_OF_ORDER_SEQUENCE_NUMBER"
    DUPLICATE_SEQUENCE_NUMBER = "DUPLICATE_SEQUENCE_NUMBER"
    INVALID_PRODUCER_EPOCH = "INVALID_PRODUCER_EPOCH"
    UNKNOWN_PRODUCER_ID = "UNKNOWN_PRODUCER_ID"
    INVALID_TXN_STATE = "INVALID_TXN_STATE"
    NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
    REQUEST_TIMED_OUT = "REQUEST_TIMED_OUT"
    # Transaction coordinator (``TransactionCoordinator.scala``).
    PRODUCER_FENCED = "PRODUCER_FENCED"
    CONCURRENT_TRANSACTIONS = "CONCURRENT_TRANSACTIONS"
    INVALID_PRODUCER_ID_MAPPING = "INVALID_PRODUCER_ID_MAPPING"
    TRANSACTION_ABORTABLE = "TRANSACTION_ABORTABLE"
    NOT_COORDINATOR = "NOT_COORDINATOR"
    COORDINATOR_LOAD_IN_PROGRESS = "COORDINATOR_LOAD_IN_PROGRESS"
    COORDINATOR_NOT_AVAILABLE = "COORDINATOR_NOT_AVAILABLE"
    TRANSACTION_COORDINATOR_FENCED = "TRANSACTION_COORDINATOR_FENCED"
    INVALID_TRANSACTION_TIMEOUT = "INVALID_TRANSACTION_TIMEOUT"
    UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
    NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"
    # Log append errors the transaction coordinator translates (TransactionStateManager.appendTransactionToLog).
    KAFKA_STORAGE_ERROR = "KAFKA_STORAGE_ERROR"
    UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
    MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
    RECORD_LIST_TOO_LARGE = "RECORD_LIST_TOO_LARGE"
    # AddPartitionsToTxnManager: the leader's verification request lost its connection to the coordinator.
    NETWORK_EXCEPTION = "NETWORK_EXCEPTION"
    # WriteTxnMarkers (``TransactionMarkerRequestCompletionHandler``): a marker appended, then the ISR shrank.
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    # Group coordinator (KIP-447, ``OffsetMetadataManager``).
    ILLEGAL_GENERATION = "ILLEGAL_GENERATION"
    UNKNOWN_MEMBER_ID = "UNKNOWN_MEMBER_ID"
    UNSTABLE_OFFSET_COMMIT = "UNSTABLE_OFFSET_COMMIT"
    REBALANCE_IN_PROGRESS = "REBALANCE_IN_PROGRESS"
    FENCED_INSTANCE_ID = "FENCED_INSTANCE_ID"  # a replaced static member (KIP-345, ClassicGroup.validateMember): fatal
    # Authorization (KIP-98 §9; KafkaApis, model.security.checks) and LogValidator.
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
    TOPIC_AUTHORIZATION_FAILED = "TOPIC_AUTHORIZATION_FAILED"
    GROUP_AUTHORIZATION_FAILED = "GROUP_AUTHORIZATION_FAILED"
    CLUSTER_AUTHORIZATION_FAILED = "CLUSTER_AUTHORIZATION_FAILED"
    INVALID_RECORD = "INVALID_RECORD"


#: Errors a produce client retries without failing the batch: those whose exception is a ``RetriableException``
#: (``NotLeaderOrFollowerException``, ``TimeoutException``, ``NotEnoughReplicasException``,
#: ``ConcurrentTransactionsException``, the coordinator-loading ones; ``Sender.canRetry``).  Also the leader's
#: other answers of the class, read from ``clients/.../common/errors/*Exception.java`` (apache/kafka 1eb7644349cb):
#: ``NotEnoughReplicasAfterAppendException`` (a ``RetriableException``), ``KafkaStorageException`` and
#: ``UnknownTopicOrPartitionException`` (``InvalidMetadataException``s) -- before session 33 the model's client
#: failed a batch on them, which no scenario showed until the leader could answer them
#: (``[broker] refusal_error`` / ``delayed_produce_error``, scenario ``reach_idempotence_storage_error``).
RETRIABLE = frozenset(
    {
        Errors.NOT_LEADER_OR_FOLLOWER,
        Errors.NOT_ENOUGH_REPLICAS,
        Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        Errors.KAFKA_STORAGE_ERROR,
        Errors.UNKNOWN_TOPIC_OR_PARTITION,
        Errors.REQUEST_TIMED_OUT,
        Errors.CONCURRENT_TRANSACTIONS,
        Errors.COORDINATOR_LOAD_IN_PROGRESS,
        Errors.COORDINATOR_NOT_AVAILABLE,
        Errors.NOT_COORDINATOR,
        Errors.NETWORK_EXCEPTION,
    }
)

#: Authorization failures: never retried by a client (``AuthorizationException`` is not retriable).
AUTHORIZATION_ERRORS = frozenset(
    {
        Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        Errors.TOPIC_AUTHORIZATION_FAILED,
        Errors.GROUP_AUTHORIZATION_FAILED,
        Errors.CLUSTER_AUTHORIZATION_FAILED,
    }
)


#: KIP-394: a new dynamic member's JoinGroup v4+ is answered with its member id and must be sent again with it.  Not a
#: member of :class:`Errors`: to the client it is a step of the join, not an error of any of its classes (retriable,
#: authorization, fatal), so no handler treats it as one.
MEMBER_ID_REQUIRED = "MEMBER_ID_REQUIRED"
