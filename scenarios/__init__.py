"""Named, bounded scenarios: topology, producer config, fault budget, protocol variant.

A scenario is a TOML file that a user can write (see ``scenarios/*.toml`` for
the shipped ones).  Loading is strict: unknown sections or keys, wrong types,
and configurations Kafka itself would reject are :class:`ScenarioError`\\ s
with a one-line message naming the file and the key.

Every key, its meaning and default: ``docs/scenario-format.md``; the JSON Schema:
``keos/checker/schemas/scenario.schema.json``.

Schema (every section optional except ``name``)::

    name = "idempotence_retry"         # identifier, [a-z0-9_]+
    description = "..."
    model = "idempotence"              # which components and invariants
    default = true                     # part of a bare `keos check`
    variant = "kafka"                  # default protocol variant
    permitted = ["no_acked_loss"]      # violations reported as permitted
    sets = ["deep"]                    # named scenario sets (`keos check --set deep`)
    [topology]   producers, partitions, records_per_producer, records_per_batch
    [producer]   enable_idempotence, acks, retries, max_in_flight
    [broker]     sequence_space, max_producer_epoch, separate_replication,
                 producer_id_expiration, delete_records, refusal_error,
                 delayed_produce_error, read_uncommitted_consumer
    [faults]     drop, duplicate, reorder, request_timeout, batch_expiry,
                 leader_restart, producer_restart, not_leader, total
    [bounds]     max_depth (0 = exhaustive), max_states

Transactions scenarios (``model = "transactions"``) use instead::

    [transactions]  producers, partitions, transactions_per_producer,
                    records_per_transaction, shared_transactional_id,
                    voluntary_abort, producer_id_expiration,
                    transactional_id_expiration, pending_transitions,
                    loading_window, coordinator_reload, verification_round_trip,
                    read_committed_consumer, consumer_fetch_batches,
                    max_in_flight, retries, max_producer_epoch
    [faults]        drop, request_timeout, batch_expiry, txn_timeout,
                    append_failure, append_errors (the leader errors an
                    append_failure draws), coordinator_failover, txn_id_expiry,
                    marker_failure, marker_errors (the leader errors a
                    marker_failure draws), leader_election (a data partition's
                    leadership moves to an in-sync follower), produce_error,
                    produce_errors (the leader errors a produce_error answers a
                    transactional Produce with), rebalance, total

Consume-transform-produce scenarios (``model = "eos"``, :mod:`model.systems.eos`)
take the same sections (producers = application instances) plus::

    [eos]           input_records, assignor, late_instances, session_timeouts, leaves, filtered_records,
                    plain_commits, txn_offset_commit_round_trip

Transactions and consume-transform-produce scenarios may add principals, ACLs
and an adversary (KIP-98 §9, :mod:`scenarios.security_schema`)::

    [security]      principals, super_users, adversary,
                    adversary_transactional_id, allow, deny, revocable,
                    expect_denied, expect_granted
    [faults]        forge_produce, forge_request, hijack_init, forge_marker, stale_request,
                    endless_txn (adversary actions, budgeted like faults),
                    revoke_acl (an operator removes a revocable binding)

Kafka Connect scenarios (``model = "connect"``, :mod:`model.systems.connect`)
use ``[connect]`` and their own ``[faults]`` (:mod:`scenarios.connect_schema`).

Consumer-group scenarios (``model = "groups"``, :mod:`keos.model.systems.groups`) use::

    [groups]  consumers, late_consumers, partitions, records, compactions, subscription_version,
              assignor  # range | roundrobin | sticky | cooperative-sticky | "module:function"
    [faults]  lost_heartbeats, crash, poll_timeout, leave, coordinator_failover, late_commit, stale_subscription,
              lost_join_response, create_partitions, total
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any

from keos.model import memo
from keos.model.clients.producer_config import ProducerConfig
from keos.model.interface import Model, ModelError, Property
from keos.model.systems.idempotence import (
    DELAYED_PRODUCE_ERRORS,
    REFUSAL_ERRORS,
    FaultBudget,
    KafkaSystem,
    SystemConfig,
    Topology,
)
from keos.model.systems.transactions import TransactionalSystem, TxnConfig, TxnFaultBudget, TxnTopology
from keos.model.systems.transactions_records import (
    APPEND_LEADER_ERRORS,
    MARKER_LEADER_ERRORS,
    PRODUCE_LEADER_ERRORS,
    EosConfig,
)
from keos.model.variants import VARIANTS, Variant

__all__ = [
    "MODEL_KINDS",
    "Bounds",
    "Scenario",
    "ScenarioError",
    "build_model",
    "builtin_scenarios",
    "load_scenario",
    "parse_scenario",
    "resolve_scenario",
    "scenario_set",
]


class ScenarioError(ModelError):
    """A malformed or invalid scenario file."""


@dataclass(frozen=True)
class Bounds:
    """Exploration bounds for the explicit-state engine."""

    max_depth: int = 0
    max_states: int = 2_000_000


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario."""

    name: str
    description: str
    model: str
    config: SystemConfig
    variant: str = "kafka"
    default: bool = False
    permitted: tuple[str, ...] = ()
    bounds: Bounds = field(default_factory=Bounds)
    #: The permitted violations the scenario documents as reachable on its own variant (default: all of
    #: ``permitted``): a documented finding the explicit search no longer reproduces is ``untested``.
    expected: tuple[str, ...] = ()
    source: str = "<memory>"
    txn: TxnConfig | None = None
    connect: Any = None
    sets: tuple[str, ...] = ()
    groups: Any = None
    #: The parsed TOML document the scenario was built from; traces embed it, so a trace replays
    #: anywhere without the file (:func:`parse_scenario` of it gives this scenario back).
    document: Any = field(default=None, compare=False, hash=False, repr=False)

    def info(self) -> dict[str, Any]:
        """What traces record about the scenario (``scenario_document``: the resolved TOML as a dict)."""
        info = {"scenario": self.name, "scenario_source": self.source, "scenario_model": self.model}
        if self.document is not None:
            info["scenario_document"] = self.document
        return info


