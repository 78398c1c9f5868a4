"""Jepsen's own test cases of its Kafka checker, checked by keos kind by kind.

Each history below is one of ``jepsen/test/jepsen/tests/kafka_test.clj`` (jepsen-io/jepsen,
0.3.14-SNAPSHOT), written as the ``history.edn`` Jepsen would store, with the anomaly kind
that test asserts and what Jepsen says about it: found (with the value or key Jepsen
reports) or absent.  keos must agree.  Keys are Jepsen's keywords (``:x`` reads as ``"x"``).
"""

from __future__ import annotations

from typing import Any

import pytest

from keos.checker.conform.anomalies import check
from keos.checker.conform.edn import history_from_edn
from keos.checker.conform.runner import confirm


def o(index: int, process: int, typ: str, f: str, value: str) -> str:
    return f"{{:index {index}, :time {index}, :process {process}, :type :{typ}, :f :{f}, :value {value}}}"


def found(lines: list[str], kind: str) -> list[Any]:
    h = history_from_edn("\n".join(lines))
    anomalies = [a for a in check(h).anomalies if a.kind == kind]
    assert all(confirm(h, a) for a in anomalies)  # every finding stands on its own evidence
    return anomalies


SEND_1 = [
    o(0, 0, "invoke", "send", "[[:send :x 1] [:send :y 1]]"),
    o(1, 0, "info", "send", "[[:send :x [0 1]] [:send :y 1]]"),
]
SEND_2 = [o(2, 1, "invoke", "send", "[[:send :x 2]]"), o(3, 1, "ok", "send", "[[:send :x [0 2]]]")]


def test_inconsistent_offsets_only_once_a_read_proves_the_info_send() -> None:
    assert found(SEND_1 + SEND_2, "inconsistent-offsets") == []
    poll = [o(4, 2, "invoke", "poll", "[[:poll]]"), o(5, 2, "ok", "poll", "[[:poll {:y [[5 1]]}]]")]
    (a,) = found(SEND_1 + SEND_2 + poll, "inconsistent-offsets")
    assert a.key == "x" and "offset 0" in a.summary


def test_g1a() -> None:
    h = [
        o(0, 0, "invoke", "send", "[[:send :x 2] [:send :y 3]]"),
        o(1, 0, "fail", "send", "[[:send :x 2] [:send :y 3]]"),
        o(2, 1, "invoke", "poll", "[[:poll]]"),
        o(3, 1, "ok", "poll", "[[:poll {:x [[0 2]]}]]"),
    ]
    (a,) = found(h, "G1a")
    assert a.key == "x" and "value 2" in a.summary


def test_lost_write_consistent() -> None:
    h = [
        o(0, 0, "invoke", "send", "[[:send :x :a]]"),
        o(1, 0, "ok", "send", "[[:send :x [0 :a]]]"),
        o(2, 0, "invoke", "send", "[[:send :x :b] [:send :x :d]]"),
        o(3, 0, "ok", "send", "[[:send :x [1 :b]] [:send :x [3 :d]]]"),
        o(4, 1, "invoke", "send", "[[:send :x :c]]"),
        o(5, 1, "info", "send", "[[:send :x :c]]"),
        o(6, 0, "invoke", "poll", "[[:poll]]"),
        o(7, 0, "ok", "poll", "[[:poll {:x [[2 :c]]}]]"),
    ]
    assert sorted(a.summary.split()[1] for a in found(h, "lost-write")) == ["a", "b"]  # not d: above the read


def test_lost_write_inconsistent() -> None:
    h = [
        o(0, 0, "invoke", "send", "[[:send :x :a]]"),
        o(1, 0, "ok", "send", "[[:send :x [0 :a]]]"),
        o(2, 0, "invoke", "send", "[[:send :x :b] [:send :x :c]]"),
        o(3, 0, "ok", "send", "[[:send :x [0 :b]] [:send :x [2 :c]]]"),
        o(4, 0, "invoke", "poll", "[[:poll]]"),
        o(5, 0, "ok", "poll", "[[:poll {:x [[0 :b] [2 :c]]}]]"),
    ]
    assert [a.summary.split()[1] for a in found(h, "lost-write")] == ["a"]


