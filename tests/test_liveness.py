"""Eventually (liveness) properties in the engines: stuck states, fair livelocks, replay, reports.

The models here are tiny hand-written graphs (``GraphModel``: a state is a
name, each state lists its actions and where they lead), each built to have
exactly one liveness situation: a stuck state, a weakly fair livelock, an
unfair cycle (a timeout always enabled and never taken), a cycle that needs a
fault, a model that contradicts itself.  Faults are the action kinds in
``faults``, classified through :class:`keos.model.interface.FaultHooks`
(or, with ``hooks=False``, only by the ``fault:`` events their steps emit).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

import pytest

from keos.checker.explore.liveness import strongly_connected
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.checker.trace import load_trace, make_trace, replay, replay_actions
from keos.model.interface import Action, Expectation, Model, ModelError, Property, Step

Edges = dict[str, list[tuple[str, str]]]  # state -> [(action kind, next state)]


class GraphModel:
    """A model given as a labelled graph; ``goal`` states are where the eventually property holds."""

    def __init__(
        self,
        name: str,
        edges: Edges,
        goal: set[str],
        faults: set[str] = frozenset(),  # type: ignore[assignment]
        hooks: bool = True,
        refuse: set[tuple[str, str]] = frozenset(),  # type: ignore[assignment]
        raises: set[tuple[str, str]] = frozenset(),  # type: ignore[assignment]
    ) -> None:
        self.name = name
        self.edges = edges
        self.goal = goal
        self.faults = set(faults)
        self.refuse = set(refuse)
        self.raises = set(raises)
        if hooks:
            self.fault_kind = lambda action: action.kind.lower() if action.kind in self.faults else None
            self.fault_kinds = lambda: tuple(sorted(k.lower() for k in self.faults))

    def init_states(self) -> Sequence[str]:
        return ["init"]

    def actions(self, state: str) -> Sequence[Action]:
        return [Action(kind) for kind, _ in self.edges.get(state, [])]

    def step(self, state: str, action: Action) -> Step | None:
        if (state, action.kind) in self.raises:
            raise RuntimeError(f"{action.kind} cannot be taken in {state}")
        if (state, action.kind) in self.refuse:
            return None
        for kind, nxt in self.edges.get(state, []):
            if kind == action.kind and not action.args:
                events = (f"fault:{kind.lower()}",) if kind in self.faults else ()
                return Step(nxt, events)
        return None

    def properties(self) -> Sequence[Property]:
        return [
            Property(
                "never_broken",
                Expectation.ALWAYS,
                "no state is named broken",
                "test",
                "a broken state",
                predicate=lambda s: s != "broken",
            ),
            Property(
                "eventually_done",
                Expectation.EVENTUALLY,
                "the run reaches a goal state again and again once faults stop",
                "test",
                "stuck states and fair livelocks",
                predicate=lambda s: s in self.goal,
                fairness=("timeouts fire", "faults stop"),
            ),
        ]

    def within_bounds(self, state: str) -> bool:
        return True

    def fingerprint(self, state: str) -> str:
        return hashlib.blake2b(state.encode(), digest_size=8).hexdigest()

    def action_to_json(self, action: Action) -> dict[str, Any]:
        return {"kind": action.kind}

    def action_from_json(self, data: Any) -> Action:
        if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
            raise ModelError(f"bad action {data!r}")
        return Action(data["kind"])

    def format_action(self, action: Action) -> str:
        return action.kind

    def state_to_json(self, state: str) -> dict[str, Any]:
        return {"state": state}

    def describe(self) -> dict[str, Any]:
        return {"scenario": self.name}


def stuck_model(hooks: bool = True) -> GraphModel:
    """(i) A produce request dropped by a fault: only faults are enabled afterwards, the record is never acked."""
    return GraphModel(
        "stuck",
        {
            "init": [("Send", "sent")],
            "sent": [("Deliver", "acked"), ("Drop", "lost")],
            "acked": [("Send", "sent")],
            "lost": [("Restart", "lost")],
        },
        goal={"acked"},
        faults={"Drop", "Restart"},
        hooks=hooks,
    )


def livelock_model() -> GraphModel:
    """(ii) A retry loop: Retry and Reject alternate forever; the timeout fires on it but leads back in."""
    return GraphModel(
        "livelock",
        {
            "init": [("Send", "a")],
            "a": [("Retry", "b"), ("Timeout", "b")],
            "b": [("Reject", "a"), ("Timeout", "a")],
        },
        goal={"done"},
    )


def unfair_model() -> GraphModel:
    """(iii) The same loop, but the always-enabled timeout ends it: the cycle is not weakly fair."""
    return GraphModel(
        "unfair",
        {
            "init": [("Send", "a")],
            "a": [("Retry", "b"), ("Timeout", "done")],
            "b": [("Reject", "a"), ("Timeout", "done")],
            "done": [],
        },
        goal={"done"},
    )


def fault_cycle_model() -> GraphModel:
    """(iv) A cycle that needs a fault (Drop) to close: faults stop, so it is not a livelock."""
    return GraphModel(
        "fault_cycle",
        {
            "init": [("Send", "a")],
            "a": [("Resend", "b")],
            "b": [("Drop", "a"), ("Deliver", "done")],
            "done": [],
        },
        goal={"done"},
        faults={"Drop"},
    )


def inconsistent_model(mode: str) -> GraphModel:
    """(v) ``actions`` lists Deliver in ``sent`` but ``step`` refuses it (``refuse``) or raises (``raise``)."""
    m = stuck_model()
    if mode == "refuse":
        m.refuse = {("sent", "Deliver")}
    else:
        m.raises = {("sent", "Deliver")}
    return m


def run(model: Model) -> Any:
    result, _ = explore(model, model.name, "kafka", ExploreOptions())
    return result


def verdict(result: Any, name: str = "eventually_done") -> Any:
    return next(p for p in result.properties if p.name == name)


def as_dict(model: Model, trace: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(trace.to_json(model)))
    return data


# -- explore ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("hooks", [True, False])
def test_explore_finds_the_stuck_state(hooks: bool) -> None:
    model = stuck_model(hooks)
    result = run(model)
    p = verdict(result)
    assert p.verdict is Verdict.VIOLATED
    assert p.trace.liveness == "stuck" and p.trace.loop_start is None
    assert [a.kind for a in p.trace.actions] == ["Send", "Drop"]
    assert p.trace.fairness == ("timeouts fire", "faults stop")
    assert p.detail.startswith("stuck:")
    assert verdict(result, "never_broken").verdict is Verdict.HOLDS
    assert replay(model, as_dict(model, p.trace)).confirmed


def test_explore_finds_the_fair_livelock_and_replay_confirms_the_lasso() -> None:
    model = livelock_model()
    result = run(model)
    p = verdict(result)
    assert p.verdict is Verdict.VIOLATED
    trace = p.trace
    assert trace.liveness == "livelock" and trace.loop_start == 1
    assert [a.kind for a in trace.actions[:1]] == ["Send"]
    cycle = [a.kind for a in trace.cycle]
    # A weakly fair cycle: Timeout (enabled in a and b) is on it, and it returns to a.
    assert "Timeout" in cycle and len(cycle) >= 2
    data = as_dict(model, trace)
    assert data["loop_start"] == 1 and data["liveness"] == "livelock" and data["schema_version"] == 2
    r = replay(model, data)
    assert r.confirmed, r.reason
    assert r.violated_at == 1


def test_replay_refutes_edited_lassos() -> None:
    model = livelock_model()
    data = as_dict(model, verdict(run(model)).trace)
    # The unfair cycle a -Retry-> b -Reject-> a: Timeout is enabled throughout and never taken.
    unfair = dict(data, actions=[{"kind": k} for k in ("Send", "Retry", "Reject")], loop_start=1)
    r = replay(model, unfair)
    assert not r.confirmed and "not weakly fair" in r.reason and "Timeout" in r.reason
    # A cycle that does not return where it began.
    open_end = dict(data, actions=[{"kind": k} for k in ("Send", "Retry", "Timeout", "Retry")], loop_start=1)
    r = replay(model, open_end)
    assert not r.confirmed and "does not return" in r.reason
    # The same actions without loop_start claim a stuck end, which it is not.
    r = replay(model, dict(data, loop_start=None))
    assert not r.confirmed and "not stuck" in r.reason


def test_unfair_cycle_is_not_reported() -> None:
    result = run(unfair_model())
    p = verdict(result)
    assert p.verdict is Verdict.HOLDS
    assert result.stats["sccs"] == 1 and result.stats["fair_sccs"] == 0


def test_cycle_through_a_fault_is_not_reported() -> None:
    model = fault_cycle_model()
    result = run(model)
    assert verdict(result).verdict is Verdict.HOLDS
    assert result.stats["sccs"] == 0
    # And replay refuses the lasso that closes the cycle with the fault.
    prop = next(p for p in model.properties() if p.name == "eventually_done")
    actions = [Action("Send"), Action("Resend"), Action("Drop")]
    r = replay_actions(model, actions, prop, loop_start=1)
    assert not r.confirmed and "fault" in r.reason
    with pytest.raises(AssertionError, match="does not replay"):
        make_trace(model, prop, actions, "test", "fault_cycle", "kafka", loop_start=1)


@pytest.mark.parametrize("mode", ["refuse", "raise"])
def test_model_inconsistency_is_a_disagreement_not_a_crash(mode: str) -> None:
    model = inconsistent_model(mode)
    result = run(model)
    found = result.stats["engine_disagreement"]
    assert len(found) == 1 and "Deliver" in found[0] and "after 1 step(s): Send" in found[0]
    assert ("refused" if mode == "refuse" else "RuntimeError") in found[0]
    assert [a["kind"] for a in result.stats["disagreement_trace"]["actions"]] == ["Send", "Deliver"]
    assert all(p.verdict is Verdict.UNTESTED for p in result.properties)
    assert not result.complete


def test_other_engines_do_not_let_an_eventually_property_hold() -> None:
    from keos.checker.results import judge

    model = livelock_model()
    out = judge(list(model.properties()), {}, set())
    p = next(r for r in out if r.name == "eventually_done")
    assert p.verdict is Verdict.UNTESTED and "liveness" in p.detail


def test_version_1_traces_still_load(tmp_path: Any) -> None:
    model = stuck_model()
    prop = next(p for p in model.properties() if p.name == "never_broken")
    broken = GraphModel("v1", {"init": [("Break", "broken")]}, goal=set())
    trace = make_trace(broken, prop, [Action("Break")], "explore", "v1", "kafka")
    data = as_dict(broken, trace)
    for key in ("liveness", "loop_start", "fairness"):
        data.pop(key)
    data["schema_version"] = 1
    path = tmp_path / "v1.trace.json"
    path.write_text(json.dumps(data))
    loaded = load_trace(path)
    assert replay(broken, loaded).confirmed
    path.write_text(json.dumps(dict(data, schema_version=2, loop_start=7)))
    with pytest.raises(ModelError, match="loop_start"):
        load_trace(path)


def test_tarjan_on_a_long_chain_needs_no_recursion() -> None:
    n = 50_000
    succ = [[i + 1] for i in range(n)] + [[0]]
    comps = strongly_connected(list(range(n + 1)), succ)
    assert len(comps) == 1 and len(comps[0]) == n + 1


def test_tarjan_agrees_with_networkx_on_random_graphs() -> None:
    import random

    import networkx as nx

    rng = random.Random(7)
    for _ in range(30):
        n = rng.randrange(1, 40)
        succ = [[rng.randrange(n) for _ in range(rng.randrange(3))] for _ in range(n)]
        ours = sorted(sorted(c) for c in strongly_connected(list(range(n)), succ))
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_edges_from((v, w) for v in range(n) for w in succ[v])
        assert ours == sorted(sorted(c) for c in nx.strongly_connected_components(g))


# -- random engines: the fair quiescence phase -----------------------------------------------------


def test_hypothesis_finds_the_stuck_state() -> None:
    from keos.checker.stateful.machine import run_hypothesis

    model = stuck_model()
    result = run_hypothesis(model, "stuck", "kafka", seed=3, max_examples=20, step_count=4)
    p = verdict(result)
    assert p.verdict is Verdict.VIOLATED and p.trace.liveness == "stuck"
    assert p.trace.actions[-1].kind in ("Drop", "Restart")
    assert replay(model, as_dict(model, p.trace)).confirmed


def test_hypothesis_finds_the_livelock_as_a_lasso() -> None:
    from keos.checker.stateful.machine import run_hypothesis

    model = livelock_model()
    result = run_hypothesis(model, "livelock", "kafka", seed=0, max_examples=10, step_count=3)
    p = verdict(result)
    assert p.verdict is Verdict.VIOLATED and p.trace.liveness == "livelock" and p.trace.loop_start is not None
    assert replay(model, as_dict(model, p.trace)).confirmed


def test_hypothesis_holds_on_the_unfair_cycle() -> None:
    from keos.checker.stateful.machine import run_hypothesis

    result = run_hypothesis(unfair_model(), "unfair", "kafka", seed=0, max_examples=30, step_count=10)
    assert verdict(result).verdict is Verdict.HOLDS
    assert result.stats["suspected_livelock_runs"] == {}


def test_sweep_walks_find_the_stuck_state_and_the_livelock() -> None:
    from keos.checker.sweep.simulate import investigate, random_walk

    model = stuck_model()
    walks = [random_walk(model, seed, steps=6) for seed in range(20)]
    stuck = [w for w in walks if w.violation == "eventually_done"]
    assert stuck and all(w.liveness == "stuck" for w in stuck)
    # Walks whose record was delivered settle in a goal state once faults stop: no violation.
    assert any(w.violation is None for w in walks)
    finding = investigate(model, stuck[0], "stuck", "kafka")
    assert finding is not None and finding.trace.liveness == "stuck"
    assert replay(model, as_dict(model, finding.trace)).confirmed

    loop = livelock_model()
    walk = random_walk(loop, 1, steps=3)
    assert walk.violation == "eventually_done" and walk.liveness == "livelock" and walk.loop_start is not None
    finding = investigate(loop, walk, "livelock", "kafka")
    assert finding is not None and replay(loop, as_dict(loop, finding.trace)).confirmed


def test_sweep_walk_that_never_settles_is_a_suspected_livelock() -> None:
    from keos.checker.sweep.simulate import random_walk

    # A counter that only grows: no state repeats, so no lasso; the walk is suspected, not a violation.
    n = 400
    edges = {"init": [("Tick", "0")]} | {str(i): [("Tick", str(i + 1))] for i in range(n)}
    model = GraphModel("counter", edges, goal=set())
    walk = random_walk(model, 0, steps=5, settle_factor=10)
    assert walk.violation is None and walk.suspected == ("eventually_done",)
    assert walk.settle_steps == 50 and walk.steps == 55


# -- reports: a lasso is drawn as a cycle, a stuck end is said ------------------------------------


def test_renderers_draw_the_lasso(tmp_path: Any) -> None:
    from rich.console import Console

    from keos.reports.html import write_html
    from keos.reports.junit import write_junit
    from keos.reports.trace_text import plain_text, render_trace, sequence_diagram

    model = livelock_model()
    result = run(model)
    trace = verdict(result).trace
    data = as_dict(model, trace)
    n = len(trace.actions)

    text = plain_text(data)
    lines = text.splitlines()
    opens = next(i for i, ln in enumerate(lines) if "↻ cycle: steps 2–" in ln)
    closes = next(i for i, ln in enumerate(lines) if "↺ back to the state before step 2" in ln)
    step2 = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("2 "))
    last = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith(f"{n} "))
    assert opens < step2 <= last < closes
    assert f"livelock: steps 2–{n} repeat forever" in text
    assert "⚡" not in text  # the cycle's Timeout is a protocol step (no fault: event), not drawn as a fault
    assert re.search(r"\nfairness +timeouts fire; faults stop\n", text)
    ascii_text = plain_text(data, ascii=True)
    assert "@> cycle: steps 2-" in ascii_text and ascii_text.isascii()

    console = Console(record=True, width=160)
    render_trace(console, data)
    shown = console.export_text()
    assert "↻ cycle: steps 2–" in shown and "↺ back to the state before step 2" in shown

    mermaid = sequence_diagram(data).splitlines()
    loop = next(i for i, ln in enumerate(mermaid) if ln.strip().startswith("loop ↻ cycle"))
    end = next(i for i, ln in enumerate(mermaid) if ln.strip() == "end")
    assert loop < end and sum(1 for ln in mermaid[loop + 1 : end] if ln.strip().startswith("Note over")) == n - 1

    html = write_html(tmp_path / "r.html", [result]).read_text()
    assert 'class="cycle"' in html and "repeat forever" in html and "fairness assumed" in html

    xml = write_junit(tmp_path / "j.xml", [result]).read_text()
    assert 'type="livelock"' in xml and "eventually_done violated (livelock): livelock: steps 2-" in xml.replace(
        "–", "-"
    )


def test_renderers_say_stuck_and_the_summary_lists_eventually_properties() -> None:
    from rich.console import Console

    from keos.reports.terminal import render_summary
    from keos.reports.trace_text import plain_text

    model = stuck_model()
    result = run(model)
    data = as_dict(model, verdict(result).trace)
    text = plain_text(data)
    assert "eventually_done violated stuck after step 2 (no protocol step enabled)" in text
    assert "↻" not in text
    console = Console(record=True, width=200)
    render_summary(console, [result])
    assert "eventually_done" in console.export_text()


# -- the real models, with a temporary eventually property of this test's own ---------------------

#: Not one of the models' invariants: "no request or response stays in flight for ever once faults stop".
NETWORK_DRAINS = Property(
    "test_network_drains",
    Expectation.EVENTUALLY,
    "no request or response stays in flight for ever once faults stop",
    "tests/test_liveness.py",
    "a request nobody answers, a retry loop",
    predicate=lambda s: not getattr(s, "network", ()),
    fairness=("faults stop", "every enabled protocol step is eventually taken"),
)


def with_drains(build: Any) -> Any:
    """``build_model`` whose models also check :data:`NETWORK_DRAINS` (same class, one more property)."""

    def build_model(scenario: Any, variant: str | None = None) -> Any:
        model = build(scenario, variant) if variant is not None else build(scenario)
        base = type(model)
        model.__class__ = type(base.__name__, (base,), {"properties": lambda self: [*base.properties(self),
                                                                                    NETWORK_DRAINS]})
        return model

    return build_model


def test_check_on_a_real_scenario_judges_the_eventually_property(monkeypatch: Any, tmp_path: Any, capsys: Any) -> None:
    import keos.checker.api as api
    import keos.checker.explore.engine as explore_engine
    from keos.checker.cli.main import main

    monkeypatch.setattr(explore_engine, "build_model", with_drains(explore_engine.build_model))
    monkeypatch.setattr(api, "build_model", with_drains(api.build_model))
    code = main(["check", "--scenario", "txn_kafka_17754_delayed_endtxn", "--out", str(tmp_path), "--json"])
    out = json.loads(capsys.readouterr().out)
    run_ = out["runs"][0]
    prop = next(p for p in run_["properties"] if p["name"] == "test_network_drains")
    assert code == 0 and prop["verdict"] == "holds" and prop["expectation"] == "eventually"
    # The search did look: the recorded graph covers every state, and its retry cycles were judged unfair.
    stats = run_["stats"]
    assert stats["liveness_states"] == stats["distinct_states"] and stats["fair_sccs"] == 0


def test_list_shows_fairness_and_bmc_leaves_eventually_untested(monkeypatch: Any, capsys: Any) -> None:
    import keos.checker.cli.main as cli
    import keos.scenarios as scenarios
    from keos.checker.bmc.engine import NOT_COVERED_LIVENESS, run_bmc
    from keos.checker.engines import EngineOptions

    monkeypatch.setattr(cli, "build_model", with_drains(cli.build_model))
    assert cli.main(["list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    entry = next(p for p in listed["invariants"] if p["name"] == "test_network_drains")
    assert entry["expectation"] == "eventually" and entry["fairness"] == list(NETWORK_DRAINS.fairness)
    assert cli.main(["list"]) == 0
    assert "assuming:" in capsys.readouterr().out  # the table wraps the assumptions themselves

    monkeypatch.setattr(scenarios, "build_model", with_drains(scenarios.build_model))
    result = run_bmc(scenarios.resolve_scenario("idempotence_retry"), "kafka", EngineOptions(max_depth=2))
    p = next(r for r in result.properties if r.name == "test_network_drains")
    assert p.verdict is Verdict.UNTESTED and p.detail == NOT_COVERED_LIVENESS


def test_keos_replay_confirms_a_stuck_trace_and_refutes_an_invented_cycle(
    monkeypatch: Any, tmp_path: Any, capsys: Any
) -> None:
    """End to end on a real scenario: a property that never holds is violated by the shortest terminal run."""
    import keos.checker.api as api
    import keos.checker.explore.engine as explore_engine
    from keos.checker.cli.main import main

    never = Property("test_never", Expectation.EVENTUALLY, "never holds", "tests", "every terminal state",
                     predicate=lambda s: False)

    def build(real: Any) -> Any:
        def build_model(scenario: Any, variant: str | None = None) -> Any:
            model = real(scenario, variant) if variant is not None else real(scenario)
            base = type(model)
            model.__class__ = type(base.__name__, (base,), {"properties": lambda self: [*base.properties(self), never]})
            return model

        return build_model

    monkeypatch.setattr(explore_engine, "build_model", build(explore_engine.build_model))
    monkeypatch.setattr(api, "build_model", build(api.build_model))
    code = main(["check", "--scenario", "txn_kafka_17754_delayed_endtxn", "--out", str(tmp_path), "--json"])
    assert code == 1
    capsys.readouterr()
    path = tmp_path / "explore" / "txn_kafka_17754_delayed_endtxn" / "kafka" / "test_never.trace.json"
    data = json.loads(path.read_text())
    assert data["liveness"] == "stuck" and data["loop_start"] is None
    assert main(["replay", str(path), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["confirmed"] and summary["liveness"] == "stuck"
    # Claim that the run's last step loops back to where it started: replay refutes it.
    path.write_text(json.dumps(dict(data, loop_start=len(data["actions"]) - 1, liveness="livelock")))
    assert main(["replay", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert not summary["confirmed"] and "does not return" in summary["reason"]


def test_sweep_rows_carry_the_liveness_shape(monkeypatch: Any) -> None:
    import pyarrow as pa

    import keos.checker.sweep.runs as runs

    model = livelock_model()
    monkeypatch.setattr(runs, "_model", lambda ref, toml, variant: (model, ()))
    batch = pa.RecordBatch.from_pylist(
        [
            {"run": i, "run_id": f"livelock/kafka/none/{i}", "scenario": "livelock", "scenario_toml": "",
             "variant": "kafka", "profile": "none", "seed": i, "max_steps": 3, "fault_weights": []}
            for i in range(3)
        ],
        schema=runs.DESCRIPTOR_SCHEMA,
    )
    rows = runs.execute_batch(batch).to_pylist()
    assert all(r["violation"] == "eventually_done" and r["liveness"] == "livelock" for r in rows)
    for r in rows:
        actions = [model.action_from_json(a) for a in json.loads(r["trace_actions"])]
        prop = next(p for p in model.properties() if p.name == r["violation"])
        assert r["loop_start"] is not None and replay_actions(model, actions, prop, r["loop_start"]).confirmed


def test_a_model_whose_actions_raise_is_a_disagreement() -> None:
    model = stuck_model()
    real = model.actions

    def actions(state: str) -> Sequence[Action]:
        if state == "sent":
            raise KeyError(state)
        return real(state)

    model.actions = actions  # type: ignore[method-assign]
    result = run(model)
    (found,) = result.stats["engine_disagreement"]
    assert found.startswith("actions() raised KeyError") and "after 1 step(s): Send" in found
    assert all(p.verdict is Verdict.UNTESTED for p in result.properties)


def test_a_trace_whose_json_reads_back_as_another_action_is_a_keos_bug() -> None:
    """make_trace confirms the trace *file*: each action written as JSON and read back is the action replayed."""
    model = stuck_model()
    prop = next(p for p in model.properties() if p.name == "never_broken")

    class Lossy(GraphModel):
        def action_from_json(self, data: Any) -> Action:
            return Action("Fix" if data.get("kind") == "Break" else data["kind"])

    broken = Lossy("lossy", {"init": [("Break", "broken")]}, goal=set())
    with pytest.raises(AssertionError, match="reads back from its JSON as Fix"):
        make_trace(broken, prop, [Action("Break")], "explore", "lossy", "kafka")
    sound = GraphModel("sound", {"init": [("Break", "broken")]}, goal=set())
    assert make_trace(sound, prop, [Action("Break")], "explore", "sound", "kafka").actions == [Action("Break")]
