"""Run assignors over the book's worked examples and seeded random groups; judge their properties.

The data behind ``keos assignors``: for each assignor, every case is assigned, every property of
:mod:`keos.invariants.assignors` evaluated, and balance (spread, and its distance from z3's
optimum) and movement (partitions that change owner across a rebalance, and the minimum balance
forces) aggregated.  A property in the assignor's ``holds`` set that fails is a *violation*; one in
its ``known_violations`` set that fails is an *expected counterexample* (Range's and RoundRobin's
imbalance — the book's examples are among the cases, so they are found every run).

Cases are deterministic: the book's examples, then ``random_cases`` groups drawn from
``random.Random(seed)``: 1-5 members, 1-4 topics of 1-6 partitions, equal or unequal
subscriptions, and half of them a rebalance (members join or leave a group previously assigned by
the same assignor, carrying their owned partitions).  For ``cooperative-sticky`` the follow-up
rebalances (members rejoin owning what the previous round left them, KIP-429) run until a round
withholds nothing; the first round is judged by ``at_most_once``/``no_transfer`` and the assignment
the group settles on by ``exactly_once``/``balanced``/``no_improving_move``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from keos.checker.assignor_bounds import optimal_spread
from keos.invariants.assignors import (
    EXPECTED,
    USER_EXPECTATION,
    AssignorCase,
    Expectation,
    evaluate,
    minimal_moves_equal,
    spread,
)
from keos.model.coordinator.group.assignors import (
    ASSIGNORS,
    COOPERATIVE,
    DEFAULT_GENERATION,
    Assignment,
    Assignor,
    Subscription,
    TopicPartition,
    cooperative_rounds,
    load_assignor,
    moved_partitions,
    run_assignor,
    sticky_assign,
    with_owned,
)

FOLLOW_UP_PROPERTIES = ("exactly_once", "balanced", "no_improving_move")


def _s(*topics: str) -> Subscription:
    return Subscription.of(*topics)


def book_cases() -> list[AssignorCase]:
    """The worked examples of the book's chapter on assignors (partition counts, subscriptions)."""
    four = {f"t{i}": 2 for i in range(4)}
    three_members = {c: _s(*four) for c in ("C0", "C1", "C2")}
    before = sticky_assign(four, three_members)
    both = {"C0": _s("t0", "t1"), "C1": _s("t0", "t1")}
    return [
        AssignorCase("range: 2 members, 2 topics x 4", {"t0": 4, "t1": 4}, both),
        AssignorCase(
            "range: 2 members, 2 topics x 3", {"t0": 3, "t1": 3}, both, note="Range gives C0 4 partitions and C1 2"
        ),
        AssignorCase(
            "unequal: t0 | t0,t1 | t0,t1,t2",
            {"t0": 1, "t1": 2, "t2": 3},
            {"C0": _s("t0"), "C1": _s("t0", "t1"), "C2": _s("t0", "t1", "t2")},
            note="RoundRobin leaves t1p1 on C2 although C1 could take it",
        ),
        AssignorCase("3 members, 4 topics x 2", four, three_members),
        AssignorCase(
            "C1 leaves (4 topics x 2)",
            four,
            with_owned({c: three_members[c] for c in ("C0", "C2")}, before, 1),
            previous=before,
            note="Sticky keeps every partition C0 and C2 owned",
        ),
    ]


def random_cases(count: int, seed: int) -> list[AssignorCase]:
    rng = random.Random(seed)
    cases: list[AssignorCase] = []
    for index in range(count):
        topics = [f"t{i}" for i in range(rng.randint(1, 4))]
        sizes = {t: rng.randint(1, 6) for t in topics}
        members = [f"C{i}" for i in rng.sample(range(6), rng.randint(1, 5))]
        equal = rng.random() < 0.5
        common = frozenset(rng.sample(topics, rng.randint(1, len(topics))))
        subs = {
            m: Subscription(common if equal else frozenset(rng.sample(topics, rng.randint(1, len(topics)))))
            for m in sorted(members)
        }
        kind = "equal" if equal else "unequal"
        if rng.random() < 0.5:
            cases.append(AssignorCase(f"#{index} {kind}", sizes, subs))
            continue
        # a rebalance: a previous membership assigned by the assignor under test is filled in later
        before = (
            sorted(
                {
                    *rng.sample(members, rng.randint(0, len(members))),
                    *(f"C{i}" for i in rng.sample(range(6, 9), rng.randint(0, 2))),
                }
            )
            or sorted(members)[:1]
        )
        prev_subs = {m: subs.get(m, Subscription(common if equal else frozenset(topics))) for m in before}
        cases.append(
            AssignorCase(
                f"#{index} {kind} rebalance",
                sizes,
                subs,
                previous={m: () for m in prev_subs},
                note="previous:" + ",".join(before),
            )
        )
    return cases


