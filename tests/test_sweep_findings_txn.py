"""The gate sweep's transactions finding of session 26, judged against Kafka (session 27).

``docs/findings/session26_sweep_txn_two_in_flight_out_of_order.trace.json``: a TV2 producer with two requests in
flight, no fault.  The next transaction's first batch reaches the leader while the commit's markers are pending;
the coordinator answers the leader's verification CONCURRENT_TRANSACTIONS (NOT_ENOUGH_REPLICAS to the client,
``ReplicaManager.appendRecords``' ``postVerificationCallback``), the marker moves the leader's producer epoch, and
the batch behind is refused OUT_OF_ORDER_SEQUENCE_NUMBER (``ProducerAppendInfo.checkSequence``: its predecessor is
missing).  Kafka's client retries that batch (``TransactionManager.canRetry``: not ``isNextSequence``), and so does
the model's; the property overclaimed and now excuses exactly that refusal (``_fault_free_refusal``).  These tests
show the trace holds, the producer finishes its transactions, and the narrowed judge still catches a refusal with
no missing predecessor, an epoch refusal, and a client that keeps its sequences across a new epoch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from keos.checker import api
from keos.checker.explore.search import explore
from keos.checker.trace import load_trace
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.log.partition import LogEntry
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest
from keos.model.systems.transactions import _fault_free_refusal
from keos.scenarios import build_model, resolve_scenario

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "docs" / "findings" / "session26_sweep_txn_two_in_flight_out_of_order.trace.json"
SCENARIO = "txn_tv2_pipelined_next_transaction"


def _replayed() -> tuple[Any, Any]:
    """The finding's model and its replayed states (the last: the OUT_OF_ORDER refusal was just answered)."""
    data = load_trace(TRACE)
    scenario, _ = api._trace_scenario(data, TRACE)
    model = build_model(scenario)
    report = api.replay(TRACE)
    return model, report.replay


def test_the_finding_replays_and_now_holds() -> None:
    report = api.replay(TRACE)
    assert not report.confirmed and "holds after the last step" in report.replay.reason
    # the behaviour is still there: the last step is the refusal the judge now excuses, with its witness
    assert "error:OUT_OF_ORDER_SEQUENCE_NUMBER" in report.replay.events[-1]
    assert "out_of_order_behind_missing_batch" in report.replay.events[-1]


def test_the_producer_retries_the_refused_batch_and_ends_its_transactions() -> None:
    """Every fault-free continuation of the trace ends with the producer READY after its three transactions."""
    model, replay = _replayed()
    start = replay.states[-1]
    seen, frontier, ends = {model.fingerprint(start)}, [start], []
    while frontier:
        s = frontier.pop()
        nxt = [st.state for a in model.actions(s) if (st := model.step(s, a)) is not None]
        nxt = [t for t in nxt if not any(t.faults_used)]
        if not nxt:
            ends.append(s)
        for t in nxt:
            if model.fingerprint(t) not in seen:
                seen.add(model.fingerprint(t))
                frontier.append(t)
    assert ends
    for s in ends:
        c = s.clients[0]
        assert c.state == tp.C.READY and c.txn == 3 and not c.fenced
        assert [o.txn for o in s.ghost.outcomes] == [0, 1, 2]


def _refusal_state() -> tuple[Any, ProduceRequest]:
    """The state the refusal left and the refused request (pid 0, epoch 1, seq 1; seq 0 held, not in the log)."""
    _, replay = _replayed()
    s = replay.states[-1]
    req = ProduceRequest(0, 0, 0, 0, 1, 1, (5,), transactional=True)
    return s, req


def test_the_refusal_behind_a_held_batch_is_excused() -> None:
    s, req = _refusal_state()
    assert _fault_free_refusal(s, "p0", req, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER) is None


def test_a_refusal_whose_predecessor_is_in_the_log_is_still_caught() -> None:
    """Hand-applied defect: the leader holds seq 0 of epoch 1 and still refuses seq 1 (the next sequence)."""
    s, req = _refusal_state()
    leader = s.partitions[0]
    written = LogEntry(0, 1, 0, (4,), transactional=True)
    s = s._replace(partitions=(leader._replace(log=(*leader.log, written)),))
    label = _fault_free_refusal(s, "p0", req, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert label is not None and "seq 1" in label


def test_an_epoch_refusal_or_a_first_batch_refusal_is_still_caught() -> None:
    s, req = _refusal_state()
    assert _fault_free_refusal(s, "p0", req, Errors.INVALID_PRODUCER_EPOCH) is not None
    # the first batch of the epoch refused (nothing before it missing)
    first = req._replace(base_sequence=0, records=(4,))
    assert _fault_free_refusal(s, "p0", first, Errors.OUT_OF_ORDER_SEQUENCE_NUMBER) is not None
    # a client that kept its sequences: its new epoch's first batch carries seq 2 and nothing lower is held
    c = s.clients[0]
    kept = c._replace(data=c.data._replace(batches=()))
    s2 = s._replace(clients=(kept,))
    assert _fault_free_refusal(s2, "p0", req._replace(base_sequence=2), Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)


def test_the_pipelined_scenario_holds_and_reaches_the_refusal() -> None:
    sc = resolve_scenario(SCENARIO)
    result, _ = explore(build_model(sc), sc.name, "kafka")
    assert result.complete and not result.violated
    reached = {p.name: p.verdict.value for p in result.properties}
    assert reached["out_of_order_behind_missing_batch"] == "reached"
    assert reached["sole_producer_not_fenced"] == "holds"


def test_a_client_keeping_its_sequences_across_the_tv2_epoch_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-applied defect (the promise's own bug class): no ``resetSequenceNumbers`` when a TV2 EndTxn returns a
    new epoch -- the client keeps each partition's sequences.  The narrowed property still fails on the scenario."""
    real = tp._fresh_data

    def keeps_sequences(data: prod.Producer, pid: int, epoch: int) -> prod.Producer:
        fresh = real(data, pid, epoch)
        if data.producer_epoch < 0:
            return fresh
        return fresh._replace(partitions=tuple(e._replace(producer_epoch=epoch) for e in data.partitions))

    monkeypatch.setattr(tp, "_fresh_data", keeps_sequences)
    sc = resolve_scenario(SCENARIO)
    result, _ = explore(build_model(sc), sc.name, "kafka")
    verdicts = {p.name: p for p in result.properties}
    assert verdicts["sole_producer_not_fenced"].verdict.value == "violated"
