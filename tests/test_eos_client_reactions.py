"""The consume-transform-produce half of ``client_reacts_as_kafka``: AddOffsetsToTxn and TxnOffsetCommit answers.

``model/clients/txn_reactions.unexpected_offsets_reaction`` states what ``TransactionManager``'s
``AddOffsetsToTxnHandler`` and ``TxnOffsetCommitHandler`` (Kafka 4.0-SNAPSHOT @1eb7644349cb) leave the producer in,
apart from the tables the EOS handlers read.  A generated family of hostile answers: in states of two default
scenarios where the application's AddOffsetsToTxn (TV1) or TxnOffsetCommit is answered, the answer is rewritten
with every error code a broker can send there -- also codes no scenario's broker sends in that state (the
TRANSACTION_ABORTABLE KIP-890 added to both responses, KIP-1050's "abort and go on") -- and delivered: the EOS
handler must react as the judge says, and the judge must flag a reaction Kafka's handler does not have.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

from keos.model.clients import transactional_producer as tp
from keos.model.clients.txn_reactions import unexpected_offsets_reaction
from keos.model.interface import Action
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import AddOffsetsToTxnResponse, TxnOffsetCommitResponse
from keos.scenarios import build_model, builtin_scenarios

ERRORS = (
    Errors.NONE,
    Errors.CONCURRENT_TRANSACTIONS,
    Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_COORDINATOR,
    Errors.COORDINATOR_LOAD_IN_PROGRESS,
    Errors.REQUEST_TIMED_OUT,
    Errors.NOT_ENOUGH_REPLICAS,
    Errors.PRODUCER_FENCED,
    Errors.INVALID_PRODUCER_EPOCH,
    Errors.TRANSACTION_ABORTABLE,
    Errors.UNKNOWN_PRODUCER_ID,
    Errors.INVALID_PRODUCER_ID_MAPPING,
    Errors.INVALID_TXN_STATE,
    Errors.ILLEGAL_GENERATION,
    Errors.UNKNOWN_MEMBER_ID,
    Errors.FENCED_INSTANCE_ID,
    Errors.GROUP_AUTHORIZATION_FAILED,
    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    Errors.UNKNOWN_SERVER_ERROR,
)


def _answered_states(scenario: str, kind: type, want: int, limit: int = 4000) -> tuple[Any, list[tuple[Any, Any]]]:
    """Up to ``want`` (state, Deliver action) pairs of ``scenario``'s breadth-first search (fault-free steps) whose
    action delivers a ``kind`` answer the client awaits (on its current connection)."""
    model = build_model(builtin_scenarios()[scenario])  # its own variant (tv1: AddOffsetsToTxn)
    start = model.init_states()[0]
    seen, queue, found = {model.fingerprint(start)}, deque([start]), []
    while queue and len(found) < want and len(seen) < limit:
        s = queue.popleft()
        for a in model.actions(s):
            if model.fault_kind(a) is not None:
                continue
            body = a.args[0].body if a.kind == "Deliver" else None
            if isinstance(body, kind) and _awaited(s, body):
                found.append((s, a))
            step = model.step(s, a)
            assert step is not None
            fp = model.fingerprint(step.state)
            if fp not in seen:
                seen.add(fp)
                queue.append(step.state)
    return model, found[:want]


def _awaited(s: Any, body: Any) -> bool:
    c, app = s.clients[body.producer], s.apps[body.producer]
    if isinstance(body, AddOffsetsToTxnResponse):
        return bool(body.connection == c.tc_connection and c.inflight)
    return bool(body.connection == app.gc_connection and app.offsets == "TXN_OFFSET_COMMIT")


def _deliver_with(model: Any, s: Any, action: Any, error: str) -> Any:
    """``s`` with the delivered answer rewritten to ``error``, after delivering it."""
    env = action.args[0]
    forged = env._replace(body=env.body._replace(error=error))
    s2 = s._replace(network=tuple(forged if e is env else e for e in s.network))
    step = model.step(s2, Action("Deliver", (forged, *action.args[1:])))
    assert step is not None
    return step.state


CASES = {
    "AddOffsetsToTxn": ("txn_eos_tv1_add_offsets", AddOffsetsToTxnResponse),
    "TxnOffsetCommit": ("txn_eos_offsets_only", TxnOffsetCommitResponse),
}


@pytest.mark.parametrize("request_kind", sorted(CASES))
def test_eos_handlers_react_as_transaction_manager(request_kind: str) -> None:
    scenario, kind = CASES[request_kind]
    model, found = _answered_states(scenario, kind, want=3)
    assert found, f"{scenario}: no {request_kind} answer awaited in the first states"
    got: dict[tuple[str, str], set[str]] = {}
    for s, action in found:
        i = action.args[0].body.producer
        for error in ERRORS:
            after = _deliver_with(model, s, action, error)
            flagged = [b for b in after.ghost.bad_transitions if b.startswith("client_reaction:")]
            assert not flagged, (request_kind, error, flagged)
            c = after.clients[i]
            got.setdefault((s.clients[i].state, error), set()).add("fenced" if c.fenced else c.state)
    it = tp.C.IN_TRANSACTION
    assert any(old == it for old, _ in got), f"{scenario}: no answer awaited IN_TRANSACTION"
    # the rows KIP-890 / KIP-1050 promise: "abort and go on" -- never fenced, never fatal
    assert got[(it, Errors.TRANSACTION_ABORTABLE)] == {tp.C.ABORTABLE_ERROR}
    assert got[(it, Errors.PRODUCER_FENCED)] == got[(it, Errors.INVALID_PRODUCER_EPOCH)] == {"fenced"}
    assert got[(it, Errors.CONCURRENT_TRANSACTIONS)] == got[(it, Errors.REQUEST_TIMED_OUT)] == {it}
    assert got[(it, Errors.UNKNOWN_SERVER_ERROR)] == {tp.C.FATAL_ERROR}


def test_wrong_offsets_reactions_are_flagged() -> None:
    """Each class of wrong reaction is flagged: a retriable code failing the transaction, an abortable one made
    fatal or fenced, a fencing one made abortable, an abortable one not skipped while aborting."""
    i, ab, it = 0, tp.C.ABORTABLE_ERROR, tp.C.IN_TRANSACTION
    wrong = [
        ("TxnOffsetCommit", Errors.CONCURRENT_TRANSACTIONS, it, ab, False, True),
        ("TxnOffsetCommit", Errors.REQUEST_TIMED_OUT, it, tp.C.FATAL_ERROR, False, True),
        ("TxnOffsetCommit", Errors.TRANSACTION_ABORTABLE, it, tp.C.FATAL_ERROR, False, True),
        ("AddOffsetsToTxn", Errors.TRANSACTION_ABORTABLE, it, tp.C.FATAL_ERROR, True, True),
        ("TxnOffsetCommit", Errors.INVALID_PRODUCER_EPOCH, it, ab, False, True),
        ("AddOffsetsToTxn", Errors.INVALID_PRODUCER_ID_MAPPING, it, tp.C.FATAL_ERROR, False, True),
        ("AddOffsetsToTxn", Errors.INVALID_PRODUCER_ID_MAPPING, it, ab, False, False),  # fatal without KIP-360
        ("TxnOffsetCommit", Errors.UNKNOWN_PRODUCER_ID, it, ab, False, True),  # its handler does not name it
        ("TxnOffsetCommit", Errors.ILLEGAL_GENERATION, tp.C.ABORTING, ab, False, True),
    ]
    for request, error, old, new, fenced, kip_360 in wrong:
        assert unexpected_offsets_reaction(request, error, old, new, fenced, kip_360, i), (request, error, old, new)
    right = [
        ("TxnOffsetCommit", Errors.NOT_ENOUGH_REPLICAS, it, it, False, True),
        ("TxnOffsetCommit", Errors.FENCED_INSTANCE_ID, it, ab, False, True),
        ("AddOffsetsToTxn", Errors.INVALID_TXN_STATE, it, tp.C.FATAL_ERROR, False, True),
        ("AddOffsetsToTxn", Errors.PRODUCER_FENCED, it, tp.C.FATAL_ERROR, True, True),
        ("TxnOffsetCommit", Errors.TRANSACTION_ABORTABLE, tp.C.ABORTING, tp.C.ABORTING, False, True),
        ("TxnOffsetCommit", Errors.TRANSACTION_ABORTABLE, tp.C.FATAL_ERROR, tp.C.FATAL_ERROR, False, True),
    ]
    for request, error, old, new, fenced, kip_360 in right:
        assert unexpected_offsets_reaction(request, error, old, new, fenced, kip_360, i) is None, (request, error)
