"""Partition assignors of the classic consumer group protocol, as pure functions.

In the classic protocol the group coordinator does not assign partitions: it picks the group's
protocol (the assignor every member supports that most members list first), and the *leader*
member runs that assignor over every member's ``Subscription`` and sends the result back in its
SyncGroup request (``ConsumerCoordinator.onLeaderElected``).  An assignor is therefore a pure
function from the topics' partition counts and the members' subscriptions to a map member →
partitions.  This module models the four assignors Kafka ships, following Apache Kafka 4.0
(``clients/.../consumer/RangeAssignor.java``, ``RoundRobinAssignor.java``, ``StickyAssignor.java``,
``CooperativeStickyAssignor.java`` and ``internals/AbstractStickyAssignor.java``), without rack
awareness (KIP-881) and without static membership (KIP-345: members are ordered by member id):

* **range** (``RangeAssignor``): per topic, the members subscribed to it sorted by member id; with
  ``n = partitions // members`` and ``m = partitions % members`` the first ``m`` members take
  ``n + 1`` consecutive partitions and the rest ``n``.  Each topic is split independently, so the
  same first members take the extra partition of *every* topic: two members and two topics of
  three partitions give 4 and 2.
* **roundrobin** (``RoundRobinAssignor``): all subscribed partitions sorted by (topic, partition)
  dealt one at a time to the members sorted by member id, skipping members not subscribed to the
  partition's topic.  Balanced when all subscriptions are equal; with unequal subscriptions the
  skipping can leave a member short although it could have taken a partition.
* **sticky** (``StickyAssignor``, KIP-54): balance first, then keep as many previously owned
  partitions as possible.  With equal subscriptions Kafka uses the *constrained* builder (each
  member keeps up to its quota ``floor``/``ceil(P / N)`` of what it owned, the rest is dealt
  round-robin to members below quota); otherwise the *general* builder (keep what is still
  subscribed, give each unassigned partition to the least-loaded subscriber, then move partitions
  from a member to a subscriber with at least two fewer until no such move exists — Kafka's
  ``isBalanced``).  Previously owned partitions come from each member's subscription
  (``ownedPartitions`` + ``generation``); when two members claim one partition the higher
  generation wins and a tie invalidates both claims (``allSubscriptionsEqual``).
* **cooperative-sticky** (``CooperativeStickyAssignor``, KIP-429): the sticky assignment, minus
  every partition whose owner changes.  Such a partition is left unassigned in this generation:
  its old owner revokes it after SyncGroup and rejoins, and the follow-up rebalance hands it to its
  new owner.  No partition is ever owned by two members at once.

Since Kafka 4.0 the eager assignors are ``range``/``roundrobin``/``sticky``; all of them revoke
everything before joining (the eager protocol), so only ``cooperative-sticky`` relies on
``ownedPartitions`` for safety.  A **user-supplied assignor** is any Python callable with the same
signature as these functions, named ``"module:function"`` (the analogue of a
``ConsumerPartitionAssignor`` class named in ``partition.assignment.strategy``).

The book's worked examples (Range's and RoundRobin's imbalance, Sticky keeping the survivors'
partitions when a member leaves) are reproduced in ``tests/test_assignors.py``; the Kafka 2.0
StickyAssignor the book describes had only the general builder, which those tests run directly.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple


class TopicPartition(NamedTuple):
    """A partition of a topic, ordered by (topic, partition) like ``TopicPartition`` lists are."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}p{self.partition}"


DEFAULT_GENERATION = -1
"""``AbstractStickyAssignor.DEFAULT_GENERATION``: the generation of a member that never had one."""


@dataclass(frozen=True)
class Subscription:
    """A member's ``ConsumerProtocolSubscription``: its topics and, for the sticky assignors, what it
    owned in which generation (``ownedPartitions`` / ``generationId``, KIP-429 / KIP-792)."""

    topics: frozenset[str]
    owned_partitions: tuple[TopicPartition, ...] = ()
    generation: int = DEFAULT_GENERATION

    @staticmethod
    def of(*topics: str, owned: Iterable[TopicPartition] = (), generation: int = DEFAULT_GENERATION) -> Subscription:
        return Subscription(frozenset(topics), tuple(owned), generation)


Assignment = dict[str, tuple[TopicPartition, ...]]
"""member id → assigned partitions."""

Assignor = Callable[[Mapping[str, int], Mapping[str, Subscription]], Mapping[str, Iterable[TopicPartition]]]
"""``assign(partitions_per_topic, subscriptions)``: the shape of every assignor, user-supplied ones included."""


