"""Which error Kafka's transaction coordinator can answer a request with, in the state the request found.

A judge, not a handler: :func:`unexpected_error` states, independently of
:mod:`model.coordinator.transaction.transaction_coordinator`, the necessary condition under which each error
code leaves ``TransactionCoordinator.handleInitProducerId``, ``handleAddPartitionsToTransaction``,
``handleVerifyPartitionsInTransaction`` and ``endTransaction`` (``TransactionCoordinator.scala`` @1eb7644349cb,
Kafka 4.0-SNAPSHOT, with the 4.0 changes KAFKA-18464 / KAFKA-18660; ``TransactionMetadata.scala``):

* ``CONCURRENT_TRANSACTIONS`` -- the entry has a transition pending (``pendingTransitionInProgress``), is in
  PrepareCommit/PrepareAbort (its markers are being written), or, for InitProducerId, is Ongoing (the
  coordinator fences the open transaction and answers CONCURRENT_TRANSACTIONS so the client retries);
* ``PRODUCER_FENCED`` -- the request names a producer id and an epoch other than the entry's (a stale
  instance); under TV2 also the current epoch while the end is pending (Kafka 3.x ``isValidEpoch``, before
  KAFKA-18464); never an InitProducerId that names no producer id (a new instance);
* ``INVALID_PRODUCER_ID_MAPPING`` -- AddPartitionsToTxn, verification and EndTxn only, for no entry or a
  producer id the entry does not hold;
* ``INVALID_TXN_STATE`` -- EndTxn only, for an entry that is not Ongoing (nothing to end, or the other end
  in progress);
* ``TRANSACTION_ABORTABLE`` -- verification only (the partition is not in the transaction, KIP-890 part 1);
* ``COORDINATOR_NOT_AVAILABLE`` -- the request's append to ``__transaction_state`` failed (a handler never
  answers COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR itself: with a scenario's ``loading_window`` the system
  answers them before the handler runs -- the loading coordinator, the deposed one and its appends' callbacks --
  and :mod:`~keos.model.coordinator.transaction.answer_table` judges them: its loading row and
  :func:`~keos.model.coordinator.transaction.answer_table.kafka_append_callback`);
* ``UNKNOWN_SERVER_ERROR`` is judged by ``no_unknown_server_error`` / ``no_illegal_transition_attempt``;
  authorization errors by the security invariants (answered before a handler runs).

Any other code (or one of these in a state where Kafka cannot return it) is unexpected: the client's
handler (``TransactionManager``) then reacts to an error Kafka never sends, and a swapped error class
(retriable for fenced, fatal for abortable) goes unseen.  The answer is a label for the ghost
(``unexpected_error:...``, property ``coordinator_errors_as_kafka``), recorded only when broken.
"""

from __future__ import annotations

from typing import Any

from keos.model.coordinator.transaction.transaction_state import TransactionState as S
from keos.model.protocol.errors import Errors

__all__ = ["unexpected_error"]

_PREPARE = (S.PREPARE_COMMIT, S.PREPARE_ABORT)  # no mutate: a table of the judge coordinator_errors_as_kafka


def _allowed(  # no mutate: the judge of coordinator_errors_as_kafka (a property), not a rule
    request: str, error: str, md: Any, pid: int, epoch: int, append_ok: bool, tv: int
) -> bool:
    """Kafka's necessary condition for ``error`` (see the module docstring)."""
    if error in (Errors.NONE, Errors.UNKNOWN_SERVER_ERROR):
        return True
    if error == Errors.COORDINATOR_NOT_AVAILABLE:
        return not append_ok
    if error == Errors.INVALID_PRODUCER_ID_MAPPING:
        return request != "InitProducerId" and (md is None or pid != md.producer_id)
    if md is None:
        return False
    if error == Errors.CONCURRENT_TRANSACTIONS:
        return bool(md.pending_state) or md.state in _PREPARE or (request == "InitProducerId" and md.state == S.ONGOING)
    if error == Errors.PRODUCER_FENCED:
        stale = pid >= 0 and (pid, epoch) != (md.producer_id, md.producer_epoch)
        ending = request == "EndTxn" and tv >= 2 and (bool(md.pending_state) or md.state in _PREPARE)
        return stale or ending
    if error == Errors.INVALID_TXN_STATE:
        return request == "EndTxn" and md.state != S.ONGOING
    return error == Errors.TRANSACTION_ABORTABLE and request == "VerifyPartition"


def unexpected_error(  # no mutate: the judge of coordinator_errors_as_kafka (a property), not a rule
    request: str, error: str, md: Any, pid: int, epoch: int, append_ok: bool = True, tv: int = 0
) -> str | None:
    """A ghost label if Kafka's coordinator cannot answer ``request`` (its kind: ``InitProducerId``,
    ``AddPartitionsToTxn``, ``VerifyPartition``, ``EndTxn``) naming ``(pid, epoch)`` with ``error`` while the
    entry is ``md`` (``None``: no entry), the append (if any) succeeding or not; else ``None``."""
    if _allowed(request, error, md, pid, epoch, append_ok, tv):  # no branch: the other side describes a defect
        return None
    state = "none" if md is None else md.state + (f"/{md.pending_state}" if md.pending_state else "")
    return f"unexpected_error:{request}:{error}:{state}"
