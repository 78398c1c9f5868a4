"""The group coordinator's classic group: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit.

The classic rebalance protocol as Kafka 4.0's ``group-coordinator`` implements it
(``classic/ClassicGroup.java``, ``classic/ClassicGroupState.java`` and the ``classicGroup*``
handlers of ``GroupMetadataManager.java``), for one group whose members subscribe to one topic:

* **States** (:data:`VALID_PREVIOUS_STATES`, ``ClassicGroupState``): ``Empty`` → (a member joins)
  ``PreparingRebalance`` → (every member has rejoined, or the rebalance timeout removed the rest)
  ``CompletingRebalance`` → (the leader's SyncGroup brings the assignment) ``Stable``; a join, a
  leave or an expired session in Stable/CompletingRebalance goes back to PreparingRebalance;
  the last member leaving empties the group (a new generation with no members).
* **JoinGroup** — a member without a member id gets one.  For JoinGroup v0-v3 it joins at once; from v4
  (KIP-394, ``JoinGroupRequest.requiresKnownMemberId``) a dynamic member is answered MEMBER_ID_REQUIRED with
  its new id, which the group keeps as a *pending* member (``ClassicGroup.addPendingMember``) until the member
  joins again with it (then it is admitted like a new member) or its session timeout expires
  (:func:`expire_pending`); the join barrier waits for pending members too (``hasAllMembersJoined``).  Pending
  members are not persisted: a new coordinator knows none.  A member id the group neither holds nor has
  pending is answered UNKNOWN_MEMBER_ID.  The join *barrier* is the :func:`complete_join` step: it bumps the
  generation, keeps the leader if it rejoined or else elects the first member (Kafka picks the
  first key of a hash map — "essentially random", as the book puts it), and answers every
  waiting member.  A known member rejoining with unchanged metadata is answered at once with the
  current generation, without a rebalance: in CompletingRebalance any member, in Stable any but the
  leader (whose JoinGroup forces a rebalance).
* **SyncGroup** — the leader's request carries the assignment its assignor computed; the
  coordinator stores it, writes the group metadata record to ``__consumer_offsets``
  (:mod:`~keos.model.coordinator.group.offsets_log`) and moves to Stable.  A follower's SyncGroup
  is parked until then (here: not enabled).  Errors: UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION,
  REBALANCE_IN_PROGRESS.
* **Pending sync** (KAFKA-12890, ``pendingSyncMembers``) — the join barrier lists every member as pending sync; its
  SyncGroup takes it off; ``rebalance.timeout.ms`` later the timer removes the members still listed and rebalances
  (:func:`expire_pending_sync`), so a member that heartbeats but never syncs cannot hold the group in
  CompletingRebalance.  A rebalance cancels the timer.
* **Heartbeat** — UNKNOWN_MEMBER_ID (member gone, e.g. its session expired), ILLEGAL_GENERATION,
  REBALANCE_IN_PROGRESS (how members learn a rebalance started); NONE otherwise (a successful
  heartbeat changes nothing, so the model does not take it).
* **OffsetCommit** — ``ClassicGroup.validateOffsetCommit`` (:data:`OFFSET_COMMIT_CHECKS`): Dead →
  COORDINATOR_NOT_AVAILABLE, unknown member → UNKNOWN_MEMBER_ID, wrong generation →
  ILLEGAL_GENERATION, CompletingRebalance → REBALANCE_IN_PROGRESS.  The member and generation
  checks are the *generation fencing* that stops a member the group has moved past (a zombie whose
  session expired) from overwriting the new owner's offsets; the ``offset_commit_generation_check``
  switch removes them.  An accepted commit appends one offset commit record per partition and
  updates the cache in the same step (the append is acknowledged before the response).
* **Failover** — :func:`load_group`: a new coordinator replays the log; the group comes back
  Stable with the last written generation's members and assignments (or Empty), its offsets as
  committed.

* **Static membership** (KIP-345, ``group.instance.id``) — a member may carry an instance id; the group maps
  each instance id to one member id (``ClassicGroup.staticMemberId``).  A JoinGroup without a member id whose
  instance id the group knows is a restarted (or duplicated) process of that member: the coordinator *replaces*
  the old member id with a new one (``replaceStaticMember``), keeping its assignment and leadership, and in a
  Stable group answers it at once with the current generation and writes the group's metadata record --
  no rebalance (``updateStaticMemberThenRebalanceOrCompleteJoin``); in CompletingRebalance it rebalances, in
  PreparingRebalance the new member id simply joins.  Every later request of the replaced member id that
  carries the instance id is answered FENCED_INSTANCE_ID (``ClassicGroup.validateMember``), which is fatal to
  the old process: two processes with one instance id cannot both stay in the group.

Simplifications: one topic, ``session.timeout.ms`` / ``rebalance.timeout.ms`` are actions, not
clocks; the KIP-848 consumer protocol is not modelled.
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.codec import record
from keos.model.coordinator.group import offsets_log as olog
from keos.model.protocol.errors import MEMBER_ID_REQUIRED, Errors

__all__ = [
    "COMPLETING_REBALANCE",
    "DEAD",
    "EMPTY",
    "OFFSET_COMMIT_CHECKS",
    "PREPARING_REBALANCE",
    "STABLE",
    "VALID_PREVIOUS_STATES",
    "ClassicGroup",
    "GroupMember",
]

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

VALID_PREVIOUS_STATES: dict[str, tuple[str, ...]] = {
    EMPTY: (PREPARING_REBALANCE,),
    PREPARING_REBALANCE: (STABLE, COMPLETING_REBALANCE, EMPTY),
    COMPLETING_REBALANCE: (PREPARING_REBALANCE,),
    STABLE: (COMPLETING_REBALANCE,),
    DEAD: (STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD),
}
"""``ClassicGroupState.addValidPreviousStates``: the data every transition is checked against."""

OFFSET_COMMIT_CHECKS: tuple[tuple[str, str, bool], ...] = (  # no mutate: docs, read by tests
    ("group is Dead", Errors.COORDINATOR_NOT_AVAILABLE, False),  # no mutate: docs, read by tests
    ("member unknown", Errors.UNKNOWN_MEMBER_ID, True),  # no mutate: docs, read by tests
    ("generation differs from the group's", Errors.ILLEGAL_GENERATION, True),  # no mutate: docs, read by tests
    ("group is CompletingRebalance", Errors.REBALANCE_IN_PROGRESS, False),  # no mutate: docs, read by tests
)
"""``ClassicGroup.validateOffsetCommit`` in Kafka's order: (check, error, part of generation fencing)."""


