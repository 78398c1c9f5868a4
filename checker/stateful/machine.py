"""Hypothesis stateful testing driven by the model itself.

The ``RuleBasedStateMachine`` is generated from a :class:`model.interface.Model`:
one ``step`` rule draws one of the actions the model says are enabled (the
model's step function is the only copy of the protocol rules; Hypothesis only
chooses), and an ``idle`` rule covers terminal states.  A rule per action kind
reads better but defeats Hypothesis's swarm testing here: a run that happens
to switch off ``Send`` or ``Deliver`` makes no progress (measured: about five
steps per run instead of runs to the terminal state).  After every step the
ALWAYS properties are checked.

Hypothesis shrinks a failing run (it deletes and simplifies the choices that
picked actions); the final, shrunk run's action list is captured, minimised
once more by delta debugging on the model (shrinking works on choices, so a
removed step can shift later choices), and replayed into the common trace
format.  Runs are reproducible: the seed is passed to ``hypothesis.seed`` and
the example database is off.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from typing import Any

import hypothesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from keos.checker.budget import Budget
from keos.checker.engines import EngineOptions, register
from keos.checker.minimize import minimize
from keos.checker.results import EngineResult, judge
from keos.checker.trace import Trace, make_trace
from keos.model.interface import Action, Expectation, Model, Property

__all__ = ["InvariantViolation", "machine_for", "run_hypothesis"]


class InvariantViolation(AssertionError):
    """Raised inside the state machine when an ALWAYS property fails."""


class _OutOfBudget(BaseException):
    """Raised at the start of a run once the time or memory budget is spent.

    A ``BaseException`` (like ``KeyboardInterrupt``), so Hypothesis does not take it for a failure
    to shrink: it ends the test at once.
    """


class _Capture:
    """What the runs observed: the last failing run, events, reached properties."""

    def __init__(self, budget: Budget | None = None) -> None:
        self.budget = budget
        self.limit: tuple[str, str] | None = None
        self.failure: tuple[Property, list[Action]] | None = None
        self.events: Counter[str] = Counter()
        self.reached: set[str] = set()
        self.steps = 0
        self.runs = 0


def machine_for(model: Model, capture: _Capture) -> type[RuleBasedStateMachine]:
    """Build a state machine class that takes the model's enabled actions."""
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    state_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
    event_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]

    def _setup(self: Any) -> None:
        RuleBasedStateMachine.__init__(self)
        if capture.budget is not None:
            capture.limit = capture.budget.exceeded()
            if capture.limit is not None:
                raise _OutOfBudget(capture.limit[1])
        self.state = model.init_states()[0]
        self.enabled = list(model.actions(self.state))
        self.enabled_kinds = {a.kind for a in self.enabled}
        self.actions_taken = []
        capture.runs += 1

    def _take(self: Any, action: Action) -> None:
        step = model.step(self.state, action)
        assert step is not None, f"model listed {action} as enabled but step() refused it"
        self.actions_taken.append(action)
        self.state = step.state
        self.enabled = list(model.actions(self.state))
        self.enabled_kinds = {a.kind for a in self.enabled}
        capture.steps += 1
        for ev in step.events:
            capture.events[ev] += 1
            for p in event_sometimes:
                if p.name not in capture.reached and p.matches_event(ev):
                    capture.reached.add(p.name)

    def _check(self: Any) -> None:
        for p in state_sometimes:
            if p.name not in capture.reached and p.holds(self.state):
                capture.reached.add(p.name)
        for p in always:
            if not p.holds(self.state):
                capture.failure = (p, list(self.actions_taken))
                raise InvariantViolation(f"{p.name}: {p.explain(self.state) if p.explain else 'violated'}")

    def quiescent(self: Any) -> bool:
        return not self.enabled

    def idle(self: Any) -> None:
        """The model is in a terminal state: nothing is enabled, nothing changes."""

    namespace: dict[str, Any] = {
        "__init__": _setup,
        "_take": _take,
        "model_invariants": invariant()(_check),
        "idle": rule()(precondition(quiescent)(idle)),
    }

    def any_enabled(self: Any) -> bool:
        return bool(self.enabled)

    def step(self: Any, data: Any) -> None:
        self._take(data.draw(st.sampled_from(self.enabled), label="action"))

    namespace["step"] = rule(data=st.data())(precondition(any_enabled)(step))

    return type(f"{model.name.title()}Machine", (RuleBasedStateMachine,), namespace)


def run_hypothesis(
    model: Model,
    scenario: str,
    variant: str,
    seed: int = 0,
    max_examples: int = 300,
    step_count: int = 60,
    permitted: tuple[str, ...] = (),
    time_budget_s: float = 0.0,
    max_memory_mb: int = 0,
) -> EngineResult:
    """Run the generated state machine; convert a shrunk failure into a trace.

    With a time or memory budget, a run starts only while budget remains; once it is spent the
    result is partial (``stats["limit_reached"]``), keeping a failure already found (shrunk as far
    as the budget allowed).
    """
    budget = Budget(time_budget_s, max_memory_mb) if time_budget_s or max_memory_mb else None
    capture = _Capture(budget)
    machine = machine_for(model, capture)
    config = settings(
        max_examples=max_examples,
        stateful_step_count=step_count,
        deadline=None,
        database=None,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        verbosity=hypothesis.Verbosity.quiet,
    )

    def factory() -> RuleBasedStateMachine:
        return machine()

    seeded = hypothesis.seed(seed)(factory)
    start = time.perf_counter()
    traces: dict[str, Trace] = {}
    with contextlib.suppress(InvariantViolation, _OutOfBudget):
        run_state_machine_as_test(seeded, settings=config)  # type: ignore[arg-type]  # a factory is accepted
    if capture.failure is not None:
        prop, actions = capture.failure
        shrunk = minimize(model, actions, prop)
        traces[prop.name] = make_trace(
            model, prop, shrunk, "hypothesis", scenario, variant, seed=seed, permitted=prop.name in permitted
        )
    elapsed = time.perf_counter() - start
    stats: dict[str, Any] = {
        "runs": capture.runs,
        "steps": capture.steps,
        "elapsed_s": round(elapsed, 4),
        "steps_per_s": round(capture.steps / elapsed) if elapsed > 0 else None,
        "max_examples": max_examples,
        "step_count": step_count,
    }
    if capture.limit is not None:
        stats["limit_reached"], stats["limit_detail"] = capture.limit
    return EngineResult(
        engine="hypothesis",
        scenario=scenario,
        variant=variant,
        properties=judge(list(model.properties()), traces, capture.reached, permitted),
        stats=stats,
        coverage=dict(capture.events),
        complete=False,
        seed=seed,
    )


@register("hypothesis", "Hypothesis RuleBasedStateMachine over the model's actions, with shrinking")
def _engine(scenario: Any, variant: str, options: EngineOptions) -> EngineResult:
    from keos.scenarios import build_model

    model = build_model(scenario, variant)
    return run_hypothesis(
        model,
        scenario.name,
        variant,
        seed=options.seed,
        max_examples=options.examples or 300,
        step_count=options.max_depth or 60,
        permitted=scenario.permitted,
        time_budget_s=options.time_budget_s,
        max_memory_mb=options.max_memory_mb,
    )
