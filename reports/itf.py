"""Apalache's Informal Trace Format (ITF): a keos trace as a sequence of states other tools read.

ITF (https://apalache-mc.org/docs/adr/015adr-trace.html) is JSON: ``{"#meta": {...}, "vars":
[...], "states": [{"#meta": {"index": i}, var: value, ...}, ...]}``.  Values: booleans and strings
as themselves, integers as ``{"#bigint": "123"}``, sequences as arrays, records as objects, tuples
as ``{"#tup": [...]}``; a value ITF cannot express (``null``) is ``{"#unserializable": "null"}``.

keos writes the states it *re-executed* (the replay), not the ones stored in the trace file: state
0 is the initial state, state ``i`` the state after action ``i``.  Each state's variables are the
top-level fields of the model's JSON state, plus ``action_taken`` -- the action that led to it
(``"init"`` for state 0), as Apalache's ``mbt::actionTaken`` -- so a Quint or TLA+ model of the
same protocol can be driven through the same run (model-based testing).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["itf_value", "to_itf", "write_itf"]


def itf_value(value: Any) -> Any:
    """A JSON value of a keos state as an ITF value."""
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, float):
        return {"#bigint": str(int(value))} if value.is_integer() else {"#unserializable": repr(value)}
    if isinstance(value, list | tuple):
        return [itf_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): itf_value(v) for k, v in value.items()}
    return {"#unserializable": "null" if value is None else repr(value)}


def _state_json(model: Any, state: Any) -> dict[str, Any]:
    data = model.state_to_json(state)
    return data if isinstance(data, dict) else {"state": data}


def to_itf(outcome: Any) -> dict[str, Any]:
    """The ITF document of a :class:`keos.checker.api.ReplayReport`."""
    from keos.scenarios import build_model

    data = outcome.data
    model = build_model(outcome.scenario, data["variant"])
    states = outcome.replay.states
    actions = ["init"] + [step["action"] for step in outcome.drawn["steps"]]
    docs = [_state_json(model, s) for s in states]
    names: list[str] = []
    for d in docs:
        names += [k for k in d if k not in names]
    out_states = []
    for i, (doc, action) in enumerate(zip(docs, actions)):
        entry: dict[str, Any] = {"#meta": {"index": i}}
        for name in names:
            entry[name] = itf_value(doc.get(name))
        entry["action_taken"] = action
        out_states.append(entry)
    meta = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": "keos",
        "scenario": outcome.scenario.name,
        "variant": data["variant"],
        "invariant": data["invariant"],
        "confirmed": outcome.replay.confirmed,
        "description": outcome.replay.reason,
    }
    if outcome.replay.violated_at >= 0:
        meta["violated_at"] = outcome.replay.violated_at
    return {"#meta": meta, "vars": [*names, "action_taken"], "states": out_states}


def write_itf(path: Path, outcome: Any) -> Path:
    """Write the ITF document of a replay; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_itf(outcome), indent=1) + "\n", encoding="utf-8")
    return path