class AssignorError(ValueError):
    """An assignor name or ``module:function`` reference that cannot be resolved."""


def partitions_of(topic: str, count: int) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for p in range(count)]


def _freeze(assignment: Mapping[str, list[TopicPartition]]) -> Assignment:
    return {member: tuple(sorted(parts)) for member, parts in sorted(assignment.items())}


# ---------------------------------------------------------------------------------------------- range


def range_assign(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]) -> Assignment:
    """``RangeAssignor.assignPartitions`` without racks: consecutive ranges per topic, extras first."""
    assignment: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
    for topic in sorted(partitions_per_topic):
        count = partitions_per_topic[topic]
        members = sorted(m for m, s in subscriptions.items() if topic in s.topics)
        if not members or count <= 0:
            continue
        per_member, extra = divmod(count, len(members))
        start = 0
        for index, member in enumerate(members):
            take = per_member + (1 if index < extra else 0)
            assignment[member].extend(partitions_of(topic, count)[start:start + take])
            start += take
    return _freeze(assignment)


# ----------------------------------------------------------------------------------------- roundrobin


def round_robin_assign(partitions_per_topic: Mapping[str, int],
                       subscriptions: Mapping[str, Subscription]) -> Assignment:
    """``RoundRobinAssignor.assign``: deal the sorted partitions around the sorted members, skipping
    members that do not subscribe to the partition's topic (the circular iterator is *not* reset
    per partition, which is where unequal subscriptions lose balance)."""
    assignment: dict[str, list[TopicPartition]] = {member: [] for member in subscriptions}
    members = sorted(subscriptions)
    topics = sorted({t for s in subscriptions.values() for t in s.topics if t in partitions_per_topic})
    cursor = 0
    for topic in topics:
        for tp in partitions_of(topic, partitions_per_topic[topic]):
            # ``while (!subscriptions.get(assigner.peek().memberId).topics().contains(topic)) assigner.next()``: one
            # turn of the circle at most, since ``topics`` lists only topics some member subscribes to (a bounded
            # loop: a cursor that stopped moving assigns a non-subscriber, which exactly_once judges, not a hang)
            for _ in range(len(members)):  # no branch: some member subscribes to every listed topic
                if topic in subscriptions[members[cursor % len(members)]].topics:
                    break
                cursor += 1
            assignment[members[cursor % len(members)]].append(tp)
            cursor += 1
    return _freeze(assignment)


# --------------------------------------------------------------------------------------------- sticky


@dataclass
class _Owned:
    """The previous ownership the sticky builders start from (``allSubscriptionsEqual``)."""

    by_member: dict[str, list[TopicPartition]]
    doubly_claimed: set[TopicPartition]
    all_equal: bool


def _collect_owned(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]) -> _Owned:
    """Previously owned partitions per member, resolving conflicting claims by generation: the
    higher generation keeps the partition; equal generations both lose it (Kafka logs this as
    invalid input and treats the partition as unowned)."""
    by_member: dict[str, list[TopicPartition]] = {}
    owner_of: dict[TopicPartition, str] = {}
    doubly_claimed: set[TopicPartition] = set()
    topic_sets = {s.topics for s in subscriptions.values()}
    for member in sorted(subscriptions):
        sub = subscriptions[member]
        owned: list[TopicPartition] = []
        by_member[member] = owned
        for tp in sub.owned_partitions:
            if tp.topic not in partitions_per_topic or tp.partition >= partitions_per_topic[tp.topic]:
                continue
            other = owner_of.get(tp)
            if other is None:
                owned.append(tp)
                owner_of[tp] = member
                continue
            other_generation = subscriptions[other].generation
            if sub.generation == other_generation:
                doubly_claimed.add(tp)
                if tp in by_member[other]:
                    by_member[other].remove(tp)
                owner_of[tp] = member
            elif sub.generation > other_generation:
                owned.append(tp)
                if tp in by_member[other]:
                    by_member[other].remove(tp)
                owner_of[tp] = member
    return _Owned(by_member, doubly_claimed, len(topic_sets) <= 1)


