"""How Kafka's transactional producer reacts to each coordinator answer: a judge of the client model.

Independently of :func:`model.clients.transactional_producer.handle_txn_response`, :func:`unexpected_reaction`
states the state ``TransactionManager`` is in after the ``handleResponse`` of ``InitProducerIdHandler``,
``AddPartitionsToTxnHandler`` and ``EndTxnHandler`` (Kafka 4.0-SNAPSHOT @1eb7644349cb) for each error code:

* COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR (``lookupCoordinator``), COORDINATOR_LOAD_IN_PROGRESS,
  CONCURRENT_TRANSACTIONS: ``reenqueue()`` -- the state is unchanged, the request is sent again;
* PRODUCER_FENCED, INVALID_PRODUCER_EPOCH: ``fatalError(ProducerFencedException)`` -- fatal and fenced;
* TRANSACTION_ABORTABLE: ``abortableError`` -- ABORTABLE_ERROR; while ABORTING_TRANSACTION
  ``transitionToAbortableError`` skips the transition (an AddPartitionsToTxn: the abort goes on), and the
  abort's own EndTxn answered so leaves the producer with only ``close()`` (the model's FATAL, not fenced);
* UNKNOWN_PRODUCER_ID, INVALID_PRODUCER_ID_MAPPING on AddPartitionsToTxn / EndTxn: ``abortableErrorIfPossible``
  -- as TRANSACTION_ABORTABLE with KIP-360 (``canBumpEpoch``), fatal without it;
* INVALID_TXN_STATE and every code InitProducerId's or EndTxn's handler does not name ("Unexpected error in
  ...Response"): fatal, not fenced; AddPartitionsToTxn's handler counts a code it does not name as a partition
  error (``hasPartitionErrors``) and ends with ``abortableError`` -- ABORTABLE_ERROR, skipped while aborting;
* NONE: InitProducerId -> READY; AddPartitionsToTxn -> unchanged (the partitions join the transaction);
  EndTxn -> INITIALIZING exactly when the producer owes an epoch bump (``completeTransaction`` reads
  ``epochBumpRequired``, set by ``abortableErrorIfPossible`` / a failed batch under KIP-360; under TV2 the
  coordinator's end bumps the epoch, KIP-890 part 2, so the caller passes ``bump_required`` false), else READY;
* a producer already FATAL_ERROR stays so;
* authorization errors: InitProducerId answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED or
  CLUSTER_AUTHORIZATION_FAILED is an abortable error after which the Sender fails the pending requests and
  moves the producer to UNINITIALIZED (``Sender.shouldHandleAuthorizationError``, KAFKA-13668, PR #12149), so
  ``initTransactions()`` may be called again; AddPartitionsToTxn / EndTxn answered
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED are fatal (not fenced); AddPartitionsToTxn answered
  TOPIC_AUTHORIZATION_FAILED is abortable (``unauthorizedTopics``; skipped while ABORTING_TRANSACTION).

:func:`unexpected_offsets_reaction` states the same for ``AddOffsetsToTxnHandler`` and ``TxnOffsetCommitHandler``
(the EOS application's two requests). The answer is a ghost label (``client_reaction:...``, property
``client_reacts_as_kafka``).
"""

from __future__ import annotations

from keos.model.protocol.errors import AUTHORIZATION_ERRORS, Errors

__all__ = [
    "invalid_client_transitions",
    "unexpected_batch_failure_reaction",
    "unexpected_offsets_reaction",
    "unexpected_reaction",
]

_RETRIED = (  # no mutate: a table of the judge of client_reacts_as_kafka (a property), not a rule
    Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_COORDINATOR,
    Errors.COORDINATOR_LOAD_IN_PROGRESS,
    Errors.CONCURRENT_TRANSACTIONS,
)
_FENCED = (Errors.PRODUCER_FENCED, Errors.INVALID_PRODUCER_EPOCH)  # no mutate: the judge's table
_IF_POSSIBLE = (Errors.UNKNOWN_PRODUCER_ID, Errors.INVALID_PRODUCER_ID_MAPPING)  # no mutate: the judge's table

