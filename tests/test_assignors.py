"""The assignors: the book's worked examples, properties over random subscriptions, z3 bounds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from keos.checker.assignor_bounds import minimal_moves, optimal_spread, prove_range_spread
from keos.invariants.assignors import (
    EXPECTED,
    AssignorCase,
    evaluate,
    minimal_moves_equal,
    spread,
)
from keos.model.coordinator.group.assignors import (
    ASSIGNORS,
    AssignorError,
    Subscription,
    TopicPartition,
    _collect_owned,
    _general_assign,
    cooperative_rounds,
    cooperative_sticky_assign,
    load_assignor,
    moved_partitions,
    range_assign,
    round_robin_assign,
    run_assignor,
    sticky_assign,
    with_owned,
)

S = Subscription.of


def names(assignment: Mapping[str, tuple[TopicPartition, ...]]) -> dict[str, list[str]]:
    return {m: [str(tp) for tp in parts] for m, parts in assignment.items()}


# --------------------------------------------------------------------------- the book's worked examples

TWO_TOPICS = {"C0": S("t0", "t1"), "C1": S("t0", "t1")}
UNEQUAL = {"C0": S("t0"), "C1": S("t0", "t1"), "C2": S("t0", "t1", "t2")}
UNEQUAL_SIZES = {"t0": 1, "t1": 2, "t2": 3}
FOUR_TOPICS = {f"t{i}": 2 for i in range(4)}


def test_range_four_partitions_each_is_even() -> None:
    assert names(range_assign({"t0": 4, "t1": 4}, TWO_TOPICS)) == {
        "C0": ["t0p0", "t0p1", "t1p0", "t1p1"], "C1": ["t0p2", "t0p3", "t1p2", "t1p3"]}


def test_range_three_partitions_each_gives_the_first_member_both_extras() -> None:
    a = range_assign({"t0": 3, "t1": 3}, TWO_TOPICS)
    assert names(a) == {"C0": ["t0p0", "t0p1", "t1p0", "t1p1"], "C1": ["t0p2", "t1p2"]}
    verdicts = evaluate(AssignorCase("range", {"t0": 3, "t1": 3}, TWO_TOPICS), a)
    assert verdicts["exactly_once"] is None
    assert verdicts["balanced"] == "equal subscriptions but C0 has 4 partitions and C1 has 2"
    assert verdicts["per_topic_balanced"] is None  # Range's own promise: within each topic, one extra at most


def test_an_assignment_that_piles_a_topic_on_one_subscriber_breaks_per_topic_balance() -> None:
    """Range's imbalance across topics is known; within a topic it promises shares that differ by one at most
    (an extra given to every member in turn, or to the first twice, is caught, whatever the subscriptions)."""
    subs = {"C0": Subscription(("t0", "t1")), "C1": Subscription(("t0",))}
    case = AssignorCase("piled", {"t0": 3, "t1": 2}, subs)
    piled = {"C0": (TopicPartition("t0", 0), TopicPartition("t0", 1), TopicPartition("t0", 2),
                    TopicPartition("t1", 0), TopicPartition("t1", 1)), "C1": ()}
    assert evaluate(case, piled)["per_topic_balanced"] == (
        "topic t0: subscriber C0 has 3 of its partitions and C1 has 0")
    assert evaluate(case, range_assign({"t0": 3, "t1": 2}, subs))["per_topic_balanced"] is None


def test_round_robin_equal_subscriptions() -> None:
    assert names(round_robin_assign({"t0": 3, "t1": 3}, TWO_TOPICS)) == {
        "C0": ["t0p0", "t0p2", "t1p1"], "C1": ["t0p1", "t1p0", "t1p2"]}


def test_round_robin_unequal_subscriptions_is_not_optimal() -> None:
    a = round_robin_assign(UNEQUAL_SIZES, UNEQUAL)
    assert names(a) == {"C0": ["t0p0"], "C1": ["t1p0"], "C2": ["t1p1", "t2p0", "t2p1", "t2p2"]}
    case = AssignorCase("rr", UNEQUAL_SIZES, UNEQUAL)
    assert evaluate(case, a)["no_improving_move"] == "t1p1 could move from C2 (4 partitions) to subscriber C1 (1)"
    # z3: no assignment at all has spread <= 1 here, 2 is optimal, and Sticky reaches it.
    assert optimal_spread(UNEQUAL_SIZES, UNEQUAL) == 2
    assert spread(a) == 3


def test_sticky_unequal_subscriptions_is_the_optimum() -> None:
    a = sticky_assign(UNEQUAL_SIZES, UNEQUAL)
    assert names(a) == {"C0": ["t0p0"], "C1": ["t1p0", "t1p1"], "C2": ["t2p0", "t2p1", "t2p2"]}
    verdicts = evaluate(AssignorCase("s", UNEQUAL_SIZES, UNEQUAL), a)
    # sticky balances members' totals, not each topic's shares: the optimum leaves C2 none of t1's two partitions
    assert verdicts.pop("per_topic_balanced") == "topic t1: subscriber C1 has 2 of its partitions and C2 has 0"
    assert all(v is None for v in verdicts.values())


def test_sticky_keeps_the_survivors_partitions_when_a_member_leaves() -> None:
    members = {c: S(*FOUR_TOPICS) for c in ("C0", "C1", "C2")}
    first = sticky_assign(FOUR_TOPICS, members)
    assert first == round_robin_assign(FOUR_TOPICS, members)  # "looks the same as RoundRobin"
    assert names(first) == {"C0": ["t0p0", "t1p1", "t3p0"], "C1": ["t0p1", "t2p0", "t3p1"], "C2": ["t1p0", "t2p1"]}
    survivors = with_owned({c: members[c] for c in ("C0", "C2")}, first, generation=1)

    rr = round_robin_assign(FOUR_TOPICS, survivors)
    assert names(rr) == {"C0": ["t0p0", "t1p0", "t2p0", "t3p0"], "C2": ["t0p1", "t1p1", "t2p1", "t3p1"]}
    kept_before = {c: first[c] for c in ("C0", "C2")}
    assert sorted(map(str, moved_partitions(kept_before, rr))) == ["t1p0", "t1p1"]  # the survivors swap two

    # Kafka 2.0's StickyAssignor (the book's) had only the general builder: exactly the book's result.
    general = _general_assign(FOUR_TOPICS, survivors, _collect_owned(FOUR_TOPICS, survivors))
    assert names(general) == {"C0": ["t0p0", "t1p1", "t2p0", "t3p0"], "C2": ["t0p1", "t1p0", "t2p1", "t3p1"]}
    # Kafka 4.0 (the constrained builder for equal subscriptions): C1's partitions are dealt in
    # (topic, partition) order, so C0 takes t0p1 instead of t2p0 -- still no survivor loses one.
    constrained = sticky_assign(FOUR_TOPICS, survivors)
    assert names(constrained) == {"C0": ["t0p0", "t0p1", "t1p1", "t3p0"], "C2": ["t1p0", "t2p0", "t2p1", "t3p1"]}
    for a in (general, constrained):
        assert not moved_partitions(kept_before, a)
    case = AssignorCase("leave", FOUR_TOPICS, survivors, previous=first)
    assert evaluate(case, rr)["minimal_movement"] is not None
    assert evaluate(case, constrained)["minimal_movement"] is None


def test_cooperative_sticky_withholds_moving_partitions_for_one_rebalance() -> None:
    members = {c: S(*FOUR_TOPICS) for c in ("C0", "C1", "C2")}
    first = sticky_assign(FOUR_TOPICS, members)
    joined = with_owned(members, first, generation=1) | {"C3": S(*FOUR_TOPICS)}
    round1 = cooperative_sticky_assign(FOUR_TOPICS, joined)
    assert names(round1) == {"C0": ["t0p0", "t3p0"], "C1": ["t0p1", "t2p0"], "C2": ["t1p0", "t2p1"], "C3": []}
    case1 = AssignorCase("join", FOUR_TOPICS, joined, previous=first)
    verdicts = evaluate(case1, round1)
    assert verdicts["at_most_once"] is None and verdicts["no_transfer"] is None
    assert verdicts["exactly_once"] == "t1p1 is subscribed but assigned to nobody"
    # The full sticky assignment hands t1p1 / t3p1 straight to C3 while C0 / C1 still own them.
    assert evaluate(case1, sticky_assign(FOUR_TOPICS, joined))["no_transfer"] is not None
    round2 = cooperative_sticky_assign(FOUR_TOPICS, with_owned(joined, round1, generation=2))
    assert names(round2)["C3"] == ["t1p1", "t3p1"]
    assert evaluate(AssignorCase("follow-up", FOUR_TOPICS, joined), round2)["exactly_once"] is None


def test_the_books_custom_assignors() -> None:
    broadcast = load_assignor("keos.scenarios.assignor_examples:broadcast")
    a = run_assignor(broadcast, {"t0": 2}, {"C0": S("t0"), "C1": S("t0")})
    assert evaluate(AssignorCase("b", {"t0": 2}, {"C0": S("t0"), "C1": S("t0")}), a)["exactly_once"] == (
        "t0p0 assigned 2 times (C0, C1)")
    rand = load_assignor("keos.scenarios.assignor_examples:random_assign")
    assert run_assignor(rand, {"t0": 5}, TWO_TOPICS) == run_assignor(rand, {"t0": 5}, TWO_TOPICS)


@pytest.mark.parametrize("spec", ["nope", "keos.nonexistent_module:f", "keos.scenarios.assignor_examples:nothing",
                                  ":f", "m:"])
def test_bad_assignor_names_are_errors(spec: str) -> None:
    with pytest.raises(AssignorError):
        load_assignor(spec)


# -------------------------------------------------------------------------- random subscriptions

TOPICS = ("t0", "t1", "t2")
MEMBERS = ("C0", "C1", "C2", "C3")


@st.composite
def cases(draw: st.DrawFn, *, equal: bool | None = None, with_previous: bool = True) -> AssignorCase:
    sizes = {t: draw(st.integers(1, 4)) for t in TOPICS}
    members = draw(st.lists(st.sampled_from(MEMBERS), min_size=1, max_size=4, unique=True))
    topic_sets = st.frozensets(st.sampled_from(TOPICS), min_size=1)
    is_equal = draw(st.booleans()) if equal is None else equal
    if is_equal:
        topics = draw(topic_sets)
        subs = {m: Subscription(topics) for m in members}
    else:
        subs = {m: Subscription(draw(topic_sets)) for m in members}
    previous = None
    if with_previous and draw(st.booleans()):
        # the previous generation: some other membership, assigned by sticky
        before = draw(st.lists(st.sampled_from(MEMBERS), min_size=1, max_size=4, unique=True))
        prev_subs = {m: subs.get(m, Subscription(frozenset(TOPICS))) for m in before}
        previous = sticky_assign(sizes, prev_subs)
        subs = with_owned(subs, previous, generation=1)
    return AssignorCase("random", sizes, subs, previous)


FAST = settings(
    max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@FAST
@given(cases())
def test_builtin_assignors_keep_their_contracts(case: AssignorCase) -> None:
    for name, fn in ASSIGNORS.items():
        verdicts = evaluate(case, run_assignor(fn, case.partitions_per_topic, case.subscriptions))
        for prop in EXPECTED[name].holds:
            assert verdicts[prop] is None, (name, prop, verdicts[prop])


@FAST
@given(cases())
def test_cooperative_rebalances_settle_on_a_complete_assignment(case: AssignorCase) -> None:
    rounds = cooperative_rounds(case.partitions_per_topic, case.subscriptions)
    assert len(rounds) < 16
    owned = case.subscriptions
    for generation, assignment in enumerate(rounds, start=2):
        step = AssignorCase("round", case.partitions_per_topic, owned)
        assert evaluate(step, assignment)["no_transfer"] is None
        assert evaluate(step, assignment)["at_most_once"] is None
        owned = with_owned(owned, assignment, generation)
    verdicts = evaluate(AssignorCase("settled", case.partitions_per_topic, case.subscriptions), rounds[-1])
    for prop in ("exactly_once", "balanced", "no_improving_move"):
        assert verdicts[prop] is None, (prop, verdicts[prop])


def test_cooperative_can_need_a_third_rebalance() -> None:
    # Found by `keos assignors`: the general sticky builder, given the partitions the first round
    # freed, rebalances further (t2p2 moves from C1 to C3), so the group revokes again.
    sizes = {"t0": 4, "t1": 1, "t2": 3, "t3": 5}
    owned = [TopicPartition("t0", p) for p in range(4)] + [TopicPartition("t2", p) for p in range(3)]
    subs = {"C1": S("t0", "t2", owned=owned, generation=1), "C2": S("t0", "t1", "t3"), "C3": S("t2"),
            "C5": S("t0", "t1", "t2", "t3")}
    rounds = cooperative_rounds(sizes, subs)
    assert len(rounds) == 3
    assert names(rounds[0])["C3"] == [] and names(rounds[1])["C3"] == ["t2p0", "t2p1"]
    assert names(rounds[2])["C3"] == ["t2p0", "t2p1", "t2p2"]


@settings(max_examples=25, deadline=None, derandomize=True)
@given(cases(equal=True))
def test_sticky_movement_is_the_z3_minimum(case: AssignorCase) -> None:
    assignment = sticky_assign(case.partitions_per_topic, case.subscriptions)
    previous = case.previous or {}
    survivors = {m: p for m, p in previous.items() if m in case.subscriptions}
    needed = minimal_moves(case.partitions_per_topic, case.subscriptions, survivors)
    assert needed == minimal_moves_equal(case)
    assert len(moved_partitions(survivors, assignment)) == needed


@settings(max_examples=25, deadline=None, derandomize=True)
@given(cases(with_previous=False))
def test_sticky_reaches_the_optimal_spread_when_subscriptions_are_equal(case: AssignorCase) -> None:
    best = optimal_spread(case.partitions_per_topic, case.subscriptions)
    got = spread(sticky_assign(case.partitions_per_topic, case.subscriptions))
    assert got >= best  # nothing beats z3's optimum (a check on the encoding)
    if case.all_equal:
        assert got == best


@FAST
@given(cases(equal=True, with_previous=False))
def test_range_loads_follow_the_closed_form_z3_bounds(case: AssignorCase) -> None:
    a = range_assign(case.partitions_per_topic, case.subscriptions)
    members = sorted(case.subscriptions)
    topics = sorted(next(iter(case.subscriptions.values())).topics)
    for index, member in enumerate(members):
        expected = sum(case.partitions_per_topic[t] // len(members)
                       + (1 if index < case.partitions_per_topic[t] % len(members) else 0) for t in topics)
        assert len(a[member]) == expected
    assert spread(a) <= len(topics)


def test_z3_proves_range_and_round_robin_spread_bounds() -> None:
    for topics in range(4):
        proof = prove_range_spread(topics)
        assert proof.bound_proved and proof.tight and proof.round_robin_bound_proved


def _violates(name: str, prop: str, *, equal: bool | None = None) -> AssignorCase:
    fn = ASSIGNORS[name]

    def bad(case: AssignorCase) -> bool:
        return evaluate(case, run_assignor(fn, case.partitions_per_topic, case.subscriptions))[prop] is not None

    search = settings(max_examples=2000, database=None, derandomize=True)
    return find(cases(equal=equal, with_previous=False), bad, settings=search)


def test_hypothesis_finds_ranges_imbalance_as_the_book_describes() -> None:
    case = _violates("range", "balanced", equal=True)
    a = range_assign(case.partitions_per_topic, case.subscriptions)
    # shrunk: two members, two topics each with an odd number of partitions; the first member
    # takes both extras.
    assert len(case.subscriptions) == 2 and spread(a) == 2
    assert all(case.partitions_per_topic[t] % 2 == 1 for t in next(iter(case.subscriptions.values())).topics)


def test_hypothesis_finds_round_robins_imbalance_with_unequal_subscriptions() -> None:
    case = _violates("roundrobin", "no_improving_move", equal=False)
    assert not case.all_equal
    fixed = sticky_assign(case.partitions_per_topic, case.subscriptions)
    assert evaluate(case, fixed)["no_improving_move"] is None


# ------------------------------------------------------------------------------------- the command


def test_keos_assignors_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    from keos.checker.cli.main import main

    assert main(["assignors", "--cases", "10", "--no-z3"]) == 0
    out = capsys.readouterr().out
    assert "known counterexample range / balanced" in out
    assert main(["assignors", "--cases", "0", "--assignor", "keos.scenarios.assignor_examples:broadcast"]) == 1
    assert "VIOLATION" in capsys.readouterr().out
    assert main(["assignors", "--assignor", "nope"]) == 2
    assert capsys.readouterr().err.startswith("keos: error: unknown assignor 'nope'")


def test_cooperative_sticky_withholds_a_partition_from_a_stale_claimant() -> None:
    """KIP-792 / KAFKA-13419: C1 owns t0p0 in generation 3; C0 still claims it from generation 2.  The
    constrained builder keeps it with C1 (highest generation) and, should balance move it, withholds it
    (``assignNewPartition`` records the validated owner's partition as transferring)."""
    from keos.model.coordinator.group.assignors import TopicPartition, cooperative_sticky_assign

    t0p0, t0p1 = TopicPartition("t0", 0), TopicPartition("t0", 1)
    subs = {"C0": Subscription.of("t0", owned=(t0p0,), generation=2),
            "C1": Subscription.of("t0", owned=(t0p0, t0p1), generation=3)}
    result = cooperative_sticky_assign({"t0": 2}, subs)
    assert t0p0 not in result["C0"]
    # the same claims in one generation: invalid input, the partition is withheld from both (Kafka logs an error)
    tie = {m: Subscription.of("t0", owned=s.owned_partitions, generation=3) for m, s in subs.items()}
    result = cooperative_sticky_assign({"t0": 2}, tie)
    assert t0p0 not in result["C0"] and t0p0 not in result["C1"]


def test_general_builder_keeps_a_partition_a_higher_generation_won_after_a_tie() -> None:
    """``AbstractStickyAssignor`` (Kafka trunk 1eb7644): A and B tie on t0p0 in generation 1 (invalid, the partition is
    in ``partitionsWithMultiplePreviousOwners``), then C claims it in generation 2 and wins it.  The general builder
    is not given that set: C keeps t0p0 (a builder that drops it would hand it to A, the first least-loaded
    subscriber, while C still owns it).  With equal subscriptions the constrained builder does drop it."""
    t0 = [TopicPartition("t0", p) for p in range(3)]
    t1p0 = TopicPartition("t1", 0)
    subs = {"A": S("t0", owned=(t0[0], t0[1]), generation=1), "B": S("t0", owned=(t0[0], t0[2]), generation=1),
            "C": S("t0", "t1", owned=(t0[0], t1p0), generation=2)}
    owned = _collect_owned({"t0": 3, "t1": 1}, subs)
    assert t0[0] in owned.doubly_claimed and t0[0] in owned.by_member["C"]
    assert names(sticky_assign({"t0": 3, "t1": 1}, subs)) == {"A": ["t0p1"], "B": ["t0p2"], "C": ["t0p0", "t1p0"]}
    # C owned t0p0 in its own subscription: nothing moves, nothing is withheld
    assert names(cooperative_sticky_assign({"t0": 3, "t1": 1}, subs)) == names(sticky_assign({"t0": 3, "t1": 1}, subs))


def test_assignors_skip_subscribed_topics_without_metadata() -> None:
    """``AbstractPartitionAssignor.assign`` (Kafka trunk 1eb7644) hands ``assignPartitions`` subscriptions naming topics
    the leader's metadata lacks; every built-in assignor skips them and assigns the partitions that exist exactly
    once (``assigns_without_topic_metadata`` with ``exactly_once`` on the metadata-lag inputs)."""
    from keos.checker.assignor_check import GONE_TOPIC, METADATA_LAG, _metadata_lag, book_cases, check_assignor

    lagging = _metadata_lag(book_cases()[0])
    assert [sum(GONE_TOPIC in s.topics for s in c.subscriptions.values()) for c in lagging] == [2, 1]
    for name in ASSIGNORS:
        report = check_assignor(name, book_cases(), z3_optimum=False)
        outcome = report.properties[METADATA_LAG]
        assert outcome.checked == 2 * len(book_cases()) and not outcome.failed, (name, outcome.first_failure)
        assert not report.violations, (name, [v.first_failure for v in report.violations])


def test_an_assignor_that_reads_metadata_for_every_subscribed_topic_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """KAFKA-7962 (a1f7925d23b, Kafka 2.2): ``StickyAssignor`` looked up ``partitionsPerTopic.get(topic)`` for every
    topic of a member's subscription and threw NullPointerException when one was deleted -- the leader's
    ``onLeaderElected`` failed and the group stayed unassigned.  The same defect, hand-applied to the model's sticky
    assignor, fails ``assigns_without_topic_metadata``; one that invents a partition for the missing topic instead
    fails ``exactly_once``."""
    from keos.checker.assignor_check import METADATA_LAG, book_cases, check_assignor
    from keos.model.coordinator.group import assignors as asg

    real = asg.ASSIGNORS["sticky"]

    def reads_every_topic(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]) -> (
            Mapping[str, Iterable[TopicPartition]]):
        for sub in subscriptions.values():
            for topic in sub.topics:
                partitions_per_topic[topic]  # the lookup KAFKA-7962 did without a null check
        return real(partitions_per_topic, subscriptions)

    def invents_a_partition(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]) -> (
            Mapping[str, Iterable[TopicPartition]]):
        counts = {t: partitions_per_topic.get(t, 1) for s in subscriptions.values() for t in s.topics}
        return real(counts, subscriptions)

    monkeypatch.setitem(asg.ASSIGNORS, "sticky", reads_every_topic)
    report = check_assignor("sticky", book_cases(), z3_optimum=False)
    failure = report.properties[METADATA_LAG].first_failure
    assert failure is not None and "raised KeyError" in failure[1]
    monkeypatch.setitem(asg.ASSIGNORS, "sticky", invents_a_partition)
    report = check_assignor("sticky", book_cases(), z3_optimum=False)
    assert "exactly_once" in {v.name for v in report.violations}
    assert not report.properties[METADATA_LAG].failed
