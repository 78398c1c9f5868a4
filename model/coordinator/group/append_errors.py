"""What a group request is answered when the coordinator's write to ``__consumer_offsets`` fails.

The group coordinator writes the group metadata (the leader's SyncGroup, a static member's replacement) and the
offsets of an OffsetCommit as records of its ``__consumer_offsets`` partition.  The append goes through the replica
manager (Scala coordinator, 2.x-3.9) or the coordinator runtime's partition writer (Kafka 4.0), and fails with a
*storage* error -- the partition's leadership moved away (NOT_LEADER_OR_FOLLOWER), ``min.insync.replicas`` is not met
(NOT_ENOUGH_REPLICAS), the ``acks=all`` wait timed out (REQUEST_TIMED_OUT), the log directory failed
(KAFKA_STORAGE_ERROR), the partition is unknown on this broker (UNKNOWN_TOPIC_OR_PARTITION).  Those are the broker's
errors, not the group protocol's: the consumer's response handlers (``AbstractCoordinator``'s JoinGroup/SyncGroup
handlers, ``ConsumerCoordinator.OffsetCommitResponseHandler``) know the coordinator errors and raise every other
error from ``poll()`` as fatal ("Unexpected error in ... response").  The coordinator therefore translates:

* Kafka 4.0 (trunk 1eb7644): ``GroupMetadataManager.appendGroupMetadataErrorToResponseError`` for the group
  metadata, ``CoordinatorOperationExceptionHelper.handleOperationException`` for the offsets:
  UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT -> COORDINATOR_NOT_AVAILABLE;
  NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR -> NOT_COORDINATOR (both make the client find the coordinator again
  and retry with its member id and generation).
* The Scala coordinator (``kafka.coordinator.group.GroupMetadataManager``, 2.x-3.9; still in trunk 1eb7644):
  ``storeGroup`` the same except REQUEST_TIMED_OUT -> REBALANCE_IN_PROGRESS (KAFKA-10870's JoinGroup answer);
  ``storeOffsets`` (``maybeConvertOffsetCommitError``) the same two groups, and REQUEST_TIMED_OUT passed through as
  itself (the consumer's ``OffsetCommitResponseHandler`` retries it like COORDINATOR_NOT_AVAILABLE).

Real bugs lived in this translation: KAFKA-3590 (fixed in 0.10.1, commit 6a13a3dbadd) -- NOT_ENOUGH_REPLICAS was not
mapped and reached the consumer, which failed; KAFKA-4362 (0.10.1.1, commit 4b003d8bcff) -- after the offsets
partition moved to another broker the old coordinator's append path threw instead of answering NOT_COORDINATOR, and
the consumer got an unexpected error.  The model's fault ``group_append_failure`` therefore draws the *storage*
error and this module translates it; the judge is the consumers' promise that no transient broker fault makes a
consumer fail (``consumers_react_as_kafka``).
"""

from __future__ import annotations

from keos.model.protocol.errors import Errors

__all__ = [
    "COMMIT_APPEND_ANSWERS",
    "FETCH_FAILURES",
    "FETCH_FAILURE_ANSWERS",
    "GROUP_APPEND_ANSWERS",
    "INACTIVE",
    "STORAGE_APPEND_ERRORS",
    "append_choices",
    "commit_append_answer",
    "fetch_failure_answer",
    "group_append_answer",
]

#: The transient errors an append to ``__consumer_offsets`` may fail with (the record-too-large errors map to
#: UNKNOWN_SERVER_ERROR / INVALID_COMMIT_OFFSET_SIZE, fatal to the client by design, and are not modelled).
STORAGE_APPEND_ERRORS = (
    Errors.NOT_ENOUGH_REPLICAS,
    Errors.NOT_LEADER_OR_FOLLOWER,
    Errors.REQUEST_TIMED_OUT,
    Errors.KAFKA_STORAGE_ERROR,
    Errors.UNKNOWN_TOPIC_OR_PARTITION,
)

