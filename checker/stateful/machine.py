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

Eventually (liveness) properties: when the model has any, every run ends
(``teardown``) with the fair quiescence phase of :func:`checker.liveness.settle`
-- protocol steps only, timeouts included, least recently taken first, for at
most ``SETTLE_FACTOR`` times the run's step count.  A run that settles where
an eventually property is false has found a stuck state; one that goes round
a weakly fair cycle with it false, a livelock (a lasso trace).  Both fail the
run, so Hypothesis shrinks the fault phase before them; the trace is kept as
replayed (ddmin shrinks toward a first bad state, which neither shape has).
Runs that do not settle within the bound are counted in
``stats["suspected_livelock_runs"]`` and leave the property untested.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import hypothesis
import hypothesis.errors
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from keos.checker.budget import Budget
from keos.checker.engines import EngineOptions, register
from keos.checker.liveness import settle
from keos.checker.minimize import minimize
from keos.checker.results import EngineResult, Verdict, judge
from keos.checker.trace import Trace, make_trace
from keos.model.interface import Action, Expectation, Model, Property

__all__ = ["SETTLE_FACTOR", "InvariantViolation", "machine_for", "run_hypothesis"]

#: The quiescence phase may take this many times the run's step count before the run is a suspected livelock.
SETTLE_FACTOR = 10


class InvariantViolation(AssertionError):
    """Raised inside the state machine when an ALWAYS property fails."""


class _OutOfBudget(BaseException):
    """Raised at the start of a run once the time or memory budget is spent.

    A ``BaseException`` (like ``KeyboardInterrupt``), so Hypothesis does not take it for a failure
    to shrink: it ends the test at once.
    """


class _Capture:
    """What the runs observed: the last failing run, events, reached properties."""

    def __init__(self, budget: Budget | None = None, max_states: int = 0, permitted: tuple[str, ...] = ()) -> None:
        self.budget = budget
        self.max_states = max_states
        self.limit: tuple[str, str] | None = None
        self.failure: tuple[Property, list[Action], int | None] | None = None
        # A permitted (documented) violation is no verdict: the runs go on past it, as the explicit search and the
        # sweep do, so a violation behind it is still found; the first path to each is kept for its trace.
        self.permitted = frozenset(permitted)
        self.findings: dict[str, tuple[Property, list[Action]]] = {}
        self.suspected: dict[str, int] = {}
        self.events: Counter[str] = Counter()
        self.reached: set[str] = set()
        self.steps = 0
        self.runs = 0