def carried_ownership_cases(count: int, seed: int) -> list[AssignorCase]:
    """Rebalances whose members carry ownership another assignor, or a history of rebalances, left them.

    The random cases' rebalances take the previous assignment from the assignor under test, which is
    already balanced by its own rules.  A member's ``ownedPartitions`` need not be: a group that switches
    ``partition.assignment.strategy`` (KIP-429's upgrade path: range or an eager assignor to
    cooperative-sticky, one rolling bounce at a time) hands the new assignor Range's or RoundRobin's
    assignment, and after members came and went any subscriber may own any partition.  Each case's
    previous owner of every partition is a subscriber chosen by Range, RoundRobin or at random (some
    partitions unowned), all claims valid (one claimant, generation 1); subscriptions are equal or not.
    ``random.Random(seed)``, separate from :func:`random_cases` so that stream stays as it was."""
    rng = random.Random(seed)
    cases: list[AssignorCase] = []
    for index in range(count):
        topics = [f"t{i}" for i in range(rng.randint(1, 4))]
        sizes = {t: rng.randint(1, 6) for t in topics}
        members = sorted(f"C{i}" for i in rng.sample(range(6), rng.randint(2, 5)))
        equal = rng.random() < 0.3
        common = frozenset(rng.sample(topics, rng.randint(1, len(topics))))
        subs = {m: Subscription(common if equal else frozenset(rng.sample(topics, rng.randint(1, len(topics)))))
                for m in members}
        origin = rng.choice(("range", "roundrobin", "history", "history"))
        if origin == "history":
            owned: dict[str, list[TopicPartition]] = {m: [] for m in members}
            for t in topics:
                subscribers = [m for m in members if t in subs[m].topics]
                favourite = rng.choice(subscribers) if subscribers else None
                for p in range(sizes[t]):
                    if favourite is None or rng.random() < 0.2:
                        continue
                    owner = favourite if rng.random() < 0.6 else rng.choice(subscribers)
                    owned[owner].append(TopicPartition(t, p))
            previous: Assignment = {m: tuple(sorted(parts)) for m, parts in owned.items()}
        else:
            previous = run_assignor(load_assignor(origin), sizes, subs)
        kind = "equal" if equal else "unequal"
        cases.append(AssignorCase(f"#{index} {kind}, ownership left by {origin}", sizes,
                                  with_owned(subs, previous, 1), previous, f"previous:{origin}"))
    return cases


def _with_previous(case: AssignorCase, assignor: Assignor) -> AssignorCase:
    """Fill a rebalance case's previous assignment by running ``assignor`` on the old membership."""
    if case.previous is None or any(case.previous.values()):
        return case
    old = {m: case.subscriptions.get(m, Subscription(frozenset(case.partitions_per_topic))) for m in case.previous}
    previous = run_assignor(assignor, case.partitions_per_topic, old)
    return AssignorCase(
        case.name, case.partitions_per_topic, with_owned(case.subscriptions, previous, 1), previous, case.note
    )


def _claim(sub: Subscription, tp: TopicPartition, generation: int) -> Subscription:
    return Subscription(sub.topics, tuple(sorted({*sub.owned_partitions, tp})), generation)


