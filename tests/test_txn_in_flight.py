"""``requests_in_flight_per_kafka`` judges the transactional producer's Sender too (``invariants/txn_in_flight.py``).

The transactional system drains with the idempotent producer's :func:`keos.model.clients.producer.drain`; a drain
that ignores ``max.in.flight.requests.per.connection`` used to go unseen there (it only blew the state space up,
a mutation run's timeout).  ``one_txn_request_in_flight`` is the same rule for the TransactionManager's coordinator
requests (one at a time, ``Sender.maybeSendAndPollTransactionalRequest``).  Each search stops at the first
violation (the patched ones) and takes well under a second.
"""

from __future__ import annotations

import pytest

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
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