@record
class GroupMember(NamedTuple):
    """``ClassicGroupMember``: id, the client process it belongs to, its protocol metadata (the
    partitions it reported owning, KIP-429, and the generation it owned them in, KIP-792), whether it
    rejoined in this rebalance, its assignment."""

    member_id: str
    client: int
    owned: tuple[int, ...]
    joined: bool
    assignment: tuple[int, ...]
    generation: int = -1  # ``ConsumerProtocolSubscription.generationId`` (v2+, KIP-792); -1: none
    instance: str = ""  # ``group.instance.id`` (KIP-345); "": a dynamic member


@record
class ClassicGroup(NamedTuple):
    """The coordinator's view of the group plus its ``__consumer_offsets`` partition."""

    state: str
    generation: int
    protocol: str
    leader: str
    members: tuple[GroupMember, ...]
    offsets: tuple[tuple[int, int], ...]  # (partition, committed offset), the coordinator's cache
    next_member: int
    log: tuple[olog.OffsetsRecord, ...]
    epoch: int  # the coordinator's epoch: bumped by every failover
    group_id: str = "consumerGroupId"
    unflushed: tuple[olog.OffsetsRecord, ...] = ()  # acknowledged but not yet in the log (weakened variant only)
    #: member ids handed out with MEMBER_ID_REQUIRED whose JoinGroup has not come back (``pendingJoinMembers``, KIP-394)
    pending: tuple[str, ...] = ()
    #: the members' metadata the leader's JoinGroup response carried when the join barrier lifted (member id,
    #: ownedPartitions, generation: ``JoinGroupResponseData.members``, ``GroupMetadataManager.completeClassicGroupJoin``
    #: sends it to the leader only): the leader's assignor runs on this list (``ConsumerCoordinator.onLeaderElected``),
    #: not on the group as it is when the leader's SyncGroup arrives -- a member id that replaced another since
    #: (KAFKA-9801: a static member's new process in CompletingRebalance) is in no assignment of that generation
    joined_members: tuple[tuple[str, tuple[int, ...], int], ...] = ()
    #: the members of this generation whose SyncGroup has not arrived since the join barrier lifted
    #: (``ClassicGroup.pendingSyncMembers``, KAFKA-12890): the pending-sync timer removes them
    #: (:func:`expire_pending_sync`)
    pending_sync: tuple[str, ...] = ()
    #: member ids the group no longer holds whose session (heartbeat) timer is still scheduled: a static member's
    #: replaced member id (``updateStaticMemberThenRebalanceOrCompleteJoin``, Kafka 4.0, trunk 1eb7644: "Heartbeat of
    #: old member id will expire without effect since the group no longer contains that member id") -- the timer
    #: fires ``session.timeout.ms`` later and reaches :func:`expire_member_heartbeat` with an id the group has replaced
    stale_timers: tuple[str, ...] = ()

    def member(self, member_id: str) -> GroupMember | None:
        for m in self.members:
            if m.member_id == member_id:
                return m
        return None

    def static_member(self, instance: str) -> GroupMember | None:
        """``ClassicGroup.staticMemberId``: the member holding ``group.instance.id`` ``instance``."""
        for m in self.members:
            if instance and m.instance == instance:
                return m
        return None


