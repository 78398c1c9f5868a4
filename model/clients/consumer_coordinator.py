"""The consumer's side of the classic group protocol: ``ConsumerCoordinator`` + fetch positions.

What a ``KafkaConsumer`` using ``subscribe()`` knows and how it reacts (Kafka 4.0
``clients/.../consumer/internals/ConsumerCoordinator.java`` and ``AbstractCoordinator.java``):

* its **member id** and **generation** (``AbstractCoordinator.Generation``), the coordinator it
  found (FindCoordinator), and where it is in a rebalance: ``UNJOINED`` (must send JoinGroup),
  ``JOINING`` (JoinGroup sent, waiting for the barrier), ``AWAITING_SYNC`` (join answered,
  SyncGroup to send), ``STABLE``;
* its **owned partitions** and a **fetch position** per owned partition.  Positions start at the
  committed offset (OffsetFetch) or, with none, at ``auto.offset.reset=earliest``;
* **eager protocol** (range, roundrobin, sticky): ``onJoinPrepare`` commits the positions
  (``enable.auto.commit``) and revokes *every* owned partition before JoinGroup;
* **cooperative protocol** (cooperative-sticky, KIP-429): keeps consuming its owned partitions
  through the rebalance, reports them in JoinGroup, and after SyncGroup revokes only those not in
  its new assignment — committing their positions in ``onPartitionsRevoked`` — and then rejoins
  if it revoked anything;
* **error handling** (``AbstractCoordinator``'s response handlers): UNKNOWN_MEMBER_ID resets the
  member id and generation, ILLEGAL_GENERATION resets the generation; both *lose* the owned
  partitions without committing (``onPartitionsLost``) and rejoin.  REBALANCE_IN_PROGRESS only
  requests a rejoin.  Any other error is "Unexpected error in ... response" (a ``KafkaException``
  raised from ``poll()``; GROUP_AUTHORIZATION_FAILED and FENCED_INSTANCE_ID are fatal as well): the
  consumer is ``FAILED`` and takes no further part.  ``max.poll.interval.ms`` expiring makes the heartbeat thread send
  LeaveGroup; the partitions are lost and the member id reset.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from keos.model.codec import record
from keos.model.coordinator.group import classic_group as cg
from keos.model.protocol.errors import MEMBER_ID_REQUIRED, RETRIABLE, Errors

__all__ = [
    "AWAITING_SYNC",
    "FAILED",
    "JOINING",
    "STABLE",
    "UNJOINED",
    "Consumer",
    "JoinOutcome",
    "join_completed",
    "join_group",
    "on_commit_response",
    "on_error",
    "on_heartbeat_response",
    "on_join_response_error",
    "sync_group",
]

UNJOINED = "UNJOINED"
JOINING = "JOINING"
AWAITING_SYNC = "AWAITING_SYNC"
STABLE = "STABLE"
#: poll() raised the unexpected error of a group response: the application's loop ends
FAILED = "FAILED"

NO_GENERATION = -1


@record
class Consumer(NamedTuple):
    """One consumer process."""

    up: bool
    member_id: str
    generation: int
    state: str
    owned: tuple[int, ...]
    positions: tuple[tuple[int, int], ...]  # (partition, next offset to fetch)
    coordinator: int  # the coordinator epoch it found; -1: unknown (FindCoordinator needed)
    committed: tuple[tuple[int, int], ...] = ()  # what it last committed (or fetched) per owned partition
    #: its last OffsetCommit request as sent (member id, generation, offsets): a copy of it may still be in
    #: flight -- a ``commitAsync`` or a timed-out ``commitSync`` attempt -- and reach the coordinator late
    sent: tuple[str, int, tuple[tuple[int, int], ...]] = ("", NO_GENERATION, ())
    #: its last SyncGroup assignment and the generation it came in: what a faulty client that keeps
    #: out-of-date ``ownedPartitions`` (KAFKA-13419) reports in its next JoinGroup
    last_assignment: tuple[tuple[int, ...], int] = ((), NO_GENERATION)
    #: the (member id, generation) its heartbeat thread sent a Heartbeat with whose response has not arrived yet
    #: (``AbstractCoordinator.HeartbeatResponseHandler``'s ``sentGeneration``); ("", -1): none in flight
    beat: tuple[str, int] = ("", NO_GENERATION)
    #: a SyncGroup answer (assignment, the generation the request carried) on its way back: the coordinator
    #: already took the SyncGroup; (() , -1): none in flight
    held_sync: tuple[tuple[int, ...], int] = ((), NO_GENERATION)
    #: an eager ``onJoinPrepare`` sent its auto-commit asynchronously and that commit's future is not done yet
    #: (``ConsumerCoordinator.autoCommitOffsetRequestFuture``, Kafka 3.2+): the member revokes and sends its JoinGroup
    #: only once it completes; meanwhile its partitions are pending revocation (KAFKA-14196: not fetchable)
    preparing: bool = False
    #: its SyncGroup is held up past ``rebalance.timeout.ms`` while its heartbeat thread keeps the session alive (the
    #: groups fault StallSync: a leader whose assignor blocks, an application thread stuck between its JoinGroup
    #: answer and its SyncGroup -- KAFKA-12890's member); it sends the SyncGroup once the group no longer waits for it
    stalled: bool = False

    def uncommitted(self, partitions: tuple[int, ...] | None = None) -> tuple[int, ...]:
        """Owned partitions whose position differs from what this consumer last committed."""
        done = dict(self.committed)
        return tuple(p for p, o in self.positions if (partitions is None or p in partitions) and done.get(p) != o)

    def position(self, partition: int) -> int:
        """The fetch position of an owned partition (every owned partition has one)."""
        return dict(self.positions)[partition]


def fresh(up: bool) -> Consumer:
    return Consumer(up, "", NO_GENERATION, UNJOINED, (), (), -1, ())


def lose_partitions(c: Consumer) -> Consumer:
    """``onPartitionsLost``: drop ownership without committing."""
    return c._replace(owned=(), positions=(), committed=())


def on_error(c: Consumer, error: str, rebalance_rejoins: bool = True,
             rebalance_keeps_generation: bool = True, fenced_loses_partitions: bool = True) -> Consumer:
    """How a group request's error moves the consumer (Kafka 4.0, trunk 1eb7644, ``AbstractCoordinator``'s
    JoinGroup/SyncGroup/Heartbeat response handlers, ``ConsumerCoordinator.OffsetCommitResponseHandler``):
    UNKNOWN_MEMBER_ID and ILLEGAL_GENERATION reset the generation (the first the member id too) and lose
    the partitions; REBALANCE_IN_PROGRESS requests a rejoin (``requestRejoin``), keeping member id,
    generation and partitions; COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR (a failed group-metadata
    append) mark the coordinator unknown and rejoin, keeping them too.  Every other error the handlers do not
    name is raised from ``poll()`` as
    "Unexpected error in ... response": the consumer is FAILED.  ``rebalance_rejoins=False`` is the
    weakened variant consumer_fails_on_rebalance_in_progress; ``rebalance_keeps_generation=False`` the weakened
    variant rebalance_in_progress_resets_generation (REBALANCE_IN_PROGRESS taken as ILLEGAL_GENERATION);
    ``fenced_loses_partitions=False`` the weakened variant fenced_member_keeps_partitions (no ``onPartitionsLost``:
    the fenced member keeps its partitions and positions while it rejoins)."""
    lost = lose_partitions(c) if fenced_loses_partitions else c
    if error == Errors.UNKNOWN_MEMBER_ID:
        return lost._replace(member_id="", generation=NO_GENERATION, state=UNJOINED)
    if error == Errors.ILLEGAL_GENERATION:
        return lost._replace(generation=NO_GENERATION, state=UNJOINED)
    if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
        # JoinGroup/SyncGroupResponseHandler: markCoordinatorUnknown and a retriable failure -- joinGroupIfNeeded
        # rediscovers the coordinator and sends the JoinGroup again with the member id and generation it has
        return c._replace(state=UNJOINED, coordinator=-1)
    if error == Errors.REBALANCE_IN_PROGRESS and rebalance_rejoins:  # no branch: the other side is a violation
        if not rebalance_keeps_generation:  # no branch: weakened variant rebalance_in_progress_resets_generation
            return lose_partitions(c)._replace(generation=NO_GENERATION, state=UNJOINED)
        return c._replace(state=UNJOINED)
    return c._replace(state=FAILED)


def on_join_response_error(c: Consumer, error: str, rebalance_rejoins: bool = True,
                           rebalance_retried: bool = True) -> Consumer:
    """``AbstractCoordinator.JoinGroupResponseHandler``'s error cases (Kafka 4.0, trunk 1eb7644; :func:`on_error`):
    UNKNOWN_MEMBER_ID resets the member id, COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR mark the coordinator unknown,
    REBALANCE_IN_PROGRESS -- a 2.x-3.9 coordinator's answer when its write of the group metadata timed out -- is
    retried (named since KAFKA-10870, PR #9792, Kafka 2.8), FENCED_INSTANCE_ID is fatal.  ``rebalance_retried=False``
    is the weakened variant join_rebalance_in_progress_fatal (KAFKA-10870: "Unexpected error in join group
    response")."""
    if error == Errors.REBALANCE_IN_PROGRESS and not rebalance_retried:  # no branch: weakened variant only
        return c._replace(state=FAILED)
    return on_error(c, error, rebalance_rejoins)


def on_heartbeat_response(c: Consumer, error: str, sent: tuple[str, int], rebalance_rejoins: bool = True,
                          rebalance_keeps_generation: bool = True, fenced_loses_partitions: bool = True,
                          checks_generation: bool = True) -> Consumer:
    """``AbstractCoordinator.HeartbeatResponseHandler`` (Kafka 4.0, trunk 1eb7644) for a Heartbeat sent as ``sent``
    (member id, generation): NONE changes nothing; REBALANCE_IN_PROGRESS requests a rejoin only from a STABLE member
    ("we may be sending the request during rebalance": in COMPLETING_REBALANCE, here AWAITING_SYNC, it is ignored);
    ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID reset the member (:func:`on_error`) only if
    ``generationUnchanged()`` -- the consumer still has the identity it sent -- and are ignored once a rejoin gave
    it another ("attempt to heartbeat with stale generation ..., ignoring the error"): a late response must not
    undo the rebalance the member completed since.  ``checks_generation=False`` is the weakened variant
    stale_heartbeat_resets_member (the response's error applied whatever generation it was sent in)."""
    if error == Errors.NONE:
        return c
    if error == Errors.REBALANCE_IN_PROGRESS and c.state != STABLE:
        return c
    fenced = error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID, Errors.FENCED_INSTANCE_ID)
    if fenced and checks_generation and sent != (c.member_id, c.generation):
        return c
    return on_error(c, error, rebalance_rejoins, rebalance_keeps_generation, fenced_loses_partitions)


def on_commit_response(c: Consumer, error: str, sent: tuple[str, int], rebalance_rejoins: bool = True,
                       rebalance_keeps_generation: bool = True, fenced_loses_partitions: bool = True,
                       checks_generation: bool = True) -> Consumer:
    """``ConsumerCoordinator.OffsetCommitResponseHandler`` (Kafka trunk 1eb7644) for an OffsetCommit sent as ``sent``
    (member id, generation: ``generationIfStable()`` when it was sent), on ``c`` as it is when the answer arrives:

    * NONE changes nothing (the commit callback completes);
    * REBALANCE_IN_PROGRESS: ``requestRejoin`` -- a STABLE member rejoins keeping member id, generation and
      partitions (RebalanceInProgressException); a member already in a rebalance is unchanged;
    * UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION: if the consumer has since left the identity it sent
      (``generationUnchanged()`` false, KAFKA-9823) *and* is in PREPARING_REBALANCE (here JOINING: its JoinGroup is
      out), it only raises RebalanceInProgressException; otherwise ``resetStateOnResponseError``
      (:func:`on_error`: CommitFailedException, member id reset only for UNKNOWN_MEMBER_ID) -- in Kafka also a
      member that rejoined since and is past PREPARING_REBALANCE;
    * FENCED_INSTANCE_ID: fatal if the identity is unchanged, else only an exception (no state change);
    * COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR / REQUEST_TIMED_OUT: ``markCoordinatorUnknown`` (FindCoordinator
      again; retried) -- REQUEST_TIMED_OUT is what the Scala ``GroupMetadataManager.storeOffsets`` (2.x-3.9) answers a
      timed-out offsets append with;
      COORDINATOR_LOAD_IN_PROGRESS and UNKNOWN_TOPIC_OR_PARTITION (a coordinator whose metadata does not know the
      topic yet; retried since KAFKA-6829, Kafka 2.0): retried, no state change;
    * anything else: "Unexpected error in commit" (the consumer is FAILED, as :func:`on_error`).

    ``checks_generation=False`` is the weakened variant stale_commit_response_resets_member (the handler before
    KAFKA-9823: every fencing error resets the member whatever it was sent with)."""
    unchanged = sent == (c.member_id, c.generation)
    if error == Errors.NONE:
        return c
    if error in (Errors.COORDINATOR_LOAD_IN_PROGRESS,  # unreachable: no coordinator error answers a commit here
                 Errors.UNKNOWN_TOPIC_OR_PARTITION):
        return c
    if error == Errors.NOT_COORDINATOR:  # the coordinator moved mid-commit (groups' MovedCoordinatorCommit)
        return c._replace(coordinator=-1)
    if error == Errors.COORDINATOR_NOT_AVAILABLE:  # a failed append of the offsets (groups' CommitAppendFails)
        return c._replace(coordinator=-1)
    if error == Errors.REQUEST_TIMED_OUT:  # unreachable: no scenario draws the Scala storeOffsets' timeout answer
        return c._replace(coordinator=-1)
    if error == Errors.REBALANCE_IN_PROGRESS and c.state != STABLE:  # a client that commits before its SyncGroup
        return c  # answer (groups' EarlyCommit): requestRejoin changes nothing while the rebalance is under way
    if error == Errors.FENCED_INSTANCE_ID and not unchanged and checks_generation:
        return c
    fenced = error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION)
    if fenced and not unchanged and c.state == JOINING and checks_generation:
        return c
    return on_error(c, error, rebalance_rejoins, rebalance_keeps_generation, fenced_loses_partitions)


