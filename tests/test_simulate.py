"""Random walks with swarm fault injection (checker/simulate.py): determinism, weighting, minimisation."""

from __future__ import annotations

import hashlib

import pytest

from keos.checker.minimize import fails
from keos.checker.sweep.archive import ARCHIVE
from keos.checker.sweep.simulate import (
    BRANCH,
    BRANCH_RESTARTS,
    FAULT_TRIGGER,
    NEWEST_FIRST,
    NEWEST_FIRST_CAP,
    NEWEST_FIRST_RATE,
    PRIORITY_CHANGES,
    PROFILES,
    PROTOCOL_BIAS,
    PROTOCOL_BIAS_SPREAD,
    TRIGGER_BOOST,
    TRIGGER_SHARE,
    derive_seed,
    fault_profile,
    fault_trigger,
    investigate,
    lane,
    protocol_bias,
    random_walk,
    shape,
    signature,
    swarm_profile,
)
from keos.checker.trace import replay_actions
from keos.model.interface import Action
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()


def model(scenario: str = "idempotence_retry", variant: str | None = None):
    return build_model(SCENARIOS[scenario], variant)


def test_derive_seed_is_stable_and_fits_int64() -> None:
    a = derive_seed(7, "idempotence_retry/kafka/swarm/3")
    assert a == derive_seed(7, "idempotence_retry/kafka/swarm/3")
    assert a != derive_seed(8, "idempotence_retry/kafka/swarm/3")
    assert a != derive_seed(7, "idempotence_retry/kafka/swarm/4")
    assert 0 <= a < 2**63
    # pinned: the derivation is blake2b, not hash(), so it never changes between processes
    assert derive_seed(0, 0) == derive_seed(0, "0")
    expected = int.from_bytes(hashlib.blake2b(b"0:0", digest_size=8).digest(), "big") >> 1
    assert derive_seed(0, 0) == expected == 7689419447139100721


def test_swarm_profile_is_a_random_nonempty_subset_with_bounded_weights() -> None:
    kinds = model().fault_kinds()
    assert set(kinds) == {"drop", "duplicate", "request_timeout", "leader_restart"}
    subsets = set()
    biased = newest = triggered = branching = 0
    for seed in range(200):
        profile = swarm_profile(kinds, seed)
        assert profile == swarm_profile(kinds, seed)
        faults = {k: w for k, w in profile.items() if not k.startswith("~")}
        assert set(profile) - set(faults) <= {PROTOCOL_BIAS, NEWEST_FIRST, FAULT_TRIGGER, BRANCH, ARCHIVE}
        assert profile.get(BRANCH, BRANCH_RESTARTS) == BRANCH_RESTARTS
        assert faults and set(faults) <= set(kinds)
        assert all(1 / 8 <= w <= 2 for w in faults.values())
        assert profile.get(PROTOCOL_BIAS, PROTOCOL_BIAS_SPREAD) == PROTOCOL_BIAS_SPREAD
        assert NEWEST_FIRST_RATE[0] <= profile.get(NEWEST_FIRST, NEWEST_FIRST_RATE[0]) <= NEWEST_FIRST_RATE[1]
        if FAULT_TRIGGER in profile:
            assert TRIGGER_SHARE[0] - 1e-4 <= profile[FAULT_TRIGGER] <= TRIGGER_SHARE[1] + 1e-4
        subsets.add(frozenset(faults))
        biased += PROTOCOL_BIAS in profile
        newest += NEWEST_FIRST in profile
        triggered += FAULT_TRIGGER in profile
        branching += BRANCH in profile
    assert len(subsets) > 10  # runs really differ in which faults they enable
    assert 60 < biased < 140  # half of the runs carry a protocol bias, the rest weigh every step 1
    # and, independently, newest-first, fault triggers and fault branching
    assert 60 < newest < 140 and 60 < triggered < 140 and 60 < branching < 140
    assert swarm_profile((), 1) == {}
    assert fault_profile("uniform", kinds, 1) == {k: 1.0 for k in kinds}
    assert fault_profile("none", kinds, 1) == {}
    assert set(PROFILES) == {"swarm", "uniform", "none"}
    with pytest.raises(ValueError, match="unknown fault profile"):
        fault_profile("chaos", kinds, 1)


def test_walk_is_deterministic_given_its_seed() -> None:
    m = model()
    walks = [random_walk(m, seed, 40, swarm_profile(m.fault_kinds(), seed)) for seed in range(30)]
    again = [random_walk(m, seed, 40, swarm_profile(m.fault_kinds(), seed)) for seed in range(30)]
    assert [(w.actions, w.events, w.faults, w.reached) for w in walks] == [
        (w.actions, w.events, w.faults, w.reached) for w in again
    ]
    assert len({tuple(w.actions) for w in walks}) > 15
    for w in walks:
        assert w.steps <= 40
        # every action was enabled where it was taken: the walk replays
        state = m.init_states()[0]
        for a in w.actions:
            step = m.step(state, a)
            assert step is not None
            state = step.state
        if w.quiescent:
            assert m.actions(state) == [] or all(m.fault_kind(a) is not None for a in m.actions(state))


