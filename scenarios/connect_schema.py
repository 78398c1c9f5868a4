"""The ``model = "connect"`` part of the scenario schema (Kafka Connect, KIP-618).

::

    [connect]
    workers = ["enabled", "enabled", "enabled"]  # exactly.once.source.support per worker
    leader = 2                                   # the initial leader
    task_counts = [2, 2]                         # task count per task-config generation (0 = initial)
    owners = [[1], [0]]                          # per generation: the task reading each source partition
    records = 1                                  # records per source partition
    transaction_boundary = "poll"                # poll | interval | connector
    exactly_once_support = "requested"           # requested | required (connector config)
    connector_exactly_once = "SUPPORTED"         # SourceConnector::exactlyOnceSupport: SUPPORTED | UNSUPPORTED | null
    connector_boundaries = "UNSUPPORTED"         # canDefineTransactionBoundaries: SUPPORTED | UNSUPPORTED | null
    offsets_topic = "global"                     # global | connector (offsets.storage.topic set)
    max_connector_aborts = 0                     # TransactionContext.abortTransaction budget
    max_tombstones = 0                           # finished source partitions the connector may forget (null offset)
    recreated_at = 0                             # generation written after DELETE and re-creation (0: never)
    delivered = [1, 2]                           # per source partition: records an earlier run delivered ([]: none)
    delivered_offsets = ["both", "global"]       # where its offsets are: global | connector | both (KIP-618 migration)
    offsets_read = "kip-618"                     # kip-618 (fallback to the global topic) | kafka-4.0 (no fallback)
    [faults]  pause, crash, fencing_failure, config_write_failure, manual_restart, offset_write_failure,
              send_failure, offset_copy_failure, foreign_offset_record, total

Every value is checked; the preflight validation of KIP-618
(:func:`model.connect.herder.preflight_errors`, ``AbstractHerder.validateConnectorConfig``) rejects a connector config
Connect itself would refuse -- a scenario error, exit 2.
"""

from __future__ import annotations

from typing import Any

from keos.model.connect.herder import preflight_errors
from keos.model.connect.records import SUPPORT_LEVELS, ConnectConfig, ConnectFaultBudget, ConnectTopology
from keos.model.interface import ModelError

__all__ = ["parse_connect_section"]

_CHOICES = {
    "transaction_boundary": ("poll", "interval", "connector"),
    "exactly_once_support": ("requested", "required"),
    "connector_exactly_once": ("SUPPORTED", "UNSUPPORTED", "null"),
    "connector_boundaries": ("SUPPORTED", "UNSUPPORTED", "null"),
    "offsets_topic": ("global", "connector"),
    "offsets_read": ("kip-618", "kafka-4.0"),
}
_DELIVERED_OFFSETS = ("global", "connector", "both")
_INTS = {
    "leader": (0, 8),
    "records": (1, 9),
    "max_connector_aborts": (0, 3),
    "max_tombstones": (0, 2),
    "recreated_at": (0, 2),
}
_FAULT_KEYS = (
    "pause",
    "crash",
    "fencing_failure",
    "config_write_failure",
    "manual_restart",
    "offset_write_failure",
    "send_failure",
    "offset_copy_failure",
    "foreign_offset_record",
    "total",
)


def _int(value: Any, key: str, lo: int, hi: int, section: str = "connect") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ModelError(f"[{section}] {key} must be an integer in {lo}..{hi}, got {value!r}")
    return value


def _int_list(value: Any, key: str, lo: int, hi: int) -> tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise ModelError(f"[connect] {key} must be a non-empty list of integers, got {value!r}")
    return tuple(_int(v, key, lo, hi) for v in value)


def _delivered(table: dict[str, Any], sources: int, kwargs: dict[str, Any]) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """``delivered`` and ``delivered_offsets``: one entry per source partition each, offsets where they can be."""
    records = kwargs.get("records", 1)
    delivered = _int_list(table.get("delivered"), "delivered", 0, records)
    where = table.get("delivered_offsets")
    if not isinstance(where, list) or any(w not in _DELIVERED_OFFSETS for w in where):
        raise ModelError(
            f"[connect] delivered_offsets must list one of {', '.join(_DELIVERED_OFFSETS)} per source partition, "
            f"got {where!r}"
        )
    if len(delivered) != sources or len(where) != sources:
        raise ModelError(f"[connect] delivered and delivered_offsets must name each of the {sources} source partitions")
    if kwargs.get("offsets_topic", "global") == "global" and any(w != "global" for w in where):
        raise ModelError('[connect] delivered_offsets other than "global" need offsets_topic = "connector"')
    return delivered, tuple(where)


