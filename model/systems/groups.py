"""The composed consumer-group model: consumers, their group coordinator and ``__consumer_offsets``.

The classic rebalance protocol end to end, as the book's chapter on consumer coordination walks
through it (FIND_COORDINATOR → JOIN_GROUP → SYNC_GROUP → HEARTBEAT) and Kafka 4.0 implements it,
as a :class:`keos.model.interface.Model`:

* consumers ``c0..c{n-1}`` (:mod:`keos.model.clients.consumer_coordinator`) subscribed to one
  topic ``t0`` whose partitions hold ``records`` records each; they poll records and commit
  their positions;
* the group coordinator's classic group (:mod:`keos.model.coordinator.group.classic_group`) and
  its ``__consumer_offsets`` partition (:mod:`keos.model.coordinator.group.offsets_log`);
* the leader member runs the group's assignor (:mod:`keos.model.coordinator.group.assignors`:
  range, roundrobin, sticky — the eager protocol — or cooperative-sticky, or a user callable).

Each client request and its response is one atomic step, but where a budget delays an answer (Heartbeat,
SyncGroup: LateHeartbeat, DelaySyncResponse); what else the protocol must survive is modelled as actions:

========================  =====================================================================
protocol steps            FindCoordinator, Start (a consumer process starts or restarts),
                          JoinPrepare (``async_join_prepare``: an eager onJoinPrepare's asynchronous
                          auto-commit, before the revocation and the JoinGroup),
                          JoinGroup, CompleteJoin (the join barrier), SyncGroup, Heartbeat (only
                          when it answers an error), Poll, Commit
timing steps              ExpireSession (``session.timeout.ms`` for a member whose process is
                          gone), ExpirePending (the same for a KIP-394 pending member id no consumer
                          holds), StaleSessionExpiry (the session timer of a member id the group no longer
                          holds fires: a static member's replaced id, whose timer Kafka 4.0 leaves
                          scheduled), ExpirePendingSync (``rebalance.timeout.ms`` after the join barrier for a
                          member whose SyncGroup is held up, KAFKA-12890), ExpireOffsets
                          (``offsets.retention.minutes`` of an Empty group),
                          Compact (the log cleaner; budget ``compactions``)
faults (budgeted)         LoseHeartbeats (the session expires while the consumer keeps working:
                          a zombie), CrashConsumer, PollTimeout (``max.poll.interval.ms``: a slow
                          consumer leaves), LeaveGroup (a consumer closes), CoordinatorFailover,
                          LateCommit (a copy of a consumer's OffsetCommit sent in an earlier
                          generation reaches the coordinator only after the group moved on; its
                          answer reaches the consumer's OffsetCommitResponseHandler),
                          StaleJoinGroup (a faulty client's JoinGroup claims the partitions of its
                          last assignment, in that assignment's generation, though it lost them),
                          LoseJoinResponse (a JoinGroup response is lost: the consumer sends the
                          same JoinGroup again), CreatePartitions (partitions are added to the topic:
                          the leader, whose metadata changed, rejoins and the group must rebalance),
                          LateHeartbeat (the response to a Heartbeat the consumer sent with an earlier member
                          id or generation arrives after a rejoin gave it another), DelaySyncResponse (the
                          coordinator took a SyncGroup but its answer is still on its way: SyncResponse delivers it,
                          perhaps after the heartbeat thread reset the generation), LoseMemberIdResponse (JoinGroup
                          v4+: a MEMBER_ID_REQUIRED answer is lost and the consumer asks again, KIP-394),
                          RebalanceTimeout (``rebalance.timeout.ms`` expires in PreparingRebalance before every
                          member rejoined: the coordinator completes the join without the dynamic members that did
                          not rejoin -- which may still be consuming -- keeps the static ones, and starts the next
                          generation), StallSync (a member's SyncGroup is held up past ``rebalance.timeout.ms``
                          while its heartbeat thread keeps its session alive: KAFKA-12890's member),
                          OffsetFetchFails (the new owner's requireStable OffsetFetch of the partitions its SyncGroup
                          answer assigned meets a failed write, a loading or an inactive coordinator: answered as
                          Kafka 4.0 answers it, to a 4.0 or a 3.8 consumer)
========================  =====================================================================

The rebalance timeout is the coordinator's delayed join expiring (``completeClassicGroupJoin``): a budgeted fault,
since a live consumer always rejoins in the end and a step always enabled would remove a healthy member over and
over; the consumer's own ``max.poll.interval.ms`` is the PollTimeout fault, a dead consumer's session ExpireSession.

Ghost state: the highest offset the coordinator ever acknowledged per partition since the last
expiry (``max_committed``), for ``committed_offsets_never_regress``; whether the group has
formed (late consumers start after that); the rebalances a JoinGroup that changed nothing started
(``needless``, for ``no_needless_rebalance``); the partitions a member of the current generation gave
up without its position committed (``uncommitted_handovers``, for ``revoked_partitions_committed``); the
partitions a new owner started at another offset than the group's committed one (``misplaced_starts``, for
``new_owner_resumes_at_committed_offset``); the OffsetCommits answered otherwise than Kafka's member and
generation checks (``misfenced``, :mod:`~keos.model.systems.commit_fencing`, for ``commits_fenced_exactly``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, NamedTuple

from keos.model import codec
from keos.model.clients import consumer_coordinator as cc
from keos.model.clients.consumer_coordinator import Consumer
from keos.model.codec import record
from keos.model.coordinator.group import append_errors as aerr
from keos.model.coordinator.group import assignors as asg
from keos.model.coordinator.group import classic_group as cg
from keos.model.coordinator.group import offsets_log as olog
from keos.model.interface import Action, ModelError, Property, Step
from keos.model.protocol.errors import Errors
from keos.model.systems.commit_fencing import misfenced
from keos.model.variants import Variant

__all__ = ["GROUP_ACTION_ARGS", "GroupState", "GroupSystem", "GroupsConfig", "GroupsFaultBudget", "GroupsTopology"]

TOPIC = "t0"
#: The consumer's states inside a rebalance (``AbstractCoordinator.rebalanceInProgress()``: JoinGroup sent -- the
#: model's JOINING -- or answered with SyncGroup still to come -- AWAITING_SYNC; Kafka 4.0, trunk 1eb7644).
REBALANCING = (cc.JOINING, cc.AWAITING_SYNC)
GROUP_ID = "consumerGroupId"
#: the ``group.instance.id`` of a consumer outside group management (``assign()``) that commits to this group
#: (KAFKA-14201): no member of the group holds it
STANDALONE_INSTANCE = "standalone"

GROUP_FAULT_KINDS = (
    "lost_heartbeats", "crash", "poll_timeout", "leave", "coordinator_failover", "late_commit", "stale_subscription",
    "lost_join_response", "create_partitions", "late_heartbeat", "late_sync_response", "lost_member_id",
    "rebalance_timeout", "moved_coordinator_commit", "commit_before_sync", "stalled_sync", "group_append_failure",
    "standalone_commit", "offset_fetch_failure",
)
#: The errors a group request is answered when the coordinator's write of the group metadata to ``__consumer_offsets``
#: fails: Kafka 4.0's ``GroupMetadataManager.appendGroupMetadataErrorToResponseError`` (trunk 1eb7644) maps
#: NOT_ENOUGH_REPLICAS / REQUEST_TIMED_OUT to COORDINATOR_NOT_AVAILABLE and NOT_LEADER_OR_FOLLOWER to NOT_COORDINATOR;
#: the Scala coordinator before it (``kafka.coordinator.group.GroupMetadataManager.storeGroup``, 2.x-3.9) maps
#: REQUEST_TIMED_OUT to REBALANCE_IN_PROGRESS -- the JoinGroup answer KAFKA-10870's client took as fatal.  (The record
#: too large errors map to UNKNOWN_SERVER_ERROR, fatal to the client by design: no transient fault, not modelled.)
APPEND_ERRORS = (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR, Errors.REBALANCE_IN_PROGRESS)
#: A fault kind's slot in ``faults_used`` (``_fault_allowed`` runs for every kind in every state).
_GROUP_FAULT_INDEX = {kind: k for k, kind in enumerate(GROUP_FAULT_KINDS)}


@dataclass(frozen=True)
class GroupsTopology:
    """``[groups]`` of a scenario."""

    consumers: int = 2
    late_consumers: int = 0  # the last ones start only after the group first became Stable
    partitions: int = 2
    records: int = 1
    assignor: str = "range"
    compactions: int = 0
    #: ``ConsumerProtocolSubscription`` version the consumers send: 1 (Kafka 2.4-3.3: ownedPartitions, KIP-429, but
    #: no generationId) or 2+ (Kafka 3.4+, KIP-792: the generation the partitions were owned in)
    subscription_version: int = 3
    #: each consumer's ``group.instance.id`` (KIP-345 static membership), comma-separated in consumer order; an
    #: empty entry (or "") is a dynamic member.  Two consumers with one instance id are two processes of one
    #: static member: the later one replaces the earlier in the group, which is then fenced (FENCED_INSTANCE_ID)
    group_instance_ids: str = ""
    #: the ``JoinGroup`` version the consumers send: 2-3 (no KIP-394 round trip: a new member joins at once) or 4-9
    #: (KIP-394, every Kafka client since 2.2: a new dynamic member is answered MEMBER_ID_REQUIRED with its member id
    #: and sends JoinGroup again with it; the coordinator keeps the id pending until then or until it expires)
    join_group_version: int = 3
    #: an eager consumer's ``onJoinPrepare`` auto-commit is asynchronous (Kafka 3.2+, ``maybeAutoCommitOffsetsAsync``):
    #: JoinPrepare sends it, and the consumer revokes and sends its JoinGroup in a later poll, once the commit's
    #: future completed -- the split where KAFKA-14196 lived (partitions fetched while that commit is in flight);
    #: off, onJoinPrepare commits synchronously inside the JoinGroup step
    async_join_prepare: bool = False
    #: the errors a failed group-metadata append may answer (fault ``group_append_failure``), comma-separated, a subset
    #: of ``APPEND_ERRORS``: Kafka 4.0's coordinator answers the first two, a 2.x-3.9 one REBALANCE_IN_PROGRESS too
    append_errors: str = "COORDINATOR_NOT_AVAILABLE,NOT_COORDINATOR,REBALANCE_IN_PROGRESS"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GroupsFaultBudget:
    """``[faults]`` of a groups scenario: per-kind limits and a total."""

    lost_heartbeats: int = 0
    crash: int = 0
    poll_timeout: int = 0
    leave: int = 0
    coordinator_failover: int = 0
    late_commit: int = 0
    stale_subscription: int = 0
    lost_join_response: int = 0
    create_partitions: int = 0
    late_heartbeat: int = 0
    late_sync_response: int = 0
    lost_member_id: int = 0
    rebalance_timeout: int = 0
    moved_coordinator_commit: int = 0
    commit_before_sync: int = 0
    stalled_sync: int = 0
    group_append_failure: int = 0
    standalone_commit: int = 0
    offset_fetch_failure: int = 0
    total: int = 0

    def limits(self) -> tuple[int, ...]:
        return tuple(getattr(self, k) for k in GROUP_FAULT_KINDS)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GroupsConfig:
    topology: GroupsTopology = field(default_factory=GroupsTopology)
    faults: GroupsFaultBudget = field(default_factory=GroupsFaultBudget)


@record
class GroupGhost(NamedTuple):
    max_committed: tuple[tuple[int, int], ...]
    formed: bool
    needless: tuple[str, ...] = ()  # rebalances started by a JoinGroup that changed nothing
    uncommitted_handovers: tuple[str, ...] = ()  # partitions revoked by a current member, position not committed
    misplaced_starts: tuple[str, ...] = ()  # partitions a new owner started elsewhere than at the committed offset
    misfenced: tuple[str, ...] = ()  # OffsetCommits answered otherwise than ClassicGroup.validateOffsetCommit does
    misanswered: tuple[str, ...] = ()  # SyncGroups/Heartbeats answered otherwise than Kafka's member checks
    misreacted: tuple[str, ...] = ()  # consumers that reacted to a group answer otherwise than Kafka's client does
    misrecorded: tuple[str, ...] = ()  # admitted JoinGroups whose subscription the coordinator does not hold after
    unrequested_rejoins: tuple[str, ...] = ()  # Stable members that left Stable with no reason Kafka's client has
    #: static members the rebalance timeout kept in the group without their rejoining, until they rejoin: their
    #: consumer may still own what it owned in the previous generation (it has not heard of the rebalance)
    kept_unjoined: tuple[str, ...] = ()
    unjust_removals: tuple[str, ...] = ()  # members the coordinator removed for no reason Kafka has
    unjoined_leaders: tuple[str, ...] = ()  # generations whose join completed with a leader that had not rejoined
    #: the member-id counter at each deletion of the group (offsets expiry): a member id below a boundary belongs to
    #: an earlier incarnation of the group, whose generations the new group counts again from 0 (Kafka's member ids
    #: are random; a generation number alone does not name a generation across a deletion)
    incarnations: tuple[int, ...] = ()
    #: consumers that a coordinator change (FindCoordinator) reset, stripped of partitions or moved out of a rebalance
    dropped_on_move: tuple[str, ...] = ()
    #: consumers that took a member id or generation the coordinator did not hold after the step that gave it to them
    unissued: tuple[str, ...] = ()
    #: OffsetCommits the Java consumer sent without ``generationIfStable()`` (during a rebalance, or no generation)
    unguarded_commits: tuple[str, ...] = ()
    #: rebalances the coordinator started on a step that neither sent a JoinGroup nor changed the membership nor failed
    #: the write of an assignment (``rebalance_has_cause``)
    causeless_rebalances: tuple[str, ...] = ()


@record
class GroupState(NamedTuple):
    consumers: tuple[Consumer, ...]
    group: cg.ClassicGroup
    faults_used: tuple[int, ...]
    compactions: int
    ghost: GroupGhost
    added_partitions: int = 0  # partitions added to the topic since the start (CreatePartitions)
    #: the partition count of the topic metadata the leader took its assignment snapshot from when its JoinGroup was
    #: answered with the members (``ConsumerCoordinator.onLeaderElected``: ``assignmentSnapshot = metadataSnapshot``;
    #: kept only where partitions can be added): the assignor runs on it, and the leader rejoins once the metadata no
    #: longer matches it (``rejoinNeededOrPending``); -1: none taken
    leader_snapshot: int = -1


GROUP_ACTION_ARGS: dict[str, tuple[str, ...]] = {  # no mutate: trace format (JSON keys, display)
    "FindCoordinator": ("consumer",),
    "Start": ("consumer",),
    "JoinGroup": ("consumer",),
    "JoinPrepare": ("consumer",),
    "CompleteJoin": (),
    "SyncGroup": ("consumer",),
    "Heartbeat": ("consumer",),
    "Poll": ("consumer", "partition"),
    "Commit": ("consumer",),
    "ExpireSession": ("member",),
    "ExpireOffsets": (),
    "Compact": (),
    "FlushOffsets": (),
    "LoseHeartbeats": ("consumer",),
    "CrashConsumer": ("consumer",),
    "PollTimeout": ("consumer",),
    "LeaveGroup": ("consumer",),
    "CoordinatorFailover": (),
    "LateCommit": ("consumer",),
    "StaleJoinGroup": ("consumer",),
    "LoseJoinResponse": ("consumer",),
    "CreatePartitions": (),
    "LateHeartbeat": ("consumer",),
    "DelaySyncResponse": ("consumer",),
    "SyncResponse": ("consumer",),
    "LoseMemberIdResponse": ("consumer",),
    "ExpirePending": ("member",),
    "StaleSessionExpiry": ("member",),
    "RebalanceTimeout": (),
    "MovedCoordinatorCommit": ("consumer",),
    "MovedCoordinatorClose": ("consumer",),
    "EarlyCommit": ("consumer",),
    "StallSync": ("consumer",),
    "ExpirePendingSync": (),
    "GroupAppendFails": ("consumer", "storage_error", "scala"),
    "CommitAppendFails": ("consumer", "storage_error", "scala"),
    "StandaloneCommit": ("instance",),
    "OffsetFetchFails": ("consumer", "failure", "client"),
}
FAULT_OF_ACTION = {
    "LoseHeartbeats": "lost_heartbeats",
    "CrashConsumer": "crash",
    "PollTimeout": "poll_timeout",
    "LeaveGroup": "leave",
    "CoordinatorFailover": "coordinator_failover",
    "LateCommit": "late_commit",
    "StaleJoinGroup": "stale_subscription",
    "LoseJoinResponse": "lost_join_response",
    "CreatePartitions": "create_partitions",
    "LateHeartbeat": "late_heartbeat",
    "DelaySyncResponse": "late_sync_response",
    "LoseMemberIdResponse": "lost_member_id",
    "RebalanceTimeout": "rebalance_timeout",
    "MovedCoordinatorCommit": "moved_coordinator_commit",
    "MovedCoordinatorClose": "moved_coordinator_commit",  # and one of the ``leave`` budget (counted by its handler)
    "EarlyCommit": "commit_before_sync",
    "StallSync": "stalled_sync",
    "GroupAppendFails": "group_append_failure",
    "CommitAppendFails": "group_append_failure",
    "StandaloneCommit": "standalone_commit",
    "OffsetFetchFails": "offset_fetch_failure",
}

Result = tuple[GroupState, tuple[str, ...]]


def instance_ids(topo: GroupsTopology) -> tuple[str, ...]:
    """Each consumer's ``group.instance.id`` ("" for a dynamic member), from ``group_instance_ids``."""
    given = [x.strip() for x in topo.group_instance_ids.split(",")] if topo.group_instance_ids else []
    return tuple(given[i] if i < len(given) else "" for i in range(topo.consumers))


