"""JSON Schemas of keos's file formats, shipped with the package, and a validator over them.

* ``trace.schema.json`` -- a counterexample trace (:mod:`keos.checker.trace`);
* ``scenario.schema.json`` -- a scenario, as its TOML document parsed to JSON (:mod:`keos.scenarios`;
  every key, its type and default; generated from the dataclasses the loader fills, by
  ``python -m keos.checker.schemas``, and compared with them in the tests);
* ``summary.schema.json`` -- ``summary.json`` written by ``keos check`` / ``keos explore``.

The schemas are JSON Schema draft 2020-12.  The loaders validate more than a schema can say (a
permitted invariant the model checks, an action's arguments in range); a document the schema
rejects is always rejected by the loader too.
"""

from __future__ import annotations

import json
from dataclasses import MISSING, fields
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["SCHEMAS", "load_schema", "scenario_schema", "schema_errors"]

SCHEMAS = ("trace", "scenario", "summary")
_DRAFT = "https://json-schema.org/draft/2020-12/schema"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """The shipped schema ``name`` (one of :data:`SCHEMAS`)."""
    if name not in SCHEMAS:
        raise ValueError(f"unknown schema {name!r} (known: {', '.join(SCHEMAS)})")
    text = resources.files(__name__).joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def schema_errors(name: str, document: Any, limit: int = 3) -> list[str]:
    """Up to ``limit`` one-line messages for where ``document`` breaks schema ``name`` (empty if valid).

    Without the ``jsonschema`` package installed, no check is made (an empty list).
    """
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - a declared dependency
        return []
    validator = jsonschema.Draft202012Validator(load_schema(name))
    out = []
    for error in sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))[:limit]:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
        out.append(f"{where}: {message}")
    return out


def _json_type(default: Any) -> dict[str, Any]:
    if isinstance(default, bool):
        return {"type": "boolean", "default": default}
    if isinstance(default, int):
        return {"type": "integer", "minimum": 0, "default": default}
    if isinstance(default, str):
        return {"type": "string", "default": default}
    if isinstance(default, tuple):
        return {"type": "array", "default": list(default)}
    return {}