def _constrained_assign(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription],
                        owned: _Owned) -> Assignment:
    """``ConstrainedAssignmentBuilder``: every member subscribes to the same topics.

    Each member keeps at most ``min_quota`` (or ``max_quota`` while fewer than ``P % N`` members
    have that many) of its owned partitions, sorted by (partition, topic); the remaining partitions,
    sorted by (topic, partition), are dealt round-robin first to the members under ``min_quota``
    and then, one each, to members at ``min_quota`` until ``P % N`` members hold ``max_quota``."""
    members = sorted(subscriptions)
    topics = sorted(t for t in next(iter(subscriptions.values())).topics if t in partitions_per_topic)
    total = sum(partitions_per_topic[t] for t in topics)
    min_quota, expected_over = divmod(total, len(members))
    max_quota = min_quota + (1 if expected_over else 0)
    assignment: dict[str, list[TopicPartition]] = {m: [] for m in members}
    under_min: list[str] = []
    at_min: list[str] = []
    over = 0
    for member in members:
        mine = sorted((tp for tp in owned.by_member[member]
                       if tp.topic in topics and tp not in owned.doubly_claimed),
                      key=lambda tp: (tp.partition, tp.topic))
        if len(mine) < min_quota:
            assignment[member].extend(mine)
            under_min.append(member)
        elif len(mine) >= max_quota and over < expected_over:
            over += 1
            if over == expected_over:
                at_min.clear()
            assignment[member].extend(mine[:max_quota])
        else:
            assignment[member].extend(mine[:min_quota])
            if over < expected_over:
                at_min.append(member)
    taken = {tp for parts in assignment.values() for tp in parts}
    unassigned = [tp for t in topics for tp in partitions_of(t, partitions_per_topic[t]) if tp not in taken]
    under_min.sort()
    at_min.sort()
    cursor = 0  # the position of Kafka's iterator over the members under min_quota
    for tp in unassigned:
        from_under = True
        if cursor < len(under_min):
            member = under_min[cursor]
        elif under_min:
            cursor = 0
            member = under_min[0]
        elif at_min:
            member = at_min.pop(0)
            from_under = False
        else:  # unreachable: the quotas leave room for every partition (Kafka: IllegalStateException)
            raise AssertionError("constrained sticky assignment ran out of unfilled members")
        assignment[member].append(tp)
        count = len(assignment[member])
        if from_under and count == min_quota:
            under_min.pop(cursor)
            at_min.append(member)
        else:
            if from_under:
                cursor += 1
            if count == max_quota:
                over += 1
    return _freeze(assignment)


def _general_assign(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription],
                    owned: _Owned) -> Assignment:
    """``GeneralAssignmentBuilder``: keep owned partitions the member still subscribes to, give each
    unassigned partition (topics with fewer potential consumers first) to the least-loaded
    subscriber (ties by member id), then repeatedly move a partition from its owner to the
    least-loaded subscriber having at least two fewer partitions, until ``isBalanced``.  Each such
    move strictly lowers Kafka's balance score, so the loop terminates and Kafka's "keep the
    pre-balance assignment unless the score improved" rule never undoes it.

    Unlike the constrained builder, the general one is not given ``partitionsWithMultiplePreviousOwners``
    (``AbstractStickyAssignor.assignPartitions``, Kafka trunk 1eb7644): it keeps every claim that survived
    ``allSubscriptionsEqual``'s generation check, so a partition two members claimed in one generation and a
    third member claimed later in a higher generation stays with that third member (KAFKA-12984's validation:
    the highest generation's claimant owns it)."""
    potential: dict[str, list[str]] = {
        t: sorted(m for m, s in subscriptions.items() if t in s.topics) for t in partitions_per_topic}
    sorted_topics = sorted(partitions_per_topic, key=lambda t: (len(potential[t]), t))
    sorted_all = [tp for t in sorted_topics for tp in partitions_of(t, partitions_per_topic[t])]
    assignment: dict[str, list[TopicPartition]] = {}
    owner: dict[TopicPartition, str] = {}
    for member in sorted(subscriptions):
        keep = [tp for tp in owned.by_member[member] if tp.topic in subscriptions[member].topics]
        assignment[member] = keep
        for tp in keep:
            owner[tp] = member

    def least_loaded(candidates: Iterable[str]) -> str | None:
        return min(candidates, key=lambda m: (len(assignment[m]), m), default=None)

    for tp in sorted_all:
        if tp in owner:
            continue
        chosen = least_loaded(potential[tp.topic])
        if chosen is not None:
            assignment[chosen].append(tp)
            owner[tp] = chosen

    moved, spread = True, _spread(assignment)
    while moved:
        moved = False
        for tp in sorted_all:
            current = owner.get(tp)
            if current is None or len(potential[tp.topic]) < 2:
                continue
            target = least_loaded(potential[tp.topic])
            if target is not None and len(assignment[current]) > len(assignment[target]) + 1:
                assignment[current].remove(tp)
                assignment[target].append(tp)
                owner[tp] = target
                moved = True
        # the loop's variant: a pass that moved a partition lowered the spread (termination, as the docstring argues)
        before, spread = spread, _spread(assignment)  # no mutate: the loop's termination witness (a model contract)
        if moved and spread >= before:  # no mutate: the loop's termination witness (a model contract)
            raise AssertionError("general sticky assignment: a rebalancing pass moved nothing and would loop forever")
    return _freeze(assignment)