def _outcome(error: str) -> str:
    return "accepted" if error == Errors.NONE else error


def _at(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*items[:i], value, *items[i + 1 :])


class JoinAnswer(NamedTuple):
    """Ghost (:meth:`GroupSystem._join_answer`): the answer to the eager ``onJoinPrepare`` auto-commit (NONE: none
    sent, or accepted), the member id and generation the JoinGroup then carries, and the coordinator's answer to it
    (NONE: admitted)."""

    commit: str
    member_id: str
    generation: int
    answer: str


def _commit_reaction_ok(old: Consumer, new: Consumer, error: str) -> bool:  # no mutate: the judge (a property)
    """Ghost: ``ConsumerCoordinator.OffsetCommitResponseHandler`` (Kafka 4.0, trunk 1eb7644) for an OffsetCommit sent
    with the identity the consumer still has: NONE changes neither identity, state nor assignment;
    NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE only ``markCoordinatorUnknown`` (retriable: ``onJoinPrepare`` returns
    false and revokes nothing); REBALANCE_IN_PROGRESS is ``requestRejoin`` -- a STABLE member rejoins keeping member
    id, generation and partitions, one already in a rebalance is unchanged (KAFKA-8487: never a generation reset);
    UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION ``resetGenerationOnResponseError`` (partitions lost); anything else
    (FENCED_INSTANCE_ID) fails the consumer."""
    kept = (new.member_id, new.generation, new.owned, new.positions) == (
        old.member_id, old.generation, old.owned, old.positions)
    if error == Errors.NONE:
        return kept and new.state == old.state
    if error in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE):
        return kept and new.state == old.state and new.coordinator < 0
    if error == Errors.REBALANCE_IN_PROGRESS:
        return kept and new.state == (cc.UNJOINED if old.state == cc.STABLE else old.state)
    if error == Errors.UNKNOWN_MEMBER_ID:
        return new.state == cc.UNJOINED and (new.member_id, new.generation) == ("", cc.NO_GENERATION) and not new.owned
    if error == Errors.ILLEGAL_GENERATION:
        return new.state == cc.UNJOINED and (new.member_id, new.generation) == (
            old.member_id, cc.NO_GENERATION) and not new.owned
    return new.state == cc.FAILED


def _needless_rebalance(before: cg.ClassicGroup, after: cg.ClassicGroup, member_id: str, owned: tuple[int, ...],
                        generation: int, instance: str = "") -> str:
    """Ghost: why a JoinGroup that changed nothing started a rebalance ("" when it did not, or had a cause).

    ``classicGroupJoinExistingMember`` (Kafka 4.0): a known member whose subscription metadata is the one
    the coordinator holds gets the current generation back -- in CompletingRebalance any member, in Stable
    any but the leader (whose JoinGroup forces a rebalance on purpose); only a new member, a changed
    subscription, the leader, a departure or an expired session is a reason to rebalance.  A static member's new
    process (no member id, an instance id the group holds, KIP-345) joining a Stable group is no reason either:
    ``updateStaticMemberThenRebalanceOrCompleteJoin`` keeps the generation unless the selected protocol changes."""
    static = before.static_member(instance) if instance and not member_id else None
    if static is not None and before.state == cg.STABLE and after.state != cg.STABLE:  # no branch: a violation
        return (f"the new process of static member {instance} ({static.member_id}) moved the group from Stable "
                f"(generation {before.generation}) to {after.state}")
    known = before.member(member_id) if member_id else None
    if known is None or (known.owned, known.generation) != (owned, generation):
        return ""
    if before.state not in (cg.STABLE, cg.COMPLETING_REBALANCE) or after.state != cg.PREPARING_REBALANCE:
        return ""
    leader_in_stable = before.state == cg.STABLE and member_id == before.leader  # a leader's JoinGroup forces one
    if leader_in_stable:  # no branch: ghost observer of a violation (no_needless_rebalance)
        return ""
    return (f"{member_id}'s JoinGroup with unchanged metadata moved the group from {before.state} "
            f"(generation {before.generation}) to {after.state}")


