"""A data partition leader's refusals and late errors of a transactional Produce (``[faults] produce_error``).

Kafka's leader (apache/kafka @1eb7644349cb, ``ReplicaManager.appendRecords`` / ``handleProduceAppend``,
``DelayedProduce``) refuses a Produce before the append with NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS or
KAFKA_STORAGE_ERROR (nothing written) or answers it after the local append with REQUEST_TIMED_OUT or
NOT_ENOUGH_REPLICAS_AFTER_APPEND (the batch is in the log).  All are ``RetriableException``s for the transactional
client (``TransactionManager.canRetry``); a batch given up makes the transaction abortable (``handleFailedBatch``).
"""

from __future__ import annotations

import tomllib
from collections import deque
from pathlib import Path

import pytest

from keos.checker.cli.main import main
from keos.model.interface import Action
from keos.model.protocol.messages import ProduceResponse
from keos.model.systems.transactions_records import (
    PRODUCE_ERRORS_AFTER_APPEND,
    PRODUCE_LEADER_ERRORS,
    TxnSystemState,
)
from keos.scenarios import ScenarioError, build_model, builtin_scenarios, parse_scenario

_LABELS = (
    *(f"produce_refused:{e}" for e in PRODUCE_LEADER_ERRORS if e not in PRODUCE_ERRORS_AFTER_APPEND),
    *(f"produce_error_after_append:{e}" for e in PRODUCE_ERRORS_AFTER_APPEND),
    '"dedup"',
    '"batch_failed"',
)


@pytest.mark.parametrize("name", ["txn_produce_errors", "txn_tv1_produce_errors", "txn_eos_produce_errors"])
def test_every_produce_error_is_retried_and_the_promises_hold(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--strict", "--scenario", name, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert "0 untested" in out
    summary = (tmp_path / "summary.json").read_text()
    # each answer was given, a retry of a written batch was answered as a duplicate, and a batch was given up
    for label in _LABELS:
        assert label in summary, label


def _first(error: str) -> tuple[TxnSystemState, Action]:
    model = build_model(builtin_scenarios()["txn_produce_errors"])
    queue = deque(model.init_states())
    seen = set(queue)
    while queue:
        s = queue.popleft()
        for a in model.actions(s):
            if a.kind == "ProduceError" and a.args[1] == error:
                return s, a
            step = model.step(s, a)
            if step is not None and step.state not in seen:
                seen.add(step.state)
                queue.append(step.state)
    raise AssertionError(f"no ProduceError {error} in the search")


@pytest.mark.parametrize("error", PRODUCE_LEADER_ERRORS)
def test_a_refusal_writes_nothing_and_a_late_error_answers_a_written_batch(error: str) -> None:
    model = build_model(builtin_scenarios()["txn_produce_errors"])
    s, action = _first(error)
    step = model.step(s, action)
    assert step is not None
    grew = sum(len(b.log) - len(a.log) for a, b in zip(s.partitions, step.state.partitions, strict=True))
    assert grew == (1 if error in PRODUCE_ERRORS_AFTER_APPEND else 0)
    answer = step.state.network[-1].body
    assert isinstance(answer, ProduceResponse) and answer.error == error


def test_an_unknown_produce_error_is_refused() -> None:
    text = 'name = "t"\nmodel = "transactions"\n[faults]\nproduce_error = 1\nproduce_errors = ["INVALID_TXN_STATE"]\n'
    with pytest.raises(ScenarioError, match="produce_errors: 'INVALID_TXN_STATE' is not an error"):
        parse_scenario(tomllib.loads(text), "t.toml")
