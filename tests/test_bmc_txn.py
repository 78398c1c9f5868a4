"""The z3 transactions engine: the encoding is TransactionalSystem.step, BMC finds the known bugs, BFS agrees."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest
import z3

from keos.checker.bmc.engine import bmc_coverage, bmc_covers, disagreements, run_bmc
from keos.checker.bmc.txn import bmc_txn, prove_coordinator_table
from keos.checker.bmc.txn_encoding import (
    SERVER_STEPS,
    TXN_INVARIANTS,
    UNENCODED_FLAGS,
    UNSWAPPED_SERVER_STEPS,
    TxnEncoding,
    TxnTemplate,
)
from keos.checker.engines import EngineOptions
from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.checker.trace import replay_actions
from keos.model.coordinator.transaction.transaction_state import (
    STATE_IDS,
    STATES,
    VALID_PREVIOUS_STATES,
    is_valid_transition,
)
from keos.model.interface import Action
from keos.model.protocol.messages import ProduceResponse
from keos.model.systems.transactions import TransactionalSystem
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios
from keos.scenarios.variant_scope import variant_applies

TXN_SCENARIOS = ("txn_kafka_12671_hanging", "txn_kafka_17754_delayed_endtxn", "txn_kafka_6119_timeout_zombie")
CROSS_DEPTH = 4
TXN_VARIANTS = ("kafka", "pre_kip_890", "tv1", "no_kip_360", "timeout_abort_without_epoch_bump",
                "complete_without_markers")


def bfs_states(model: Any, limit: int = 4000) -> list[Any]:
    init = model.init_states()[0]
    seen = {init}
    order = [init]
    queue = deque([init])
    while queue and len(order) < limit:
        s = queue.popleft()
        for a in model.actions(s):
            st = model.step(s, a)
            if st is not None and st.state not in seen:
                seen.add(st.state)
                order.append(st.state)
                queue.append(st.state)
    return order


def encoding_for(model: Any, s: Any, depth: int) -> tuple[TxnEncoding, dict[str, Any]]:
    """An encoding whose capacities and bit-vector domain hold the concrete state ``s``."""
    for cap in (1, 2, 4, 8):
        try:
            values = TxnEncoding(model, depth, slack=cap).abstract(s)
            break
        except ValueError:
            continue
    slack = max(abs(v) for v in values.values() if type(v) is int)
    enc = TxnEncoding(model, depth, slack=cap + 1, value_slack=slack)
    enc.init_msgs = len(s.network)
    return enc, enc.abstract(s)


def python_action(enc: TxnEncoding, tmpl: TxnTemplate, values: dict[str, Any]) -> Action | None:
    """The model action a template stands for in the concrete state (``None``: the slot is empty)."""
    if not tmpl.kind.startswith("Deliver"):
        return Action(tmpl.kind, tmpl.args)

    def val(n: str) -> int:
        return int(values[n])

    def bval(n: str) -> bool:
        return bool(values[n])

    if tmpl.kind in ("DeliverTxnRequest", "DeliverTxnResponse"):
        live = values[f"{'rq' if tmpl.kind.endswith('Request') else 'rs'}{tmpl.args[0]}.live"]
    elif tmpl.kind.startswith("DeliverProduce"):
        p = f"m{tmpl.args[0]}.{tmpl.args[1]}"
        live = values[f"{p}.live"] and values[f"{p}.resp"] == tmpl.kind.endswith("Response")
    else:
        live = values["mk.n"] > 0 and any(values[f"mk{j}.live"] for j in range(enc.M))
        if live:
            j = min(j for j in range(enc.M) if values[f"mk{j}.live"])
            live = values[f"mk{j}.q"] == tmpl.args[0]
    if not live:
        return None
    return Action("Deliver", (enc.envelope(tmpl, val, bval),))


SEEN_KINDS: set[str] = set()


def _txn_model(scenario: str, variant: str) -> TransactionalSystem:
    model = build_model(builtin_scenarios()[scenario], variant)
    assert isinstance(model, TransactionalSystem)
    return model


def cross_check(
    scenario: str,
    variant: str,
    samples: int,
    seed: int = 0,
    kinds: frozenset[str] = frozenset(),
    where: Callable[[Any], bool] | None = None,
) -> int:
    """Cross-check the initial state, ``samples`` random reachable states, for each of ``kinds`` the first
    reachable state (breadth-first) where an action of that kind is enabled, and the first two reachable states
    ``where`` holds in."""
    model = build_model(builtin_scenarios()[scenario], variant)
    states = bfs_states(model)
    rng = random.Random(seed)
    picked = [states[0], *rng.sample(states[1:], min(samples, len(states) - 1))]
    if where is not None:
        picked += [s for s in states if where(s)][:2]
    for kind in sorted(kinds):
        first = next((s for s in states if any(a.kind == kind for a in model.actions(s))), None)
        if first is not None:
            picked.append(first)
    checked = 0
    for s in picked:
        enc, values = encoding_for(model, s, 1)
        S0, S1 = enc.state(0), enc.state(1)
        k = enc.var("k")
        solver = z3.SolverFor("QF_BV")
        solver.add(enc.equal_to(S0, values))
        solver.add(enc.transition(0, S0, S1, k))
        covered: set[Action] = set()
        for idx, tmpl in enumerate(enc.templates):
            action = python_action(enc, tmpl, values)
            py = model.step(s, action) if action is not None else None
            solver.push()
            solver.add(k == idx)
            res = solver.check()
            label = model.format_action(action) if action is not None else repr(tmpl)
            assert (res == z3.sat) == (py is not None), f"{scenario}/{variant}: {label} enabled mismatch in {s}"
            if py is not None and action is not None:
                got = enc.concretize(solver.model(), S1)
                assert got == py.state, f"{scenario}/{variant}: {label}\nz3:  {got}\npy:  {py.state}"
                covered.add(action)
                SEEN_KINDS.add(tmpl.kind)
                checked += 1
            solver.pop()
        assert set(model.actions(s)) <= covered, set(model.actions(s)) - covered
    return checked


@pytest.mark.parametrize("scenario", TXN_SCENARIOS)
@pytest.mark.parametrize("variant", TXN_VARIANTS)
def test_symbolic_step_equals_python_step(scenario: str, variant: str) -> None:
    """On BFS-reached states, z3 enables exactly the actions step() accepts, with the same successor."""
    assert cross_check(scenario, variant, 3, seed=TXN_VARIANTS.index(variant)) > 0


def _late_answer_deliverable(s: Any) -> bool:
    """A produce response on the data connection answers a batch that expired in flight (``Producer.expired``)."""
    data = s.clients[0].data
    expired = {cid for cid, _q, _last in data.expired}
    return any(isinstance(e.body, ProduceResponse) and e.connection == data.connection
               and e.body.correlation_id in expired for e in s.network)


def test_late_answer_step_equals_python_step() -> None:
    """States where the answer to a batch that expired in flight can be delivered (``producer._late_answer``):
    the random samples need not hold one."""
    found = 0
    for scenario in TXN_SCENARIOS:
        model = _txn_model(scenario, "kafka")
        found += sum(1 for s in bfs_states(model) if _late_answer_deliverable(s))
        cross_check(scenario, "kafka", 0, where=_late_answer_deliverable)
    assert found > 0


def test_step_cross_check_covered_every_action_kind() -> None:
    """Runs after the cross-check cases: every template kind of the alphabet was compared at least once."""
    if not SEEN_KINDS:  # run on its own (or every case ran in another pytest-xdist worker): do the cross-checks
        for scenario in TXN_SCENARIOS:
            for variant in TXN_VARIANTS:
                cross_check(scenario, variant, 3, seed=TXN_VARIANTS.index(variant))
    kinds = {t.kind for sc in TXN_SCENARIOS
             for t in TxnEncoding(_txn_model(sc, "kafka"), 1).templates}
    missing = frozenset(kinds - SEEN_KINDS)
    if missing:  # the random samples missed a kind: check the first reachable state that enables it
        for scenario in TXN_SCENARIOS:
            cross_check(scenario, "kafka", 0, kinds=missing)
    assert kinds <= SEEN_KINDS, kinds - SEEN_KINDS


def test_symbolic_invariants_equal_python_predicates() -> None:
    """The symbolic negation of each encoded invariant holds exactly on the states the Python predicate rejects."""
    violated = dict.fromkeys(TXN_INVARIANTS, 0)
    for scenario, variant in (("txn_kafka_12671_hanging", "pre_kip_890"),
                              ("txn_kafka_6119_timeout_zombie", "timeout_abort_without_epoch_bump"),
                              ("txn_kafka_12671_hanging", "complete_without_markers")):
        model = build_model(builtin_scenarios()[scenario], variant)
        props = {p.name: p for p in model.properties()}
        states = bfs_states(model)
        bad_states = [s for s in states if any(n in props and not props[n].holds(s) for n in TXN_INVARIANTS)]
        for s in random.Random(1).sample(states, 10) + bad_states[:10]:
            enc, values = encoding_for(model, s, 0)
            S = enc.state(0)
            solver = z3.SolverFor("QF_BV")
            solver.add(enc.equal_to(S, values))
            for name in TXN_INVARIANTS:
                if name not in props:
                    continue
                solver.push()
                solver.add(enc.bad(S, name))
                bad = solver.check() == z3.sat
                solver.pop()
                assert bad == (not props[name].holds(s)), (scenario, variant, name, s)
                violated[name] += bad
    assert all(violated.values()), violated


@pytest.mark.parametrize("scenario", TXN_SCENARIOS)
@pytest.mark.parametrize("variant", TXN_VARIANTS)
def test_bmc_and_bfs_agree_at_small_bounds(scenario: str, variant: str) -> None:
    """Every covered scenario x variant: the same violated invariants and shortest lengths at depth 4."""
    sc = builtin_scenarios()[scenario]
    assert bmc_covers(sc, variant)
    model = build_model(sc, variant)
    explicit, _ = explore(model, scenario, variant, ExploreOptions(max_depth=CROSS_DEPTH), sc.permitted)
    out = bmc_txn(model, scenario, variant, CROSS_DEPTH, 60, sc.permitted, events=False)
    assert out.depth_reached == CROSS_DEPTH and not out.disagreements
    bfs = {p.name: len(p.trace.actions) for p in explicit.violations() if p.trace and p.name in TXN_INVARIANTS}
    assert {n: len(t.actions) for n, t in out.traces.items()} == bfs


def test_bmc_finds_complete_without_markers_like_bfs() -> None:
    """A violation inside the cross-validation bound: same invariant, same shortest length (11), replayed."""
    name, variant = "txn_kafka_12671_hanging", "complete_without_markers"
    sc = builtin_scenarios()[name]
    model = build_model(sc, variant)
    explicit, _ = explore(model, name, variant, ExploreOptions(max_depth=11), sc.permitted)
    out = bmc_txn(model, name, variant, 11, 120, sc.permitted, events=False)
    bfs = {p.name: len(p.trace.actions) for p in explicit.violations() if p.trace and p.name in TXN_INVARIANTS}
    assert bfs == {"markers_before_complete": 11}
    assert {n: len(t.actions) for n, t in out.traces.items()} == bfs
    prop = next(p for p in model.properties() if p.name == "markers_before_complete")
    trace = out.traces["markers_before_complete"]
    assert trace.engine == "bmc" and replay_actions(build_model(sc, variant), trace.actions, prop).confirmed


def test_coverage_is_honest() -> None:
    """Covered exactly where the encoding is exact; everything else is reported uncovered with a reason."""
    scenarios = builtin_scenarios()
    for name in TXN_SCENARIOS:
        for variant in VARIANTS:
            if not variant_applies(VARIANTS[variant], scenarios[name].model)[0]:
                continue
            unencoded = [f for f in UNENCODED_FLAGS if not getattr(VARIANTS[variant].flags, f)]
            ok, why = bmc_coverage(scenarios[name], variant)
            assert ok == (not unencoded), (variant, why)
            assert all(f in why for f in unencoded)
    ok, why = bmc_coverage(scenarios["txn_coordinator_faults"], "kafka")
    assert not ok and "coordinator_failover" in why
    ok, why = bmc_coverage(scenarios["txn_send_rejected"], "kafka")  # SendRejected has no template
    assert not ok and "SendRejected" in why
    for sc in scenarios.values():
        if sc.model not in ("idempotence", "transactions"):
            assert not bmc_covers(sc, "kafka")
    result = run_bmc(scenarios["txn_coordinator_faults"], "kafka", EngineOptions(max_depth=2))
    assert result.stats["covered"] is False
    assert all(p.verdict is Verdict.UNTESTED for p in result.properties)


def test_disagreement_is_reported_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """A z3 witness that does not replay on TransactionalSystem is an engine disagreement, never a result."""
    real = TxnEncoding.action

    def broken(self: TxnEncoding, m: Any, k: Any, S: Any) -> Action:
        a = real(self, m, k, S)
        return Action("InitTransactions", (0,)) if a.kind == "Send" else a

    monkeypatch.setattr(TxnEncoding, "action", broken)
    name = "txn_kafka_12671_hanging"
    out = bmc_txn(build_model(builtin_scenarios()[name], "kafka"), name, "kafka", 8, 120, only=())
    assert "txn_opened_on_partition" in out.disagreements and "txn_opened_on_partition" not in out.reached


@pytest.mark.parametrize(("tv", "bumps"), [(1, True), (1, False), (2, True), (2, False)])
def test_coordinator_table_k_induction(tv: int, bumps: bool) -> None:
    assert prove_coordinator_table(tv, bumps)["result"] == "proved for all depths"


def test_coordinator_table_proof_fails_on_a_mutated_table() -> None:
    """The proof reads the table: let Ongoing precede CompleteCommit and a Complete* without Prepare* appears."""
    table = dict(VALID_PREVIOUS_STATES)
    table["CompleteCommit"] = (*table["CompleteCommit"], "Ongoing")
    assert prove_coordinator_table(2, True, table=table)["result"] == "base case fails"


def test_table_guard_is_generated_from_the_table() -> None:
    """``TxnEncoding.valid`` agrees with ``is_valid_transition`` on all 64 pairs."""
    enc = TxnEncoding(_txn_model("txn_kafka_12671_hanging", "kafka"), 1)
    x = enc.var("src")
    for src in STATES:
        for dst in STATES:
            got = z3.simplify(z3.substitute(enc.valid(x, dst), (x, enc.v(STATE_IDS[src]))))
            assert z3.is_true(got) is is_valid_transition(src, dst), (src, dst)


def test_engine_result_on_a_transactions_scenario() -> None:
    """``keos check --engine bmc`` on a transactions scenario: bounded verdicts, stats, the table proof."""
    result = run_bmc(builtin_scenarios()["txn_kafka_6119_timeout_zombie"], "kafka",
                     EngineOptions(max_depth=5, time_budget_s=60))
    assert result.stats["covered"] and result.stats["depth_reached"] == 5 and not result.violated
    assert result.stats["capacity_exceeded_at"] is None and not disagreements(result)
    assert result.stats["k_induction"]["result"] == "proved for all depths"
    verdicts = {p.name: p for p in result.properties}
    assert verdicts["valid_coordinator_transitions"].verdict is Verdict.UNTESTED  # not encoded: proved on the table
    assert verdicts["txn_prepare_commit"].verdict is Verdict.UNREACHED  # needs more than 5 steps



def _canonical(state: Any) -> Any:
    """The state up to the interleaving of different channels (each channel keeps its order)."""
    network = tuple(sorted(state.network, key=lambda e: (e.src, e.dst, e.connection)))
    return state._replace(network=network)


_SERVER_MSG = ("InitProducerIdRequest", "AddPartitionsToTxnRequest", "EndTxnRequest", "ProduceRequest",
               "WriteTxnMarkersRequest")


def _kind(action: Action) -> str:
    if action.kind != "Deliver":
        return action.kind
    return "server" if type(action.args[0].body).__name__ in _SERVER_MSG else "client_deliver"


@pytest.mark.parametrize("scenario", TXN_SCENARIOS)
def test_partial_order_reduction_swaps(scenario: str) -> None:
    """(*) of the reduction on BFS states: a server step then a client step that does not handle the
    server step's response can be swapped, ending in an equivalent state."""
    from keos.checker.bmc.txn_encoding import CLIENT_STEPS

    client_kinds = set(CLIENT_STEPS) - {"DeliverTxnResponse", "DeliverProduceResponse"} | {"client_deliver"}
    swaps = 0
    for variant in TXN_VARIANTS:
        model = build_model(builtin_scenarios()[scenario], variant)
        for s in random.Random(2).sample(bfs_states(model, 1500), 25):
            for a in model.actions(s):
                if _kind(a) != "server":
                    continue
                sa = model.step(s, a)
                assert sa is not None
                for b in model.actions(sa.state):
                    if _kind(b) not in client_kinds:
                        continue
                    if b.kind == "Deliver" and b.args[0] not in s.network:
                        continue  # b handles the response a created: not swapped
                    sb = model.step(s, b)
                    assert sb is not None, (model.format_action(a), model.format_action(b))
                    sba = model.step(sb.state, a)
                    assert sba is not None, (model.format_action(a), model.format_action(b))
                    assert _canonical(sba.state) == _canonical(model.step(sa.state, b).state)
                    swaps += 1
    assert swaps > 0


