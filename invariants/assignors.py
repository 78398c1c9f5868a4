"""Properties of partition assignors, as named predicates over one assignment.

An assignor (:mod:`keos.model.coordinator.group.assignors`) maps subscriptions to an assignment; the
group is only correct if that assignment gives every subscribed partition to exactly one member
that subscribes to its topic (``AbstractPartitionAssignor`` documents it, and
``ConsumerCoordinator.onLeaderElected`` rejects an assignment that assigns an unsubscribed topic).
Beyond correctness, the assignors promise different degrees of **balance** and **stickiness**:

=======================  ============================================================================
property                 meaning
=======================  ============================================================================
``exactly_once``         every partition of a subscribed topic is assigned once, only to a subscriber
``at_most_once``         as above but a partition may be withheld (cooperative first round, KIP-429)
``balanced``             with equal subscriptions, member loads differ by at most one
``per_topic_balanced``   within each topic, its subscribers' shares of its partitions differ by at most one
                         (``RangeAssignor``'s promise, whatever the subscriptions)
``no_improving_move``    no partition can move from its owner to a subscriber with ≥ 2 fewer partitions
                         (``AbstractStickyAssignor.isBalanced``); the sticky assignors' guarantee
``minimal_movement``     with equal subscriptions, no more previously owned partitions change owner
                         than balance forces (KIP-54's second goal)
``no_transfer``          no partition goes to a member while another member still owns it (KIP-429)
``keeps_balanced_claims`` whatever the subscriptions, members whose valid claims already cover every partition
                         with no improving move keep exactly what they claim (KIP-54 stickiness)
``contested_withheld``   a partition two members claim in the same (highest) generation is assigned to nobody this
                         round: either may still own it (KAFKA-12984, the cooperative constrained builder)
=======================  ============================================================================

Each property is a :class:`AssignorProperty`; ``check`` returns ``None`` when it holds and a
one-line reason otherwise.  :data:`EXPECTED` records, per built-in assignor, which properties must
hold (the gate fails if one does not) and which are *known* not to hold (Range's and RoundRobin's
imbalance with unequal or multi-topic subscriptions, the book's worked examples) — for those a
counterexample is the expected outcome.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from keos.model.coordinator.group.assignors import (
    Assignment,
    Subscription,
    TopicPartition,
    moved_partitions,
    partitions_of,
)


@dataclass(frozen=True)
class AssignorCase:
    """One assignor input: partition counts, subscriptions (with owned partitions), and the
    assignment the owned partitions came from (``None`` for a first rebalance)."""

    name: str
    partitions_per_topic: Mapping[str, int]
    subscriptions: Mapping[str, Subscription]
    previous: Mapping[str, tuple[TopicPartition, ...]] | None = None
    note: str = ""

    @property
    def all_equal(self) -> bool:
        return len({s.topics for s in self.subscriptions.values()}) <= 1

    def subscribed_partitions(self) -> list[TopicPartition]:
        topics = sorted({t for s in self.subscriptions.values() for t in s.topics if t in self.partitions_per_topic})
        return [tp for t in topics for tp in partitions_of(t, self.partitions_per_topic[t])]

    def subscribers(self, topic: str) -> list[str]:
        return sorted(m for m, s in self.subscriptions.items() if topic in s.topics)


@dataclass(frozen=True)
class AssignorProperty:
    name: str
    statement: str
    source: str
    check: Callable[[AssignorCase, Assignment], str | None] = field(compare=False)


def loads(assignment: Assignment) -> dict[str, int]:
    return {m: len(parts) for m, parts in assignment.items()}


def spread(assignment: Assignment) -> int:
    """max − min partitions per member (0 for an empty group)."""
    counts = list(loads(assignment).values())
    return max(counts) - min(counts) if counts else 0


def _placement(case: AssignorCase, assignment: Assignment, *, allow_missing: bool) -> str | None:
    counts = Counter(tp for parts in assignment.values() for tp in parts)
    for member, parts in assignment.items():
        if member not in case.subscriptions:
            return f"{member} is not a member of the group"
        for tp in parts:
            if tp.topic not in case.subscriptions[member].topics:
                return f"{tp} assigned to {member}, which does not subscribe to {tp.topic}"
            if tp.partition >= case.partitions_per_topic.get(tp.topic, 0):
                return f"{tp} does not exist"
    for tp, n in sorted(counts.items()):
        if n > 1:
            owners = sorted(m for m, parts in assignment.items() if tp in parts)
            return f"{tp} assigned {n} times ({', '.join(owners)})"
    if not allow_missing:
        for tp in case.subscribed_partitions():
            if tp not in counts:
                return f"{tp} is subscribed but assigned to nobody"
    return None


def _exactly_once(case: AssignorCase, assignment: Assignment) -> str | None:
    return _placement(case, assignment, allow_missing=False)


def _at_most_once(case: AssignorCase, assignment: Assignment) -> str | None:
    return _placement(case, assignment, allow_missing=True)


def _balanced(case: AssignorCase, assignment: Assignment) -> str | None:
    if not case.all_equal or spread(assignment) <= 1:
        return None
    counts = loads(assignment)
    hi = max(counts, key=lambda m: (counts[m], m))
    lo = min(counts, key=lambda m: (counts[m], m))
    return f"equal subscriptions but {hi} has {counts[hi]} partitions and {lo} has {counts[lo]}"


def _per_topic_balanced(case: AssignorCase, assignment: Assignment) -> str | None:
    for topic in sorted(case.partitions_per_topic):
        members = case.subscribers(topic)
        if not members:
            continue
        share = {m: sum(1 for tp in assignment.get(m, ()) if tp.topic == topic) for m in members}
        hi = max(members, key=lambda m: (share[m], m))
        lo = min(members, key=lambda m: (share[m], m))
        if share[hi] > share[lo] + 1:
            return f"topic {topic}: subscriber {hi} has {share[hi]} of its partitions and {lo} has {share[lo]}"
    return None


def _no_improving_move(case: AssignorCase, assignment: Assignment) -> str | None:
    counts = loads(assignment)
    for member, parts in sorted(assignment.items()):
        for tp in parts:
            for other in case.subscribers(tp.topic):
                if other != member and counts[member] > counts.get(other, 0) + 1:
                    return (f"{tp} could move from {member} ({counts[member]} partitions) "
                            f"to subscriber {other} ({counts.get(other, 0)})")
    return None


def minimal_moves_equal(case: AssignorCase) -> int:
    """With equal subscriptions, the fewest previously owned partitions that must change owner in a
    balanced assignment: members keep ``min(owned, quota)`` where the ``P % N`` larger quotas go to
    the members owning the most (``checker/assignor_bounds.py`` confirms this against z3)."""
    if case.previous is None:
        return 0
    members = sorted(case.subscriptions)
    total = len(case.subscribed_partitions())
    low, extra = divmod(total, len(members)) if members else (0, 0)
    alive = {tp for tp in case.subscribed_partitions()}
    owned = sorted((len([tp for tp in case.previous.get(m, ()) if tp in alive]) for m in members), reverse=True)
    kept = sum(min(n, low + (1 if i < extra else 0)) for i, n in enumerate(owned))
    return sum(owned) - kept


def _minimal_movement(case: AssignorCase, assignment: Assignment) -> str | None:
    if case.previous is None or not case.all_equal or spread(assignment) > 1:
        return None
    survivors = {m: parts for m, parts in case.previous.items() if m in case.subscriptions}
    moved = len(moved_partitions(survivors, assignment))
    needed = minimal_moves_equal(case)
    if moved > needed:
        return f"{moved} previously owned partitions changed owner where {needed} would keep the group balanced"
    return None


def latest_claims(case: AssignorCase) -> dict[TopicPartition, tuple[int, list[str]]]:
    """Each claimed partition's highest claimed generation and the members claiming it in that generation."""
    best: dict[TopicPartition, tuple[int, list[str]]] = {}
    for member, sub in sorted(case.subscriptions.items()):
        for tp in sub.owned_partitions:
            generation, claimants = best.get(tp, (sub.generation, []))
            if sub.generation > generation:
                best[tp] = (sub.generation, [member])
            elif sub.generation == generation:
                best[tp] = (generation, [*claimants, member])
    return best


