"""The gate's checks that are not scenario searches, as ``keos coverage`` and ``keos mutate`` run them.

``scripts/gate.sh`` is more than ``keos check --strict`` on the default scenarios: it also runs
``keos assignors``, which judges the partition assignors of ``model/coordinator/group/assignors.py``
over the book's worked examples and seeded random groups (``checker/assignor_check.py``).  A defect
of an assignor fails the gate there, not in a scenario's search, so reach and kill power measured on
the scenarios alone would call that module dark when the gate does judge it.

It also runs ``keos differential --replay``, which replays real Kafka's recorded answers to the
differential's request sequences on the model (:mod:`keos.checker.differential.corpus`): a handler that
answers or changes state differently from the recording fails the gate there.

Each such check has a reference that cannot be a scenario name (scenario names are ``[a-z0-9_]``):
``@assignors``, ``@differential``.  ``keos coverage`` without ``--set``/``--scenario`` measures the gate, so it runs
these after the scenarios, each under a coverage context of its own name; ``keos mutate`` selects
them for a mutant like scenarios (by the context that ran its lines) and a mutant that makes one
fail is *killed* by it, exactly as ``keos assignors`` would fail the gate (exit 1: a property an
assignor promises fails).  The z3 proofs of ``keos assignors`` encode Range on their own and read
no model code, and z3's balance optimum is reported, never judged, so neither runs here.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GATE_CHECKS", "VARIANT_PREFIX", "GateCheckResult", "is_gate_check", "run_gate_check",
           "run_weakened_variant"]

#: ``variant:<name>``: a weakened variant run as ``keos mutants`` runs it (``keos coverage --explain``).
VARIANT_PREFIX = "variant:"

#: The gate's non-scenario checks, by reference; the parameters are ``keos assignors``'s defaults, none for
#: ``keos differential --replay`` (the bundled corpus) and ``keos sweep --gate``'s seed and budget.
GATE_CHECKS: dict[str, dict[str, int]] = {"@assignors": {"cases": 200, "seed": 0}, "@differential": {},
                                          "@sweep": {"seed": 0, "cpu_budget_s": 0}}


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
    """Run the check ``ref`` as the gate does (``keos assignors``, ``keos differential --replay``, ``keos sweep
    --gate``); its verdicts."""
    if ref == "@differential":
        return _replay_corpus(ref)
    if ref == "@sweep":
        from keos.checker.sweep.campaign import run_sweep_gate_check

        return GateCheckResult(ref, *run_sweep_gate_check(**GATE_CHECKS[ref]))  # keos sweep --gate
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
        if r.error:
            # a built-in assignor that raises on one of the check's inputs (all of them a leader can be handed:
            # stale, tied and vanished ownership claims) fails the leader's rebalance -- poll() throws from
            # onLeaderElected and the group never stabilises -- and fails the gate (keos assignors exits 4)
            failed.append(f"{r.assignor}:assignment_completes")
            details.append(f"{r.assignor} raised on {r.error}")
    return GateCheckResult(ref, tuple(failed), "; ".join(details)[:300], None)


def _replay_corpus(ref: str) -> GateCheckResult:
    """``keos differential --replay``: the model against real Kafka's recorded answers
    (:mod:`keos.checker.differential.corpus`); each differing handler and observer fails, as in the gate."""
    from keos.checker.differential.corpus import GATE_CORPORA, load_corpus, replay

    unexplained = [d for path in GATE_CORPORA for d in replay(load_corpus(path)).unexplained]
    failed = tuple(dict.fromkeys(f"differential:{d.handler}" for d in unexplained))
    details = [f"{d.handler} {d.what} at step {d.step_index + 1} of {' ; '.join(s.render() for s in d.case.steps)}: "
               f"model {d.model!r}, Kafka {d.kafka!r}" for d in unexplained[:3]]
    return GateCheckResult(ref, failed, "; ".join(details)[:300], None)


def run_weakened_variant(ref: str) -> GateCheckResult:
    """``variant:<name>``: the weakened variant on its scenarios, as ``keos mutants`` runs it.

    The explicit search stops at the first violation; the variant must be caught on *each* of its scenarios
    (``checker/api.py``, ``_mutant_rows``: ``Variant.scenarios`` are the scenarios in which it is expected to be
    caught).  ``failed`` is empty when it was caught on all of them (what the gate expects): the check is judged as
    the gate judges it, a variant not caught on one of them fails.
    ``keos coverage --explain`` runs these to say which branches only a weakened rule's side takes.
    """
    from pathlib import Path
    from tempfile import TemporaryDirectory

    from keos.checker.engines import ENGINES, EngineOptions, run_weakened
    from keos.model.variants import VARIANTS
    from keos.scenarios import builtin_scenarios

    name = ref.removeprefix(VARIANT_PREFIX)
    variant = VARIANTS.get(name)
    if variant is None or not variant.weakened:
        raise ValueError(f"{ref}: not a weakened variant")
    run, _ = ENGINES["explore"]
    builtins = builtin_scenarios()
    with TemporaryDirectory() as out:
        options = EngineOptions(out_dir=Path(out), stop_on_first=True)
        scenarios = [builtins[s] for s in variant.scenarios if s in builtins]
        # a permitted counterexample catches nothing
        missed = [sc.name for sc in scenarios if not run_weakened(run, sc, name, options)[1]]
    if scenarios and not missed:
        return GateCheckResult(ref)
    return GateCheckResult(ref, (name,), f"{name} not caught on {', '.join(missed or variant.scenarios)}")
