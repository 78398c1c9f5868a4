"""Kafka's answer table for the transaction coordinator's requests: for each (request, state the request found,
producer id/epoch relation) pair, the one error Kafka answers and the state it moves the transaction to.

A judge, not a handler (property ``coordinator_answers_per_kafka_table``).  :mod:`response_errors` states
only a *necessary* condition per error code (an error Kafka can return somewhere near that state); this table
is *exact*: the first row whose condition holds gives Kafka's answer, so a handler that answers a legal but
different error (CONCURRENT_TRANSACTIONS where Kafka fences, TRANSACTION_ABORTABLE where Kafka says
CONCURRENT_TRANSACTIONS), accepts a request Kafka refuses, refuses one Kafka accepts, or moves the entry to
another (valid) state than Kafka's request does, is caught on every path the scenarios drive -- including the
partition leaders' verifications (KIP-890) and the TV2 implicit add.

Rows follow the handlers in the order their checks run (apache/kafka ``core/src/main/scala/kafka/coordinator/
transaction/TransactionCoordinator.scala`` @1eb7644349cb, Kafka 4.0-SNAPSHOT, 2024-10, with the 4.0 changes
the model cites: KAFKA-18464 / PR #18467 (CONCURRENT_TRANSACTIONS before the EndTxn epoch check), KAFKA-18660 /
PR #18730 (AddPartitionsToTxn's pending check first); ``TransactionMetadata.scala`` prepareIncrementProducerEpoch,
prepareFenceProducerEpoch, prepareAddPartitions, prepareAbortOrCommit):

* ``handleInitProducerId`` / ``prepareInitProducerIdTransit``: pending -> CONCURRENT_TRANSACTIONS;
  ``isValidProducerId`` fails -> PRODUCER_FENCED; Prepare* -> CONCURRENT_TRANSACTIONS; Ongoing -> the epoch
  fence (PrepareAbort) answered CONCURRENT_TRANSACTIONS; Empty/Complete* -> Empty (bump, KIP-360 retry by
  ``lastProducerEpoch``, or a new producer id at an exhausted epoch), else PRODUCER_FENCED;
* ``handleAddPartitionsToTransaction`` (also the TV2 verification): pending -> CONCURRENT_TRANSACTIONS; foreign
  producer id -> INVALID_PRODUCER_ID_MAPPING; other epoch -> PRODUCER_FENCED; Prepare* ->
  CONCURRENT_TRANSACTIONS; Ongoing with every partition in -> NONE, nothing written; else -> Ongoing;
* ``handleVerifyPartitionsInTransaction`` (TV1 verifyOnly): no entry/foreign id -> INVALID_PRODUCER_ID_MAPPING;
  other epoch -> PRODUCER_FENCED; Prepare* -> CONCURRENT_TRANSACTIONS; partition in -> NONE else
  TRANSACTION_ABORTABLE (pending is deliberately not checked);
* ``endTransaction`` TV0/TV1 (strict epoch) and TV2 (``isValidEpoch``: the retry epoch, the overflow retry).

A version rule the model makes switchable (:class:`~keos.model.coordinator.transaction.transaction_coordinator.
CoordinatorConfig`) is read from the configuration: the table states what the configured Kafka answers.  With
the append in flight (``append`` None) a transition's answer comes in the append's callback: NONE here.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.coordinator.transaction.transaction_state import TransactionState as S
from keos.model.protocol.errors import Errors

__all__ = [
    "Ask",
    "Target",
    "append_callback_mismatch",
    "kafka_answer",
    "kafka_append_callback",
    "kafka_target",
    "table_mismatch",
]

_PREPARE = (S.PREPARE_COMMIT, S.PREPARE_ABORT)  # no mutate: a table of the judge (a property), not a rule
_COMPLETE = (S.COMPLETE_COMMIT, S.COMPLETE_ABORT)  # no mutate: a table of the judge (a property), not a rule
_E = Errors


class Ask(NamedTuple):
    """What the judge reads of a request and the entry it found (``md`` None: no entry for the id)."""

    kind: str
    md: Any
    pid: int
    epoch: int
    committed: bool
    partitions: tuple[int, ...]
    tv: int
    cfg: Any
    loading: bool = False  # the coordinator is loading the id's __transaction_state partition


def _exhausted(epoch: int, cfg: Any) -> bool:  # no mutate: the judge (a property), not a rule
    return epoch >= cfg.max_producer_epoch - 1


def _pending(a: Ask) -> bool:  # no mutate: the judge (a property), not a rule
    return bool(a.md.pending_state)


def _pending_not_fence(a: Ask) -> bool:  # no mutate: the judge (a property), not a rule
    return a.md.pending_state not in ("", S.PREPARE_EPOCH_FENCE)


def _valid_init_pid(a: Ask) -> bool:  # no mutate: the judge (a property), not a rule
    """``isValidProducerId``: no expected id, a new entry, the entry's id, or its previous id at an exhausted epoch."""
    md = a.md
    return (
        a.pid < 0
        or md.producer_epoch == -1
        or a.pid == md.producer_id
        or (a.pid == md.prev_producer_id and _exhausted(a.epoch, a.cfg))
    )