def _idempotence_properties(scenario: Scenario) -> tuple[Property, ...]:
    from keos.invariants.idempotence import idempotence_properties

    config = scenario.config
    faults = config.faults
    return idempotence_properties(
        config.sequence_space,
        config.producer.enable_idempotence,
        config.producer_id_expiration,
        config.separate_replication,
        faults.total > 0 and (faults.not_leader > 0 or faults.reorder > 0),
        config.producer.retries,
        faults.kinds(),
        config.producer.max_in_flight,
        faults.total >= 2,
        config.topology.partitions,
        config.read_uncommitted_consumer,
    )


def _transaction_properties(scenario: Scenario) -> tuple[Property, ...]:
    from keos.invariants.security import security_properties
    from keos.invariants.transactions import transaction_properties

    config = scenario.txn or TxnConfig()
    return transaction_properties(config) + security_properties(config)


def _eos_properties(scenario: Scenario) -> tuple[Property, ...]:
    from keos.invariants.eos_processing import eos_properties
    from keos.invariants.security import security_properties

    config = scenario.txn or TxnConfig(eos=EosConfig())
    return eos_properties(config) + security_properties(config)


def _connect_properties(scenario: Scenario) -> tuple[Property, ...]:
    from keos.invariants.connect import connect_properties
    from keos.model.connect.records import ConnectConfig

    return connect_properties(scenario.connect or ConnectConfig())


def _group_properties(scenario: Scenario) -> tuple[Property, ...]:
    from keos.invariants.groups import group_properties
    from keos.model.systems.groups import GroupsConfig

    return group_properties(scenario.groups or GroupsConfig())


#: Model kinds: which property sets a scenario's model checks.
MODEL_KINDS: dict[str, Callable[[Scenario], tuple[Property, ...]]] = {
    "idempotence": _idempotence_properties,
    "transactions": _transaction_properties,
    "eos": _eos_properties,
    "connect": _connect_properties,
    "groups": _group_properties,
}

_NAME = re.compile(r"^[a-z0-9_]+$")
_TOP_KEYS = {
    "name",
    "description",
    "model",
    "default",
    "variant",
    "permitted",
    "expected",
    "topology",
    "producer",
    "broker",
    "faults",
    "bounds",
    "transactions",
    "eos",
    "connect",
    "security",
    "sets",
    "groups",
}


#: Boolean ``[broker]`` keys of the idempotence model (:class:`~model.systems.idempotence.SystemConfig`).
_BROKER_SWITCHES = ("producer_id_expiration", "separate_replication", "delete_records", "read_uncommitted_consumer")

#: Error-valued ``[broker]`` keys of the idempotence model: which answer its refusal and purgatory faults give.
_BROKER_ERRORS = {
    "refusal_error": REFUSAL_ERRORS,
    "delayed_produce_error": DELAYED_PRODUCE_ERRORS,
}