#: InitProducerId's abortable authorization errors (``InitProducerIdHandler``; the Sender then uninitializes)
_INIT_AUTHORIZATION = (  # no mutate: the judge's table
    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    Errors.CLUSTER_AUTHORIZATION_FAILED,
)

FATAL = "FATAL_ERROR"
FENCED = "FATAL_ERROR/fenced"
ABORTING = "ABORTING_TRANSACTION"


def _expected(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    request: str, error: str, old: str, kip_360: bool, bump: bool
) -> tuple[str, ...]:
    """The states ``TransactionManager`` can be in after the handler (``FENCED``: fatal, fenced)."""
    if old == FATAL:
        return (FATAL, FENCED)
    if error in AUTHORIZATION_ERRORS:
        return _expected_authorization(request, error, old)
    if error == Errors.NONE:
        return {"InitProducerId": ("READY",), "AddPartitionsToTxn": (old,)}.get(
            request, ("INITIALIZING",) if bump else ("READY",)
        )
    if error in _RETRIED:
        return (old,)
    if error in _FENCED:
        return (FENCED,)
    abortable = (
        error == Errors.TRANSACTION_ABORTABLE
        or (error in _IF_POSSIBLE and request != "InitProducerId" and kip_360)
        or _unexpected_partition_error(request, error)
    )
    if not abortable:
        return (FATAL,)
    if old != ABORTING:
        return ("ABORTABLE_ERROR",)
    return (ABORTING,) if request == "AddPartitionsToTxn" else (FATAL,)


def _unexpected_partition_error(request: str, error: str) -> bool:  # no mutate: the judge's table
    """An AddPartitionsToTxn answer its handler names in no case (``AddPartitionsToTxnHandler``'s final ``else``,
    ``TransactionManager.java`` @1eb7644349cb L1426-1429): a partition error, then ``abortableError``."""
    named = (Errors.NONE, Errors.INVALID_TXN_STATE, Errors.TRANSACTION_ABORTABLE, *_RETRIED, *_FENCED, *_IF_POSSIBLE)
    return request == "AddPartitionsToTxn" and error not in named and error not in AUTHORIZATION_ERRORS


def _expected_authorization(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    request: str, error: str, old: str
) -> tuple[str, ...]:
    """The states after an *_AUTHORIZATION_FAILED answer (``TransactionManager`` handlers and ``Sender``,
    Kafka 4.0-SNAPSHOT @1eb7644349cb)."""
    if request == "InitProducerId" and error in _INIT_AUTHORIZATION:
        return ("UNINITIALIZED",)
    if request == "AddPartitionsToTxn" and error == Errors.TOPIC_AUTHORIZATION_FAILED:
        return (ABORTING,) if old == ABORTING else ("ABORTABLE_ERROR",)
    return (FATAL,)


def unexpected_reaction(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    request: str,
    error: str,
    old: str,
    new: str,
    fenced: bool,
    kip_360: bool,
    producer: int,
    bump_required: bool = False,
    owed: tuple[bool, bool, int] | None = None,
) -> str | None:
    """A ghost label if producer ``producer`` went from state ``old`` to ``new`` (``fenced``: its fatal error is a
    ProducerFencedException) on ``request``'s answer ``error`` other than Kafka's handler does; else ``None``.

    ``owed``: the client's ``epochBumpRequired`` before and after the answer, and the transaction version -- judged
    too (:func:`_unexpected_bump_flag`) when given."""
    got = FENCED if new == FATAL and fenced else new
    if got not in _expected(request, error, old, kip_360, bump_required):  # no branch: the violation side
        return f"client_reaction:{producer}:{request}:{error}:{old}->{got}"
    if owed is None or new == FATAL:  # a producer left with close() only owes nothing
        return None
    before, after, tv = owed
    return _unexpected_bump_flag(request, error, old, before, after, kip_360, tv, producer)