def _spread(assignment: Mapping[str, list[TopicPartition]]) -> int:  # no mutate: a termination witness
    """The sum of the squared assignment sizes: a move from a member with ``n`` partitions to one with at most
    ``n - 2`` lowers it, so the general builder's rebalancing loop, which makes only such moves, ends."""
    return sum(len(parts) ** 2 for parts in assignment.values())


def sticky_assign(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]) -> Assignment:
    """``StickyAssignor`` (``AbstractStickyAssignor.assignPartitions``): the constrained builder when
    all subscriptions are equal, the general builder otherwise (never for an empty group: the leader
    that runs the assignor is a member)."""
    owned = _collect_owned(partitions_per_topic, subscriptions)
    if owned.all_equal:
        return _constrained_assign(partitions_per_topic, subscriptions, owned)
    return _general_assign(partitions_per_topic, subscriptions, owned)


def partitions_transferring_ownership(subscriptions: Mapping[str, Subscription],
                                      assignment: Mapping[str, Iterable[TopicPartition]]) -> dict[TopicPartition, str]:
    """``CooperativeStickyAssignor.computePartitionsTransferringOwnership``: partitions newly assigned
    to one member that another member owned and must revoke first (partition → new owner)."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member, parts in assignment.items():
        mine = set(parts)
        owned = set(subscriptions[member].owned_partitions) if member in subscriptions else set()
        for tp in mine - owned:
            added[tp] = member
        revoked |= owned - mine
    return {tp: m for tp, m in added.items() if tp in revoked}


def _sticky_with_transfers(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription]
                           ) -> tuple[Assignment, dict[TopicPartition, str]]:
    """The sticky assignment and the partitions it transfers (partition → new owner), as
    ``CooperativeStickyAssignor.assignPartitions`` gets them (Kafka trunk ``1eb7644349cb``): with equal
    subscriptions the constrained builder records them itself (``assignNewPartition``: a partition whose
    *validated* previous owner -- the claimant of the highest generation, KIP-792 -- is another member,
    or one claimed by two members of the same generation); otherwise ``partitionsTransferringOwnership``
    is null and they are computed from the subscriptions' raw ``ownedPartitions``
    (``computePartitionsTransferringOwnership``)."""
    owned = _collect_owned(partitions_per_topic, subscriptions)
    if not owned.all_equal:
        full = _general_assign(partitions_per_topic, subscriptions, owned)
        return full, partitions_transferring_ownership(subscriptions, full)
    full = _constrained_assign(partitions_per_topic, subscriptions, owned)
    previous = {tp: m for m, parts in owned.by_member.items() for tp in parts}
    moving = {tp: m for m, parts in full.items() for tp in parts
              if tp in owned.doubly_claimed or previous.get(tp, m) != m}
    return full, moving


def cooperative_sticky_assign(partitions_per_topic: Mapping[str, int],
                              subscriptions: Mapping[str, Subscription]) -> Assignment:
    """``CooperativeStickyAssignor.assignPartitions``: the sticky assignment with every partition that
    changes owner withheld (``adjustAssignment``), so its old owner revokes it before anyone else
    gets it; a follow-up rebalance assigns it (KIP-429)."""
    full, moving = _sticky_with_transfers(partitions_per_topic, subscriptions)
    return {m: tuple(tp for tp in parts if moving.get(tp) != m) for m, parts in full.items()}


def cooperative_rounds(partitions_per_topic: Mapping[str, int], subscriptions: Mapping[str, Subscription],
                       generation: int = 1, max_rounds: int = 16) -> list[Assignment]:
    """The cooperative rebalances a stable membership goes through: each member revokes what the
    last round withheld from it and rejoins owning exactly its assignment, until a round withholds
    nothing (``ConsumerCoordinator.onJoinComplete`` requests a rejoin whenever partitions were
    revoked, KIP-429).  Usually two rounds; the general sticky builder can need more because
    partitions freed by one round let it rebalance further."""
    rounds: list[Assignment] = []
    subs = dict(subscriptions)
    for _ in range(max_rounds):  # no branch: the rounds converge long before max_rounds
        full, moving = _sticky_with_transfers(partitions_per_topic, subs)
        rounds.append({m: tuple(tp for tp in parts if moving.get(tp) != m) for m, parts in full.items()})
        if not moving:
            break
        generation += 1
        subs = with_owned(subs, rounds[-1], generation)
    return rounds


# -------------------------------------------------------------------------------------------- registry

ASSIGNORS: dict[str, Assignor] = {
    "range": range_assign,
    "roundrobin": round_robin_assign,
    "sticky": sticky_assign,
    "cooperative-sticky": cooperative_sticky_assign,
}
"""Kafka's built-in assignors by protocol name (``ConsumerPartitionAssignor.name()``)."""