def validate_member(group: ClassicGroup, member_id: str, instance: str = "") -> str:
    """``ClassicGroup.validateMember`` (Kafka 4.0, trunk 1eb7644): a request carrying an instance id the group does
    not map is UNKNOWN_MEMBER_ID, one the group maps to another member id FENCED_INSTANCE_ID (the process was
    replaced, KIP-345); then a member id the group does not hold is UNKNOWN_MEMBER_ID."""
    if instance:
        holder = group.static_member(instance)
        if holder is None:
            return Errors.UNKNOWN_MEMBER_ID
        if holder.member_id != member_id:
            return Errors.FENCED_INSTANCE_ID
    if group.member(member_id) is None:
        return Errors.UNKNOWN_MEMBER_ID
    return Errors.NONE


def empty_group(group_id: str = "consumerGroupId") -> ClassicGroup:
    return ClassicGroup(EMPTY, 0, "", "", (), (), 0, (), 0, group_id)


def transition(group: ClassicGroup, target: str) -> ClassicGroup:
    """Move to ``target``; Kafka throws IllegalStateException for a transition not in the table.

    ``ClassicGroup.transitionTo`` / ``assertValidTransition`` (Kafka 4.0, trunk 1eb7644, ``classic/ClassicGroup.java``)
    check the current state against ``target``'s valid previous states with no exception for staying put: no state
    but Dead lists itself, so a handler that "moves" a group to the state it is in is a bug Kafka reports."""
    if group.state not in VALID_PREVIOUS_STATES[target]:  # no branch: handlers keep the table
        raise AssertionError(f"illegal group transition {group.state} -> {target}")
    if target != COMPLETING_REBALANCE:  # the leader's member list matters only until its SyncGroup
        group = group._replace(joined_members=())
    if target not in (COMPLETING_REBALANCE, STABLE):  # prepareRebalance -> removeSyncExpiration (KAFKA-12890)
        group = group._replace(pending_sync=())
    return group._replace(state=target)


def _with_members(group: ClassicGroup, members: list[GroupMember]) -> ClassicGroup:
    return group._replace(members=tuple(sorted(members)))


def prepare_rebalance(group: ClassicGroup, joined: str = "") -> ClassicGroup:
    """``prepareRebalance``: every member must rejoin (``joined`` has just done so)."""
    members = [m._replace(joined=m.member_id == joined) for m in group.members]
    return transition(_with_members(group, members), PREPARING_REBALANCE)


def _metadata_record(group: ClassicGroup) -> olog.OffsetsRecord:
    """``GroupCoordinatorRecordHelpers.newGroupMetadataRecord`` (Kafka trunk 1eb7644): it throws
    IllegalStateException for a group with members but no selected protocol (a rebalance that completed without
    choosing one); members the leader assigned nothing were given an empty assignment before (``classicGroupSync``)."""
    if group.members and not group.protocol:  # unreachable: Kafka's IllegalStateException (a model contract)
        raise AssertionError(f"group metadata of {len(group.members)} member(s) with no protocol")
    return olog.group_metadata_record(group.group_id, olog.GroupMetadataValue(
        group.generation, group.protocol, group.leader,
        tuple((m.member_id, m.assignment) for m in group.members),
        tuple((m.member_id, m.owned, m.generation) for m in group.members),
        tuple((m.member_id, m.instance) for m in group.members if m.instance)))


def remove_member(group: ClassicGroup, member_id: str) -> ClassicGroup:
    """LeaveGroup or an expired session: drop the member and rebalance (or empty the group)."""
    members = [m for m in group.members if m.member_id != member_id]
    group = _with_members(group, members)._replace(pending_sync=tuple(m for m in group.pending_sync if m != member_id))
    if group.state in (STABLE, COMPLETING_REBALANCE):
        group = prepare_rebalance(group)
    if not members and group.state == PREPARING_REBALANCE:
        # the rebalance completes with nobody: a new, empty generation, written to the log
        group = transition(group._replace(generation=group.generation + 1, leader="", protocol=""), EMPTY)
        group = group._replace(log=(*group.log, _metadata_record(group)))
    return group


class JoinResult(NamedTuple):
    group: ClassicGroup
    error: str
    member_id: str
    immediate: bool  # answered at once with the current generation (no barrier)


