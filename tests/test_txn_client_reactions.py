"""The judge of the client's reactions (``client_reacts_as_kafka``) against the client model itself.

A generated family: every client state that can have a coordinator request in flight, each response kind,
every error code of Kafka's three handlers (and an unexpected one), with and without KIP-360, TV1 and TV2 --
``handle_txn_response`` must react as the judge says ``TransactionManager`` does; and wrong reactions are
flagged.
"""

from __future__ import annotations

import itertools

import pytest

from keos.model.clients import transactional_producer as tp
from keos.model.clients.txn_reactions import unexpected_reaction
from keos.model.protocol.errors import AUTHORIZATION_ERRORS, Errors
from keos.model.protocol.messages import AddPartitionsToTxnResponse, EndTxnResponse, InitProducerIdResponse

ERRORS = (
    Errors.NONE,
    Errors.CONCURRENT_TRANSACTIONS,
    Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_COORDINATOR,
    Errors.COORDINATOR_LOAD_IN_PROGRESS,
    Errors.PRODUCER_FENCED,
    Errors.INVALID_PRODUCER_EPOCH,
    Errors.TRANSACTION_ABORTABLE,
    Errors.UNKNOWN_PRODUCER_ID,
    Errors.INVALID_PRODUCER_ID_MAPPING,
    Errors.INVALID_TXN_STATE,
    Errors.INVALID_RECORD,
    Errors.UNKNOWN_SERVER_ERROR,
    *sorted(AUTHORIZATION_ERRORS),
)
#: States with a coordinator request in flight (a fatal error clears it: its late answer is stale).
STATES = {
    "InitProducerId": (tp.C.INITIALIZING,),
    "AddPartitionsToTxn": (tp.C.IN_TRANSACTION, tp.C.COMMITTING, tp.C.ABORTING, tp.C.ABORTABLE_ERROR),
    "EndTxn": (tp.C.COMMITTING, tp.C.ABORTING),
}


def _response(kind: str, error: str) -> object:
    if kind == "InitProducerId":
        return InitProducerIdResponse(0, 0, error, 7, 1)
    if kind == "AddPartitionsToTxn":
        return AddPartitionsToTxnResponse(0, 0, error, (0,))
    return EndTxnResponse(0, 0, error, 7, 2)


@pytest.mark.parametrize(("tv", "kip_360"), [(1, True), (1, False), (2, True)])
def test_the_client_reacts_as_transaction_manager(tv: int, kip_360: bool) -> None:
    for kind, states in STATES.items():
        for state, error, owed in itertools.product(states, ERRORS, (False, True)):
            c = tp.new_client(0, 2)._replace(
                state=state, inflight=True, added=(1,), pending_add=(0,), epoch_bump_required=owed
            )
            new, _outcome, _events = tp.handle_txn_response(c, _response(kind, error), tv, kip_360)
            bump = owed and kip_360 and tv < 2
            label = unexpected_reaction(kind, error, state, new.state, new.fenced, kip_360, 0, bump)
            assert label is None, label


def test_wrong_reactions_are_flagged() -> None:
    ab, fatal = tp.C.ABORTABLE_ERROR, tp.C.FATAL_ERROR
    # a retriable answer re-sends the request: any move is wrong
    assert unexpected_reaction("EndTxn", Errors.CONCURRENT_TRANSACTIONS, tp.C.COMMITTING, ab, False, True, 0)
    assert unexpected_reaction("InitProducerId", Errors.CONCURRENT_TRANSACTIONS, tp.C.INITIALIZING, ab, False, True, 0)
    # a fence is a ProducerFencedException, not another fatal error
    assert unexpected_reaction("EndTxn", Errors.PRODUCER_FENCED, tp.C.COMMITTING, fatal, False, True, 0)
    # abortableErrorIfPossible: abortable with KIP-360, fatal without
    assert unexpected_reaction("EndTxn", Errors.INVALID_PRODUCER_ID_MAPPING, tp.C.COMMITTING, fatal, False, True, 0)
    assert unexpected_reaction("EndTxn", Errors.INVALID_PRODUCER_ID_MAPPING, tp.C.COMMITTING, ab, False, False, 0)
    # an abortable error while aborting is skipped for an AddPartitionsToTxn in flight
    assert unexpected_reaction("AddPartitionsToTxn", Errors.TRANSACTION_ABORTABLE, tp.C.ABORTING, fatal, False, True, 0)
    # unexpected codes are fatal; NONE moves an EndTxn on
    assert unexpected_reaction("EndTxn", Errors.INVALID_TXN_STATE, tp.C.COMMITTING, ab, False, True, 0)
    # AddPartitionsToTxnHandler: an unexpected code is a partition error (abortable), INVALID_TXN_STATE fatal
    use = Errors.UNKNOWN_SERVER_ERROR
    assert unexpected_reaction("AddPartitionsToTxn", use, tp.C.IN_TRANSACTION, fatal, False, True, 0)
    assert unexpected_reaction("AddPartitionsToTxn", use, tp.C.IN_TRANSACTION, ab, False, True, 0) is None
    assert unexpected_reaction("AddPartitionsToTxn", use, tp.C.ABORTING, tp.C.ABORTING, False, True, 0) is None
    assert unexpected_reaction("AddPartitionsToTxn", Errors.INVALID_TXN_STATE, tp.C.IN_TRANSACTION, ab, False, True, 0)
    owed = (True, False, 1)  # abortableError leaves epochBumpRequired as it was
    assert unexpected_reaction("AddPartitionsToTxn", use, tp.C.ABORTING, tp.C.ABORTING, False, True, 0, False, owed)
    assert tp.coordinator_error_class("AddOffsetsToTxn", use) == tp.ErrorClass.FATAL
    assert unexpected_reaction("EndTxn", Errors.NONE, tp.C.COMMITTING, tp.C.COMMITTING, False, True, 0)
    # completeTransaction: INITIALIZING exactly when an epoch bump is owed
    assert unexpected_reaction("EndTxn", Errors.NONE, tp.C.ABORTING, tp.C.INITIALIZING, False, True, 0)
    assert unexpected_reaction("EndTxn", Errors.NONE, tp.C.ABORTING, tp.C.READY, False, True, 0, True)
    assert unexpected_reaction("EndTxn", Errors.NONE, tp.C.ABORTING, tp.C.INITIALIZING, False, True, 0, True) is None
    # authorization errors (KAFKA-13668): InitProducerId uninitializes, a transactional-id denial is fatal
    denied = Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert unexpected_reaction("InitProducerId", denied, tp.C.INITIALIZING, fatal, False, True, 0)
    assert unexpected_reaction("InitProducerId", denied, tp.C.INITIALIZING, tp.C.UNINITIALIZED, False, True, 0) is None
    assert unexpected_reaction("EndTxn", denied, tp.C.COMMITTING, tp.C.COMMITTING, False, True, 0)
    assert unexpected_reaction("EndTxn", denied, tp.C.COMMITTING, fatal, False, True, 0) is None
    topic = Errors.TOPIC_AUTHORIZATION_FAILED
    assert unexpected_reaction("AddPartitionsToTxn", topic, tp.C.IN_TRANSACTION, fatal, False, True, 0)
    assert unexpected_reaction("AddPartitionsToTxn", topic, tp.C.IN_TRANSACTION, ab, False, True, 0) is None