def _unexpected_bump_flag(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    request: str, error: str, old: str, before: bool, after: bool, kip_360: bool, tv: int, producer: int
) -> str | None:
    """Whether the client's ``epochBumpRequired`` after a coordinator answer is ``TransactionManager``'s (trunk
    @1eb7644349cb), under transaction version < 2 (under TV2 the coordinator's end bumps the epoch, KIP-890 part 2):

    * ``abortableErrorIfPossible`` (UNKNOWN_PRODUCER_ID / INVALID_PRODUCER_ID_MAPPING on AddPartitionsToTxn or
      EndTxn) with ``canBumpEpoch()`` (KIP-360) sets it -- also while ABORTING_TRANSACTION, where the abortable
      transition itself is skipped, so the abort ends with InitProducerId(pid, epoch);
    * a retried answer (``reenqueue``), TRANSACTION_ABORTABLE (``abortableError``: the transition only) and
      AddPartitionsToTxn's NONE leave it as it was.

    Any other answer (NONE on InitProducerId / EndTxn, fenced, fatal) is not judged here."""
    if old == FATAL or tv >= 2:
        return None
    if request != "InitProducerId" and error in _IF_POSSIBLE and kip_360:
        want = True
    elif (
        error in _RETRIED
        or error == Errors.TRANSACTION_ABORTABLE
        or (error == Errors.NONE and request == "AddPartitionsToTxn")
        or _unexpected_partition_error(request, error)
    ):
        want = before
    else:
        return None
    if after == want:  # no branch: the other side describes a defect
        return None
    return f"client_reaction:{producer}:{request}:{error}:{old}:epochBumpRequired {before}->{after}"


#: ``TransactionManager.maybeTransitionToErrorState``: the exceptions of a failed batch that make the producer fatal
#: (``ClusterAuthorizationException``, ``TransactionalIdAuthorizationException``; a produce answer is never
#: PRODUCER_FENCED -- INVALID_PRODUCER_EPOCH is ``InvalidProducerEpochException``, abortable, KIP-588).
_BATCH_FATAL = (  # no mutate: the judge's table
    Errors.CLUSTER_AUTHORIZATION_FAILED,
    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
)


def unexpected_batch_failure_reaction(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    error: str,
    old: str,
    new: str,
    fenced: bool,
    kip_360: bool,
    producer: int,
    owed: tuple[bool, int] | None = None,
    owed_before: bool | None = None,
) -> str | None:
    """A ghost label if producer ``producer`` went from ``old`` to ``new`` when a batch of it failed with ``error``
    other than ``TransactionManager.handleFailedBatch`` does (trunk @1eb7644349cb); else ``None``.

    ``maybeTransitionToErrorState``: the authorization exceptions above are fatal (not fenced); every other
    exception -- a produce error (INVALID_TXN_STATE, INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE, a retriable
    error with the retries spent), a delivery timeout -- makes the transaction abortable, skipped while
    ABORTING_TRANSACTION (``transitionToAbortableError``).  A producer without KIP-360 cannot repair a lost
    sequence: OUT_OF_ORDER_SEQUENCE_NUMBER is fatal there.  A fatal producer stays fatal.

    ``owed``: the client's ``epochBumpRequired`` after the failure and the transaction version.  Under TV < 2
    ``maybeTransitionToErrorState`` sets it for every abortable failure when ``canBumpEpoch() && !isCompleting()``
    (KIP-360): a producer that was IN_TRANSACTION or ABORTABLE_ERROR owes the bump afterwards; one that was
    COMMITTING_TRANSACTION (``isCompleting``) owes it only if it did before (``owed_before``, when given).
    """
    if old == FATAL:
        want: tuple[str, ...] = (FATAL, FENCED)
    elif error in _BATCH_FATAL or (error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and not kip_360):
        want = (FATAL,)
    elif old == ABORTING:
        want = (ABORTING,)
    else:
        want = ("ABORTABLE_ERROR",)
    got = FENCED if new == FATAL and fenced else new
    if got not in want:  # no branch: the violation side, only a defect takes it
        return f"client_reaction:{producer}:Produce:{error}:{old}->{got}"
    if owed is None or want != ("ABORTABLE_ERROR",) or not kip_360:
        return None
    after, tv = owed
    stale_owed = owed_before is not None and after != owed_before
    if old == "COMMITTING_TRANSACTION" and stale_owed and tv < 2:  # no branch: the violation side
        return f"client_reaction:{producer}:Produce:{error}:{old}:epochBumpRequired {owed_before}->{after}"
    if tv >= 2 or old not in ("IN_TRANSACTION", "ABORTABLE_ERROR") or after:  # no branch: else a defect
        return None
    return f"client_reaction:{producer}:Produce:{error}:{old}:epochBumpRequired ->{after}"


