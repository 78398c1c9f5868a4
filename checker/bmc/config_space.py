"""Configuration-space questions as solver queries (``keos config-space``).

The question (issue #4): on one scenario's topology and fault budget, which
producer configurations -- ``enable.idempotence`` x ``acks`` x ``retries`` x
``max.in.flight.requests.per.connection`` -- admit a violation of an invariant
within ``K`` steps?  Typically a duplicate (``no_duplicate_append``) or a
reordering (``per_partition_order``).

Kafka answers part of it before any run.  ``ProducerConfig`` rejects with a
``ConfigException`` an idempotent producer without ``acks=all``, with
``retries=0`` or with more than five requests in flight (KIP-98, KAFKA-5494).
The bound of five matches the broker: its ``ProducerStateEntry`` caches the
metadata of only the last five batches per producer id
(``NUM_BATCHES_TO_RETAIN``, ``ProducerStateEntry.java``), and a retry is recognised as a
duplicate only while its batch is among them (the duplicate check runs before
the epoch and sequence checks, §2.2).  Such combinations are listed with the
message :meth:`model.clients.producer_config.ProducerConfig.validate` gives and are not queried.

Every accepted configuration becomes one bounded query,
:func:`checker.bmc.engine.bmc` with ``only=invariants``, on the real protocol
(variant ``kafka``).  Without idempotence the producer sends ``pid=-1``.  The
leader then has no duplicate or sequence check to apply, so a duplicated or
retried request is appended twice and a later batch can overtake an earlier
one.  With idempotence, the broker's checks must rule both out; the answer is
bounded ("none up to depth D"), and :func:`checker.bmc.engine.prove_broker_core`
gives the unbounded broker half.  ``acks=0`` and reorder budgets are outside
the encoding (:func:`checker.bmc.encoding.covers`); those rows say "not encoded".

A witness is only shown after it replays.  ``keos replay`` rebuilds the model
from the trace's ``scenario`` (a built-in name or a TOML path) and
``variant``.  A witness found under a modified ``[producer]`` would not replay
against the base scenario.  So for each configuration that admits a violation
this module writes a *derived scenario*: the base scenario with ``[producer]``
replaced, named ``<base>__idem_<b>_acks_<a>_retries_<r>_mif_<m>``,
``default = false``.  It loads that file back with
:func:`scenarios.load_scenario`, rebuilds the model from it, and replays the
witness on it (:func:`checker.trace.make_trace`).  The trace is then written
next to the file, and it names the file as its scenario.  A witness that does not
replay from the file is an engine disagreement, never an answer.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from keos.checker.bmc.encoding import INVARIANTS
from keos.checker.bmc.encoding import covers as model_covers
from keos.checker.bmc.engine import bmc
from keos.checker.trace import Trace, make_trace
from keos.model.clients.producer_config import ACKS, ProducerConfig, ProducerConfigError
from keos.model.interface import ModelError
from keos.model.systems.idempotence import KafkaSystem
from keos.scenarios import Scenario, ScenarioError, build_model, load_scenario

__all__ = [
    "DEFAULT_INVARIANTS",
    "ConfigRow",
    "ConfigSpaceError",
    "config_space",
    "derived_name",
    "derived_scenario_toml",
]

#: The invariants asked about by default: a duplicate and a reordering.
DEFAULT_INVARIANTS = ("no_duplicate_append", "per_partition_order")

#: The protocol the questions are asked of (the real one, not a weakened variant).
VARIANT = "kafka"

#: Where, under the output directory, derived scenarios, traces and the summary go.
SUBDIR = "config-space"


class ConfigSpaceError(ModelError):
    """A configuration-space question that cannot be asked (bad scenario or invariant)."""


@dataclass
class ConfigRow:
    """The answer for one producer configuration.

    ``outcome`` is ``"rejected"`` (Kafka's ``ConfigException``, in
    ``reason``), ``"not_encoded"`` (outside the z3 encoding, in ``reason``),
    ``"skipped"`` (the time budget was spent before this query) or
    ``"checked"``.  A checked row carries the replayed witness traces, each
    naming the derived scenario file it replays on.
    """

    enable_idempotence: bool
    acks: str
    retries: int
    max_in_flight: int
    invariants: tuple[str, ...]
    outcome: str = "checked"
    reason: str = ""
    depth_requested: int = 0
    depth_reached: int = -1
    timed_out: bool = False
    elapsed_s: float = 0.0
    traces: dict[str, Trace] = field(default_factory=dict)
    trace_paths: dict[str, Path] = field(default_factory=dict)
    scenario_path: Path | None = None
    disagreements: dict[str, str] = field(default_factory=dict)

    @property
    def producer_config(self) -> ProducerConfig:
        """The configuration this row answers for."""
        return ProducerConfig(
            enable_idempotence=self.enable_idempotence,
            acks=self.acks,
            retries=self.retries,
            max_in_flight=self.max_in_flight,
        )

    @property
    def status(self) -> str:
        """One line: rejected / not encoded / what it admits / none up to depth D."""
        return "; ".join(self.status_parts())

    def status_parts(self) -> list[str]:
        """The parts of :attr:`status`: one per admitted invariant or disagreement, then what was not found."""
        if self.outcome == "rejected":
            return [f"rejected by Kafka: {self.reason}"]
        if self.outcome == "not_encoded":
            return [f"not encoded: {self.reason}"]
        if self.outcome == "skipped":
            return ["not queried: time budget spent"]
        parts = [
            f"admits {name} ({len(tr.actions)} steps, trace {self.trace_paths[name]})"
            for name, tr in self.traces.items()
        ]
        parts += [f"engine disagreement on {name}: {why}" for name, why in self.disagreements.items()]
        rest = [n for n in self.invariants if n not in self.traces and n not in self.disagreements]
        if rest:
            budget = " (time budget)" if self.timed_out else ""
            if self.depth_reached < 0:
                parts.append(f"no answer{budget}")
            elif parts:
                parts.append(f"no {', '.join(rest)} up to depth {self.depth_reached}{budget}")
            else:
                parts.append(f"none up to depth {self.depth_reached}{budget}")
        return parts

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON object (traces by path; the files hold the full traces)."""
        return {
            "enable_idempotence": self.enable_idempotence,
            "acks": self.acks,
            "retries": self.retries,
            "max_in_flight": self.max_in_flight,
            "outcome": self.outcome,
            "status": self.status,
            "reason": self.reason,
            "invariants": list(self.invariants),
            "depth_requested": self.depth_requested,
            "depth_reached": self.depth_reached,
            "timed_out": self.timed_out,
            "elapsed_s": self.elapsed_s,
            "admits": {
                name: {"steps": len(tr.actions), "trace": str(self.trace_paths[name]), "explanation": tr.explanation}
                for name, tr in self.traces.items()
            },
            "scenario_file": str(self.scenario_path) if self.scenario_path else None,
            "engine_disagreement": dict(self.disagreements),
        }