def join_group(group: ClassicGroup, client: int, member_id: str, owned: tuple[int, ...],
               generation: int = -1, answer_unchanged: bool = True, instance: str = "",
               static_keeps_generation: bool = True, updates_metadata: bool = True,
               requires_member_id: bool = False, clears_pending: bool = True,
               static_completing_rebalances: bool = True) -> JoinResult:
    """``classicGroupJoin`` for an unknown (``member_id == ""``) or known member.

    ``owned`` and ``generation`` are the member's subscription metadata (``ConsumerProtocolSubscription``:
    ``ownedPartitions``, and since KIP-792, Kafka 3.4, the ``generationId`` they were owned in --
    ``ConsumerCoordinator.metadata()`` sends the consumer's own generation).  The coordinator treats
    the metadata as opaque bytes: "unchanged" compares both.  ``answer_unchanged=False`` (the weakened
    variant rejoin_always_rebalances) rebalances for an unchanged known member too.  ``instance`` is the
    member's ``group.instance.id`` (KIP-345, "" for a dynamic member): see :func:`_replace_static_member`;
    ``static_keeps_generation=False`` (the weakened variant static_rejoin_rebalances) rebalances a Stable group
    for a known instance's new process as for a new member.  ``updates_metadata=False`` (the weakened variant
    rejoin_keeps_old_subscription) admits a known member's JoinGroup without storing the subscription it carries
    (``updateMemberAndRebalance`` / ``ClassicGroupMember.setSupportedProtocols`` skipped).

    ``requires_member_id`` is JoinGroup v4+ (KIP-394): a new dynamic member is answered MEMBER_ID_REQUIRED and
    kept pending (``classicGroupJoinNewDynamicMember``); its JoinGroup with that id is admitted as a new member
    (``classicGroupJoinExistingMember``: "a rejoining pending member will be accepted", Kafka trunk 1eb7644).
    ``clears_pending=False`` (the weakened variant pending_member_stays_pending) admits a pending member without
    removing it from the pending members (``ClassicGroup.add`` does).  ``static_completing_rebalances=False`` (the
    weakened variant static_rejoin_completing_no_rebalance, KAFKA-9801) keeps the generation for a known instance's
    new process in CompletingRebalance too."""
    if group.state == DEAD:  # unreachable: no group is ever Dead in the models (unloaded or deleted)
        return JoinResult(group, Errors.COORDINATOR_NOT_AVAILABLE, member_id, False)
    if member_id == "" or member_id in group.pending:
        new_id = member_id
        if member_id == "":
            new_id = f"c{client}-{group.next_member}"
            group = group._replace(next_member=group.next_member + 1)
            old = group.static_member(instance)
            if old is not None:
                return _replace_static_member(group, old, new_id, client, owned, generation, static_keeps_generation,
                                              static_completing_rebalances)
            if requires_member_id and not instance:
                return JoinResult(group._replace(pending=(*group.pending, new_id)), MEMBER_ID_REQUIRED,
                                  new_id, False)
        member = GroupMember(new_id, client, owned, True, (), generation, instance)
        pending = tuple(m for m in group.pending if m != new_id or not clears_pending)
        group = _with_members(group, [*group.members, member])._replace(pending=pending)
        if group.state != PREPARING_REBALANCE:
            group = prepare_rebalance(group, new_id)
        return JoinResult(group, Errors.NONE, new_id, False)
    error = validate_member(group, member_id, instance)
    current = group.member(member_id)
    if error != Errors.NONE or current is None:
        return JoinResult(group, error, member_id, False)
    updated = current._replace(owned=owned, joined=True, generation=generation) if updates_metadata else (
        current._replace(joined=True))  # no branch: updates_metadata=False is the weakened variant only
    unchanged = answer_unchanged and (current.owned, current.generation) == (owned, generation)
    group = _with_members(group, [updated if m.member_id == member_id else m for m in group.members])
    if group.state == PREPARING_REBALANCE:
        return JoinResult(group, Errors.NONE, member_id, False)
    # ``classicGroupJoinExistingMember``: in CompletingRebalance any member (the leader too) rejoining with
    # unchanged metadata gets the current generation (it may have lost its JoinGroup response); in Stable
    # the leader's JoinGroup forces a rebalance.  Found by ``keos differential`` (trunk 1eb7644).
    if unchanged and (group.state == COMPLETING_REBALANCE or (group.state == STABLE and member_id != group.leader)):
        return JoinResult(group, Errors.NONE, member_id, True)
    return JoinResult(prepare_rebalance(group, member_id), Errors.NONE, member_id, False)


