"""Symbolic engine: bounded model checking and an inductive proof with z3 (``keos check --engine bmc``).

Transactions scenarios (``model = "transactions"``) are dispatched to
:mod:`checker.bmc.txn` (encoding: :mod:`checker.bmc.txn_encoding`);
:func:`covers` answers for both cores.  What follows describes the
idempotence core.

Bounded model checking unrolls the symbolic transition relation of
:mod:`checker.bmc.encoding` one step at a time and asks z3, at every depth
``t <= K`` in turn (so the first violation found is a shortest one), whether
a state violating an invariant is reachable in exactly ``t`` steps.  The
unrolling is over bit-vectors sized from what ``K`` steps can reach (exact
for every reachable value, argued in :meth:`Encoding._value_bound`), each
depth is one query to a fresh ``QF_BV`` solver (bit-blasting and SAT: on this
model 10-20x faster per depth than incremental linear integer arithmetic),
and invariant queries carry the partial-order reduction of
:mod:`checker.bmc.por` (sound for reachable states, proved by swapping).
A satisfying assignment is decoded into actions of the executable model (a
``Deliver`` carries the concrete envelope the slot holds) and replayed with
:func:`checker.trace.make_trace` before it is reported.  A z3 trace that does
not replay is an *engine disagreement*: the property is reported untested,
``stats["engine_disagreement"]`` lists it, and :func:`disagreements` lets the
CLI exit with a distinct code.

Runs that only need *a* counterexample (``stop_on_first``, as ``keos
mutants --engine bmc`` runs them) switch at depth :data:`LEAP_FROM` to
*leaps*: one query for a violation at any of the next :data:`LEAP_STRIDE`
steps, the witness shrunk by delta debugging and replayed
(:func:`checker.bmc.witness.leap_search`); such a trace is at most
``LEAP_STRIDE - 1`` steps longer than a shortest one.

The leap queries' unrolling is longer than the runs through a violation may
be, so a leapt step may *halt* -- only in a violated state, and for good
(:func:`checker.bmc.witness.leap_search` says why both halves matter).

Verdicts are honest about the bound: an invariant with no violation up to the
depth reached is ``holds`` with ``complete=False`` and
``stats["depth_reached"]``.  When the unrolling itself becomes
unsatisfiable at some depth ``t`` (no run has ``t`` steps: the scenario's
budgets and record counts make every run end), every reachable state has
been checked and the result holds at every depth: ``complete=True`` and
``stats["complete_at"] = t - 1``, the length of the longest run.  The engine
asks this after each refuted depth, within a deterministic z3 resource limit
(:func:`_no_run_of`); its sometimes-partners are judged by the same
unrolling (an event the encoding emits at some step ``<= K``, confirmed by
replaying the witness).  Invariants and events the encoding does not cover are
``untested`` with detail "not covered by the bmc encoding".

:func:`prove_broker_core` is the unbounded result: an inductive-invariant
check (1-induction, strengthened by "the leader's table matches the last
batch of the producer id in the log") that the leader's validation rules
alone -- against *any* stream of produce requests, however the client and the
network behave -- keep every producer id's batches in the log with
non-decreasing epochs and gapless sequences starting at 0 in each new epoch
(the log half of ``sequence_table_consistent``).  UNSAT of the induction step
is reported "proved for all depths"; otherwise the counterexample step.

Configuration-space questions (which producer configurations admit a
duplicate or a reordering within ``K`` steps) are :mod:`checker.bmc.config_space`.
Connect scenarios have no bounded encoding; :func:`run_bmc` reports the
KIP-618 fencing-core proof of :mod:`checker.bmc.connect_proof` for them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import z3

from keos.checker.bmc.encoding import ERROR_CODES, INVARIANTS, Encoding
from keos.checker.bmc.encoding import covers as model_covers
from keos.checker.bmc.por import por_constraints
from keos.checker.bmc.witness import (
    LEAP_STRIDE,
    NOT_COVERED,
    ask_events,
    ask_violations,
    harvest_leap,
    leap_search,
    uncovered_result,
)
from keos.checker.budget import memory_exceeded, memory_limit
from keos.checker.engines import EngineOptions, register
from keos.checker.results import EngineResult, PropertyResult, Verdict, judge
from keos.checker.trace import Trace
from keos.model.clients.producer_config import ProducerConfig
from keos.model.interface import Action, Expectation
from keos.model.log.producer_state import VALIDATION_STEPS
from keos.model.systems.idempotence import KafkaSystem
from keos.model.variants import VARIANTS, ProtocolFlags, Variant

__all__ = [
    "DEFAULT_DEPTH",
    "LEAP_FROM",
    "LEAP_STRIDE",
    "NOT_COVERED",
    "NOT_COVERED_LIVENESS",
    "BmcOutcome",
    "bmc",
    "bmc_covers",
    "covers",
    "disagreements",
    "prove_broker_core",
    "run_bmc",
]

DEFAULT_DEPTH = 20
#: ``stop_on_first`` runs search depth by depth up to here, then leap (see :func:`bmc`): about where one query
#: starts to cost seconds on the idempotence core.  A fixed depth, not a timing rule, so a run's queries -- and
#: its trace -- do not depend on the load of the machine.
LEAP_FROM = 10
#: Steps one leap query covers (see :func:`bmc`).
#: Eventually (liveness) properties: bmc unrolls finite runs to bad states; a stuck state or a fair lasso is
#: not encoded (explore searches for both, the random engines run a fair quiescence phase).
NOT_COVERED_LIVENESS = (
    f"{NOT_COVERED}: eventually (liveness) properties are not encoded (no stuck-state or fair-lasso query); "
    "use --engine explore"
)


#: Preprocessing before bit-blasting: the unrolling is functional (each state variable is defined by its
#: predecessor), so ``solve-eqs`` eliminates most of it, and ``elim-uncnstr`` removes what only one constraint
#: reads.  On the idempotence scenarios this is 1.4-1.7x faster per query than z3's default ``QF_BV`` strategy.
QF_BV_TACTICS = ("simplify", "propagate-values", "solve-eqs", "elim-uncnstr", "simplify", "bit-blast", "sat")


def qf_bv_solver() -> Any:
    """A fresh (non-incremental) solver for one bounded query over bit-vectors."""
    return z3.Then(*QF_BV_TACTICS).solver()


#: The termination question ("does any run have ``t`` steps?") may spend at most twice the z3 resource units the
#: invariant query at the same depth spent (z3's ``rlimit``: unlike a timeout, independent of the machine's load),
#: and at least this many (raised from 200,000 when non-idempotent scenarios lost their sequence properties:
#: acks_one_failover's invariant query became cheap enough to starve it).  While runs of ``t`` steps exist, it
#: finds one in a fraction of that; past the longest run, refuting it is the invariant query's own work (that
#: query is then unsatisfiable for the same reason).
TERMINATION_FLOOR = 1_000_000


def _rlimit_count(solver: Any) -> int:
    try:
        return int(solver.statistics().get_key_value("rlimit count"))
    except z3.Z3Exception:
        return 0


def _no_run_of(solve: Any, spent: int) -> bool:
    """Whether the unrolling itself (every step taken) is unsatisfiable: no run has that many steps.

    Asked after the invariant query of a depth ``t`` was refuted, with a
    resource limit of twice what that query spent; ``unknown`` (limit hit)
    counts as "runs may go on".  Exact under the partial-order
    reduction: swaps keep a run's length and executability.  When it is
    unsatisfiable, every reachable state is at depth ``< t`` and was checked,
    so the bounded result holds at every depth.
    """
    res, _ = solve(z3.BoolVal(True), True, max(TERMINATION_FLOOR, 2 * spent))
    return bool(res == z3.unsat)


def _variant(variant: str | Variant) -> Variant:
    return variant if isinstance(variant, Variant) else VARIANTS[variant]


def bmc_covers(scenario: Any, variant: str | Variant) -> bool:
    """Whether the bmc encoding covers ``scenario`` under ``variant`` (for ``keos mutants``)."""
    return bmc_coverage(scenario, variant)[0]


def covers(scenario: Any, variant: str | Variant) -> bool:
    """``keos mutants`` hook: the CLI calls ``covers(scenario, variant_name)`` of an engine module."""
    return bmc_covers(scenario, variant)


def bmc_coverage(scenario: Any, variant: str | Variant) -> tuple[bool, str]:
    """``(covered, reason)`` for a scenario and variant (idempotence core, or the transactions core)."""
    from keos.scenarios import build_model

    if scenario.model == "transactions":
        from keos.checker.bmc.txn import txn_coverage

        return txn_coverage(scenario, _variant(variant))
    if scenario.model != "idempotence":
        return False, f"model kind {scenario.model!r} is not encoded (only the idempotence and transactions cores)"
    model = build_model(scenario, _variant(variant))
    if not isinstance(model, KafkaSystem):
        return False, "not a KafkaSystem model"
    return model_covers(model)


@dataclass
class BmcOutcome:
    """What one bounded run found."""

    traces: dict[str, Trace]
    reached: set[str]
    depth_reached: int
    elapsed_s: float
    disagreements: dict[str, str]
    timed_out: bool
    #: Set when no run has ``complete_at + 1`` steps: every reachable state was checked, the result holds at every
    #: depth (the scenario's runs all end within ``complete_at`` steps).
    complete_at: int | None = None


def bmc(
    model: KafkaSystem,
    scenario: str,
    variant: str,
    depth: int,
    time_budget_s: float = 0.0,
    permitted: tuple[str, ...] = (),
    only: tuple[str, ...] | None = None,
    stop_on_first: bool = False,
    events: bool = True,
    reduce: bool = True,
    leap_from: int | None = None,
    leap_stride: int = 0,
) -> BmcOutcome:
    """BMC of the covered always-properties (and event partners), depth by depth up to ``depth`` steps.

    The unrolling is built once, one transition per depth, over bit-vectors
    whose width covers every value reachable within ``depth`` steps
    (:meth:`Encoding._value_bound`), and each depth is one query to a fresh
    ``QF_BV`` solver (bit-blasting to SAT, far faster here than incremental
    arithmetic): "some remaining invariant is violated at exactly step
    ``t``".  A model names every invariant it violates; the rest are asked
    again at the same depth, so each counterexample is a shortest one.
    Events are asked the same way, all remaining ones in one query.
    ``stop_on_first`` returns at the first violation (and skips events).
    ``reduce`` adds the partial-order reduction of :mod:`checker.bmc.por`
    to the invariant queries (sound for states, so not used for events).

    ``leap_from`` (with ``stop_on_first``; ``keos mutants --engine bmc``):
    beyond this depth, where a query costs seconds and doubles with every
    step, the search *leaps*: each query asks for a violation at any of the next
    :data:`LEAP_STRIDE` steps (one query instead of four, the cheaper
    shallow ones no longer asked alone).  A witness is cut at its first
    violation and shrunk by delta debugging on the executable model
    (:func:`checker.bmc.witness.harvest_leap`): 1-minimal, and at most
    ``LEAP_STRIDE - 1`` steps longer than a shortest one, since every
    shorter depth was refuted.  An unsatisfiable leap extends the depth
    reached (the encoding is exact within ``depth`` steps, and a leapt step
    may halt in a violation, so a violation on a run that ends early is not
    missed).  ``leap_stride`` overrides :data:`LEAP_STRIDE`.

    After each refuted depth ``t``, "does any run have ``t`` steps?" is asked
    within a resource limit (:func:`_no_run_of`); if not, ``complete_at`` is
    ``t - 1`` and the search stops: nothing deeper exists.
    """
    start = time.perf_counter()
    deadline = start + time_budget_s if time_budget_s > 0 else None
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS and p.name in INVARIANTS]
    if only is not None:
        always = [p for p in always if p.name in only]
    event_props = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]
    if not events or stop_on_first:
        event_props = []
    enc = Encoding(model, depth, bitvector=True)
    states = [enc.state(0)]
    ks: list[Any] = []
    ms: list[Any] = []
    base: list[Any] = [enc.initial(states[0])]
    por: list[Any] = []  # partial-order reduction (checker/bmc_por.py): sound for invariants, not for events
    traces: dict[str, Trace] = {}
    disagree: dict[str, str] = {}
    reached: set[str] = set()
    depth_reached = -1
    timed_out = False
    complete_at: int | None = None
    # z3 resource units of the last query, and the context's running total (the first query only sets the baseline;
    # the termination question reads the figure from depth 1 on)
    spent = [0, 0]

    def solve(goal: Any, reduced: bool = True, rlimit: int = 0) -> tuple[z3.CheckSatResult, Any]:
        if memory_exceeded():  # the run's --max-memory: answered as a query that ran out of time
            return z3.unknown, None
        solver = qf_bv_solver()
        if deadline is not None:
            solver.set("timeout", max(1, int((deadline - time.perf_counter()) * 1000)))
        if rlimit:
            solver.set("rlimit", rlimit)
        solver.add(base)
        if reduced:
            solver.add(por)
        solver.add(goal)
        res = solver.check()
        total = _rlimit_count(solver)  # z3 counts resources per context, across solvers
        if not rlimit:
            spent[0] = total - spent[1]
        spent[1] = total
        return res, (solver.model() if res == z3.sat else None)

    def decode(mdl: Any, t: int) -> list[Action]:
        return [enc.action(mdl, s, ks[s], ms[s]) for s in range(t)]

    def extend(t: int, halting: bool = False) -> Any:
        k, m = enc.var(f"k@{t - 1}"), enc.var(f"slot@{t - 1}")
        h = z3.Bool(f"halt@{t - 1}") if halting else None
        ks.append(k)
        ms.append(m)
        states.append(enc.state(t))
        base.extend(enc.transition(t - 1, states[t - 1], states[t], k, m, halt=h))
        if reduce and t > 1:
            por.extend(por_constraints(enc.templates, ks[t - 2], ks[t - 1]))
        return h

    def goals_at(t: int) -> dict[str, Any]:
        return {p.name: enc.bad(states[t], p.name) for p in always if p.name not in traces and p.name not in disagree}

    leap = False
    for t in range(depth + 1):
        if t > 0:
            extend(t)
            timed_out = ask_events(model, solve, decode, t, enc.step_events, event_props, reached, disagree)
        if timed_out:
            break
        timed_out = ask_violations(
            model, solve, decode, t, goals_at(t), always, traces, disagree, scenario, variant, permitted, stop_on_first
        )
        if timed_out:
            break
        depth_reached = t
        if stop_on_first and any(name not in permitted for name in traces):
            break
        if t > 0 and _no_run_of(solve, spent[0]):
            complete_at = t - 1  # no run has t steps: every reachable state was at depth <= t - 1
            break
        if deadline is not None and time.perf_counter() >= deadline:
            timed_out = t < depth
            break
        if stop_on_first and leap_from is not None and leap_from <= t < depth:
            leap = True
            break
    if leap and not traces:

        def found(mdl: Any, bad_at: list[dict[str, Any]]) -> None:
            harvest_leap(model, mdl, bad_at, decode, always, traces, disagree, scenario, variant, permitted)

        depth_reached, timed_out = leap_search(
            depth_reached,
            depth,
            leap_stride or LEAP_STRIDE,
            lambda t: extend(t, halting=True),
            goals_at,
            solve,
            found,
            base.extend,
        )
    return BmcOutcome(
        traces, reached, depth_reached, round(time.perf_counter() - start, 3), disagree, timed_out, complete_at
    )


@register("bmc", "bounded model checking with z3 of the idempotence and transactions cores (+ inductive proofs)")
def run_bmc(scenario: Any, variant: str, options: EngineOptions) -> EngineResult:
    """Run BMC to ``options.max_depth`` (default 20; transactions 34) within ``options.time_budget_s``."""
    from keos.scenarios import build_model

    if scenario.model == "transactions":
        from keos.checker.bmc.txn import run_txn

        return run_txn(scenario, variant, options)
    depth = options.max_depth or DEFAULT_DEPTH
    ok, why = bmc_coverage(scenario, variant)
    if scenario.model == "connect":
        return _connect_result(scenario, variant, why)
    model = build_model(scenario, _variant(variant))
    if not ok or not isinstance(model, KafkaSystem):
        # every property of the scenario's model is listed untested, so an uncovered run never reads as a pass
        return uncovered_result(scenario.name, variant, list(model.properties()), why)
    with memory_limit(options.max_memory_mb) as watch:
        out = bmc(model, scenario.name, variant, depth, options.time_budget_s, scenario.permitted,
                  stop_on_first=options.stop_on_first, leap_from=LEAP_FROM)
    props = list(model.properties())
    results = judge(props, out.traces, out.reached, scenario.permitted, liveness_detail=NOT_COVERED_LIVENESS)
    for r in results:
        if r.expectation is Expectation.ALWAYS and r.name not in INVARIANTS:
            r.verdict, r.detail = Verdict.UNTESTED, NOT_COVERED
        elif r.name in out.disagreements:
            r.verdict, r.detail = Verdict.UNTESTED, f"engine disagreement: {out.disagreements[r.name]}"
        elif r.verdict is Verdict.HOLDS and out.complete_at is not None:
            r.detail = f"no violation at any depth (every run ends within {out.complete_at} steps)"
        elif r.verdict is Verdict.HOLDS:
            r.detail = f"no violation up to depth {out.depth_reached}"
        elif r.expectation is Expectation.SOMETIMES and options.stop_on_first and r.name not in out.reached:
            r.verdict, r.detail = Verdict.UNTESTED, "events are not searched with stop_on_first"
    proof = prove_broker_core(model.flags) if not out.traces else None
    stats: dict[str, Any] = {
        "covered": True,
        "depth_requested": depth,
        "depth_reached": out.depth_reached,
        "elapsed_s": out.elapsed_s,
        "timed_out": out.timed_out,
        "covered_invariants": sorted(INVARIANTS),
        "engine_disagreement": sorted(out.disagreements),
    }
    if out.complete_at is not None:
        stats["complete_at"] = out.complete_at
    if watch.detail is not None:
        stats["limit_reached"], stats["limit_detail"] = "memory", watch.detail
    if proof is not None:
        stats["k_induction"] = proof
    return EngineResult(
        engine="bmc",
        scenario=scenario.name,
        variant=variant,
        properties=results,
        stats=stats,
        complete=out.complete_at is not None and not out.disagreements,
    )


def _connect_result(scenario: Any, variant: str, why: str) -> EngineResult:
    """Connect scenarios: no bounded encoding, but the KIP-618 fencing-core proof of :mod:`checker.bmc.connect_proof`.

    The proof is over an abstraction (any run, not this scenario's bounded
    space), so the scenario's invariants stay ``untested`` here; the two the
    proof's property states in abstract form say so in their detail, and the
    proof itself is ``stats["k_induction"]``.
    """
    from keos.checker.bmc.connect_proof import prove_for_model
    from keos.scenarios import build_model

    model = build_model(scenario, _variant(variant))
    proof = prove_for_model(model)
    abstract = {"task_starts_after_task_count_record": "P1", "no_commit_by_fenced_generation": "P2"}
    results = []
    for p in model.properties():
        detail = f"{NOT_COVERED}: {why}"
        if p.name in abstract:
            detail += f"; the fencing-core proof ({abstract[p.name]}, abstract) says: {proof['result']}"
        results.append(PropertyResult(p.name, p.expectation, Verdict.UNTESTED, detail=detail))
    return EngineResult(
        engine="bmc",
        scenario=scenario.name,
        variant=variant,
        properties=results,
        stats={"covered": False, "reason": why, "k_induction": proof},
        complete=False,
    )


def disagreements(result: EngineResult) -> list[str]:
    """Properties whose z3 trace did not replay on the executable model (an engine bug)."""
    return list(result.stats.get("engine_disagreement", []))


# -- inductive proof of the broker core -----------------------------------------------------------


def prove_broker_core(flags: ProtocolFlags) -> dict[str, Any]:
    """1-induction for the leader's validation rules (:data:`VALIDATION_STEPS`) under ``flags``.

    Abstraction: one producer id on one partition; the state is the log's last
    batch of that id (epoch, sequence; or none) and the leader's table entry
    (the shift register of cached sequences, as in the encoding).  A step is an
    *arbitrary* produce request (any epoch >= 0, any sequence in the space),
    validated by the encoder's rules and appended if accepted.  Invariant: the
    table's epoch and newest sequence equal the last batch's.  Property: an
    appended batch continues its predecessor (epoch not lower; a higher epoch
    starts at 0; the same epoch continues at ``last + 1``).  The base case holds
    trivially (empty log, no entry).
    """
    from keos.model.systems.idempotence import SystemConfig, Topology

    start = time.perf_counter()
    space = min(flags.sequence_space, 2**31)
    sys_flags = replace(flags, sequence_space=space)
    cfg = SystemConfig(topology=Topology(1, 1, 1), producer=ProducerConfig(), sequence_space=space)
    model = KafkaSystem(cfg, Variant("core", "broker core", flags=sys_flags))
    enc = Encoding(model, 1)
    S = enc.state("ind")
    has_last, last_ep, last_seq = z3.Bool("has_last"), z3.Int("last_ep"), z3.Int("last_seq")
    ep, seq = z3.Int("req_ep"), z3.Int("req_seq")
    ent = enc._entry(S, 0, z3.IntVal(0))
    W = enc.window
    inv = z3.And(
        ent["on"] == has_last,
        z3.Implies(
            has_last,
            z3.And(
                ent["ep"] == last_ep,
                ent["cnt"] >= 1,
                ent["cnt"] <= W,
                ent["c0.seq"] == last_seq,
                last_ep >= 0,
                last_seq >= 0,
                last_seq < space,
            ),
        ),
    )
    # the log's length (mapEndOffset for the KAFKA-15591 rule): any, but the id's last batch is in it
    length = z3.Int("log_len")
    err, _dup, append = enc._validate(ent, ep, seq, length)
    continues = z3.Or(
        z3.Not(has_last),
        z3.And(
            ep >= last_ep, z3.Implies(ep > last_ep, seq == 0), z3.Implies(ep == last_ep, seq == enc._next_seq(last_seq))
        ),
    )
    T = dict(S)
    enc._append_entry(T, 0, z3.IntVal(0), ep, seq, z3.IntVal(0), append)
    ent2 = enc._entry(T, 0, z3.IntVal(0))
    inv2 = z3.And(
        ent2["on"] == z3.Or(has_last, append),
        z3.Implies(append, z3.And(ent2["ep"] == ep, ent2["c0.seq"] == seq)),
        z3.Implies(z3.Not(append), z3.And(ent2["ep"] == ent["ep"], ent2["c0.seq"] == ent["c0.seq"])),
    )
    solver = z3.Solver()
    solver.add(inv, ep >= 0, seq >= 0, seq < space, err >= 0, err < len(ERROR_CODES))
    solver.add(length >= 0, z3.Implies(has_last, length >= 1))
    for w in range(W):
        solver.add(ent[f"c{w}.seq"] >= 0, ent[f"c{w}.seq"] < space)
    solver.add(z3.Not(z3.And(z3.Implies(append, continues), inv2)))
    res = solver.check()
    out: dict[str, Any] = {
        "property": "sequence_table_consistent (log half), broker validation against any request stream",
        "method": "1-induction with strengthening: the leader's table holds the last batch's epoch and sequence",
        "rules": [s.name for s in VALIDATION_STEPS if s.switch is None or getattr(flags, s.switch)],
        "elapsed_s": round(time.perf_counter() - start, 3),
    }
    if res == z3.unsat:
        out["result"] = "proved for all depths"
    elif res == z3.sat:
        m = solver.model()

        def val(x: Any) -> Any:
            return m.eval(x, model_completion=True)

        out["result"] = "induction step fails"
        out["counterexample"] = (
            f"last batch epoch={val(last_ep)} seq={val(last_seq)} (present={val(has_last)}); "
            f"request epoch={val(ep)} seq={val(seq)} is appended"
        )
    else:
        out["result"] = "unknown"
    return out
