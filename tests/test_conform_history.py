"""The conformance history format: JSON and Jepsen EDN, both ways."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keos.checker.conform import edn
from keos.checker.conform.history import History, HistoryError, Op, Recorder, dump_json, load_json

FIXTURE = Path(__file__).parent / "data" / "conform" / "jepsen_duplicate_aborted_read.edn"


def test_edn_reader_reads_the_forms_jepsen_writes() -> None:
    forms = list(edn.loads_all('{:a [1 2N 3.5 "x\\"y"], :b #{:k}, :c nil} ; comment\n(1 #_ 2 3) #inst "2026" \\c'))
    assert forms[0] == {
        edn.Keyword("a"): [1, 2, 3.5, 'x"y'],
        edn.Keyword("b"): frozenset({edn.Keyword("k")}),
        edn.Keyword("c"): None,
    }
    assert forms[1] == (1, 3)
    assert forms[2] == "2026"
    assert forms[3] == "c"


@pytest.mark.parametrize("bad", ["{:a 1", "[1 2", '"open', "{:a}", ")"])
def test_edn_reader_rejects_malformed_text_with_a_line(bad: str) -> None:
    with pytest.raises(edn.EdnError, match="EDN line 1"):
        list(edn.loads_all(bad))


def test_jepsen_fixture_imports_with_pairs_and_records() -> None:
    h = edn.read_history(FIXTURE)
    assert len(h) == 12
    assert [op.type for op in h.ops[:4]] == ["invoke", "ok", "invoke", "fail"]
    assert h.ops[3].error == '[:abort "aborted by the test"]'
    assert h.completion(h.ops[4]) is h.ops[5]  # a tagged #jepsen.history.Op record
    writes = {(w.key, w.value): (w.offset, w.op.type) for w in h.writes()}
    assert writes[(0, 2)] == (None, "fail")
    assert writes[(0, 4)] == (4, "ok")
    reads = [(r.key, r.offset, r.value) for r in h.reads()]
    assert (0, 3, 4) in reads and (1, 0, 1) in reads


def test_edn_export_round_trips(tmp_path: Path) -> None:
    h = edn.read_history(FIXTURE)
    again = edn.history_from_edn(edn.history_to_edn(h))
    assert [op.to_json() for op in again.ops] == [op.to_json() for op in h.ops]
    text = edn.history_to_edn(h)
    assert "[:send 0 [4 4]]" in text and ":type :fail" in text and "{0 [[0 1] [1 2]" in text


def test_json_round_trip_keeps_integer_keys_and_extras(tmp_path: Path) -> None:
    rec = Recorder({"target": "test"})
    inv = rec.invoke(7, "poll", [["poll"]], isolation="read_committed")
    rec.complete(inv, "ok", [["poll", {3: [[0, 10]]}]])
    path = dump_json(rec.history(), tmp_path / "h.json")
    back = load_json(path)
    assert back.meta == {"target": "test"}
    assert back.ops[1].value == [["poll", {3: [[0, 10]]}]]
    assert back.ops[1].isolation == "read_committed"
    assert [(r.key, r.offset, r.value) for r in back.reads()] == [(3, 0, 10)]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"ops": [{"type": "maybe", "f": "send", "process": 0}]}, "type must be"),
        ({"ops": [{"type": "ok", "process": 0}]}, "f must be"),
        ({"format": "other/9", "ops": []}, "unknown history format"),
        ({"nope": 1}, "JSON list"),
    ],
)
def test_malformed_json_history_is_bad_input(tmp_path: Path, doc: object, message: str) -> None:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(doc))
    with pytest.raises(HistoryError, match=message):
        load_json(p)


def test_a_process_runs_one_operation_at_a_time() -> None:
    ops = [Op(0, 0, "invoke", 1, "send", []), Op(1, 1, "invoke", 1, "send", [])]
    with pytest.raises(HistoryError, match="still running"):
        History(ops)


def test_keos_extras_survive_edn_both_ways() -> None:
    rec = Recorder()
    fault = rec.invoke("nemesis", "fault", None)
    rec.complete(fault, "info", "broker 1 down")
    rec.note("client:txn-0", "client-state", ["Ready", "InTransaction"])
    inv = rec.invoke(0, "txn", [["send", 1, 5]], transactional_id="t", instance=2)
    rec.complete(inv, "ok", [["send", 1, [3, 5]]], commit_at=7)
    probe = rec.invoke("probe", "offsets", None, quiescent=True)
    rec.complete(probe, "ok", {1: {"last_stable": 4, "high_watermark": 4}})
    h = rec.history()
    text = edn.history_to_edn(h)
    assert ":process :nemesis" in text and ":transactional-id" in text and ":commit-at 7" in text
    back = edn.history_from_edn(text)
    assert [op.to_json() for op in back.ops] == [op.to_json() for op in h.ops]