def _overflow_retry(a: Ask) -> bool:  # no mutate: the judge (a property), not a rule
    """TV2 ``retryOnOverflow``: the EndTxn retry of the previous id at an exhausted epoch, after the rotation."""
    md = a.md
    return (
        a.pid == md.prev_producer_id and _exhausted(a.epoch, a.cfg) and md.producer_epoch == 0 and md.state in _COMPLETE
    )


def _current(a: Ask) -> bool:  # no mutate: the judge (a property), not a rule
    return (a.pid, a.epoch) == (a.md.producer_id, a.md.producer_epoch)


def _retry(a: Ask) -> bool:  # no mutate: the judge (a property), not a rule
    """TV2 ``endTxnEpochBumped`` or ``retryOnOverflow``: a retry of the EndTxn that moved the epoch."""
    md = a.md
    return (a.pid == md.producer_id and a.epoch == md.producer_epoch - 1) or _overflow_retry(a)


def _same_end(a: Ask) -> bool:  # no mutate: the judge (a property), not a rule
    """The entry ended (or is ending) the way the EndTxn asks."""
    return a.md.state in ((S.PREPARE_COMMIT, S.COMPLETE_COMMIT) if a.committed else (S.PREPARE_ABORT, S.COMPLETE_ABORT))


def _end_target(a: Ask) -> str:  # no mutate: the judge (a property), not a rule
    return S.PREPARE_COMMIT if a.committed else S.PREPARE_ABORT


def _init(a: Ask) -> tuple[str, str]:  # no mutate: the judge (a property), not a rule
    md = a.md
    if md is None:
        return _E.NONE, S.EMPTY
    if _pending(a):
        return _E.CONCURRENT_TRANSACTIONS, ""
    if not _valid_init_pid(a):
        return _E.PRODUCER_FENCED, ""
    if md.state in _PREPARE:
        return _E.CONCURRENT_TRANSACTIONS, ""
    if md.state == S.ONGOING:
        return _E.CONCURRENT_TRANSACTIONS, S.PREPARE_ABORT
    if _exhausted(md.producer_epoch, a.cfg) and a.epoch in (-1, md.producer_epoch):
        return _E.NONE, S.EMPTY
    if a.epoch < 0 or a.epoch == md.producer_epoch or md.producer_epoch == -1:
        return _E.NONE, S.EMPTY
    if a.epoch == md.last_producer_epoch and a.cfg.init_pid_retry_by_last_epoch:
        return _E.NONE, S.EMPTY
    return _E.PRODUCER_FENCED, ""


def _add(a: Ask) -> tuple[str, str]:  # no mutate: the judge (a property), not a rule
    md = a.md
    if md is None:
        return _E.INVALID_PRODUCER_ID_MAPPING, ""
    if _pending(a):
        return _E.CONCURRENT_TRANSACTIONS, ""
    if a.pid != md.producer_id:
        return _E.INVALID_PRODUCER_ID_MAPPING, ""
    if a.epoch != md.producer_epoch:
        return _E.PRODUCER_FENCED, ""
    if md.state in _PREPARE:
        return _E.CONCURRENT_TRANSACTIONS, ""
    if md.state == S.ONGOING and set(a.partitions) <= set(md.partitions):
        return _E.NONE, ""
    return _E.NONE, S.ONGOING


def _verify(a: Ask) -> tuple[str, str]:  # no mutate: the judge (a property), not a rule
    md = a.md
    if md is None or a.pid != md.producer_id:
        return _E.INVALID_PRODUCER_ID_MAPPING, ""
    if a.epoch != md.producer_epoch:
        return _E.PRODUCER_FENCED, ""
    if md.state in _PREPARE:
        return _E.CONCURRENT_TRANSACTIONS, ""
    return (_E.NONE if set(a.partitions) <= set(md.partitions) else _E.TRANSACTION_ABORTABLE), ""


