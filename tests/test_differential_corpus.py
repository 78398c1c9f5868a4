"""The recorded differential corpus: real Kafka's answers replayed on the model without a broker.

``scenarios/differential/kafka-4.0-tv1.jsonl.gz`` was recorded by ``keos differential --record`` against the
shared 4.0.0-SNAPSHOT broker; the gate replays it (``keos differential --replay``, the gate check
``@differential``).  These tests need no broker: the bundled corpus replays with no difference and reaches
every handler; a defect in a model handler (here: EndTxn no longer fencing a stale epoch, a leader accepting a
sequence gap) makes the replay fail, through the CLI and the gate check alike; a corpus round-trips byte for
byte; and malformed corpora are bad input.  The ``slow`` test in ``test_differential.py`` records a few cases
on the session's broker and replays them.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from keos.checker.differential import sides
from keos.checker.differential.cases import KINDS
from keos.checker.differential.corpus import (
    DEFAULT_CORPUS,
    Corpus,
    CorpusError,
    load_corpus,
    replay,
    write_corpus,
)
from keos.checker.reach.gate_checks import run_gate_check

KEOS = str(Path(sys.executable).parent / "keos")


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(DEFAULT_CORPUS)


def test_the_bundled_corpus_replays_with_no_difference_and_reaches_every_handler(corpus: Corpus) -> None:
    result = replay(corpus)
    assert result.cases == len(corpus.cases) >= 1000
    assert not result.differences, [d.as_dict() for d in result.differences[:3]]
    assert set(KINDS) <= set(result.compared), set(KINDS) - set(result.compared)
    for observer in ("describe_transactions", "describe_producers", "fetch", "fetch_read_committed",
                     "list_transactions", "offset_fetch_committed"):
        assert result.compared[observer] > 1000
    # the documented abstractions were recorded as the model's own answers, not dropped
    ends = {rc.end["abstraction"] for rc in corpus.cases if rc.end is not None}
    assert {"produce_verification_of_duplicates", "produce_first_sequence_on_empty_log_kafka_4_5",
            "ongoing_transaction_of_another_epoch_kafka_14563"} <= ends
    assert run_gate_check("@differential").passed


def _stale_epoch_end_txn(original: Any) -> Any:
    def handle_end_txn(md: Any, pid: int, epoch: int, *rest: Any) -> Any:
        if md is not None and md.producer_id == pid and epoch < md.producer_epoch:
            epoch = md.producer_epoch  # the defect: a zombie's EndTxn is taken for the current producer's
        return original(md, pid, epoch, *rest)

    return handle_end_txn


def test_a_coordinator_that_stops_fencing_a_stale_end_txn_fails_the_replay(
        corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sides.tc, "handle_end_txn", _stale_epoch_end_txn(sides.tc.handle_end_txn))
    result = replay(corpus)
    handlers = {d.handler for d in result.unexplained}
    assert "end_txn" in handlers, handlers
    d = next(d for d in result.unexplained if d.handler == "end_txn")
    assert d.kafka[0] == "PRODUCER_FENCED" and d.model[0] != "PRODUCER_FENCED"
    check = run_gate_check("@differential")
    assert not check.passed and "differential:end_txn" in check.failed


def test_a_leader_that_accepts_a_sequence_gap_fails_the_replay(corpus: Corpus,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from keos.model.log import producer_state

    def in_sequence(last_seq: int, next_seq: int, sequence_space: int) -> bool:
        return next_seq > last_seq  # the defect: any later sequence continues the producer's run

    monkeypatch.setattr(producer_state, "in_sequence", in_sequence)
    result = replay(corpus)
    assert "produce" in {d.handler for d in result.unexplained}


def test_a_corpus_round_trips_byte_for_byte(corpus: Corpus, tmp_path: Path) -> None:
    small = Corpus(dict(corpus.header), corpus.cases[:50])
    a = write_corpus(tmp_path / "a.jsonl.gz", small).read_bytes()
    again = load_corpus(tmp_path / "a.jsonl.gz")
    assert again.cases == small.cases and again.header == small.header
    assert write_corpus(tmp_path / "b.jsonl.gz", again).read_bytes() == a
    assert not replay(again).differences


def _bad(tmp_path: Path, name: str, lines: list[Any] | bytes) -> Path:
    path = tmp_path / name
    if isinstance(lines, bytes):
        path.write_bytes(lines)
    else:
        with gzip.open(path, "wt") as f:
            f.write("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def test_malformed_corpora_are_bad_input(corpus: Corpus, tmp_path: Path) -> None:
    good = corpus.cases[0].as_json()
    header = {"format": "keos-differential-corpus", "version": 1}
    cases = {
        "plain.jsonl.gz": b"not gzip at all",
        "noheader.jsonl.gz": [good],
        "version.jsonl.gz": [{**header, "version": 99}, good],
        "empty.jsonl.gz": [header],
        "json.jsonl.gz": [header, "{not json"],
        "short.jsonl.gz": [header, {**good, "answers": good["answers"][:-1]}],
        "steps.jsonl.gz": [header, {**good, "steps": 5}],
        "end.jsonl.gz": [header, {**good, "end": {"what": "nonsense"}}],
    }
    for name, lines in cases.items():
        path = _bad(tmp_path, name, lines)
        with pytest.raises(CorpusError):
            load_corpus(path)
    run = subprocess.run([KEOS, "differential", "--replay", str(tmp_path / "short.jsonl.gz")],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2 and run.stderr.startswith("keos: error:") and len(run.stderr.splitlines()) == 1
    run = subprocess.run([KEOS, "differential", "--replay", str(tmp_path / "missing.jsonl.gz")],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2 and "no such file" in run.stderr
    run = subprocess.run([KEOS, "differential", "--replay", "--bootstrap-servers", "127.0.0.1:9"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2 and run.stderr.startswith("keos: error:")


def test_the_cli_replays_the_bundled_corpus_and_writes_its_reports(tmp_path: Path) -> None:
    run = subprocess.run([KEOS, "differential", "--replay", "--json", "--out", str(tmp_path / "r"),
                          "--junit", str(tmp_path / "r.xml")], capture_output=True, text=True, timeout=120,
                         check=False)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["cases"] == summary["recorded_cases"] and not summary["differences"]
    assert (tmp_path / "r" / "report.txt").exists() and (tmp_path / "r.xml").read_text().startswith("<?xml")
