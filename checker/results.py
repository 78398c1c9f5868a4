"""Results every engine returns, in one shape the reports render.

An engine run yields one :class:`EngineResult` per (scenario, variant): the
verdict of every property, the counterexample traces, statistics and the
coverage (event counts) it observed.

Verdicts:

* ``violated`` -- a replayed counterexample exists (``permitted`` when the
  scenario lists the invariant as a permitted failure, e.g. KIP-618 §14);
* ``holds`` -- no counterexample within what the engine covered, and every
  sometimes-partner was reached (``complete`` says whether the search was
  exhaustive or bounded);
* ``untested`` -- no counterexample, but a partner never fired, so the
  invariant was not exercised;
* ``reached`` / ``unreached`` -- for sometimes properties.

Eventually (liveness) properties are judged only by engines that look for
stuck states and fair livelocks (:mod:`keos.checker.liveness`) and say so
(``judge(..., liveness=True)``); any other engine reports them ``untested``
with the reason, never ``holds``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keos.checker.trace import Trace
from keos.model.interface import Expectation, Property

__all__ = [
    "NO_LIVENESS",
    "STOPPED_AT_FIRST",
    "EngineResult",
    "PropertyResult",
    "Verdict",
    "expect_findings",
    "judge",
    "partial_reason",
    "unjudged_after_first_violation",
]

#: Why an engine that does not search for stuck states and livelocks leaves an eventually property untested.
NO_LIVENESS = "eventually (liveness) property: this engine does not search for stuck states or fair livelocks"


class Verdict(enum.Enum):
    """The outcome for one property."""

    HOLDS = "holds"
    VIOLATED = "violated"
    PERMITTED = "permitted"
    UNTESTED = "untested"
    REACHED = "reached"
    UNREACHED = "unreached"


@dataclass
class PropertyResult:
    """The verdict for one property, with its counterexample if any."""

    name: str
    expectation: Expectation
    verdict: Verdict
    trace: Trace | None = None
    trace_path: Path | None = None
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON summary (the trace itself is written to its own file)."""
        return {
            "name": self.name,
            "expectation": self.expectation.value,
            "verdict": self.verdict.value,
            "trace": str(self.trace_path) if self.trace_path else None,
            "trace_length": len(self.trace.actions) if self.trace else None,
            "detail": self.detail,
            "liveness": self.trace.liveness if self.trace else None,
        }


@dataclass
class EngineResult:
    """One engine run over one scenario and variant."""

    engine: str
    scenario: str
    variant: str
    properties: list[PropertyResult]
    stats: dict[str, Any] = field(default_factory=dict)
    coverage: dict[str, int] = field(default_factory=dict)
    complete: bool = True
    seed: int | None = None

    @property
    def violated(self) -> bool:
        """Whether a non-permitted violation was found."""
        return any(p.verdict is Verdict.VIOLATED for p in self.properties)

    def violations(self) -> list[PropertyResult]:
        """The properties with counterexamples (permitted ones included)."""
        return [p for p in self.properties if p.verdict in (Verdict.VIOLATED, Verdict.PERMITTED)]

    def to_json(self) -> dict[str, Any]:
        """JSON summary."""
        return {
            "engine": self.engine,
            "scenario": self.scenario,
            "variant": self.variant,
            "complete": self.complete,
            "seed": self.seed,
            "violated": self.violated,
            "properties": [p.to_json() for p in self.properties],
            "stats": self.stats,
            "coverage": dict(sorted(self.coverage.items())),
        }


