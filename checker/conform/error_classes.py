"""How Kafka's producer classifies the errors a conformance run can see.

A client reports every failure with a class that decides what the application
must do next; keos compares the class a real client gave with the class Kafka's
own producer (``org.apache.kafka.clients.producer.internals.TransactionManager``
and ``Sender``) gives the same error code:

``retriable``  the client retries by itself (``RetriableException`` in
               ``org.apache.kafka.common.errors``): leader moves, coordinator
               moves, timeouts, ``CONCURRENT_TRANSACTIONS``.
``abortable``  the transaction must be aborted, the producer lives on
               (``TRANSACTION_ABORTABLE``, KIP-890; ``UNKNOWN_PRODUCER_ID`` and
               ``OUT_OF_ORDER_SEQUENCE_NUMBER`` in a transaction since KIP-360; an
               idempotent producer bumps its epoch and goes on).
``fatal``      the producer must be closed: it was fenced by a newer instance of
               its transactional.id (``PRODUCER_FENCED``, KIP-588; the epoch check
               of KIP-98 §5.1) or is not authorized.

A retriable error may still reach the application once the client gives up
(delivery timeout); inside a transaction the client then asks for an abort, so
``abortable`` is accepted for it too.  A retriable error reported as fatal, or
a fencing error reported as retriable, is a ``wrong-error-class`` anomaly.
"""

from __future__ import annotations

__all__ = ["ALIASES", "FENCING_ERRORS", "RETRIABLE", "client_class", "expected_classes", "kafka_name"]

#: librdkafka's names for codes Kafka has since renamed (``rd_kafka_resp_err_t`` vs ``Errors``).
ALIASES = {"NOT_LEADER_FOR_PARTITION": "NOT_LEADER_OR_FOLLOWER"}


def kafka_name(name: str) -> str:
    """The Kafka ``Errors`` name for a client's error name."""
    return ALIASES.get(name, name)


#: Error names Kafka's clients retry (``RetriableException`` subclasses).  The model's
#: own retriable set (``keos.model.protocol.errors.RETRIABLE``) is a subset of these.
RETRIABLE = frozenset(
    {
        "NOT_LEADER_OR_FOLLOWER",
        "LEADER_NOT_AVAILABLE",
        "REQUEST_TIMED_OUT",
        "NOT_ENOUGH_REPLICAS",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "COORDINATOR_NOT_AVAILABLE",
        "NOT_COORDINATOR",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "CONCURRENT_TRANSACTIONS",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "NETWORK_EXCEPTION",
        "KAFKA_STORAGE_ERROR",  # KafkaStorageException extends InvalidMetadataException (Kafka 4.0)
    }
)

#: Errors that tell a producer a newer instance of its transactional.id took over
#: (librdkafka reports them as ``_FENCED`` once it has raised the fatal error).
FENCING_ERRORS = frozenset({"PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "_FENCED"})

_EXPECTED: dict[str, frozenset[str]] = {
    **{name: frozenset({"retriable", "abortable"}) for name in RETRIABLE},
    "PRODUCER_FENCED": frozenset({"fatal"}),
    "_FENCED": frozenset({"fatal"}),
    "INVALID_PRODUCER_EPOCH": frozenset({"fatal", "abortable"}),
    "TRANSACTIONAL_ID_AUTHORIZATION_FAILED": frozenset({"fatal"}),
    "TRANSACTION_ABORTABLE": frozenset({"abortable"}),
    # KIP-360: the producer survives a lost producer state or a sequence gap -- an idempotent producer
    # bumps its epoch and restarts the partition's sequences, a transactional one aborts and bumps
    # (``TransactionManager.handleFailedBatch``); the failed batch may reach the application.
    "OUT_OF_ORDER_SEQUENCE_NUMBER": frozenset({"retriable", "abortable", "other"}),
    "UNKNOWN_PRODUCER_ID": frozenset({"retriable", "abortable", "other"}),
}


def expected_classes(error: str) -> frozenset[str]:
    """The classes Kafka's producer gives ``error``; empty when keos has no rule for it."""
    return _EXPECTED.get(error, frozenset())


def client_class(*, fatal: bool, abortable: bool, retriable: bool) -> str:
    """One class from a client's flags (librdkafka: ``fatal()``, ``txn_requires_abort()``, ``retriable()``)."""
    if fatal:
        return "fatal"
    if abortable:
        return "abortable"
    if retriable:
        return "retriable"
    return "other"
