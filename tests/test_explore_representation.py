"""The explicit search's state representation (issue 17): collapsed states, cached predicates, record equality.

The oracle is a plain breadth-first search whose visited set holds canonical
encodings (:func:`keos.model.codec.canonical`, which names every record's
class), so it depends neither on Python's tuple equality nor on the engine's
pools and caches.
"""

from __future__ import annotations

from collections import deque
from typing import Any, NamedTuple

import pytest

from keos.checker.explore.collapse import CollapsedStates
from keos.checker.explore.incremental import PredicateCache
from keos.checker.explore.search import ExploreOptions, explore
from keos.model import codec
from keos.model.interface import Expectation
from keos.model.protocol.messages import EndTxnResponse, InitProducerIdResponse
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()


def canonical_bfs(model: Any) -> list[Any]:
    """Every reachable state (within bounds), deduplicated by canonical encoding, in BFS order."""
    seen: set[str] = set()
    order: list[Any] = []
    queue: deque[Any] = deque()
    for s in model.init_states():
        c = codec.canonical(s)
        if c not in seen:
            seen.add(c)
            order.append(s)
            queue.append(s)
    while queue:
        s = queue.popleft()
        if not model.within_bounds(s):
            continue
        for a in model.actions(s):
            step = model.step(s, a)
            assert step is not None
            c = codec.canonical(step.state)
            if c not in seen:
                seen.add(c)
                order.append(step.state)
                queue.append(step.state)
    return order


def test_records_of_different_classes_are_different_values() -> None:
    a = InitProducerIdResponse(0, 0, "NONE", 0, 1)
    b = EndTxnResponse(0, 0, "NONE", 0, 1)
    assert tuple(a) == tuple(b)
    assert a != b and (a == b) is False and {a: 1}.get(b) is None
    same = InitProducerIdResponse(0, 0, "NONE", 0, 1)
    assert a == same and hash(a) == hash(same)


def test_replace_keeps_namedtuple_meaning() -> None:
    a = InitProducerIdResponse(0, 0, "NONE", 0, 1)
    b = a._replace(producer_epoch=2, error="PRODUCER_FENCED")
    assert type(b) is InitProducerIdResponse and b == InitProducerIdResponse(0, 0, "PRODUCER_FENCED", 0, 2)
    assert a._replace() == a
    with pytest.raises(TypeError):
        a._replace(nonexistent=1)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    "name",
    ["idempotence_retry", "txn_kafka_12671_hanging", "txn_kafka_17754_delayed_endtxn", "connect_connector_boundaries",
     "groups_eager_rebalance", "txn_eos_abort_and_seek", "authz_client_denied"],
)
def test_explore_counts_the_states_a_canonical_search_counts(name: str) -> None:
    """Exact: the collapsed visited set neither merges distinct states nor splits equal ones."""
    scenario = SCENARIOS[name]
    model = build_model(scenario, scenario.variant)
    expected = canonical_bfs(model)
    result, _ = explore(model, name, scenario.variant, ExploreOptions(max_states=0))
    assert result.stats["distinct_states"] == len(expected)


class _Small(NamedTuple):
    a: int
    b: tuple[int, ...]
    c: str


def test_collapsed_states_round_trip_and_reuse_parent_fields() -> None:
    table = CollapsedStates()
    s0 = _Small(1, (1, 2), "x")
    k0 = table.key(s0)
    assert table.add(k0, 0) == (0, True)
    s1 = s0._replace(a=2)
    k1 = table.key(s1, s0, k0)
    assert k1[1:] == k0[1:] and k1[0] != k0[0]
    assert table.add(k1, 1) == (1, True)
    assert table.add(table.key(_Small(2, (1, 2), "x")), 1) == (1, False)  # equal value, other objects
    assert table.state(1) == s1 and type(table.state(1)) is _Small and table.depth(1) == 1
    assert table.find(_Small(1, (1, 2), "x")) == 0 and table.find(_Small(9, (1, 2), "x")) is None
    assert table.pool_sizes() == (2, 1, 1)


def test_collapsed_states_of_plain_values() -> None:
    table = CollapsedStates()
    assert table.add(table.key("a"), 0) == (0, True)
    assert table.add(table.key("b"), 1) == (1, True)
    assert table.add(table.key("a"), 2) == (0, False)
    assert table.state(1) == "b"


def test_predicate_cache_keys_on_what_each_evaluation_read() -> None:
    calls: list[_Small] = []

    def short_circuit(s: _Small) -> bool:
        calls.append(s)
        return s.a > 0 or "z" in s.c  # reads c only when a <= 0

    table = CollapsedStates()
    cache = PredicateCache([short_circuit])

    def judge(s: _Small) -> bool:
        sid, _ = table.add(table.key(s), 0)
        return cache.holds(0, s, table.key_of(sid))

    assert judge(_Small(1, (), "a")) is True
    assert judge(_Small(1, (5,), "b")) is True  # only a was read: a hit
    assert len(calls) == 1
    assert judge(_Small(0, (), "z")) is True and judge(_Small(0, (7,), "z")) is True  # a and c read
    assert judge(_Small(0, (), "q")) is False
    assert len(calls) == 3 and cache.hits == 2