def _hostile_claims(case: AssignorCase) -> list[AssignorCase]:
    """A rebalance case re-run with misbehaving members, each variation a subscription that claims what its
    member does not own (KAFKA-13419: a client whose ``ownedPartitions`` went out of date; KIP-792 added
    ``generationId`` so the assignor can tell; KAFKA-12984: two members claiming one partition):

    * one member claims a partition another member owns, in an *older* generation (the owner's claim wins);
    * one member claims it in the owner's *own* generation (a tie: both claims are invalid, the partition is
      treated as unowned, ``AbstractStickyAssignor`` logs it);
    * two members both claim it in an older generation (they tie with each other; the owner still wins),
      or in the owner's generation (three claims, all invalid);
    * one member claims it in an older generation and another in the owner's (the tie of the two current claims
      invalidates it whichever claim ``allSubscriptionsEqual`` meets first -- KAFKA-15106: the map of claimants
      must follow the higher generation's claim, or a third claim is compared with a superseded one);
    * a member whose subscription carries no generation (``ConsumerProtocolSubscription`` v0/v1: a client not yet
      upgraded, ``DEFAULT_GENERATION``) claims it (the owner's generation wins);
    * a member claims a partition of a topic that no longer exists (deleted since its last assignment), or one
      past the topic's partition count (the topic was deleted and recreated with fewer partitions).

    Empty when the case has no owned partition another subscriber could claim.  With unequal subscriptions (the
    general builder: a group mid-way through a subscription change, or members of different versions) the cases
    are judged by what Kafka still promises there (:func:`hostile_properties`)."""
    if case.previous is None:
        return []
    subs = case.subscriptions
    for owner, parts in sorted(case.previous.items()):
        if owner not in subs:
            continue
        for tp in parts:
            others = [m for m, s in sorted(subs.items()) if m != owner and tp.topic in s.topics
                      and tp not in s.owned_partitions]
            if not others:
                continue
            first, generation = others[0], subs[owner].generation
            gone = TopicPartition("deleted-topic", 0)
            unsubscribed = [TopicPartition(t, 0) for t in sorted(case.partitions_per_topic)
                            if t not in subs[first].topics]
            beyond = TopicPartition(tp.topic, case.partitions_per_topic[tp.topic])

            def variation(label: str, claims: dict[str, Subscription]) -> AssignorCase:
                return AssignorCase(f"{case.name} + {label}", case.partitions_per_topic, {**subs, **claims},
                                    case.previous, case.note)

            out = [
                variation(f"stale claim of {tp} by {first}", {first: _claim(subs[first], tp, generation - 1)}),
                variation(f"claim of {tp} by {first} in {owner}'s generation",
                          {first: _claim(subs[first], tp, generation)}),
                variation(f"claim of deleted {gone} by {first}", {first: _claim(subs[first], gone, generation)}),
                variation(f"claim of {beyond} past the partition count by {first}",
                          {first: _claim(subs[first], beyond, generation)}),
            ]
            if unsubscribed:  # the group's subscription changed: a topic it used to consume is dropped
                out.append(variation(f"claim of {unsubscribed[0]}, a topic {first} no longer subscribes to",
                                     {first: _claim(subs[first], unsubscribed[0], generation)}))
            if generation > DEFAULT_GENERATION:
                out.append(variation(f"claim of {tp} by {first} with no generation (an old client)",
                                     {first: _claim(subs[first], tp, DEFAULT_GENERATION)}))
            if len(others) > 1:
                out.append(variation(f"stale claims of {tp} by {first} and {others[1]}",
                                     {m: _claim(subs[m], tp, generation - 1) for m in others[:2]}))
                out.append(variation(f"stale claim of {tp} by {first} and one in {owner}'s generation by {others[1]}",
                                     {first: _claim(subs[first], tp, generation - 1),
                                      others[1]: _claim(subs[others[1]], tp, generation)}))
                out.append(variation(f"claims of {tp} by {first} and {others[1]} in {owner}'s generation",
                                     {m: _claim(subs[m], tp, generation) for m in others[:2]}))
            return out
    return []