#: The consumer generations whose ``OffsetFetchResponseHandler`` the model knows: "3.8" (before KAFKA-17279, Kafka
#: 3.9: COORDINATOR_LOAD_IN_PROGRESS retried, NOT_COORDINATOR rediscovered and retried, every other error fatal) and
#: "4.0" (trunk 1eb7644).
FETCH_CLIENTS = ("3.8", "4.0")


def on_offset_fetch_error(c: Consumer, error: str, client: str = "4.0", retries_retriable: bool = True) -> Consumer:
    """``ConsumerCoordinator.OffsetFetchResponseHandler`` on a top-level ``error`` (the committed offsets of the
    partitions ``c`` was just assigned, ``refreshCommittedOffsetsIfNeeded``), Kafka 4.0 (trunk 1eb7644, KAFKA-17279):
    COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR -- ``markCoordinatorUnknown``, retried once the coordinator is found
    again; GROUP_AUTHORIZATION_FAILED -- fatal; any other ``RetriableException`` (COORDINATOR_LOAD_IN_PROGRESS,
    REQUEST_TIMED_OUT, ...) -- retried; anything else -- "Unexpected error in fetch offset response", raised from
    ``poll()``: the consumer is FAILED.  A retry reads the same committed offsets (no other member commits a
    partition that is not its own), so a retried fetch changes only whether the coordinator must be found again.
    ``client="3.8"``: the handler before KAFKA-17279 (COORDINATOR_LOAD_IN_PROGRESS retried, NOT_COORDINATOR
    rediscovered, everything else fatal) -- still the consumer of many users of a 4.0 cluster.
    ``retries_retriable=False`` is the weakened variant no_kafka_17279_fix: the 4.0 client with the 3.8 handler."""
    if client == "3.8" or not retries_retriable:
        if error == Errors.COORDINATOR_LOAD_IN_PROGRESS:
            return c
        if error == Errors.NOT_COORDINATOR:
            return c._replace(coordinator=-1)
        return c._replace(state=FAILED)
    if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
        return c._replace(coordinator=-1)
    if error in RETRIABLE:
        return c
    return c._replace(state=FAILED)  # unreachable: every answer a fault draws is retriable


