"""A misbehaving client's batch (``ForgedProduce``): the leader answers OUT_OF_ORDER_SEQUENCE_NUMBER, never appends.

``ProducerAppendInfo.checkSequence``/``inSequence``: a batch of the cached producer id and epoch must start right
after the last cached batch (or at 0 right after the top of the sequence space).  The fault presents one that
restarts at 0 before the top, or skips one sequence; no client reads its answer.
"""

from __future__ import annotations

from keos.model.interface import Action
from keos.model.protocol.messages import ProduceRequest
from keos.model.systems.idempotence import FORGED_NEW_EPOCH, FORGED_RESTART, FORGED_SKIP, KafkaSystem, SystemState
from keos.scenarios import build_model, resolve_scenario


def _take(m: KafkaSystem, s: SystemState, kind: str) -> SystemState:
    action = next(a for a in m.actions(s) if a.kind == kind)
    step = m.step(s, action)
    assert step is not None
    return step.state


def _append(m: KafkaSystem, s: SystemState, records: int) -> SystemState:
    """Send, produce and acknowledge ``records`` one-record batches, one at a time."""
    for _ in range(records):
        s = _take(m, s, "Send")
        s = _take(m, s, "SendProduce")
        s = _take(m, s, "Deliver")  # the request
        s = _take(m, s, "Deliver")  # its answer
    return s


def _forge(m: KafkaSystem, s: SystemState, forged: int) -> tuple[SystemState, tuple[str, ...]]:
    step = m.step(s, Action("ForgedProduce", (0, s.partitions[0].producers[0].producer_id, forged)))
    assert step is not None
    return step.state, step.events


def _model(variant: str | None = None) -> KafkaSystem:
    m = build_model(resolve_scenario("reach_idempotence_wrap"), variant)
    assert isinstance(m, KafkaSystem)
    return m


def test_forged_sequences_are_refused_and_no_answer_is_sent() -> None:
    m = _model()
    s = _take(m, m.init_states()[0], "InitProducerId")
    s = _append(m, s, 1)
    assert not any(a.kind == "ForgedProduce" for a in m.actions(s))  # two records of the epoch needed
    s = _append(m, s, 1)  # sequences 0, 1: the next is 2
    kinds = {a.args[2] for a in m.actions(s) if a.kind == "ForgedProduce"}
    assert kinds == {FORGED_RESTART, FORGED_SKIP, FORGED_NEW_EPOCH}
    for forged in (FORGED_RESTART, FORGED_SKIP, FORGED_NEW_EPOCH):
        after, events = _forge(m, s, forged)
        assert "forged_sequence_refused" in events
        assert after.partitions[0].log == s.partitions[0].log
        assert after.network == s.network and not after.ghost.wrong_answers
    s = _append(m, s, 4)  # sequences up to 5, the top of a space of 6: 0 is the next one, not a forged one
    kinds = {a.args[2] for a in m.actions(s) if a.kind == "ForgedProduce"}
    assert kinds == {FORGED_SKIP}  # and a new epoch would rightly start at 0
    after, events = _forge(m, s, FORGED_SKIP)
    assert "forged_sequence_refused" in events and after.partitions[0].log == s.partitions[0].log


def test_a_leader_without_the_sequence_check_appends_the_forged_batch() -> None:
    m = _model("broker_accepts_any_sequence")
    s = _take(m, m.init_states()[0], "InitProducerId")
    s = _append(m, s, 2)
    after, events = _forge(m, s, FORGED_RESTART)
    assert "append" in events and after.ghost.wrong_answers
    assert not any(isinstance(e.body, ProduceRequest) or e.connection < 0 for e in after.network)