#: The ``RetriableException`` codes (``org.apache.kafka.common.errors``) an AddOffsetsToTxn or TxnOffsetCommit answer
#: can carry: ``AddOffsetsToTxnHandler`` re-enqueues them (COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR after a
#: coordinator lookup), ``TxnOffsetCommitHandler`` keeps the partition's offset pending and retries (the same two
#: and REQUEST_TIMED_OUT after a lookup, ``continue`` for the others).
_OFFSETS_RETRIED = (  # no mutate: the judge's table
    *_RETRIED,
    Errors.NOT_ENOUGH_REPLICAS,
    Errors.REQUEST_TIMED_OUT,
    Errors.NOT_LEADER_OR_FOLLOWER,
    Errors.UNKNOWN_TOPIC_OR_PARTITION,
    Errors.NETWORK_EXCEPTION,
)

#: The codes each handler makes ``abortableError`` (``abortableErrorIfPossible`` for UNKNOWN_PRODUCER_ID /
#: INVALID_PRODUCER_ID_MAPPING on AddOffsetsToTxn, KIP-360, is added by the judge).
_OFFSETS_ABORTABLE: dict[str, tuple[str, ...]] = {  # no mutate: the judge's table
    "AddOffsetsToTxn": (Errors.GROUP_AUTHORIZATION_FAILED, Errors.TRANSACTION_ABORTABLE),
    # CommitFailedException for a group metadata mismatch (KIP-447); FENCED_INSTANCE_ID, TRANSACTION_ABORTABLE
    "TxnOffsetCommit": (
        Errors.GROUP_AUTHORIZATION_FAILED,
        Errors.FENCED_INSTANCE_ID,
        Errors.TRANSACTION_ABORTABLE,
        Errors.UNKNOWN_MEMBER_ID,
        Errors.ILLEGAL_GENERATION,
    ),
}


def _expected_offsets(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    request: str, error: str, old: str, kip_360: bool
) -> tuple[str, ...]:
    """The states ``TransactionManager`` can be in after ``AddOffsetsToTxnHandler`` / ``TxnOffsetCommitHandler``
    read ``error`` in state ``old`` (``FENCED``: fatal, fenced)."""
    if old == FATAL:
        return (FATAL, FENCED)
    if error == Errors.NONE or error in _OFFSETS_RETRIED:
        return (old,)
    if error in _FENCED:  # "we could still receive INVALID_PRODUCER_EPOCH ...": ProducerFencedException
        return (FENCED,)
    abortable = error in _OFFSETS_ABORTABLE[request] or (
        request == "AddOffsetsToTxn" and error in _IF_POSSIBLE and kip_360
    )
    if not abortable:  # TRANSACTIONAL_ID_AUTHORIZATION_FAILED, INVALID_TXN_STATE, "Unexpected error in ..."
        return (FATAL,)
    return (ABORTING,) if old == ABORTING else ("ABORTABLE_ERROR",)  # transitionToAbortableError skips ABORTING