def test_lost_write_atomic_promotion_of_an_info_send() -> None:
    send_ab = [
        o(0, 0, "invoke", "send", "[[:send :x :a] [:send :y :b]]"),
        o(1, 0, "info", "send", "[[:send :x :a] [:send :y [0 :b]]]"),
    ]
    send_c = [o(2, 1, "invoke", "send", "[[:send :y :c]]"), o(3, 1, "info", "send", "[[:send :y :c]]")]
    poll_a = [o(4, 2, "invoke", "poll", "[[:poll]]"), o(5, 2, "ok", "poll", "[[:poll {:x [[0 :a]]}]]")]
    poll_c = [o(6, 3, "invoke", "poll", "[[:poll]]"), o(7, 3, "ok", "poll", "[[:poll {:y [[1 :c]]}]]")]
    assert found(send_ab + send_c + poll_c, "lost-write") == []  # nothing proves send-ab committed
    (a,) = found(send_ab + send_c + poll_a + poll_c, "lost-write")  # the read of :a does
    assert a.key == "y" and a.summary.split()[1] == "b"


POLL_SKIP = {
    "poll-1-2": [o(0, 0, "invoke", "poll", "[[:poll]]"), o(1, 0, "ok", "poll", "[[:poll {:x [[1 :a] [2 :b]]}]]")],
    "poll-3": [o(2, 1, "invoke", "poll", "[[:poll]]"), o(3, 1, "ok", "poll", "[[:poll {:x [[3 :c]]}]]")],
    "poll-4": [o(6, 0, "invoke", "poll", "[[:poll]]"), o(7, 0, "ok", "poll", "[[:poll {:x [[4 :d]]}]]")],
    "write-6": [o(10, 2, "invoke", "send", "[[:send :x :f]]"), o(11, 2, "ok", "send", "[[:send :x [6 :f]]]")],
    "poll-7": [o(12, 0, "invoke", "poll", "[[:poll]]"), o(13, 0, "ok", "poll", "[[:poll {:x [[7 :g]]}]]")],
    "write-*": [
        o(14, 3, "invoke", "send", "[[:send :x :a] [:send :x :b] [:send :x :c] [:send :x :d] [:send :x :g]]"),
        o(15, 3, "info", "send", "[[:send :x :a] [:send :x :b] [:send :x :c] [:send :x :d] [:send :x :g]]"),
    ],
    "sub-y": [o(4, 0, "invoke", "subscribe", "[:y]"), o(5, 0, "ok", "subscribe", "[:y]")],
    "assign-y": [o(8, 0, "invoke", "assign", "[:y]"), o(9, 0, "info", "assign", "[:y]")],
    "sub-xy": [o(4, 0, "invoke", "subscribe", "[:x :y]"), o(5, 0, "ok", "subscribe", "[:x :y]")],
    "assign-xy": [o(8, 0, "invoke", "assign", "[:x :y]"), o(9, 0, "ok", "assign", "[:x :y]")],
}


def _ps(*names: str) -> list[str]:
    return [line for n in names for line in POLL_SKIP[n]]


def test_poll_skip() -> None:
    skips = found(_ps("poll-1-2", "poll-3", "poll-4", "write-6", "poll-7", "write-*"), "poll-skip")
    assert sorted(a.summary.rsplit("skipping offset ", 1)[1].split()[0] for a in skips) == ["3", "6"]
    # a subscribe or assign that drops :x forgets the position
    assert (
        found(_ps("poll-1-2", "poll-3", "sub-y", "poll-4", "assign-y", "write-6", "poll-7", "write-*"), "poll-skip")
        == []
    )
    # one that still covers :x keeps it
    still = _ps("poll-1-2", "poll-3", "sub-xy", "poll-4", "assign-xy", "write-6", "poll-7", "write-*")
    assert len(found(still, "poll-skip")) == 2