class GroupSystem:
    """One consumer group on the classic protocol, as a Model."""

    def __init__(self, config: GroupsConfig, variant: Variant, properties: Sequence[Property] = (),
                 name: str = "groups", scenario_info: dict[str, Any] | None = None) -> None:
        self.name = name
        self.config = config
        self.topo = config.topology
        self.variant = variant
        self.flags = variant.flags
        self.assignor = asg.load_assignor(self.topo.assignor)
        self.cooperative = self.topo.assignor in asg.COOPERATIVE
        self.instances = instance_ids(self.topo)
        #: JoinGroup v4+ (KIP-394): a new dynamic member's first JoinGroup is answered MEMBER_ID_REQUIRED
        self._requires_member_id = self.topo.join_group_version >= 4
        self._append_errors = tuple(e.strip() for e in self.topo.append_errors.split(",") if e.strip())
        unknown = [e for e in self._append_errors if e not in APPEND_ERRORS]
        if unknown:  # input: a scenario's [groups] append_errors
            raise ModelError(f"groups: append_errors: {', '.join(unknown)} is not one of {', '.join(APPEND_ERRORS)}")
        #: an OffsetCommit whose append fails: ``CoordinatorOperationExceptionHelper.handleOperationException`` (Kafka
        #: 4.0) and the Scala ``GroupMetadataManager.storeOffsets`` both answer the coordinator errors, never
        #: REBALANCE_IN_PROGRESS
        self._commit_append_errors = tuple(e for e in self._append_errors if e != Errors.REBALANCE_IN_PROGRESS)
        #: the fault draws the append's *storage* error and the coordinator generation that translates it
        #: (:mod:`append_errors`, the split KAFKA-3590 and KAFKA-4362 lived in): every (storage error, Scala?) pair
        #: whose documented answer the scenario names -- the Scala (2.x-3.9) coordinator only where its translation
        #: differs from Kafka 4.0's (REQUEST_TIMED_OUT)
        self._group_storage_errors = aerr.append_choices(aerr.GROUP_APPEND_ANSWERS, self._append_errors)
        self._commit_storage_errors = aerr.append_choices(aerr.COMMIT_APPEND_ANSWERS, self._commit_append_errors)
        #: the (failure, consumer generation) pairs an OffsetFetch fault draws: the 4.0 consumer under every failure;
        #: the 3.8 consumer (before KAFKA-17279) under the write failures, which Kafka 4.0 answers NOT_COORDINATOR so
        #: that such consumers retry (KAFKA-17267) -- not under an inactive coordinator, whose COORDINATOR_NOT_AVAILABLE
        #: a 3.8 consumer does fail on (KAFKA-17279 itself)
        self._fetch_failures = tuple((f, client) for client in cc.FETCH_CLIENTS for f in aerr.FETCH_FAILURES
                                     if client == "4.0" or f in aerr.STORAGE_APPEND_ERRORS)
        self._properties = tuple(properties)
        self._limits = config.faults.limits()
        self._scenario_info = scenario_info or {}
        self._cache_state: GroupState | None = None
        self._cache_actions: frozenset[Action] = frozenset()

    # -- Model interface -------------------------------------------------------------------------

    def init_states(self) -> Sequence[GroupState]:
        n, late = self.topo.consumers, self.topo.late_consumers
        consumers = tuple(cc.fresh(up=i < n - late) for i in range(n))
        faults = (0,) * len(GROUP_FAULT_KINDS)
        return (GroupState(consumers, cg.empty_group(GROUP_ID), faults, 0, GroupGhost((), False)),)

    def properties(self) -> Sequence[Property]:
        return self._properties

    def within_bounds(self, state: GroupState) -> bool:
        return True

    def fingerprint(self, state: GroupState) -> str:
        return codec.fingerprint(state)

    def fault_kinds(self) -> Sequence[str]:
        return tuple(k for k, lim in zip(GROUP_FAULT_KINDS, self._limits) if lim > 0)  # no mutate: simulation weights

    def fault_kind(self, action: Action) -> str | None:
        return FAULT_OF_ACTION.get(action.kind)

    # -- helpers ----------------------------------------------------------------------------------

    def _fault_allowed(self, s: GroupState, kind: str) -> bool:
        k = _GROUP_FAULT_INDEX[kind]
        if s.faults_used[k] >= self._limits[k]:
            return False
        total = self.config.faults.total
        return total == 0 or sum(s.faults_used) < total

    def _total_allows(self, s: GroupState, faults: int) -> bool:
        """The scenario's ``total`` fault budget has room for ``faults`` more (a step that is two faults at once)."""
        total = self.config.faults.total
        return total == 0 or sum(s.faults_used) + faults <= total

    def _talks(self, s: GroupState, c: Consumer) -> bool:
        """Up, and knows the current coordinator (else its request gets NOT_COORDINATOR)."""
        return c.up and c.coordinator == s.group.epoch

    @staticmethod
    def _waited_for(s: GroupState, c: Consumer) -> bool:
        """The group waits for ``c``'s SyncGroup: its member id is pending sync in the generation it holds."""
        return c.up and c.member_id in s.group.pending_sync and c.generation == s.group.generation

    def _stalled(self, s: GroupState, c: Consumer) -> bool:
        """``c``'s SyncGroup is held up (StallSync) and the group still waits for it; once the group stopped waiting
        (the pending-sync timer removed it, or a rebalance started) the consumer sends it and hears the answer."""
        return c.stalled and c.state == cc.AWAITING_SYNC and self._waited_for(s, c)

    def _consuming(self, c: Consumer) -> bool:
        """Its poll returns records: cooperative, or eager and STABLE -- or eager with its ``onJoinPrepare``
        auto-commit in flight, where Kafka 3.2-3.3's poll kept returning records of the partitions about to be revoked
        until KAFKA-14196's fix marked them pending revocation (``ProtocolFlags.join_prepare_pauses_partitions``)."""
        revoking = c.preparing and c.state == cc.UNJOINED and not self.flags.join_prepare_pauses_partitions
        return c.up and bool(c.owned) and (self.cooperative or c.state == cc.STABLE or revoking)

    def _prepares_async(self, c: Consumer) -> bool:
        """An eager member about to rejoin whose ``onJoinPrepare`` sends an asynchronous auto-commit first (the
        topology's ``async_join_prepare``): it has uncommitted positions and its commit has not been sent yet."""
        return (self.topo.async_join_prepare and not self.cooperative and self.flags.commit_on_revoke
                and not c.preparing and self._may_commit(c) and bool(c.uncommitted()))

    @staticmethod
    def _may_commit(c: Consumer) -> bool:
        """``ConsumerCoordinator.sendOffsetCommitRequest`` (Kafka 4.0, 1eb7644) commits with
        ``generationIfStable()``: only a member whose ``MemberState`` is STABLE sends an OffsetCommit; between
        its JoinGroup and its SyncGroup response (``rebalanceInProgress()``: here JOINING / AWAITING_SYNC) the
        commit fails locally with RebalanceInProgressException and no request is sent.  UNJOINED with a member id
        and generation is a STABLE member that was asked to rejoin and has not sent its JoinGroup yet."""
        return bool(c.member_id) and c.generation >= 0 and c.state in (cc.STABLE, cc.UNJOINED)

    def _rebalance_reaction(self) -> tuple[bool, bool, bool]:
        """How a consumer takes REBALANCE_IN_PROGRESS (:func:`~keos.model.clients.consumer_coordinator.on_error`):
        rejoin (``requestRejoin``), keeping its member id, generation and partitions; and UNKNOWN_MEMBER_ID /
        ILLEGAL_GENERATION: ``onPartitionsLost``."""
        return (self.flags.rebalance_in_progress_rejoins, self.flags.rebalance_in_progress_keeps_generation,
                self.flags.fenced_member_loses_partitions)

    def _put(self, s: GroupState, i: int, c: Consumer) -> GroupState:
        return s._replace(consumers=_at(s.consumers, i, c))

    def _settle(self, s: GroupState) -> GroupState:
        """Members removed while their JoinGroup waited at the barrier are answered UNKNOWN_MEMBER_ID; a static
        member's process replaced meanwhile (KIP-345, ``replaceStaticMember`` completes the old member's join
        future) FENCED_INSTANCE_ID."""
        if s.ghost.kept_unjoined:
            kept = tuple(m for m in s.ghost.kept_unjoined if (g := s.group.member(m)) is not None and not g.joined)
            s = s._replace(ghost=s.ghost._replace(kept_unjoined=kept))
        consumers = list(s.consumers)
        for i, c in enumerate(consumers):
            error = cg.validate_member(s.group, self._member_of(s, i), self._fenced_by(i))
            if c.state == cc.JOINING and error != Errors.NONE and c.coordinator == s.group.epoch:
                if c.member_id:  # a replaced static process's join (no member id known): FENCED_INSTANCE_ID
                    s = self._note_answer(s, "JoinGroup", c, error, self.instances[i])
                consumers[i] = cc.on_error(c, error, *self._rebalance_reaction())
        return s._replace(consumers=tuple(consumers))

    def _member_of(self, s: GroupState, i: int) -> str:
        """Consumer ``i``'s member id as the group knows it: its own, or -- a static member's new process whose
        JoinGroup waits at the barrier of the current coordinator -- the one the group admitted it under, which
        the process learns only from the JoinGroup response (KIP-345: no MEMBER_ID_REQUIRED round trip for a
        static member, ``classicGroupJoinNewStaticMember``); "" once another process took the instance over."""
        c = s.consumers[i]
        if c.member_id or c.state != cc.JOINING or not self.instances[i] or c.coordinator != s.group.epoch:
            return c.member_id
        m = s.group.static_member(self.instances[i])
        return m.member_id if m is not None and m.client == i else ""

    def _fenced_by(self, i: int) -> str:
        """The ``group.instance.id`` consumer ``i``'s requests carry as the coordinator checks it: its own, or ""
        under the weakened variant static_member_not_fenced (the check ignores the instance id)."""
        return self.instances[i] if self.flags.static_member_fencing else ""

    def _holder(self, s: GroupState, i: int) -> str | None:
        """The member id the group maps consumer ``i``'s instance id to (None: none, or a dynamic consumer)."""
        m = s.group.static_member(self.instances[i])
        return None if m is None else m.member_id

    def _commit(self, s: GroupState, c: Consumer, partitions: Sequence[int], i: int,
                sender: Consumer | bool = True) -> tuple[GroupState, str]:
        """OffsetCommit of ``c``'s positions for ``partitions`` with its member id, generation and instance id.

        ``sender``: the Java consumer as it stands when ``ConsumerCoordinator.sendOffsetCommitRequest`` runs (True:
        ``c`` itself; a consumer: that one, e.g. the member ``onJoinComplete`` already made STABLE while ``c`` is the
        copy whose positions it commits).  That method is the one place Kafka's client guards every commit path --
        ``commitSync`` / ``commitAsync``, auto-commit, ``onJoinPrepare``, ``onPartitionsRevoked``, ``close()`` -- with
        ``generationIfStable()`` (Kafka 4.0, trunk 1eb7644): during a rebalance the commit fails locally with
        RebalanceInProgressException, without a generation with CommitFailedException, and no request is sent.  A
        commit sent anyway is recorded (ghost, ``commits_sent_with_stable_generation``) whichever caller forgot the
        guard.  False: a client without that guard by design -- a stale copy arriving late, a hostile client."""
        who = c if sender is True else sender
        if isinstance(who, Consumer) and not self._stable_on_close(who):  # no branch: ghost observer of a violation
            note = (f"consumer {i} ({who.member_id or 'no member id'}, generation {who.generation}, {who.state}) sent "
                    f"an OffsetCommit although generationIfStable() is null")
            s = s._replace(ghost=s.ghost._replace(unguarded_commits=(*s.ghost.unguarded_commits, note)))
        offsets = tuple((p, c.position(p)) for p in partitions)
        error = cg.validate_offset_commit(s.group, c.member_id, c.generation, self.flags.offset_commit_generation_check,
                                          self.flags.offset_commit_stale_generation_check, self._fenced_by(i))
        g = s.group
        note = misfenced("OffsetCommit", c.member_id, g.member(c.member_id) is not None, c.generation, g.generation,
                         g.state, error, self.instances[i], self._holder(s, i))
        if note:  # unreachable: ghost observer of a violation (commits_fenced_exactly)
            s = s._replace(ghost=s.ghost._replace(misfenced=(*s.ghost.misfenced, note)))
        if error != Errors.NONE:
            return s, error
        group = cg.commit_offsets(s.group, TOPIC, offsets, self.flags.offset_commit_waits_for_log)
        high = dict(s.ghost.max_committed)
        for p, o in offsets:
            high[p] = max(high.get(p, o), o)
        return s._replace(group=group, ghost=s.ghost._replace(max_committed=tuple(sorted(high.items())))), error

    @staticmethod
    def _note_answer(s: GroupState, request: str, c: Consumer, error: str, instance: str = "",
                     member_id_required: bool = False) -> GroupState:
        """Ghost: ``request`` of ``c`` (carrying ``group.instance.id`` ``instance``) answered ``error`` by the group as
        it is in ``s`` -- Kafka's member checks?  A JoinGroup without a member id is a new member's, or a static
        member's new process: always admitted (``group.max.size`` is not modelled) -- a new dynamic member's
        JoinGroup v4+ (``member_id_required``) with MEMBER_ID_REQUIRED; one carrying a pending member's id (KIP-394)
        is admitted too."""
        g = s.group
        fresh = request == "JoinGroup" and not c.member_id
        pending = request == "JoinGroup" and bool(c.member_id) and c.member_id in g.pending
        known = fresh or pending or g.member(c.member_id) is not None
        required = fresh and member_id_required and not instance
        instance = "" if fresh else instance
        holder = g.static_member(instance)
        note = misfenced(request, c.member_id, known, c.generation, g.generation, g.state, error, instance,
                         None if holder is None else holder.member_id, required)
        if note:  # unreachable: ghost observer of a violation (group_requests_fenced_exactly)
            s = s._replace(ghost=s.ghost._replace(misanswered=(*s.ghost.misanswered, note)))
        return s

    def _note_handover(self, s: GroupState, c: Consumer, revoked: Sequence[int], how: str) -> GroupState:
        """Ghost: ``c`` revokes ``revoked`` (``onPartitionsRevoked``, not lost) after committing its positions. While it
        is a member of the group's current generation that commit cannot be fenced, so each partition's committed
        offset must now be ``c``'s position: the next owner resumes where ``c`` stopped (with nothing committed, at
        ``auto.offset.reset=earliest``: offset 0)."""
        g = s.group
        if not self.topo.records or g.member(c.member_id) is None or c.generation != g.generation:
            return s
        if how == "close" and c.state in REBALANCING:
            # a close during a rebalance is no clean give-up: onLeavePrepare (ConsumerCoordinator, Kafka 4.0 trunk
            # 1eb7644) calls onPartitionsLost while rebalanceInProgress(), and the close-time commit is never sent
            # (sendOffsetCommitRequest: generationIfStable() is null outside STABLE)
            return s
        cache = dict(g.offsets)
        missed = [f"{how}: {c.member_id} gave up t0p{p} at position {c.position(p)} with {cache.get(p)} committed"
                  for p in revoked if cache.get(p, 0) != c.position(p)]
        if not missed:  # no branch: ghost observer of a violation (revoked_partitions_committed)
            return s
        return s._replace(ghost=s.ghost._replace(uncommitted_handovers=(*s.ghost.uncommitted_handovers, *missed)))

    @staticmethod
    def _note_starts(s: GroupState, before: Consumer, after: Consumer) -> tuple[GroupState, bool]:
        """Ghost: where ``after`` starts fetching each partition SyncGroup just gave it.  ``ConsumerCoordinator.
        initWithCommittedOffsetsIfNeeded`` (Kafka 4.0, trunk 1eb7644) fetches the committed offset of every
        partition without a position (OffsetFetch) and seeks there; a partition with none is reset by
        ``auto.offset.reset`` (earliest here: offset 0).  A start elsewhere skips records (lost) or re-reads
        committed ones (duplicates, and the commit that follows moves the offset back)."""
        committed = dict(s.group.offsets)
        added = [p for p in after.owned if p not in before.owned]
        wrong = [f"{after.member_id} started t0p{p} at offset {after.position(p)}, the committed offset is "
                 f"{committed.get(p)}" for p in added if after.position(p) != committed.get(p, 0)]
        resumed = any(committed.get(p, 0) > 0 for p in added)  # the witness: a handover after progress
        if wrong:  # unreachable: ghost observer of a violation (new_owner_resumes_at_committed_offset)
            return s._replace(ghost=s.ghost._replace(misplaced_starts=(*s.ghost.misplaced_starts, *wrong))), resumed
        return s, resumed

    def _assign(self, group: cg.ClassicGroup, partitions: int) -> dict[str, tuple[int, ...]]:
        """The leader runs the group's assignor over the members' subscriptions its JoinGroup response carried
        (``ClassicGroup.joined_members``) and the topic's ``partitions``."""
        withhold = not self.cooperative or self.flags.cooperative_revoke_before_reassign
        # outside CompletingRebalance the coordinator ignores the plan (classic_group.sync_group): any list will do
        members = group.joined_members or tuple((m.member_id, m.owned, m.generation) for m in group.members)
        return asg.leader_assignment(self.assignor, TOPIC, partitions, members, withhold)

    # -- actions ------------------------------------------------------------------------------------

    def actions(self, state: GroupState) -> list[Action]:
        s, g = state, state.group
        out: list[Action] = []
        for i, c in enumerate(s.consumers):
            if c.up and c.coordinator != g.epoch:
                out.append(Action("FindCoordinator", (i,)))
            if not c.up and (i < self.topo.consumers - self.topo.late_consumers or s.ghost.formed):
                out.append(Action("Start", (i,)))
            if not self._talks(s, c):
                continue
            if c.held_sync[1] >= 0:
                # the SyncGroup's future is pending: the consumer sends no JoinGroup or SyncGroup until it completes
                out.append(Action("SyncResponse", (i,)))
            elif c.state == cc.UNJOINED and self._prepares_async(c):
                out.append(Action("JoinPrepare", (i,)))
            elif c.state == cc.UNJOINED:
                out.append(Action("JoinGroup", (i,)))
                if self._fault_allowed(s, "group_append_failure") and self._replaces_in_stable(s, i):
                    out.extend(Action("GroupAppendFails", (i, e, scala)) for e, scala in self._group_storage_errors)
                new_dynamic = self._requires_member_id and not c.member_id and not self.instances[i]
                if new_dynamic and self._fault_allowed(s, "lost_member_id"):
                    out.append(Action("LoseMemberIdResponse", (i,)))
                if self._fault_allowed(s, "stale_subscription") and self._stale_claim(c):
                    out.append(Action("StaleJoinGroup", (i,)))
            awaiting = c.state == cc.AWAITING_SYNC and c.held_sync[1] < 0
            answer = self._sync(s, i) if awaiting and not self._stalled(s, c) else None
            if awaiting and not c.stalled and self._waited_for(s, c) and self._fault_allowed(s, "stalled_sync"):
                out.append(Action("StallSync", (i,)))
            if answer is not None:
                out.append(Action("SyncGroup", (i,)))
                if answer.error == Errors.NONE and self._fault_allowed(s, "late_sync_response"):
                    out.append(Action("DelaySyncResponse", (i,)))
                fetches = answer.error == Errors.NONE and any(p not in c.owned for p in answer.assignment)
                if fetches and self.flags.offset_fetch_on_assign and self._fault_allowed(s, "offset_fetch_failure"):
                    out.extend(Action("OffsetFetchFails", (i, f, client)) for f, client in self._fetch_failures)
                if self._appends(s, i, answer.error) and self._fault_allowed(s, "group_append_failure"):
                    out.extend(Action("GroupAppendFails", (i, e, scala)) for e, scala in self._group_storage_errors)
            lost_response_ok = c.state == cc.AWAITING_SYNC and g.member(c.member_id) is not None and c.held_sync[1] < 0
            if lost_response_ok and self._fault_allowed(s, "lost_join_response"):
                out.append(Action("LoseJoinResponse", (i,)))
            beat = cg.heartbeat(g, c.member_id, c.generation, self._fenced_by(i))
            # the heartbeat thread runs in COMPLETING_REBALANCE and STABLE; only an answer that moves the consumer
            # is a step (REBALANCE_IN_PROGRESS is ignored while it awaits its SyncGroup answer)
            heard = self._heartbeat_reaction(c, beat, (c.member_id, c.generation)) != c
            if c.state in (cc.STABLE, cc.AWAITING_SYNC) and heard:
                out.append(Action("Heartbeat", (i,)))
            if c.beat[0] and c.beat != (c.member_id, c.generation) and self._fault_allowed(s, "late_heartbeat"):
                out.append(Action("LateHeartbeat", (i,)))
        for i, c in enumerate(s.consumers):
            if self._consuming(c):
                for p in c.owned:
                    if c.position(p) < self.topo.records:
                        out.append(Action("Poll", (i, p)))
                if self._talks(s, c) and self._may_commit(c) and c.uncommitted():
                    out.append(Action("Commit", (i,)))
                    if self._fault_allowed(s, "group_append_failure") and self._commit_appends(s, i):
                        out.extend(Action("CommitAppendFails", (i, e, scala))
                                   for e, scala in self._commit_storage_errors)
            if self._commit_due(s, c) and self._fault_allowed(s, "moved_coordinator_commit"):
                out.append(Action("MovedCoordinatorCommit", (i,)))
            early = c.state == cc.AWAITING_SYNC and self._talks(s, c) and c.uncommitted()
            if early and self._fault_allowed(s, "commit_before_sync"):
                out.append(Action("EarlyCommit", (i,)))
        if self.flags.pending_sync_expires and any(self._stalled(s, c) for c in s.consumers):
            out.append(Action("ExpirePendingSync"))
        if cg.join_complete_ready(g):
            out.append(Action("CompleteJoin"))
        elif self._fault_allowed(s, "rebalance_timeout") and cg.join_timeout_changes(
                g, self.flags.rebalance_timeout_keeps_static):
            out.append(Action("RebalanceTimeout"))
        for m in g.members:
            owner = s.consumers[m.client]
            if not owner.up or self._member_of(s, m.client) != m.member_id:
                out.append(Action("ExpireSession", (m.member_id,)))
        out.extend(Action("StaleSessionExpiry", (m,)) for m in g.stale_timers)
        if self.flags.pending_members_expire:  # no branch: pending_members_expire=False is pending_member_never_expires
            held = {c.member_id for c in s.consumers if self._talks(s, c)}
            out.extend(Action("ExpirePending", (m,)) for m in g.pending if m not in held)
        if g.state == cg.EMPTY and g.offsets:
            out.append(Action("ExpireOffsets"))
        if g.unflushed:  # unreachable: weakened variant offset_commit_acked_before_log
            out.append(Action("FlushOffsets"))
        if s.compactions < self.topo.compactions and olog.compactable(g.log):
            out.append(Action("Compact"))
        for i, c in enumerate(s.consumers):
            member = g.member(c.member_id) if c.up and c.member_id else None
            if member is not None and self._fault_allowed(s, "lost_heartbeats"):
                out.append(Action("LoseHeartbeats", (i,)))
            if c.up and self._fault_allowed(s, "crash"):
                out.append(Action("CrashConsumer", (i,)))
            if member is not None and self._fault_allowed(s, "poll_timeout"):
                out.append(Action("PollTimeout", (i,)))
            if member is not None and self._talks(s, c) and self._fault_allowed(s, "leave"):
                out.append(Action("LeaveGroup", (i,)))
                if self._close_commits(c) and self._fault_allowed(s, "moved_coordinator_commit") and (
                        self._total_allows(s, 2)):
                    out.append(Action("MovedCoordinatorClose", (i,)))
        if self._fault_allowed(s, "coordinator_failover"):
            out.append(Action("CoordinatorFailover"))
        if self._fault_allowed(s, "standalone_commit") and self.topo.records:
            out.extend(Action("StandaloneCommit", (instance,)) for instance in ("", STANDALONE_INSTANCE))
        if self._fault_allowed(s, "create_partitions"):
            out.append(Action("CreatePartitions"))
        if self._fault_allowed(s, "late_commit"):
            out.extend(Action("LateCommit", (i,)) for i, c in enumerate(s.consumers) if self._stale_commit(s, c))
        return out

    @staticmethod
    def _appends(s: GroupState, i: int, error: str) -> bool:
        """Consumer ``i``'s SyncGroup (answered ``error`` by the member checks) makes the coordinator write the group
        metadata: the leader's, in CompletingRebalance, with the assignment (``classicGroupSyncToCompletingRebalance``
        -> ``newGroupMetadataRecord``, Kafka 4.0, trunk 1eb7644)."""
        c, g = s.consumers[i], s.group
        return error == Errors.NONE and g.state == cg.COMPLETING_REBALANCE and c.member_id == g.leader

    def _commit_appends(self, s: GroupState, i: int) -> bool:
        """Consumer ``i``'s OffsetCommit passes the member checks, so the coordinator appends its offsets."""
        c = s.consumers[i]
        return cg.validate_offset_commit(s.group, c.member_id, c.generation, self.flags.offset_commit_generation_check,
                                         self.flags.offset_commit_stale_generation_check,
                                         self._fenced_by(i)) == Errors.NONE

    def _replaces_in_stable(self, s: GroupState, i: int) -> bool:
        """Consumer ``i``'s JoinGroup is a static member's new process replacing the old one in a Stable group whose
        selected protocol it does not change: the coordinator persists the new member id at once
        (``updateStaticMemberThenRebalanceOrCompleteJoin``, Kafka 4.0, trunk 1eb7644) -- the only JoinGroup whose
        answer waits for a write of the group metadata."""
        c, g = s.consumers[i], s.group
        if c.member_id or not self.instances[i] or g.state != cg.STABLE or g.static_member(self.instances[i]) is None:
            return False
        return self._join(s, i)[0].group.state == cg.STABLE

    def _commit_due(self, s: GroupState, c: Consumer) -> bool:
        """``c`` sends an OffsetCommit now: a Stable member's commit of its positions (Commit), or -- asked to rejoin
        (UNJOINED with its generation) -- ``onJoinPrepare``'s auto-commit before its JoinGroup (both protocols: Kafka
        4.0's ``maybeAutoCommitOffsetsAsync`` there does not depend on the protocol)."""
        return self._talks(s, c) and self._may_commit(c) and bool(c.uncommitted())

    @staticmethod
    def _stale_claim(c: Consumer) -> bool:
        """``c``'s last assignment is not what it owns now (it lost or revoked partitions since)."""
        claimed, _ = c.last_assignment
        return bool(claimed) and claimed != c.owned

    @staticmethod
    def _stale_commit(s: GroupState, c: Consumer) -> bool:
        """``c`` sent an OffsetCommit in a generation the group has since left (or as a member it removed)."""
        member, generation, offsets = c.sent
        return bool(offsets) and (s.group.member(member) is None or s.group.generation != generation)

    def _enabled(self, state: GroupState) -> frozenset[Action]:
        # Engines list a state's actions, then step each: remember the last state's set.
        if self._cache_state is not state:
            self._cache_state, self._cache_actions = state, frozenset(self.actions(state))
        return self._cache_actions

    def step(self, state: GroupState, action: Action) -> Step | None:
        if action not in self._enabled(state):  # input: not offered here (edited trace)
            return None
        overspent = self._overspent(state, action)
        if overspent:  # unreachable: actions() offers faults and compactions only within the scenario's budget
            raise AssertionError(f"{action.kind} past the scenario's budget: {overspent}")
        answer = self._answer(state, action)
        joined = self._join_answer(state, action)
        new, events = self._HANDLERS[action.kind](self, state, *action.args)
        barrier = new.group.joined_members != state.group.joined_members or (
            new.group.generation != state.group.generation)
        if self._limits[GROUP_FAULT_KINDS.index("create_partitions")] and new.group.joined_members and barrier:
            # the join barrier lifted: the leader's JoinGroup answer carries the members, and its onLeaderElected
            # takes the assignment snapshot of the metadata it has now
            new = new._replace(leader_snapshot=self.topo.partitions + new.added_partitions)
        if answer is not None:
            new = self._note_reaction(state, new, action, answer)
        if joined is not None:
            new = self._note_join_reaction(state, new, action, joined)
        new = self._note_identities(state, new, action)
        new = self._settle(new)
        new = self._note_rejoins(state, new, action)
        new = self._note_coordinator_move(state, new, action)
        new = self._note_removals(state, new, action)
        new = self._note_leader(state, new, action)
        new = self._note_close(state, new, action)
        new = self._note_rebalance_cause(state, new, action)
        if new.group.state == cg.STABLE and not new.ghost.formed:
            new = new._replace(ghost=new.ghost._replace(formed=True))
        fault = FAULT_OF_ACTION.get(action.kind)
        if fault is not None:
            k = GROUP_FAULT_KINDS.index(fault)
            new = new._replace(faults_used=_at(new.faults_used, k, new.faults_used[k] + 1))
            events = (f"fault:{fault}", *events)
        miscounted = self._miscounted(new)
        if miscounted:  # unreachable: a model contract (every fault is counted where its effect is)
            raise AssertionError(f"{action.kind}: {miscounted}")
        if any(c.stalled and not self._stalled(new, c) for c in new.consumers):
            # the stall ends once the group stops waiting for the SyncGroup: the consumer sends it (answered below,
            # or already answered by an error that moved the consumer on)
            new = new._replace(consumers=tuple(c._replace(stalled=False) if c.stalled and c.state != cc.AWAITING_SYNC
                                               else c for c in new.consumers))
        new = self._note_heartbeats(new)
        new = self._note_heartbeat_answers(new)
        if new.group.state != state.group.state:
            events = (*events, f"group:{state.group.state}->{new.group.state}")
        return Step(new, events)

    def _note_heartbeats(self, s: GroupState) -> GroupState:
        """Where the run may deliver a late Heartbeat response (a ``late_heartbeat`` budget left), a Stable consumer's
        heartbeat thread has a Heartbeat in flight with its member id and generation -- the oldest one whose response
        has not arrived; elsewhere none is remembered (it could never arrive late)."""
        if not self._limits[GROUP_FAULT_KINDS.index("late_heartbeat")]:
            return s
        allowed = self._fault_allowed(s, "late_heartbeat")
        consumers = tuple(
            (c._replace(beat=(c.member_id, c.generation)) if not c.beat[0] and c.state == cc.STABLE else c)
            if allowed else c._replace(beat=("", cc.NO_GENERATION)) for c in s.consumers)
        return s._replace(consumers=consumers)

    def _note_heartbeat_answers(  # no mutate: the judge of group_requests_fenced_exactly (a property), not a rule
            self, s: GroupState) -> GroupState:
        """Ghost: the answer the coordinator would give *now* to the Heartbeat of every consumer whose heartbeat thread
        runs (``AbstractCoordinator.HeartbeatThread``: COMPLETING_REBALANCE and STABLE, here AWAITING_SYNC and STABLE,
        at the coordinator it knows), judged against Kafka's member checks (``classicGroupHeartbeat``, trunk 1eb7644:
        REBALANCE_IN_PROGRESS only in PreparingRebalance, NONE in CompletingRebalance and Stable).  The Heartbeat step
        itself is taken only when its answer moves the consumer, so an answer the consumer happens to ignore (a wrong
        REBALANCE_IN_PROGRESS while it awaits its SyncGroup answer) would otherwise never be judged."""
        notes: list[str] = []
        for i, c in enumerate(s.consumers):
            if not (self._talks(s, c) and c.state in (cc.STABLE, cc.AWAITING_SYNC) and c.member_id):
                continue
            g = s.group
            holder = g.static_member(self.instances[i])
            answer = cg.heartbeat(g, c.member_id, c.generation, self._fenced_by(i))
            note = misfenced("Heartbeat", c.member_id, g.member(c.member_id) is not None, c.generation, g.generation,
                             g.state, answer, self.instances[i], None if holder is None else holder.member_id)
            if note and note not in s.ghost.misanswered:  # unreachable: a wrong answer is a violation
                notes.append(note)
        if not notes:
            return s
        return s._replace(ghost=s.ghost._replace(misanswered=(*s.ghost.misanswered, *notes)))

    @staticmethod
    def _note_rejoins(  # no mutate: the judge of stable_members_rejoin_on_request (a property), not a rule
            before: GroupState, after: GroupState, action: Action) -> GroupState:
        """Ghost: a running Stable member leaves Stable only for a reason Kafka's client has (Kafka 4.0, trunk
        1eb7644): an error answer to its own Heartbeat or OffsetCommit (``AbstractCoordinator``'s handlers:
        ``requestRejoin`` / ``resetGenerationOnResponseError``, or a fatal error), its own poll timeout
        (``maybeLeaveGroup``), or -- the leader only -- metadata that no longer matches the assignment snapshot it
        took in ``onLeaderElected`` (``ConsumerCoordinator.rejoinNeededOrPending``).  A coordinator change alone
        is not one: ``markCoordinatorUnknown`` keeps the generation and the assignment, and the member goes on
        heartbeating to the new coordinator.  An unrequested rejoin is a needless rebalance for a leader and
        stops every member's consumption in the eager protocol."""
        notes: list[str] = []
        for i, (old, cur) in enumerate(zip(before.consumers, after.consumers)):
            if not (old.up and cur.up and old.state == cc.STABLE and cur.state != cc.STABLE):
                continue
            own = action.args[:1] == (i,) and action.kind in ("Heartbeat", "LateHeartbeat", "Commit", "LateCommit",
                                                                  "PollTimeout")
            leader_metadata = action.kind == "CreatePartitions" and old.member_id == before.group.leader
            if own or leader_metadata:  # no branch: ghost observer of a violation (stable_members_rejoin_on_request)
                continue
            notes.append(f"{old.member_id} (generation {old.generation}) left Stable for {cur.state} on "
                         f"{action.kind}{list(action.args)}")
        if not notes:
            return after
        return after._replace(ghost=after.ghost._replace(
            unrequested_rejoins=(*after.ghost.unrequested_rejoins, *notes)))

    @staticmethod
    def _note_coordinator_move(  # no mutate: the judge of coordinator_move_keeps_member (a property), not a rule
            before: GroupState, after: GroupState, action: Action) -> GroupState:
        """Ghost: what a coordinator change may do to the consumer that finds the new coordinator (Kafka 4.0, trunk
        1eb7644).  ``AbstractCoordinator.markCoordinatorUnknown`` only drops the connection; NOT_COORDINATOR,
        COORDINATOR_NOT_AVAILABLE and a disconnect are *retriable* group errors: the JoinGroup or SyncGroup they
        failed is sent again by ``joinGroupIfNeeded`` with the member id and generation the consumer has -- since
        KAFKA-13214 (PR #11231, Kafka 3.1) without ``resetStateAndRejoin`` -- and ``rejoinNeeded`` is cleared only by
        a successful SyncGroup (KAFKA-5154, Kafka 0.11).  So the step keeps the consumer's member id, generation,
        partitions and positions, and moves it at most from a rebalance request in flight (JOINING, AWAITING_SYNC) back
        to UNJOINED: never out of the rebalance into STABLE, never from STABLE into a rebalance (that half is
        ``stable_members_rejoin_on_request``'s)."""
        if action.kind != "FindCoordinator":
            return after
        i = action.args[0]
        old, cur = before.consumers[i], after.consumers[i]
        notes: list[str] = []
        if (old.member_id, old.generation) != (cur.member_id, cur.generation):
            notes.append(f"consumer {i}: FindCoordinator changed its identity from {old.member_id or '-'} of "
                         f"generation {old.generation} to {cur.member_id or '-'} of generation {cur.generation}")
        if (old.owned, old.positions) != (cur.owned, cur.positions):
            notes.append(f"consumer {i}: FindCoordinator changed its partitions from {list(old.owned)} to "
                         f"{list(cur.owned)}")
        moves = {(old.state, old.state), (cc.JOINING, cc.UNJOINED), (cc.AWAITING_SYNC, cc.UNJOINED),
                 (cc.STABLE, cc.UNJOINED)}  # the last: stable_members_rejoin_on_request judges it
        if (old.state, cur.state) not in moves:
            notes.append(f"consumer {i}: FindCoordinator moved it from {old.state} to {cur.state}")
        if not notes:  # no branch: ghost observer of a violation (coordinator_move_keeps_member)
            return after
        return after._replace(ghost=after.ghost._replace(dropped_on_move=(*after.ghost.dropped_on_move, *notes)))

    def _note_removals(  # no mutate: the judge of healthy_member_never_removed (a property), not a rule
            self, before: GroupState, after: GroupState, action: Action) -> GroupState:
        """Ghost: the coordinator removes a member only for a reason Kafka has (Kafka 4.0, trunk 1eb7644,
        ``GroupMetadataManager``): its session expired (``expireClassicGroupMemberHeartbeat``: its process is
        gone, or its heartbeats were lost -- judged here from the consumer, not taken from the step's guard: a
        session expires only for a member whose process is down or failed, talks to another coordinator, or
        heartbeats under another identity, as ``HeartbeatThread`` sends its member id to the coordinator it
        knows), it left (LeaveGroup: close, or the consumer's own poll timeout -- a dynamic member only: a
        static member never sends LeaveGroup, KIP-345), a new process of its ``group.instance.id`` replaced it
        (``replaceStaticMember``), it is dynamic and did not rejoin before ``rebalance.timeout.ms``
        (``completeClassicGroupJoin``), or a new coordinator loaded another membership from
        ``__consumer_offsets``.  Any other removal takes a healthy member's assignment away.

        A KIP-394 *pending* member id (handed out with MEMBER_ID_REQUIRED) is forgotten only when its JoinGroup
        with that id admits it as a member (``ClassicGroup.add`` removes it from ``pendingJoinMembers``), when its
        own session timeout expires (``expireClassicGroupMemberHeartbeat`` ->
        ``removePendingMemberAndUpdateClassicGroup``), or by a new coordinator (pending members are not persisted):
        another member's JoinGroup, a rebalance timeout or any other step that drops it answers the consumer holding
        it UNKNOWN_MEMBER_ID and costs it a rejoin."""
        gone = [m for m in before.group.members if after.group.member(m.member_id) is None]
        dropped = [p for p in before.group.pending if p not in after.group.pending and after.group.member(p) is None]
        if action.kind == "MovedCoordinatorClose":
            # a new coordinator loads the group (it knows no pending member, nor a member the log does not hold: one
            # that joined since the last write), then the closing consumer's LeaveGroup
            loaded = olog.load(before.group.log, before.group.group_id).metadata
            persisted = {mid for mid, _ in loaded.members} if loaded is not None else set()
            gone, dropped = [m for m in gone if m.member_id in persisted], []
        if not (gone or dropped) or action.kind in ("CoordinatorFailover", "MovedCoordinatorCommit"):  # new coordinator
            return after
        notes: list[str] = [f"pending member {p} (KIP-394) was forgotten on {action.kind}{list(action.args)}"
                            for p in dropped if not (action.kind == "ExpirePending" and action.args == (p,))]
        for m in gone:
            owner = action.args[0] if action.args and isinstance(action.args[0], int) else -1
            holder = before.consumers[m.client]
            silent = (not holder.up or holder.state == cc.FAILED or holder.coordinator != before.group.epoch
                      or self._member_of(before, m.client) != m.member_id)
            if action.kind == "ExpireSession" and action.args == (m.member_id,) and silent:
                continue  # no heartbeat of this member id reached this coordinator within session.timeout.ms
            if action.kind == "LoseHeartbeats" and owner == m.client:
                continue
            # maybeLeaveGroup (AbstractCoordinator, Kafka 4.0 trunk 1eb7644): only a dynamic member sends LeaveGroup on
            # close() or a poll timeout; a static member (KIP-345) stays until its session expires or a new process of
            # its group.instance.id replaces it, so its bounce costs no rebalance
            if action.kind in ("PollTimeout", "LeaveGroup", "MovedCoordinatorClose") and owner == m.client and (
                    not m.instance):
                continue
            if action.kind in ("JoinGroup", "StaleJoinGroup", "LoseJoinResponse") and m.instance and owner >= 0 and (
                    self.instances[owner] == m.instance):
                held = after.group.static_member(m.instance)
                if held is not None and held.client == owner:
                    continue
            if action.kind == "RebalanceTimeout" and not m.joined and not m.instance:
                continue
            owner_c = before.consumers[m.client]
            # Judged from the consumer, not from the coordinator's pendingSyncMembers it judges: a member whose
            # SyncGroup is on its way (AWAITING_SYNC, not stalled) or was already answered in the group's current
            # generation (STABLE with that generation: the coordinator had it, ``removePendingSyncMember``) sent it
            # in time, whatever the coordinator still lists as pending.
            sent_sync = owner_c.up and self._member_of(before, m.client) == m.member_id and (
                (owner_c.state == cc.AWAITING_SYNC and not owner_c.stalled)
                or (owner_c.state == cc.STABLE and owner_c.generation == before.group.generation))
            if action.kind == "ExpirePendingSync" and m.member_id in before.group.pending_sync and not sent_sync:
                continue  # its SyncGroup never came within rebalance.timeout.ms (KAFKA-12890)
            notes.append(f"{m.member_id}{f' (static {m.instance})' if m.instance else ''} was removed from the group "
                         f"on {action.kind}{list(action.args)}")
        if not notes:  # no branch: ghost observer of a violation (healthy_member_never_removed)
            return after
        return after._replace(ghost=after.ghost._replace(unjust_removals=(*after.ghost.unjust_removals, *notes)))

    #: The steps that send a JoinGroup (``classicGroupJoin*``: a new member, a leader's or changed subscription, a
    #: static member's new process in CompletingRebalance) or fail the write of an assignment
    #: (``fail_assignment_append``).
    _REBALANCING_REQUESTS: ClassVar[frozenset[str]] = frozenset(
        {"JoinGroup", "StaleJoinGroup", "LoseJoinResponse", "GroupAppendFails"})

    def _note_rebalance_cause(  # no mutate: the judge of rebalance_has_cause (a property), not a rule
            self, before: GroupState, after: GroupState, action: Action) -> GroupState:
        """Ghost: the coordinator starts a rebalance (``prepareRebalance``: the group enters PreparingRebalance from
        Empty, CompletingRebalance or Stable) only for a cause Kafka 4.0 has (trunk 1eb7644, ``GroupMetadataManager``):
        a JoinGroup (a new member, the leader's, a changed subscription -- ``no_needless_rebalance`` judges which), a
        member leaving or removed (session or pending-sync expiry, LeaveGroup, the rebalance timeout; which removals are
        just, ``healthy_member_never_removed`` judges), or the failed write of the leader's assignment.  A step that
        does none of these -- a timer that fires for a member id the group no longer holds (KAFKA-7196), a commit, a
        heartbeat, a fetch, a coordinator's load -- and yet rebalances costs every member a rejoin and a revocation."""
        old, new = before.group, after.group
        entered = new.state == cg.PREPARING_REBALANCE and old.state != cg.PREPARING_REBALANCE
        if not entered or action.kind in self._REBALANCING_REQUESTS:
            return after
        same = {m.member_id for m in old.members} == {m.member_id for m in new.members}
        note = f"{old.state} -> {new.state} on {action.kind}{list(action.args)} with the same members"
        notes = [note] if same else []
        if not notes:  # no branch: ghost observer of a violation (rebalance_has_cause)
            return after
        return after._replace(ghost=after.ghost._replace(causeless_rebalances=(*after.ghost.causeless_rebalances,
                                                                                *notes)))

    @staticmethod
    def _note_leader(  # no mutate: the judge of generation_leader_rejoined (a property), not a rule
            before: GroupState, after: GroupState, action: Action) -> GroupState:
        """Ghost: a join that completes (PreparingRebalance -> CompletingRebalance) has a leader that rejoined for it.
        The leader is the member whose JoinGroup response carries every member's subscription, so that it runs the
        assignor: ``completeClassicGroupJoin`` / ``maybeElectNewJoinedLeader`` (``GroupMetadataManager``, Kafka 4.0,
        trunk 1eb7644; KAFKA-8220) keep the old leader only if it rejoined, else elect one that did -- a leader with no
        JoinGroup pending gets no member list, and the group waits in CompletingRebalance for its session to expire."""
        g0, g1 = before.group, after.group
        if not (g0.state == cg.PREPARING_REBALANCE and g1.state == cg.COMPLETING_REBALANCE):
            return after
        m = g0.member(g1.leader)
        if m is not None and m.joined:  # no branch: ghost observer of a violation (generation_leader_rejoined)
            return after
        note = f"generation {g1.generation} completed on {action.kind} with leader {g1.leader}, which had not rejoined"
        return after._replace(ghost=after.ghost._replace(unjoined_leaders=(*after.ghost.unjoined_leaders, note)))

    def _note_close(  # no mutate: the judge of revoked_partitions_committed on close (a property), not a rule
            self, before: GroupState, after: GroupState, action: Action) -> GroupState:
        """Ghost: a ``close()`` judged on the consumer as it was *before* the step, so a rule that changes its
        identity or positions on the way (a retriable error taken as a reset, a commit skipped) cannot hide the
        handover from :meth:`_note_handover`.  ``KafkaConsumer.close()`` javadoc (Kafka 4.0): "If auto-commit is
        enabled, this will commit the current offsets if possible within the default timeout"; the commit goes out
        while the member is Stable (``generationIfStable()``) and, a retriable error being retried
        (``commitOffsetsSync``), is accepted by the coordinator that holds the member in its generation -- the one
        that loads the group when the close meets a coordinator move.  So a Stable member of that coordinator's
        current generation leaves every owned partition committed at its position."""
        if action.kind not in ("LeaveGroup", "MovedCoordinatorClose") or not self.topo.records:
            return after
        i = action.args[0]
        c = before.consumers[i]
        g = before.group
        if action.kind == "MovedCoordinatorClose":
            g = cg.load_group(g.log, g.epoch + 1, g.next_member, g.group_id, self.flags.load_restores_subscriptions)
        if not self._stable_on_close(c) or g.member(c.member_id) is None or c.generation != g.generation:
            return after
        cache = dict(after.group.offsets)
        missed = [f"close: {c.member_id} closed owning t0p{p} at position {c.position(p)} with {cache.get(p)} "
                  f"committed" for p in c.owned if cache.get(p, 0) != c.position(p)]
        if not missed:  # no branch: ghost observer of a violation (revoked_partitions_committed)
            return after
        known = set(after.ghost.uncommitted_handovers)
        fresh = [m for m in missed if m not in known]
        return after._replace(ghost=after.ghost._replace(
            uncommitted_handovers=(*after.ghost.uncommitted_handovers, *fresh)))

    @staticmethod
    def _miscounted(s: GroupState) -> str:  # no mutate: a model contract (the budget's bookkeeping), not a Kafka rule
        """The fault counters disagree with the state the faults leave behind: the coordinator's epoch is the number
        of coordinator moves counted (CoordinatorFailover, MovedCoordinatorCommit, MovedCoordinatorClose) and the
        partitions added to the topic the number of CreatePartitions counted.  A fault whose step is not counted
        escapes its budget: the search then never ends (an epoch or a partition count that grows without bound)
        instead of stopping where the scenario said the faults stop."""
        used = dict(zip(GROUP_FAULT_KINDS, s.faults_used))
        moves = used["coordinator_failover"] + used["moved_coordinator_commit"]
        if s.group.epoch != moves:
            return f"coordinator epoch {s.group.epoch} after {moves} counted coordinator move(s)"
        if s.added_partitions != used["create_partitions"]:
            return f"{s.added_partitions} partition(s) added after {used['create_partitions']} counted CreatePartitions"
        return ""

    def _overspent(self, s: GroupState, action: Action) -> str:
        """The budget ``action`` would pass, or "": a scenario's ``[faults]`` limits (per kind and in total) and its
        ``compactions`` bound what the search explores -- every fault a counted, budgeted event, like the log
        cleaner's passes -- so an action offered past them is the model contradicting its scenario (a search that
        never ends, or a fault injected where the scenario said none can happen)."""
        fault = FAULT_OF_ACTION.get(action.kind)
        if fault is not None and not self._fault_allowed(s, fault):  # unreachable: actions() keeps the budget
            k = GROUP_FAULT_KINDS.index(fault)
            return f"{fault}: {s.faults_used[k]} of {self._limits[k]} used, {sum(s.faults_used)} in all"
        if action.kind == "Compact" and s.compactions >= self.topo.compactions:  # unreachable: as above
            return f"compactions: {s.compactions} of {self.topo.compactions} used"
        return ""

    def _answer(  # no mutate: the judge's input (consumers_react_as_kafka), not a rule
            self, s: GroupState, action: Action) -> tuple[str, tuple[int, ...]] | None:
        """Ghost: the coordinator's answer to the SyncGroup or Heartbeat ``action`` sends (error, assignment),
        computed from the state before the step, apart from the handler that acts on it."""
        if action.kind == "Heartbeat":
            i = action.args[0]
            c = s.consumers[i]
            return cg.heartbeat(s.group, c.member_id, c.generation, self._fenced_by(i)), ()
        if action.kind == "LateHeartbeat":
            i = action.args[0]
            member, generation = s.consumers[i].beat
            return cg.heartbeat(s.group, member, generation, self._fenced_by(i)), ()
        if action.kind == "SyncGroup":
            res = self._sync(s, action.args[0])
            return None if res is None else (res.error, tuple(sorted(res.assignment)))
        if action.kind == "SyncResponse":
            return Errors.NONE, tuple(sorted(s.consumers[action.args[0]].held_sync[0]))
        if action.kind == "OffsetFetchFails":  # no mutate: ghost observer (the judge's input)
            # the SyncGroup's assignment, and Kafka's documented answer to the fetch -- not the coordinator's code
            res = self._sync(s, action.args[0])
            assert res is not None
            return aerr.FETCH_FAILURE_ANSWERS[action.args[1]], tuple(sorted(res.assignment))
        if action.kind in ("Commit", "EarlyCommit"):  # no mutate: ghost observer (the judge's input)
            i = action.args[0]
            c = s.consumers[i]
            return cg.validate_offset_commit(s.group, c.member_id, c.generation,
                                             self.flags.offset_commit_generation_check,
                                             self.flags.offset_commit_stale_generation_check, self._fenced_by(i)), ()
        if action.kind == "MovedCoordinatorCommit":  # no mutate: ghost observer (the judge's input)
            return Errors.NOT_COORDINATOR, ()
        if action.kind in ("GroupAppendFails", "CommitAppendFails"):  # no mutate: ghost observer (the judge's input)
            # Kafka's documented translation of the storage error, not the coordinator's code under test
            table = aerr.GROUP_APPEND_ANSWERS if action.kind == "GroupAppendFails" else aerr.COMMIT_APPEND_ANSWERS
            return table[action.args[1], action.args[2]], ()
        if action.kind == "LateCommit":
            i = action.args[0]
            member, generation, _ = s.consumers[i].sent
            return cg.validate_offset_commit(s.group, member, generation, self.flags.offset_commit_generation_check,
                                             self.flags.offset_commit_stale_generation_check, self._fenced_by(i)), ()
        return None

    def _note_reaction(  # no mutate: the judge of consumers_react_as_kafka (a property), not a rule
            self, before: GroupState, after: GroupState, action: Action,
                       answer: tuple[str, tuple[int, ...]]) -> GroupState:
        """Ghost: does consumer ``i`` react to the answer as ``AbstractCoordinator``'s SyncGroup/Heartbeat response
        handlers do (Kafka 4.0, trunk ``1eb7644349cb``)?  A Heartbeat answered NONE, REBALANCE_IN_PROGRESS while the
        consumer is not Stable, or a fencing error to a (late) Heartbeat sent with a member id or generation the
        consumer no longer has (``generationUnchanged()`` false) leaves it as it was.  NONE to a SyncGroup: the
        assignment is owned, member id and
        generation kept (Stable, or rejoining after a cooperative revocation); UNKNOWN_MEMBER_ID: member id and
        generation reset, partitions lost, rejoin; ILLEGAL_GENERATION: generation reset, partitions lost, rejoin;
        REBALANCE_IN_PROGRESS: rejoin keeping member id, generation and partitions (``requestRejoin``); any other
        error is raised from ``poll()``: the consumer fails."""
        i = action.args[0]
        old, new = before.consumers[i], after.consumers[i]
        error, assignment = answer
        ident = (new.member_id, new.generation)
        heartbeat = action.kind in ("Heartbeat", "LateHeartbeat")
        sent = old.beat if action.kind == "LateHeartbeat" else (old.member_id, old.generation)
        fencing = error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION, Errors.FENCED_INSTANCE_ID)
        # HeartbeatResponseHandler: NONE, REBALANCE_IN_PROGRESS outside STABLE and a fencing error of a generation
        # the consumer has left (generationUnchanged() false) leave it as it was
        ignored = error == Errors.NONE or (error == Errors.REBALANCE_IN_PROGRESS and old.state != cc.STABLE) or (
            fencing and sent != (old.member_id, old.generation))
        # OffsetCommitResponseHandler (ConsumerCoordinator, trunk 1eb7644): a fencing error of an identity the consumer
        # has left is only an exception while its JoinGroup is out (PREPARING_REBALANCE: JOINING), and
        # FENCED_INSTANCE_ID of such an identity in any state; otherwise the member resets as for any response
        late_commit = action.kind == "LateCommit"
        if late_commit:
            sent = old.sent[:2]
            moved_on = sent != (old.member_id, old.generation)
            ignored = error == Errors.NONE or (error == Errors.REBALANCE_IN_PROGRESS and old.state != cc.STABLE) or (
                moved_on and (error == Errors.FENCED_INSTANCE_ID or (fencing and old.state == cc.JOINING)))
        if action.kind in ("Commit", "EarlyCommit", "MovedCoordinatorCommit", "CommitAppendFails"):
            ok = _commit_reaction_ok(old, new, error)
        elif action.kind == "OffsetFetchFails":
            # OffsetFetchResponseHandler (ConsumerCoordinator, trunk 1eb7644): the assignment is owned under the same
            # identity; a coordinator error marks the coordinator unknown, any other retriable error is retried
            rediscover = error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR)
            ok = new.state in (cc.STABLE, cc.UNJOINED) and new.owned == assignment and ident == (
                old.member_id, old.generation) and (new.coordinator < 0) == rediscover
        elif action.kind == "SyncResponse" and (old.state, old.generation) != (cc.AWAITING_SYNC, old.held_sync[1]):
            # SyncGroupResponseHandler: a generation reset (or a state left) meanwhile fails the rebalance; rejoin
            ok = new.state == cc.UNJOINED and (new.member_id, new.generation, new.owned) == (
                old.member_id, old.generation, old.owned)
        elif (heartbeat or late_commit) and ignored:
            ok = new._replace(beat=old.beat, sent=old.sent) == old
        elif error == Errors.NONE:
            ok = new.state in (cc.STABLE, cc.UNJOINED) and new.owned == assignment and ident == (
                old.member_id, old.generation)
        elif error == Errors.UNKNOWN_MEMBER_ID:
            ok = new.state == cc.UNJOINED and ident == ("", cc.NO_GENERATION) and not new.owned
        elif error == Errors.ILLEGAL_GENERATION:
            ok = new.state == cc.UNJOINED and ident == (old.member_id, cc.NO_GENERATION) and not new.owned
        elif error == Errors.REBALANCE_IN_PROGRESS:
            ok = new.state == cc.UNJOINED and (*ident, new.owned) == (old.member_id, old.generation, old.owned)
        elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            # JoinGroup/SyncGroupResponseHandler: markCoordinatorUnknown, a retriable failure -- joinGroupIfNeeded
            # sends the JoinGroup again with the member id and generation the consumer has (KAFKA-13214)
            ok = new.state == cc.UNJOINED and new.coordinator < 0 and (*ident, new.owned) == (
                old.member_id, old.generation, old.owned)
        else:  # unreachable: no modelled answer is an error the handlers do not name
            ok = new.state == cc.FAILED
        if ok:  # no branch: ghost observer of a violation (consumers_react_as_kafka)
            return after
        note = (f"{action.kind}({old.member_id or '-'}, generation {old.generation}) answered {error}: the consumer "
                f"is {new.state} as {new.member_id or '-'} in generation {new.generation} owning {list(new.owned)}")
        return after._replace(ghost=after.ghost._replace(misreacted=(*after.ghost.misreacted, note)))

    def _join_answer(  # no mutate: the judge's input (consumers_react_as_kafka), not a rule
            self, s: GroupState, action: Action) -> JoinAnswer | None:
        """Ghost: what Kafka's consumer sends, and is answered, when consumer ``i`` (re)joins in ``s`` -- computed from
        the state before the step, apart from the handler (``ConsumerCoordinator.onJoinPrepare`` then
        ``AbstractCoordinator.sendJoinGroupRequest``, Kafka 4.0, trunk 1eb7644).  The eager protocol's onJoinPrepare
        auto-commits the positions first (as a member of a generation); its OffsetCommit answer goes through
        ``OffsetCommitResponseHandler`` -- UNKNOWN_MEMBER_ID resets member id and generation
        (``resetStateOnResponseError``), ILLEGAL_GENERATION the generation -- and the JoinGroup carries the identity
        the consumer has then.  The coordinator answers a JoinGroup whose member id it neither holds nor keeps pending
        UNKNOWN_MEMBER_ID (FENCED_INSTANCE_ID for a replaced static process, ``ClassicGroup.validateMember``) and
        admits any other."""
        if action.kind not in ("JoinGroup", "StaleJoinGroup"):
            return None
        i = action.args[0]
        c = s.consumers[i]
        commit = Errors.NONE
        member, generation = c.member_id, c.generation
        if not self.cooperative and self.flags.commit_on_revoke and member and generation >= 0 and c.uncommitted():
            commit = cg.validate_offset_commit(s.group, member, generation, self.flags.offset_commit_generation_check,
                                               self.flags.offset_commit_stale_generation_check, self._fenced_by(i))
            if commit == Errors.UNKNOWN_MEMBER_ID:  # no mutate: the judge's table (a property)
                member, generation = "", cc.NO_GENERATION
            elif commit == Errors.ILLEGAL_GENERATION:  # no mutate: the judge's table (a property)
                generation = cc.NO_GENERATION
        admitted = not member or member in s.group.pending
        answer = Errors.NONE if admitted else cg.validate_member(s.group, member, self._fenced_by(i))
        return JoinAnswer(commit, member, generation, answer)

    @staticmethod
    def _note_join_reaction(  # no mutate: the judge of consumers_react_as_kafka (a property), not a rule
            before: GroupState, after: GroupState, action: Action, joined: JoinAnswer) -> GroupState:
        """Ghost: does consumer ``i`` react to its onJoinPrepare commit's answer and its JoinGroup's answer as Kafka's
        client does (:meth:`_join_answer`)?  UNKNOWN_MEMBER_ID to the JoinGroup: member id and generation reset,
        nothing owned, rejoin (``JoinGroupResponseHandler``: ``resetStateAndGeneration``, then ``requestRejoin``);
        FENCED_INSTANCE_ID: fatal; an admitted JoinGroup: the consumer waits at the join barrier or syncs (or, for
        MEMBER_ID_REQUIRED, rejoins with the id the answer carries), under the member id it sent if it sent one --
        never a member id the coordinator fenced, never a generation the commit's answer reset (what it owns is
        judged by fenced_consumer_owns_nothing and no_partition_owned_twice)."""
        i = action.args[0]
        old, new = before.consumers[i], after.consumers[i]
        sent = f"JoinGroup({joined.member_id or '-'}, generation {joined.generation})"
        if joined.commit != Errors.NONE:
            sent = f"onJoinPrepare's commit answered {joined.commit}, then {sent}"
        if joined.answer == Errors.UNKNOWN_MEMBER_ID:
            ok = new.state == cc.UNJOINED and (new.member_id, new.generation, new.owned) == ("", cc.NO_GENERATION, ())
        elif joined.answer == Errors.FENCED_INSTANCE_ID:
            ok = new.state == cc.FAILED
        elif new.state == cc.UNJOINED:  # MEMBER_ID_REQUIRED (KIP-394): the id it carries, no generation
            ok = not joined.member_id and bool(new.member_id) and new.generation == cc.NO_GENERATION
        else:
            kept = not joined.member_id or new.member_id == joined.member_id
            ok = kept and new.state in REBALANCING and (
                new.state == cc.AWAITING_SYNC or new.generation == joined.generation)
        if ok:  # no branch: ghost observer of a violation (consumers_react_as_kafka)
            return after
        note = (f"{sent} of {old.member_id or '-'} answered {joined.answer}: the consumer is {new.state} as "
                f"{new.member_id or '-'} in generation {new.generation} owning {list(new.owned)}")
        return after._replace(ghost=after.ghost._replace(misreacted=(*after.ghost.misreacted, note)))

    def _note_identities(  # no mutate: the judge of consumer_identity_issued (a property), not a rule
            self, before: GroupState, after: GroupState, action: Action) -> GroupState:
        """Ghost: a consumer takes a member id or a generation only from its coordinator's answer
        (``JoinGroupResponse`` carries the member id and generation the group has just recorded,
        ``GroupMetadataManager.completeClassicGroupJoin`` / ``classicGroupJoinExistingMember``; MEMBER_ID_REQUIRED the
        member id it keeps pending, KIP-394; Kafka 4.0, trunk 1eb7644).  So after any step in which a consumer's
        identity changes other than by a reset (member id "", generation -1: the client's own), the coordinator holds
        the new member id -- as a member, or pending -- and a consumer that now syncs or consumes is at the group's
        generation, which has passed its join barrier: in PreparingRebalance every JoinGroup -- a new member's, a
        known member's, a static member's new process (``classicGroupJoinNewStaticMember``) -- waits for the barrier
        to lift, and only ``classicGroupJoinExistingMember`` in CompletingRebalance or Stable answers at once.
        A step that answers a member from a group it then does not store (or from an older copy of it)
        hands out a generation nobody else agrees on.

        Conversely, a member id the coordinator creates reaches the consumer it was created for: a JoinGroup that adds
        a member answers it with that id (``JoinGroupResponseHandler`` builds its ``Generation`` from the response's
        ``memberId``; a static member's new process learns it from the response it waits for, KIP-345).  A member no
        running consumer knows is a ghost member: it holds a place in the group -- and in the leader's assignment --
        until its session expires, and the consumer rejoins as yet another new member (KAFKA-7610's unbounded group
        growth, which KIP-394's MEMBER_ID_REQUIRED round trip closed for dynamic members); likewise a KIP-394 pending
        member id reaches the consumer in its MEMBER_ID_REQUIRED answer unless that answer is lost (the
        ``lost_member_id`` fault).  A new coordinator's load (failover) is not an admission."""
        g = after.group
        notes: list[str] = []
        if action.kind not in ("CoordinatorFailover", "MovedCoordinatorCommit", "MovedCoordinatorClose"):
            known = {self._member_of(after, i) for i, c in enumerate(after.consumers) if c.up}
            notes.extend(f"the coordinator admitted member {m.member_id} on {action.kind}{list(action.args)}, which no "
                         f"running consumer knows" for m in g.members
                         if before.group.member(m.member_id) is None and m.member_id not in known)
            if action.kind != "LoseMemberIdResponse":  # the fault: the MEMBER_ID_REQUIRED answer never arrives
                notes.extend(f"the coordinator handed out pending member id {p} (KIP-394) on {action.kind}"
                             f"{list(action.args)}, which no running consumer knows"
                             for p in g.pending if p not in before.group.pending and p not in known)
        for i, (old, new) in enumerate(zip(before.consumers, after.consumers)):
            if not new.up or (new.member_id, new.generation) == (old.member_id, old.generation):
                continue
            took_id = bool(new.member_id) and new.member_id != old.member_id
            held = g.member(new.member_id) is not None or new.member_id in g.pending
            if took_id and not held:
                notes.append(f"consumer {i} took member id {new.member_id} on {action.kind}{list(action.args)}, "
                             f"which the coordinator does not hold")
            syncing = new.state in (cc.AWAITING_SYNC, cc.STABLE) and new.generation >= 0
            if syncing and (g.member(new.member_id) is None or new.generation != g.generation):
                notes.append(f"consumer {i} took generation {new.generation} as {new.member_id or '-'} on "
                             f"{action.kind}{list(action.args)}; the group is at generation {g.generation}")
            elif syncing and g.state == cg.PREPARING_REBALANCE:
                # the join barrier: every JoinGroup waits for it to lift (completeClassicGroupJoin answers them with
                # the next generation); a generation is handed out at once only in CompletingRebalance or Stable
                notes.append(f"consumer {i} took generation {new.generation} as {new.member_id or '-'} on "
                             f"{action.kind}{list(action.args)} while the group waits at its join barrier")
        if not notes:  # no branch: ghost observer of a violation (consumer_identity_issued)
            return after
        return after._replace(ghost=after.ghost._replace(unissued=(*after.ghost.unissued, *notes)))

    # -- protocol steps -------------------------------------------------------------------------

    def _find_coordinator(self, s: GroupState, i: int) -> Result:
        c = s.consumers[i]
        part = olog.partition_for(GROUP_ID)
        events = [f"find_coordinator:__consumer_offsets-{part}"]
        if c.state == cc.JOINING and c.coordinator >= 0:
            # the JoinGroup parked at the old coordinator is answered NOT_COORDINATOR: send it again, with the member id
            # and generation it has (joinGroupIfNeeded: a retriable failure, no resetStateAndRejoin since KAFKA-13214)
            c = c._replace(state=cc.UNJOINED) if self.flags.retriable_join_error_keeps_member else (
                self._reset_member(c))  # no branch: weakened variant retriable_join_error_resets_member
            events.append("join:NOT_COORDINATOR")
        elif c.state == cc.STABLE and not self.flags.coordinator_change_keeps_membership:  # no branch: variant only
            c = c._replace(state=cc.UNJOINED)  # weakened variant rejoin_on_coordinator_change
            events.append("rejoin:coordinator_changed")
        # the connection to the old coordinator is gone: a Heartbeat or SyncGroup in flight there fails
        c = c._replace(coordinator=s.group.epoch, beat=("", cc.NO_GENERATION), held_sync=((), cc.NO_GENERATION))
        if c.state == cc.AWAITING_SYNC and s.consumers[i].held_sync[1] >= 0:
            # the SyncGroup failed: rejoin (rejoinNeeded is cleared only by a successful SyncGroup, KAFKA-5154)
            if not self.flags.retriable_join_error_keeps_member:  # no branch: weakened variant only
                c = self._reset_member(c)  # retriable_join_error_resets_member
            elif not self.flags.failed_sync_requests_rejoin:  # no branch: weakened variant failed_sync_ends_rebalance
                c = self._revoked_assignment_resumed(s, c)
            else:
                c = c._replace(state=cc.UNJOINED)
            events.append("sync:NOT_COORDINATOR")
        return self._put(s, i, c), tuple(events)

    @staticmethod
    def _reset_member(c: Consumer) -> Consumer:  # unreachable: weakened variant retriable_join_error_resets_member only
        """KAFKA-13214's ``resetStateAndRejoin`` on a retriable rebalance failure (Kafka 2.8-3.0,
        ``AbstractCoordinator.joinGroupIfNeeded``): member id and generation reset; the next ``onJoinPrepare``, with no
        generation, calls ``onPartitionsLost`` -- the partitions go uncommitted."""
        return cc.lose_partitions(c)._replace(state=cc.UNJOINED, member_id="", generation=cc.NO_GENERATION)

    @staticmethod
    def _revoked_assignment_resumed(  # unreachable: weakened variant failed_sync_ends_rebalance only
            s: GroupState, c: Consumer) -> Consumer:
        """KAFKA-5154 (Kafka 0.10.2, ``AbstractCoordinator``): the JoinGroup answer had cleared ``rejoinNeeded``, so a
        SyncGroup lost to a disconnect ends the rebalance; the subscription still holds the assignment onJoinPrepare
        revoked (only ``onJoinComplete`` replaces it), and the consumer fetches it again from the committed offsets."""
        back = tuple(sorted(c.last_assignment[0]))
        committed = dict(s.group.offsets)
        positions = tuple((p, committed.get(p, 0)) for p in back)
        return c._replace(state=cc.STABLE, owned=back, positions=positions, committed=positions)

    def _start(self, s: GroupState, i: int) -> Result:
        return self._put(s, i, cc.fresh(up=True)), ("consumer_started",)

    def _stale_join(self, s: GroupState, i: int) -> Result:
        """Fault: consumer ``i`` runs a faulty client (KAFKA-13419, Kafka 2.4-3.0: a SyncGroup answered
        REBALANCE_IN_PROGRESS left ``ownedPartitions`` out of date) whose JoinGroup subscription claims
        the partitions of its last assignment, in that assignment's generation, though it no longer owns
        them -- another member may own them now.  The cooperative leader's assignor must not trust the
        claim: KIP-792's ``generationId`` lets ``AbstractStickyAssignor`` keep a partition with the
        member that claims it in the highest generation, so the faulty member is never handed a partition
        whose owner still consumes it.  Locally the consumer owns what it owns; only the claim is stale."""
        c = s.consumers[i]
        claimed, generation = c.last_assignment
        contested = [p for p in claimed for j, o in enumerate(s.consumers) if j != i and o.up and p in o.owned]
        return self._join(s, i, (claimed, generation), ("stale_claim:contested",) if contested else ())

    def _join(self, s: GroupState, i: int, claim: tuple[tuple[int, ...], int] | None = None,
              extra: tuple[str, ...] = ()) -> Result:
        c = s.consumers[i]
        events: list[str] = [*extra]
        if not self.cooperative:
            # onJoinPrepare: auto-commit the positions, then revoke everything (eager protocol)
            if self.flags.commit_on_revoke and c.member_id and c.generation >= 0 and c.uncommitted() and (
                    not c.preparing):  # an asynchronous onJoinPrepare commit (JoinPrepare) completed: no second one
                s, error = self._commit(s, c, c.uncommitted(), i)
                events.append(f"commit:{_outcome(error)}")
                if error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION) and (
                        self.flags.join_prepare_commit_resets_identity):  # no branch: False is a weakened variant only
                    # OffsetCommitResponseHandler (ConsumerCoordinator, Kafka 4.0 trunk 1eb7644):
                    # resetStateOnResponseError resets the generation (UNKNOWN_MEMBER_ID the member id too) but not the
                    # assignment; the failure is not retriable, so onJoinPrepare goes on with the generation it was
                    # called with and revokes (eager: everything), then JoinGroup carries the reset identity
                    reset = cc.on_error(c, error, *self._rebalance_reaction())
                    c = c._replace(member_id=reset.member_id, generation=reset.generation)
                    events.append("join_prepare:commit_fenced")
                    if not self.flags.join_prepare_revokes_after_fenced_commit:  # no branch: weakened variant only
                        # join_prepare_skips_revoke_after_fenced_commit (KAFKA-12983's shape): nothing revoked
                        return self._put(s, i, c._replace(state=cc.UNJOINED)), (*events, "join_prepare:skipped")
            if c.owned:
                events.append("eager:revoked_all")
                s = self._note_handover(s, c, c.owned, "onJoinPrepare")
                events.append("revoked:onJoinPrepare")
            c = cc.lose_partitions(c)._replace(preparing=False)
        owned, generation = (c.owned, c.generation) if claim is None else claim
        if self.topo.subscription_version < 2:  # ConsumerProtocolSubscription v0/v1: no generationId field
            generation = cc.NO_GENERATION
        before = s.group
        # a new process of a static member sends its instance id for the replacement; a known member's JoinGroup
        # is checked with it (under static_member_not_fenced: without it)
        instance = self.instances[i] if not c.member_id else self._fenced_by(i)
        out = cc.join_group(before, i, c, owned, generation, self.flags.join_unchanged_answers_current_generation,
                            self.flags.rebalance_in_progress_rejoins, instance,
                            self.flags.static_rejoin_keeps_generation, self.flags.join_updates_member_metadata,
                            self._requires_member_id, self.flags.pending_member_cleared_on_join,
                            self.flags.static_rejoin_completing_rebalances,
                            self.flags.join_rebalance_in_progress_retried)
        s = self._note_answer(s, "JoinGroup", c, out.error, self.instances[i],
                              self._requires_member_id)._replace(group=out.group)
        if out.error == Errors.NONE and not self.flags.pending_member_kept_on_other_join:  # no branch: weakened variant
            s = s._replace(group=s.group._replace(pending=()))  # join_forgets_other_pending_members
        s = self._note_recorded(s, out, owned, generation)
        needless = _needless_rebalance(before, out.group, c.member_id, owned, generation, self.instances[i])
        replaced = before.static_member(self.instances[i]) if self.instances[i] and not c.member_id else None
        if replaced is not None and before.state == cg.STABLE and out.group.state == cg.STABLE:
            events.append("static:replaced_in_stable")
        if c.member_id and c.generation < 0 and out.error == Errors.UNKNOWN_MEMBER_ID:
            events.append("join:unknown_member_id_without_generation")  # e.g. a pending id a new coordinator lacks
        if needless:  # unreachable: ghost observer of a violation (no_needless_rebalance)
            s = s._replace(ghost=s.ghost._replace(needless=(*s.ghost.needless, needless)))
        return self._put(s, i, out.consumer), (*events, out.event)

    @staticmethod
    def _note_recorded(s: GroupState, out: cc.JoinOutcome, owned: tuple[int, ...], generation: int) -> GroupState:
        """Ghost: a JoinGroup the coordinator admitted leaves it holding the subscription metadata the member just
        sent (``ownedPartitions`` and, KIP-792, their generation): ``classicGroupJoinNewMember`` stores a new
        member's, ``updateMemberAndRebalance`` / ``ClassicGroupMember.setSupportedProtocols`` a known member's
        (``GroupMetadataManager``, Kafka 4.0, trunk 1eb7644).  The leader's assignor and the next JoinGroup's
        "unchanged metadata" test both read it: an out-of-date copy hands partitions by a stale claim and turns
        a retried JoinGroup into a rebalance."""
        if out.error != Errors.NONE:
            return s
        m = s.group.member(out.member_id)
        held = None if m is None else (m.owned, m.generation)
        if held == (owned, generation):  # no branch: ghost observer of a violation (coordinator_holds_subscription)
            return s
        note = (f"JoinGroup of {out.member_id} sent ownedPartitions {list(owned)} of generation {generation}; "
                f"the coordinator holds {'no member' if held is None else f'{list(held[0])} of generation {held[1]}'}")
        return s._replace(ghost=s.ghost._replace(misrecorded=(*s.ghost.misrecorded, note)))

    def _join_prepare(self, s: GroupState, i: int) -> Result:
        """``ConsumerCoordinator.onJoinPrepare`` of an eager member with auto-commit (Kafka 3.2+, trunk 1eb7644):
        ``maybeAutoCommitOffsetsAsync`` sends the OffsetCommit of its positions and returns; ``onJoinPrepare`` returns
        false while the future is not done, so the revocation (``onPartitionsRevoked``) and the JoinGroup wait for a
        later poll -- the JoinGroup step, which finds the commit done.  Until then the partitions are pending
        revocation (``SubscriptionState.markPendingRevocation``, the KAFKA-14196 fix): not fetchable.  A commit the
        coordinator refuses completes the future exceptionally at once: the member goes on as the synchronous path
        does (:meth:`_join`)."""
        c = s.consumers[i]
        committed, error = self._commit(s, c, c.uncommitted(), i)
        if error != Errors.NONE:
            return self._join(s, i)
        return self._put(committed, i, c._replace(committed=c.positions, preparing=True)), (
            "commit:accepted", "join_prepare:commit_in_flight")

    def _complete_join(self, s: GroupState) -> Result:
        group = cg.complete_join(s.group, self.topo.assignor)
        consumers = tuple(cc.join_completed(c, group, self._member_of(s, i)) for i, c in enumerate(s.consumers))
        leader_event = f"join:leader_elected:{group.leader}"
        return s._replace(group=group, consumers=consumers), ("join:complete", leader_event)

    def _rebalance_timeout(self, s: GroupState) -> Result:
        """Fault (a timing event): the delayed join of the PreparingRebalance group expires after
        ``rebalance.timeout.ms`` before every member rejoined (:func:`cg.complete_join_on_timeout`).  A removed
        dynamic member's consumer may still be Stable in the old generation, consuming what it owned (it has not
        heard of the rebalance yet): its next Heartbeat, OffsetCommit or JoinGroup is answered UNKNOWN_MEMBER_ID; a
        static member that has not rejoined stays in the group, and its JoinGroup (unchanged metadata) is answered
        with the new generation."""
        before = s.group
        advances = self.flags.rebalance_timeout_advances_generation
        keeps, elects = self.flags.rebalance_timeout_keeps_static, self.flags.timeout_elects_joined_leader
        group = cg.complete_join_on_timeout(before, self.topo.assignor, advances, keeps, elects)
        removed = [m.member_id for m in before.members if group.member(m.member_id) is None]
        kept_static = [m.member_id for m in before.members if not m.joined and group.member(m.member_id) is not None]
        answered = group if self.flags.rebalance_timeout_answers_new_group else before  # no branch: variant only
        consumers = tuple(cc.join_completed(c, answered, self._member_of(s, i)) for i, c in enumerate(s.consumers))
        events = ["rebalance_timeout:expired", *(f"rebalance_timeout:removed:{m}" for m in removed)]
        if removed and any(c.up and c.member_id in removed and c.state == cc.STABLE for c in s.consumers):
            events.append("rebalance_timeout:removed_consuming_member")
        if removed and group.state == cg.EMPTY:  # nobody rejoined: the timeout removed every (dynamic) member
            events.append("rebalance_timeout:group_emptied")
        if before.pending and all(m.joined for m in before.members) and group.state == cg.COMPLETING_REBALANCE:
            # every member rejoined, and only a KIP-394 pending member id holds up hasAllMembersJoined -- not the
            # delayed join: at rebalance.timeout.ms it completes without it (completeClassicGroupJoin ignores
            # pendingJoinMembers)
            events.append("rebalance_timeout:pending_member_left_out")
        if kept_static and group.state == cg.COMPLETING_REBALANCE:
            events.append("rebalance_timeout:static_member_kept")
            s = s._replace(ghost=s.ghost._replace(kept_unjoined=tuple(sorted({*s.ghost.kept_unjoined,
                                                                                *kept_static}))))
        if group.state == cg.COMPLETING_REBALANCE:
            events.append(f"join:leader_elected:{group.leader}")
        return s._replace(group=group, consumers=consumers), tuple(events)

    def _sync(self, s: GroupState, i: int) -> cg.SyncResult | None:
        partitions = self.topo.partitions + s.added_partitions
        if s.leader_snapshot >= 0:  # the leader's assignor runs on the metadata of its JoinGroup answer
            partitions = s.leader_snapshot
        return cc.sync_group(s.group, s.consumers[i], lambda g: self._assign(g, partitions), self._fenced_by(i))

    def _sync_group(self, s: GroupState, i: int) -> Result:
        res = self._sync(s, i)
        assert res is not None
        c = s.consumers[i]._replace(stalled=False)
        s = self._note_answer(s, "SyncGroup", c, res.error, self.instances[i])._replace(group=res.group)
        if res.error != Errors.NONE:
            # SyncGroupResponseHandler: REBALANCE_IN_PROGRESS is requestRejoin (KAFKA-14016); the weakened variant
            # sync_rebalance_in_progress_resets_generation resets the generation instead
            return self._put(s, i, self._sync_error_reaction(c, res.error)), (f"error:{res.error}", f"sync:{res.error}")
        return self._adopt(s, i, c, res.assignment)

    def _offset_fetch_fails(self, s: GroupState, i: int, failure: str, client: str) -> Result:
        """Fault: consumer ``i``'s SyncGroup is answered with an assignment, and its OffsetFetch of the committed
        offsets of the partitions it did not own (``requireStable``, KIP-447) meets ``failure`` at the coordinator,
        whose answer (:func:`aerr.fetch_failure_answer`, Kafka 4.0) reaches a ``client`` consumer's
        ``OffsetFetchResponseHandler`` (:func:`cc.on_offset_fetch_error`).  A retried fetch reads the offsets the
        coordinator holds -- the same as the first would have (nobody else commits the partitions of this
        generation's owner) -- so the step is the SyncGroup's, then the handler's reaction: the coordinator marked
        unknown (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE: FindCoordinator, then the retry), nothing (a retriable
        error: the retry), or the consumer FAILED (an error its handler does not name)."""
        after, events = self._sync_group(s, i)
        error = aerr.fetch_failure_answer(failure, self.flags.offset_fetch_write_failures_remapped)
        c = cc.on_offset_fetch_error(after.consumers[i], error, client, self.flags.offset_fetch_retries_retriable)
        return self._put(after, i, c), (*events, f"offset_fetch:{error}", f"offset_fetch_client:{client}")

    def _sync_error_reaction(self, c: Consumer, error: str) -> Consumer:
        """``SyncGroupResponseHandler`` on an error (:func:`cc.on_error`): REBALANCE_IN_PROGRESS is requestRejoin
        (KAFKA-14016); the weakened variant sync_rebalance_in_progress_resets_generation resets the generation."""
        rejoins, keeps, loses = self._rebalance_reaction()
        return cc.on_error(c, error, rejoins, keeps and self.flags.sync_rebalance_keeps_generation, loses)

    def _delay_sync_response(self, s: GroupState, i: int) -> Result:
        """Fault: the coordinator takes consumer ``i``'s SyncGroup (the leader's assignment is stored, the group is
        Stable) but the answer is still on its way back; meanwhile the heartbeat thread runs (COMPLETING_REBALANCE)
        and may reset the generation (UNKNOWN_MEMBER_ID after the session expired).  :meth:`_sync_response`
        delivers it."""
        res = self._sync(s, i)
        assert res is not None and res.error == Errors.NONE
        c = s.consumers[i]
        s = self._note_answer(s, "SyncGroup", c, res.error, self.instances[i])._replace(group=res.group)
        return self._put(s, i, c._replace(held_sync=(res.assignment, c.generation))), ("sync:response_delayed",)

    def _sync_response(self, s: GroupState, i: int) -> Result:
        """The delayed SyncGroup answer arrives (``AbstractCoordinator.SyncGroupResponseHandler``, Kafka 4.0 trunk
        1eb7644): the consumer takes the assignment only if its generation was not reset meanwhile and it is still
        COMPLETING_REBALANCE (``!hasGenerationReset(generation) && state == COMPLETING_REBALANCE``); otherwise it
        fails the rebalance with ILLEGAL_GENERATION and rejoins -- it must not consume an assignment of a generation
        it was fenced from.  ``sync_response_checks_generation=False`` is the weakened variant
        stale_sync_response_adopted."""
        c = s.consumers[i]
        assignment, generation = c.held_sync
        c = c._replace(held_sync=((), cc.NO_GENERATION))
        current = c.state == cc.AWAITING_SYNC and c.generation == generation
        if current or not self.flags.sync_response_checks_generation:
            s, events = self._adopt(s, i, c, assignment)
            return s, ("sync:response_arrived", *events)
        return self._put(s, i, c._replace(state=cc.UNJOINED)), ("sync:response_arrived", "sync:stale_response_ignored")

    def _adopt(self, s: GroupState, i: int, c: Consumer, assignment: tuple[int, ...]) -> Result:
        """A SyncGroup answered NONE: the consumer owns ``assignment`` (cooperative: revoking what it lost)."""
        fetched = dict(s.group.offsets) if self.flags.offset_fetch_on_assign else {}
        c, revoked = cc.assigned(c, assignment, fetched)
        s, resumed = self._note_starts(s, s.consumers[i], c)
        if self._limits[GROUP_FAULT_KINDS.index("stale_subscription")]:  # remembered only where it is used
            c = c._replace(last_assignment=(assignment, c.generation))
        events = ["sync:assignment", *(("resumed_at_committed_offset",) if resumed else ())]
        stale = 0 <= s.leader_snapshot < self.topo.partitions + s.added_partitions
        if stale and c.member_id == s.group.leader and self.flags.leader_checks_assignment_snapshot:
            # rejoinNeededOrPending (ConsumerCoordinator, Kafka 4.0 trunk 1eb7644; KAFKA-3949): the leader's assignment
            # was computed on metadata that has changed since -- it completes this rebalance and rejoins at once
            c = c._replace(state=cc.UNJOINED)
            events.append("leader:metadata_changed")
        if revoked:
            # cooperative: onPartitionsRevoked commits the revoked partitions, then the member rejoins
            before = s.consumers[i]
            pending = before.uncommitted(revoked)
            events.append("cooperative:revoked")
            if pending and self.flags.commit_on_revoke:
                s, error = self._commit(s, before, pending, i, c)  # onJoinComplete runs once the member is STABLE
                events.append(f"commit:{_outcome(error)}")
            s = self._note_handover(s, before, revoked, "onPartitionsRevoked")
            events.append("revoked:onPartitionsRevoked")
            c = c._replace(state=cc.UNJOINED)
        return self._put(s, i, c), tuple(events)

    def _heartbeat_reaction(self, c: Consumer, error: str, sent: tuple[str, int]) -> Consumer:
        """``HeartbeatResponseHandler`` on ``c`` for a Heartbeat sent as ``sent`` (:func:`cc.on_heartbeat_response`)."""
        return cc.on_heartbeat_response(c, error, sent, *self._rebalance_reaction(),
                                        checks_generation=self.flags.heartbeat_response_checks_generation)

    def _commit_reaction(self, c: Consumer, error: str, sent: tuple[str, int]) -> Consumer:
        """``OffsetCommitResponseHandler`` on ``c`` for an OffsetCommit sent as ``sent``
        (:func:`cc.on_commit_response`)."""
        return cc.on_commit_response(c, error, sent, *self._rebalance_reaction(),
                                     checks_generation=self.flags.commit_response_checks_generation)

    def _heartbeat(self, s: GroupState, i: int) -> Result:
        c = s.consumers[i]
        error = cg.heartbeat(s.group, c.member_id, c.generation, self._fenced_by(i))
        s = self._note_answer(s, "Heartbeat", c, error, self.instances[i])
        c = self._heartbeat_reaction(c, error, (c.member_id, c.generation))
        return self._put(s, i, c), (f"error:{error}", f"heartbeat:{error}")

    def _late_heartbeat(self, s: GroupState, i: int) -> Result:
        """Fault: the response to a Heartbeat consumer ``i``'s heartbeat thread sent as ``c.beat`` (member id,
        generation) arrives only now -- the request was delayed, or the response -- after a rejoin gave the consumer
        another generation (or member id).  The coordinator answers the identity the request carried
        (``classicGroupHeartbeat``: ILLEGAL_GENERATION for a known member of an earlier generation, UNKNOWN_MEMBER_ID
        for one it removed); the consumer must ignore a fencing error sent in a generation it left
        (``generationUnchanged()``, ``AbstractCoordinator.HeartbeatResponseHandler``, Kafka 4.0 trunk 1eb7644), and
        REBALANCE_IN_PROGRESS unless it is Stable -- else a late response resets a member that just completed a
        rebalance, which loses its partitions and rebalances the group again."""
        c = s.consumers[i]
        member, generation = c.beat
        error = cg.heartbeat(s.group, member, generation, self._fenced_by(i))
        s = self._note_answer(s, "Heartbeat", c._replace(member_id=member, generation=generation), error,
                              self.instances[i])
        after = self._heartbeat_reaction(c, error, c.beat)._replace(beat=("", cc.NO_GENERATION))
        ignored = after == c._replace(beat=after.beat)
        # the worst moment for a late answer: the consumer completed the rebalance it rejoined for and consumes again
        settled = ignored and c.state == cc.STABLE  # no mutate: reach witness (late_heartbeat_ignored_when_stable)
        return self._put(s, i, after), (f"late_heartbeat:{error}", *(("late_heartbeat:ignored",) if ignored else ()),
                                        *(("late_heartbeat:ignored_when_stable",) if settled else ()))

    def _poll(self, s: GroupState, i: int, p: int) -> Result:
        c = s.consumers[i]
        positions = tuple((q, o + 1 if q == p else o) for q, o in c.positions)
        return self._put(s, i, c._replace(positions=positions)), ("poll",)

    def _commit_step(self, s: GroupState, i: int) -> Result:
        c = s.consumers[i]
        s, error = self._commit(s, c, c.uncommitted(), i)
        if error != Errors.NONE:
            return self._put(s, i, self._commit_reaction(c, error, (c.member_id, c.generation))), (
                f"error:{error}", f"commit:{error}")
        if self._limits[GROUP_FAULT_KINDS.index("late_commit")]:  # remembered only where a copy can come late
            c = c._replace(sent=(c.member_id, c.generation, tuple((p, c.position(p)) for p in c.uncommitted())))
        return self._put(s, i, c._replace(committed=c.positions)), ("commit:accepted",)

    # -- timing steps -----------------------------------------------------------------------------

    def _expire_session(self, s: GroupState, member_id: str) -> Result:
        return s._replace(group=cg.remove_member(s.group, member_id)), ("session_expired",)

    def _stale_session_expiry(self, s: GroupState, member_id: str) -> Result:
        """``session.timeout.ms`` after a static member's new process replaced it, the old member id's heartbeat timer
        fires (Kafka 4.0 does not cancel it, ``updateStaticMemberThenRebalanceOrCompleteJoin``, trunk 1eb7644):
        :func:`cg.expire_member_heartbeat` finds no such member and does nothing -- no removal, no rebalance."""
        group = cg.expire_member_heartbeat(s.group, member_id, self.flags.expired_timer_checks_member)
        return s._replace(group=group), ("stale_session_timer",)

    def _expire_pending(self, s: GroupState, member_id: str) -> Result:
        """``session.timeout.ms`` of a pending member (KIP-394) whose JoinGroup with its id never came: no running
        consumer holds the id (its MEMBER_ID_REQUIRED answer was lost, or the process died before rejoining).
        ``removePendingMemberAndUpdateClassicGroup`` (Kafka trunk 1eb7644, KAFKA-7909): forgotten, and the join
        barrier no longer waits for it."""
        return s._replace(group=cg.expire_pending(s.group, member_id)), ("pending_member_expired",)

    def _expire_offsets(self, s: GroupState) -> Result:
        """``offsets.retention.minutes`` (KIP-211, ``OffsetMetadataManager.cleanupExpiredOffsets``, Kafka 4.0): a
        classic group's offsets expire only once it has been Empty that long.  Ghost: only then is an acknowledged
        offset forgotten (``committed_offsets_never_regress``); offsets deleted while the group has members
        (KAFKA-13636: expired during a rebalance) are a regression, whatever path deletes them."""
        empty = s.group.state == cg.EMPTY
        ghost = s.ghost._replace(max_committed=()) if empty else s.ghost  # no branch: only an Empty group expires
        if self.flags.expiry_deletes_group:  # no branch: expiry_deletes_group=False is a weakened variant only
            ghost = ghost._replace(incarnations=(*ghost.incarnations, s.group.next_member))
        group = cg.expire_offsets(s.group, TOPIC, self.flags.expiry_deletes_group)
        return s._replace(group=group, ghost=ghost), ("offsets:expired",)

    def _compact(self, s: GroupState) -> Result:
        group = s.group._replace(log=olog.compact(s.group.log))
        # the witness names a pass that removed superseded records (a pass over a clean log proves nothing)
        event = "log:compacted" if group.log != s.group.log else "log:compaction_removed_nothing"
        return s._replace(group=group, compactions=s.compactions + 1), (event,)

    def _flush(self, s: GroupState) -> Result:
        return s._replace(group=cg.flush(s.group)), ("log:flushed",)

    # -- faults -------------------------------------------------------------------------------------

    def _lose_heartbeats(self, s: GroupState, i: int) -> Result:
        c = s.consumers[i]
        return s._replace(group=cg.remove_member(s.group, c.member_id)), ("session_expired:zombie",)

    def _crash(self, s: GroupState, i: int) -> Result:
        return self._put(s, i, cc.fresh(up=False)), ("consumer_crashed",)

    def _poll_timeout(self, s: GroupState, i: int) -> Result:
        """``max.poll.interval.ms`` expired: ``maybeLeaveGroup`` sends LeaveGroup for a dynamic member only (a static
        member, KIP-345, stays until its session expires or its process rejoins) and resets the generation and
        member id (``resetGenerationOnLeaveGroup``); the partitions are lost."""
        c = s.consumers[i]
        if not self.instances[i] or not self.flags.static_member_stays_on_close:
            s = s._replace(group=cg.remove_member(s.group, c.member_id))
        c = cc.lose_partitions(c)._replace(member_id="", generation=cc.NO_GENERATION, state=cc.UNJOINED)
        return self._put(s, i, c), ("poll_timeout:left_group",)

    @staticmethod
    def _stable_on_close(c: Consumer) -> bool:
        """``generationIfStable() != null`` when ``c`` closes: a generation and a member id, no rebalance under way."""
        return c.generation >= 0 and bool(c.member_id) and c.state not in REBALANCING

    def _close_commits(self, c: Consumer) -> bool:
        """``c``'s ``close()`` sends an auto-commit of its positions (see :meth:`_leave`)."""
        return bool(c.uncommitted()) and self._stable_on_close(c) and self.flags.commit_on_revoke

    def _leave(self, s: GroupState, i: int, commits: bool = True) -> Result:
        """``KafkaConsumer.close()``: ``ConsumerCoordinator.close`` commits (``maybeAutoCommitOffsetsSync``), then
        ``AbstractCoordinator.close`` runs ``onLeavePrepare`` and ``maybeLeaveGroup`` (Kafka 4.0, trunk 1eb7644).

        The commit goes out only with a stable generation: ``sendOffsetCommitRequest`` takes ``generationIfStable()``,
        null unless the member is STABLE (a rejoin merely requested -- the model's UNJOINED with a generation -- is
        still STABLE there).  During a rebalance -- JoinGroup sent (PREPARING_REBALANCE, the model's JOINING) or
        answered with SyncGroup to come (COMPLETING_REBALANCE, AWAITING_SYNC) -- it fails in the client with
        RebalanceInProgressException, which ``maybeAutoCommitOffsetsSync`` logs and swallows.  ``onLeavePrepare``
        then revokes the partitions (``onPartitionsRevoked``) only outside a rebalance with a generation; during
        one (``rebalanceInProgress()``), or without a generation, it *loses* them (``onPartitionsLost``): the next
        owner resumes at the last committed offset and may re-read what this consumer had fetched since."""
        c = s.consumers[i]
        events: list[str] = []
        stable = self._stable_on_close(c)
        if self._close_commits(c) and commits:
            s, error = self._commit(s, c, c.uncommitted(), i)  # maybeAutoCommitOffsetsSync on close()
            events.append(f"commit:{_outcome(error)}")
        if c.owned:
            s = self._note_handover(s, c, c.owned, "close")
            events.append("revoked:close" if stable else "lost:close")
        # close(): maybeLeaveGroup sends LeaveGroup for a dynamic member only (KIP-345); static_member_stays_on_close
        # =False is the weakened variant static_member_leaves_group
        if not self.instances[i] or not self.flags.static_member_stays_on_close:
            s = s._replace(group=cg.remove_member(s.group, c.member_id))
        return self._put(s, i, cc.fresh(up=False)), (*events, "closed:static" if self.instances[i] else "left_group")

    def _lose_join_response(self, s: GroupState, i: int) -> Result:
        """Fault: consumer ``i``'s JoinGroup response is lost (a broken connection, or the request timed out:
        ``AbstractCoordinator`` waits ``rebalance.timeout.ms`` plus 5 s for it) and the consumer sends the same
        JoinGroup again -- its member id (it has one since KIP-394's MEMBER_ID_REQUIRED round trip) and the
        subscription it sent, in the generation it sent it in, since it never learned the new one.  The
        coordinator must answer a known member whose metadata did not change with the current generation
        (``classicGroupJoinExistingMember``: in CompletingRebalance any member, in Stable a follower), not
        start a rebalance; the leader of a Stable group forces one."""
        c = s.consumers[i]
        sent = s.group.member(c.member_id)
        assert sent is not None  # AWAITING_SYNC at the current coordinator: the barrier answered it as a member
        c = c._replace(generation=sent.generation, state=cc.UNJOINED)
        s, events = self._join(self._put(s, i, c), i, (sent.owned, sent.generation))
        return s, ("join:response_lost", *events)

    def _late_commit(self, s: GroupState, i: int) -> Result:
        """A copy of consumer ``i``'s last OffsetCommit -- sent with the member id and generation it had then
        -- reaches the coordinator after the group moved to a new generation (``commitAsync`` delivered late,
        or the first attempt of a ``commitSync`` that timed out and was retried).  The coordinator must
        fence it (``ClassicGroup.validateOffsetCommit``: UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION, the
        KAFKA-2555 fix): the partitions may have a new owner whose commits it would overwrite.  Its
        response reaches the consumer (a ``commitAsync``'s callback; a timed-out ``commitSync`` attempt's
        would not, its connection is closed) at once, and ``OffsetCommitResponseHandler``
        (:meth:`_commit_reaction`) judges it against the identity the consumer has *now*: a fencing error
        sent with an identity it has left only raises RebalanceInProgressException while its JoinGroup is
        out (KAFKA-9823), and otherwise resets it."""
        c = s.consumers[i]
        member, generation, offsets = c.sent
        c = c._replace(sent=("", cc.NO_GENERATION, ()))
        stale = c._replace(member_id=member, generation=generation, positions=offsets, committed=())
        s, error = self._commit(s, stale, tuple(p for p, _ in offsets), i, False)  # sent earlier, when it was stable
        after = self._commit_reaction(c, error, (member, generation))
        ignored = error != Errors.NONE and after == c
        events = (f"late_commit:{_outcome(error)}",
                  *(("late_commit_response:ignored",) if ignored else ()),
                  *((f"late_commit_response:{after.state}",) if after != c else ()))
        return self._put(s, i, after), events

    def _moved_coordinator_commit(self, s: GroupState, i: int) -> Result:
        """Fault: consumer ``i`` sends an OffsetCommit -- a Stable member's commit of its positions, or (eager, asked
        to rejoin) ``onJoinPrepare``'s auto-commit -- and the ``__consumer_offsets`` leader moves before the
        coordinator handles it: a new coordinator loads the group (:meth:`_failover`) and the request is answered
        NOT_COORDINATOR.  ``OffsetCommitResponseHandler`` marks the coordinator unknown (FindCoordinator again); the
        error is retriable, so ``ConsumerCoordinator.onJoinPrepare`` (Kafka 4.0, trunk 1eb7644: "keep retrying the
        offset commit when it failed with a retriable exception") returns false -- nothing revoked, no JoinGroup --
        and commits again, then revokes, once the coordinator is found.  ``join_prepare_retries_commit=False`` is the
        weakened variant join_prepare_skips_failed_commit: the partitions are revoked with their positions
        uncommitted."""
        c = s.consumers[i]
        s, events = self._failover(s)
        after = self._commit_reaction(c, Errors.NOT_COORDINATOR, (c.member_id, c.generation))
        out = [*events, "commit:NOT_COORDINATOR"]
        if c.state == cc.UNJOINED:  # onJoinPrepare's auto-commit failed: it returns false
            out.append("join_prepare:commit_retried")
        if c.state == cc.UNJOINED and not self.cooperative and not self.flags.join_prepare_retries_commit:  # no branch
            s = self._note_handover(s, c, c.owned, "onJoinPrepare")  # weakened variant join_prepare_skips_failed_commit
            after = cc.lose_partitions(after)
        return self._put(s, i, after), tuple(out)

    def _moved_coordinator_close(self, s: GroupState, i: int) -> Result:
        """Fault (two budgets: ``moved_coordinator_commit`` and ``leave``): consumer ``i`` closes and the
        ``__consumer_offsets`` leader moves while ``close()``'s auto-commit is in flight -- a new coordinator loads the
        group (:meth:`_failover`) and the OffsetCommit is answered NOT_COORDINATOR.

        Kafka 4.0 (trunk 1eb7644, ``ConsumerCoordinator.close``): ``maybeAutoCommitOffsetsSync(timer)`` --
        ``commitOffsetsSync`` marks the coordinator unknown, finds the new one and sends the commit again, with the
        member id and generation it has, until it succeeds or the close timeout expires; only then does
        ``AbstractCoordinator.close`` run ``onLeavePrepare`` (``onPartitionsRevoked``) and ``maybeLeaveGroup``.  The
        partitions' next owner resumes where this consumer stopped (``revoked_partitions_committed``).
        ``close_commit_retried=False`` is the weakened variant close_commit_not_retried (KAFKA-7540, fixed in 3.2 by
        commit 3a8f6b17a6a, PR #11898: ``close`` sent the auto-commit with ``maybeAutoCommitOffsetsAsync``, whose
        retriable failure is never retried -- the consumer revoked its partitions and left with their positions
        uncommitted, and their next owner processed those records again)."""
        s, events = self._failover(s)
        k = _GROUP_FAULT_INDEX["leave"]
        s = s._replace(faults_used=_at(s.faults_used, k, s.faults_used[k] + 1))
        s = self._put(s, i, s.consumers[i]._replace(coordinator=s.group.epoch))  # ensureCoordinatorReady
        retried = self.flags.close_commit_retried
        s, closed = self._leave(s, i, commits=retried)
        return s, ("fault:leave", *events, "close:commit_NOT_COORDINATOR",
                   "close:commit_retried" if retried else "close:commit_dropped", *closed)

    def _standalone_commit(self, s: GroupState, instance: str) -> Result:
        """Fault (a hostile client): an OffsetCommit from outside group management reaches the group -- generation -1,
        no member id -- resetting every partition to offset 0: ``kafka-consumer-groups --reset-offsets
        --to-earliest`` (``Admin.alterConsumerGroupOffsets``), or a consumer that uses ``assign()`` with this
        ``group.id`` and commits (KAFKA-14201: with a ``group.instance.id`` configured, ``instance``, which the Java
        consumer sent until 3.3).  Kafka 4.0 (``ClassicGroup.validateOffsetCommit``, trunk 1eb7644): accepted when the
        group is Empty whatever member id and instance id it carries ("the request comes from either the admin client
        or a consumer which does not use the group management facility"); otherwise the member checks answer it
        (UNKNOWN_MEMBER_ID: no member has an empty id, nor that instance id) -- an active group's offsets are never
        overwritten from outside.  Judged by ``commits_fenced_exactly``; an accepted reset is an acknowledged commit
        (``committed_offsets_never_regress`` counts from it), and the group's next member resumes there
        (``new_owner_resumes_at_committed_offset``).  ``standalone_commit_in_empty_group=False`` is the weakened
        variant standalone_commit_member_checked (KAFKA-14201's coordinator before its fix, 706adc39f6a)."""
        g = s.group
        error = cg.validate_offset_commit(g, "", cc.NO_GENERATION, self.flags.offset_commit_generation_check,
                                          self.flags.offset_commit_stale_generation_check, instance,
                                          self.flags.standalone_commit_in_empty_group)
        holder = g.static_member(instance)
        note = misfenced("OffsetCommit", "", False, cc.NO_GENERATION, g.generation, g.state, error, instance,
                         None if holder is None else holder.member_id)
        if note:  # unreachable: ghost observer of a violation (commits_fenced_exactly)
            s = s._replace(ghost=s.ghost._replace(misfenced=(*s.ghost.misfenced, note)))
        events = (f"standalone_commit:{_outcome(error)}", *(("standalone_commit:with_instance",) if instance else ()))
        if error != Errors.NONE:
            return s, events
        partitions = range(self.topo.partitions + s.added_partitions)
        reset = tuple((p, 0) for p in partitions)
        group = cg.commit_offsets(s.group, TOPIC, reset, self.flags.offset_commit_waits_for_log)
        high = dict(s.ghost.max_committed)
        if g.state == cg.EMPTY:  # ghost observer: only an Empty group's reset is Kafka's (else a regression)
            high.update(reset)  # an acknowledged reset of an inactive group: the offsets count from here
        return s._replace(group=group, ghost=s.ghost._replace(max_committed=tuple(sorted(high.items())))), events

    def _group_append_fails(self, s: GroupState, i: int, storage_error: str, scala: bool) -> Result:
        """Fault: the coordinator's write of the group metadata to ``__consumer_offsets`` that consumer ``i``'s request
        waits for fails with ``storage_error`` and the request is answered its translation by a Kafka 4.0 or
        (``scala``) a 2.x-3.9 coordinator (:func:`aerr.group_append_answer`, one of :data:`APPEND_ERRORS`).  Kafka 4.0
        (trunk 1eb7644, ``GroupMetadataManager``): the leader's SyncGroup in CompletingRebalance --
        ``resetAndPropagateAssignmentWithError`` then ``maybePrepareRebalanceOrCompleteJoin``
        (:func:`cg.fail_assignment_append`): the group rebalances, a
        follower's SyncGroup is then answered REBALANCE_IN_PROGRESS (in Kafka a follower parked before the leader's
        SyncGroup gets ``error`` too; the model steps followers after the leader); a static member's new process
        replacing the old one in Stable -- the replacement is reverted (``replaceStaticMember`` back to the old member
        id) and the JoinGroup answered ``error`` with no member id.  The client (``AbstractCoordinator``'s
        JoinGroup/SyncGroupResponseHandler, Kafka 4.0): COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR mark the coordinator
        unknown, REBALANCE_IN_PROGRESS (named in the JoinGroup handler since KAFKA-10870, PR #9792, Kafka 2.8) is
        retried; all three keep member id, generation and partitions and send the JoinGroup again."""
        error = aerr.group_append_answer(storage_error, scala, self.flags.append_replication_errors_mapped)
        c = s.consumers[i]._replace(stalled=False)
        events: tuple[str, ...]
        if c.state == cc.AWAITING_SYNC:
            group = cg.fail_assignment_append(s.group)
            c = self._sync_error_reaction(c, error)
            after, events = self._put(s._replace(group=group), i, c), ("append:assignment_failed", f"sync:{error}")
        else:
            c = cc.on_join_response_error(c, error, self.flags.rebalance_in_progress_rejoins,
                                          self.flags.join_rebalance_in_progress_retried)
            after, events = self._put(s, i, c), ("append:failed", f"join:{error}", "static:replacement_reverted")
        return after, self._append_failure_witnesses(s, i, after, events)

    def _append_failure_witnesses(self, before: GroupState, i: int, after: GroupState,
                                  events: tuple[str, ...]) -> tuple[str, ...]:
        """The witnesses of the group-metadata append failures' partners are the failures' effects in Kafka's terms,
        not the handler's branch: ``append:assignment_failed`` -- the leader's SyncGroup in CompletingRebalance
        failed and the group went back to PreparingRebalance with no assignment kept
        (``resetAndPropagateAssignmentWithError``); ``static:replacement_reverted`` -- a static member's new process
        (no member id) joined a Stable group whose old process holds its ``group.instance.id``, and after the failure
        the group is still Stable with the old member id holding the instance and the new process without an id
        (``replaceStaticMember`` reverted, Kafka 4.0 trunk 1eb7644)."""
        c, g0, g1 = before.consumers[i], before.group, after.group
        keep = set(events)
        if not (c.state == cc.AWAITING_SYNC and c.member_id == g0.leader and g0.state == cg.COMPLETING_REBALANCE
                and g1.state == cg.PREPARING_REBALANCE and not any(m.assignment for m in g1.members)):
            keep.discard("append:assignment_failed")
        instance = self.instances[i]
        old, now = g0.static_member(instance), g1.static_member(instance)
        if not (instance and not c.member_id and g0.state == cg.STABLE and g1.state == cg.STABLE and old is not None
                and now is not None and now.member_id == old.member_id and not after.consumers[i].member_id):
            keep.discard("static:replacement_reverted")
        return tuple(e for e in events if e in keep)

    def _commit_append_fails(self, s: GroupState, i: int, storage_error: str, scala: bool) -> Result:
        """Fault: consumer ``i``'s OffsetCommit passes the member checks but the append of its offsets to
        ``__consumer_offsets`` fails (Kafka 4.0: the ``commit-offset`` write of
        ``GroupCoordinatorService.commitOffsets`` fails, the runtime reverts the offsets it had written into the
        timeline, and ``CoordinatorOperationExceptionHelper.handleOperationException`` answers NOT_ENOUGH_REPLICAS /
        REQUEST_TIMED_OUT COORDINATOR_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER NOT_COORDINATOR). Nothing is committed or
        cached; the consumer's ``OffsetCommitResponseHandler`` marks the coordinator unknown and keeps its member id,
        generation, partitions and positions -- the positions stay uncommitted and are committed again.  The fault draws
        the storage error; :func:`aerr.commit_append_answer` translates it."""
        error = aerr.commit_append_answer(storage_error, scala, self.flags.append_replication_errors_mapped)
        c = s.consumers[i]
        return self._put(s, i, self._commit_reaction(c, error, (c.member_id, c.generation))), (
            "append:offsets_failed", f"commit:{error}")

    def _stall_sync(self, s: GroupState, i: int) -> Result:
        """Fault (a hostile timing): consumer ``i`` got its JoinGroup answer but its SyncGroup is held up past
        ``rebalance.timeout.ms`` -- a leader whose assignor blocks, an application thread stuck before the SyncGroup
        -- while its heartbeat thread, which runs in COMPLETING_REBALANCE since KAFKA-10134 (Kafka 2.7), keeps its
        session alive: no session timeout removes it (KAFKA-12890's member).  It sends the SyncGroup once the group
        no longer waits for it (:meth:`_stalled`)."""
        return self._put(s, i, s.consumers[i]._replace(stalled=True)), ("sync:stalled",)

    def _expire_pending_sync(self, s: GroupState) -> Result:
        """The pending-sync timer (a timing step: ``rebalance.timeout.ms`` after the join barrier lifted) finds a
        member whose SyncGroup has not arrived (:func:`cg.expire_pending_sync`, KAFKA-12890): it is removed and the
        group rebalances.  Members whose consumer waits in AWAITING_SYNC unstalled have sent their SyncGroup in Kafka's
        time (a follower's is parked until the leader's) and are kept."""
        synced = tuple(self._member_of(s, i) for i, c in enumerate(s.consumers)
                       if c.up and c.state == cc.AWAITING_SYNC and not c.stalled)
        group = cg.expire_pending_sync(s.group, synced)
        removed = [m for m in s.group.members if group.member(m.member_id) is None]
        # the witness of pending_sync_expired is the timer's effect, not its firing: a member whose SyncGroup never
        # arrived (its consumer stalled, waited for) is gone and the group rebalances
        late = [m for m in removed if self._member_of(s, m.client) == m.member_id
                and self._stalled(s, s.consumers[m.client])]
        effect = ("sync:pending_expired",) if late and group.state in (cg.PREPARING_REBALANCE, cg.EMPTY) else ()
        return s._replace(group=group), (*effect, *(f"sync:pending_removed:{m.member_id}" for m in removed))

    def _early_commit(self, s: GroupState, i: int) -> Result:
        """Fault (a hostile client): consumer ``i``, between its JoinGroup answer and its SyncGroup answer, commits
        the positions of the partitions it still owns (cooperative) with the generation the JoinGroup answer
        brought -- a client without the Java consumer's ``generationIfStable()`` guard (kafka-python, librdkafka).
        The coordinator answers REBALANCE_IN_PROGRESS while the group is CompletingRebalance, after the member and
        generation checks (``ClassicGroup.validateOffsetCommit``, Kafka 4.0; the order KAFKA-8487 fixed), and
        accepts it once the leader's SyncGroup made the group Stable.  The answer goes through
        ``OffsetCommitResponseHandler``: REBALANCE_IN_PROGRESS is ``requestRejoin``, never a generation reset
        (KAFKA-8487)."""
        c = s.consumers[i]
        s, error = self._commit(s, c, c.uncommitted(), i, False)  # a client without the guard
        after = self._commit_reaction(c, error, (c.member_id, c.generation))
        return self._put(s, i, after), (f"early_commit:{_outcome(error)}",)

    def _lose_member_id_response(self, s: GroupState, i: int) -> Result:
        """Fault: consumer ``i``'s first JoinGroup (v4+, no member id) reaches the coordinator, which answers
        MEMBER_ID_REQUIRED and keeps the new id pending (KIP-394), but the answer is lost (a disconnect, or the
        request timed out): the consumer still has no member id and sends JoinGroup without one again, so the
        group holds an orphan pending id -- which the join barrier waits for until its session timeout expires it
        (KAFKA-7610 / KAFKA-7909; librdkafka's double handshake).  The consumer is unchanged."""
        c = s.consumers[i]
        s, _ = self._join(s, i)
        return self._put(s, i, c), ("join:member_id_response_lost",)

    def _create_partitions(self, s: GroupState) -> Result:
        """Fault: a partition is added to the subscribed topic (``kafka-topics --alter``, CreatePartitions).

        Only the leader notices (``ConsumerCoordinator.rejoinNeededOrPending``, Kafka 4.0 trunk 1eb7644: the
        assignment snapshot it took in ``onLeaderElected`` no longer matches the metadata) and rejoins with an
        unchanged subscription; the coordinator must rebalance for it -- a Stable group's leader's JoinGroup always
        forces one (``classicGroupJoinExistingMember``: "this allows the leader to trigger rebalances for changes
        affecting assignment which do not affect the member metadata") -- or the new partition is never assigned."""
        s = s._replace(added_partitions=s.added_partitions + 1)
        events: tuple[str, ...] = ("topic:partition_added",)
        for i, c in enumerate(s.consumers):
            if c.up and c.state == cc.STABLE and c.member_id == s.group.leader and s.group.member(c.member_id):
                s = self._put(s, i, c._replace(state=cc.UNJOINED))
                events = (*events, "leader:metadata_changed")
        return s, events

    def _failover(self, s: GroupState) -> Result:
        g = s.group
        group = cg.load_group(g.log, g.epoch + 1, g.next_member, g.group_id, self.flags.load_restores_subscriptions)
        meta = olog.load(g.log, g.group_id).metadata
        emptied = meta is not None and not meta.members  # the witness: a group record with no member is loaded
        return s._replace(group=group), ("coordinator:loaded", *(("coordinator:loaded_empty",) if emptied else ()))

    _HANDLERS: ClassVar[dict[str, Callable[..., Result]]] = {}

    # -- codec and display ---------------------------------------------------------------------------

    def action_to_json(self, action: Action) -> dict[str, Any]:
        """``{"kind": ..., <arg>: <value>}``."""
        return codec.action_to_json(action, GROUP_ACTION_ARGS)

    def action_from_json(self, data: Any) -> Action:  # input: decodes a trace file (keos replay)
        """Decode an action; raises :class:`ModelError` on malformed input."""
        values = codec.action_from_json(data, GROUP_ACTION_ARGS).args
        for n, v in zip(GROUP_ACTION_ARGS[data["kind"]], values):
            ok = (isinstance(v, str) if n in ("member", "storage_error", "instance", "failure", "client")
                  else type(v) is bool if n == "scala" else (type(v) is int and v >= 0))
            if not ok:
                raise ModelError(f"action {data['kind']}: bad {n} {v!r}")
        return Action(data["kind"], values)

    def format_action(self, action: Action) -> str:
        names = GROUP_ACTION_ARGS.get(action.kind, ())
        parts = [f"{n}={'c' if n == 'consumer' else ''}{v}" for n, v in zip(names, action.args, strict=False)]
        return f"{action.kind}({', '.join(parts)})"

    def state_to_json(self, state: GroupState) -> dict[str, Any]:
        out = codec.to_json(state)
        assert isinstance(out, dict)
        return out

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.name,
            **self._scenario_info,
            "variant": self.variant.name,
            "flags": self.flags.to_json(),
            "topology": self.topo.to_json(),
            "faults": self.config.faults.to_json(),
            "group_id": GROUP_ID,
            "offsets_partition": olog.partition_for(GROUP_ID),
            "protocol": "cooperative" if self.cooperative else "eager",
        }


