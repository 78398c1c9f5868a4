"""Connect fidelity (issue 14): a FAILED task stays failed across rebalances until a restart request.

``DistributedHerder.startWork`` (Kafka 3.9) starts only the assigned tasks that
are not in the running assignment; a failed ``WorkerTask`` is still in it, so a
rebalance that keeps the task on its worker does not restart it.  Only
``restartTask`` (``POST /connectors/{c}/tasks/{n}/restart``) does.
"""

from __future__ import annotations

from dataclasses import replace

from keos.model.connect.records import ConnectState
from keos.model.connect.worker import TaskPhase
from keos.model.interface import Action
from keos.model.systems.connect import ConnectSystem
from keos.model.variants import VARIANTS, Variant
from keos.scenarios import build_model, parse_scenario


def _model(flags_override: dict[str, bool] | None = None) -> ConnectSystem:
    table = {"workers": ["enabled", "enabled"], "leader": 0, "task_counts": [1], "owners": [[0]], "records": 1}
    sc = parse_scenario({"name": "t", "model": "connect", "connect": table, "faults": {"crash": 1, "total": 1}})
    variant: Variant | str = "kafka"
    if flags_override:
        variant = Variant("eager_restart", "test", replace(VARIANTS["kafka"].flags, **flags_override))
    m = build_model(sc, variant)
    assert isinstance(m, ConnectSystem)
    return m


def _failed_then_rebalanced(m: ConnectSystem) -> ConnectState:
    s = m.init_states()[0]
    step = m.step(s, Action("StartTask", (0, 0)))
    assert step is not None
    s = step.state
    inst = s.workers[0].instance(0)
    assert inst is not None
    # The task fails (e.g. its producer is fenced, or the connector throws): WorkerTask state FAILED.
    s = s._replace(workers=(s.workers[0].with_instance(inst._replace(phase=TaskPhase.FAILED)), *s.workers[1:]))
    step = m.step(s._replace(rebalance_pending=True), Action("Rebalance", ()))
    assert step is not None
    return step.state


def test_rebalance_keeps_a_failed_task_failed_until_a_restart_request() -> None:
    m = _model()
    s = _failed_then_rebalanced(m)
    inst = s.workers[0].instance(0)
    assert inst is not None and inst.phase == TaskPhase.FAILED
    kinds = {(a.kind, a.args) for a in m.actions(s)}
    assert ("StartTask", (0, 0)) not in kinds
    assert ("RestartFailedTask", (0, 0)) in kinds
    step = m.step(s, Action("RestartFailedTask", (0, 0)))
    assert step is not None and step.events[0] == "failed_task_restart_requested"
    restarted = step.state.workers[0].instance(0)
    assert restarted is not None and restarted.phase == TaskPhase.FENCING_REQUESTED
    assert step.state.faults_used == s.faults_used  # a protocol step, not a fault


def test_eager_rebalance_restarts_a_failed_task() -> None:
    m = _model({"connect_failed_task_stays_failed": False})
    s = _failed_then_rebalanced(m)
    assert s.workers[0].instance(0) is None
    assert Action("StartTask", (0, 0)) in m.actions(s)


def test_restart_request_is_only_for_failed_tasks() -> None:
    m = _model()
    s = m.init_states()[0]
    step = m.step(s, Action("StartTask", (0, 0)))
    assert step is not None
    assert m.step(step.state, Action("RestartFailedTask", (0, 0))) is None
