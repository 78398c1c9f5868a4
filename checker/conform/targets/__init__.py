"""Targets ``keos conform`` can check: a system under test started (or found) on 127.0.0.1.

A target gives the workload a bootstrap address and the faults it can inject
(:class:`keos.checker.conform.workload.Faults`), and carries a *profile*: the
anomalies it is documented to show, so a report lists them apart from new
findings (verdict ``permitted`` instead of ``violated``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..workload import Faults

__all__ = ["TARGETS", "Target", "TargetInfo", "TargetUnavailable"]


class TargetUnavailable(RuntimeError):
    """The target cannot run here (a missing package or binary); the message says which."""


@dataclass(frozen=True)
class TargetInfo:
    """What a report says about the target."""

    name: str
    version: str
    profile: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


class Target(Protocol):
    """A started system under test (a context manager)."""

    info: TargetInfo
    bootstrap_servers: str
    faults: Faults
    client_overrides: Mapping[str, Any]

    def create_topic(self, topic: str, partitions: int) -> None: ...

    def stop(self) -> None: ...

    def broker_trace(self) -> dict[str, Any]: ...


TARGETS = ("librdkafka-mock", "tansu", "bootstrap")