GroupSystem._HANDLERS.update(
    {
        "FindCoordinator": GroupSystem._find_coordinator,
        "Start": GroupSystem._start,
        "JoinGroup": GroupSystem._join,
        "JoinPrepare": GroupSystem._join_prepare,
        "CompleteJoin": GroupSystem._complete_join,
        "SyncGroup": GroupSystem._sync_group,
        "Heartbeat": GroupSystem._heartbeat,
        "Poll": GroupSystem._poll,
        "Commit": GroupSystem._commit_step,
        "ExpireSession": GroupSystem._expire_session,
        "ExpireOffsets": GroupSystem._expire_offsets,
        "Compact": GroupSystem._compact,
        "FlushOffsets": GroupSystem._flush,
        "LoseHeartbeats": GroupSystem._lose_heartbeats,
        "CrashConsumer": GroupSystem._crash,
        "PollTimeout": GroupSystem._poll_timeout,
        "LeaveGroup": GroupSystem._leave,
        "CoordinatorFailover": GroupSystem._failover,
        "LateCommit": GroupSystem._late_commit,
        "StaleJoinGroup": GroupSystem._stale_join,
        "LoseJoinResponse": GroupSystem._lose_join_response,
        "CreatePartitions": GroupSystem._create_partitions,
        "LateHeartbeat": GroupSystem._late_heartbeat,
        "DelaySyncResponse": GroupSystem._delay_sync_response,
        "SyncResponse": GroupSystem._sync_response,
        "LoseMemberIdResponse": GroupSystem._lose_member_id_response,
        "RebalanceTimeout": GroupSystem._rebalance_timeout,
        "ExpirePending": GroupSystem._expire_pending,
        "StaleSessionExpiry": GroupSystem._stale_session_expiry,
        "MovedCoordinatorCommit": GroupSystem._moved_coordinator_commit,
        "MovedCoordinatorClose": GroupSystem._moved_coordinator_close,
        "EarlyCommit": GroupSystem._early_commit,
        "StallSync": GroupSystem._stall_sync,
        "GroupAppendFails": GroupSystem._group_append_fails,
        "CommitAppendFails": GroupSystem._commit_append_fails,
        "StandaloneCommit": GroupSystem._standalone_commit,
        "OffsetFetchFails": GroupSystem._offset_fetch_fails,
        "ExpirePendingSync": GroupSystem._expire_pending_sync,
    }
)
