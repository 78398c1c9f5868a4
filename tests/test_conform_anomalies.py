"""The conformance checker: each anomaly found with minimal evidence, none in a clean history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keos.checker.conform import edn
from keos.checker.conform.anomalies import KINDS, check
from keos.checker.conform.history import History, Op
from keos.checker.conform.runner import confirm

FIXTURE = Path(__file__).parent / "data" / "conform" / "jepsen_duplicate_aborted_read.edn"


class Builder:
    """Histories written op by op: ``b.op(process, f, invoke_value, type, done_value, **extra)``."""

    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.t = 0

    def _add(self, typ: str, process: Any, f: str, value: Any, error: str | None, extra: dict[str, Any]) -> Op:
        self.t += 1_000_000
        op = Op(len(self.ops), self.t, typ, process, f, value, error, extra)
        self.ops.append(op)
        return op

    def op(
        self,
        process: Any,
        f: str,
        value: Any,
        typ: str = "ok",
        done: Any = None,
        error: str | None = None,
        **extra: Any,
    ) -> Op:
        self._add("invoke", process, f, value, None, extra)
        return self._add(typ, process, f, value if done is None else done, error, extra)

    def send(self, process: Any, key: int, value: int, offset: int | None, typ: str = "ok", **extra: Any) -> Op:
        done = [["send", key, [offset, value]]] if offset is not None else None
        return self.op(process, extra.pop("f", "send"), [["send", key, value]], typ, done, **extra)

    def poll(self, process: Any, records: dict[int, list[tuple[int, int]]], **extra: Any) -> Op:
        extra.setdefault("isolation", "read_committed")
        value = [["poll", {k: [list(r) for r in rs] for k, rs in records.items()}]]
        return self.op(process, "poll", [["poll"]], "ok", value, **extra)

    def history(self) -> History:
        return History(self.ops)


def kinds(h: History) -> list[str]:
    """The kinds found; each anomaly's evidence must show it again when checked alone."""
    found = check(h).anomalies
    unconfirmed = [a for a in found if not confirm(h, a)]
    assert unconfirmed == [], [a.summary for a in unconfirmed]
    return sorted({a.kind for a in found})


def clean() -> Builder:
    b = Builder()
    b.send(0, 0, 1, 0)
    b.send(0, 0, 2, 1)
    b.op(1, "txn", [["send", 0, 3], ["send", 1, 3]], "ok", [["send", 0, [2, 3]], ["send", 1, [0, 3]]])
    b.op(1, "txn", [["send", 0, 4]], "fail", error="abort")
    b.send(0, 0, 5, 4)
    b.poll(9, {0: [(0, 1), (1, 2)], 1: [(0, 3)]})
    b.poll(9, {0: [(2, 3), (4, 5)]})
    return b


def test_a_clean_history_has_no_anomaly_and_exercises_the_core_checks() -> None:
    a = check(clean().history())
    assert a.anomalies == []
    for name in ("duplicate", "lost-write", "G1a", "poll-skip", "nonmonotonic-poll", "nonmonotonic-send"):
        assert a.exercised[name], name
    assert not a.exercised["zombie-not-fenced"]


def test_duplicate_evidence_is_the_writer_and_the_readers() -> None:
    b = Builder()
    w = b.send(0, 0, 1, 0)
    b.send(0, 0, 2, 2)
    r = b.poll(9, {0: [(0, 1), (1, 1), (2, 2)]})
    found = check(b.history()).anomalies
    assert [x.kind for x in found] == ["duplicate"]
    assert {op.index for op in found[0].ops} == {w.index - 1, w.index, r.index}
    assert "offsets [0, 1]" in found[0].summary


def test_inconsistent_offsets() -> None:
    b = Builder()
    b.send(0, 0, 1, 0)
    b.poll(9, {0: [(0, 7)]})
    assert "inconsistent-offsets" in kinds(b.history())


def test_lost_write_needs_a_reader_that_read_past_it() -> None:
    b = Builder()
    b.send(0, 0, 1, 0)
    b.send(0, 0, 2, 1)
    b.send(0, 0, 3, 2)
    b.poll(9, {0: [(0, 1)]})
    assert kinds(b.history()) == ["unseen"]  # nobody read past offset 1: not lost, only unseen (Jepsen)
    b.poll(9, {0: [(2, 3)]})
    assert kinds(b.history()) == ["lost-write", "poll-skip", "unseen"]


def test_g1a_only_for_read_committed_polls() -> None:
    b = Builder()
    b.op(1, "txn", [["send", 0, 4]], "fail", error="abort")
    b.poll(8, {0: [(0, 4)]}, isolation="read_uncommitted")
    assert kinds(b.history()) == []
    b.poll(9, {0: [(0, 4)]})
    found = check(b.history()).anomalies
    assert [x.kind for x in found] == ["G1a"]
    assert [op.type for op in found[0].ops] == ["invoke", "fail", "ok"]