def test_fault_weights_select_which_faults_are_injected() -> None:
    m = model()
    for seed in range(40):
        none = random_walk(m, seed, 50, {})
        assert all(m.fault_kind(a) is None for a in none.actions)
        assert none.faults == {}
        only_drop = random_walk(m, seed, 50, {"drop": 2.0})
        assert {m.fault_kind(a) for a in only_drop.actions} <= {None, "drop"}
    heavy = sum(random_walk(m, s, 50, {"drop": 2.0}).faults.get("drop", 0) for s in range(60))
    light = sum(random_walk(m, s, 50, {"drop": 0.125}).faults.get("drop", 0) for s in range(60))
    assert heavy > light


def test_real_protocol_holds_on_random_walks() -> None:
    m = model()
    walks = [random_walk(m, derive_seed(1, i), 50, swarm_profile(m.fault_kinds(), i)) for i in range(150)]
    assert all(w.violation is None for w in walks)
    assert sum(sum(w.faults.values()) for w in walks) > 100
    assert {"retry_deduplicated", "concurrent_in_flight"} <= set().union(*(w.reached for w in walks))


def _violating_walks(variant: str, n: int = 400):
    m = model("idempotence_retry", variant)
    walks = [random_walk(m, derive_seed(3, i), 50, swarm_profile(m.fault_kinds(), i)) for i in range(n)]
    return m, [w for w in walks if w.violation is not None]


def test_walk_stops_at_the_first_violation_and_investigate_minimises_it() -> None:
    m, bad = _violating_walks("no_idempotence")
    assert len(bad) > 20
    cache: dict[tuple[str, tuple[Action, ...]], list[Action]] = {}
    for w in bad[:15]:
        prop = next(p for p in m.properties() if p.name == w.violation)
        assert fails(m, w.actions, prop) == len(w.actions)  # violated at the last step, not before
        finding = investigate(m, w, "idempotence_retry", "no_idempotence", cache=cache)
        assert finding is not None
        trace = finding.trace
        assert trace.engine == "sweep" and trace.seed == w.seed and trace.invariant == w.violation
        assert len(trace.actions) <= len(w.actions)
        replayed = replay_actions(m, trace.actions, prop)
        assert replayed.confirmed and replayed.violated_at == len(trace.actions)
        # 1-minimal: dropping any single action no longer violates at the end
        for i in range(len(trace.actions)):
            assert fails(m, trace.actions[:i] + trace.actions[i + 1 :], prop) < 0
        assert finding.signature == signature(w.violation, trace.actions)
        assert finding.shape == shape(trace.actions)
    assert investigate(m, random_walk(m, 1, 0, {}), "idempotence_retry", "no_idempotence") is None


def test_signature_is_invariant_plus_shape() -> None:
    a = [Action("Send", (0,)), Action("SendProduce", (0, 0))]
    b = [Action("Send", (1,)), Action("SendProduce", (1, 1))]
    assert signature("no_duplicate_append", a) == signature("no_duplicate_append", b)
    assert signature("no_duplicate_append", a) != signature("no_acked_loss", a)
    assert signature("no_duplicate_append", a) != signature("no_duplicate_append", a[:1])
    assert len(signature("x", a)) == 16