def _table(cls: type, extra: dict[str, Any] | None = None, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    props: dict[str, Any] = {}
    instance = cls()
    for f in fields(cls):
        if f.name in skip or (f.default is MISSING and f.default_factory is MISSING):
            continue
        props[f.name] = _json_type(getattr(instance, f.name))
    props.update(extra or {})
    return {"type": "object", "additionalProperties": False, "properties": dict(sorted(props.items()))}


def scenario_schema() -> dict[str, Any]:
    """The scenario schema, built from the dataclasses :func:`keos.scenarios.parse_scenario` fills."""
    from keos.model.clients.producer_config import ACKS, ProducerConfig
    from keos.model.connect.records import ConnectFaultBudget, ConnectTopology
    from keos.model.systems.groups import GroupsFaultBudget, GroupsTopology
    from keos.model.systems.idempotence import DELAYED_PRODUCE_ERRORS, REFUSAL_ERRORS, FaultBudget, Topology
    from keos.model.systems.transactions_records import (
        APPEND_LEADER_ERRORS,
        MARKER_LEADER_ERRORS,
        PRODUCE_LEADER_ERRORS,
        EosConfig,
        TxnFaultBudget,
        TxnTopology,
    )
    from keos.scenarios import MODEL_KINDS, Bounds
    from keos.scenarios.connect_schema import _CHOICES

    faults: dict[str, Any] = {}
    for cls in (FaultBudget, TxnFaultBudget, ConnectFaultBudget, GroupsFaultBudget):
        for key, spec in _table(cls)["properties"].items():
            if key in faults and faults[key].get("default") != spec["default"]:
                faults[key].pop("default", None)
                faults[key]["description"] = "the default depends on the model (docs/scenario-format.md)"
            else:
                faults.setdefault(key, spec)
    faults["append_errors"].update(items={"enum": list(APPEND_LEADER_ERRORS)}, minItems=1)
    faults["marker_errors"].update(items={"enum": list(MARKER_LEADER_ERRORS)}, minItems=1)
    faults["produce_errors"].update(items={"enum": list(PRODUCE_LEADER_ERRORS)}, minItems=1)
    producer = _table(ProducerConfig, skip=("transactional_id",))
    producer["properties"]["acks"]["enum"] = list(ACKS)
    positive = {"type": "integer", "minimum": 1}
    txn = _table(
        TxnTopology, {"retries": dict(positive, default=2), "max_producer_epoch": dict(positive, default=32767)}
    )
    connect = _table(ConnectTopology)
    connect["properties"]["workers"]["items"] = {"type": "string"}
    for key, choices in _CHOICES.items():
        connect["properties"][key] = {"enum": list(choices), "default": connect["properties"][key].get("default")}
    connect["properties"]["task_counts"]["items"] = {"type": "integer", "minimum": 1}
    connect["properties"]["owners"]["items"] = {"type": "array", "items": {"type": "integer", "minimum": 0}}
    return {
        "$schema": _DRAFT,
        "$id": "https://keos.invalid/schemas/scenario.schema.json",
        "title": "keos scenario",
        "description": "A keos scenario: its TOML document as JSON. See docs/scenario-format.md.",
        "type": "object",
        "required": ["name"],
        "additionalProperties": False,
        "properties": {
            "name": {"type": "string", "pattern": "^[a-z0-9_]+$"},
            "description": {"type": "string", "default": ""},
            "model": {"enum": sorted(MODEL_KINDS), "default": "idempotence"},
            "default": {"type": "boolean", "default": False},
            "variant": {"type": "string", "default": "kafka"},
            "permitted": {"type": "array", "items": {"type": "string"}, "default": []},
            "expected": {"type": "array", "items": {"type": "string"},
                         "description": "the permitted violations the search must reproduce on the scenario's "
                                        "own variant (default: every permitted one)"},
            "topology": _table(Topology),
            "producer": producer,
            "broker": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "max_producer_epoch": {"type": "integer", "minimum": 0,
                                           "description": "0: an epoch already at Short.MAX_VALUE"},
                    "delete_records": {"type": "boolean", "default": False},
                    "producer_id_expiration": {"type": "boolean", "default": False},
                    "read_uncommitted_consumer": {"type": "boolean", "default": False,
                                                  "description": "a read_uncommitted consumer polls each partition"},
                    "separate_replication": {"type": "boolean", "default": False},
                    "refusal_error": {"enum": list(REFUSAL_ERRORS), "default": "NOT_LEADER_OR_FOLLOWER",
                                      "description": "what the not_leader fault answers (nothing appended)"},
                    "delayed_produce_error": {"enum": list(DELAYED_PRODUCE_ERRORS), "default": "REQUEST_TIMED_OUT",
                                              "description": "what the produce_timeout fault answers (appended)"},
                    "sequence_space": positive,
                },
            },
            "faults": {"type": "object", "additionalProperties": False, "properties": dict(sorted(faults.items()))},
            "bounds": _table(Bounds),
            "transactions": txn,
            "eos": _table(EosConfig),
            "connect": connect,
            "groups": _table(GroupsTopology),
            "sets": {"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9_]+$"}, "default": []},
            "security": {
                "type": "object",
                "additionalProperties": False,
                "description": "principals, ACLs and the adversary of a transactions or eos scenario",
                "properties": {
                    "principals": {"type": "array", "items": {"type": "string"}},
                    "adversary": {"type": "string"},
                    "adversary_transactional_id": {"type": "string"},
                    "super_users": {"type": "array", "items": {"type": "string"}},
                    "allow": {"type": "array", "items": {"type": "string"}},
                    "allow_everyone_if_no_acl_found": {"type": "boolean"},
                    "deny": {"type": "array", "items": {"type": "string"}},
                    "revocable": {"type": "array", "items": {"type": "string"}},
                    "expect_denied": {"type": "array", "items": {"type": "string"}},
                    "expect_granted": {"type": "array", "items": {"type": "string"}},
                    "expect_errors": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    }


def main() -> None:
    """Write the generated scenario schema next to this module (run after changing a scenario dataclass)."""
    path = resources.files(__name__).joinpath("scenario.schema.json")
    with resources.as_file(path) as p:
        p.write_text(json.dumps(scenario_schema(), indent=2) + "\n", encoding="utf-8")
