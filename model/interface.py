"""The small model interface every keos engine depends on.

An engine (breadth-first search, Hypothesis, z3 replay, Spark random walks) sees a
model only through :class:`Model`: the initial states, the actions enabled in a
state (protocol steps *and* faults), the step function, the properties to check
and the codec that turns actions into JSON.  No engine imports a Kafka component.

The shape follows Stateright's ``Model`` trait (``init_states`` / ``actions`` /
``next_state`` / ``properties``) with two additions:

* :meth:`Model.step` returns the next state together with the *events* the
  transition emitted (``"error:OUT_OF_ORDER_SEQUENCE_NUMBER"``,
  ``"txn:Ongoing->PrepareCommit"``, ``"dedup"``).  Events feed coverage reports
  and event-based ``sometimes`` properties without adding ghost flags to the
  state, which would multiply the state space.
* Actions are plain values, ``Action(kind, args)``, whose arguments are ints,
  strings, booleans, ``None``, tuples or registered message records, so a trace
  is a JSON list that any engine can replay.

Determinism contract: ``init_states`` and ``actions`` return their results in
a deterministic order, and ``step`` is a pure function.  Engines rely on it to
rebuild and minimise counterexamples.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

__all__ = [
    "Action",
    "Expectation",
    "FaultHooks",
    "Model",
    "ModelError",
    "Property",
    "Step",
]


class Action(NamedTuple):
    """One transition label: a kind and positional arguments.

    ``Action("Deliver", (msg,))`` delivers a message; ``Action("DropMessage",
    (msg,))`` is a fault.  The model names the arguments for display and JSON.
    """

    kind: str
    args: tuple[Any, ...] = ()


class Step(NamedTuple):
    """The result of taking an enabled action: the next state and its events."""

    state: Any
    events: tuple[str, ...] = ()


class Expectation(enum.Enum):
    """How a property is judged (Stateright's ``Expectation``).

    ``ALWAYS`` must hold in every reachable state; a state where it is false is
    a violation.  ``SOMETIMES`` must hold in at least one reachable state (or be
    emitted as an event on at least one transition); if it never does, the
    properties it partners are reported as *untested*.

    ``EVENTUALLY`` is a progress (liveness) property, "P holds again and again
    once faults stop" (``□◇P`` under fairness).  It is violated by

    * a *stuck* state: a reachable state where no protocol step is enabled
      (none at all, or only fault actions, which may stop at any time) and P
      is false -- the trace ends there; or
    * a *livelock*: a reachable cycle of protocol steps (no fault on it) that
      is weakly fair -- every action enabled in every state of the cycle is
      taken somewhere on it, so timeouts and retries that can fire do fire --
      and on which P is false in every state.  Its trace is a lasso: a prefix
      and a cycle that returns to the state where the cycle began.

    States whose successors the bounds cut off (``Model.within_bounds`` false)
    are neither stuck nor on a cycle: the engines cannot judge them.  The
    fairness assumptions a property relies on are listed in its ``fairness``.
    """

    ALWAYS = "always"
    SOMETIMES = "sometimes"
    EVENTUALLY = "eventually"


@dataclass(frozen=True)
class Property:
    """A named, documented predicate over states (or, for ``SOMETIMES``, events).

    Attributes:
        name: snake_case fact, e.g. ``no_duplicate_append``.
        expectation: always or sometimes.
        fact: the fact in one sentence.
        source: the KIP section or Kafka source the fact comes from.
        catches: the bug or weakened rule it detects (always) or what its
            reachability proves (sometimes).
        predicate: ``state -> bool``; for an event-based sometimes property,
            ``None``.
        event: for an event-based sometimes property, the event label (or
            label prefix ending in ``*``) that witnesses it.
        partners: for an always property, the names of the sometimes
            properties that prove its interesting states are reachable.
        explain: optional ``state -> str`` giving the evidence of a violation
            in protocol terms (which record, which partition).
        witness: for an event-based sometimes property, ``state -> bool``: what the state a witnessing step
            leaves must show (the event's claim borne out: ``concurrent_in_flight`` -- a producer has two
            requests in flight).  The explicit search checks it on the first witnessing step and reports a step
            whose event claims what the state does not show as a violation of ``witness_events_borne_out``
            (``checker/explore/search.py``): a defect in the step's self-report, or in the event matcher, would
            otherwise make a partner blind, reached without the situation it stands for.
        fairness: for an eventually property, the fairness assumptions it
            relies on, in Kafka's terms (``"transaction.timeout.ms fires"``,
            ``"markers are retried until written"``, ``"faults stop"``).
    """

    name: str
    expectation: Expectation
    fact: str
    source: str
    catches: str
    predicate: Callable[[Any], bool] | None = None
    event: str | None = None
    partners: tuple[str, ...] = ()
    explain: Callable[[Any], str] | None = field(default=None, compare=False)
    fairness: tuple[str, ...] = ()
    witness: Callable[[Any], bool] | None = field(default=None, compare=False)

    def holds(self, state: Any) -> bool:
        """Evaluate the state predicate (sometimes-event properties: False)."""
        if self.predicate is None:  # no branch: the explicit search asks only state predicates; replay may not
            return False
        return bool(self.predicate(state))

    def matches_event(self, event: str) -> bool:
        """Whether an emitted event witnesses this (event-based) property."""
        if self.event is None:  # no branch: the explicit search asks only event properties; bmc and sweep may not
            return False
        if self.event.endswith("*"):
            return event.startswith(self.event[:-1])
        return event == self.event


class ModelError(Exception):
    """Bad model input: an invalid configuration or an action that is malformed.

    Raised at the edges (scenario loading, trace decoding) so the CLI can print
    one line and exit 2.  The step function itself never raises for protocol
    situations; it returns ``None`` for a disabled action.
    """


@runtime_checkable
class Model(Protocol):
    """What every engine needs from a model."""

    name: str

    def init_states(self) -> Sequence[Any]:
        """The initial states, in a deterministic order."""
        ...

    def actions(self, state: Any) -> Sequence[Action]:
        """The actions enabled in ``state``, in a deterministic order."""
        ...

    def step(self, state: Any, action: Action) -> Step | None:
        """Take ``action``; ``None`` if it is not enabled in ``state``."""
        ...

    def properties(self) -> Sequence[Property]:
        """The always and sometimes properties to check."""
        ...

    def within_bounds(self, state: Any) -> bool:
        """Whether successors of ``state`` should be explored."""
        ...

    def fingerprint(self, state: Any) -> str:
        """A stable (cross-process) hex fingerprint of ``state``."""
        ...

    def action_to_json(self, action: Action) -> dict[str, Any]:
        """Encode an action as a JSON object."""
        ...

    def action_from_json(self, data: Any) -> Action:
        """Decode an action; raises :class:`ModelError` on malformed input."""
        ...

    def format_action(self, action: Action) -> str:
        """A one-line human description of the action."""
        ...

    def state_to_json(self, state: Any) -> dict[str, Any]:
        """A JSON view of the state, for traces and reports."""
        ...

    def describe(self) -> dict[str, Any]:
        """Scenario name, variant, bounds: recorded in every trace."""
        ...


@runtime_checkable
class FaultHooks(Protocol):
    """Optional: how a model classifies its fault actions.

    Random engines (the Spark sweep's swarm testing) use it when a model
    provides it, and otherwise fall back to the ``fault:<kind>`` events that
    steps emit and the budget in ``describe()["faults"]``.
    """

    def fault_kinds(self) -> Sequence[str]:
        """The fault kinds this instance may inject (those with a budget), in a fixed order.

        Random engines (the Spark sweep's swarm testing) enable a random subset
        of them per run and weight the choice of fault actions by kind.
        """
        ...

    def fault_kind(self, action: Action) -> str | None:
        """The fault kind ``action`` injects, or ``None`` for a protocol step."""
        ...
