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
      "explanation": "record p0.r1 appended twice to partition 0",
      "liveness": null,                     # "stuck" or "livelock" for an eventually property
      "loop_start": null,                   # livelock: index of the cycle's first action
      "fairness": []                        # eventually: the property's fairness assumptions
    }

Replay (:func:`replay`) rebuilds the model from the scenario and variant,
re-executes ``actions`` from the initial state and confirms the invariant is
violated in the final state (and not before -- a minimal trace ends at the
first violation).  Only ``actions``, ``scenario_document`` (or, in traces
written before it existed, ``scenario`` / ``scenario_source``), ``variant``,
``invariant`` and ``loop_start`` are trusted; ``steps`` and ``final_state`` are
for people, and ``keos replay`` draws the states it re-computed, not these.

A counterexample to an ``eventually`` property (:mod:`keos.checker.liveness`)
is either a path to a *stuck* state (``loop_start`` null: replay confirms
that no protocol step is enabled at the end and the property is false there)
or a *lasso*: ``actions[:loop_start]`` lead to a state and
``actions[loop_start:]`` is a cycle back to it (same fingerprint) with no
fault, the property false on every state of it, and weak fairness (every
protocol action enabled on all of the cycle is taken on it).  Schema version
2 added ``liveness``, ``loop_start`` and ``fairness``; version 1 traces (safety
only) still load and replay.

The JSON Schema of the format is shipped as ``keos/checker/schemas/trace.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keos.checker.liveness import LIVELOCK, STUCK, check_lasso, check_stuck
from keos.model.interface import Action, Expectation, Model, ModelError, Property

__all__ = [
    "KEOS_VERSION",
    "SCHEMA_VERSION",
    "Replay",
    "Trace",
    "TraceError",
    "load_trace",
    "make_trace",
    "offered",
    "replay",
    "replay_actions",
]

SCHEMA_VERSION = 2
#: Versions :func:`load_trace` reads (1: before liveness traces).
READABLE_SCHEMA_VERSIONS = (1, 2)
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
    liveness: str | None = None
    loop_start: int | None = None
    fairness: tuple[str, ...] = ()
    scenario_document: dict[str, Any] | None = None

    @property
    def cycle(self) -> list[Action]:
        """A livelock's cycle (``actions[loop_start:]``); empty for other traces."""
        return [] if self.loop_start is None else self.actions[self.loop_start :]

    @property
    def summary(self) -> str:
        """One line for a verdict's detail: the explanation, led for a liveness trace by its shape."""
        n = len(self.actions)
        if self.liveness is None:
            return self.explanation
        if self.loop_start is None:
            head = f"stuck: no protocol step is enabled after step {n} and {self.invariant} is false"
        else:
            head = (
                f"livelock: steps {self.loop_start + 1}-{n} repeat forever, weakly fair, "
                f"with {self.invariant} false in every state of the cycle"
            )
        return f"{head}; {self.explanation}" if self.explanation else head

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
            "liveness": self.liveness,
            "loop_start": self.loop_start,
            "fairness": list(self.fairness),
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


def offered(model: Model, state: Any, action: Action) -> bool:
    """Whether the model offers ``action`` in ``state``, compared as trace JSON (:meth:`Model.action_to_json`).

    A decoded action can equal an offered one in Python without being it: ``True == 1``, ``1.0 == 1``, so an
    edited trace's ``"consumer": true`` would match consumer 1 and a ``step`` that tests ``action in enabled``
    would take it.  Compared as JSON, a trace file can only name an action the system could have taken."""
    try:
        key = json.dumps(model.action_to_json(action), sort_keys=True)
    except (TypeError, ValueError, ModelError):  # input: an edited trace's value that does not encode
        return False
    return any(json.dumps(model.action_to_json(a), sort_keys=True) == key for a in model.actions(state))


def replay_actions(model: Model, actions: Sequence[Action], prop: Property, loop_start: int | None = None,
                   offered_only: bool = False) -> Replay:
    """Execute ``actions`` from the initial state; confirm ``prop`` fails at the end.

    A trace is *confirmed* when every action is enabled where it is taken and
    the invariant is violated in the final state.  ``violated_at`` is the first
    step index (0 = initial state) where it was violated.  For an
    ``eventually`` property the end must be a stuck state (``loop_start`` None)
    or ``actions[loop_start:]`` a fair livelock cycle (:mod:`keos.checker.liveness`);
    ``violated_at`` is then the last step (stuck) or ``loop_start``.

    ``offered_only`` (a trace read from a file, :func:`replay`): an action is taken only where
    :func:`offered` says the model offers it -- a step function that checks less (or whose check a
    decoded ``True`` passes for ``1``) never takes a user's action no run of the system takes.
    Engines' own actions come from ``model.actions`` and skip the test.
    """
    if prop.expectation is Expectation.EVENTUALLY:
        return _replay_liveness(model, actions, prop, loop_start, offered_only)
    if loop_start is not None:
        return Replay(False, f"{prop.name} is not an eventually property; a trace with a cycle cannot violate it")
    inits = model.init_states()
    if not inits:
        return Replay(False, "the model has no initial state")
    state = inits[0]
    states = [state]
    events: list[tuple[str, ...]] = [()]
    first = -1 if prop.holds(state) else 0
    for i, action in enumerate(actions, start=1):
        if offered_only and not offered(model, state, action):
            return Replay(False, f"step {i}: {_describe(model, action)} is not enabled", states, events, first)
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