def judge(
    properties: list[Property],
    traces: dict[str, Trace],
    reached: set[str],
    permitted: tuple[str, ...] = (),
    liveness: bool = False,
    liveness_detail: str = NO_LIVENESS,
) -> list[PropertyResult]:
    """Verdicts from what an engine found: counterexamples and reached sometimes-properties.

    ``liveness`` says the engine searched for stuck states and fair livelocks;
    without it an eventually property with no counterexample is ``untested``
    (``liveness_detail`` says why), so it is never silently judged to hold.
    """
    out: list[PropertyResult] = []
    for prop in properties:
        if prop.expectation is Expectation.SOMETIMES:
            verdict = Verdict.REACHED if prop.name in reached else Verdict.UNREACHED
            out.append(PropertyResult(prop.name, prop.expectation, verdict))
            continue
        trace = traces.get(prop.name)
        if trace is None and prop.expectation is Expectation.EVENTUALLY and not liveness:
            out.append(PropertyResult(prop.name, prop.expectation, Verdict.UNTESTED, detail=liveness_detail))
            continue
        if trace is not None:
            verdict = Verdict.PERMITTED if prop.name in permitted else Verdict.VIOLATED
            out.append(PropertyResult(prop.name, prop.expectation, verdict, trace, detail=trace.summary))
            continue
        missing = [p for p in prop.partners if p not in reached]
        if missing:
            out.append(
                PropertyResult(
                    prop.name, prop.expectation, Verdict.UNTESTED, detail=f"partner never reached: {', '.join(missing)}"
                )
            )
        else:
            out.append(PropertyResult(prop.name, prop.expectation, Verdict.HOLDS))
    return out


#: ``stats["limit_reached"]`` values that mean a run stopped before its search was done (a budget,
#: not the scenario's own depth bound): its verdicts are partial results.
PARTIAL_LIMITS = ("time", "memory", "states", "interrupted")


def partial_reason(result: EngineResult) -> str | None:
    """Why ``result`` is partial (a time, memory or state budget, or an interrupt), or ``None``.

    The explicit search records ``stats["limit_reached"]``; the z3 engine ``stats["timed_out"]``
    (its time budget ran out before the depth it was asked for).
    """
    limit = result.stats.get("limit_reached")
    if limit in PARTIAL_LIMITS:
        detail = result.stats.get("limit_detail")
        return str(detail) if detail else f"{limit} budget reached"
    if result.stats.get("timed_out"):
        return f"time budget reached at depth {result.stats.get('depth_reached')}"
    return None


#: The detail of a property a ``stop_on_first`` run never judged: its search ended at another property's violation.
STOPPED_AT_FIRST = "not judged: the search stopped at the first violation (--stop-on-first)"


def unjudged_after_first_violation(result: EngineResult) -> None:
    """A run cut short at its first violation judges nothing else: its other invariants become ``untested``.

    ``stop_on_first`` (the gate's fail-fast mode, ``keos mutants``) ends a search as soon as one property
    is violated (a permitted finding does not stop it).  The states past that point were never searched, so
    an invariant with no counterexample has not been shown to hold to the scenario's bound: it is reported
    ``untested`` with :data:`STOPPED_AT_FIRST`, never ``holds``.  ``sometimes`` verdicts stay as they are
    (a reached witness was reached); a run that ended for another reason, or found no violation, is unchanged.
    """
    if not any(r.verdict is Verdict.VIOLATED for r in result.properties):
        return
    for r in result.properties:
        if r.verdict is Verdict.HOLDS:
            r.verdict = Verdict.UNTESTED
            r.detail = STOPPED_AT_FIRST


def expect_findings(result: EngineResult, expected: tuple[str, ...], own_variant: bool) -> None:
    """A documented finding the search no longer reproduces is ``untested`` (``--strict`` fails on it).

    A scenario's ``permitted`` violations are findings it documents as reachable (KIP-98 §9's producer-id
    hijack, KIP-618 §14's mixed cluster, acks=1's lost acknowledgement): Kafka behaves that way, so a model
    that no longer reaches one has lost a behaviour of Kafka's -- a check, a rule or an attacker's move that
    the scenario says is there.  ``expected`` names them (by default every permitted one; a scenario whose
    list also covers other variants names the subset its own variant reaches).  Judged only on the
    scenario's own variant and a search that ran to its end (no budget cut it, no disagreement stopped it).
    """
    if not expected or not own_variant or partial_reason(result) is not None \
            or result.stats.get("engine_disagreement") or any(r.verdict is Verdict.VIOLATED for r in result.properties):
        return  # a violation may have stopped the search before it reached a documented finding
    for r in result.properties:
        if r.name in expected and r.verdict is Verdict.HOLDS:
            r.verdict = Verdict.UNTESTED
            r.detail = ("documented finding not reproduced: the scenario lists it as permitted (expected), "
                        "the search found no violation")