COOPERATIVE: frozenset[str] = frozenset({"cooperative-sticky"})
"""Assignors whose ``supportedProtocols()`` include COOPERATIVE (KIP-429)."""


def load_assignor(spec: str) -> Assignor:
    """A built-in assignor by name, or a user-supplied one as ``"package.module:function"``."""
    if spec in ASSIGNORS:
        return ASSIGNORS[spec]
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:  # input: a scenario's assignor name
        raise AssignorError(f"unknown assignor {spec!r}: expected one of {', '.join(ASSIGNORS)} "
                            "or a Python callable as 'module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AssignorError(f"assignor {spec!r}: cannot import {module_name!r} ({exc})") from exc
    fn = getattr(module, attr, None)
    if not callable(fn):  # input: a scenario's assignor name
        raise AssignorError(f"assignor {spec!r}: {module_name} has no callable {attr!r}")
    assignor: Assignor = fn
    return assignor


def run_assignor(assignor: Assignor, partitions_per_topic: Mapping[str, int],
                 subscriptions: Mapping[str, Subscription]) -> Assignment:
    """Call an assignor and normalise its result (members it left out get nothing; lists sorted;
    duplicates kept so the exactly-once property can see them)."""
    raw = assignor(partitions_per_topic, subscriptions)
    result: Assignment = {m: () for m in subscriptions}
    for member, parts in raw.items():
        result[member] = tuple(sorted(TopicPartition(tp[0], int(tp[1])) for tp in parts))
    return dict(sorted(result.items()))


def leader_assignment(assignor: Assignor, topic: str, partitions: int,
                      members: Iterable[tuple[str, tuple[int, ...], int]],
                      withhold_transfers: bool = True) -> dict[str, tuple[int, ...]]:
    """What the group leader's ``ConsumerCoordinator.onLeaderElected`` sends in its SyncGroup: the group's
    assignor run over every member's subscription to one topic of ``partitions`` partitions, each member
    given as (member id, ``ownedPartitions``, ``generationId``); member id -> partition numbers.

    ``withhold_transfers=False`` is the weakened variant ``cooperative_assigns_before_revoke``: the plain
    sticky assignment instead of the cooperative one (a moving partition is handed over at once)."""
    subs = {member: Subscription(frozenset({topic}), tuple(TopicPartition(topic, p) for p in owned), generation)
            for member, owned, generation in members}
    if not withhold_transfers:  # unreachable: weakened variant cooperative_assigns_before_revoke
        assignor = sticky_assign
    result = run_assignor(assignor, {topic: partitions}, subs)
    return {m: tuple(sorted(tp.partition for tp in parts)) for m, parts in result.items()}


def owners(assignment: Mapping[str, Iterable[TopicPartition]]) -> dict[TopicPartition, str]:
    """partition → member (the last one if an assignor, wrongly, gave it to several)."""
    return {tp: member for member, parts in assignment.items() for tp in parts}


def moved_partitions(before: Mapping[str, Iterable[TopicPartition]],
                     after: Mapping[str, Iterable[TopicPartition]]) -> frozenset[TopicPartition]:
    """Partitions assigned both before and after whose owner changed (the stickiness measure)."""
    old, new = owners(before), owners(after)
    return frozenset(tp for tp, member in new.items() if tp in old and old[tp] != member)


def with_owned(subscriptions: Mapping[str, Subscription], assignment: Mapping[str, Iterable[TopicPartition]],
               generation: int) -> dict[str, Subscription]:
    """The subscriptions members send in the next JoinGroup after receiving ``assignment``."""
    return {m: Subscription(s.topics, tuple(sorted(assignment.get(m, ()))), generation)
            for m, s in subscriptions.items()}