def _end_tv1(a: Ask) -> tuple[str, str]:  # no mutate: the judge (a property), not a rule
    md = a.md
    if md is None or a.pid != md.producer_id:
        return _E.INVALID_PRODUCER_ID_MAPPING, ""
    if _pending_not_fence(a) and a.cfg.concurrent_before_epoch_check:
        return _E.CONCURRENT_TRANSACTIONS, ""
    if a.epoch != md.producer_epoch:
        return _E.PRODUCER_FENCED, ""
    if _pending_not_fence(a):
        return _E.CONCURRENT_TRANSACTIONS, ""
    if md.state == S.ONGOING:
        return _E.NONE, _end_target(a)
    if md.state in _COMPLETE and _same_end(a):
        return _E.NONE, ""
    if md.state in _PREPARE and _same_end(a):
        return _E.CONCURRENT_TRANSACTIONS, ""
    return _E.INVALID_TXN_STATE, ""


def _end_tv2(a: Ask) -> tuple[str, str]:  # no mutate: the judge (a property), not a rule
    md = a.md
    if md is None or (a.pid != md.producer_id and not _overflow_retry(a)):
        return _E.INVALID_PRODUCER_ID_MAPPING, ""
    if _pending_not_fence(a) or (md.state in _PREPARE and a.cfg.concurrent_before_epoch_check):
        if a.cfg.concurrent_before_epoch_check:
            return _E.CONCURRENT_TRANSACTIONS, ""
        valid = _current(a) if md.state in (S.ONGOING, S.EMPTY) else _retry(a)
        return (_E.CONCURRENT_TRANSACTIONS if valid else _E.PRODUCER_FENCED), ""
    if md.state == S.ONGOING:
        return (_E.NONE, _end_target(a)) if _current(a) else (_E.PRODUCER_FENCED, "")
    if md.state in _PREPARE:
        if not _retry(a):
            return _E.PRODUCER_FENCED, ""
        return (_E.CONCURRENT_TRANSACTIONS if _same_end(a) else _E.INVALID_TXN_STATE), ""
    if not a.committed and _current(a):  # the TV2 empty abort (PrepareAbort from Empty/Complete*)
        return (_E.NONE, S.PREPARE_ABORT) if a.cfg.tv2_empty_abort_in_table else (_E.UNKNOWN_SERVER_ERROR, "")
    if _retry(a) and _same_end(a):
        return _E.NONE, ""
    if _retry(a) and a.committed and md.state == S.COMPLETE_ABORT and not a.cfg.commit_retry_after_abort_fenced:
        return _E.INVALID_TXN_STATE, ""
    if _retry(a) and not a.committed and md.state == S.COMPLETE_COMMIT:
        return _E.INVALID_TXN_STATE, ""
    if _current(a) and a.committed:
        return _E.INVALID_TXN_STATE, ""
    return _E.PRODUCER_FENCED, ""


_TABLE = {  # no mutate: the judge's dispatch (a property), not a rule
    "InitProducerId": _init,
    "AddPartitionsToTxn": _add,
    "AddOffsetsToTxn": _add,
    "VerifyPartition": _verify,
}


class Target(NamedTuple):
    """What Kafka's prepared ``TxnTransitMetadata`` carries besides its state: whether the producer id is a new one
    (None: not judged -- a new entry's first id), the producer epoch, ``lastProducerEpoch``, and whether a
    ``nextProducerId`` was allocated (a TV2 end at an exhausted epoch)."""

    new_pid: bool | None
    epoch: int
    last_epoch: int
    next_pid: bool


def _fence_target(a: Ask) -> Target:  # no mutate: the judge (a property), not a rule
    """The PrepareAbort of an epoch fence (``prepareFenceProducerEpoch`` then ``endTransaction(ABORT,
    isFromClient=false)``): TV0/TV1 -- the epoch bumped into the cache unless a failed fence already did
    (``hasFailedEpochFence``), ``lastProducerEpoch`` -1; TV2 since KAFKA-19367 (PR #19910) -- one bump in
    ``prepareAbortOrCommit`` (none at Short.MAX_VALUE, PR #21469), ``lastProducerEpoch`` the fenced epoch, and at an
    exhausted epoch a ``nextProducerId`` (KAFKA-20090, PR #21506)."""
    md, cfg = a.md, a.cfg
    cur = md.producer_epoch
    bump = not md.has_failed_epoch_fence and cur < cfg.max_producer_epoch
    epoch = cur + 1 if bump else cur
    if cfg.transaction_version >= 2 and cfg.single_fence_bump:
        return Target(False, epoch, cur, cfg.fence_rotates_exhausted_producer_id and _exhausted(cur, cfg))
    if bump and cfg.transaction_version >= 2:  # KAFKA-19367's double bump (a configured Kafka 4.0.0)
        epoch += 1
    return Target(False, epoch, -1, False)


