"""The one counterexample format every engine writes, and its replay.

A trace is JSON::

    {
      "schema_version": 1,
      "keos_version": "0.1.0",
      "engine": "explore",                  # or hypothesis, bmc, sweep
      "scenario": "idempotence_retry",      # the scenario's name
      "scenario_source": "scenarios/idempotence_retry.toml",  # absolute for a user's file
      "scenario_document": {...},           # the resolved scenario (its TOML as JSON)
      "variant": "small_duplicate_window",
      "seed": null,                         # engines with randomness record it
      "invariant": "no_duplicate_append",
      "model": {...},                       # Model.describe(): flags, topology, budgets
      "actions": [{"kind": "Send", "producer": 0}, ...],
      "steps": [{"action": "...", "events": [...], "fingerprint": "..."}, ...],
      "final_state": {...},                 # the violating state, for readers
      "explanation": "record p0.r1 appended twice to partition 0"
    }

Replay (:func:`replay`) rebuilds the model from the scenario and variant,
re-executes ``actions`` from the initial state and confirms the invariant is
violated in the final state (and not before -- a minimal trace ends at the
first violation).  Only ``actions``, ``scenario_document`` (or, in traces
written before it existed, ``scenario`` / ``scenario_source``), ``variant`` and
``invariant`` are trusted; ``steps`` and ``final_state`` are for people, and
``keos replay`` draws the states it re-computed, not these.

The JSON Schema of the format is shipped as ``keos/checker/schemas/trace.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keos.model.interface import Action, Model, ModelError, Property

__all__ = [
    "KEOS_VERSION",
    "SCHEMA_VERSION",
    "Replay",
    "Trace",
    "TraceError",
    "load_trace",
    "make_trace",
    "replay",
    "replay_actions",
]

SCHEMA_VERSION = 1
KEOS_VERSION = "0.1.0"


class TraceError(ModelError):
    """A malformed trace file."""


@dataclass
class Trace:
    """A counterexample: the actions that lead from the initial state to a violation."""

    scenario: str
    variant: str
    invariant: str
    actions: list[Action]
    engine: str = "explore"
    seed: int | None = None
    scenario_source: str = ""
    model_info: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    final_state: dict[str, Any] | None = None
    explanation: str = ""
    permitted: bool = False
    scenario_document: dict[str, Any] | None = None

    def to_json(self, model: Model) -> dict[str, Any]:
        """The trace as a JSON object."""
        return {
            "schema_version": SCHEMA_VERSION,
            "keos_version": KEOS_VERSION,
            "engine": self.engine,
            "scenario": self.scenario,
            "scenario_source": self.scenario_source,
            "scenario_document": self.scenario_document,
            "variant": self.variant,
            "seed": self.seed,
            "invariant": self.invariant,
            "permitted": self.permitted,
            "model": self.model_info,
            "actions": [model.action_to_json(a) for a in self.actions],
            "steps": self.steps,
            "final_state": self.final_state,
            "explanation": self.explanation,
        }

    def write(self, model: Model, path: Path) -> Path:
        """Write the trace as indented JSON."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(model), indent=2) + "\n", encoding="utf-8")
        return path


@dataclass
class Replay:
    """The result of re-executing a trace."""

    confirmed: bool
    reason: str
    states: list[Any] = field(default_factory=list)
    events: list[tuple[str, ...]] = field(default_factory=list)
    violated_at: int = -1