#: Kafka's translation of a failed group-metadata append, as documented (``(storage error, scala) -> answer``): the
#: table the fault's choices are drawn from, independent of :func:`group_append_answer`, the code under test.
GROUP_APPEND_ANSWERS: dict[tuple[str, bool], str] = {  # no mutate: docs table (choices, not the translation)
    **{(e, scala): Errors.COORDINATOR_NOT_AVAILABLE
       for e in (Errors.NOT_ENOUGH_REPLICAS, Errors.UNKNOWN_TOPIC_OR_PARTITION) for scala in (False, True)},
    **{(e, scala): Errors.NOT_COORDINATOR
       for e in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR) for scala in (False, True)},
    (Errors.REQUEST_TIMED_OUT, False): Errors.COORDINATOR_NOT_AVAILABLE,
    (Errors.REQUEST_TIMED_OUT, True): Errors.REBALANCE_IN_PROGRESS,
}
#: The same for a failed OffsetCommit append.
COMMIT_APPEND_ANSWERS: dict[tuple[str, bool], str] = {  # no mutate: docs table (choices, not the translation)
    **{k: v for k, v in GROUP_APPEND_ANSWERS.items() if k[0] != Errors.REQUEST_TIMED_OUT},
    (Errors.REQUEST_TIMED_OUT, False): Errors.COORDINATOR_NOT_AVAILABLE,
    (Errors.REQUEST_TIMED_OUT, True): Errors.REQUEST_TIMED_OUT,
}