def test_capacities_are_checked_not_assumed() -> None:
    """A capacity too small for the depth is detected (never a silent cut-off) and the run restarts larger."""
    from keos.checker.bmc.txn import _bmc_once

    name, variant = "txn_kafka_12671_hanging", "complete_without_markers"
    model = build_model(builtin_scenarios()[name], variant)
    small = _bmc_once(model, name, variant, 11, 120, (), None, True, False, True, None, True, 0)
    assert small.capacity_exceeded_at is not None and small.depth_reached == small.capacity_exceeded_at - 1
    assert not small.traces


def test_capacity_checks_are_exact_under_the_reduction() -> None:
    """Capacities sit only on server steps, which the reduction never reorders, so reduced and unreduced
    capacity queries find the same first exceeding depth (see "Capacities under the reduction")."""
    from keos.checker.bmc.txn import _bmc_once

    for name in ("txn_kafka_12671_hanging", "txn_kafka_6119_timeout_zombie"):
        model = build_model(builtin_scenarios()[name], "kafka")
        enc = TxnEncoding(model, 4, prepares=1)
        S = enc.state(0)
        enc._base_ord = 0
        for tmpl in enc.templates:
            enc._ev, enc._caps = {}, []
            getattr(enc, f"_t_{tmpl.kind}")(S, *tmpl.args)
            assert not enc._caps or tmpl.kind in (*SERVER_STEPS, *UNSWAPPED_SERVER_STEPS), (name, tmpl.kind)
        found = [_bmc_once(model, name, "kafka", 16, 120, (), None, False, False, True, None, reduce, 0)
                 .capacity_exceeded_at for reduce in (True, False)]
        assert found[0] is not None and found[0] == found[1], (name, found)


def test_stop_on_first_leap_finds_a_shrunk_replaying_trace() -> None:
    """The leap search on the transactions core (as ``keos mutants --engine bmc`` runs it once a depth gets slow)."""
    name, variant = "txn_kafka_12671_hanging", "complete_without_markers"
    sc = builtin_scenarios()[name]
    model = build_model(sc, variant)
    out = bmc_txn(model, name, variant, 14, 120, sc.permitted, stop_on_first=True, leap_from=0)
    assert not out.disagreements and out.depth_reached == 0  # refuted leaps do not extend the depth reached
    prop = next(p for p in model.properties() if p.name == "markers_before_complete")
    trace = out.traces["markers_before_complete"]
    assert 11 <= len(trace.actions) <= 14  # 11 is the shortest (BFS)
    assert replay_actions(build_model(sc, variant), trace.actions, prop).confirmed
