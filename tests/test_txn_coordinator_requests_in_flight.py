"""Every request kind the transaction coordinator takes, while it moves (``loading_window``).

Kafka's ``getTransactionState`` is asked first by every handler of the transaction coordinator -- InitProducerId,
AddPartitionsToTxn, EndTxn, AddOffsetsToTxn (``KafkaApis.handleAddOffsetsToTxnRequest`` goes through
``handleAddPartitionsToTransaction``) and the verification a partition leader or the group coordinator asks for
(``AddPartitionsToTxn``, verifyOnly under TV0/TV1): NOT_COORDINATOR from an instance that no longer owns the
id's ``__transaction_state`` partition, COORDINATOR_LOAD_IN_PROGRESS from one still loading it
(``TransactionCoordinator.scala`` @1eb7644349cb).  The family: each kind of request, on TV1 and TV2, in flight
when the coordinator emigrates, or arriving while the new one loads -- answered with a response of its own kind
and the error Kafka's answer table gives, the cache untouched.  A request kind the system does not know how to
answer is a model error, never an EndTxn answer.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from keos.model import network as net
from keos.model.interface import ModelError
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    TxnOffsetCommitRequest,
)
from keos.model.systems import eos
from keos.model.systems.transactions import COORDINATOR
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()
EOS = {1: "txn_eos_tv1_add_offsets", 2: "txn_eos_consume_transform_produce"}


def _requests() -> list[tuple[Any, type]]:
    return [
        (InitProducerIdRequest(0, 0, 0, -1, -1), InitProducerIdResponse),
        (AddPartitionsToTxnRequest(0, 0, 0, 7, 0, (0,)), AddPartitionsToTxnResponse),
        (EndTxnRequest(0, 0, 0, 7, 0, True), EndTxnResponse),
        (AddOffsetsToTxnRequest(0, 0, 0, 7, 0, eos.GROUP), AddOffsetsToTxnResponse),
    ]


def _labels(state: Any) -> list[str]:
    return list(state.ghost.bad_transitions)


@pytest.mark.parametrize("tv", sorted(EOS))
def test_emigration_answers_every_request_in_flight_with_its_own_kind(tv: int) -> None:
    model = build_model(SCENARIOS[EOS[tv]])
    s = model.init_states()[0]
    envs = tuple(net.Envelope("p0", COORDINATOR, 0, req) for req, _ in _requests())
    s = s._replace(network=(*s.network, *envs), loading=True)
    out, events = model._emigrate(s)
    answers = [e.body for e in out.network if e.src == COORDINATOR and e.dst == "p0"]
    assert [type(a) for a in answers] == [kind for _, kind in _requests()], events
    assert all(a.error == Errors.NOT_COORDINATOR for a in answers)
    assert not any(e.dst == COORDINATOR for e in out.network)


@pytest.mark.parametrize("tv", sorted(EOS))
def test_add_offsets_while_loading_is_answered_load_in_progress(tv: int) -> None:
    model = build_model(SCENARIOS[EOS[tv]])
    s = model.init_states()[0]
    s = s._replace(loading=True)
    req = AddOffsetsToTxnRequest(0, 0, 0, 7, 0, eos.GROUP)
    out, _ = model._on_add_offsets(s, net.Envelope("p0", COORDINATOR, 0, req), req, True)
    answer = out.network[-1].body
    assert isinstance(answer, AddOffsetsToTxnResponse) and answer.error == Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert out.coordinator == s.coordinator and _labels(out) == []


@pytest.mark.parametrize("tv", sorted(EOS))
def test_txn_offset_commit_verification_while_loading_is_judged(tv: int) -> None:
    """The group coordinator's verification asks the loading transaction coordinator: Kafka's table answers
    COORDINATOR_LOAD_IN_PROGRESS (retriable), and the model's handler agrees with the judge."""
    model = build_model(SCENARIOS[EOS[tv]])
    s = model.init_states()[0]._replace(loading=True)
    g = s.group
    assert g is not None
    req = TxnOffsetCommitRequest(0, 0, 0, 7, 0, eos.GROUP, g.generation, 0, 0, 1)
    out, events = model._on_txn_offset_commit(s, net.Envelope("p0", eos.GROUP_COORDINATOR, 0, req), req, True)
    # both scenarios verify TxnOffsetCommit with the transaction coordinator (KAFKA-15449 under TV1, TV2's implicit
    # add): a handler that skipped the round trip would otherwise pass unjudged
    assert "txn_offset_commit_verification" in events, events
    assert out.network[-1].body.error == Errors.COORDINATOR_LOAD_IN_PROGRESS
    assert out.coordinator == s.coordinator and _labels(out) == []


def test_a_request_kind_without_a_response_is_a_model_error() -> None:
    model = build_model(SCENARIOS[EOS[1]])
    with pytest.raises(ModelError):
        model._response(TxnOffsetCommitRequest(0, 0, 0, 7, 0, eos.GROUP, 0, 0, 0, 1), Errors.NONE, -1, -1)


def test_every_model_ask_states_whether_the_coordinator_is_loading() -> None:
    """The judge's ``Ask`` defaults ``loading`` to False; every ``Ask(...)`` of model/ must say it, or a handler
    that forgets getTransactionState's loading check is judged as if the coordinator had loaded."""
    root = Path(__file__).resolve().parent.parent / "model"
    missing = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or getattr(node.func, "id", "") != "Ask":
                continue
            if len(node.args) < 9 and not any(k.arg == "loading" for k in node.keywords):
                missing.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert missing == []
