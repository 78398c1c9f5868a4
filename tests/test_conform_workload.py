"""How the conform workload records a client call's error (``checker/conform/workload.py``)."""

from __future__ import annotations

import pytest

from keos.checker.conform.workload import _error_fields, _kafka_error

ck = pytest.importorskip("confluent_kafka")


def _fenced() -> BaseException:
    return ck.KafkaException(ck.KafkaError(ck.KafkaError._FENCED, "fenced by a newer instance", fatal=True))


def test_a_kafka_exception_is_recorded_by_its_kafka_name_and_class() -> None:
    fields = _error_fields(_fenced())
    assert fields["error"] != "KafkaException" and "FENCED" in fields["error"]
    assert fields["error_class"] == "fatal"


def test_a_system_error_raised_from_a_kafka_exception_reports_the_kafka_error() -> None:
    """CPython's ``returned a result with an exception set`` chains the client's exception as the cause."""
    try:
        try:
            raise _fenced()
        except ck.KafkaException as inner:
            raise SystemError("<built-in method flush> returned a result with an exception set") from inner
    except SystemError as exc:
        outer = exc
    assert _kafka_error(outer) is not None
    assert _error_fields(outer) == _error_fields(_fenced())


def test_an_exception_without_a_kafka_error_is_recorded_by_its_type() -> None:
    assert _kafka_error(BufferError("queue full")) is None
    assert _error_fields(BufferError("queue full")) == {"error": "BufferError", "error_class": "other"}