#: A topic some member subscribes to that the leader's metadata does not hold (deleted since the member subscribed, or
#: not created yet, or a metadata response that lags the subscription).
GONE_TOPIC = "gone-topic"
#: The property the metadata-lag cases (:func:`_metadata_lag`) judge besides ``exactly_once``/``at_most_once``: the
#: assignor returns an assignment at all.  ``AbstractPartitionAssignor.assign`` (Kafka trunk 1eb7644) builds
#: ``partitionsPerTopic`` from the leader's metadata and skips a subscribed topic it lacks ("Skipping assignment for
#: topic {} since no metadata is available"), so every assignor's ``assignPartitions`` is handed subscriptions that
#: name topics ``partitionsPerTopic`` does not hold; ``AbstractStickyAssignor`` filters them (``partitionsPerTopic
#: .get(topic) != null``, KAFKA-7962).  An assignor that throws there fails the leader's ``onLeaderElected``: the
#: leader's poll() raises, its SyncGroup never carries an assignment, and the whole group stays unassigned.
METADATA_LAG = "assigns_without_topic_metadata"


def _metadata_lag(case: AssignorCase) -> list[AssignorCase]:
    """The case as a leader whose metadata lags its members' subscriptions sees it: (a) every member also subscribes
    to :data:`GONE_TOPIC`, which metadata lacks (subscriptions stay equal: the constrained sticky builder), and (b) the
    first member alone does (unequal: the general builder, Range's and RoundRobin's per-topic member lists).  The
    partitions that exist must still be assigned exactly as Kafka's contract says; the missing topic gets nothing."""
    subs = case.subscriptions
    if not subs:
        return []
    first = sorted(subs)[0]

    def lagging(sub: Subscription) -> Subscription:
        return Subscription(sub.topics | {GONE_TOPIC}, sub.owned_partitions, sub.generation)

    every = {m: lagging(sub) for m, sub in subs.items()}
    return [
        AssignorCase(f"{case.name} + every member subscribes to {GONE_TOPIC} (no metadata)",
                     case.partitions_per_topic, every, case.previous, case.note),
        AssignorCase(f"{case.name} + {first} alone subscribes to {GONE_TOPIC} (no metadata)",
                     case.partitions_per_topic, {**subs, first: lagging(subs[first])}, case.previous, case.note),
    ]


#: What a case with a stale ownership claim is judged by: correctness, not balance or movement (a
#: cooperative assignor's first round may withhold partitions, so exactly_once is judged after its rounds).
STALE_CLAIM_PROPERTIES = ("exactly_once", "at_most_once", "no_transfer")
STALE_CLAIM_COOPERATIVE = ("at_most_once", "no_transfer", "contested_withheld")


def hostile_properties(case: AssignorCase, cooperative: bool) -> tuple[str, ...]:
    """The properties a hostile-claim case is judged by.  Equal subscriptions: :data:`STALE_CLAIM_PROPERTIES` (or
    :data:`STALE_CLAIM_COOPERATIVE`: with it ``contested_withheld``, the claims tied in one generation -- the
    double-claim inputs of :func:`_hostile_claims` -- judged by who gets the partition, since the tie rule alone tells
    which claimant wins).  Unequal ones: no partition is ever assigned twice (``AbstractStickyAssignor``
    validates every claim -- ``allPreviousPartitionsToOwner`` keeps the highest generation's claimant and drops a
    partition claimed twice in one generation -- for the general builder too), and the eager sticky assignor still
    assigns every partition once; not ``no_transfer``: Kafka's CooperativeStickyAssignor computes the transferring
    partitions of a general assignment from the raw ``ownedPartitions`` (``computePartitionsTransferringOwnership``,
    trunk 1eb7644), so a stale claim that wins the balancing is not withheld.  And, whatever the subscriptions,
    ``keeps_balanced_claims`` where the claims are not all equal: the general builder keeps every claim that survived
    the generation check (it is not given ``partitionsWithMultiplePreviousOwners``), so the highest generation's
    claimant keeps its partition however many older claims tied before it.  (The constrained builder drops a
    partition two claims tied on even when a later claim of a higher generation won it, in the order Kafka's
    HashMap meets the members: not judged there.)"""
    if case.all_equal:
        return STALE_CLAIM_COOPERATIVE if cooperative else STALE_CLAIM_PROPERTIES
    return ("at_most_once", "keeps_balanced_claims") if cooperative else (
        "exactly_once", "at_most_once", "keeps_balanced_claims")