def kafka_target(a: Ask, state: str) -> Target | None:  # no mutate: the judge (a property), not a rule
    """The transit metadata Kafka prepares when ``a`` moves the entry to ``state`` (None: not judged).

    ``TransactionMetadata.scala`` @1eb7644349cb with the model's cited 4.x changes: ``prepareIncrementProducerEpoch``
    (no expected epoch: bump, last -1; the current epoch or a new entry: bump, last = current; the last epoch: the
    retry, nothing moves), ``prepareProducerIdRotation`` (a new id at epoch 0, last = the exhausted epoch when the
    request named one), ``prepareAddPartitions`` (id and epochs kept), ``prepareAbortOrCommit`` (TV0/TV1 kept; TV2
    epoch + 1, last = the current epoch, ``nextProducerId`` at an exhausted epoch) and the epoch fence."""
    md, cfg = a.md, a.cfg
    if a.kind == "TimeoutAbort":
        return _fence_target(a) if cfg.timeout_abort_bumps_epoch and md is not None else None
    if md is None:
        return Target(None, 0, -1, False) if a.kind == "InitProducerId" else None
    cur, last = md.producer_epoch, md.last_producer_epoch
    if a.kind == "InitProducerId":
        if state == S.PREPARE_ABORT:
            return _fence_target(a)
        if _exhausted(cur, cfg) and a.epoch in (-1, cur):
            return Target(True, 0, cur if a.epoch >= 0 else -1, False)
        if a.epoch < 0:
            return Target(False, cur + 1, -1, False)
        if a.epoch == cur or cur == -1:
            return Target(False, cur + 1, cur, False)
        return Target(False, cur, last, False)
    if a.kind in ("AddPartitionsToTxn", "AddOffsetsToTxn"):
        return Target(False, cur, last, False)
    if a.kind != "EndTxn":
        return None
    if a.tv < 2:
        return Target(False, cur, last, False)
    rotate = _exhausted(cur, cfg) and (md.state == S.ONGOING or cfg.empty_abort_rotates_producer_id)
    return Target(False, cur + 1, cur, rotate)


def _target_mismatch(a: Ask, moved: Any) -> str:  # no mutate: the judge (a property), not a rule
    """How the prepared target ``moved`` differs from :func:`kafka_target` ("" if it does not)."""
    want = kafka_target(a, moved.state)
    if want is None:
        return ""
    got = Target(
        None if want.new_pid is None else moved.producer_id != a.md.producer_id,
        moved.producer_epoch,
        moved.last_producer_epoch,
        moved.next_producer_id >= 0,
    )
    if got == want:  # no branch: the other side describes a defect
        return ""
    return ",".join(f"{f}={g}:kafka={w}" for f, g, w in zip(Target._fields, got, want, strict=True) if g != w)


def kafka_answer(a: Ask) -> tuple[str, str]:  # no mutate: the judge (a property), not a rule
    """Kafka's answer to ``a`` with its append succeeding: (error, target state; "" when nothing is written).

    Every handler asks ``TransactionStateManager.getTransactionState`` first: a partition still in
    ``loadingPartitions`` answers COORDINATOR_LOAD_IN_PROGRESS before any other row."""
    if a.loading:
        return _E.COORDINATOR_LOAD_IN_PROGRESS, ""
    if a.kind == "TimeoutAbort":  # abortTimedOutTransactions: an Ongoing entry with no transition pending
        return _E.NONE, S.PREPARE_ABORT
    if a.kind == "EndTxn":
        return _end_tv2(a) if a.tv >= 2 else _end_tv1(a)
    return _TABLE[a.kind](a)