def assigned(c: Consumer, assignment: tuple[int, ...], committed: dict[int, int]) -> tuple[Consumer, tuple[int, ...]]:
    """SyncGroup's assignment arrives: keep positions of partitions still owned, fetch the committed
    offset of added ones.  Returns the consumer and the partitions it revokes (owned, not assigned)."""
    revoked = tuple(p for p in c.owned if p not in assignment)
    positions = tuple((p, c.position(p) if p in c.owned else committed.get(p, 0)) for p in sorted(assignment))
    mine = dict(c.committed)
    done = tuple((p, mine[p] if p in c.owned else o) for p, o in positions if p in mine or p not in c.owned)
    return c._replace(owned=tuple(sorted(assignment)), positions=positions, state=STABLE, committed=done), revoked


class JoinOutcome(NamedTuple):
    group: cg.ClassicGroup
    consumer: Consumer
    event: str  # join:<error>, join:current_generation (answered at once) or join:waiting (at the barrier)
    error: str = Errors.NONE  # the coordinator's answer (NONE for a member admitted to the join)
    member_id: str = ""  # the member id the coordinator admitted it under (a waiting static member does not know it)


def join_group(group: cg.ClassicGroup, client: int, c: Consumer, owned: tuple[int, ...], generation: int,
               answer_unchanged: bool = True, rebalance_rejoins: bool = True, instance: str = "",
               static_keeps_generation: bool = True, updates_metadata: bool = True,
               requires_member_id: bool = False, clears_pending: bool = True,
               static_completing_rebalances: bool = True, rebalance_retried: bool = True) -> JoinOutcome:
    """The consumer's JoinGroup -- its member id (empty for a new member) and its subscription metadata
    (``ownedPartitions`` and the generation they were owned in, ``ConsumerCoordinator.metadata()``) -- at the
    coordinator (:func:`~keos.model.coordinator.group.classic_group.join_group`), and the response as
    ``AbstractCoordinator.JoinGroupResponseHandler`` takes it: an error goes to :func:`on_error`; an answer
    with the current generation lets the member send SyncGroup; otherwise it waits at the join barrier.
    ``instance`` is the consumer's ``group.instance.id`` (KIP-345; "" for a dynamic member), sent in every
    group request.  MEMBER_ID_REQUIRED (JoinGroup v4+, KIP-394; ``JoinGroupResponseHandler``, Kafka trunk 1eb7644)
    is not an error to the consumer: it takes the member id the response carries, with no generation, and
    rejoins with it (``requestRejoin``)."""
    res = cg.join_group(group, client, c.member_id, owned, generation, answer_unchanged, instance,
                        static_keeps_generation, updates_metadata, requires_member_id, clears_pending,
                        static_completing_rebalances)
    if res.error == MEMBER_ID_REQUIRED:
        c = c._replace(member_id=res.member_id, generation=NO_GENERATION, state=UNJOINED)
        return JoinOutcome(res.group, c, "join:MEMBER_ID_REQUIRED", res.error, res.member_id)
    if res.error != Errors.NONE:
        return JoinOutcome(res.group, on_join_response_error(c, res.error, rebalance_rejoins, rebalance_retried),
                           f"join:{res.error}", res.error)
    if res.immediate:
        c = c._replace(member_id=res.member_id, generation=res.group.generation, state=AWAITING_SYNC)
        return JoinOutcome(res.group, c, "join:current_generation", member_id=res.member_id)
    # a dynamic member learned its member id from MEMBER_ID_REQUIRED before it waits (KIP-394); a static member's
    # new process is admitted at once and learns its member id only from the JoinGroup response (KIP-345)
    known = c.member_id if instance and not c.member_id else res.member_id
    return JoinOutcome(res.group, c._replace(member_id=known, state=JOINING), "join:waiting", member_id=res.member_id)


def join_completed(c: Consumer, group: cg.ClassicGroup, member_id: str | None = None) -> Consumer:
    """The join barrier lifted (:func:`~keos.model.coordinator.group.classic_group.complete_join`): a member
    whose JoinGroup waited there (as ``member_id``: by default the consumer's own) learns its member id and the new
    generation and sends SyncGroup; anyone else is unchanged."""
    member_id = c.member_id if member_id is None else member_id
    if c.up and c.state == JOINING and member_id and group.member(member_id) is not None:
        return c._replace(member_id=member_id, generation=group.generation, state=AWAITING_SYNC)
    return c


def sync_group(group: cg.ClassicGroup, c: Consumer,
               assign: Callable[[cg.ClassicGroup], dict[str, tuple[int, ...]]],
               instance: str = "") -> cg.SyncResult | None:
    """The consumer's SyncGroup at the coordinator: the leader's carries the assignment its assignor computed
    over the members' subscriptions (``onLeaderElected``), a follower's none (``onJoinFollower``).  ``None``
    while a follower's request would be parked (the leader has not synced yet)."""
    plan = assign(group) if c.member_id == group.leader else None
    return cg.sync_group(group, c.member_id, c.generation, plan, instance)