def _section(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: [{key}] must be a table")
    return value


#: Upper bounds of topology sizes.  An explicit-state search is exponential in the number of processes,
#: partitions and records (the built-in scenarios use at most 3 processes and 7 records); far above that
#: not even the first level of the search, or the model's set-up, finishes within a budget (issue 24:
#: ``producers = 5000`` ran 61 s past a 5 s budget and took 969 MB).
SIZE_LIMITS = {"producers": 16, "partitions": 16, "consumers": 16, "records_per_producer": 64,
               "transactions_per_producer": 64, "records_per_transaction": 64, "input_records": 64, "records": 64}
#: Every other integer: Kafka's counters (sequence numbers, epochs, timeouts in ms) are 32-bit ints.
MAX_SCENARIO_INT = 2**31 - 1


def _typed(cls: type, values: dict[str, Any], section: str, where: str, checks: dict[str, Any] | None = None) -> Any:
    """Build a dataclass from a TOML table, rejecting unknown keys and wrong types."""
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key not in known:
            raise ScenarioError(f"{where}: [{section}] unknown key {key!r} (known: {', '.join(sorted(known))})")
        default = getattr(cls(), key) if checks is None or key not in checks else checks[key]
        expected = type(default) if default is not None else str
        if expected is bool and not isinstance(value, bool):
            raise ScenarioError(f"{where}: [{section}] {key} must be true or false, got {value!r}")
        if expected is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise ScenarioError(f"{where}: [{section}] {key} must be an integer, got {value!r}")
        if expected is str and not isinstance(value, str):
            raise ScenarioError(f"{where}: [{section}] {key} must be a string, got {value!r}")
        if expected is int and value < 0:
            raise ScenarioError(f"{where}: [{section}] {key} must be >= 0, got {value}")
        if expected is int and key in SIZE_LIMITS and value > SIZE_LIMITS[key]:
            raise ScenarioError(f"{where}: [{section}] {key} = {value} is above {SIZE_LIMITS[key]}: an explicit-state "
                                "search is exponential in it, so no engine could finish even its first level")
        if expected is int and value > MAX_SCENARIO_INT:
            raise ScenarioError(f"{where}: [{section}] {key} = {value:.3g} is above {MAX_SCENARIO_INT} (Kafka's "
                                "counters are 32-bit ints)")
        kwargs[key] = value
    return cls(**kwargs)


def parse_scenario(data: dict[str, Any], source: str = "<memory>") -> Scenario:
    """Validate a parsed TOML document and build the scenario (which keeps the document).

    ``sets`` names the scenario sets it belongs to (``keos check --set NAME``):
    the ``deep`` set holds scenarios whose bounds are too large for the default
    gate.
    """
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}: a scenario must be a table (a TOML document or JSON object)")
    sets = data.get("sets", [])
    if not isinstance(sets, list) or not all(isinstance(x, str) and _NAME.match(x) for x in sets):
        raise ScenarioError(f"{source}: 'sets' must be a list of names of [a-z0-9_], got {sets!r}")
    body = {k: v for k, v in data.items() if k != "sets"}
    scenario = replace(_parse_scenario_body(body, source), sets=tuple(sets))
    return replace(scenario, document=_json_safe(data))