def _replace_static_member(group: ClassicGroup, old: GroupMember, member_id: str, client: int, owned: tuple[int, ...],
                           generation: int, keeps_generation: bool, completing_rebalances: bool = True) -> JoinResult:
    """``updateStaticMemberThenRebalanceOrCompleteJoin`` (``GroupMetadataManager``, Kafka 4.0, trunk 1eb7644): the
    instance's new process takes the old member's place under ``member_id`` (``replaceStaticMember``: same
    assignment, the leadership if it led), with its own subscription.  Stable: the selected protocol cannot change
    here, so no rebalance -- the group's metadata record is rewritten with the new member id and the JoinGroup is
    answered with the current generation; CompletingRebalance: rebalance (the leader may have assigned to the old
    member id); PreparingRebalance: the new member id has joined and waits at the barrier."""
    new = old._replace(member_id=member_id, client=client, owned=owned, generation=generation,
                       joined=group.state == PREPARING_REBALANCE)
    leader = member_id if group.leader == old.member_id else group.leader
    group = _with_members(group, [new if m.member_id == old.member_id else m for m in group.members])
    # the old member id's heartbeat timer is not cancelled: it will fire for an id the group no longer holds
    group = group._replace(leader=leader, stale_timers=(*group.stale_timers, old.member_id))
    stays = group.state == STABLE or (group.state == COMPLETING_REBALANCE and not completing_rebalances)
    if stays and keeps_generation:
        group = group._replace(log=(*group.log, _metadata_record(group)))
        return JoinResult(group, Errors.NONE, member_id, True)
    if group.state == PREPARING_REBALANCE:
        return JoinResult(group, Errors.NONE, member_id, False)
    return JoinResult(prepare_rebalance(group, member_id), Errors.NONE, member_id, False)


def expire_member_heartbeat(group: ClassicGroup, member_id: str, checks_member: bool = True) -> ClassicGroup:
    """A member id's session (heartbeat) timer fires: ``GroupMetadataManager.expireClassicGroupMemberHeartbeat``
    (Kafka 4.0, trunk 1eb7644; the Scala ``GroupCoordinator.onExpireHeartbeat`` before it, KAFKA-7196 / KAFKA-8896).

    The timer is keyed by member id and may outlive the member: Kafka's handler checks, in order, that the group is
    not Dead (unloaded or deleted: nothing to do), whether the id is a KIP-394 pending member (forgotten,
    :func:`expire_pending`), whether the group still holds the id at all -- a replaced static member's old id, a
    member already removed: nothing to do, no rebalance -- and only then removes the member whose heartbeats stopped
    (:func:`remove_member`: the group rebalances).  The fired timer is gone either way.  ``checks_member=False`` is
    the weakened variant no_kafka_7196_fix: the handler acts on an id the group no longer holds (the Scala
    coordinator's purgatory kept a removed member's heartbeat, KAFKA-7196: a needless rebalance)."""
    group = group._replace(stale_timers=tuple(m for m in group.stale_timers if m != member_id))
    if group.state == DEAD:  # unreachable: no group is ever Dead in the models (unloaded or deleted)
        return group
    if member_id in group.pending:  # unreachable: a stale timer is a replaced member's, never a pending id's
        return expire_pending(group, member_id)
    if group.member(member_id) is None and checks_member:  # no branch: checks_member=False is no_kafka_7196_fix
        return group
    return remove_member(group, member_id)  # unreachable: a stale timer names an id the group has replaced


def join_complete_ready(group: ClassicGroup) -> bool:
    """``ClassicGroup.hasAllMembersJoined`` in PreparingRebalance: every member rejoined and no pending member
    (KIP-394) is still to come."""
    return group.state == PREPARING_REBALANCE and bool(group.members) and all(
        m.joined for m in group.members) and not group.pending


def expire_pending(group: ClassicGroup, member_id: str) -> ClassicGroup:
    """A pending member's session timeout expired before it joined again with its id
    (``expireClassicGroupMemberHeartbeat`` -> ``removePendingMemberAndUpdateClassicGroup``, Kafka trunk 1eb7644):
    it is forgotten, and the join barrier may now lift (KAFKA-7909)."""
    return group._replace(pending=tuple(m for m in group.pending if m != member_id))


def complete_join(group: ClassicGroup, protocol: str) -> ClassicGroup:
    """The join barrier lifts: new generation, leader kept or elected, CompletingRebalance."""
    leader = group.leader if group.member(group.leader) is not None else group.members[0].member_id
    members = [m._replace(joined=False, assignment=()) for m in group.members]
    joined = tuple((m.member_id, m.owned, m.generation) for m in members)
    group = _with_members(group, members)._replace(generation=group.generation + 1, leader=leader, protocol=protocol,
                                                   joined_members=joined,
                                                   pending_sync=tuple(m.member_id for m in members))
    return transition(group, COMPLETING_REBALANCE)