def derived_name(base: str, pc: ProducerConfig) -> str:
    """``<base>__idem_<b>_acks_<a>_retries_<r>_mif_<m>``: a scenario name the strict loader accepts."""
    idem = "true" if pc.enable_idempotence else "false"
    return f"{base}__idem_{idem}_acks_{pc.acks}_retries_{pc.retries}_mif_{pc.max_in_flight}"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        # A JSON string is a TOML basic string, except that TOML also wants DEL escaped.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")


def _table(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj) if getattr(obj, f.name) is not None}


def derived_scenario_toml(scenario: Scenario, pc: ProducerConfig) -> str:
    """The TOML text of ``scenario`` with its ``[producer]`` table replaced by ``pc``.

    The schema is :mod:`scenarios`' (idempotence model): top-level keys, then
    ``[topology]``, ``[producer]``, ``[broker]``, ``[faults]``, ``[bounds]``.
    ``permitted`` is emptied (the query asks about every listed invariant), the
    variant is the real protocol, and the scenario is not a default one.
    """
    cfg = scenario.config
    settings = ", ".join(f"{k} = {_toml_value(v)}" for k, v in _table(pc).items())
    description = (
        f"{scenario.description.rstrip()}\n\nDerived by keos config-space from scenario {scenario.name!r} "
        f"({scenario.source}), [producer] replaced: {settings}."
    ).lstrip()
    top: dict[str, Any] = {
        "name": derived_name(scenario.name, pc),
        "description": description,
        "model": scenario.model,
        "default": False,
        "variant": VARIANT,
        "permitted": [],
    }
    tables: dict[str, dict[str, Any]] = {
        "topology": _table(cfg.topology),
        "producer": _table(pc),
        "broker": {"sequence_space": cfg.sequence_space, "max_producer_epoch": cfg.max_producer_epoch},
        "faults": _table(cfg.faults),
        "bounds": _table(scenario.bounds),
    }
    lines = [f"{k} = {_toml_value(v)}" for k, v in top.items()]
    for name, table in tables.items():
        lines += ["", f"[{name}]", *(f"{k} = {_toml_value(v)}" for k, v in table.items())]
    return "\n".join(lines) + "\n"


def _check_question(scenario: Scenario, invariants: Sequence[str]) -> None:
    if scenario.model != "idempotence":
        raise ConfigSpaceError(
            f"config-space needs an idempotence scenario (producer configs); "
            f"{scenario.name!r} is model {scenario.model!r}"
        )
    if not invariants:
        raise ConfigSpaceError("config-space needs at least one invariant")
    for name in invariants:
        if name not in INVARIANTS:
            raise ConfigSpaceError(f"unknown invariant {name!r} (the bmc encoding covers: {', '.join(INVARIANTS)})")


