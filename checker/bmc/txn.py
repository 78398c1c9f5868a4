"""The bmc engine on the transactions core: BMC of TransactionalSystem, k-induction over the coordinator table.

:func:`bmc_txn` unrolls :class:`checker.bmc.txn_encoding.TxnEncoding` depth by
depth, exactly like the idempotence engine (:func:`checker.bmc.engine.bmc`): a fresh
``QF_BV`` solver per depth asks whether some remaining invariant is violated
in exactly ``t`` steps, so each counterexample is a shortest one; every
satisfying assignment is decoded into actions of the executable model and
replayed with :func:`checker.trace.make_trace` before it is reported, and a
trace that does not replay is an engine disagreement, never a violation.
Sometimes-partners given by event labels are searched the same way (each
witness replayed).  Partners that are state predicates
(``aborted_data_filtered``, ``lso_held_back``, ``quiescent_after_transaction``)
are not encoded; :func:`run_txn` reports the invariants they partner with as
``holds`` only if the engine reached their event partners, and says which
partners it did not search.

Partial-order reduction (invariant queries only; events are searched without
it).  A client step ``b`` (:data:`~checker.bmc.txn_encoding.CLIENT_STEPS`: the
application calls, sending a coordinator or produce request, handling a
response) right after a broker/coordinator step ``a``
(:data:`~checker.bmc.txn_encoding.SERVER_STEPS`: delivering a coordinator
request, a produce request or a marker; not the timeout abort, whose cost
depends on what else is enabled) is forbidden --
the two are swapped instead -- unless ``b`` handles the response ``a``
created.  Argument: ``a`` never reads or writes the client; ``b`` reads and
writes only the client, the ghost outcomes and the message it consumes or
sends, which ``a`` does not touch (``a`` consumes an older message, keeps a
produce slot occupied, and frees a coordinator request slot only while the
client has that request in flight, when ``SendTxnRequest`` is disabled
anyway).  So from every reachable state where ``a`` then ``b`` is executable,
``b`` then ``a`` is executable and reaches an *equivalent* state: equal up to
the interleaving of different channels in the network tuple, which no
handler and no invariant reads (each channel keeps its order; see
:mod:`checker.bmc.por`).  Every swap removes one inversion of the template
order (client templates come first), so a bad state reachable in ``t`` steps
is reachable in ``t`` steps by a reduced sequence: shortest counterexamples
keep their length.  ``tests/test_bmc_txn.py`` checks the swap on states
reached by BFS of every covered scenario and variant.

Capacities under the reduction.  The per-depth question "can step ``t``
exceed a capacity" is asked with the reduction too (in bounded runs; the
``stop_on_first`` runs ask it unreduced, which their leaps were measured to
prefer), and that is exact: only
server steps carry capacity constraints (log length, producer-state cache,
markers, Prepare* completions, fences, aborted-transaction index --
``tests/test_bmc_txn.py`` checks this on every covered scenario), and every
swap moves a client step before a server step, so the server steps of a run
keep their order, their messages and the server state they see.  Take a run
whose first ``t - 1`` steps stay within the capacities and whose step ``t``
exceeds one: step ``t`` is a server step, no swap moves it (nothing follows
it), and reordering the steps before it changes no capacity outcome, so the
reduced run exceeds at step ``t`` as well.  Asked without the reduction,
this query cost most of the time on the deeper transaction scenarios.

:func:`prove_coordinator_table` is the unbounded result: a k-induction proof,
over the coordinator core alone (state, epoch, the "prepared" flag) driven by
*arbitrary* requests and timeouts, that every CompleteCommit/CompleteAbort is
reached through the matching Prepare* at the same epoch, that the epoch never
decreases, and that no transition outside
:data:`model.coordinator.transaction.transaction_state.VALID_PREVIOUS_STATES` is ever taken -- with the
transition relation *generated* from that table (``TxnEncoding.valid``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import z3

from keos.checker.bmc.txn_encoding import TXN_INVARIANTS, TxnEncoding
from keos.checker.bmc.txn_encoding import covers as model_covers
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
from keos.checker.results import EngineResult, Verdict, judge
from keos.checker.trace import Trace
from keos.model.coordinator.transaction.transaction_state import (
    STATE_IDS,
    STATES,
    VALID_PREVIOUS_STATES,
    TransactionState,
)
from keos.model.interface import Action, Expectation

__all__ = ["TxnBmcOutcome", "bmc_txn", "prove_coordinator_table", "run_txn", "txn_coverage"]

DEFAULT_TXN_DEPTH = 34
#: Where ``stop_on_first`` runs start to leap on the transactions core (its queries get expensive later than
#: the idempotence core's; see :data:`checker.bmc.engine.LEAP_FROM`).
TXN_LEAP_FROM = 14


def txn_coverage(scenario: Any, variant: Any) -> tuple[bool, str]:
    """``(covered, reason)`` for a transactions scenario under a variant."""
    from keos.scenarios import build_model

    if scenario.model != "transactions":
        return False, f"model kind {scenario.model!r} is not encoded"
    return model_covers(build_model(scenario, variant))


@dataclass
class TxnBmcOutcome:
    """What one bounded run found."""

    traces: dict[str, Trace]
    reached: set[str]
    depth_reached: int
    elapsed_s: float
    disagreements: dict[str, str]
    timed_out: bool
    capacity_exceeded_at: int | None = None
    capacity: int = 0


def bmc_txn(
    model: Any,
    scenario: str,
    variant: str,
    depth: int,
    time_budget_s: float = 0.0,
    permitted: tuple[str, ...] = (),
    only: tuple[str, ...] | None = None,
    stop_on_first: bool = False,
    events: bool = True,
    incremental: bool = True,
    on_depth: Any = None,
    reduce: bool = True,
    prepares: int | None = None,
    leap_from: int | None = None,
) -> TxnBmcOutcome:
    """BMC of the encoded transaction invariants (and event partners) up to ``depth`` steps.

    The capacities of the encoding start at ``prepares`` Prepare* transitions
    (default: transactions + fault budget + 1) and are checked at every depth;
    if a step could exceed them, the run restarts with twice the capacity (the
    time budget is shared), so the result is exact for the depth reached.
    ``leap_from``: the leap search of :func:`checker.bmc.engine.bmc` (with
    ``stop_on_first``): beyond this depth, each query asks for
    a violation at any of the next ``LEAP_STRIDE`` steps; its witness is
    shrunk by delta debugging and replayed.  A refuted leap does not extend
    the depth reached (the capacities are not checked inside leaps).
    """
    start = time.perf_counter()
    topo = model.config.topology
    cap = prepares if prepares is not None else topo.transactions_per_producer + model.config.faults.total + 1
    while True:
        left = 0.0 if time_budget_s <= 0 else max(0.001, time_budget_s - (time.perf_counter() - start))
        out = _bmc_once(
            model,
            scenario,
            variant,
            depth,
            left,
            permitted,
            only,
            stop_on_first,
            events,
            incremental,
            on_depth,
            reduce,
            min(cap, depth // 2 + 1),
            leap_from,
        )
        if out.capacity_exceeded_at is None or cap > depth // 2:
            out.elapsed_s = round(time.perf_counter() - start, 3)
            out.capacity = min(cap, depth // 2 + 1)
            return out
        cap = max(1, 2 * cap)


def _bmc_once(
    model: Any,
    scenario: str,
    variant: str,
    depth: int,
    time_budget_s: float = 0.0,
    permitted: tuple[str, ...] = (),
    only: tuple[str, ...] | None = None,
    stop_on_first: bool = False,
    events: bool = True,
    incremental: bool = True,
    on_depth: Any = None,
    reduce: bool = True,
    prepares: int = 4,
    leap_from: int | None = None,
) -> TxnBmcOutcome:
    """One BMC run with capacity ``prepares``; stops where a step could exceed it.

    ``incremental`` (default): one solver keeps the unrolling and each query
    is an assumption literal; on this encoding 3x faster per depth than a
    fresh ``QF_BV`` solver per query (the idempotence engine's choice).
    ``reduce``: the partial-order reduction below on invariant queries
    (events are searched without it).
    """
    start = time.perf_counter()
    deadline = start + time_budget_s if time_budget_s > 0 else None
    props = list(model.properties())
    always = [p for p in props if p.expectation is Expectation.ALWAYS and p.name in TXN_INVARIANTS]
    if only is not None:
        always = [p for p in always if p.name in only]
    event_props = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]
    if not events or stop_on_first:
        event_props = []
    enc = TxnEncoding(model, depth, prepares=prepares)
    enc.events = bool(event_props)
    enc.include_capacity = False
    capacity_exceeded_at: int | None = None
    pairs = enc.commuting_pairs() if reduce else []
    por: list[Any] = []
    states = [enc.state(0)]
    ks: list[Any] = []
    base: list[Any] = [enc.initial(states[0])]
    step_events: list[dict[str, Any]] = []
    traces: dict[str, Trace] = {}
    disagree: dict[str, str] = {}
    reached: set[str] = set()
    depth_reached = -1
    timed_out = False

    inc = z3.SolverFor("QF_BV") if incremental else None
    por_lit = z3.Bool("por")
    added = 0
    queries = 0

    def solve(goal: Any, reduced: bool = True) -> tuple[z3.CheckSatResult, Any]:
        nonlocal added, queries
        if memory_exceeded():  # the run's --max-memory: answered as a query that ran out of time
            return z3.unknown, None
        solver = inc if inc is not None else z3.SolverFor("QF_BV")
        if deadline is not None:
            solver.set("timeout", max(1, int((deadline - time.perf_counter()) * 1000)))
        if inc is None:
            solver.add(base)
            if reduced:
                solver.add(por)
            solver.add(goal)
            res = solver.check()
        else:
            solver.add(base[added:])
            added = len(base)
            queries += 1
            lit = z3.Bool(f"goal#{queries}")
            solver.add(z3.Implies(lit, goal))
            res = solver.check(lit, *([por_lit] if reduced else []))
        return res, (solver.model() if res == z3.sat else None)

    def decode(mdl: Any, t: int) -> list[Action]:
        return [enc.action(mdl, ks[s], states[s]) for s in range(t)]

    def extend(t: int, halting: bool = False) -> Any:
        k = enc.var(f"k@{t - 1}")
        h = z3.Bool(f"halt@{t - 1}") if halting else None
        ks.append(k)
        states.append(enc.state(t))
        base.extend(enc.transition(t - 1, states[t - 1], states[t], k, halt=h))
        return h

    def order(t: int) -> None:
        if t > 1 and pairs:
            kp, kn = ks[t - 2], ks[t - 1]
            cons = [z3.Not(z3.And(kp == a, kn == b)) for a, b in pairs]
            por.extend(cons)
            if inc is not None:
                inc.add([z3.Implies(por_lit, c) for c in cons])

    leap = False
    for t in range(depth + 1):
        if t > 0:
            extend(t)
            # Sound either way (see "Capacities under the reduction").  Reduced, bounded runs reach deeper; but
            # stop_on_first runs found their deep counterexamples 2-3x faster after unreduced capacity queries
            # (measured on the two deep transaction mutants; the leap queries are sensitive to the solver state).
            res, _mdl = solve(z3.Not(enc.capacity), reduced=reduce and not stop_on_first)
            if res == z3.unknown:
                timed_out = True
                break
            if res == z3.sat:  # a step could exceed the capacities: the bound is not exact from here on
                capacity_exceeded_at = t
                break
            base.append(enc.capacity)
            step_events.append(dict(enc.step_events))
            order(t)
            timed_out = ask_events(model, solve, decode, t, enc.step_events, event_props, reached, disagree)
        if timed_out:
            break
        goals = {p.name: enc.bad(states[t], p.name) for p in always if p.name not in traces and p.name not in disagree}
        timed_out = ask_violations(
            model, solve, decode, t, goals, always, traces, disagree, scenario, variant, permitted, stop_on_first
        )
        if timed_out:
            break
        depth_reached = t
        if on_depth is not None:
            on_depth(t, time.perf_counter() - start)
        if stop_on_first and any(name not in permitted for name in traces):
            break
        if deadline is not None and time.perf_counter() >= deadline:
            timed_out = t < depth
            break
        if stop_on_first and leap_from is not None and leap_from <= t < depth:
            leap = True
            break
    if leap and not traces:

        def extend_capped(t: int) -> Any:
            h = extend(t, halting=True)
            base.append(enc.capacity)
            order(t)
            return h

        def found(mdl: Any, bad_at: list[dict[str, Any]]) -> None:
            harvest_leap(model, mdl, bad_at, decode, always, traces, disagree, scenario, variant, permitted)

        # a refuted leap is not a depth claim: the capacities are not checked inside leaps
        _searched, timed_out = leap_search(
            depth_reached,
            depth,
            LEAP_STRIDE,
            extend_capped,
            lambda t: {p.name: enc.bad(states[t], p.name) for p in always if p.name not in disagree},
            solve,
            found,
            base.extend,
        )
    return TxnBmcOutcome(
        traces, reached, depth_reached, round(time.perf_counter() - start, 3), disagree, timed_out, capacity_exceeded_at
    )


def run_txn(scenario: Any, variant: str, options: Any) -> EngineResult:
    """``keos check --engine bmc`` on a transactions scenario."""
    from keos.scenarios import build_model

    model: Any = build_model(scenario, variant)
    ok, why = model_covers(model) if scenario.model == "transactions" else (False, "not a transactions model")
    props = list(model.properties())
    if not ok:
        return uncovered_result(scenario.name, variant, props, why)
    depth = options.max_depth or DEFAULT_TXN_DEPTH
    with memory_limit(options.max_memory_mb) as watch:
        out = bmc_txn(model, scenario.name, variant, depth, options.time_budget_s, scenario.permitted,
                      stop_on_first=options.stop_on_first, leap_from=TXN_LEAP_FROM)
    results = judge(props, out.traces, out.reached, scenario.permitted,
                    liveness_detail=f"{NOT_COVERED}: eventually (liveness) properties are not encoded "
                    "(no stuck-state or fair-lasso query); use --engine explore")
    by_name = {p.name: p for p in props}
    for r in results:
        prop = by_name[r.name]
        if r.expectation is Expectation.ALWAYS and r.name not in TXN_INVARIANTS:
            r.verdict, r.detail = Verdict.UNTESTED, NOT_COVERED
        elif r.name in out.disagreements:
            r.verdict, r.detail = Verdict.UNTESTED, f"engine disagreement: {out.disagreements[r.name]}"
        elif r.expectation is Expectation.ALWAYS and r.verdict is Verdict.UNTESTED:
            unsearched = [p for p in prop.partners if by_name[p].event is None]
            reached_events = all(p in out.reached for p in prop.partners if by_name[p].event is not None)
            if reached_events and unsearched:
                r.verdict = Verdict.HOLDS
                r.detail = (
                    f"no violation up to depth {out.depth_reached} (state-predicate partners "
                    f"{', '.join(unsearched)} are not searched by bmc)"
                )
        elif r.verdict is Verdict.HOLDS:
            r.detail = f"no violation up to depth {out.depth_reached}"
        if r.expectation is Expectation.SOMETIMES and prop.event is None and r.verdict is Verdict.UNREACHED:
            r.verdict, r.detail = Verdict.UNTESTED, "state-predicate sometimes-property: not encoded"
        elif r.expectation is Expectation.SOMETIMES and options.stop_on_first and r.name not in out.reached:
            r.verdict, r.detail = Verdict.UNTESTED, "events are not searched with stop_on_first"
    stats: dict[str, Any] = {
        "covered": True,
        "depth_requested": depth,
        "depth_reached": out.depth_reached,
        "elapsed_s": out.elapsed_s,
        "timed_out": out.timed_out,
        "covered_invariants": sorted(set(TXN_INVARIANTS) & set(by_name)),
        "engine_disagreement": sorted(out.disagreements),
        "prepare_capacity": out.capacity,
        "capacity_exceeded_at": out.capacity_exceeded_at,
        "k_induction": prove_coordinator_table(model.tv, model.flags.timeout_abort_bumps_epoch),
    }
    if watch.detail is not None:
        stats["limit_reached"], stats["limit_detail"] = "memory", watch.detail
    return EngineResult(engine="bmc", scenario=scenario.name, variant=variant, properties=results, stats=stats,
                        complete=False)


# -- k-induction over the coordinator table ---------------------------------------------------------------

TXS = TransactionState
_PREPARE_OF = {TXS.COMPLETE_COMMIT: TXS.PREPARE_COMMIT, TXS.COMPLETE_ABORT: TXS.PREPARE_ABORT}


def prove_coordinator_table(
    transaction_version: int = 2,
    timeout_abort_bumps_epoch: bool = True,
    k_max: int = 4,
    table: dict[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """k-induction: along any run of the coordinator core, Complete* is reached only through its Prepare*.

    The core is the coordinator's cache entry for one transactional id --
    ``state``, ``producer_epoch``, and ``prepared_epoch`` (the epoch of the
    last Prepare* written, -1 after a Complete*/Empty) -- driven by
    arbitrary requests (any epoch, any result): every step picks a target
    state ``dst`` and the transition is taken only if ``src`` is a valid
    previous state of ``dst`` in :data:`VALID_PREVIOUS_STATES` (the guard is
    generated from the table, as in :meth:`TxnEncoding.valid`), with the
    handlers' epoch rules: InitProducerId (-> Empty) bumps; the fence
    (Ongoing -> PrepareEpochFence -> PrepareAbort) bumps; EndTxn (Ongoing ->
    Prepare*) bumps under TV2 and keeps the epoch under TV1; the timeout abort
    bumps iff ``timeout_abort_bumps_epoch`` (or TV2); Complete* keeps the
    Prepare*'s epoch; AddPartitions (-> Ongoing) keeps it.

    ``table`` replaces the table (tests mutate it to see the proof fail).

    Proved (k-induction, smallest ``k <= k_max`` whose step is UNSAT):
    (1) a Complete* state was entered from its own Prepare* at the same epoch
    (``prepared_epoch == producer_epoch`` whenever the state is Prepare*);
    (2) the epoch never decreases; (3) Dead and PrepareEpochFence are never
    a *resting* state (PrepareEpochFence is converted in the same step).
    """
    start = time.perf_counter()
    sid = STATE_IDS
    rows = VALID_PREVIOUS_STATES if table is None else table

    def valid(src: Any, dst: str) -> Any:
        return z3.Or([src == sid[p] for p in rows[dst]] or [z3.BoolVal(False)])

    def var(name: str) -> tuple[Any, Any, Any]:
        return z3.Int(f"st_{name}"), z3.Int(f"ep_{name}"), z3.Int(f"pe_{name}")

    def step(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any], choice: Any) -> Any:
        st, ep, _pe = a
        st2, ep2, pe2 = b
        tv2 = transaction_version >= 2
        moves = []
        # InitProducerId on an idle entry: Empty at epoch + 1
        moves.append(z3.And(choice == 0, valid(st, TXS.EMPTY), st2 == sid[TXS.EMPTY], ep2 == ep + 1, pe2 == -1))
        # AddPartitionsToTxn: Ongoing, same epoch
        moves.append(z3.And(choice == 1, valid(st, TXS.ONGOING), st2 == sid[TXS.ONGOING], ep2 == ep, pe2 == -1))
        # EndTxn from Ongoing (client): PrepareCommit/PrepareAbort; TV2 bumps
        for dst in (TXS.PREPARE_COMMIT, TXS.PREPARE_ABORT):
            bump = ep + 1 if tv2 else ep
            moves.append(
                z3.And(choice == 2, st == sid[TXS.ONGOING], valid(st, dst), st2 == sid[dst], ep2 == bump, pe2 == bump)
            )
        # TV2 empty abort from Empty/Complete*: PrepareAbort at epoch + 1
        if tv2:
            moves.append(
                z3.And(
                    choice == 3,
                    z3.Or([st == sid[x] for x in (TXS.EMPTY, *_PREPARE_OF)]),
                    valid(st, TXS.PREPARE_ABORT),
                    st2 == sid[TXS.PREPARE_ABORT],
                    ep2 == ep + 1,
                    pe2 == ep + 1,
                )
            )
        # fence (InitProducerId on Ongoing, or the timeout abort with the fix): via PrepareEpochFence, epoch + 1
        moves.append(
            z3.And(
                choice == 4,
                valid(st, TXS.PREPARE_EPOCH_FENCE),
                valid(z3.IntVal(sid[TXS.PREPARE_EPOCH_FENCE]), TXS.PREPARE_ABORT),
                st2 == sid[TXS.PREPARE_ABORT],
                ep2 == ep + 1,
                pe2 == ep + 1,
            )
        )
        # the timeout abort without the fix: a plain internal abort (TV1: same epoch)
        if not timeout_abort_bumps_epoch:
            e = ep + 1 if tv2 else ep
            moves.append(
                z3.And(
                    choice == 5,
                    st == sid[TXS.ONGOING],
                    valid(st, TXS.PREPARE_ABORT),
                    st2 == sid[TXS.PREPARE_ABORT],
                    ep2 == e,
                    pe2 == e,
                )
            )
        # completion (maybeWriteTxnCompletion), from whatever state the table lets precede Complete*: same epoch
        for dst in _PREPARE_OF:
            moves.append(z3.And(choice == 6, valid(st, dst), st2 == sid[dst], ep2 == ep, pe2 == -1))
        # expiry (-> Dead) removes the entry: the lifetime of this entry ends (a new one starts at epoch -1)
        return z3.Or(moves)

    def inv(a: tuple[Any, Any, Any]) -> Any:
        st, ep, pe = a
        prepares = z3.Or(st == sid[TXS.PREPARE_COMMIT], st == sid[TXS.PREPARE_ABORT])
        return z3.And(
            z3.Or([st == sid[x] for x in STATES if x not in (TXS.DEAD, TXS.PREPARE_EPOCH_FENCE)]),
            ep >= 0,
            z3.Implies(prepares, pe == ep),
            z3.Implies(z3.Not(prepares), pe == -1),
        )

    def completes_from_prepare(a: tuple[Any, Any, Any], b: tuple[Any, Any, Any]) -> Any:
        st, ep, pe = a
        st2, ep2, _pe2 = b
        into = [
            z3.Implies(z3.And(st2 == sid[dst], st != sid[dst]), z3.And(st == sid[prep], pe == ep2, ep2 == ep))
            for dst, prep in _PREPARE_OF.items()
        ]
        return z3.And(*into, ep2 >= ep)

    out: dict[str, Any] = {
        "property": "Complete* only through its Prepare* at the same epoch; epochs never decrease; "
        "no resting Dead/PrepareEpochFence",
        "method": "k-induction over the coordinator core, transitions generated from VALID_PREVIOUS_STATES",
        "transaction_version": transaction_version,
        "timeout_abort_bumps_epoch": timeout_abort_bumps_epoch,
    }
    # base case: from the initial entry (Empty, epoch 0 after the first InitProducerId), k steps
    for k in range(1, k_max + 1):
        xs = [var(f"{k}_{i}") for i in range(k + 1)]
        cs = [z3.Int(f"c_{k}_{i}") for i in range(k)]
        base = z3.Solver()
        base.add(xs[0][0] == sid[TXS.EMPTY], xs[0][1] == 0, xs[0][2] == -1)
        base.add([step(xs[i], xs[i + 1], cs[i]) for i in range(k)])
        base.add(z3.Not(z3.And([z3.And(inv(xs[i + 1]), completes_from_prepare(xs[i], xs[i + 1])) for i in range(k)])))
        if base.check() == z3.sat:
            out.update(result="base case fails", k=k, elapsed_s=round(time.perf_counter() - start, 3))
            return out
        ind = z3.Solver()
        ind.add([inv(xs[i]) for i in range(k)])
        ind.add([completes_from_prepare(xs[i], xs[i + 1]) for i in range(k - 1)])
        ind.add([step(xs[i], xs[i + 1], cs[i]) for i in range(k)])
        ind.add(z3.Not(z3.And(inv(xs[k]), completes_from_prepare(xs[k - 1], xs[k]))))
        if ind.check() == z3.unsat:
            out.update(result="proved for all depths", k=k, elapsed_s=round(time.perf_counter() - start, 3))
            return out
    out.update(result="induction step fails", k=k_max, elapsed_s=round(time.perf_counter() - start, 3))
    return out