def parse_connect_section(table: dict[str, Any], faults_table: dict[str, Any]) -> ConnectConfig:
    """Validate ``[connect]`` and ``[faults]``; raises :class:`ModelError` with a one-line message."""
    known = {f for f in ConnectTopology.__dataclass_fields__}
    for key in table:
        if key not in known:
            raise ModelError(f"[connect] unknown key {key!r} (known: {', '.join(sorted(known))})")
    kwargs: dict[str, Any] = {}
    workers = table.get("workers", ["enabled", "enabled"])
    if not isinstance(workers, list) or not 1 <= len(workers) <= 4:
        raise ModelError(f"[connect] workers must be a list of 1-4 support levels, got {workers!r}")
    for level in workers:
        if level not in SUPPORT_LEVELS:
            raise ModelError(
                f"[connect] exactly.once.source.support {level!r} is not one of {', '.join(SUPPORT_LEVELS)}"
            )
    kwargs["workers"] = tuple(workers)
    for key, choices in _CHOICES.items():
        if key in table:
            if table[key] not in choices:
                raise ModelError(f"[connect] {key} must be one of {', '.join(choices)}, got {table[key]!r}")
            kwargs[key] = table[key]
    for key, (lo, hi) in _INTS.items():
        if key in table:
            kwargs[key] = _int(table[key], key, lo, hi)
    counts = _int_list(table.get("task_counts", [1]), "task_counts", 1, 4)
    if len(counts) > 3:
        raise ModelError("[connect] task_counts lists at most 3 generations")
    owners_raw = table.get("owners", [[0]] * len(counts))
    if not isinstance(owners_raw, list) or len(owners_raw) != len(counts):
        raise ModelError(
            "[connect] owners must list, per generation in task_counts, the owning task of each source partition"
        )
    owners = tuple(_int_list(o, "owners", 0, 3) for o in owners_raw)
    if len({len(o) for o in owners}) != 1 or len(owners[0]) > 2:
        raise ModelError("[connect] every generation in owners must name the same 1 or 2 source partitions")
    for g, (count, row) in enumerate(zip(counts, owners)):
        if any(n >= count for n in row):
            raise ModelError(f"[connect] owners of generation {g} name a task >= its task count {count}")
    kwargs["task_counts"], kwargs["owners"] = counts, owners
    if kwargs.get("recreated_at", 0) >= len(counts):
        raise ModelError(
            f"[connect] recreated_at {kwargs['recreated_at']} names no reconfiguration "
            f"(generations 1..{len(counts) - 1})"
        )
    if "delivered" in table or "delivered_offsets" in table:
        kwargs["delivered"], kwargs["delivered_offsets"] = _delivered(table, len(owners[0]), kwargs)
    if kwargs.get("offsets_read", "kip-618") != "kip-618" and kwargs.get("offsets_topic", "global") != "connector":
        raise ModelError('[connect] offsets_read only matters with offsets_topic = "connector"')
    topo = ConnectTopology(**kwargs)
    if topo.leader >= len(topo.workers):
        raise ModelError(f"[connect] leader {topo.leader} is not a worker (0..{len(topo.workers) - 1})")
    errors = preflight_errors(
        topo.exactly_once_support,
        topo.connector_exactly_once,
        topo.transaction_boundary,
        topo.connector_boundaries,
        topo.workers[topo.leader],
    )
    if errors:
        raise ModelError(f"connector config rejected by preflight validation: {errors[0]}")
    fault_kwargs: dict[str, int] = {}
    for key, value in faults_table.items():
        if key not in _FAULT_KEYS:
            raise ModelError(f"[faults] unknown key {key!r} (known: {', '.join(_FAULT_KEYS)})")
        fault_kwargs[key] = _int(value, key, 0, 3, "faults")
    return ConnectConfig(topology=topo, faults=ConnectFaultBudget(**fault_kwargs))