def current_owners(case: AssignorCase) -> dict[TopicPartition, str]:
    """Who owns each claimed partition: the member claiming it in the highest generation (KIP-792: a
    claim from an older generation is out of date -- its member lost the partition since); a
    partition claimed by two members in the same generation has no owner (invalid input, which
    ``AbstractStickyAssignor`` logs and treats as unowned)."""
    best = latest_claims(case)
    return {tp: claimants[0] for tp, (_, claimants) in best.items() if len(claimants) == 1}


def _no_transfer(case: AssignorCase, assignment: Assignment) -> str | None:
    owners = current_owners(case)
    for member, parts in sorted(assignment.items()):
        for tp in parts:
            other = owners.get(tp)
            if other is not None and other != member and tp not in assignment.get(other, ()):
                return f"{tp} assigned to {member} while {other} still owns it (it must revoke first)"
    return None


def _contested_withheld(case: AssignorCase, assignment: Assignment) -> str | None:
    """A partition claimed by several members in the highest generation any member claims it in has no valid owner
    (``AbstractStickyAssignor``: "Found multiple consumers ... claiming the same TopicPartition ... in the same
    generation, this will be invalidated", KAFKA-12984, trunk 1eb7644) -- and any of them may still own it, so the
    cooperative constrained builder lists it in ``partitionsTransferringOwnership`` and ``adjustAssignment``
    withholds it from everyone: each claimant revokes it, the follow-up rebalance assigns it.  Given to anyone now,
    it may be consumed by two members at once -- whichever claimant a tie rule favoured."""
    best = latest_claims(case)
    for tp, (generation, claimants) in sorted(best.items()):
        holders = [m for m, parts in sorted(assignment.items()) if tp in parts]
        if len(claimants) > 1 and holders:
            return (f"{tp}, claimed by {', '.join(claimants)} in generation {generation}, is assigned to "
                    f"{', '.join(holders)} (it must be withheld until every claimant revoked it)")
    return None