def complete_join_on_timeout(group: ClassicGroup, protocol: str, advances_generation: bool = True,
                             keeps_static: bool = True, elects_joined: bool = True) -> ClassicGroup:
    """``rebalance.timeout.ms`` expires in PreparingRebalance: the delayed join completes without the members that
    did not rejoin (``GroupMetadataManager.completeClassicGroupJoin``, Kafka 4.0, trunk 1eb7644).

    * every *dynamic* member that has not rejoined is removed (``notYetRejoinedMembers`` filtered on
      ``!isStaticMember()``); a static member (KIP-345) stays -- only its session timeout or a new process of its
      ``group.instance.id`` removes it -- and is part of the next generation although it has not rejoined;
    * no member left: ``initNextGeneration`` with nobody -- a new, empty generation, written to the log;
    * members left but none rejoined (only static members remain): nothing more happens -- Kafka reschedules the
      delayed join (``maybeElectNewJoinedLeader`` fails) and waits for their sessions or their rejoins;
    * otherwise the leader is kept if it rejoined, else a member that rejoined is elected
      (``maybeElectNewJoinedLeader``), and ``initNextGeneration`` bumps the generation: CompletingRebalance.

    Pending members (KIP-394) are not touched: their own session timeout removes them (:func:`expire_pending`).
    ``advances_generation=False`` is the weakened variant rebalance_timeout_keeps_generation (the members that
    did rejoin are answered with the generation the removed ones still hold); ``keeps_static=False`` the weakened
    variant rebalance_timeout_removes_static (every member that did not rejoin is removed, as before KIP-345);
    ``elects_joined=False`` the weakened variant rebalance_timeout_keeps_unjoined_leader (KAFKA-8220)."""
    members = [m for m in group.members if m.joined or (m.instance and keeps_static)]
    group = _with_members(group, members)
    if not members:
        group = transition(group._replace(generation=group.generation + 1, leader="", protocol=""), EMPTY)
        return group._replace(log=(*group.log, _metadata_record(group)))
    joined = [m.member_id for m in members if m.joined]
    if not joined:
        return group
    leader = group.leader if group.leader in joined or (group.member(group.leader) and not elects_joined) else joined[0]
    done = complete_join(group._replace(leader=leader), protocol)
    if not advances_generation:  # no branch: advances_generation=False is the weakened variant only
        done = done._replace(generation=group.generation)
    return done


def join_timeout_changes(group: ClassicGroup, keeps_static: bool = True) -> bool:
    """Whether :func:`complete_join_on_timeout` would change ``group``: PreparingRebalance with a dynamic member
    that has not rejoined, or with members that rejoined while another member (or a KIP-394 pending member) has
    not -- the join barrier (:func:`join_complete_ready`) would otherwise still wait."""
    if group.state != PREPARING_REBALANCE or join_complete_ready(group):
        return False
    laggards = [m for m in group.members if not m.joined]
    return any(not m.instance or not keeps_static for m in laggards) or (any(m.joined for m in group.members) and bool(
        laggards or group.pending))


def _member_errors(group: ClassicGroup, member_id: str, generation: int, instance: str = "") -> str:
    error = validate_member(group, member_id, instance)
    if error != Errors.NONE:
        return error
    if generation != group.generation:
        return Errors.ILLEGAL_GENERATION
    return Errors.NONE


class SyncResult(NamedTuple):
    group: ClassicGroup
    error: str
    assignment: tuple[int, ...]


def sync_group(group: ClassicGroup, member_id: str, generation: int,
               assignment: dict[str, tuple[int, ...]] | None, instance: str = "") -> SyncResult | None:
    """``classicGroupSync``; ``None`` for a follower whose request is parked (no assignment yet)."""
    error = _member_errors(group, member_id, generation, instance)
    if error != Errors.NONE:
        return SyncResult(group, error, ())
    if group.state == PREPARING_REBALANCE:
        return SyncResult(group, Errors.REBALANCE_IN_PROGRESS, ())
    # ``removePendingSyncMember``: the member's SyncGroup arrived (a follower's is parked until the leader's)
    group = group._replace(pending_sync=tuple(m for m in group.pending_sync if m != member_id))
    if group.state == COMPLETING_REBALANCE:
        if member_id != group.leader or assignment is None:
            return None
        members = [m._replace(assignment=assignment.get(m.member_id, ())) for m in group.members]
        group = transition(_with_members(group, members), STABLE)
        group = group._replace(log=(*group.log, _metadata_record(group)))
    mine = group.member(member_id)
    assert mine is not None
    return SyncResult(group, Errors.NONE, mine.assignment)


def fail_assignment_append(group: ClassicGroup) -> ClassicGroup:
    """The write of the leader's assignment (``newGroupMetadataRecord``) failed:
    ``resetAndPropagateAssignmentWithError`` clears every member's assignment and
    ``maybePrepareRebalanceOrCompleteJoin`` starts the next rebalance
    (``GroupMetadataManager.classicGroupSyncToCompletingRebalance``'s append callback, Kafka 4.0, trunk 1eb7644; the
    Scala ``GroupCoordinator.doSyncGroup``'s ``storeGroup`` callback, 2.x-3.9).  Nothing is appended to the log."""
    members = [m._replace(assignment=()) for m in group.members]
    return prepare_rebalance(_with_members(group, members))