def _json_safe(data: Any) -> Any:
    """The document with TOML-only values (dates, times) as strings, so it can be written as JSON."""
    if isinstance(data, dict):
        return {str(k): _json_safe(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_json_safe(v) for v in data]
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    return str(data)


def _parse_scenario_body(data: dict[str, Any], source: str) -> Scenario:
    """Everything of :func:`parse_scenario` but the sets."""
    where = source
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ScenarioError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_TOP_KEYS))})")
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ScenarioError(f"{where}: 'name' must be a string of [a-z0-9_], got {name!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ScenarioError(f"{where}: 'description' must be a string")
    model = data.get("model", "idempotence")
    if not isinstance(model, str) or model not in MODEL_KINDS:
        raise ScenarioError(f"{where}: unknown model {model!r} (known: {', '.join(sorted(MODEL_KINDS))})")
    default = data.get("default", False)
    if not isinstance(default, bool):
        raise ScenarioError(f"{where}: 'default' must be true or false")
    variant = data.get("variant", "kafka")
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise ScenarioError(f"{where}: unknown variant {variant!r} (known: {', '.join(sorted(VARIANTS))})")
    permitted = data.get("permitted", [])
    if not isinstance(permitted, list) or not all(isinstance(p, str) for p in permitted):
        raise ScenarioError(f"{where}: 'permitted' must be a list of invariant names")

    expected = data.get("expected", permitted)
    if not isinstance(expected, list) or not all(isinstance(p, str) and p in permitted for p in expected):
        raise ScenarioError(f"{where}: 'expected' must be a list of names from 'permitted'")
    if "security" in data and model not in ("transactions", "eos"):
        raise ScenarioError(f'{where}: [security] needs model = "transactions" or "eos"')
    scenario = _parse_kind(data, where, name, description, default, variant, permitted, model)
    return replace(scenario, expected=tuple(expected))


def _parse_kind(
    data: dict[str, Any], where: str, name: str, description: str, default: bool, variant: str,
    permitted: list[str], model: str,
) -> Scenario:
    """The scenario of ``model``'s kind (its own sections), after the keys every scenario shares."""
    if model == "connect":
        return _parse_connect_scenario(data, where, name, description, default, variant, permitted)
    if model == "groups":
        return _parse_groups_scenario(data, where, name, description, default, variant, permitted)
    if "groups" in data:
        raise ScenarioError(f'{where}: [groups] needs model = "groups"')
    if "connect" in data:
        raise ScenarioError(f'{where}: [connect] needs model = "connect"')
    if model in ("transactions", "eos"):
        return _parse_txn_scenario(data, where, name, description, default, variant, permitted, model)
    if "transactions" in data:
        raise ScenarioError(f'{where}: [transactions] needs model = "transactions"')
    if "eos" in data:
        raise ScenarioError(f'{where}: [eos] needs model = "eos"')
    topology = _typed(Topology, _section(data, "topology", where), "topology", where)
    if topology.producers < 1 or topology.partitions < 1:
        raise ScenarioError(f"{where}: [topology] needs at least one producer and one partition")
    if topology.records_per_batch < 1:
        raise ScenarioError(f"{where}: [topology] records_per_batch must be >= 1")
    producer_table = dict(_section(data, "producer", where))
    producer = _typed(ProducerConfig, producer_table, "producer", where, {"transactional_id": ""})
    faults = _typed(FaultBudget, _section(data, "faults", where), "faults", where)
    broker = _section(data, "broker", where)
    broker_kwargs: dict[str, Any] = {}
    for key, value in broker.items():
        if key in _BROKER_SWITCHES:
            if not isinstance(value, bool):
                raise ScenarioError(f"{where}: [broker] {key} must be true or false, got {value!r}")
        elif key in _BROKER_ERRORS:
            if value not in _BROKER_ERRORS[key]:
                choices = ", ".join(_BROKER_ERRORS[key])
                raise ScenarioError(f"{where}: [broker] {key} must be one of {choices}, got {value!r}")
        elif key not in ("sequence_space", "max_producer_epoch"):
            keys = ", ".join(sorted(("max_producer_epoch", "sequence_space", *_BROKER_SWITCHES, *_BROKER_ERRORS)))
            raise ScenarioError(f"{where}: [broker] unknown key {key!r} (known: {keys})")
        elif isinstance(value, bool) or not isinstance(value, int) or value < (0 if key == "max_producer_epoch" else 1):
            # max_producer_epoch = 0: an epoch already at Short.MAX_VALUE (the first KIP-360 bump resets the id)
            what = "a non-negative" if key == "max_producer_epoch" else "a positive"
            raise ScenarioError(f"{where}: [broker] {key} must be {what} integer, got {value!r}")
        broker_kwargs[key] = value
    if broker_kwargs.get("separate_replication") and producer_table.get("acks", "all") != "all":
        raise ScenarioError(f'{where}: [broker] separate_replication needs acks = "all" (acks=1 replicates apart)')
    if broker_kwargs.get("refusal_error") == "NOT_ENOUGH_REPLICAS" and producer_table.get("acks", "all") != "all":
        raise ScenarioError(f'{where}: [broker] refusal_error NOT_ENOUGH_REPLICAS needs acks = "all" (min.insync)')
    if broker_kwargs.get("read_uncommitted_consumer") and broker_kwargs.get("delete_records"):
        # a consumer behind the log start offset gets OFFSET_OUT_OF_RANGE and auto.offset.reset: not modelled
        raise ScenarioError(f"{where}: [broker] read_uncommitted_consumer cannot be combined with delete_records "
                            "(a consumer behind the log start offset: OFFSET_OUT_OF_RANGE and auto.offset.reset are "
                            "not modelled)")
    bounds = _typed(Bounds, _section(data, "bounds", where), "bounds", where)
    config = SystemConfig(topology=topology, producer=producer, faults=faults, **broker_kwargs)
    try:
        producer.validate()
    except ModelError as exc:
        raise ScenarioError(f"{where}: [producer] {exc}") from None
    scenario = Scenario(
        name=name,
        description=description,
        model=model,
        config=config,
        variant=variant,
        default=default,
        permitted=tuple(permitted),
        bounds=bounds,
        source=where,
    )
    known = {p.name for p in MODEL_KINDS[model](scenario)}
    for inv in scenario.permitted:
        if inv not in known:
            raise ScenarioError(f"{where}: permitted invariant {inv!r} is not checked by model {model!r}")
    return scenario


_TXN_KEYS = {"retries", "max_producer_epoch"}


def _error_names(value: Any, known: tuple[str, ...], key: str, answered_by: str, where: str) -> tuple[str, ...]:
    """A ``[faults]`` list of error names, each one ``known`` (what Kafka's ``answered_by`` answers), deduplicated."""
    if not isinstance(value, list) or not value or not all(isinstance(e, str) for e in value):
        raise ScenarioError(f"{where}: [faults] {key} must be a non-empty list of error names, got {value!r}")
    unknown = [e for e in value if e not in known]
    if unknown:
        raise ScenarioError(f"{where}: [faults] {key}: {unknown[0]!r} is not an error {answered_by} "
                            f"(known: {', '.join(known)})")
    return tuple(dict.fromkeys(value))


def _append_errors(value: Any, topology: TxnTopology, where: str) -> tuple[str, ...]:
    """``[faults] append_errors``: the ``__transaction_state`` leader's errors an ``append_failure`` may draw."""
    errors = _error_names(value, APPEND_LEADER_ERRORS, "append_errors",
                          "Kafka's append to __transaction_state answers", where)
    if errors != TxnFaultBudget.append_errors and not topology.pending_transitions:
        raise ScenarioError(f"{where}: [faults] append_errors other than NOT_ENOUGH_REPLICAS are modelled with "
                            "[transactions] pending_transitions (the append's callback as a step of its own)")
    return errors


def _marker_errors(value: Any, where: str) -> tuple[str, ...]:
    """``[faults] marker_errors``: the data partition leader's errors a ``marker_failure`` may answer a marker with."""
    return _error_names(value, MARKER_LEADER_ERRORS, "marker_errors",
                        "Kafka's partition leader answers a failed WriteTxnMarkers append with", where)


def _parse_txn_scenario(
    data: dict[str, Any],
    where: str,
    name: str,
    description: str,
    default: bool,
    variant: str,
    permitted: list[str],
    model: str = "transactions",
) -> Scenario:
    """The ``model = "transactions"`` (and ``"eos"``) part of the schema."""
    for key in ("topology", "producer", "broker"):
        if key in data:
            raise ScenarioError(f"{where}: [{key}] is not used by model 'transactions' (use [transactions])")
    table = dict(_section(data, "transactions", where))
    extra = {k: table.pop(k) for k in list(table) if k in _TXN_KEYS}
    topology = _typed(TxnTopology, table, "transactions", where)
    if topology.producers < 1 or topology.partitions < 1:
        raise ScenarioError(f"{where}: [transactions] needs at least one producer and one partition")
    if topology.transactions_per_producer < 1 or topology.records_per_transaction < 1:
        raise ScenarioError(f"{where}: [transactions] needs at least one transaction of one record")
    if not 1 <= topology.max_in_flight <= 5:  # ProducerConfig: idempotence needs max.in.flight <= 5
        raise ScenarioError(f"{where}: [transactions] max_in_flight must be 1..5, got {topology.max_in_flight!r}")
    for key, value in extra.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ScenarioError(f"{where}: [transactions] {key} must be a positive integer, got {value!r}")
    if extra.get("max_producer_epoch", 32767) < 3:
        raise ScenarioError(f"{where}: [transactions] max_producer_epoch must be >= 3")
    fault_table = dict(_section(data, "faults", where))
    append_errors = fault_table.pop("append_errors", None)
    marker_errors = fault_table.pop("marker_errors", None)
    produce_errors = fault_table.pop("produce_errors", None)
    faults = _typed(TxnFaultBudget, fault_table, "faults", where)
    if append_errors is not None:
        faults = replace(faults, append_errors=_append_errors(append_errors, topology, where))
    if marker_errors is not None:
        faults = replace(faults, marker_errors=_marker_errors(marker_errors, where))
    if produce_errors is not None:
        faults = replace(faults, produce_errors=_error_names(
            produce_errors, PRODUCE_LEADER_ERRORS, "produce_errors",
            "Kafka's partition leader answers a transactional Produce with", where))
    bounds = _typed(Bounds, _section(data, "bounds", where), "bounds", where)
    eos = None
    if model == "eos":
        eos = _typed(EosConfig, _section(data, "eos", where), "eos", where)
        if eos.input_records < 1 or topology.partitions != 1 or topology.records_per_transaction != 1:
            raise ScenarioError(
                f"{where}: model 'eos' needs input_records >= 1, partitions = 1 and records_per_transaction = 1"
            )
        if topology.shared_transactional_id:
            raise ScenarioError(f"{where}: model 'eos' gives every instance its own transactional.id")
        if eos.filtered_records > eos.input_records:
            raise ScenarioError(f"{where}: [eos] filtered_records ({eos.filtered_records}) is above input_records "
                                f"({eos.input_records})")
        if eos.plain_commits and eos.assignor:
            raise ScenarioError(f"{where}: [eos] plain_commits is modelled in the abstract mode (no assignor)")
        if eos.txn_offset_commit_round_trip and (faults.coordinator_failover or "security" in data):
            raise ScenarioError(f"{where}: [eos] txn_offset_commit_round_trip is modelled without coordinator_failover "
                                "and [security]")
    elif "eos" in data:
        raise ScenarioError(f'{where}: [eos] needs model = "eos"')
    if topology.loading_window and not topology.pending_transitions:
        raise ScenarioError(f"{where}: [transactions] loading_window is modelled with pending_transitions")
    if topology.coordinator_reload and not topology.loading_window:
        raise ScenarioError(f"{where}: [transactions] coordinator_reload is modelled with loading_window")
    if topology.read_committed_consumer and model == "eos":
        raise ScenarioError(f"{where}: [transactions] read_committed_consumer is modelled without [eos]")
    batches = topology.consumer_fetch_batches
    if batches < 0 or (batches and not topology.read_committed_consumer):
        raise ScenarioError(f"{where}: [transactions] consumer_fetch_batches is a batch count >= 0 of the "
                            "read_committed_consumer")
    if topology.verification_round_trip and (model == "eos" or "security" in data or topology.pending_transitions):
        raise ScenarioError(
            f"{where}: [transactions] verification_round_trip is modelled without [eos], [security] and "
            "pending_transitions"
        )
    if faults.leader_election and (topology.producer_id_expiration or model == "eos"):
        raise ScenarioError(
            f"{where}: [faults] leader_election is modelled without producer_id_expiration and [eos] (a follower's "
            "own producer-state expiry and the __consumer_offsets leader are not modelled)"
        )
    if topology.transactional_id_expiration and faults.txn_id_expiry:
        raise ScenarioError(
            f"{where}: transactional_id_expiration makes ExpireTransactionalId a timeout action; "
            "[faults] txn_id_expiry must be 0"
        )
    security = None
    if "security" in data:
        from keos.scenarios.security_schema import parse_security_section

        try:
            security = parse_security_section(_section(data, "security", where), topology.producers)
        except ModelError as exc:
            raise ScenarioError(f"{where}: {exc}") from None
    hostile = [k for k in ("forge_produce", "forge_request", "hijack_init", "forge_marker", "endless_txn", "revoke_acl",
                                "stale_request")
               if getattr(faults, k)]
    if hostile and security is None:
        raise ScenarioError(f"{where}: [faults] {hostile[0]} needs a [security] section (principals and ACLs)")
    txn = TxnConfig(topology=topology, faults=faults, eos=eos, security=security, **extra)
    scenario = Scenario(
        name=name,
        description=description,
        model=model,
        config=SystemConfig(),
        variant=variant,
        default=default,
        permitted=tuple(permitted),
        bounds=bounds,
        source=where,
        txn=txn,
    )
    known = {p.name for p in MODEL_KINDS[model](scenario)}
    for inv in scenario.permitted:
        if inv not in known:
            raise ScenarioError(f"{where}: permitted invariant {inv!r} is not checked by model {model!r}")
    return scenario


def _parse_connect_scenario(
    data: dict[str, Any], where: str, name: str, description: str, default: bool, variant: str, permitted: list[str]
) -> Scenario:
    """The ``model = "connect"`` part of the schema (:mod:`scenarios.connect_schema`)."""
    from keos.scenarios.connect_schema import parse_connect_section

    for key in ("topology", "producer", "broker", "transactions", "eos"):
        if key in data:
            raise ScenarioError(f"{where}: [{key}] is not used by model 'connect' (use [connect])")
    try:
        connect = parse_connect_section(_section(data, "connect", where), _section(data, "faults", where))
    except ModelError as exc:
        raise ScenarioError(f"{where}: {exc}") from None
    scenario = Scenario(
        name=name,
        description=description,
        model="connect",
        config=SystemConfig(),
        variant=variant,
        default=default,
        permitted=tuple(permitted),
        bounds=_typed(Bounds, _section(data, "bounds", where), "bounds", where),
        source=where,
        connect=connect,
    )
    known = {p.name for p in MODEL_KINDS["connect"](scenario)}
    for inv in scenario.permitted:
        if inv not in known:
            raise ScenarioError(f"{where}: permitted invariant {inv!r} is not checked by model 'connect'")
    return scenario


def _parse_groups_scenario(
    data: dict[str, Any], where: str, name: str, description: str, default: bool, variant: str, permitted: list[str]
) -> Scenario:
    """The ``model = "groups"`` part of the schema (:mod:`keos.model.systems.groups`)::

        [groups]  consumers, late_consumers, partitions, records, assignor, compactions, subscription_version,
                  group_instance_ids, join_group_version, async_join_prepare
        [faults]  lost_heartbeats, crash, poll_timeout, leave, coordinator_failover, late_commit,
                  stale_subscription, lost_join_response, create_partitions, late_heartbeat, late_sync_response,
                  lost_member_id, rebalance_timeout, total

    ``assignor`` is ``range``, ``roundrobin``, ``sticky``, ``cooperative-sticky`` or a Python
    callable ``"module:function"`` (a user-supplied assignor).
    """
    from keos.model.coordinator.group.assignors import AssignorError, load_assignor
    from keos.model.systems.groups import GroupsConfig, GroupsFaultBudget, GroupsTopology

    for key in ("topology", "producer", "broker", "transactions", "eos", "connect"):
        if key in data:
            raise ScenarioError(f"{where}: [{key}] is not used by model 'groups' (use [groups])")
    topology = _typed(GroupsTopology, _section(data, "groups", where), "groups", where)
    if not 1 <= topology.consumers <= 4 or topology.late_consumers >= topology.consumers:
        raise ScenarioError(f"{where}: [groups] needs 1-4 consumers and fewer late_consumers than consumers")
    if not 1 <= topology.partitions <= 6:
        raise ScenarioError(f"{where}: [groups] needs 1-6 partitions (records = 0: ownership only, no polls)")
    ids = topology.group_instance_ids.split(",") if topology.group_instance_ids else []
    if len(ids) > topology.consumers or not all(x.strip() == "" or _NAME.match(x.strip()) for x in ids):
        raise ScenarioError(f"{where}: [groups] group_instance_ids lists at most one name of [a-z0-9_] per consumer, "
                            f"comma-separated, got {topology.group_instance_ids!r}")
    if not 1 <= topology.subscription_version <= 3:
        raise ScenarioError(f"{where}: [groups] subscription_version must be 1-3 (ConsumerProtocolSubscription)")
    if not 2 <= topology.join_group_version <= 9:
        raise ScenarioError(f"{where}: [groups] join_group_version must be 2-9 (JoinGroup versions Kafka 4.0 serves)")
    try:
        load_assignor(topology.assignor)
    except AssignorError as exc:
        raise ScenarioError(f"{where}: [groups] {exc}") from None
    faults = _typed(GroupsFaultBudget, _section(data, "faults", where), "faults", where)
    scenario = Scenario(
        name=name,
        description=description,
        model="groups",
        config=SystemConfig(),
        variant=variant,
        default=default,
        permitted=tuple(permitted),
        bounds=_typed(Bounds, _section(data, "bounds", where), "bounds", where),
        source=where,
        groups=GroupsConfig(topology, faults),
    )
    known = {p.name for p in MODEL_KINDS["groups"](scenario)}
    for inv in scenario.permitted:
        if inv not in known:
            raise ScenarioError(f"{where}: permitted invariant {inv!r} is not checked by model 'groups'")
    return scenario


def load_scenario(path: str | Path) -> Scenario:
    """Load a scenario file; raises :class:`ScenarioError` with a one-line message."""
    from keos.scenarios.input_files import MAX_SCENARIO_BYTES, InputFileError, read_user_file

    p = Path(path)
    try:
        text = read_user_file(p, "scenario", MAX_SCENARIO_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise ScenarioError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{p}: not UTF-8 text (byte {exc.start}); a scenario is a UTF-8 TOML file") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{p}: not valid TOML ({exc})") from None
    except RecursionError:
        raise ScenarioError(f"{p}: TOML nested too deeply for a scenario") from None
    return parse_scenario(data, str(p))


#: The last parse of the package's scenario files, keyed by their names, sizes and modification times.
_BUILTIN_CACHE: tuple[tuple[tuple[str, int, int], ...], dict[str, Scenario]] | None = None


def _builtin_stamp(entries: list[Any]) -> tuple[tuple[str, int, int], ...] | None:
    """(name, size, mtime) of every scenario file, or ``None`` when the package is not plain files (a zip)."""
    stamp = []
    for entry in entries:
        if not isinstance(entry, Path):
            return None
        st = entry.stat()
        stamp.append((entry.name, st.st_size, st.st_mtime_ns))
    return tuple(stamp)


def builtin_scenarios() -> dict[str, Scenario]:
    """The scenarios shipped in this package, by name.

    Parsed once per process and kept while no scenario file changes (their names, sizes and modification
    times are the key): a sweep resolves a scenario per run, and parsing the ~190 files each time cost a
    sweep of the default set three quarters of its CPU.  :class:`Scenario` is frozen, and each call returns
    a new dict, so callers cannot change the kept parse."""
    global _BUILTIN_CACHE
    entries = sorted((e for e in resources.files(__name__).iterdir() if e.name.endswith(".toml")), key=lambda e: e.name)
    stamp = _builtin_stamp(entries)
    if stamp is not None and _BUILTIN_CACHE is not None and _BUILTIN_CACHE[0] == stamp:
        return dict(_BUILTIN_CACHE[1])
    out = _parse_builtin_scenarios(entries)
    if stamp is not None:
        _BUILTIN_CACHE = (stamp, out)
    return dict(out)


def _parse_builtin_scenarios(entries: list[Any]) -> dict[str, Scenario]:
    out: dict[str, Scenario] = {}
    for entry in entries:
        if entry.name.endswith(".toml"):
            scenario = parse_scenario(tomllib.loads(entry.read_text(encoding="utf-8")), f"scenarios/{entry.name}")
            if scenario.name in out:
                raise ScenarioError(f"scenarios/{entry.name}: duplicate scenario name {scenario.name!r}")
            out[scenario.name] = scenario
    from keos.scenarios.authz_matrix import matrix_documents  # generated ACL combinations (issue 23)

    for document in matrix_documents():
        scenario = parse_scenario(document, "scenarios/authz_matrix.py")
        if scenario.name in out:
            raise ScenarioError(f"scenarios/authz_matrix.py: duplicate scenario name {scenario.name!r}")
        out[scenario.name] = scenario
    return out


def scenario_set(name: str) -> dict[str, Scenario]:
    """The built-in scenarios in set ``name``, by name; a :class:`ScenarioError` if it has none."""
    chosen = {n: s for n, s in builtin_scenarios().items() if name in s.sets}
    if not chosen:
        known = sorted({x for s in builtin_scenarios().values() for x in s.sets})
        raise ScenarioError(f"unknown scenario set {name!r} (known: {', '.join(known) or 'none'})")
    return chosen


def resolve_scenario(ref: str) -> Scenario:
    """A built-in scenario by name, or a scenario file by path."""
    builtins = builtin_scenarios()
    if ref in builtins:
        return builtins[ref]
    if ref.endswith(".toml") or "/" in ref or Path(ref).exists():
        return load_scenario(ref)
    raise ScenarioError(f"unknown scenario {ref!r} (built-in: {', '.join(sorted(builtins))}; or give a .toml path)")


def build_model(scenario: Scenario, variant: str | Variant | None = None) -> Model:
    """The executable model for a scenario under a protocol variant (the model's memoised functions start with
    empty caches: :mod:`keos.model.memo`)."""
    memo.clear()
    if isinstance(variant, Variant):
        v = variant
    else:
        name = variant or scenario.variant
        if name not in VARIANTS:
            raise ScenarioError(f"unknown variant {name!r} (known: {', '.join(sorted(VARIANTS))})")
        v = VARIANTS[name]
    from keos.scenarios.variant_scope import variant_applies

    applies, why = variant_applies(v, scenario.model)
    if not applies:
        raise ScenarioError(f"{scenario.name}: {why}")
    properties = MODEL_KINDS[scenario.model](scenario)
    if scenario.model == "groups":
        from keos.model.systems.groups import GroupsConfig, GroupSystem

        return GroupSystem(
            scenario.groups or GroupsConfig(), v, properties, name=scenario.model, scenario_info=scenario.info()
        )
    if scenario.model == "connect":
        from keos.model.connect.records import ConnectConfig
        from keos.model.systems.connect import ConnectSystem

        return ConnectSystem(
            scenario.connect or ConnectConfig(), v, properties, name=scenario.model, scenario_info=scenario.info()
        )
    if scenario.model == "eos":
        from keos.model.systems.eos import EosSystem

        return EosSystem(
            scenario.txn or TxnConfig(eos=EosConfig()),
            v,
            properties,
            name=scenario.model,
            scenario_info=scenario.info(),
        )
    if scenario.model == "transactions":
        return TransactionalSystem(
            scenario.txn or TxnConfig(), v, properties, name=scenario.model, scenario_info=scenario.info()
        )
    return KafkaSystem(scenario.config, v, properties, name=scenario.model, scenario_info=scenario.info())