def append_choices(table: dict[tuple[str, bool], str], answers: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    """The (storage error, Scala coordinator?) pairs a fault draws: those whose documented answer is one of
    ``answers``, the Scala coordinator only where its translation differs from Kafka 4.0's."""
    return tuple((e, scala) for e in STORAGE_APPEND_ERRORS for scala in (False, True)
                 if table[e, scala] in answers and (not scala or table[e, True] != table[e, False]))


def _translate(storage_error: str, maps_replication_errors: bool) -> str | None:
    """The translation both paths share; None: the error is not one of the two coordinator groups."""
    if storage_error == Errors.UNKNOWN_TOPIC_OR_PARTITION:
        return Errors.COORDINATOR_NOT_AVAILABLE
    if storage_error == Errors.NOT_ENOUGH_REPLICAS and maps_replication_errors:
        return Errors.COORDINATOR_NOT_AVAILABLE
    if storage_error in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return Errors.NOT_COORDINATOR
    return None


def group_append_answer(storage_error: str, scala: bool, maps_replication_errors: bool = True) -> str:
    """The answer to the JoinGroup/SyncGroup whose group-metadata append failed with ``storage_error`` (Kafka 4.0
    ``appendGroupMetadataErrorToResponseError``; ``scala``: the 2.x-3.9 ``storeGroup``).  An error neither names is
    passed through (Kafka's ``default: return appendError``).  ``maps_replication_errors=False`` is the weakened
    variant append_not_enough_replicas_unmapped (KAFKA-3590: NOT_ENOUGH_REPLICAS passed through to the client)."""
    answer = _translate(storage_error, maps_replication_errors)
    if answer is not None:
        return answer
    if storage_error == Errors.REQUEST_TIMED_OUT:
        return Errors.REBALANCE_IN_PROGRESS if scala else Errors.COORDINATOR_NOT_AVAILABLE
    return storage_error


def commit_append_answer(storage_error: str, scala: bool, maps_replication_errors: bool = True) -> str:
    """The answer to the OffsetCommit whose append failed with ``storage_error`` (Kafka 4.0
    ``handleOperationException``; ``scala``: the 2.x-3.9 ``storeOffsets``, which passes REQUEST_TIMED_OUT through)."""
    answer = _translate(storage_error, maps_replication_errors)
    if answer is not None:
        return answer
    if storage_error == Errors.REQUEST_TIMED_OUT and not scala:
        return Errors.COORDINATOR_NOT_AVAILABLE
    return storage_error


# -- OffsetFetch --------------------------------------------------------------------------------------------------
#
# The Java consumer fetches the committed offsets of the partitions it is assigned with ``requireStable=true``
# (KIP-447, ``ConsumerCoordinator.fetchCommittedOffsets``).  Kafka 4.0's coordinator serves such a fetch as a *write*
# operation of the coordinator runtime with no records (``GroupCoordinatorService.fetchOffsets``, trunk 1eb7644: "we
# use a write operation when the flag is set to guarantee that the fetch is based on all the available offsets"): it
# completes only once the partition's high watermark reaches it, so it fails as an append does -- REQUEST_TIMED_OUT
# when a lagging replica or a zombie coordinator holds the high watermark back, NOT_ENOUGH_REPLICAS,
# UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR.  A coordinator still loading the partition
# answers COORDINATOR_LOAD_IN_PROGRESS, one shutting down (``!isActive``) COORDINATOR_NOT_AVAILABLE.
#
# Two real bugs lived on this path (Kafka 3.9, August 2024): KAFKA-17267 (commit 7a8edffad10) -- the write's failure
# reached the client as itself (REQUEST_TIMED_OUT ...), which consumers before 3.9 do not retry: the coordinator now
# answers NOT_COORDINATOR for the timeout class (``handleOffsetFetchException``), which every client retries after a
# coordinator lookup; KAFKA-17279 (commit c2074388232) -- the consumer's ``OffsetFetchResponseHandler`` knew only
# COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR and raised COORDINATOR_NOT_AVAILABLE and every other retriable
# error as "Unexpected error in fetch offset response".

#: The coordinator is shutting down (``GroupCoordinatorService.isActive`` false): a condition, not a storage error.
INACTIVE = "INACTIVE"
#: What a requireStable OffsetFetch may meet instead of the offsets: the write's storage errors, the partition still
#: loading, the coordinator inactive.
FETCH_FAILURES = (*STORAGE_APPEND_ERRORS, Errors.COORDINATOR_LOAD_IN_PROGRESS, INACTIVE)
#: Kafka 4.0's answer to each, as documented (``GroupCoordinatorService.fetchOffsets`` / ``handleOffsetFetchException``
#: / ``handleOperationException``, trunk 1eb7644): the table the fault's choices and the judge's expectation come
#: from, independent of :func:`fetch_failure_answer`, the code under test.
FETCH_FAILURE_ANSWERS: dict[str, str] = {  # no mutate: docs table (choices, not the translation)
    Errors.NOT_ENOUGH_REPLICAS: Errors.NOT_COORDINATOR,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.REQUEST_TIMED_OUT: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.NOT_COORDINATOR,
    Errors.COORDINATOR_LOAD_IN_PROGRESS: Errors.COORDINATOR_LOAD_IN_PROGRESS,
    INACTIVE: Errors.COORDINATOR_NOT_AVAILABLE,
}


def fetch_failure_answer(failure: str, remaps_write_failures: bool = True) -> str:
    """Kafka 4.0's answer to a requireStable OffsetFetch that meets ``failure`` (:data:`FETCH_FAILURES`):
    ``isActive`` false -> COORDINATOR_NOT_AVAILABLE; a loading partition -> COORDINATOR_LOAD_IN_PROGRESS (passed
    through by ``handleOperationException``); the write's UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS and
    REQUEST_TIMED_OUT -> NOT_COORDINATOR (``handleOffsetFetchException``, KAFKA-17267: consumers before 3.9 retry
    neither REQUEST_TIMED_OUT nor COORDINATOR_NOT_AVAILABLE, and a lookup finds a zombie coordinator out);
    NOT_LEADER_OR_FOLLOWER and KAFKA_STORAGE_ERROR -> NOT_COORDINATOR (``handleOperationException``).
    ``remaps_write_failures=False`` is the weakened variant no_kafka_17267_fix (before it, no handler caught the write
    operation's exception: the timeout class reached the client as itself)."""
    if failure == INACTIVE:
        return Errors.COORDINATOR_NOT_AVAILABLE
    if failure == Errors.COORDINATOR_LOAD_IN_PROGRESS:
        return failure
    timeouts = (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS, Errors.REQUEST_TIMED_OUT)
    if failure in timeouts and not remaps_write_failures:  # no branch: weakened variant no_kafka_17267_fix only
        return failure
    if failure in (*timeouts, Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
        return Errors.NOT_COORDINATOR
    return failure  # unreachable: FETCH_FAILURES are all named above