#: A rebalance in which nothing changed -- the same members and subscriptions, each member claiming exactly what
#: the last assignment gave it, in one generation -- moves no partition (KIP-54's stickiness at its simplest;
#: ``AbstractStickyAssignor``: every claim is valid and the assignment ``isBalanced``, so nothing is reassigned;
#: Range and RoundRobin are functions of the subscriptions alone).  A moved partition is a needless revocation
#: (eager: every member's; cooperative: a follow-up rebalance), i.e. a rebalance storm under a steady group.
UNCHANGED_REBALANCE = "unchanged_rebalance_moves_nothing"


def _unchanged_rebalance(assignor: Assignor, case: AssignorCase, settled: Assignment) -> str | None:
    generation = 1 + max((s.generation for s in case.subscriptions.values()), default=0)
    again = run_assignor(assignor, case.partitions_per_topic, with_owned(case.subscriptions, settled, generation))
    moved = sorted(moved_partitions(settled, again))
    withheld = sorted(tp for parts in settled.values() for tp in parts if tp not in {x for p in again.values()
                                                                                      for x in p})
    if moved or withheld:
        return (f"nothing changed, yet {', '.join(map(str, (*moved, *withheld)))} "
                f"{'moved' if moved else 'was withheld'}")
    return None


@dataclass
class PropertyOutcome:
    name: str
    expected: str  # "holds", "known violation", "not judged"
    checked: int = 0
    first_failure: tuple[str, str] | None = None  # (case, reason)

    @property
    def failed(self) -> bool:
        return self.first_failure is not None

    @property
    def violation(self) -> bool:
        return self.failed and self.expected == "holds"


@dataclass
class AssignorReport:
    assignor: str
    cases: int = 0
    max_spread: int = 0
    spread_total: int = 0
    above_optimum: int = 0  # cases whose spread exceeds z3's optimum
    optimum_checked: int = 0
    rebalances: int = 0
    moved: int = 0
    forced: int = 0  # minimum moves balance forces, summed over equal-subscription rebalances
    moved_equal: int = 0  # moves in those same rebalances
    properties: dict[str, PropertyOutcome] = field(default_factory=dict)
    max_rounds: int = 1  # cooperative: rebalances until nothing is withheld
    stale_claims: int = 0  # rebalance cases re-run with members claiming what they do not own (_hostile_claims)
    error: str | None = None

    @property
    def violations(self) -> list[PropertyOutcome]:
        return [p for p in self.properties.values() if p.violation]


def _judge(
    report: AssignorReport,
    expectation: Expectation,
    case: AssignorCase,
    assignment: Assignment,
    only: Iterable[str] | None = None,
    label: str = "",
) -> None:
    verdicts = evaluate(case, assignment)
    for name, reason in verdicts.items():
        if only is not None and name not in only:
            continue
        outcome = report.properties[name]
        outcome.checked += 1
        if reason is not None and outcome.first_failure is None:
            outcome.first_failure = (case.name + label, reason)


def _judge_metadata_lag(report: AssignorReport, expectation: Expectation, assignor: Assignor, case: AssignorCase,
                        cooperative: bool) -> None:
    """Run a built-in assignor on :func:`_metadata_lag`'s inputs: raising fails :data:`METADATA_LAG`; the assignment
    is judged by ``exactly_once`` (eager) or ``at_most_once`` (a cooperative first round may withhold)."""
    lag = report.properties[METADATA_LAG]
    for lagging in _metadata_lag(case):
        lag.checked += 1
        try:
            assignment = run_assignor(assignor, lagging.partitions_per_topic, lagging.subscriptions)
        except Exception as exc:  # the property's failure: Kafka's assignors skip a topic without metadata
            if lag.first_failure is None:
                lag.first_failure = (lagging.name, f"raised {type(exc).__name__}: {exc}")
            continue
        _judge(report, expectation, lagging, assignment, only=("at_most_once",) if cooperative else (
            "exactly_once", "at_most_once"))