def test_precommitted_read_uses_commit_at() -> None:
    b = Builder()
    b.poll(9, {0: [(0, 1)]})
    b.op(1, "txn", [["send", 0, 1]], "ok", [["send", 0, [0, 1]]], commit_at=10**12)
    assert kinds(b.history()) == ["precommitted-read"]
    ok = Builder()
    ok.op(1, "txn", [["send", 0, 1]], "ok", [["send", 0, [0, 1]]], commit_at=1)
    ok.poll(9, {0: [(0, 1)]})
    assert kinds(ok.history()) == []


def test_nonmonotonic_poll_and_send() -> None:
    b = Builder()
    b.send(0, 0, 1, 5)
    b.send(0, 0, 2, 3)
    b.poll(9, {0: [(5, 1)]})
    b.poll(9, {0: [(3, 2)]})
    assert kinds(b.history()) == ["nonmonotonic-poll", "nonmonotonic-send"]


def test_reassignment_keeps_the_position_of_keys_still_held_as_jepsen_does() -> None:
    """Jepsen's poll-skip keeps a consumer's last read of every key its new assignment still holds."""
    b = Builder()
    b.send(0, 0, 1, 0)
    b.poll(9, {0: [(0, 1)]})
    b.op(9, "assign", [1])  # key 0 dropped: its position is forgotten
    b.op(9, "assign", [0, 1])
    b.poll(9, {0: [(0, 1)]})
    assert kinds(b.history()) == []
    held = Builder()
    held.send(0, 0, 1, 0)
    held.poll(9, {0: [(0, 1)]})
    held.op(9, "assign", [0])  # still held: reading offset 0 again goes backwards
    held.poll(9, {0: [(0, 1)]})
    assert kinds(held.history()) == ["nonmonotonic-poll"]
    seek = Builder()  # keos's rewind: an explicit seek to the group's committed offsets
    seek.send(0, 0, 1, 0)
    seek.poll(9, {0: [(0, 1)]})
    seek.op(9, "assign", [0], "ok", [[0, 0]])
    seek.poll(9, {0: [(0, 1)]})
    assert kinds(seek.history()) == []


def test_torn_transaction() -> None:
    b = Builder()
    b.send(0, 1, 10, 0)
    b.op(1, "txn", [["send", 0, 1], ["send", 1, 1]], "ok", [["send", 0, [0, 1]], ["send", 1, [1, 1]]])
    b.send(0, 1, 11, 2)
    b.poll(9, {0: [(0, 1)], 1: [(0, 10), (2, 11)]})
    assert "torn-transaction" in kinds(b.history())


def test_zombie_not_fenced_and_the_fencing_error_class() -> None:
    b = Builder()
    tid = {"transactional_id": "t"}
    b.op(1, "init", None, **tid, instance=1)
    b.op(2, "init", None, **tid, instance=2)
    zombie = b.op(1, "txn", [["send", 0, 1]], "ok", [["send", 0, [0, 1]]], **tid, instance=1)
    b.poll(9, {0: [(0, 1)]})
    found = [a for a in check(b.history()).anomalies if a.kind == "zombie-not-fenced"]
    assert len(found) == 1 and zombie in found[0].ops and "read_committed poll" in found[0].summary

    fenced = Builder()
    fenced.op(1, "init", None, **tid, instance=1)
    fenced.op(2, "init", None, **tid, instance=2)
    fenced.op(1, "txn", [["send", 0, 1]], "fail", error="PRODUCER_FENCED", **tid, instance=1, error_class="fatal")
    assert kinds(fenced.history()) == []
    wrong = Builder()
    wrong.op(1, "init", None, **tid, instance=1)
    wrong.op(2, "init", None, **tid, instance=2)
    wrong.op(1, "txn", [["send", 0, 1]], "fail", error="NOT_LEADER_OR_FOLLOWER", **tid, instance=1)
    assert kinds(wrong.history()) == ["wrong-error-class"]


def test_wrong_error_class_from_the_clients_own_flags() -> None:
    b = Builder()
    b.send(0, 0, 1, None, "fail", error="NOT_LEADER_OR_FOLLOWER", error_class="fatal")
    assert kinds(b.history()) == ["wrong-error-class"]
    ok = Builder()
    ok.send(0, 0, 1, None, "info", error="REQUEST_TIMED_OUT", error_class="retriable")
    assert kinds(ok.history()) == []


