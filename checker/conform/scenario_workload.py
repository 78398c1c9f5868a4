"""A conformance workload derived from a keos scenario.

``keos conform --scenario NAME|FILE`` runs, on a real client and broker, the
workload that matches what the scenario models, with the scenario's producer
configuration:

==============  ==========================================  =====================================
scenario model  phases                                      from the scenario
==============  ==========================================  =====================================
idempotence     ``idempotent``, ``late-response``           enable.idempotence, acks, retries,
                                                            max.in.flight (``[producer]``),
                                                            partitions (``[topology]``)
transactions    ``transactions``, ``zombie``                partitions
eos             ``transactions``, ``ctp``                   partitions
==============  ==========================================  =====================================

A producer configuration that gives up a guarantee makes its anomaly expected,
as the scenario's ``permitted`` list does for the model: without idempotence a
retried batch may be appended twice (``duplicate``) and, with more than one
request in flight, out of order (``nonmonotonic-send``); with ``acks`` other
than ``all`` an acknowledged record may be lost on failover (``lost-write``).
Kafka Connect scenarios have no real-system workload yet.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from keos.scenarios import Scenario

from .workload import WorkloadConfig

__all__ = ["ScenarioWorkload", "from_scenario"]

_PHASES = {
    "idempotence": ("idempotent", "late-response"),
    "transactions": ("transactions", "zombie"),
    "eos": ("transactions", "ctp"),
}


@dataclass(frozen=True)
class ScenarioWorkload:
    """Phases, sizes, producer settings and expected anomalies for one scenario."""

    name: str
    phases: tuple[str, ...]
    config: WorkloadConfig
    producer_overrides: dict[str, Any]
    permitted: dict[str, str]


def from_scenario(scenario: Scenario, base: WorkloadConfig | None = None) -> ScenarioWorkload:
    """The workload for ``scenario``; ``ValueError`` for a model without one."""
    phases = _PHASES.get(scenario.model)
    if phases is None:
        raise ValueError(f"scenario {scenario.name} models {scenario.model}: keos conform has no workload for it")
    cfg = base or WorkloadConfig()
    overrides: dict[str, Any] = {}
    permitted: dict[str, str] = {}
    if scenario.model == "idempotence":
        p = scenario.config.producer
        partitions = scenario.config.topology.partitions
        overrides = {
            "enable.idempotence": p.enable_idempotence,
            "acks": p.acks if p.acks == "all" else int(p.acks),
            "retries": p.retries,
            "max.in.flight.requests.per.connection": p.max_in_flight,
        }
        if not p.enable_idempotence:
            permitted["duplicate"] = f"{scenario.name}: enable.idempotence=false, a retried batch may be appended twice"
            if p.max_in_flight > 1:
                permitted["nonmonotonic-send"] = f"{scenario.name}: no idempotence and {p.max_in_flight} in flight"
        if p.acks != "all":
            permitted["lost-write"] = f"{scenario.name}: acks={p.acks}, an acknowledged record may be lost on failover"
    else:
        assert scenario.txn is not None
        partitions = scenario.txn.topology.partitions
    cfg = replace(cfg, partitions=max(2, partitions))  # two or more, so a transaction can span partitions
    return ScenarioWorkload(scenario.name, phases, cfg, overrides, permitted)