def table_mismatch(  # no mutate: the judge (a property), not a rule
    a: Ask, error: str, target: str | None, append: bool | None, moved: Any = None
) -> str | None:
    """A ghost label if the coordinator answered ``a`` with ``error`` and moved the entry to ``target`` (None:
    nothing written or prepared) where Kafka's table says otherwise; ``append``: the append succeeded, failed
    (COORDINATOR_NOT_AVAILABLE, nothing moves), or is in flight (None: NONE now, the target prepared).
    ``moved``: the metadata written or prepared, whose producer id and epochs are judged too (:func:`kafka_target`)."""
    if a.kind == "TimeoutAbort" and (a.md is None or a.md.pending_state):
        return None  # timedOutTransactions skips it: no answer of Kafka's to compare (no_illegal_transition_attempt)
    want, want_target = kafka_answer(a)
    if error == Errors.UNKNOWN_SERVER_ERROR and want == Errors.UNKNOWN_SERVER_ERROR:
        return None
    if want_target and append is False:
        want, want_target = Errors.COORDINATOR_NOT_AVAILABLE, ""
    elif want_target and append is None:
        want = Errors.NONE
    got_target = target or ""
    state = "none" if a.md is None else a.md.state + (f"/{a.md.pending_state}" if a.md.pending_state else "")
    if (error, got_target) == (want, want_target):  # no branch: the other side describes a defect
        wrong = _target_mismatch(a, moved) if moved is not None and got_target else ""
        return f"answer_table:{a.kind}:{state}:target:{got_target}:{wrong}" if wrong else None
    return f"answer_table:{a.kind}:{state}:{error}->{got_target or '-'}:kafka:{want}->{want_target or '-'}"


def kafka_append_callback(  # no mutate: the judge (a property), not a rule
    log_error: str, same_epoch: bool, retry_on_error: bool
) -> tuple[str, str]:
    """Kafka's callback of an append to ``__transaction_state``: (the answer, what happens to the cache entry).

    ``TransactionStateManager.appendTransactionToLog``'s ``updateCacheCallback`` (apache/kafka @1eb7644349cb):
    the leader's error is translated (a shrunk ISR, an unknown partition or a timeout: COORDINATOR_NOT_AVAILABLE;
    a lost leadership or log directory: NOT_COORDINATOR; a record too large: UNKNOWN_SERVER_ERROR); a success
    completes the transition only under the coordinator epoch that prepared it (else NOT_COORDINATOR, nothing
    moves: the partition emigrated and came back, or is another instance's now); a failure resets the pending
    state under that epoch unless the caller retries the error (``retryOnError``: the CompleteCommit/CompleteAbort
    append of ``TransactionMarkerChannelManager.tryAppendToLog`` on COORDINATOR_NOT_AVAILABLE, KAFKA-5416), and
    touches nothing of another epoch's cache.  Effects: ``complete``, ``reset``, ``unchanged``.
    """
    if log_error == _E.NONE:
        return (_E.NONE, "complete") if same_epoch else (_E.NOT_COORDINATOR, "unchanged")
    if log_error in (_E.UNKNOWN_TOPIC_OR_PARTITION, _E.NOT_ENOUGH_REPLICAS, _E.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                     _E.REQUEST_TIMED_OUT):
        answer = _E.COORDINATOR_NOT_AVAILABLE
    elif log_error in (_E.NOT_LEADER_OR_FOLLOWER, _E.KAFKA_STORAGE_ERROR):
        answer = _E.NOT_COORDINATOR
    elif log_error in (_E.MESSAGE_TOO_LARGE, _E.RECORD_LIST_TOO_LARGE):
        answer = _E.UNKNOWN_SERVER_ERROR
    else:
        answer = log_error
    if not same_epoch or (retry_on_error and answer == _E.COORDINATOR_NOT_AVAILABLE):
        return answer, "unchanged"
    return answer, "reset"


def append_callback_mismatch(  # no mutate: the judge (a property), not a rule
    origin: str, log_error: str, same_epoch: bool, answer: str, effect: str
) -> str | None:
    """A ghost label if the coordinator's callback of an append (``origin``: whose, as ``TxnLogAppend`` says)
    that the leader answered ``log_error`` answered ``answer`` and did ``effect`` to the entry where Kafka's
    :func:`kafka_append_callback` says otherwise."""
    want = kafka_append_callback(log_error, same_epoch, origin == "complete")
    if (answer, effect) == want:  # no branch: the other side describes a defect
        return None
    epoch = "same_epoch" if same_epoch else "old_epoch"
    return f"answer_table:TxnLogAppend:{origin}:{log_error}:{epoch}:{answer}->{effect}:kafka:{want[0]}->{want[1]}"