def test_hanging_lso_only_from_a_quiescent_probe() -> None:
    b = Builder()
    b.op(1, "txn", [["send", 0, 1]], "info", error="crashed")
    marks = {0: {"last_stable": 0, "high_watermark": 1}}
    b.op(5, "offsets", None, "ok", marks)
    assert kinds(b.history()) == []
    b.op(5, "offsets", None, "ok", marks, quiescent=True)
    found = check(b.history()).anomalies
    assert [a.kind for a in found] == ["hanging-lso"]
    assert [op.f for op in found[0].ops] == ["txn", "txn", "offsets"]


def test_jepsen_fixture_shows_its_duplicate_and_aborted_read() -> None:
    found = check(edn.read_history(FIXTURE)).by_kind()
    assert sorted(found) == ["G1a", "duplicate"]
    (dup,) = found["duplicate"]
    assert dup.key == 0 and "value 4" in dup.summary and [op.index for op in dup.ops] == [6, 7, 9]
    (g1a,) = found["G1a"]
    assert [op.index for op in g1a.ops] == [2, 3, 9]


def test_every_kind_is_documented() -> None:
    assert len({k.name for k in KINDS}) == len(KINDS) == 19
    assert all(k.meaning and k.reference and k.origin in ("jepsen", "keos") for k in KINDS)


def test_client_state_changes_checked_against_kafkas_producer() -> None:
    b = Builder()
    for change in (
        ["Init", "WaitPID"],
        ["WaitPID", "ReadyNotAcked"],
        ["ReadyNotAcked", "Ready"],
        ["Ready", "InTransaction"],
        ["InTransaction", "BeginCommit"],
        ["BeginCommit", "CommitNotAcked"],
        ["CommitNotAcked", "Ready"],
        ["Ready", "InTransaction"],
        ["InTransaction", "AbortableError"],
        ["AbortableError", "BeginAbort"],
        ["BeginAbort", "WaitPID"],
        ["WaitPID", "Ready"],
    ):
        b.ops.append(Op(len(b.ops), len(b.ops), "info", "client:p", "client-state", change))
    assert kinds(b.history()) == []
    b.ops.append(Op(len(b.ops), len(b.ops), "info", "client:p", "client-state", ["Ready", "CommittingTransaction"]))
    found = check(b.history()).anomalies
    assert [a.kind for a in found] == ["invalid-client-transition"]
    assert "COMMITTING_TRANSACTION from READY" in found[0].summary and len(found[0].ops) == 1


def test_g1c_a_cycle_of_reads_between_committed_transactions() -> None:
    b = Builder()
    # Each consume-transform-produce transaction consumed the other's output: impossible if both committed.
    b.op(1, "txn", [["poll"]], "ok", [["poll", {1: [[0, 20]]}], ["send", 0, [0, 10]]])
    b.op(2, "txn", [["poll"]], "ok", [["poll", {0: [[0, 10]]}], ["send", 1, [0, 20]]])
    found = check(b.history()).anomalies
    assert [a.kind for a in found] == ["G1c"]
    assert [op.index for op in found[0].ops] == [0, 1, 2, 3]
    assert kinds(b.history()) == ["G1c"]  # confirmed on its evidence
    chain = Builder()
    chain.op(1, "txn", [["send", 0, 10]], "ok", [["send", 0, [0, 10]]])
    chain.op(2, "txn", [["poll"]], "ok", [["poll", {0: [[0, 10]]}], ["send", 1, [0, 20]]])
    chain.op(3, "txn", [["poll"]], "ok", [["poll", {1: [[0, 20]]}], ["send", 2, [0, 30]]])
    assert "G1c" not in kinds(chain.history())


def test_a_kept_producer_id_must_come_with_a_higher_epoch() -> None:
    from keos.checker.conform.client_view import parse_pid

    assert parse_pid("GETPID [x]: Acquired PID{Id:42,Epoch:0}") == (42, 0)
    assert parse_pid("DRAIN [x]: All partitions drained, bumped epoch to PID{Id:42,Epoch:1}") == (42, 1)
    assert parse_pid("Acquiring ProducerId") is None
    b = Builder()
    for pid in ([42, 0], [42, 1], [77, 0]):  # a bump, then a new producer id (any epoch)
        b.ops.append(Op(len(b.ops), len(b.ops), "info", "client:p", "client-pid", pid))
    assert kinds(b.history()) == []
    b.ops.append(Op(len(b.ops), len(b.ops), "info", "client:p", "client-pid", [77, 0]))
    found = check(b.history()).anomalies
    assert [a.kind for a in found] == ["invalid-client-transition"] and "KIP-360" in found[0].summary
    assert [op.value for op in found[0].ops] == [[77, 0], [77, 0]]