def machine_for(model: Model, capture: _Capture, settle_bound: int = 600) -> type[RuleBasedStateMachine]:
    """Build a state machine class that takes the model's enabled actions.

    With eventually properties, each run ends with a fair quiescence phase of at
    most ``settle_bound`` protocol steps (see the module doc).
    """
    props = list(model.properties())
    eventually = [p for p in props if p.expectation is Expectation.EVENTUALLY]
    always = [p for p in props if p.expectation is Expectation.ALWAYS]
    state_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
    event_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]

    def _setup(self: Any) -> None:
        RuleBasedStateMachine.__init__(self)
        if capture.budget is not None:
            capture.limit = capture.budget.exceeded()
            if capture.limit is None and capture.max_states and capture.steps >= capture.max_states:
                capture.limit = ("states", f"state budget of {capture.max_states:,} states reached (the states the "
                                           "runs stepped through, repeats counted)")
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
            if p.name in capture.permitted:
                if p.name not in capture.findings and not p.holds(self.state):
                    capture.findings[p.name] = (p, list(self.actions_taken))
                continue
            if not p.holds(self.state):
                capture.failure = (p, list(self.actions_taken), None)
                self.violated = True
                raise InvariantViolation(f"{p.name}: {p.explain(self.state) if p.explain else 'violated'}")

    def quiescent(self: Any) -> bool:
        return not self.enabled

    def idle(self: Any) -> None:
        """The model is in a terminal state: nothing is enabled, nothing changes."""

    def teardown(self: Any) -> None:
        """Faults stop: run protocol steps fairly until none is enabled, then judge eventually properties."""
        if not eventually or getattr(self, "violated", False) or not hasattr(self, "state"):
            return
        n = len(self.actions_taken)
        phase = settle(model, self.state, settle_bound, always, eventually)
        capture.steps += len(phase.actions)
        for ev, k in phase.events.items():
            capture.events[ev] += k
        actions = [*self.actions_taken, *phase.actions]
        prop: Property | None = None
        loop_start: int | None = None
        if phase.outcome in ("violation", "livelock"):
            prop = next(p for p in props if p.name == phase.violation)
            loop_start = None if phase.loop_start is None else n + phase.loop_start
        elif phase.outcome == "settled":
            prop = next((p for p in eventually if not p.holds(phase.final)), None)
        elif phase.outcome == "unsettled":
            for name in phase.suspects:
                capture.suspected[name] = capture.suspected.get(name, 0) + 1
        if prop is not None:
            capture.failure = (prop, actions, loop_start)
            shape = "stuck" if phase.outcome == "settled" else phase.outcome
            raise InvariantViolation(f"{prop.name}: {shape} after {len(actions)} steps")

    namespace: dict[str, Any] = {
        "__init__": _setup,
        "teardown": teardown,
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
    settle_factor: int = SETTLE_FACTOR,
    time_budget_s: float = 0.0,
    max_memory_mb: int = 0,
    max_states: int = 0,
) -> EngineResult:
    """Run the generated state machine; convert a shrunk failure into a trace.

    With a time or memory budget, a run starts only while budget remains; once it is spent the
    result is partial (``stats["limit_reached"]``), keeping a failure already found (shrunk as far
    as the budget allowed).  ``max_states``: a run starts only while the runs so far stepped through
    fewer states (repeats counted: Hypothesis keeps no visited set).
    """
    budget = Budget(time_budget_s, max_memory_mb) if time_budget_s or max_memory_mb or max_states else None
    capture = _Capture(budget, max_states, permitted)
    machine = machine_for(model, capture, settle_factor * max(step_count, 1))
    config = settings(
        max_examples=max_examples,
        stateful_step_count=step_count,
        deadline=None,
        database=None,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        verbosity=hypothesis.Verbosity.quiet,
        # Hypothesis's ``explain`` phase re-runs the shrunk failure many times to say which steps could
        # vary; keos reports a replayed, minimised trace of its own instead, so the phase only costs time
        # (two thirds of a run that finds a violation, profiled on idempotence_retry).
        phases=[p for p in Phase if p is not Phase.explain],
    )

    def factory() -> RuleBasedStateMachine:
        return machine()

    seeded = hypothesis.seed(seed)(factory)
    start = time.perf_counter()
    traces: dict[str, Trace] = {}
    try:
        run_state_machine_as_test(seeded, settings=config)  # type: ignore[arg-type]  # a factory is accepted
    except (InvariantViolation, _OutOfBudget):
        pass
    except hypothesis.errors.HypothesisException:
        # Once the budget is spent, every new run stops at once in ``__init__``; when Hypothesis then
        # re-runs a failing example to shrink or report it, the shorter run looks to it like flaky data
        # generation (``FlakyStrategyDefinition``).  That is the budget, not a keos bug: the last failing
        # run is already captured, so the result is partial, not a crash.
        if capture.limit is None:
            raise
    if capture.failure is not None:
        prop, actions, loop_start = capture.failure
        eventually = prop.expectation is Expectation.EVENTUALLY
        shrunk = actions if eventually else minimize(model, actions, prop)
        traces[prop.name] = make_trace(
            model,
            prop,
            shrunk,
            "hypothesis",
            scenario,
            variant,
            seed=seed,
            permitted=prop.name in permitted,
            loop_start=loop_start,
        )
    for name, (prop, actions) in capture.findings.items():
        if name not in traces:
            traces[name] = make_trace(
                model, prop, minimize(model, actions, prop), "hypothesis", scenario, variant, seed=seed, permitted=True
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
    props = list(model.properties())
    results = judge(props, traces, capture.reached, permitted, liveness=True)
    if any(p.expectation is Expectation.EVENTUALLY for p in props):
        stats["suspected_livelock_runs"] = dict(capture.suspected)
    for r in results:
        if r.verdict is Verdict.HOLDS and r.name in capture.suspected:
            r.verdict = Verdict.UNTESTED
            r.detail = (
                f"suspected livelock in {capture.suspected[r.name]} run(s): the fair quiescence phase did "
                "not settle and no fair cycle repeated (not confirmed)"
            )
    if capture.limit is not None:
        stats["limit_reached"], stats["limit_detail"] = capture.limit
    return EngineResult(
        engine="hypothesis",
        scenario=scenario,
        variant=variant,
        properties=results,
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
        max_states=options.max_states,
    )
