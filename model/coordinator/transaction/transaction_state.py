"""The transaction coordinator's ``TransactionState`` and its valid-previous-state table.

KIP-98 §6-8: for every ``transactional.id`` the coordinator keeps a
``TransactionMetadata`` whose ``state`` moves through a fixed graph.  A
transition X -> Y is legal only if X is in ``Y.validPreviousStates``.

The table below is **data**, pinned to the Java enum
``transaction-coordinator/src/main/java/org/apache/kafka/coordinator/transaction/TransactionState.java``
at commit ``33431ac9``.  It is read by the
coordinator's step functions (``model/txn_coordinator.py``), by the invariant
``valid_coordinator_transitions`` and by the coverage report
(``checker/coverage.py``) -- never written twice.

The Java table adds Empty, CompleteCommit and CompleteAbort as predecessors of
PrepareAbort: a TV2 (KIP-890 part 2) client may send an "empty abort" while no
transaction is open.  The older Scala sealed trait (trunk ``1eb7644349cb``, 2024-10) allowed
only Ongoing and PrepareEpochFence; :data:`SCALA_2024_10_PREPARE_ABORT` keeps
that row so the difference is data too.

States are plain strings in the model state (the names ``DescribeTransactions``
exposes); :data:`STATE_IDS` gives the numeric id the transaction log stores.
"""

from __future__ import annotations

__all__ = [
    "EXPIRATION_ALLOWED",
    "SCALA_2024_10_PREPARE_ABORT",
    "STATES",
    "STATE_IDS",
    "VALID_PREVIOUS_STATES",
    "TransactionState",
    "is_valid_transition",
    "valid_transitions",
]

#: The Kafka source revision the table follows.
PINNED_SOURCE = "apache/kafka TransactionState.java @ 33431ac9 (2025)"


class TransactionState:
    """The eight states of ``org.apache.kafka.coordinator.transaction.TransactionState``."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"


S = TransactionState

#: States in id order (the id is what ``TransactionLogValue.TransactionStatus`` stores).
STATES: tuple[str, ...] = (
    S.EMPTY,
    S.ONGOING,
    S.PREPARE_COMMIT,
    S.PREPARE_ABORT,
    S.COMPLETE_COMMIT,
    S.COMPLETE_ABORT,
    S.DEAD,
    S.PREPARE_EPOCH_FENCE,
)

STATE_IDS: dict[str, int] = {name: i for i, name in enumerate(STATES)}

#: ``TransactionState.validPreviousStates`` (``TransactionState.java`` @33431ac9).
VALID_PREVIOUS_STATES: dict[str, tuple[str, ...]] = {
    S.EMPTY: (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT),
    S.ONGOING: (S.ONGOING, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT),
    S.PREPARE_COMMIT: (S.ONGOING,),
    S.PREPARE_ABORT: (S.ONGOING, S.PREPARE_EPOCH_FENCE, S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT),
    S.COMPLETE_COMMIT: (S.PREPARE_COMMIT,),
    S.COMPLETE_ABORT: (S.PREPARE_ABORT,),
    S.DEAD: (S.EMPTY, S.COMPLETE_ABORT, S.COMPLETE_COMMIT),
    S.PREPARE_EPOCH_FENCE: (S.ONGOING,),
}

#: PrepareAbort's row in the Oct-2024 Scala trait (trunk ``1eb7644349cb``, 2024-10).
SCALA_2024_10_PREPARE_ABORT: tuple[str, ...] = (S.ONGOING, S.PREPARE_EPOCH_FENCE)

#: States from which ``transactional.id`` expiration may remove the entry (``TransactionStateManager``).
EXPIRATION_ALLOWED: tuple[str, ...] = (S.EMPTY, S.COMPLETE_COMMIT, S.COMPLETE_ABORT)


def is_valid_transition(src: str, dst: str) -> bool:
    """Whether ``src -> dst`` is allowed by :data:`VALID_PREVIOUS_STATES`."""
    return src in VALID_PREVIOUS_STATES.get(dst, ())


def valid_transitions() -> tuple[tuple[str, str], ...]:
    """Every legal ``(src, dst)`` pair, in table order."""
    return tuple((src, dst) for dst in STATES for src in VALID_PREVIOUS_STATES[dst])