def _fenced_while_open(commit: str, error: str | None = None) -> tuple[Builder, Op]:
    """Instance 1 sends in a transaction; instance 2's InitProducerId completes; then instance 1 commits."""
    b = Builder()
    tid = {"transactional_id": "t"}
    b.op(1, "init", None, **tid, instance=1)
    inv = b._add("invoke", 1, "txn", [["send", 0, 1]], None, {**tid, "instance": 1})
    b.op(2, "init", None, **tid, instance=2)
    done_value = [["send", 0, [0, 1]]] if commit == "ok" else None
    extra = {**tid, "instance": 1, "commit_at": b.t + 500_000}
    if error:
        extra["error_class"] = "fatal" if "FENCED" in error else "retriable"
    done = b._add(commit, 1, "txn", done_value or inv.value, error, extra)
    return b, done


def test_a_zombie_fenced_during_its_open_transaction() -> None:
    b, done = _fenced_while_open("ok")
    found = [a for a in check(b.history()).anomalies if a.kind == "zombie-not-fenced"]
    assert len(found) == 1 and done in found[0].ops and "was open when" in found[0].summary
    assert confirm(b.history(), found[0])
    # Tansu's way: the commit times out (outcome unknown) but read_committed readers see the record.
    tansu, _ = _fenced_while_open("info", "REQUEST_TIMED_OUT")
    tansu.poll(9, {0: [(0, 1)]})
    assert kinds(tansu.history()) == ["wrong-error-class", "zombie-not-fenced"]  # and not a fencing error
    # Kafka's way: the commit fails with a fencing error and nothing is visible.
    kafka, _ = _fenced_while_open("fail", "PRODUCER_FENCED")
    kafka.poll(9, {0: []})
    assert kinds(kafka.history()) == []


def test_commit_after_expiry_only_where_kafka_semantics_are_claimed() -> None:
    def stalled(typ: str, stall_ms: int, meta: dict[str, Any]) -> History:
        b = Builder()
        sent = 5_000_000
        extra = {"sent_at": sent, "commit_at": sent + stall_ms * 1_000_000, "transaction_timeout_ms": 3000}
        b.op(1, "txn", [["send", 0, 1]], typ, [["send", 0, [0, 1]]] if typ == "ok" else None, **extra)
        return History(b.ops, meta)

    kafka = {"kafka_semantics": True, "abort_interval_ms": 1000}
    h = stalled("ok", 14_000, kafka)
    assert kinds(h) == ["commit-after-expiry"] and check(h).exercised["commit-after-expiry"]
    assert (
        kinds(stalled("fail", 14_000, kafka)) == []
        and check(stalled("fail", 14_000, kafka)).exercised["commit-after-expiry"]
    )
    assert kinds(stalled("ok", 4_000, kafka)) == []  # within timeout + interval + margin: may commit
    unclaimed = stalled("ok", 14_000, {})
    assert kinds(unclaimed) == [] and not check(unclaimed).exercised["commit-after-expiry"]


def test_a_read_uncommitted_reader_does_not_tear_a_transaction() -> None:
    """Only read_committed readers can read past a committed record without it counting as seen."""
    b = Builder()
    b.op(1, "txn", [["send", 0, 1], ["send", 1, 1]], "ok", [["send", 0, [0, 1]], ["send", 1, [1, 1]]])
    b.send(0, 1, 10, 0)
    b.send(0, 1, 11, 2)
    b.poll(9, {0: [(0, 1)]})
    b.poll(8, {1: [(0, 10), (1, 1), (2, 11)]}, isolation="read_uncommitted")
    assert kinds(b.history()) == []
    b.poll(7, {1: [(0, 10), (2, 11)]})  # a read_committed reader skipping offset 1 does tear it
    assert "torn-transaction" in kinds(b.history())


def test_only_a_read_committed_read_promotes_an_unknown_transaction() -> None:
    """Found on real Kafka (3 nodes, kill -9): a fenced zombie's aborted records, seen by a
    read_uncommitted drain, must not make a read_committed consumer's skip over them a poll-skip."""
    b = Builder()
    b.send(0, 0, 1, 0)
    b.op(1, "txn", [["send", 0, 2]], "info", error="_FENCED")  # aborted by the coordinator at offset 1
    b.send(0, 0, 3, 2)
    b.poll(9, {0: [(0, 1), (2, 3)]})
    b.poll(8, {0: [(0, 1), (1, 2), (2, 3)]}, isolation="read_uncommitted")
    assert kinds(b.history()) == []
    b.poll(7, {0: [(1, 2)]})  # a read_committed reader returned it: committed after all, so the skip is one
    assert "int-poll-skip" in kinds(b.history())
