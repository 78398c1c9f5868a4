"""Hostile action fields in a recorded trace, for every system's action decoder: exit 2 or an honest replay.

``keos replay`` and ITF export read user-supplied traces: a trace attached to a bug report, hand-edited to try
another interleaving, or written by another tool.  The brief's promise for such input is one line ``keos: error:
...`` and exit 2 -- never a traceback -- and a replay that only ever takes actions the model itself offers.  Each
system decodes its own actions (``action_from_json`` of the idempotence, transactions -- with the security
adversary's forged requests --, exactly-once processing, Connect and consumer-group systems), so a decoder that
lets a wrong type through, or a ``step`` that quietly takes an action no state offers, is a hole of one system
only; ``tests/test_bad_input.py`` fuzzed only the idempotence trace.

This file records a short valid trace per system (a seeded walk over the enabled actions of a built-in scenario,
written as ``keos check`` writes traces, for a safety and, where the system has one, a liveness property), then
edits one action field at a time:

* a JSON value of another type than the recorded one (negative and huge integers stay integers; booleans,
  strings, floats, ``null``, lists and objects where an integer was; integers, ``null`` and booleans where a
  string or boolean was), a missing and an extra argument, an unknown action kind: a malformed trace, exit 2;
* a value of the right type the state does not offer (an unknown member or consumer, a negative index, another
  action kind with the same arguments): exit 2, or a replay that refutes the trace *at that step* ("is not
  enabled").

The oracle is the model's own offer, compared by the actions' JSON (so ``true`` is not ``1``): a replay may take
step ``i`` only if the recorded action is, as JSON, one of ``model.actions(state)``.  A replay that goes on past
an action the model never offers would let an edited trace "confirm" a violation no run of the system can reach.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keos.checker.cli.main import main
from keos.checker.trace import Trace
from keos.model.interface import Expectation, Model, ModelError
from keos.scenarios import build_model, resolve_scenario

#: one small built-in scenario per system whose actions a trace can carry (the security adversary's forged
#: requests ride on the transactions and EOS systems: authz_insider, authz_eos_forged_offsets)
SYSTEMS: dict[str, str] = {
    "idempotence": "idempotence_retry",
    "transactions+security": "authz_insider",
    "eos+security": "authz_eos_forged_offsets",
    "connect": "connect_connector_deleted",
    "groups": "groups_static_membership",
}
WALK = 24  # steps of each recorded trace: every system's first steps use most of its action kinds


def _canonical(model: Model, action: Any) -> str:
    """An action as its trace JSON, keys sorted: ``true`` and ``1`` differ, as they do in the file."""
    return json.dumps(model.action_to_json(action), sort_keys=True)


def _walk(model: Model, seed: int) -> list[Any]:
    rng = random.Random(seed)
    state, actions = model.init_states()[0], []
    for _ in range(WALK):
        offered = model.actions(state)
        if not offered:
            break
        action = offered[rng.randrange(len(offered))]
        step = model.step(state, action)
        assert step is not None, model.format_action(action)
        state = step.state
        actions.append(action)
    return actions


def _record(system: str, expectation: Expectation, root: Path) -> Path | None:
    """A valid trace of ``system``'s scenario for its first property of ``expectation`` (None: it has none)."""
    scenario = resolve_scenario(SYSTEMS[system])
    model = build_model(scenario)
    prop = next((p for p in model.properties() if p.expectation is expectation and p.predicate is not None), None)
    if prop is None:
        return None
    actions = _walk(model, seed=len(system))
    info = dict(model.describe())
    document = info.pop("scenario_document", None)
    trace = Trace(scenario=scenario.name, variant="kafka", invariant=prop.name, actions=actions,
                  scenario_source=str(info.get("scenario_source", "")), model_info=info,
                  scenario_document=document if isinstance(document, dict) else None)
    path = root / f"{system}.{expectation.name.lower()}.trace.json"
    trace.write(model, path)
    return path


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("actions")
    out: dict[str, Path] = {}
    for system in SYSTEMS:
        for expectation in (Expectation.ALWAYS, Expectation.EVENTUALLY):
            path = _record(system, expectation, root)
            if path is not None:
                out[f"{system}/{expectation.name.lower()}"] = path
    return out


