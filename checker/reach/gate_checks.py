"""The gate's checks that are not scenario searches, as ``keos coverage`` and ``keos mutate`` run them.

``scripts/gate.sh`` is more than ``keos check --strict`` on the default scenarios: it also runs
``keos assignors``, which judges the partition assignors of ``model/coordinator/group/assignors.py``
over the book's worked examples and seeded random groups (``checker/assignor_check.py``).  A defect
of an assignor fails the gate there, not in a scenario's search, so reach and kill power measured on
the scenarios alone would call that module dark when the gate does judge it.

Each such check has a reference that cannot be a scenario name (scenario names are ``[a-z0-9_]``):
``@assignors``.  ``keos coverage`` without ``--set``/``--scenario`` measures the gate, so it runs
these after the scenarios, each under a coverage context of its own name; ``keos mutate`` selects
them for a mutant like scenarios (by the context that ran its lines) and a mutant that makes one
fail is *killed* by it, exactly as ``keos assignors`` would fail the gate (exit 1: a property an
assignor promises fails).  The z3 proofs of ``keos assignors`` encode Range on their own and read
no model code, and z3's balance optimum is reported, never judged, so neither runs here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GATE_CHECKS", "GateCheckResult", "is_gate_check", "run_gate_check"]

#: The gate's non-scenario checks, by reference; the parameters are ``keos assignors``'s defaults.
GATE_CHECKS: dict[str, dict[str, int]] = {"@assignors": {"cases": 200, "seed": 0}}


@dataclass(frozen=True)
class GateCheckResult:
    """Whether the check passed as the gate judges it: ``failed`` names the properties that failed."""

    ref: str
    failed: tuple[str, ...] = ()
    detail: str = ""
    crashed: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failed and self.crashed is None


def is_gate_check(ref: str) -> bool:
    """Whether ``ref`` names one of the gate's non-scenario checks (``@assignors``)."""
    return ref in GATE_CHECKS


def run_gate_check(ref: str) -> GateCheckResult:
    """Run the check ``ref`` as ``keos assignors`` does in the gate; its properties' verdicts."""
    if ref != "@assignors":
        raise ValueError(f"unknown gate check {ref!r} (known: {', '.join(GATE_CHECKS)})")
    from keos.checker.assignor_check import check_assignors, default_assignors

    params = GATE_CHECKS[ref]
    reports = check_assignors(default_assignors(), random_count=params["cases"], seed=params["seed"],
                              z3_optimum=False)
    failed: list[str] = []
    details: list[str] = []
    for r in reports:
        for p in r.violations:
            failed.append(f"{r.assignor}:{p.name}")
            if p.first_failure is not None:
                details.append(f"{r.assignor} {p.name} fails on {p.first_failure[0]}: {p.first_failure[1]}")
    crashed = next((f"{r.assignor}: {r.error}" for r in reports if r.error), None)
    return GateCheckResult(ref, tuple(failed), "; ".join(details)[:300], crashed)