def _keeps_balanced_claims(case: AssignorCase, assignment: Assignment) -> str | None:
    """Where the members' valid claims (:func:`current_owners`) already give every subscribed partition to one of its
    subscribers and leave no improving move, the sticky assignors change nothing: ``AbstractStickyAssignor`` keeps
    every valid owned partition (both builders) and, the assignment being ``isBalanced``, moves none."""
    if case.previous is None:
        return None
    owners = current_owners(case)
    subscribed = case.subscribed_partitions()
    exists = set(subscribed)
    if any(tp not in owners for tp in subscribed) or any(
            tp in exists and tp.topic not in case.subscriptions[m].topics for tp, m in owners.items()):
        return None
    claimed: Assignment = {m: tuple(tp for tp in subscribed if owners[tp] == m) for m in case.subscriptions}
    if _no_improving_move(case, claimed) is not None:
        return None
    moved = [tp for tp in subscribed if tp not in assignment.get(owners[tp], ())]
    if moved:
        return f"the members' claims were balanced already, yet {', '.join(map(str, moved))} left its owner"
    return None


EXACTLY_ONCE = AssignorProperty(
    "exactly_once", "every subscribed partition assigned exactly once, only to a subscriber",
    "ConsumerPartitionAssignor contract; ConsumerCoordinator.onLeaderElected", _exactly_once)
AT_MOST_ONCE = AssignorProperty(
    "at_most_once", "no partition assigned twice or to a non-subscriber (may be withheld)",
    "CooperativeStickyAssignor.adjustAssignment, KIP-429", _at_most_once)