def replay_actions(model: Model, actions: Sequence[Action], prop: Property) -> Replay:
    """Execute ``actions`` from the initial state; confirm ``prop`` fails at the end.

    A trace is *confirmed* when every action is enabled where it is taken and
    the invariant is violated in the final state.  ``violated_at`` is the first
    step index (0 = initial state) where it was violated.
    """
    inits = model.init_states()
    if not inits:
        return Replay(False, "the model has no initial state")
    state = inits[0]
    states = [state]
    events: list[tuple[str, ...]] = [()]
    first = -1 if prop.holds(state) else 0
    for i, action in enumerate(actions, start=1):
        try:
            step = model.step(state, action)
        except Exception:
            # A decoded action the model never offers here (an edited trace) may break a handler;
            # one it offers must not -- that would be a model bug, so it propagates.
            if action in model.actions(state):
                raise
            step = None
        if step is None:
            return Replay(False, f"step {i}: {_describe(model, action)} is not enabled", states, events, first)
        state = step.state
        states.append(state)
        events.append(step.events)
        if first < 0 and not prop.holds(state):
            first = i
    if prop.holds(state):
        return Replay(False, f"{prop.name} holds after the last step", states, events, first)
    return Replay(True, f"{prop.name} is violated after step {len(actions)}", states, events, first)


def _describe(model: Model, action: Action) -> str:
    """The action as the model formats it, or as raw data when an edited trace gives values it cannot."""
    try:
        return model.format_action(action)
    except Exception:
        return f"{action.kind}{action.args!r:.120}"


def make_trace(
    model: Model,
    prop: Property,
    actions: Sequence[Action],
    engine: str,
    scenario: str,
    variant: str,
    seed: int | None = None,
    permitted: bool = False,
) -> Trace:
    """Build a trace after replaying it (a trace that does not replay is an engine bug)."""
    result = replay_actions(model, actions, prop)
    if not result.confirmed:
        raise AssertionError(f"engine {engine} produced a trace that does not replay: {result.reason}")
    info = dict(model.describe())
    document = info.pop("scenario_document", None)
    source = str(info.get("scenario_source", ""))
    if source and not source.startswith(("scenarios/", "<")) and Path(source).exists():
        source = str(Path(source).resolve())
        info["scenario_source"] = source
    steps = [
        {"action": model.format_action(a), "events": list(ev), "fingerprint": model.fingerprint(st)}
        for a, ev, st in zip(actions, result.events[1:], result.states[1:])
    ]
    final = result.states[-1]
    return Trace(
        scenario=scenario,
        variant=variant,
        invariant=prop.name,
        actions=list(actions),
        engine=engine,
        seed=seed,
        scenario_source=source,
        model_info=info,
        steps=steps,
        final_state=model.state_to_json(final),
        explanation=prop.explain(final) if prop.explain else "",
        permitted=permitted,
        scenario_document=document if isinstance(document, dict) else None,
    )


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read and structurally validate a trace file; raises :class:`TraceError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceError(f"{p}: cannot read trace ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{p}: not UTF-8 text (byte {exc.start}); a trace is a UTF-8 JSON file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(f"{p}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise TraceError(f"{p}: JSON nested too deeply for a trace") from None
    if not isinstance(data, dict):
        raise TraceError(f"{p}: a trace must be a JSON object")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise TraceError(f"{p}: unsupported schema_version {version!r} (expected {SCHEMA_VERSION})")
    for key, kind in (("scenario", str), ("variant", str), ("invariant", str), ("actions", list)):
        if not isinstance(data.get(key), kind):
            raise TraceError(f"{p}: field {key!r} missing or not a {kind.__name__}")
    from keos.checker.schemas import schema_errors

    errors = schema_errors("trace", data)
    if errors:
        raise TraceError(f"{p}: {errors[0]}")
    return data


def replay(model: Model, data: dict[str, Any]) -> Replay:
    """Replay a loaded trace on ``model``; raises :class:`TraceError` on bad content."""
    props = {p.name: p for p in model.properties()}
    prop = props.get(data["invariant"])
    if prop is None or prop.predicate is None:
        raise TraceError(f"trace names invariant {data['invariant']!r}, which this model does not check")
    try:
        actions = [model.action_from_json(a) for a in data["actions"]]
    except ModelError as exc:
        raise TraceError(f"bad action in trace: {exc}") from None
    return replay_actions(model, actions, prop)