def _reference_walk(m, seed: int, steps: int, weights: dict[str, float]):
    """The walk written plainly (classify, pick, step, check everything every step): the optimised one must agree."""
    import random

    from keos.model.interface import Expectation

    props = m.properties()
    rng = random.Random(seed)
    state = m.init_states()[0]
    taken, events, faults, reached = [], {}, {}, set()
    bad = next((p.name for p in props if p.expectation is Expectation.ALWAYS and not p.holds(state)), None)
    reached |= {p.name for p in props if p.expectation is Expectation.SOMETIMES and p.holds(state)}
    quiescent = False
    spread = weights.get(PROTOCOL_BIAS, 0.0)
    rate = weights.get(NEWEST_FIRST, 0.0)
    share = weights.get(FAULT_TRIGGER, 0.0)
    restarts = int(weights.get(BRANCH, 0))
    since: dict[Action, int] = {}  # protocol step -> first step of its current enabled stretch
    points: list[list] = []  # fault points of the current path: [times restarted from, depth, state, since]
    while bad is None:
        if quiescent or len(taken) >= steps:
            if not restarts or not points:
                break
            restarts -= 1
            low = min(p[0] for p in points)
            pick = [p for p in points if p[0] == low]
            point = pick[rng.randrange(len(pick))]
            point[0] += 1
            del taken[point[1] :]
            state, since, quiescent = point[2], dict(point[3]), False
            points = [p for p in points if p[1] <= point[1]]
            continue
        enabled = m.actions(state)
        since = {a: since.get(a, len(taken)) for a in enabled if m.fault_kind(a) is None}
        last = lane(taken[-1]) if taken else ""  # "" = the initial state, its one "step"
        occurrence = sum(lane(a) == last for a in taken) if taken else 1

        def protocol(a: Action, since: dict[Action, int] = since) -> float:
            change = min(sum(lane(b) == lane(a) for b in taken), PRIORITY_CHANGES)  # the lane's k-th step
            w = protocol_bias(seed, f"{lane(a)}#{change}", spread) if spread else 1.0
            return w * 2.0 ** -(rate * min(len(taken) - since[a], NEWEST_FIRST_CAP))

        def fault(kind: str, last: str = last, occurrence: int = occurrence) -> float:
            w = weights.get(kind, 0.0)
            if not share:
                return w
            return w * TRIGGER_BOOST if fault_trigger(seed, last, kind, share) == occurrence else 0.0

        options = [(a, protocol(a) if m.fault_kind(a) is None else fault(m.fault_kind(a))) for a in enabled]
        options = [(a, w) for a, w in options if w > 0.0]
        if not options:
            quiescent = True
            continue
        r = rng.random() * sum(w for _, w in options)
        i = 0
        while i < len(options) - 1 and r >= options[i][1]:
            r -= options[i][1]
            i += 1
        action = options[i][0]
        step = m.step(state, action)
        state = step.state
        taken.append(action)
        if m.fault_kind(action) is not None:
            faults[m.fault_kind(action)] = faults.get(m.fault_kind(action), 0) + 1
        for ev in step.events:
            events[ev] = events.get(ev, 0) + 1
            reached |= {p.name for p in props if p.expectation is Expectation.SOMETIMES and p.matches_event(ev)}
        reached |= {p.name for p in props if p.expectation is Expectation.SOMETIMES and p.holds(state)}
        bad = next((p.name for p in props if p.expectation is Expectation.ALWAYS and not p.holds(state)), None)
        if restarts and m.fault_kind(action) is not None and bad is None:
            points.append([0, len(taken), state, dict(since)])
    return taken, bad, quiescent, events, faults, tuple(sorted(reached))


class _WithoutFaultHook:
    """A model that hides the optional FaultHooks.fault_kind: the walk classifies faults by their events."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def __getattr__(self, name: str):
        if name == "fault_kind":
            raise AttributeError(name)
        return getattr(self._inner, name)


@pytest.mark.parametrize("variant", [None, "no_idempotence"])
def test_walk_equals_the_plain_reference_walk_with_and_without_the_fault_hook(variant: str | None) -> None:
    m = model("idempotence_retry", variant)
    hidden = _WithoutFaultHook(m)
    assert not hasattr(hidden, "fault_kind")
    violations = 0
    for i in range(120):
        seed = derive_seed(4, i)
        weights = swarm_profile(m.fault_kinds(), seed)
        expected = _reference_walk(m, seed, 50, weights)
        for subject in (m, hidden):
            w = random_walk(subject, seed, 50, weights)
            assert (w.actions, w.violation, w.quiescent, w.events, w.faults, w.reached) == expected
        violations += expected[1] is not None
    assert (violations > 0) == (variant == "no_idempotence")


def test_protocol_bias_is_a_pure_function_of_seed_and_lane_and_shapes_the_walk() -> None:
    """The protocol bias (swarm testing of protocol steps): per lane, a weight in [2**-s, 2**s] that depends
    only on the run's seed and the lane, so a biased walk replays exactly; different seeds order the lanes
    differently; and a biased walk differs from the unbiased one of the same seed."""
    assert protocol_bias(7, "Deliver:ProduceRequest", 8.0) == protocol_bias(7, "Deliver:ProduceRequest", 8.0)
    weights = [protocol_bias(seed, lane_name, 8.0) for seed in range(50) for lane_name in ("A", "B", "C")]
    assert all(2.0**-8 <= w <= 2.0**8 for w in weights)
    assert len({round(w, 6) for w in weights}) > 100
    m = model()
    kinds = m.fault_kinds()
    differs = 0
    for seed in range(20):
        plain = {k: 1.0 for k in kinds}
        biased = {**plain, PROTOCOL_BIAS: PROTOCOL_BIAS_SPREAD}
        a = random_walk(m, seed, 30, biased)
        assert a.actions == random_walk(m, seed, 30, biased).actions
        differs += a.actions != random_walk(m, seed, 30, plain).actions
    assert differs > 10


def test_lane_names_a_delivery_by_its_message() -> None:
    m = model()
    state = m.init_states()[0]
    lanes = set()
    for _ in range(12):
        actions = m.actions(state)
        if not actions:
            break
        lanes |= {lane(a) for a in actions}
        state = m.step(state, actions[-1]).state
    assert any(name.startswith("Deliver:") and name != "Deliver:" for name in lanes), lanes