def check_assignor(name: str, cases: list[AssignorCase], *, z3_optimum: bool = True) -> AssignorReport:
    """Run one assignor (built-in name or ``module:function``) over the cases."""
    assignor = load_assignor(name)
    expectation = EXPECTED.get(name, USER_EXPECTATION)
    report = AssignorReport(name)
    for prop in evaluate(cases[0], {}) if cases else {}:
        kind = (
            "holds"
            if prop in expectation.holds
            else "known violation"
            if prop in expectation.known_violations
            else "not judged"
        )
        report.properties[prop] = PropertyOutcome(prop, kind)
    cooperative = name in COOPERATIVE
    if cooperative:
        for prop in FOLLOW_UP_PROPERTIES:
            report.properties[prop].expected = "holds"
    report.properties[UNCHANGED_REBALANCE] = PropertyOutcome(
        UNCHANGED_REBALANCE, "holds" if name in EXPECTED else "not judged")
    report.properties[METADATA_LAG] = PropertyOutcome(METADATA_LAG, "holds" if name in EXPECTED else "not judged")
    for raw in cases:
        case = _with_previous(raw, assignor)
        if name in EXPECTED:
            _judge_metadata_lag(report, expectation, assignor, case, cooperative)
        for stale in _hostile_claims(case):
            try:
                claimed = run_assignor(assignor, stale.partitions_per_topic, stale.subscriptions)
            except Exception as exc:  # a user assignor that raises is reported, not a keos crash
                report.error = f"{stale.name}: {type(exc).__name__}: {exc}"
                break
            report.stale_claims += 1
            _judge(report, expectation, stale, claimed, only=hostile_properties(stale, cooperative))
        if report.error is not None:
            break
        try:
            assignment = run_assignor(assignor, case.partitions_per_topic, case.subscriptions)
        except Exception as exc:  # a user assignor that raises is reported, not a keos crash
            report.error = f"{case.name}: {type(exc).__name__}: {exc}"
            break
        report.cases += 1
        final = assignment
        if cooperative:
            _judge(report, expectation, case, assignment,
                   only=("at_most_once", "no_transfer", "minimal_movement", "keeps_balanced_claims"))
            rounds = cooperative_rounds(case.partitions_per_topic, case.subscriptions)
            final = rounds[-1]
            report.max_rounds = max(report.max_rounds, len(rounds))
            _judge(
                report,
                expectation,
                AssignorCase(case.name, case.partitions_per_topic, case.subscriptions),
                final,
                only=FOLLOW_UP_PROPERTIES,
                label=f" (after {len(rounds)} rebalances)",
            )
        else:
            _judge(report, expectation, case, assignment)
        if name in EXPECTED:
            unchanged = report.properties[UNCHANGED_REBALANCE]
            unchanged.checked += 1
            reason = _unchanged_rebalance(assignor, case, final)
            if reason is not None and unchanged.first_failure is None:
                unchanged.first_failure = (case.name, reason)
        s = spread(final)
        report.max_spread = max(report.max_spread, s)
        report.spread_total += s
        if z3_optimum:
            report.optimum_checked += 1
            if s > optimal_spread(case.partitions_per_topic, case.subscriptions):
                report.above_optimum += 1
        if case.previous is not None:
            survivors = {m: p for m, p in case.previous.items() if m in case.subscriptions}
            report.rebalances += 1
            moved = len(moved_partitions(survivors, final))
            report.moved += moved
            if case.all_equal:
                report.moved_equal += moved
                report.forced += minimal_moves_equal(case)
    return report


def check_assignors(
    names: Iterable[str], *, random_count: int = 200, seed: int = 0, z3_optimum: bool = True
) -> list[AssignorReport]:
    cases = book_cases() + random_cases(random_count, seed) + carried_ownership_cases(random_count, seed + 1)
    return [check_assignor(name, cases, z3_optimum=z3_optimum) for name in names]


def default_assignors() -> list[str]:
    return list(ASSIGNORS)


def subscriptions_table(case: AssignorCase) -> Mapping[str, str]:
    return {m: ",".join(sorted(s.topics)) for m, s in case.subscriptions.items()}
