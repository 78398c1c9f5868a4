"""The z3 transactions engine: the encoding is TransactionalSystem.step, BMC finds the known bugs, BFS agrees."""

from __future__ import annotations

import random
from collections import deque
from typing import Any

import pytest
import z3

from checker.bmc_txn_encoding import TXN_INVARIANTS, TxnEncoding, TxnTemplate
from model.interface import Action
from scenarios import build_model, builtin_scenarios

TXN_SCENARIOS = ("txn_kafka_12671_hanging", "txn_kafka_17754_delayed_endtxn", "txn_kafka_6119_timeout_zombie")
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


def cross_check(scenario: str, variant: str, samples: int, seed: int = 0) -> int:
    model = build_model(builtin_scenarios()[scenario], variant)
    states = bfs_states(model)
    rng = random.Random(seed)
    picked = rng.sample(states, min(samples, len(states)))
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
            if py is not None:
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
    assert cross_check(scenario, variant, 6, seed=TXN_VARIANTS.index(variant)) > 0


def test_symbolic_invariants_equal_python_predicates() -> None:
    for scenario, variant in (("txn_kafka_12671_hanging", "pre_kip_890"),
                              ("txn_kafka_6119_timeout_zombie", "timeout_abort_without_epoch_bump"),
                              ("txn_kafka_12671_hanging", "complete_without_markers")):
        model = build_model(builtin_scenarios()[scenario], variant)
        props = {p.name: p for p in model.properties()}
        states = bfs_states(model)
        violated = {n: 0 for n in TXN_INVARIANTS}
        for s in random.Random(1).sample(states, min(60, len(states))) + states[-20:]:
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