def expire_pending_sync(group: ClassicGroup, synced: tuple[str, ...] = ()) -> ClassicGroup:
    """The pending-sync timer fires (``GroupMetadataManager.expirePendingSync``, Kafka 4.0, trunk 1eb7644; KAFKA-12890,
    Kafka 3.0, ``DelayedSync``): ``rebalance.timeout.ms`` after the join barrier lifted, the members of the generation
    whose SyncGroup has not arrived (``pendingSyncMembers``) are removed and the group rebalances
    (``prepareRebalance``: a follower's parked SyncGroup is answered REBALANCE_IN_PROGRESS).  ``synced`` are members
    whose SyncGroup the model has not stepped yet although Kafka's would have arrived long before the timer (a
    follower parked until the leader's SyncGroup: the model offers it only then); they are not removed.  Without the
    timer (before KAFKA-12890 the heartbeats that KAFKA-10134 allowed in CompletingRebalance kept such a member's
    session alive), a member that heartbeats but never syncs holds the group in CompletingRebalance for ever."""
    if group.state not in (COMPLETING_REBALANCE, STABLE):  # unreachable: the timer is cancelled on leaving them
        return group
    for member_id in [m for m in group.pending_sync if m not in synced]:
        group = remove_member(group, member_id)
    return group._replace(pending_sync=tuple(m for m in group.pending_sync if m not in synced))


def heartbeat(group: ClassicGroup, member_id: str, generation: int, instance: str = "") -> str:
    """``classicGroupHeartbeat``'s error (NONE: the session is simply refreshed)."""
    error = _member_errors(group, member_id, generation, instance)
    if error != Errors.NONE:
        return error
    return Errors.REBALANCE_IN_PROGRESS if group.state == PREPARING_REBALANCE else Errors.NONE


def validate_offset_commit(group: ClassicGroup, member_id: str, generation: int, fencing: bool,
                           check_generation: bool = True, instance: str = "", standalone_in_empty: bool = True) -> str:
    """:data:`OFFSET_COMMIT_CHECKS` in order; ``fencing=False`` skips the member/generation checks,
    ``check_generation=False`` the generation check alone (the pre-KAFKA-2555 coordinator).

    A commit without group metadata (generation -1: the admin client's ``alterConsumerGroupOffsets``, a consumer
    using ``assign()``) is accepted by an Empty group whatever member id and instance id it carries (KAFKA-14201,
    Kafka 3.4, commit 706adc39f6a); one that carries neither member id nor instance id is refused UNKNOWN_MEMBER_ID
    by a group with members ("offset commits are only accepted when the group is empty").
    ``standalone_in_empty=False`` is the weakened variant standalone_commit_member_checked (before KAFKA-14201: a
    commit carrying an instance id went to the member checks even in an Empty group)."""
    if group.state == DEAD:  # unreachable: no group is ever Dead in the models (unloaded or deleted)
        return Errors.COORDINATOR_NOT_AVAILABLE
    if generation < 0 and group.state == EMPTY and standalone_in_empty:
        return Errors.NONE
    if fencing:  # no branch: fencing=False is the weakened variant no_offset_commit_generation_check
        if generation >= 0 or member_id or instance:
            error = validate_member(group, member_id, instance)
            if error != Errors.NONE:
                return error
            if check_generation and generation != group.generation:
                return Errors.ILLEGAL_GENERATION
        elif group.state != EMPTY:  # no metadata at all (a v0 request, the admin client): an active group refuses it
            return Errors.UNKNOWN_MEMBER_ID
    # the Java client commits only as a STABLE member (generationIfStable); one that commits with the generation its
    # JoinGroup response brought before the group is Stable is answered REBALANCE_IN_PROGRESS (groups' EarlyCommit)
    if group.state == COMPLETING_REBALANCE:
        return Errors.REBALANCE_IN_PROGRESS
    return Errors.NONE


def validate_txn_offset_commit(group: ClassicGroup, member_id: str, generation: int, fencing: bool = True) -> str:
    """``ClassicGroup.validateOffsetCommit(..., isTransactional=true)`` for a TxnOffsetCommit (KIP-447).

    Kafka 4.0 (trunk ``1eb7644349cb``) ``classic/ClassicGroup.java``, reached from
    ``OffsetMetadataManager.validateTransactionalOffsetCommit``: Dead → COORDINATOR_NOT_AVAILABLE;
    generation < 0 in an Empty group → accepted (a producer without group metadata); a request
    that carries a generation or member id → UNKNOWN_MEMBER_ID for a member the group does not
    know, ILLEGAL_GENERATION for another generation; unlike a plain OffsetCommit it is *not*
    refused while the group is CompletingRebalance (the member got the new generation in its
    JoinGroup response).  Static membership (``group.instance.id``, FENCED_INSTANCE_ID) is not
    modelled.  ``fencing=False`` (a weakened variant: the pre-KIP-447 TxnOffsetCommit v0-v2 that
    carried no group metadata) skips the member and generation checks.
    """
    if group.state == DEAD:  # unreachable: no group is ever Dead in the models (unloaded or deleted)
        return Errors.COORDINATOR_NOT_AVAILABLE
    if generation < 0 and group.state == EMPTY:  # unreachable: owners send their generation (>= 1)
        return Errors.NONE
    if fencing and (generation >= 0 or member_id):  # no branch: members send both (KIP-447)
        if group.member(member_id) is None:
            return Errors.UNKNOWN_MEMBER_ID
        if generation != group.generation:
            return Errors.ILLEGAL_GENERATION
    return Errors.NONE