def test_predicate_cache_treats_whole_state_use_as_reading_every_field() -> None:
    def whole(s: _Small) -> bool:
        _a, b, _c = s  # unpacking iterates the state
        return len(b) > 0

    table = CollapsedStates()
    cache = PredicateCache([whole])
    results = []
    for s in (_Small(1, (), "a"), _Small(1, (3,), "a"), _Small(2, (), "a")):
        sid, _ = table.add(table.key(s), 0)
        results.append(cache.holds(0, s, table.key_of(sid)))
    assert results == [False, True, False] and cache.hits == 0


def _native_read(s: _Small) -> bool:
    """What mypyc makes of ``s.b`` in a function typed for the record: a direct tuple item read, which refuses a
    non-tuple and which no accessor of a tuple subclass sees (mypyc/irbuild/expression.py)."""
    return len(tuple.__getitem__(s, 1)) > 0


def test_predicate_view_under_the_compiled_model_notes_reads_and_refusals() -> None:
    """With the compiled model served, predicates see a view that is no tuple (``_view_class``): attribute
    reads are noted as before, and a compiled function that reads the record directly refuses it, so that
    predicate is evaluated on the state as reading every field -- never cached under too few fields."""
    table = CollapsedStates()

    def judge(cache: PredicateCache, k: int, s: _Small) -> bool:
        sid, _ = table.add(table.key(s), 0)
        return cache.holds(k, s, table.key_of(sid))

    hidden = PredicateCache([lambda s: s.a >= 0 and _native_read(s)])  # the tuple subclass (interpreted model)
    assert judge(hidden, 0, _Small(1, (), "a")) is False
    assert judge(hidden, 0, _Small(1, (2,), "a")) is False  # a wrong hit: the direct read of b went unseen

    view = PredicateCache([lambda s: s.a >= 0 and _native_read(s), lambda s: s.a > 0 or s.c == "z"])
    view._opaque = True  # as when keos._compiled_model serves the model
    assert judge(view, 0, _Small(1, (), "a")) is False
    assert judge(view, 0, _Small(1, (2,), "a")) is True  # read whole: no hit
    assert view.refused == 2 and view.hits == 0
    assert judge(view, 1, _Small(1, (), "a")) is True and judge(view, 1, _Small(1, (5,), "b")) is True
    assert judge(view, 1, _Small(0, (), "z")) is True and judge(view, 1, _Small(0, (), "q")) is False
    assert view.hits == 1 and view.refused == 2  # the second: only a was read


def test_predicate_view_looks_like_the_record() -> None:
    """The view answers ``isinstance``, field names, ``len``, iteration, equality and the record's own methods
    as the state does (the last four as reading it whole)."""
    from keos.checker.explore.incremental import _Reads, _view_class

    reads = _Reads()
    state = _Small(1, (2,), "c")
    v = _view_class(_Small, reads)(state)
    assert isinstance(v, _Small) and isinstance(v, tuple) and v._fields == _Small._fields
    assert v.c == "c" and reads.fields == {2} and not reads.all
    assert len(v) == 3 and list(v) == list(state) and v == state and v._replace(a=5) == state._replace(a=5)
    assert reads.all


@pytest.mark.parametrize("opaque", [False, True])
@pytest.mark.parametrize("name", ["txn_kafka_12671_hanging", "groups_coordinator_failover", "idempotence_retry"])
def test_predicates_on_the_view_equal_direct_evaluation(name: str, opaque: bool) -> None:
    """Both views (tuple subclass; under the compiled model the non-tuple view) give every predicate's
    direct result on every reachable state."""
    scenario = SCENARIOS[name]
    model = build_model(scenario, scenario.variant)
    props = [p for p in model.properties() if p.predicate is not None and p.expectation is not None]
    table = CollapsedStates()
    cache = PredicateCache([p.predicate for p in props])  # type: ignore[misc]
    cache._opaque = opaque
    everything = tuple(range(len(props)))
    for s in canonical_bfs(model):
        sid, _ = table.add(table.key(s), 0)
        assert cache.failing(everything, s, table.key_of(sid)) == tuple(k for k in everything if not props[k].holds(s))
    assert cache.hits > 0


@pytest.mark.parametrize(
    "name", ["txn_kafka_12671_hanging", "connect_offset_tombstones", "groups_coordinator_failover"]
)
def test_cached_predicates_equal_direct_evaluation_on_every_reachable_state(name: str) -> None:
    scenario = SCENARIOS[name]
    model = build_model(scenario, scenario.variant)
    props = [p for p in model.properties() if p.predicate is not None and p.expectation is not None]
    table = CollapsedStates()
    cache = PredicateCache([p.predicate for p in props])  # type: ignore[misc]
    for s in canonical_bfs(model):
        sid, _ = table.add(table.key(s), 0)
        key = table.key_of(sid)
        for k, p in enumerate(props):
            assert cache.holds(k, s, key) == p.holds(s), (p.name, s)
    assert cache.hits > 0  # the cache did serve judgements
    assert any(p.expectation is Expectation.ALWAYS for p in props)


