"""Apalache's Informal Trace Format (ITF): a keos trace as a sequence of states other tools read.

ITF (https://apalache-mc.org/docs/adr/015adr-trace.html) is JSON: ``{"#meta": {...}, "vars":
[...], "states": [{"#meta": {"index": i}, var: value, ...}, ...]}``.  Values: booleans and strings
as themselves, integers as ``{"#bigint": "123"}``, sequences as arrays, records as objects, tuples
as ``{"#tup": [...]}``; a value ITF cannot express (``null``) is ``{"#unserializable": "null"}``.
``#meta.varTypes`` gives each variable's type in Apalache's Type System 1.2 (:func:`var_types`), which
Apalache needs to read a trace back.

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

__all__ = ["itf_value", "to_itf", "var_types", "write_itf"]


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
        # keos names a record's class "@"; a TLA+ record field must be an identifier, so ITF calls it "kind".
        rename = "@" in value and "kind" not in value
        return {("kind" if rename and k == "@" else str(k)): itf_value(v) for k, v in value.items()}
    return {"#unserializable": "null" if value is None else repr(value)}


class _Types:
    """Apalache's type of each variable (Type System 1.2 syntax, ADR-002), inferred from the values written.

    ``Bool``, ``Str``, ``Int``, ``Seq(T)``, records ``{ f: T, ... }`` and tuples ``<<T, ...>>``.  Where the
    values of one position disagree (an empty sequence of unknown elements, messages of several kinds in
    one network queue, a ``null``), the type is a type variable (``a``, ``b``, ...): still a type Apalache
    parses, naming the spot a typed TLA+ or Quint model must fix.
    """

    def __init__(self) -> None:
        self.fresh = 0

    def var(self) -> str:
        name, n = "", self.fresh
        while True:
            name = chr(ord("a") + n % 26) + name
            n = n // 26 - 1
            if n < 0:
                break
        self.fresh += 1
        return name

    def of(self, value: Any) -> Any:
        """A type term: a string, or a tuple ``("seq", T)`` / ``("rec", {...})`` / ``("tup", [...])`` / None."""
        if isinstance(value, bool):
            return "Bool"
        if isinstance(value, str):
            return "Str"
        if isinstance(value, list):
            elem: Any = None
            for v in value:
                elem = self.unify(elem, self.of(v))
            return ("seq", elem)
        if isinstance(value, dict):
            if "#bigint" in value:
                return "Int"
            if "#tup" in value:
                return ("tup", [self.of(v) for v in value["#tup"]])
            if "#unserializable" in value:
                return ("var",)
            return ("rec", {k: self.of(v) for k, v in value.items()})
        return ("var",)

    def unify(self, a: Any, b: Any) -> Any:
        if a is None:
            return b
        if b is None or a == b:
            return a
        if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] != "var":
            if a[0] == "seq":
                return ("seq", self.unify(a[1], b[1]))
            if a[0] == "rec" and a[1].keys() == b[1].keys():
                return ("rec", {k: self.unify(a[1][k], b[1][k]) for k in a[1]})
            if a[0] == "tup" and len(a[1]) == len(b[1]):
                return ("tup", [self.unify(x, y) for x, y in zip(a[1], b[1])])
        return ("var",)

    def text(self, term: Any) -> str:
        if term is None or term == ("var",):
            return self.var()
        if isinstance(term, str):
            return term
        if term[0] == "seq":
            return f"Seq({self.text(term[1])})"
        if term[0] == "tup":
            return "<<" + ", ".join(self.text(t) for t in term[1]) + ">>"
        fields = ", ".join(f"{k if k.isidentifier() else json.dumps(k)}: {self.text(t)}" for k, t in term[1].items())
        return "{ " + fields + " }"


def var_types(states: list[dict[str, Any]], names: list[str]) -> dict[str, str]:
    """``#meta.varTypes``: each variable's type over every state of the trace (ADR-015, Type System 1.2)."""
    types = _Types()
    out: dict[str, str] = {}
    for name in names:
        term: Any = None
        for st in states:
            term = types.unify(term, types.of(st.get(name)))
        out[name] = types.text(term)
    return out


def _state_json(model: Any, state: Any) -> dict[str, Any]:
    data = model.state_to_json(state)
    if isinstance(data, dict) and "@" in data and "kind" not in data:
        data = {("kind" if k == "@" else k): v for k, v in data.items()}
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
    meta["varTypes"] = var_types(out_states, [*names, "action_taken"])
    return {"#meta": meta, "vars": [*names, "action_taken"], "states": out_states}


def write_itf(path: Path, outcome: Any) -> Path:
    """Write the ITF document of a replay; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_itf(outcome), indent=1) + "\n", encoding="utf-8")
    return path