def _replay(path: Path) -> tuple[int, dict[str, Any] | None, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = main(["replay", str(path), "--json"])
    summary = json.loads(out.getvalue()) if code in (0, 1) else None
    return code, summary, err.getvalue()


def _first_not_offered(data: dict[str, Any]) -> int | None:
    """The oracle: the 1-based index of the first recorded action the model does not offer where it is taken
    (compared as JSON), None when every one is offered; raises ModelError when an action does not decode."""
    model = build_model(resolve_scenario(data["scenario"]))
    state = model.init_states()[0]
    for i, raw in enumerate(data["actions"], start=1):
        offered = {_canonical(model, a): a for a in model.actions(state)}
        key = json.dumps(raw, sort_keys=True)
        if key not in offered:
            model.action_from_json(raw)  # a malformed action raises here: the replay must exit 2
            return i
        step = model.step(state, offered[key])
        assert step is not None
        state = step.state
    return None


def _check(edited: dict[str, Any], path: Path) -> None:
    """Replay ``edited``: exit 2 with one line, or a replay that stops at the first action not offered."""
    path.write_text(json.dumps(edited), encoding="utf-8")
    code, summary, err = _replay(path)
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("keos: error: "), err
        return
    assert code in (0, 1) and summary is not None, err
    try:
        stop = _first_not_offered(edited)
    except ModelError as exc:  # the decoder refuses it when asked directly, yet the replay ran
        raise AssertionError(f"replay exit {code} on an action its decoder refuses ({exc}): {summary}") from None
    if stop is None:
        return
    assert not summary["confirmed"] and summary["reason"].startswith(f"step {stop}: "), (
        f"the model offers no such action at step {stop} ({edited['actions'][stop - 1]}), yet the replay says "
        f"{summary['reason']!r}")


# -- the table: every argument of every action kind in the recorded traces, edited one at a time --------------

_WRONG_TYPES: dict[type, list[Any]] = {
    int: [True, "0", 1.5, None, [0]],
    str: [0, True, None],
    bool: [0, "true", None],
    dict: ["x", None, []],
    list: ["x", {}],
}
_RIGHT_TYPE_UNOFFERED: dict[type, list[Any]] = {int: [-1, 2**31], str: ["no-such-member"]}


def _slots(data: dict[str, Any]) -> Iterator[tuple[int, str, bool]]:
    """(action index, argument, whether it is the argument name's first occurrence) for the first occurrence of
    each (kind, argument) in the trace."""
    seen: set[tuple[str, str]] = set()
    names: set[str] = set()
    for i, action in enumerate(data["actions"]):
        for arg in sorted(action):
            if arg != "kind" and (action["kind"], arg) not in seen:
                seen.add((action["kind"], arg))
                yield i, arg, arg not in names
                names.add(arg)


def _edits(data: dict[str, Any], every: bool = True) -> Iterator[tuple[str, Callable[[dict[str, Any]], None]]]:
    """(label, in-place edit of a trace): values of another type, values of the right type no state offers,
    a missing and an extra argument, an unknown kind and another kind with the same arguments.  ``every=False``:
    one value of another type and one not offered per argument (the liveness replay of the same walk).  Every
    value is tried on an argument name's first occurrence, the first of each list on the other action kinds."""
    for i, arg, first_of_name in _slots(data):
        value = data["actions"][i][arg]
        kind = type(value)
        full = every and first_of_name
        for bad in _WRONG_TYPES.get(kind, [])[: None if full else 1]:
            yield f"#{i} {arg}={bad!r}", _setter(i, arg, bad)
        for odd in _RIGHT_TYPE_UNOFFERED.get(kind, [])[: None if full else 1]:
            yield f"#{i} {arg}={odd!r}", _setter(i, arg, odd)
        if full:
            yield f"#{i} without {arg}", _dropper(i, arg)
    first = data["actions"][0]
    yield "#0 extra argument", _setter(0, "zz_extra", 0)
    yield "#0 unknown kind", _setter(0, "kind", "Teleport")
    same_args = [a for a in data["actions"][1:] if sorted(a) == sorted(first) and a["kind"] != first["kind"]]
    if same_args:  # another kind with the same argument names: well-formed, maybe not offered in the initial state
        yield f"#0 kind {same_args[0]['kind']}", _setter(0, "kind", same_args[0]["kind"])


def _setter(i: int, arg: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        data["actions"][i][arg] = value

    return edit


def _dropper(i: int, arg: str) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        del data["actions"][i][arg]

    return edit


def test_every_system_records_a_replayable_trace(traces: dict[str, Path]) -> None:
    """The unedited traces replay (exit 0: the kafka variant holds) and carry every system's action kinds."""
    assert {k.split("/")[0] for k in traces} == set(SYSTEMS)
    assert "groups/eventually" in traces  # rebalance_completes: the liveness replay path is fed too
    for key, path in traces.items():
        code, summary, err = _replay(path)
        assert code == 0 and summary is not None and "is not enabled" not in summary["reason"], (key, err, summary)
        kinds = {a["kind"] for a in json.loads(path.read_text())["actions"]}
        assert len(kinds) >= 4, (key, kinds)


@pytest.mark.parametrize("system", list(SYSTEMS))
def test_hostile_action_fields_exit_2_or_stop_where_not_offered(
    system: str, traces: dict[str, Path], tmp_path: Path
) -> None:
    """Every argument of every recorded action kind, edited to a value of another type (exit 2) or to one of the
    right type the state does not offer (exit 2, or refuted at that very step), on the safety and liveness
    traces of the system."""
    fed, failures = 0, []
    for key in (f"{system}/always", f"{system}/eventually"):
        if key not in traces:
            continue
        original = json.loads(traces[key].read_text(encoding="utf-8"))
        for label, edit in _edits(original, every=key.endswith("/always")):
            edited = json.loads(json.dumps(original))
            edit(edited)
            try:
                _check(edited, tmp_path / "edited.trace.json")
            except AssertionError as exc:
                failures.append(f"{key} {label}: {str(exc)[:300]}")
            fed += 1
    assert not failures, f"{len(failures)} of {fed} edits:\n" + "\n".join(failures)
    assert fed >= 20, fed


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**31) | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["@", "src", "body", "x"]), inner,
                                                               max_size=2),
    max_leaves=4,
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_fuzz_action_fields_of_every_system(traces: dict[str, Path], tmp_path_factory: pytest.TempPathFactory,
                                            data: st.DataObject) -> None:
    """Any JSON value in any action argument of any system's trace (a message body's fields included): exit 2,
    or a replay that never takes an action the model does not offer."""
    key = data.draw(st.sampled_from(sorted(traces)))
    trace = json.loads(traces[key].read_text(encoding="utf-8"))
    action = data.draw(st.sampled_from(trace["actions"]))
    target = action
    message = action.get("message")
    if isinstance(message, dict) and isinstance(message.get("body"), dict) and data.draw(st.booleans()):
        target = message["body"]
    arg = data.draw(st.sampled_from(sorted(k for k in target if k not in ("kind", "@")) or ["zz_extra"]))
    target[arg] = data.draw(_json_values)
    _check(trace, tmp_path_factory.mktemp("fuzz") / "t.trace.json")