BALANCED = AssignorProperty(
    "balanced", "equal subscriptions: member loads differ by at most one",
    "RoundRobinAssignor / AbstractStickyAssignor javadoc", _balanced)
PER_TOPIC_BALANCED = AssignorProperty(
    "per_topic_balanced", "within each topic, subscribers' shares of its partitions differ by at most one",
    "RangeAssignor javadoc (partitions of a topic divided by its consumers, the first few get one extra)",
    _per_topic_balanced)
NO_IMPROVING_MOVE = AssignorProperty(
    "no_improving_move", "no partition can move to a subscriber with two fewer partitions",
    "AbstractStickyAssignor.isBalanced, KIP-54", _no_improving_move)
MINIMAL_MOVEMENT = AssignorProperty(
    "minimal_movement", "equal subscriptions: only as many owned partitions move as balance forces",
    "KIP-54 (stickiness), AbstractStickyAssignor.ConstrainedAssignmentBuilder", _minimal_movement)
NO_TRANSFER = AssignorProperty(
    "no_transfer", "no partition given to a member while another still owns it",
    "KIP-429, CooperativeStickyAssignor.computePartitionsTransferringOwnership", _no_transfer)

KEEPS_BALANCED_CLAIMS = AssignorProperty(
    "keeps_balanced_claims", "valid claims that are complete and balanced are kept as they are, any subscriptions",
    "KIP-54 (stickiness); AbstractStickyAssignor.allSubscriptionsEqual / GeneralAssignmentBuilder (isBalanced)",
    _keeps_balanced_claims)

CONTESTED_WITHHELD = AssignorProperty(
    "contested_withheld", "a partition claimed twice in one generation is withheld this round (cooperative)",
    "KAFKA-12984; CooperativeStickyAssignor / AbstractStickyAssignor.ConstrainedAssignmentBuilder "
    "(partitionsWithMultiplePreviousOwners, partitionsTransferringOwnership)", _contested_withheld)

PROPERTIES: tuple[AssignorProperty, ...] = (
    EXACTLY_ONCE, AT_MOST_ONCE, BALANCED, PER_TOPIC_BALANCED, NO_IMPROVING_MOVE, MINIMAL_MOVEMENT, NO_TRANSFER,
    KEEPS_BALANCED_CLAIMS, CONTESTED_WITHHELD)
BY_NAME: dict[str, AssignorProperty] = {p.name: p for p in PROPERTIES}


@dataclass(frozen=True)
class Expectation:
    """Which properties an assignor must satisfy and which it is known to violate."""

    holds: frozenset[str]
    known_violations: frozenset[str] = frozenset()


EXPECTED: dict[str, Expectation] = {
    "range": Expectation(frozenset({"exactly_once", "at_most_once", "per_topic_balanced"}),
                         frozenset({"balanced", "no_improving_move", "minimal_movement"})),
    "roundrobin": Expectation(frozenset({"exactly_once", "at_most_once", "balanced"}),
                              frozenset({"no_improving_move", "minimal_movement"})),
    "sticky": Expectation(frozenset({"exactly_once", "at_most_once", "balanced", "no_improving_move",
                                     "minimal_movement", "keeps_balanced_claims"})),
    # The first round withholds moving partitions, so exactly-once and balance are checked on the
    # follow-up rebalance (see checker/assignor_bounds.cooperative_follow_up).
    "cooperative-sticky": Expectation(frozenset({"at_most_once", "no_transfer", "keeps_balanced_claims",
                                                 "contested_withheld"})),
}
"""Built-in assignors' contracts; a user-supplied assignor must at least satisfy ``exactly_once``."""

USER_EXPECTATION = Expectation(frozenset({"exactly_once", "at_most_once"}))


def evaluate(case: AssignorCase, assignment: Assignment) -> dict[str, str | None]:
    """Every property's verdict on one assignment (``None`` = holds)."""
    return {p.name: p.check(case, assignment) for p in PROPERTIES}
