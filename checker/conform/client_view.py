"""The client's own view: its transaction state changes checked against Kafka's producer state machine.

librdkafka logs every transactional state change with ``debug=eos``
(``Transaction state change Ready -> InTransaction``, ``rdkafka_txnmgr.c``).
The workload records each as an ``info`` operation of the pseudo-process
``client:<name>`` with value ``[from, to]``; this module maps librdkafka's
states onto the states of Kafka's ``TransactionManager`` -- the states keos's
client model uses (:class:`keos.model.clients.transactional_producer.ClientState`)
-- and checks each change against ``TransactionManager.State.isTransitionValid``
(Kafka clients, with the KIP-360 epoch bump: a finished transaction may go back
to INITIALIZING).  librdkafka's extra sub-states (``ReadyNotAcked``,
``BeginCommit``, ``CommitNotAcked`` ...) map onto the Java state they refine, and
changes between two sub-states of one Java state are not transitions.

The producer identity the client takes on is recorded too (``client-pid``): from
InitProducerId (``Acquired PID{Id:..,Epoch:..}``) or from an idempotent
producer's local bump (``bumped epoch to PID{..}``).  Whenever the client keeps
its producer id -- the KIP-360 epoch bump after UNKNOWN_PRODUCER_ID or a
sequence gap, or a transactional producer's re-initialisation after an abort --
the new epoch must be higher than the one it had, or the broker's fencing and
sequence reset by epoch mean nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from keos.model.clients.transactional_producer import ClientState as C

__all__ = ["LIBRDKAFKA_STATES", "VALID_PREVIOUS", "parse_pid", "parse_state_change", "valid"]

#: librdkafka ``rd_kafka_txn_state_t`` names (as logged) -> Kafka ``TransactionManager.State``.
LIBRDKAFKA_STATES: Mapping[str, str] = {
    "Init": C.UNINITIALIZED,
    "WaitPID": C.INITIALIZING,
    "ReadyNotAcked": C.INITIALIZING,
    "Ready": C.READY,
    "InTransaction": C.IN_TRANSACTION,
    "BeginCommit": C.COMMITTING,
    "CommittingTransaction": C.COMMITTING,
    "CommitNotAcked": C.COMMITTING,
    "BeginAbort": C.ABORTING,
    "AbortingTransaction": C.ABORTING,
    "AbortedNotAcked": C.ABORTING,
    "AbortableError": C.ABORTABLE_ERROR,
    "FatalError": C.FATAL_ERROR,
}

#: Target state -> the states it may be entered from (``TransactionManager.State.isTransitionValid``).
#: FATAL_ERROR may be entered from anywhere.
VALID_PREVIOUS: Mapping[str, frozenset[str]] = {
    C.UNINITIALIZED: frozenset({C.READY, C.ABORTABLE_ERROR}),
    C.INITIALIZING: frozenset({C.UNINITIALIZED, C.COMMITTING, C.ABORTING}),
    C.READY: frozenset({C.INITIALIZING, C.COMMITTING, C.ABORTING}),
    C.IN_TRANSACTION: frozenset({C.READY}),
    C.COMMITTING: frozenset({C.IN_TRANSACTION}),
    C.ABORTING: frozenset({C.IN_TRANSACTION, C.ABORTABLE_ERROR}),
    C.ABORTABLE_ERROR: frozenset({C.IN_TRANSACTION, C.COMMITTING, C.ABORTABLE_ERROR, C.INITIALIZING}),
}

_CHANGE = re.compile(r"Transaction state change (\w+) -> (\w+)")
#: ``Acquired PID{..}`` (InitProducerId answered) and ``bumped epoch to PID{..}`` (an idempotent
#: producer's local KIP-360 bump, ``rdkafka_idempotence.c``).
_PID = re.compile(r"(?:Acquired|bumped epoch to) PID\{Id:(-?\d+),Epoch:(-?\d+)")


def parse_state_change(line: str) -> tuple[str, str] | None:
    """``(from, to)`` of a librdkafka transaction state-change log line."""
    m = _CHANGE.search(line)
    return (m.group(1), m.group(2)) if m else None


def parse_pid(line: str) -> tuple[int, int] | None:
    """``(producer_id, epoch)`` a librdkafka log line says the producer now uses, if it says one."""
    m = _PID.search(line)
    return (int(m.group(1)), int(m.group(2))) if m else None


def valid(source: str, target: str) -> bool | None:
    """Whether a librdkafka state change is a valid Kafka producer transition (``None``: unknown state name)."""
    s, t = LIBRDKAFKA_STATES.get(source), LIBRDKAFKA_STATES.get(target)
    if s is None or t is None:
        return None
    if s == t or t == C.FATAL_ERROR:
        return True
    return s in VALID_PREVIOUS.get(t, frozenset())