def _write_witnesses(row: ConfigRow, base: Scenario, sc: Scenario, found: dict[str, Trace], directory: Path) -> None:
    """Write the derived scenario of ``base``, reload it, replay each witness (found on ``sc``) on it, write traces."""
    path = directory / f"{sc.name}.toml"
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(derived_scenario_toml(base, row.producer_config), encoding="utf-8")
    row.scenario_path = path
    try:
        loaded = load_scenario(path)
    except ScenarioError as exc:
        for name in found:
            row.disagreements[name] = f"derived scenario does not load: {exc}"
        return
    if loaded.config != sc.config or loaded.name != sc.name:
        for name in found:
            row.disagreements[name] = f"derived scenario {path} does not describe the configuration queried"
        return
    model = build_model(loaded, VARIANT)
    props = {p.name: p for p in model.properties()}
    for name, witness in found.items():
        try:
            trace = make_trace(model, props[name], witness.actions, "bmc", str(path), VARIANT)
        except AssertionError as exc:
            row.disagreements[name] = f"witness does not replay on {path}: {exc}"
            continue
        row.traces[name] = trace
        row.trace_paths[name] = trace.write(model, directory / f"{sc.name}.{name}.trace.json")


def config_space(
    scenario: Scenario,
    invariants: Sequence[str] = DEFAULT_INVARIANTS,
    depth: int = 12,
    time_budget_s: float = 60.0,
    retries: Sequence[int] = (0, 1, 2),
    max_in_flight: Sequence[int] = (1, 2, 5),
    *,
    out_dir: Path,
    acks: Sequence[str] = ACKS,
    idempotence: Sequence[bool] = (True, False),
    progress: Callable[[ConfigRow], None] | None = None,
) -> list[ConfigRow]:
    """Which producer configurations admit a violation of ``invariants`` within ``depth`` steps.

    Enumerates ``idempotence x acks x retries x max_in_flight`` (in that
    order) on the scenario's topology, broker settings and fault budget.  Rows
    Kafka rejects or the encoding does not cover are answered without a query.
    The rest share ``time_budget_s`` (0 = unlimited): each query gets the time
    left divided by the queries left, so quick answers leave time to the
    slower ones (configurations without idempotence, whose witnesses are
    short, are queried first).  Witnesses are replayed from a derived
    scenario file under ``out_dir/config-space/`` (module docstring).
    ``progress`` is called with each row before its query runs.

    Raises :class:`ConfigSpaceError` for a scenario that is not an idempotence
    one, or an invariant the encoding does not cover.
    """
    invariants = tuple(dict.fromkeys(invariants))
    _check_question(scenario, invariants)
    directory = out_dir / SUBDIR
    rows: list[ConfigRow] = []
    queries: list[tuple[ConfigRow, Scenario, KafkaSystem]] = []
    for idem, ack, r, mif in itertools.product(idempotence, acks, retries, max_in_flight):
        row = ConfigRow(idem, ack, r, mif, invariants, depth_requested=depth)
        rows.append(row)
        pc = row.producer_config
        try:
            pc.validate()
        except ProducerConfigError as exc:
            row.outcome, row.reason = "rejected", str(exc)
            continue
        sc = replace(
            scenario,
            name=derived_name(scenario.name, pc),
            config=replace(scenario.config, producer=pc),
            variant=VARIANT,
            default=False,
            permitted=(),
            document=None,  # derived: its traces name the derived scenario file instead
        )
        model = build_model(sc, VARIANT)
        assert isinstance(model, KafkaSystem)
        ok, why = model_covers(model)
        if not ok:
            row.outcome, row.reason = "not_encoded", why
            continue
        queries.append((row, sc, model))
    # Without idempotence the witnesses are short; with it, "none up to depth D" needs every depth.  The former
    # run first so that the time they leave goes to the latter (rows keep the grid's order).
    queries.sort(key=lambda q: q[0].enable_idempotence)
    deadline = time.perf_counter() + time_budget_s if time_budget_s > 0 else None
    for i, (row, sc, model) in enumerate(queries):
        budget = 0.0
        if deadline is not None:
            budget = (deadline - time.perf_counter()) / (len(queries) - i)
            if budget <= 0:
                row.outcome, row.timed_out = "skipped", True
                continue
        if progress is not None:
            progress(row)
        out = bmc(model, sc.name, VARIANT, depth, budget, only=invariants, events=False)
        row.depth_reached, row.timed_out, row.elapsed_s = out.depth_reached, out.timed_out, out.elapsed_s
        row.disagreements.update(out.disagreements)
        if out.traces:
            _write_witnesses(row, scenario, sc, out.traces, directory)
    return rows