def unexpected_offsets_reaction(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    request: str, error: str, old: str, new: str, fenced: bool, kip_360: bool, producer: int
) -> str | None:
    """A ghost label if producer ``producer`` went from ``old`` to ``new`` on the answer ``error`` to its
    AddOffsetsToTxn or TxnOffsetCommit (``request``) other than Kafka's handler does; else ``None``.

    The consume-transform-produce half of :func:`unexpected_reaction`, stated from ``TransactionManager``'s
    ``AddOffsetsToTxnHandler`` and ``TxnOffsetCommitHandler`` (Kafka 4.0-SNAPSHOT @1eb7644349cb), independently of
    the model's tables (``transactional_producer.COORDINATOR_ERROR_CLASSES``, ``eos.RETRIABLE_OFFSET_ERRORS`` /
    ``ABORTABLE_OFFSET_ERRORS``):

    * NONE and every ``RetriableException`` code: the state is unchanged (the request is re-enqueued or retried);
    * PRODUCER_FENCED, INVALID_PRODUCER_EPOCH: ``fatalError(ProducerFencedException)``;
    * AddOffsetsToTxn: GROUP_AUTHORIZATION_FAILED and TRANSACTION_ABORTABLE ``abortableError``; UNKNOWN_PRODUCER_ID /
      INVALID_PRODUCER_ID_MAPPING ``abortableErrorIfPossible`` -- abortable with KIP-360 (``canBumpEpoch``), fatal
      without; TRANSACTIONAL_ID_AUTHORIZATION_FAILED, INVALID_TXN_STATE and any other code fatal;
    * TxnOffsetCommit: GROUP_AUTHORIZATION_FAILED, FENCED_INSTANCE_ID, TRANSACTION_ABORTABLE, UNKNOWN_MEMBER_ID,
      ILLEGAL_GENERATION ``abortableError``; any other code fatal ("Unexpected error in TxnOffsetCommitResponse");
    * an abortable error while ABORTING_TRANSACTION is skipped; a fatal producer stays fatal.

    KIP-890 part 2 / KIP-1050: TRANSACTION_ABORTABLE is the code a broker uses to say "abort and go on" -- a
    producer it fences or makes fatal is a producer the application must close for nothing.
    """
    got = FENCED if new == FATAL and fenced else new
    if got in _expected_offsets(request, error, old, kip_360):  # no branch: the other side describes a defect
        return None
    return f"client_reaction:{producer}:{request}:{error}:{old}->{got}"


#: ``TransactionManager.State.isTransitionValid`` (Kafka 4.0-SNAPSHOT @1eb7644349cb): target -> valid sources.
#: FATAL_ERROR may follow any state and is never a source.
_VALID_PREVIOUS: dict[str, tuple[str, ...]] = {  # no mutate: the judge's table (client_transitions_valid)
    "UNINITIALIZED": ("READY", "ABORTABLE_ERROR"),
    "INITIALIZING": ("UNINITIALIZED", "ABORTING_TRANSACTION"),
    "READY": ("INITIALIZING", "COMMITTING_TRANSACTION", "ABORTING_TRANSACTION"),
    "IN_TRANSACTION": ("READY",),
    "COMMITTING_TRANSACTION": ("IN_TRANSACTION",),
    "ABORTING_TRANSACTION": ("IN_TRANSACTION", "ABORTABLE_ERROR"),
    "ABORTABLE_ERROR": ("IN_TRANSACTION", "COMMITTING_TRANSACTION", "ABORTABLE_ERROR", "INITIALIZING"),
}


def _valid_client_transition(  # no mutate: the judge of client_transitions_valid (a property), not a rule
    src: str, dst: str, through: tuple[str, ...] = ()
) -> bool:
    if dst == FATAL:
        return True
    if src in _VALID_PREVIOUS.get(dst, ()):
        return True
    # a step that composes application calls names the states it passes through (EOS's Process: beginTransaction,
    # then a send() refused synchronously makes the transaction abortable, KAFKA-9279)
    if any(src in _VALID_PREVIOUS[t] and t in _VALID_PREVIOUS.get(dst, ()) for t in through):
        return True
    # one model step may take two of TransactionManager's: an InitProducerId denied by an ACL is an abortable
    # error after which the Sender moves the producer to UNINITIALIZED (Sender.shouldHandleAuthorizationError)
    return src in _VALID_PREVIOUS["ABORTABLE_ERROR"] and "ABORTABLE_ERROR" in _VALID_PREVIOUS.get(dst, ())


def invalid_client_transitions(  # no mutate: the judge of client_transitions_valid (a property), not a rule
    before: tuple[str, ...], after: tuple[str, ...], through: tuple[str, ...] = ()
) -> list[str]:
    """Ghost labels ``client_transition:<i>:<old>-><new>`` for every producer whose ``TransactionManager`` state
    changed along an edge ``State.isTransitionValid`` forbids (``transitionTo`` throws IllegalStateException);
    ``through``: the states a composite step of the model passes through (each of its edges is judged)."""
    return [
        f"client_transition:{i}:{old}->{new}"
        for i, (old, new) in enumerate(zip(before, after, strict=True))
        if old != new and not _valid_client_transition(old, new, through)
    ]
