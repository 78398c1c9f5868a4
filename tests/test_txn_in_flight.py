"""``requests_in_flight_per_kafka`` judges the transactional producer's Sender too (``invariants/txn_in_flight.py``).

The transactional system drains with the idempotent producer's :func:`keos.model.clients.producer.drain`; a drain
that ignores ``max.in.flight.requests.per.connection`` used to go unseen there (it only blew the state space up,
a mutation run's timeout).  ``one_txn_request_in_flight`` is the same rule for the TransactionManager's coordinator
requests (one at a time, ``Sender.maybeSendAndPollTransactionalRequest``).  Each search stops at the first
violation (the patched ones) and takes well under a second.
"""

from __future__ import annotations

from typing import Any

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.invariants.txn_in_flight import _coordinator_requests_by_client, _produce_by_client
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.coordinator.transaction.transaction_coordinator import TxnLogAppend
from keos.model.protocol.messages import (
    ProduceRequest,
    ProduceResponse,
    VerifyPartitionRequest,
    VerifyPartitionResponse,
)
from keos.model.systems.transactions import COORDINATOR, TXN_LOG
from keos.scenarios import build_model, builtin_scenarios

SCENARIO = "txn_kafka_6119_timeout_zombie"  # two records per transaction, max.in.flight 1, 0.1 s
CHEAP = "authz_matrix_tv2_all_granted"  # the cheapest transactional scenario that drains at all


def _verdict(name: str, variant: str | None = None, prop: str = "requests_in_flight_per_kafka") -> Verdict:
    scenario = builtin_scenarios()[name]
    model = build_model(scenario, variant)
    result = explore(model, name, variant or scenario.variant, ExploreOptions(stop_on_first=True, max_states=50_000))
    return {p.name: p.verdict for p in result[0].properties}[prop]


def test_holds_on_the_model() -> None:
    assert _verdict(SCENARIO) is Verdict.HOLDS


def test_catches_the_sender_one_request_too_many() -> None:
    assert _verdict(SCENARIO, "txn_sender_one_request_too_many") is Verdict.VIOLATED


def test_catches_a_drain_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """``can_drain`` answering True once the connection is full (a mutant that used to time out) is seen at once."""
    real = prod.can_drain

    def unbounded(p: prod.Producer, partition: int, config: object, orphans: int = 0, in_turn: bool = True) -> bool:
        return any(b.partition == partition for b in p.batches) or real(p, partition, config, orphans, in_turn)

    monkeypatch.setattr(prod, "can_drain", unbounded)
    assert _verdict(CHEAP) is Verdict.VIOLATED


def test_one_coordinator_request_holds_on_the_model() -> None:
    assert _verdict(CHEAP, prop="one_txn_request_in_flight") is Verdict.HOLDS


def test_catches_a_lost_coordinator_request_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    """A send that forgets its in-flight mark (``inFlightRequestCorrelationId`` never set: the client re-sends while
    the first request is outstanding; a held-out mutant that used to time out) is seen at once."""
    real = tp.next_txn_request

    def forgetful(c: tp.TxnClient, *args: object) -> object:
        nxt = real(c, *args)  # type: ignore[arg-type]
        return None if nxt is None else (nxt[0]._replace(inflight=c.inflight), nxt[1])

    monkeypatch.setattr(tp, "next_txn_request", forgetful)
    assert _verdict(CHEAP, prop="one_txn_request_in_flight") is Verdict.VIOLATED


# -- the judges' one pass over the network equals the per-client reading of it ---------------------------------


def _produce_of(body: object, me: str, src: str, dst: str) -> object:
    """The client ``me``'s produce request or response an envelope carries (a verification carries the request)."""
    if isinstance(body, ProduceRequest):
        return body if src == me else None
    if isinstance(body, ProduceResponse):
        return body if dst == me else None
    if isinstance(body, (VerifyPartitionRequest, VerifyPartitionResponse)):
        return body.produce if body.client == me else None
    return None


def _coordinator_request(env: Any, me: str) -> object:
    """The client ``me``'s transactional request an envelope carries (travelling, answered, or held in a log append)."""
    if env.src == me and env.dst == COORDINATOR:
        return env.body
    if env.src == COORDINATOR and env.dst == me:
        return env.body
    if env.dst == TXN_LOG and isinstance(env.body, TxnLogAppend) and env.body.reply_to == me:
        return env.body.request
    return None


@pytest.mark.parametrize("name", ["reach_txn_tv1_pending_zombie", "txn_tv1_verification_aba"])
def test_one_pass_per_network_reads_each_client_as_its_own_pass(name: str) -> None:
    """``_produce_by_client``/``_coordinator_requests_by_client`` group the network per client in one pass; on the
    states of a search (verifications, log appends in flight, answers, stale connections) each client's group is
    what a pass of its own over the network finds, in the same order."""
    model = build_model(builtin_scenarios()[name])
    init = model.init_states()[0]
    seen, queue, states = {init}, [init], [init]
    while queue and len(states) < 3000:
        s = queue.pop(0)
        for a in model.actions(s):
            step = model.step(s, a)
            if step is not None and step.state not in seen:
                seen.add(step.state)
                queue.append(step.state)
                states.append(step.state)
    grouped = 0
    for s in states:
        produce, coordinator = _produce_by_client(s.network), _coordinator_requests_by_client(s.network)
        for i in range(len(s.clients)):
            me = f"p{i}"
            own = [b for env in s.network if (b := _produce_of(env.body, me, env.src, env.dst)) is not None]
            assert produce.get(me, []) == own
            mine = [b for env in s.network if (b := _coordinator_request(env, me)) is not None]
            assert [b for b in coordinator.get(me, []) if b is not None] == mine
            grouped += bool(own) + bool(mine)
    assert grouped > 100