@pytest.mark.parametrize("name", ["txn_kafka_12671_hanging", "groups_coordinator_failover", "idempotence_retry"])
def test_grouped_predicates_equal_direct_evaluation_on_every_reachable_state(name: str) -> None:
    """``PredicateCache.failing`` (the search's one call per state: predicates grouped by read set) names
    exactly the false predicates, in the order asked, for every subset the search may ask about."""
    scenario = SCENARIOS[name]
    model = build_model(scenario, scenario.variant)
    props = [p for p in model.properties() if p.predicate is not None and p.expectation is not None]
    table = CollapsedStates()
    cache = PredicateCache([p.predicate for p in props])  # type: ignore[misc]
    everything = tuple(range(len(props)))
    odd = everything[1::2]
    seen_false = 0
    for s in canonical_bfs(model):
        sid, _ = table.add(table.key(s), 0)
        key = table.key_of(sid)
        want = tuple(k for k in everything if not props[k].holds(s))
        assert cache.failing(everything, s, key) == want, s
        assert cache.failing(odd, s, key) == tuple(k for k in want if k in odd)
        seen_false += bool(want)
    assert seen_false > 0 and cache.hits > 0


@pytest.mark.parametrize("engine", ["sequential", "level"])
def test_stop_on_first_does_not_stop_at_a_permitted_violation(engine: str) -> None:
    """``stop_on_first`` (``keos mutants``, ``keos mutate``) stops at the first *verdict*: a permitted,
    documented violation (acks=1 may lose and duplicate records) is none, so the search goes on and every
    other invariant is still judged -- found by ``keos mutate``, whose unmutated model was "killed" because
    the search stopped early and left the rest untested."""
    from keos.checker.explore.parallel import ParallelOptions, explore_levels
    from keos.checker.explore.search import ExploreOptions, explore
    from keos.checker.results import Verdict
    from keos.scenarios import build_model, resolve_scenario

    sc = resolve_scenario("reach_idempotence_acks1")
    assert sc.permitted
    model = build_model(sc, "kafka")
    if engine == "sequential":
        full, _ = explore(model, sc.name, "kafka", ExploreOptions(), sc.permitted)
        first, _ = explore(model, sc.name, "kafka", ExploreOptions(stop_on_first=True), sc.permitted)
    else:
        full = explore_levels(model, sc.name, "kafka", ParallelOptions(), sc.permitted)
        first = explore_levels(model, sc.name, "kafka", ParallelOptions(stop_on_first=True), sc.permitted)
    assert any(r.verdict is Verdict.PERMITTED for r in first.properties)
    assert [(r.name, r.verdict) for r in first.properties] == [(r.name, r.verdict) for r in full.properties]
    assert first.complete and first.stats["distinct_states"] == full.stats["distinct_states"]


def test_generated_child_key_equals_the_general_key_on_every_transition() -> None:
    """Issue 27: the search's successor key is generated per state shape (unrolled over the fields); it
    must name exactly what :meth:`CollapsedStates.key` names, whatever the step kept, rebuilt or added."""
    scenario = SCENARIOS["idempotence_retry"]
    model = build_model(scenario, scenario.variant)
    fast, slow = CollapsedStates(), CollapsedStates()
    init = model.init_states()[0]
    k_fast, k_slow = fast.key(init), slow.key(init)
    child_key = fast.child_key_function()
    assert child_key is not fast.child_key  # a generated function, not the method
    queue, seen, compared = deque([(init, k_fast, k_slow)]), {k_fast}, 0
    while queue and compared < 3000:
        state, kf, ks = queue.popleft()
        for action in model.actions(state):
            nxt = model.step(state, action).state  # type: ignore[union-attr]
            cf, cs = child_key(nxt, state, kf), slow.key(nxt, state, ks)
            assert fast.state_of_key(cf) == slow.state_of_key(cs) == nxt
            compared += 1
            if fast.add(cf, 0)[1]:
                seen.add(cf)
                slow.add(cs, 0)
                queue.append((nxt, cf, cs))
    assert compared >= 3000 and fast.pool_sizes() == slow.pool_sizes()
    with pytest.raises(TypeError):
        child_key(_Small(1, (), "x"), init, k_fast)  # a state of another type is refused, never keyed


def test_explore_resumes_the_garbage_collector_it_paused() -> None:
    import gc

    scenario = SCENARIOS["reach_idempotence_acks0"]
    model = build_model(scenario, scenario.variant)
    assert gc.isenabled()
    explore(model, scenario.name, scenario.variant, ExploreOptions(), scenario.permitted)
    assert gc.isenabled()
    gc.disable()
    try:
        explore(model, scenario.name, scenario.variant, ExploreOptions(), scenario.permitted)
        assert not gc.isenabled()
    finally:
        gc.enable()