SEND_012345 = [
    o(0, 0, "invoke", "send", "[[:send :x 0] [:send :x 1] [:send :x 2] [:send :x 3] [:send :x 4] [:send :x 5]]"),
    o(
        1,
        0,
        "ok",
        "send",
        "[[:send :x [0 0]] [:send :x [1 1]] [:send :x [2 2]] [:send :x [3 3]] [:send :x [4 4]] [:send :x [5 5]]]",
    ),
]


def test_poll_skip_across_aborted_transactions() -> None:
    good = SEND_012345 + [
        o(2, 1, "invoke", "txn", "[[:poll]]"),
        o(3, 1, "ok", "txn", "[[:poll {:x [[0 0]]}]]"),
        o(4, 1, "invoke", "txn", "[[:poll]]"),
        o(5, 1, "fail", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
        o(6, 1, "invoke", "txn", "[[:poll]]"),
        o(7, 1, "info", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
        o(8, 1, "invoke", "txn", "[[:poll]]"),
        o(9, 1, "ok", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
    ]
    for kind in ("poll-skip", "nonmonotonic-poll", "int-poll-skip", "int-nonmonotonic-poll"):
        assert found(good, kind) == []
    no_rollback = SEND_012345 + [
        o(2, 1, "invoke", "txn", "[[:poll]]"),
        o(3, 1, "ok", "txn", "[[:poll {:x [[0 0]]}]]"),
        o(4, 1, "invoke", "txn", "[[:poll]]"),
        o(5, 1, "fail", "txn", "[[:poll {:x [[1 1] [2 2]]}]]"),
        o(6, 1, "invoke", "txn", "[[:poll]]"),
        o(7, 1, "fail", "txn", "[[:poll {:x [[3 3] [4 4]]}]]"),
        o(8, 1, "invoke", "txn", "[[:poll]]"),
        o(9, 1, "ok", "txn", "[[:poll {:x [[5 5]]}]]"),
    ]
    assert len(found(no_rollback, "poll-skip")) == 2  # Jepsen: (h 3)->(h 7) and (h 3)->(h 9)
    crashed = no_rollback[:-4] + [
        o(6, 1, "invoke", "txn", "[[:poll]]"),
        o(7, 1, "info", "txn", "[[:poll {:x [[3 3] [4 4]]}]]"),
    ]
    assert len(found(crashed, "poll-skip")) == 1  # "info can be a poll-skip"


NM_POLL = {
    "send*": [
        o(0, 0, "invoke", "send", "[[:send :x :a] [:send :x :b] [:send :x :c] [:send :x :d]]"),
        o(1, 0, "ok", "send", "[[:send :x :a] [:send :x :b] [:send :x :c] [:send :x :d]]"),
    ],
    "poll-123": [
        o(2, 0, "invoke", "poll", "[[:poll]]"),
        o(3, 0, "ok", "poll", "[[:poll {:x [[1 :a] [2 :b] [3 :c]]}]]"),
    ],
    "poll-234": [
        o(6, 0, "invoke", "poll", "[[:poll]]"),
        o(7, 0, "ok", "poll", "[[:poll {:x [[2 :b] [3 :c] [4 :d]]}]]"),
    ],
    "sub-y": [o(4, 0, "invoke", "subscribe", "[:y]"), o(5, 0, "ok", "subscribe", "[:y]")],
    "assign-y": [o(4, 0, "invoke", "assign", "[:y]"), o(5, 0, "ok", "assign", "[:y]")],
    "sub-xy": [o(4, 0, "invoke", "subscribe", "[:x :y]"), o(5, 0, "ok", "subscribe", "[:x :y]")],
    "assign-xy": [o(4, 0, "invoke", "assign", "[:x :y]"), o(5, 0, "ok", "assign", "[:x :y]")],
}


@pytest.mark.parametrize(
    ("between", "jepsen_finds"), [((), 1), (("sub-y",), 0), (("assign-y",), 0), (("sub-xy",), 1), (("assign-xy",), 1)]
)
def test_nonmonotonic_poll(between: tuple[str, ...], jepsen_finds: int) -> None:
    lines = [line for n in ("send*", "poll-123", *between, "poll-234") for line in NM_POLL[n]]
    assert len(found(lines, "nonmonotonic-poll")) == jepsen_finds


NM_SEND = {
    "send-34": [
        o(0, 0, "invoke", "send", "[[:send :x :c] [:send :x :d]]"),
        o(1, 0, "ok", "send", "[[:send :x [3 :c]] [:send :x [4 :d]]]"),
    ],
    "send-12": [
        o(10, 0, "invoke", "send", "[[:send :x 1] [:send :x 2]]"),
        o(11, 0, "ok", "send", "[[:send :x [1 :a]] [:send :x [2 :b]]]"),
    ],
    "sub-y": [o(2, 0, "invoke", "subscribe", "[:y]"), o(3, 0, "ok", "subscribe", "[:y]")],
    "assign-y": [o(2, 0, "invoke", "assign", "[:y]"), o(3, 0, "info", "assign", "[:y]")],
    "sub-xy": [o(2, 0, "invoke", "subscribe", "[:x :y]"), o(3, 0, "ok", "subscribe", "[:x :y]")],
    "assign-xy": [o(2, 0, "invoke", "assign", "[:x :y]"), o(3, 0, "ok", "assign", "[:x :y]")],
}


@pytest.mark.parametrize(
    ("between", "jepsen_finds"), [((), 1), (("sub-y",), 0), (("assign-y",), 0), (("sub-xy",), 1), (("assign-xy",), 1)]
)
def test_nonmonotonic_send(between: tuple[str, ...], jepsen_finds: int) -> None:
    lines = [line for n in ("send-34", *between, "send-12") for line in NM_SEND[n]]
    assert len(found(lines, "nonmonotonic-send")) == jepsen_finds


def test_int_poll_skip() -> None:
    h = [
        o(0, 1, "invoke", "send", "[[:send :x :a] [:send :x :b] [:send :x :d]]"),
        o(1, 1, "info", "send", "[[:send :x :a] [:send :x :b] [:send :x :d]]"),
        o(2, 0, "invoke", "poll", "[[:poll]]"),
        o(3, 0, "ok", "poll", "[[:poll {:x [[1 :a] [4 :d]]}]]"),
        o(4, 0, "invoke", "poll", "[[:poll] [:poll]]"),
        o(5, 0, "ok", "poll", "[[:poll {:x [[1 :a]]}] [:poll {:x [[4 :d]]}]]"),
        o(6, 0, "invoke", "poll", "[[:poll]]"),
        o(7, 0, "ok", "poll", "[[:poll {:x [[2 :b]]}]]"),
    ]
    assert len(found(h, "int-poll-skip")) == 2


def test_int_nonmonotonic_poll() -> None:
    h = [
        o(0, 0, "invoke", "send", "[[:send :x :a] [:send :x :b] [:send :x :c]]"),
        o(1, 0, "info", "send", "[[:send :x :a] [:send :x :b] [:send :x :c]]"),
        o(2, 0, "invoke", "poll", "[[:poll]]"),
        o(3, 0, "ok", "poll", "[[:poll {:x [[3 :c] [1 :a]]}]]"),
        o(4, 0, "invoke", "poll", "[[:poll]]"),
        o(5, 0, "ok", "poll", "[[:poll {:x [[2 :b] [3 :c]]}] [:poll {:x [[3 :c]]}]]"),
    ]
    assert len(found(h, "int-nonmonotonic-poll")) == 2


def test_int_nonmonotonic_send() -> None:
    h = [
        o(0, 0, "invoke", "send", "[[:send :x 3] [:send :x 1]]"),
        o(1, 0, "ok", "send", "[[:send :x [3 :c]] [:send :x [1 :a]]]"),
        o(2, 0, "invoke", "send", "[[:send :y :d] [:send :y :b]]"),
        o(3, 0, "info", "send", "[[:send :y :d] [:send :y :b]]"),
        o(4, 1, "invoke", "send", "[[:send :y :c]]"),
        o(5, 1, "info", "send", "[[:send :y :c]]"),
        o(6, 0, "invoke", "poll", "[[:poll]]"),
        o(7, 0, "ok", "poll", "[[:poll {:y [[2 :b] [3 :c] [4 :d]]}]]"),
    ]
    assert sorted(a.key for a in found(h, "int-nonmonotonic-send")) == ["x", "y"]


def test_duplicate() -> None:
    basic = [
        o(0, 0, "invoke", "send", "[[:send :x :a]]"),
        o(1, 0, "ok", "send", "[[:send :x [1 :a]]]"),
        o(2, 1, "invoke", "send", "[[:send :x :b]]"),
        o(3, 1, "info", "send", "[[:send :x :b]]"),
        o(4, 2, "invoke", "poll", "[[:poll]]"),
        o(5, 2, "ok", "poll", "[[:poll {:x [[2 :b] [3 :a]]}]]"),
    ]
    (a,) = found(basic, "duplicate")
    assert "[1, 3]" in a.summary
    aborted = [
        o(0, 0, "invoke", "send", "[[:send :x 0]]"),
        o(1, 0, "ok", "send", "[[:send :x [1 0]]]"),
        o(2, 0, "invoke", "send", "[[:send :x 1]]"),
        o(3, 0, "fail", "send", "[[:send :x [2 1]]]"),
        o(4, 1, "invoke", "poll", "[[:poll]]"),
        o(5, 1, "fail", "poll", "[[:poll {:x [[11 0] [12 1]]}]]"),
    ]
    (a,) = found(aborted, "duplicate")  # value 0 only: 1's send never happened
    assert "value 0" in a.summary and "[1, 11]" in a.summary


def test_unseen_is_empty_once_everything_was_read() -> None:
    h = [
        o(0, 0, "invoke", "poll", "[[:poll]]"),
        o(1, 0, "ok", "poll", "[[:poll {}]]"),
        o(2, 0, "invoke", "send", "[[:send :x :a] [:send :x :b]]"),
        o(3, 0, "ok", "send", "[[:send :x [0 :a]] [:send :x [1 :b]]]"),
        o(4, 0, "invoke", "poll", "[[:poll]]"),
        o(5, 0, "ok", "poll", "[[:poll {:x [[0 :a]]}]]"),
    ]
    assert [a.summary.split()[1] for a in found(h, "unseen")] == ["b"]
    h += [o(6, 0, "invoke", "poll", "[[:poll]]"), o(7, 0, "ok", "poll", "[[:poll {:x [[1 :b]]}]]")]
    assert found(h, "unseen") == []


def test_g1c_pure_write_read() -> None:
    h = [
        o(0, 0, "invoke", "txn", "[[:send :x :a] [:poll]]"),
        o(1, 1, "invoke", "txn", "[[:send :y :b] [:poll]]"),
        o(2, 0, "ok", "txn", "[[:send :x [0 :a]] [:poll {:y [[0 :b]]}]]"),
        o(3, 1, "ok", "txn", "[[:send :y [0 :b]] [:poll {:x [[0 :a]]}]]"),
    ]
    assert len(found(h, "G1c")) == 1


def test_precommitted_read_of_its_own_send() -> None:
    h = [
        o(0, 0, "invoke", "txn", "[[:send :x :a] [:poll]]"),
        o(1, 0, "ok", "txn", "[[:send :x [0 :a]] [:poll {:x [[0 :a]]}]]"),
    ]
    (a,) = found(h, "precommitted-read")
    assert a.key == "x"