def commit_offsets(group: ClassicGroup, topic: str, offsets: tuple[tuple[int, int], ...],
                   wait_for_log: bool = True) -> ClassicGroup:
    """Append one offset commit record per partition and update the cache (``OffsetMetadataManager``).

    Kafka's coordinator runtime applies the records and answers the OffsetCommit only once they are
    committed to the ``__consumer_offsets`` partition (``CoordinatorRuntime``: the response waits
    for the high watermark).  ``wait_for_log=False`` (a weakened variant) answers first: the records
    sit in ``unflushed`` until :func:`flush`, and a failover before that loses them."""
    cache = dict(group.offsets)
    records = []
    for partition, offset in offsets:
        cache[partition] = offset
        records.append(olog.offset_commit_record(group.group_id, topic, partition, offset))
    if wait_for_log:  # no branch: wait_for_log=False is the weakened variant offset_commit_acked_before_log
        return group._replace(offsets=tuple(sorted(cache.items())), log=(*group.log, *records))
    return group._replace(offsets=tuple(sorted(cache.items())), unflushed=(*group.unflushed, *records))


def flush(group: ClassicGroup) -> ClassicGroup:  # unreachable: weakened variant offset_commit_acked_before_log only
    """The acknowledged-but-unwritten records reach the log (weakened variant only)."""
    return group._replace(log=(*group.log, *group.unflushed), unflushed=())


def expire_offsets(group: ClassicGroup, topic: str, deletes_group: bool = True) -> ClassicGroup:
    """``cleanupGroupMetadata`` for an Empty group past ``offsets.retention.minutes`` (KIP-211):
    a tombstone per committed offset, and the group's own tombstone.

    The group is then deleted (``GroupCoordinatorShard.cleanupGroupMetadata`` -> ``GroupMetadataManager
    .maybeDeleteGroup``; the coordinator replays its own tombstone, ``replay(GroupMetadataKey, null)`` ->
    ``removeGroup``, Kafka trunk 1eb7644): the next JoinGroup creates a new group, which starts again at generation
    0 -- as a coordinator loading the partition finds no group either.  Member ids stay unique (the counter goes
    on: Kafka's are random), and KIP-394 pending member ids are kept (not modelled as deleted with the group), as
    are the timers of replaced member ids (they fire against the new group, which does not hold them either).
    ``deletes_group=False`` is the weakened variant expired_group_keeps_generation."""
    tombstones = [olog.offset_commit_record(group.group_id, topic, p, None) for p, _ in group.offsets]
    tombstones.append(olog.group_metadata_record(group.group_id, None))
    if not deletes_group:  # no branch: deletes_group=False is the weakened variant expired_group_keeps_generation
        return group._replace(offsets=(), log=(*group.log, *tombstones))
    fresh = empty_group(group.group_id)._replace(next_member=group.next_member, epoch=group.epoch,
                                                 pending=group.pending, unflushed=group.unflushed,
                                                 stale_timers=group.stale_timers)
    return fresh._replace(log=(*group.log, *tombstones))


def load_group(log: tuple[olog.OffsetsRecord, ...], epoch: int, next_member: int,
               group_id: str = "consumerGroupId", restore_subscriptions: bool = True) -> ClassicGroup:
    """A new coordinator replays the group's partition (failover): each member comes back with its assignment
    and the subscription metadata of its last JoinGroup (``GroupMetadataManager.replay``, Kafka 4.0, trunk
    1eb7644: ``MemberMetadata.subscription`` becomes the member's supported protocol).  ``restore_subscriptions=False``
    (the weakened variant load_drops_subscriptions) loads every member with no subscription metadata."""
    loaded = olog.load(log, group_id)
    meta = loaded.metadata
    if meta is None or not meta.members:
        generation = meta.generation if meta is not None else 0
        return ClassicGroup(EMPTY, generation, "", "", (), loaded.offsets, next_member, log, epoch, group_id)
    subscription = {mid: (owned, generation) for mid, owned, generation in meta.subscriptions
                    if restore_subscriptions}
    instances = dict(meta.instances)
    members = []
    for mid, asg in meta.members:
        owned, generation = subscription.get(mid, ((), -1))  # -1: no generation (the variant only)
        client = int(mid[1:mid.index("-")])
        members.append(GroupMember(mid, client, owned, False, asg, generation, instances.get(mid, "")))
    members.sort()
    return ClassicGroup(STABLE, meta.generation, meta.protocol, meta.leader, tuple(members), loaded.offsets,
                        next_member, log, epoch, group_id)
