"""Kafka's TxnOffsetCommit answer table (``coordinator_answers_per_kafka_table``) against the model's handler.

A generated family: every transaction-coordinator entry of the coordinator's own table test, current, stale,
newer and foreign (pid, epoch), the group loading or not, a known member of the current generation, a stale
generation, an unknown member, the append succeeding or failing, and the producer's state on the group's
``__consumer_offsets`` partition (none, a transaction open at the request's epoch, at an older one, a newer epoch
stored), on TV1 and TV2: the handler (``EosSystem._on_txn_offset_commit``) must answer every member exactly as
the table says.  Handlers weakened the way real defects are (checks reordered, the verdict not translated, a
row skipped) are caught on the same family.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
from test_txn_response_errors import IDS, _entries

from keos.model import network as net
from keos.model.coordinator.group import group_coordinator as gc
from keos.model.log.partition import _put_entry
from keos.model.log.producer_state import ProducerStateEntry
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import AddOffsetsToTxnRequest, TxnOffsetCommitRequest
from keos.model.systems import eos
from keos.model.systems.txn_offset_commit_table import ROWS, kafka_offset_answer
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()
TV = {
    2: "txn_eos_consume_transform_produce",
    1: "txn_eos_tv1_add_offsets",
    0: "txn_eos_late_txn_offset_commit_verification_config_off",  # TV2, partition verification config off
}
#: the producer's state on the group's partition: (epoch, transaction open) or None for no entry
ON_PARTITION = (None, (3, True), (2, True), (4, False), (3, False))


def _labels(state: Any) -> list[str]:
    return [b for b in state.ghost.bad_transitions if b.startswith("answer_table:")]


def _family(tv: int) -> Iterator[tuple[Any, Any, Any, TxnOffsetCommitRequest, bool]]:
    model = build_model(SCENARIOS[TV[tv]])
    s0 = model.init_states()[0]
    g0 = s0.group
    entries = _entries()
    entries += [e._replace(partitions=(*e.partitions, eos.OFFSETS_PARTITION)) for e in entries if e and e.partitions]
    for md, (pid, epoch), loading, (member, gen), ok, on in itertools.product(
        entries, IDS, (False, True), ((0, 1), (0, 0), (9, 1)), (True, False), ON_PARTITION
    ):
        if pid < 0:
            continue
        producers = g0.offsets_log.producers
        if on is not None:
            entry = ProducerStateEntry(pid, on[0], (), -1, 0 if on[1] else -1)
            producers = _put_entry(producers, entry)
        g = g0._replace(loading=loading, offsets_log=g0.offsets_log._replace(producers=producers))
        s = s0._replace(group=g, coordinator=(md, *s0.coordinator[1:]))
        req = TxnOffsetCommitRequest(0, 0, 0, pid, epoch, eos.GROUP, gen, member, 0, 1)
        yield model, s, net.Envelope("p0", eos.GROUP_COORDINATOR, 0, req), req, ok


def test_every_txn_offset_commit_answer_is_kafkas_table_row() -> None:
    rows: set[str] = set()
    for tv in TV:
        for model, s, env, req, ok in _family(tv):
            out, _ = model._on_txn_offset_commit(s, env, req, ok)
            assert _labels(out) == [], (tv, req, ok, s.group.loading, s.coordinator[0])
            rows.add(kafka_offset_answer(model._offset_ask(s, req, ok))[1])
    assert rows == {name for name, _ in ROWS} | {"staged"}  # every row of the table answers some member


def _caught(tv: int) -> bool:
    return any(_labels(model._on_txn_offset_commit(s, env, req, ok)[0]) for model, s, env, req, ok in _family(tv))


@pytest.mark.parametrize("tv", [1, 2])
def test_an_untranslated_verdict_is_caught(tv: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """PRODUCER_FENCED passed through to the client (not AddPartitionsToTxnManager's INVALID_PRODUCER_EPOCH)."""
    monkeypatch.setattr(gc, "VERIFICATION_ERRORS", {})
    assert _caught(tv)


def test_member_checks_that_answer_another_error_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID swapped (the class a real validateOffsetCommit defect is in)."""
    real = gc.validate_offset_commit

    def swapped(*args: Any, **kwargs: Any) -> str:
        e = real(*args, **kwargs)
        return {Errors.ILLEGAL_GENERATION: Errors.UNKNOWN_MEMBER_ID}.get(e, e)

    monkeypatch.setattr(gc, "validate_offset_commit", swapped)
    assert _caught(2)


def test_a_stale_epoch_append_accepted_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """``checkProducerEpoch`` skipped: a stale epoch staged (reached on TV1 without verification too)."""
    real = gc.append_txn_offset_commit

    def lax(g: Any, pid: int, epoch: int, partition: int, offset: int) -> Any:
        entry = g.offsets_log.entry(pid)
        return real(g, pid, epoch if entry is None else max(epoch, entry.producer_epoch), partition, offset)

    monkeypatch.setattr(gc, "append_txn_offset_commit", lax)
    assert _caught(0)


def test_add_offsets_to_txn_is_judged_by_the_coordinators_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """AddOffsetsToTxn (TV1, coordinator side): the handler agrees with the table on the family; one that answers
    CONCURRENT_TRANSACTIONS where Kafka fences is caught."""
    model = build_model(SCENARIOS[TV[1]])
    s0 = model.init_states()[0]

    def answers() -> Iterator[list[str]]:
        for md, (pid, epoch), ok in itertools.product(_entries(), IDS, (True, False)):
            s = s0._replace(coordinator=(md,))
            req = AddOffsetsToTxnRequest(0, 0, 0, pid, epoch, eos.GROUP)
            yield _labels(model._on_add_offsets(s, net.Envelope("p0", "tc", 0, req), req, ok)[0])

    assert all(labels == [] for labels in answers())
    real = eos.tc.handle_add_offsets

    def concurrent(md: Any, pid: int, epoch: int, group: int, *rest: Any) -> Any:
        out = real(md, pid, epoch, group, *rest)
        return out._replace(error=Errors.CONCURRENT_TRANSACTIONS) if out.error == Errors.PRODUCER_FENCED else out

    monkeypatch.setattr(eos.tc, "handle_add_offsets", concurrent)
    assert any(labels for labels in answers())


def _round_trip_labels() -> Iterator[list[str]]:
    """The family through ``[eos] txn_offset_commit_round_trip`` on TV2 (``txn_eos_round_trip_append_failure``): the
    request held back, the transaction coordinator's implicit add whose ``__transaction_state`` write succeeds or
    fails, then the callback whose ``__consumer_offsets`` append succeeds or fails -- every answer judged."""
    model = build_model(SCENARIOS["txn_eos_round_trip_append_failure"])
    s0 = model.init_states()[0]
    entries = _entries()
    entries += [e._replace(partitions=(*e.partitions, eos.OFFSETS_PARTITION)) for e in entries if e and e.partitions]
    for md, (pid, epoch), txn_ok, ok in itertools.product(entries, IDS, (True, False), (True, False)):
        if pid < 0:
            continue
        req = TxnOffsetCommitRequest(0, 0, 0, pid, epoch, eos.GROUP, 1, 0, 0, 1)
        env = net.Envelope("p0", eos.GROUP_COORDINATOR, 0, req)
        s = s0._replace(coordinator=(md,), network=net.send(s0.network, env))
        for append_ok in (True, txn_ok, ok):  # the request's step, the verification's, the callback's
            pending = [e for e in s.network if e.dst in (eos.GROUP_COORDINATOR, eos.COORDINATOR)]
            if not pending:
                break
            out = model._receive(s, pending[0], append_ok)
            assert out is not None
            s = out[0]
        yield _labels(s)


def test_the_round_trips_failed_writes_are_judged_by_kafkas_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every answer of the round trip is the table's, also when TV2's implicit add fails to write
    ``__transaction_state`` (COORDINATOR_NOT_AVAILABLE, retried); a group coordinator that stages the offsets of a
    verification whose add failed (the transaction coordinator never added ``__consumer_offsets``: no marker will
    end them) is caught."""
    assert all(labels == [] for labels in _round_trip_labels())
    lax = {**gc.VERIFICATION_ERRORS, Errors.COORDINATOR_NOT_AVAILABLE: Errors.NONE}
    monkeypatch.setattr(gc, "VERIFICATION_ERRORS", lax)
    assert any(labels for labels in _round_trip_labels())