def _replay_liveness(model: Model, actions: Sequence[Action], prop: Property, loop_start: int | None,
                     offered_only: bool = False) -> Replay:
    """Replay a stuck path (``loop_start`` None) or a lasso for the eventually property ``prop``."""
    inits = model.init_states()
    if not inits:
        return Replay(False, "the model has no initial state")
    state = inits[0]
    states = [state]
    events: list[tuple[str, ...]] = [()]
    for i, action in enumerate(actions, start=1):
        if offered_only and not offered(model, state, action):
            return Replay(False, f"step {i}: {_describe(model, action)} is not enabled", states, events)
        step = model.step(state, action)
        if step is None:
            return Replay(False, f"step {i}: {model.format_action(action)} is not enabled", states, events)
        state = step.state
        states.append(state)
        events.append(step.events)
    if loop_start is None:
        why = check_stuck(model, state, prop)
        if why is not None:
            return Replay(False, why, states, events)
        return Replay(
            True,
            f"{prop.name} never holds again: stuck after step {len(actions)} (no protocol step enabled)",
            states,
            events,
            len(actions),
        )
    why = check_lasso(model, states, actions, loop_start, prop)
    if why is not None:
        return Replay(False, why, states, events)
    return Replay(
        True,
        f"{prop.name} never holds again: a weakly fair livelock, steps {loop_start + 1}-{len(actions)} "
        f"repeat forever (back to the state after step {loop_start})",
        states,
        events,
        loop_start,
    )


def _describe(model: Model, action: Action) -> str:
    """The action as the model formats it, or as raw data when an edited trace gives values it cannot."""
    try:
        return model.format_action(action)
    except Exception:
        return f"{action.kind}{action.args!r:.120}"


def _check_round_trip(model: Model, actions: Sequence[Action]) -> None:
    """The trace *file* replays too: every action, written as JSON and read back, is the action confirmed.

    ``keos replay`` re-executes the decoded actions, so an action whose encoding loses something (a
    record read back as another class, a tuple as a list, a field dropped) would make the file a user
    attaches to a bug report replay differently from the run that confirmed it.  A mismatch is a keos
    bug (exit 3), never a verdict.
    """
    for i, action in enumerate(actions):
        text = json.dumps(model.action_to_json(action))
        try:
            back = model.action_from_json(json.loads(text))
        except ModelError as exc:
            raise AssertionError(f"step {i + 1}, {model.format_action(action)}: its JSON does not decode: {exc}") \
                from None
        if back != action or type(back.args) is not tuple:
            raise AssertionError(f"step {i + 1}: {model.format_action(action)} reads back from its JSON as "
                                 f"{model.format_action(back)}: the trace file would not replay")


def make_trace(
    model: Model,
    prop: Property,
    actions: Sequence[Action],
    engine: str,
    scenario: str,
    variant: str,
    seed: int | None = None,
    permitted: bool = False,
    loop_start: int | None = None,
) -> Trace:
    """Build a trace after replaying it (a trace that does not replay is an engine bug).

    ``loop_start`` marks a livelock's cycle (``actions[loop_start:]``) for an
    eventually property; without it such a trace must end in a stuck state.
    """
    result = replay_actions(model, actions, prop, loop_start)
    if not result.confirmed:
        raise AssertionError(f"engine {engine} produced a trace that does not replay: {result.reason}")
    _check_round_trip(model, actions)
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
    eventually = prop.expectation is Expectation.EVENTUALLY
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
        liveness=None if not eventually else (STUCK if loop_start is None else LIVELOCK),
        loop_start=loop_start,
        fairness=tuple(prop.fairness) if eventually else (),
        scenario_document=document if isinstance(document, dict) else None,
    )


def load_trace(path: str | Path) -> dict[str, Any]:
    """Read and structurally validate a trace file; raises :class:`TraceError`."""
    from keos.scenarios.input_files import MAX_TRACE_BYTES, InputFileError, read_user_file

    p = Path(path)
    try:
        text = read_user_file(p, "trace", MAX_TRACE_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise TraceError(str(exc)) from None
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
    if version not in READABLE_SCHEMA_VERSIONS:
        raise TraceError(
            f"{p}: unsupported schema_version {version!r} (readable: {', '.join(map(str, READABLE_SCHEMA_VERSIONS))})"
        )
    for key, kind in (("scenario", str), ("variant", str), ("invariant", str), ("actions", list)):
        if not isinstance(data.get(key), kind):
            raise TraceError(f"{p}: field {key!r} missing or not a {kind.__name__}")
    loop_start = data.get("loop_start")
    if loop_start is not None and (
        isinstance(loop_start, bool) or not isinstance(loop_start, int) or not 0 <= loop_start < len(data["actions"])
    ):
        raise TraceError(f"{p}: loop_start must be null or the index of one of the trace's actions, got {loop_start!r}")
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
    return replay_actions(model, actions, prop, data.get("loop_start"), offered_only=True)
