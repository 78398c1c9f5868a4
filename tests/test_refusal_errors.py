"""The partition leader's other refusals of a produce request (``[broker] refusal_error`` / ``delayed_produce_error``).

A leader answers an acks=all produce with an error either before the append (NOT_LEADER_OR_FOLLOWER,
NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR: the batch is in no log) or after it (REQUEST_TIMED_OUT,
NOT_ENOUGH_REPLICAS_AFTER_APPEND: the batch is in the log).  Each is a ``RetriableException`` in Kafka's client
(apache/kafka 1eb7644349cb, ``clients/.../common/errors``), so the client must retry, and the leader must append the
retry of a refused batch and answer the retry of a written one as a duplicate.  Until session 33 the model's client
failed a batch on KAFKA_STORAGE_ERROR and NOT_ENOUGH_REPLICAS_AFTER_APPEND, which no scenario could show.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from keos.checker.cli.main import main
from keos.checker.conform.error_classes import RETRIABLE as CONFORM_RETRIABLE
from keos.model.protocol.errors import RETRIABLE, Errors
from keos.model.systems.idempotence import DELAYED_PRODUCE_ERRORS, REFUSAL_ERRORS
from keos.model.systems.txn_produce_judge import KAFKA_RETRIABLE
from keos.scenarios import ScenarioError, parse_scenario

_SCENARIO = """
name = "t"
model = "idempotence"
[producer]
enable_idempotence = true
acks = "{acks}"
[broker]
{key} = "{value}"
[faults]
not_leader = 1
total = 1
"""


def test_the_client_retries_exactly_the_errors_kafka_retries() -> None:
    # the rule (producer.complete_batch's RETRIABLE) against the property's reference, read apart from Kafka's
    # *Exception.java; errors the model never names (LEADER_NOT_AVAILABLE, CORRUPT_MESSAGE) left aside
    named = {e for e in KAFKA_RETRIABLE if hasattr(Errors, e)}
    assert named == RETRIABLE
    assert RETRIABLE <= CONFORM_RETRIABLE  # what a real client is expected to retry (keos conform)
    assert set(REFUSAL_ERRORS) | set(DELAYED_PRODUCE_ERRORS) <= RETRIABLE


@pytest.mark.parametrize(
    ("acks", "key", "value", "message"),
    [
        ("all", "refusal_error", "INVALID_TXN_STATE", "refusal_error must be one of"),
        ("all", "delayed_produce_error", "NOT_LEADER_OR_FOLLOWER", "delayed_produce_error must be one of"),
        ("1", "refusal_error", "NOT_ENOUGH_REPLICAS", 'needs acks = "all"'),
    ],
)
def test_bad_refusal_errors_are_refused(acks: str, key: str, value: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(tomllib.loads(_SCENARIO.format(acks=acks, key=key, value=value)), "t.toml")


def test_every_refusal_error_is_retried_and_nothing_lost_or_duplicated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--strict", "--scenario", "reach_idempotence_storage_error", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert "0 untested" in out
    summary = (tmp_path / "summary.json").read_text()
    # both answers reached the client, and a retry of a written batch was answered as a duplicate
    for label in ("client_error:KAFKA_STORAGE_ERROR", "client_error:NOT_ENOUGH_REPLICAS_AFTER_APPEND", '"dedup"'):
        assert label in summary
