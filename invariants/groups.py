"""Invariants of the classic consumer-group protocol and ``__consumer_offsets``, over the groups model.

Sources: the book's chapter on consumer coordination (§7.2.2 the four phases, §7.3 the offsets
topic), Kafka 4.0 ``ClassicGroup.validateOffsetCommit`` (generation fencing),
``CooperativeStickyAssignor`` (KIP-429: revoke before reassign) and ``GroupCoordinatorShard``
replay (loading a group from its offsets partition).

* ``same_generation_owners_disjoint`` — two consumers that completed SyncGroup for the same
  generation never own the same partition (the assignor's exactly-once, end to end).
* ``no_partition_owned_twice`` — among the consumers the coordinator currently counts as members,
  no partition has two owners, even while a cooperative rebalance is in flight.  A consumer the
  group already removed (its session expired: a zombie) is not counted: in the classic protocol it
  can keep fetching until it hears of its removal, which is why commits are fenced; nor is a static member that
  ``rebalance.timeout.ms`` kept in the group without its rejoining (KIP-345), until it rejoins.
* ``committed_offsets_never_regress`` — the coordinator's committed offset of each partition is
  the highest one it ever acknowledged (since the offsets last expired): no commit moves it back
  and no failover loses one.
* ``commits_fenced_exactly`` — an OffsetCommit is answered UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION exactly
  for an unknown member / a known member of another generation (``ClassicGroup.validateOffsetCommit``).
* ``commits_sent_with_stable_generation`` — the Java consumer sends an OffsetCommit only with
  ``generationIfStable()`` (a member id, a generation, no rebalance under way), on every commit path.
* ``group_requests_fenced_exactly`` — the same member and generation checks for SyncGroup and Heartbeat
  (REBALANCE_IN_PROGRESS while the group is PreparingRebalance).
* ``offsets_cache_matches_log`` — replaying the group's ``__consumer_offsets`` partition (compacted
  or not) gives exactly the coordinator's cached offsets: what failover would load.
* ``group_metadata_matches_log`` — whenever the group is Stable or Empty, replaying ``__consumer_offsets``
  gives the group's generation, protocol, leader and members' assignments and subscriptions (what failover
  loads).
* ``revoked_partitions_committed`` — a member of the current generation that gives a partition up
  (eager revocation before JoinGroup, cooperative revocation after SyncGroup, close) has committed
  its position first: the next owner resumes exactly there.
* ``new_owner_resumes_at_committed_offset`` — a consumer that SyncGroup gives a partition starts fetching it
  at the group's committed offset (``auto.offset.reset=earliest`` with none): no record skipped, no committed
  one read again.
* ``coordinator_holds_subscription`` — an admitted JoinGroup leaves the coordinator holding the subscription
  metadata it carried (KIP-792: ownedPartitions and their generation).
* ``positions_within_log`` — no fetch position and no committed offset passes the log end offset.
* ``healthy_member_never_removed`` — the coordinator removes a member only for a reason Kafka has (session expired --
  judged from the consumer: down, failed, or heartbeating elsewhere or as another member id -- left, replaced by a new
  process of its static instance, a dynamic member not rejoined before ``rebalance.timeout.ms``, a failover's load);
  never a static member for a slow rejoin (KIP-345); a KIP-394 pending member id only by its own join, its session
  timeout or a failover.
* ``stable_members_rejoin_on_request`` — a running Stable member leaves Stable only on an error answer to its own
  Heartbeat/OffsetCommit, its own poll timeout, or (the leader) added partitions; never on a coordinator change.
* ``rebalance_has_cause`` — a rebalance starts only on a JoinGroup, a member's removal or a failed assignment
  write: never on a timer of a member id the group no longer holds (a replaced static member's), nor on a commit,
  heartbeat or load.
* ``no_needless_rebalance`` — a JoinGroup from a known member whose subscription did not change (a
  retry after a lost response) never starts a rebalance, but for the leader of a Stable group.
* ``rebalance_completes`` (eventually) — once faults stop the group settles: Stable, every running
  consumer a synced member of the current generation, every partition owned by exactly one of them.

Each ``always`` names ``sometimes`` partners proving its interesting states are reached.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from keos.invariants._common import no_findings, sometimes_event, sometimes_state
from keos.model.clients import consumer_coordinator as cc
from keos.model.coordinator.group import classic_group as cg
from keos.model.coordinator.group import offsets_log as olog
from keos.model.interface import Expectation, Property
from keos.model.systems.groups import GroupsConfig, GroupState, instance_ids

__all__ = ["group_properties", "settled"]


def _replaced(s: GroupState, c: cc.Consumer, instance: str) -> bool:
    """``c`` is a static member's process that a newer process of its ``group.instance.id`` replaced (KIP-345): the
    group maps the instance to another member id, so the coordinator fences ``c``'s next request
    (FENCED_INSTANCE_ID); until then it may still fetch what it owned -- as a zombie whose session expired can."""
    holder = s.group.static_member(instance) if instance else None
    return holder is not None and holder.member_id != c.member_id


def _incarnation(s: GroupState, member_id: str) -> int:
    """Which incarnation of the group issued ``member_id`` ("c<client>-<n>"): the deletions (offsets expiry) before
    the counter reached ``n``.  A deleted group's generations are counted again from 0 by the next one."""
    n = int(member_id.rsplit("-", 1)[1]) if "-" in member_id else 0
    return sum(1 for boundary in s.ghost.incarnations if boundary <= n)


def _stable_overlaps(s: GroupState, instances: tuple[str, ...] = ()) -> list[str]:
    problems: list[str] = []
    seen: dict[tuple[int, int, int], int] = {}
    for i, c in enumerate(s.consumers):
        if not c.up or c.state != cc.STABLE or c.generation < 0:
            continue
        if i < len(instances) and _replaced(s, c, instances[i]):
            continue
        life = _incarnation(s, c.member_id)
        for p in c.owned:
            other = seen.get((life, c.generation, p))
            if other is not None:
                problems.append(f"c{other} and c{i} both own t0p{p} in generation {c.generation}")
            seen[(life, c.generation, p)] = i
    return problems


def _member_overlaps(s: GroupState) -> list[str]:
    problems: list[str] = []
    owner: dict[int, int] = {}
    for i, c in enumerate(s.consumers):
        if not c.up or not c.member_id or s.group.member(c.member_id) is None:
            continue
        if c.member_id in s.ghost.kept_unjoined:
            # a static member the rebalance timeout kept without its rejoining (KIP-345): until it hears of the new
            # generation it may fetch what it owned, as a zombie whose session expired can
            continue
        for p in c.owned:
            if p in owner:
                problems.append(f"members c{owner[p]} and c{i} both own t0p{p} "
                                f"(generations {s.consumers[owner[p]].generation} and {c.generation})")
            owner[p] = i
    return problems


def _regressions(s: GroupState) -> list[str]:
    high = dict(s.ghost.max_committed)
    cache = dict(s.group.offsets)
    problems = []
    for p in sorted(set(high) | set(cache)):
        if cache.get(p) != high.get(p):
            problems.append(f"t0p{p}: committed offset is {cache.get(p)} but {high.get(p)} was acknowledged")
    return problems


def _replay(log: tuple[olog.OffsetsRecord, ...], group: str) -> tuple[olog.GroupMetadataValue | None, dict[int, int]]:
    """The judge's own reading of the group's ``__consumer_offsets`` partition, independent of the model's loader
    (:func:`~keos.model.coordinator.group.offsets_log.load`, which a defect may share with the state it rebuilds):
    a compacted topic's meaning -- per key the last record wins and a tombstone deletes the key (``GroupMetadataKey``
    and ``OffsetCommitKey``, ``GroupMetadataManager.replay`` / ``OffsetMetadataManager.replay``, Kafka trunk 1eb7644).
    Returns the group's metadata (None: no group) and its committed offsets."""
    latest: dict[tuple[str, str, int], olog.OffsetsRecord] = {}
    for rec in log:
        if rec.group == group:
            latest[rec.key] = rec
    meta = latest.pop((group, "", olog.GROUP_KEY), None)
    offsets = {rec.partition: rec.value for rec in latest.values() if isinstance(rec.value, int)}
    return (meta.value if meta is not None and isinstance(meta.value, olog.GroupMetadataValue) else None), offsets


def _log_mismatch(s: GroupState) -> list[str]:
    _, replayed = _replay(s.group.log, s.group.group_id)
    cached = dict(s.group.offsets)
    if replayed != cached:
        return [f"replaying __consumer_offsets gives {dict(sorted(replayed.items()))}, the coordinator has {cached}"]
    return []


def _metadata_mismatch(s: GroupState) -> list[str]:
    """At rest (Stable or Empty) the group's last GroupMetadata record must be the group: what failover loads."""
    g = s.group
    if g.state not in (cg.STABLE, cg.EMPTY):
        return []
    meta, _ = _replay(g.log, g.group_id)
    if g.state == cg.EMPTY:
        # no record (none written yet, or the group's tombstone): no group -- a new one starts at generation 0
        if (meta is None and g.generation == 0) or (meta is not None and not meta.members and
                                                     meta.generation == g.generation):
            return []
        return [f"the group is Empty at generation {g.generation} but replaying __consumer_offsets gives "
                f"{meta or 'no group (generation 0)'}"]
    held = olog.GroupMetadataValue(g.generation, g.protocol, g.leader,
                                   tuple((m.member_id, m.assignment) for m in g.members),
                                   tuple((m.member_id, m.owned, m.generation) for m in g.members),
                                   tuple((m.member_id, m.instance) for m in g.members if m.instance))
    if meta == held:
        return []
    return [f"the group is Stable as {held} but replaying __consumer_offsets gives {meta}"]


def _state_mismatch(s: GroupState) -> list[str]:
    """``ClassicGroupState``'s meaning, checked against the members: Empty is the state of a group with no member
    ("group has no more members, but lingers until all offsets have expired"), every other state has members; a
    group past the join barrier (CompletingRebalance, Stable) has a selected protocol and a leader among its members
    (``ClassicGroup.leaderId``, ``protocolName``, Kafka 4.0 trunk 1eb7644)."""
    g = s.group
    out: list[str] = []
    if (g.state == cg.EMPTY) != (not g.members):
        out.append(f"the group is {g.state} with {len(g.members)} member(s)")
    if g.state in (cg.COMPLETING_REBALANCE, cg.STABLE) and g.members:
        if g.member(g.leader) is None:
            out.append(f"the group is {g.state} but its leader {g.leader or '-'} is not a member")
        if not g.protocol:
            out.append(f"the group is {g.state} with no selected protocol")
    return out


def _fenced_owners(s: GroupState) -> list[str]:
    """Running consumers that hold no generation (never joined, fenced: UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION reset
    it, or left on a poll timeout) yet own partitions."""
    return [f"consumer {i} ({c.member_id or 'no member id'}) has no generation but owns {list(c.owned)}"
            for i, c in enumerate(s.consumers)
            if c.up and c.state != cc.FAILED and c.generation == cc.NO_GENERATION and c.owned]


def _beyond_log(s: GroupState, records: int) -> list[str]:
    out = [f"consumer {i} is at offset {o} of t0p{p}, whose log ends at {records}"
           for i, c in enumerate(s.consumers) for p, o in c.positions if o > records]
    out += [f"the group's committed offset of t0p{p} is {o}, the log ends at {records}"
            for p, o in s.group.offsets if o > records]
    return out


def _with_partners(props: list[Property], judges: tuple[str, ...], *partners: str) -> list[Property]:
    """``props`` with ``partners`` added to the ``sometimes`` partners of the judges named ``judges``: a judge
    holds only where the witnesses of the behaviour it judges fired."""
    return [replace(p, partners=(*p.partners, *partners)) if p.name in judges else p for p in props]


def group_properties(config: GroupsConfig) -> tuple[Property, ...]:
    """The consumer-group properties for a model with ``config``."""
    faults = config.faults
    topo = config.topology
    instances = instance_ids(topo)
    duplicated = {x for x in instances if x and instances.count(x) > 1}

    def _unhealthy_failures(s: GroupState) -> list[str]:
        # a process whose group.instance.id another process of the run also uses may be fenced (KIP-345): fatal --
        # but never while the group still maps the instance to it
        def fenced(i: int, c: cc.Consumer) -> bool:
            holder = s.group.static_member(instances[i])
            return instances[i] in duplicated and (holder is None or holder.member_id != c.member_id)

        return [f"consumer {i} ({c.member_id or 'no member id'}) failed" for i, c in enumerate(s.consumers)
                if c.state == cc.FAILED and not fenced(i, c)]
    props: list[Property] = [
        no_findings(
            name="same_generation_owners_disjoint",
            fact="No partition is owned by two consumers that completed SyncGroup for the same generation.",
            source="the book §7.2.2 (SYNC_GROUP distributes the leader's plan); ConsumerPartitionAssignor contract",
            catches="an assignor (or user assignor) that assigns a partition twice; a SyncGroup answered with "
            "another generation's assignment",
            findings=lambda s: _stable_overlaps(s, instances),
            partners=("assignment_received", "group_stable_with_two_members") if topo.consumers > 1
            else ("assignment_received",),
        ),
        Property(
            name="healthy_consumer_never_failed",
            expectation=Expectation.ALWAYS,
            fact="No consumer's poll() fails: the group requests of these runs answer only UNKNOWN_MEMBER_ID, "
            "ILLEGAL_GENERATION and REBALANCE_IN_PROGRESS, from which a member recovers by rejoining, and (a failed "
            "group-metadata write) COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR, retried after FindCoordinator; any "
            "other "
            "error is unexpected and ends the application's loop -- but FENCED_INSTANCE_ID, fatal by design, to a "
            "process whose group.instance.id a newer process took over (KIP-345).",
            source="AbstractCoordinator JoinGroup/SyncGroup/Heartbeat response handlers, ConsumerCoordinator."
            "OffsetCommitResponseHandler (Kafka 4.0, trunk 1eb7644)",
            catches="a coordinator that answers a healthy member an error its client cannot recover from; a "
            "client that treats a recoverable error as unexpected",
            predicate=lambda s: not _unhealthy_failures(s),
            partners=("assignment_received",),
            explain=lambda s: "; ".join(_unhealthy_failures(s)),
        ),
        no_findings(
            name="no_partition_owned_twice",
            fact="Among the consumers the coordinator counts as members, no partition has two owners, also while "
            "a (cooperative) rebalance is in flight.",
            source="KIP-429 (incremental cooperative rebalancing: revoke before reassign); "
            "CooperativeStickyAssignor.adjustAssignment",
            catches="a cooperative leader handing a partition to its new owner before the old owner revoked it",
            findings=_member_overlaps,
            partners=("assignment_received",),
        ),
        no_findings(
            name="committed_offsets_never_regress",
            fact="The committed offset of a partition is the highest offset the coordinator acknowledged for it "
            "since its offsets last expired: rebalances, zombies and coordinator failover never move it back "
            "or lose it.",
            source="ClassicGroup.validateOffsetCommit (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION); the book §7.3; "
            "GroupCoordinatorShard replay on failover",
            catches="an OffsetCommit accepted from a member the group moved past (no generation fencing)",
            findings=_regressions,
            partners=("offset_committed", "commit_fenced"),
        ),
        no_findings(
            name="commits_fenced_exactly",
            fact="An OffsetCommit is refused with UNKNOWN_MEMBER_ID exactly when its member id is not in the group, "
            "with ILLEGAL_GENERATION exactly when the member is known but its generation is not the group's, with "
            "REBALANCE_IN_PROGRESS when it is current but the group is CompletingRebalance, and accepted otherwise: "
            "a stale member never overwrites the new owner's offsets, a current member is never fenced.",
            source="ClassicGroup.validateOffsetCommit (Kafka 4.0, trunk 1eb7644; KAFKA-2555 generation fencing); "
            "OffsetMetadataManager.validateOffsetCommit",
            catches="a missing or misplaced member or generation check; a check answering the wrong error (the "
            "client resets its member id where it should only rejoin, or the reverse); a current member fenced",
            findings=lambda s: s.ghost.misfenced,
            partners=("offset_committed",),
        ),
        no_findings(
            name="commits_sent_with_stable_generation",
            fact="The Java consumer sends an OffsetCommit only while generationIfStable() is not null -- it has a "
            "member id and a generation and no rebalance is under way (no JoinGroup out, no SyncGroup answer "
            "awaited): on every commit path (commitSync/commitAsync, auto-commit, onJoinPrepare, "
            "onPartitionsRevoked, close()) in every group state; otherwise the commit fails in the client with "
            "RebalanceInProgressException (during a rebalance) or CommitFailedException (no generation) and no "
            "request leaves it.",
            source="ConsumerCoordinator.sendOffsetCommitRequest and maybeAutoCommitOffsetsSync, onLeavePrepare "
            "(Kafka 4.0, trunk 1eb7644); KIP-429 (cooperative members keep their partitions during a rebalance)",
            catches="a commit path that forgets the guard: a close() or revocation during a rebalance commits with the "
            "generation the rebalance is replacing, a commit without a generation reaches the coordinator",
            findings=lambda s: s.ghost.unguarded_commits,
            partners=("offset_committed",),
        ),
        no_findings(
            name="group_requests_fenced_exactly",
            fact="A SyncGroup or Heartbeat is answered UNKNOWN_MEMBER_ID exactly when its member id is not in the "
            "group, ILLEGAL_GENERATION exactly when the member is known but its generation is not the group's, "
            "REBALANCE_IN_PROGRESS when it is current but the group is PreparingRebalance, and NONE otherwise; a "
            "JoinGroup (also one parked at the join barrier) UNKNOWN_MEMBER_ID exactly when it carries a member id "
            "the group does not hold.",
            source="GroupMetadataManager.validateSyncGroup / classicGroupSyncToClassicGroup, "
            "validateClassicGroupHeartbeat / classicGroupHeartbeatToClassicGroup and classicGroupJoinExistingMember "
            "(Kafka 4.0, trunk 1eb7644)",
            catches="a member of another generation synced or kept alive (it takes an assignment of a generation "
            "the group left), a check answering the wrong error (the member resets its id where it should only "
            "rejoin), a current member fenced",
            findings=lambda s: s.ghost.misanswered,
            partners=("assignment_received",),
        ),
        no_findings(
            name="coordinator_holds_subscription",
            fact="After the coordinator admits a JoinGroup, it holds the subscription metadata that JoinGroup carried "
            "(ownedPartitions and the generation they were owned in): the leader's assignor and the next JoinGroup's "
            "'metadata unchanged' test judge the member's latest claim, never an older one.",
            source="GroupMetadataManager.classicGroupJoinNewMember / updateMemberAndRebalance, "
            "ClassicGroupMember.setSupportedProtocols (Kafka 4.0, trunk 1eb7644); KIP-792",
            catches="a rejoin whose new metadata is dropped or only partly stored: a stale ownership claim wins in "
            "the cooperative-sticky assignor, or every retried JoinGroup looks changed and restarts the rebalance",
            findings=lambda s: s.ghost.misrecorded,
            partners=("assignment_received",),
        ),
        Property(
            name="positions_within_log",
            expectation=Expectation.ALWAYS,
            fact="A consumer's fetch position and the group's committed offset of a partition never pass the "
            "partition's log end offset: a consumer advances only by consuming records that exist, and commits "
            "only positions it reached.",
            source="KafkaConsumer javadoc (offsets and consumer position: the position is the offset of the next "
            "record it will be given); Fetcher (a fetch past the log end is OFFSET_OUT_OF_RANGE)",
            catches="a poll that advances a partition it did not fetch, or past the end of the log; a commit of a "
            "position no record justifies (records skipped by the partition's next owner)",
            predicate=lambda s: not _beyond_log(s, topo.records),
            partners=("partition_consumed_to_end",) if topo.records else ("assignment_received",),
            explain=lambda s: "; ".join(_beyond_log(s, topo.records)),
        ),
        no_findings(
            name="group_state_matches_members",
            fact="The group's state agrees with its membership: Empty exactly when it has no member; "
            "CompletingRebalance and Stable with a selected protocol and a leader that is a member -- after "
            "every join, leave, expiry and coordinator load.",
            source="ClassicGroupState (Empty: no more members), ClassicGroup.transitionTo / leaderId / protocolName, "
            "GroupMetadataManager.replay (Kafka 4.0, trunk 1eb7644)",
            catches="a loaded or emptied group left Stable with no member (its offsets never expire, a JoinGroup "
            "'rebalances' a group nobody is in), a group Empty with members, a leader that left but still leads",
            findings=_state_mismatch,
            partners=("assignment_received", *(("empty_group_loaded",) if faults.coordinator_failover and (
                faults.leave or faults.crash or faults.lost_heartbeats or faults.poll_timeout) else ())),
        ),
        no_findings(
            name="fenced_consumer_owns_nothing",
            fact="A consumer without a generation -- fenced (its generation reset by UNKNOWN_MEMBER_ID or "
            "ILLEGAL_GENERATION from any group request), timed out of the group, or not yet joined -- owns no "
            "partition: it lost them (onPartitionsLost) before it rejoins, so it never consumes what the group may "
            "have given another member.",
            source="AbstractCoordinator.resetStateAndRejoin / resetGenerationOnResponseError, "
            "ConsumerCoordinator.onJoinPrepare (onPartitionsLost for a reset generation, KIP-429), maybeLeaveGroup "
            "(Kafka 4.0, trunk 1eb7644)",
            catches="a response handler, or a path the reaction judge does not see (a commit or join error, a late "
            "or duplicated response), that resets the generation but keeps the partitions: the consumer goes on "
            "fetching them while their new owner does, and claims them in its next JoinGroup",
            findings=_fenced_owners,
            partners=("assignment_received",),
        ),
        no_findings(
            name="stable_members_rejoin_on_request",
            fact="A running member of a Stable generation leaves Stable only for a reason Kafka's client has: an "
            "error answer to its own Heartbeat or OffsetCommit, its own poll timeout, or -- the leader only -- "
            "partitions added to a subscribed topic.  A coordinator change alone keeps its generation and "
            "assignment.",
            source="AbstractCoordinator (requestRejoin, resetGenerationOnResponseError, markCoordinatorUnknown, "
            "maybeLeaveGroup), ConsumerCoordinator.rejoinNeededOrPending (Kafka 4.0, trunk 1eb7644)",
            catches="a consumer that rejoins after FindCoordinator or on metadata it does not track (a follower), "
            "turning a coordinator failover or a topic change into a rebalance that stops consumption",
            findings=lambda s: s.ghost.unrequested_rejoins,
            partners=("assignment_received",),
        ),
        no_findings(
            name="coordinator_move_keeps_member",
            fact="A coordinator change is a retriable error, not a fencing: the consumer that finds the new "
            "coordinator keeps its member id, its generation, its partitions and their positions, and a JoinGroup "
            "or SyncGroup the old coordinator never answered is sent again -- the member stays in the rebalance "
            "until a SyncGroup succeeds.  Only the coordinator's own answers (UNKNOWN_MEMBER_ID, "
            "ILLEGAL_GENERATION) take a member's identity or partitions.",
            source="AbstractCoordinator.markCoordinatorUnknown / joinGroupIfNeeded (retriable failures: rejoin "
            "without resetStateAndRejoin, KAFKA-13214, PR #11231, Kafka 3.1) and SyncGroupResponseHandler "
            "(rejoinNeeded cleared only on a successful SyncGroup, KAFKA-5154, Kafka 0.11), Kafka 4.0 trunk 1eb7644",
            catches="a retriable JoinGroup or SyncGroup failure handled as a fencing (the member rejoins as a new "
            "member, leaving its old id in the group until its session expires; a cooperative member loses the "
            "partitions it kept through the rebalance without committing), or as the end of the rebalance (the "
            "member consumes the assignment onJoinPrepare revoked while the group gives it to another)",
            findings=lambda s: s.ghost.dropped_on_move,
            partners=("assignment_received",),
        ),
        no_findings(
            name="healthy_member_never_removed",
            fact="The coordinator removes a member only for a reason Kafka has: its session expired (its process is "
            "gone or failed, its heartbeats were lost, or they go to another coordinator or carry another member id -- "
            "judged from the consumer, not from the step's guard), it left the group (close, or its own poll "
            "timeout -- a dynamic member "
            "only: a static member sends no LeaveGroup), a new process of "
            "its group.instance.id replaced it, it is a dynamic member that did not rejoin before "
            "rebalance.timeout.ms, its SyncGroup did not arrive within rebalance.timeout.ms of the join barrier "
            "(KAFKA-12890), or a new coordinator loaded another membership.  A static member is never removed "
            "for a slow rejoin (KIP-345).  A KIP-394 pending member id is forgotten only when it joins with it, when "
            "its own session expires, or by a new coordinator.",
            source="GroupMetadataManager (expireClassicGroupMemberHeartbeat, classicGroupLeave, replaceStaticMember, "
            "removePendingMemberAndUpdateClassicGroup, ClassicGroup.add, expirePendingSync, "
            "completeClassicGroupJoin's notYetRejoinedMembers filtered on !isStaticMember), AbstractCoordinator."
            "maybeLeaveGroup (isDynamicMember), Kafka 4.0, trunk 1eb7644",
            catches="a handler that drops members it should keep: a session that expires although its member "
            "heartbeats (in CompletingRebalance, while its JoinGroup is parked, or at all), "
            "a static member removed by the rebalance timeout, "
            "a member removed by another's request, a join barrier or SyncGroup that loses members -- each takes a "
            "healthy consumer's partitions away and costs the group another rebalance; a pending member id dropped "
            "by another member's JoinGroup",
            findings=lambda s: s.ghost.unjust_removals,
            partners=("assignment_received",),
        ),
        no_findings(
            name="rebalance_has_cause",
            fact="The coordinator starts a rebalance only for a cause Kafka has: a JoinGroup (a new member, the "
            "leader's, a changed subscription), a member leaving or removed (session or pending-sync expiry, "
            "LeaveGroup, the rebalance timeout), or a failed write of the leader's assignment.  A timer that fires "
            "for a member id the group no longer holds (a static member's replaced id, whose session timer Kafka "
            "4.0 leaves scheduled), a commit, a heartbeat or a coordinator's load never does.",
            source="GroupMetadataManager.prepareRebalance's callers, expireClassicGroupMemberHeartbeat (the group "
            "must still hold the member id), updateStaticMemberThenRebalanceOrCompleteJoin (the old id's timer "
            "expires without effect), Kafka 4.0, trunk 1eb7644; KAFKA-7196, KAFKA-8896",
            catches="a timer handler that acts on a member id the group has replaced or removed (a needless "
            "rebalance for every static member's restart: each costs every member a rejoin and, eager, a "
            "revocation); any handler that rebalances a group whose membership did not change",
            findings=lambda s: s.ghost.causeless_rebalances,
            partners=("assignment_received",),
        ),
        no_findings(
            name="generation_leader_rejoined",
            fact="A join completes with a leader that rejoined for it: the coordinator keeps the old leader only if "
            "its JoinGroup is pending, else elects a member that rejoined -- the leader's JoinGroup response is the "
            "one that carries the members' subscriptions for the assignor.",
            source="GroupMetadataManager.completeClassicGroupJoin / ClassicGroup.maybeElectNewJoinedLeader (Kafka "
            "4.0, trunk 1eb7644; KAFKA-8220)",
            catches="a join completed around a leader that is not waiting for it (a static member kept by the "
            "rebalance timeout, a leader whose JoinGroup was lost): nobody runs the assignor, the group waits in "
            "CompletingRebalance until the leader's session expires, and then rebalances again",
            findings=lambda s: s.ghost.unjoined_leaders,
            partners=("assignment_received",),
        ),
        no_findings(
            name="consumers_react_as_kafka",
            fact="A consumer reacts to its SyncGroup, Heartbeat, OffsetCommit and JoinGroup answers as Kafka's "
            "response handlers do: NONE to a SyncGroup makes the assignment its own (same member id and generation); "
            "UNKNOWN_MEMBER_ID resets member id and generation and loses the partitions; ILLEGAL_GENERATION resets "
            "the generation and loses them; REBALANCE_IN_PROGRESS rejoins keeping all three; every other error fails "
            "the consumer.  A JoinGroup carries the identity the consumer has after onJoinPrepare's auto-commit was "
            "answered (a fenced commit resets it first), and an admitted JoinGroup keeps the member id it carried.",
            source="AbstractCoordinator.SyncGroupResponseHandler / HeartbeatResponseHandler / "
            "JoinGroupResponseHandler, ConsumerCoordinator.onJoinPrepare / OffsetCommitResponseHandler, "
            "resetGenerationOnResponseError, requestRejoin (Kafka 4.0, trunk 1eb7644)",
            catches="an error answer ignored (the member consumes an assignment the coordinator never gave it), a "
            "rejoin that keeps a fenced generation or partitions it lost, a healthy member failed or reset",
            findings=lambda s: s.ghost.misreacted,
            partners=("assignment_received",),
        ),
        no_findings(
            name="consumer_identity_issued",
            fact="A consumer takes a member id or a generation only from its coordinator's answer: after any step in "
            "which a consumer's identity changes other than by a reset, the coordinator holds its new member id (as "
            "a member, or a KIP-394 pending member), and a consumer that now syncs or consumes is at the group's "
            "generation -- a JoinGroup response carries what the group has just recorded -- and that generation has "
            "passed its join barrier: no JoinGroup is answered with a generation while the group is "
            "PreparingRebalance.  Conversely, a member id the coordinator creates (a member, or a KIP-394 pending "
            "member) reaches the consumer it was created for unless that answer was lost: no ghost member nobody "
            "knows (KAFKA-7610).",
            source="GroupMetadataManager.completeClassicGroupJoin / classicGroupJoinExistingMember / "
            "classicGroupJoinNewDynamicMember, AbstractCoordinator.JoinGroupResponseHandler (Kafka 4.0, trunk 1eb7644)",
            catches="a handler that answers the members from a group it does not store (the rebalance timeout or the "
            "join barrier computing the next generation and dropping it), or from an older copy of it: the members "
            "sync with a generation the coordinator never reached and are fenced, or consume an assignment nobody "
            "else agrees on; a JoinGroup answered before the join barrier lifts (a static member's new process or an "
            "unchanged member answered with the dissolving generation, which then syncs into a rebalance); a "
            "JoinGroup response whose member id the client drops (it rejoins as yet another new member forever)",
            findings=lambda s: s.ghost.unissued,
            partners=("assignment_received",),
        ),
        no_findings(
            name="offsets_cache_matches_log",
            fact="Replaying the group's __consumer_offsets partition, compacted or not, yields exactly the "
            "coordinator's committed offsets -- what a new coordinator loads on failover.",
            source="the book §7.3 (offset commit records, tombstones, compaction); GroupCoordinatorShard.replay",
            catches="a commit acknowledged but not appended; compaction dropping a live key's last value",
            findings=_log_mismatch,
            partners=("offset_committed",),
        ),
        no_findings(
            name="group_metadata_matches_log",
            fact="Whenever no rebalance is in flight (the group is Stable or Empty), replaying the group's "
            "__consumer_offsets partition yields the group as the coordinator holds it -- generation, protocol, "
            "leader, every member with its assignment and subscription -- or, for an Empty group, no member (or no "
            "group at all once its metadata expired): a coordinator failover restores exactly this group.",
            source="GroupMetadataManager.classicGroupSyncToClassicGroup (the GroupMetadata record appended when "
            "the leader's SyncGroup completes) and completeClassicGroupJoin (the record of a group that became "
            "Empty), GroupCoordinatorRecordHelpers.newGroupMetadataRecord (MemberMetadata.subscription) and "
            "GroupMetadataManager.replay (Kafka 4.0 trunk 1eb7644); GroupCoordinatorShard.replay",
            catches="a rebalance completed or a group emptied without its GroupMetadata record (a failover "
            "resurrects departed members, or forgets the assignment), a record carrying the wrong generation, "
            "leader, assignment or subscription; a load that drops the subscriptions (every retried JoinGroup then "
            "looks changed)",
            findings=_metadata_mismatch,
            partners=("assignment_received",),
        ),
        no_findings(
            name="revoked_partitions_committed",
            fact="A consumer that gives a partition up cleanly -- onPartitionsRevoked before an eager JoinGroup, "
            "after a cooperative SyncGroup, or on close outside a rebalance -- while it is a member of the current "
            "generation has its position committed first, so the partition's next owner resumes where it stopped "
            "(a clean rebalance re-delivers nothing; only a lost partition may -- and a close during a rebalance, "
            "its JoinGroup sent or answered but SyncGroup not, loses its partitions: onLeavePrepare calls "
            "onPartitionsLost and the close-time commit is never sent).",
            source="ConsumerCoordinator.onJoinPrepare (maybeAutoCommitOffsetsSync, then the revocation), "
            "onJoinComplete (cooperative onPartitionsRevoked), close / onLeavePrepare (rebalanceInProgress -> "
            "onPartitionsLost) and sendOffsetCommitRequest (generationIfStable), Kafka 4.0 trunk 1eb7644; "
            "ConsumerRebalanceListener javadoc; the book §7.2",
            catches="a revocation that skips or fails its commit, a commit of the wrong positions, a commit "
            "fenced although the member is current: the next owner re-processes records",
            findings=lambda s: s.ghost.uncommitted_handovers,
            partners=("offset_committed", "partition_revoked"),
        ),
        no_findings(
            name="new_owner_resumes_at_committed_offset",
            fact="A consumer that a rebalance gives a partition starts fetching it at the group's committed offset "
            "(auto.offset.reset=earliest when none is committed): it neither skips a record nobody processed nor "
            "re-reads one whose processing was committed.",
            source="ConsumerCoordinator.initWithCommittedOffsetsIfNeeded / refreshCommittedOffsets (Kafka 4.0, "
            "trunk 1eb7644); KafkaConsumer javadoc (offsets and consumer position); the book §7.3",
            catches="a new owner seeded from the wrong offset (the old owner's stale position, a partition mixed "
            "up, an off-by-one after OffsetFetch): records lost, or re-processed and the committed offset moved back",
            findings=lambda s: s.ghost.misplaced_starts,
            partners=("resumed_at_committed_offset",),
        ),
        no_findings(
            name="no_needless_rebalance",
            fact="A JoinGroup from a known member whose subscription metadata (ownedPartitions, generation) is "
            "the one the coordinator holds never starts a rebalance -- it is answered with the current "
            "generation -- unless the member leads a Stable group.",
            source="GroupMetadataManager.classicGroupJoinExistingMember (Kafka 4.0); KIP-394; rebalance storms",
            catches="a coordinator that rebalances for a JoinGroup retried after a lost response, or compares "
            "a member's metadata wrongly: every such retry restarts the rebalance (a rebalance storm)",
            findings=lambda s: s.ghost.needless,
            partners=("join_answered_with_current_generation",) if faults.lost_join_response
            else ("assignment_received",),
        ),
        Property(
            name="rebalance_completes",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, every rebalance completes: the group returns to Stable with every running "
            "consumer a member of the current generation that went through SyncGroup, and every partition "
            "owned by exactly one of them (a cooperative follow-up rebalance hands over what was withheld).",
            source="KIP-62 / the book §7.2.2 (JoinGroup barrier, SyncGroup, session timeout); "
            "AbstractCoordinator.ensureActiveGroup",
            catches="a JoinGroup parked at a coordinator that failed over and is never resent; a member that "
            "rejoins forever (a rebalance storm) or a group stuck in PreparingRebalance / CompletingRebalance; "
            "a withheld partition no follow-up rebalance ever assigns",
            predicate=lambda s: settled(s, topo.partitions + s.added_partitions, faults.stale_subscription > 0),
            partners=("assignment_received",),
            fairness=(
                "faults stop (no more lost heartbeats, crashes, stalls or coordinator moves)",
                "session.timeout.ms and max.poll.interval.ms expire a member that stopped",
                "members retry JoinGroup and SyncGroup until answered",
                "the pending-sync timer removes a member whose SyncGroup is held up (KAFKA-12890)",
            ),
        ),
        sometimes_event("assignment_received", "A consumer receives its assignment in SyncGroup.", "sync:assignment"),
        sometimes_event("offset_committed", "An OffsetCommit is accepted.", "commit:accepted"),
        sometimes_event("resumed_at_committed_offset", "A consumer given a partition resumes it at a committed "
                        "offset above 0 (a handover after progress).", "resumed_at_committed_offset"),
        sometimes_event("partition_revoked", "A member revokes partitions (onPartitionsRevoked).", "revoked:*"),
        sometimes_state(
            "partition_consumed_to_end",
            "A consumer fetched a partition to its log end offset.",
            lambda s: any(o == topo.records for c in s.consumers for _, o in c.positions),
        ),
        sometimes_state(
            "group_stable_with_two_members",
            "The group reaches Stable with two members, both through SyncGroup.",
            lambda s: s.group.state == cg.STABLE and len(s.group.members) >= 2
            and sum(1 for c in s.consumers if c.state == cc.STABLE and c.generation == s.group.generation) >= 2,
        ),
    ]
    if topo.consumers < 2:
        props = [p for p in props if p.name != "group_stable_with_two_members"]
    if not topo.records:
        props = [p for p in props if p.name != "partition_consumed_to_end"]
    if topo.records == 0:  # ownership only: nothing is polled or committed
        props = [p for p in props if p.name not in ("committed_offsets_never_regress", "offsets_cache_matches_log",
                                                     "offset_committed", "revoked_partitions_committed",
                                                     "commits_fenced_exactly", "commits_sent_with_stable_generation",
                                                     "new_owner_resumes_at_committed_offset",
                                                     "resumed_at_committed_offset")]
    if faults.leave and topo.records and topo.consumers > 1 and topo.assignor == "cooperative-sticky":
        # the close revoked_partitions_committed does not judge must be reached where it can be (standalone: a
        # search bound may keep a close away from a rebalance); an eager member owns nothing during a rebalance
        # (onJoinPrepare revoked everything before its JoinGroup), so only a cooperative one can lose partitions there
        props.append(sometimes_event("close_during_rebalance_lost", "A consumer closed during a rebalance (its "
                                     "JoinGroup sent or answered, SyncGroup not): onLeavePrepare loses its "
                                     "partitions.", "lost:close"))
    if topo.consumers > 1 and (faults.lost_heartbeats or faults.poll_timeout or faults.leave or faults.crash
                               or topo.late_consumers):
        props.append(sometimes_event("rebalance_in_progress_seen", "A member learns of a rebalance from an error.",
                                     "error:REBALANCE_IN_PROGRESS"))
    if faults.lost_heartbeats and topo.records:
        props.append(sometimes_event("commit_fenced", "A zombie's OffsetCommit is rejected (UNKNOWN_MEMBER_ID).",
                                     "commit:UNKNOWN_MEMBER_ID"))
    elif topo.records:
        props = [replace(p, partners=("offset_committed",)) if p.name == "committed_offsets_never_regress" else p
                 for p in props]
    # the hostile inputs a budget buys must be exercised, else the properties they test pass vacuously
    hostile: dict[str, tuple[str, ...]] = {}
    if faults.late_commit and topo.records:
        hostile["committed_offsets_never_regress"] = (
            "late_commit_fenced_by_generation", *(("late_commit_fenced_by_member",) if faults.lost_heartbeats else ()))
        hostile["commits_fenced_exactly"] = hostile["committed_offsets_never_regress"]
    if faults.lost_heartbeats and topo.records:
        hostile["commits_fenced_exactly"] = (*hostile.get("commits_fenced_exactly", ()), "commit_fenced")
    if faults.stale_subscription and topo.consumers > 1:
        hostile["no_partition_owned_twice"] = ("stale_claim_contested",)
    props = [replace(p, partners=(*p.partners, *hostile[p.name])) if p.name in hostile else p for p in props]
    if faults.late_commit and topo.records:
        # a copy of an OffsetCommit from an earlier generation, from a member still in the group and from one
        # whose session expired (with lost_heartbeats): both fenced (KAFKA-2555)
        props.append(sometimes_event("late_commit_fenced_by_generation", "An OffsetCommit sent in an earlier "
                                     "generation by a member still in the group is rejected (ILLEGAL_GENERATION).",
                                     "late_commit:ILLEGAL_GENERATION"))
        if faults.lost_heartbeats:
            props.append(sometimes_event("late_commit_fenced_by_member", "An OffsetCommit sent by a member the "
                                         "group has since removed is rejected (UNKNOWN_MEMBER_ID).",
                                         "late_commit:UNKNOWN_MEMBER_ID"))
        # the late answer reaches the consumer's OffsetCommitResponseHandler: both of its outcomes for a fencing error
        # of an identity the consumer has left (KAFKA-9823) must be judged by consumers_react_as_kafka
        react = ["late_commit_response_reset"]
        props.append(sometimes_event("late_commit_response_reset", "A late OffsetCommit answer resets the member "
                                     "(resetStateOnResponseError: it is not rejoining).",
                                     "late_commit_response:UNJOINED"))
        if faults.lost_heartbeats:
            react.append("late_commit_response_ignored")
            props.append(sometimes_event("late_commit_response_ignored", "A late OffsetCommit answer of a member id "
                                         "the consumer has left reaches it while its JoinGroup is out: only "
                                         "RebalanceInProgressException, no reset.", "late_commit_response:ignored"))
        if duplicated:
            # KIP-345: the replaced process's late OffsetCommit carries the generation the group still has (a Stable
            # replacement keeps it): the member and instance checks alone fence it, and its answer is fatal
            react.append("late_commit_fenced_instance")
            props.append(sometimes_event("late_commit_fenced_instance", "An OffsetCommit a replaced static member's "
                                         "process sent before its replacement arrives late and is answered "
                                         "FENCED_INSTANCE_ID.", "late_commit:FENCED_INSTANCE_ID"))
        props = _with_partners(props, ("consumers_react_as_kafka", "commits_fenced_exactly"), *react)
    if faults.rebalance_timeout:
        # rebalance.timeout.ms completes the join without a member that is still consuming in the old generation (a
        # zombie the next generation's owners must be told apart from), and keeps a static member that did not rejoin
        timeout = ["rebalance_timeout_removed_consuming_member"]
        props.append(sometimes_event("rebalance_timeout_removed_consuming_member", "rebalance.timeout.ms completes "
                                     "the join without a dynamic member that is still consuming in the previous "
                                     "generation.", "rebalance_timeout:removed_consuming_member"))
        if any(instances):
            timeout.append("rebalance_timeout_kept_static_member")
            props.append(sometimes_event("rebalance_timeout_kept_static_member", "rebalance.timeout.ms completes "
                                         "the join keeping a static member that did not rejoin (KIP-345).",
                                         "rebalance_timeout:static_member_kept"))
        removal = faults.crash or faults.lost_heartbeats or faults.leave or faults.poll_timeout
        if not all(instances) and removal:
            # a departure starts a rebalance that no member rejoined before the timeout: every dynamic member is
            # removed (completeClassicGroupJoin's empty-group path, a new empty generation)
            timeout.append("rebalance_timeout_emptied_group")
            props.append(sometimes_event("rebalance_timeout_emptied_group", "rebalance.timeout.ms expires before any "
                                         "member rejoined: every dynamic member is removed.",
                                         "rebalance_timeout:group_emptied"))
        props = _with_partners(props, ("same_generation_owners_disjoint", "healthy_member_never_removed"), *timeout)
    if faults.stalled_sync:
        # a member of the new generation that heartbeats but never sends SyncGroup (KAFKA-12890): the pending-sync
        # timer must remove it, else rebalance_completes never judges the only way such a group settles
        props.append(sometimes_event("pending_sync_expired", "rebalance.timeout.ms after the join barrier lifted, "
                                     "the pending-sync timer removes a member whose SyncGroup never arrived and the "
                                     "group rebalances (KAFKA-12890).", "sync:pending_expired"))
        props = _with_partners(props, ("rebalance_completes", "healthy_member_never_removed"), "pending_sync_expired")
    if faults.group_append_failure:
        # the coordinator's write of the group metadata fails (KAFKA-10870's class): the request waiting for it is
        # answered a retriable error the consumer must survive -- the leader's SyncGroup, and where a static member has
        # two processes the new one's replacement in Stable; without the step healthy_consumer_never_failed and
        # consumers_react_as_kafka never judge those answers
        failed = ["assignment_append_failed"]
        props.append(sometimes_event("assignment_append_failed", "the write of the leader's assignment to "
                                     "__consumer_offsets fails: the leader's SyncGroup is answered a retriable error "
                                     "and the group rebalances.", "append:assignment_failed"))
        if topo.records:
            failed.append("offset_commit_append_failed")
            props.append(sometimes_event("offset_commit_append_failed", "the append of a member's OffsetCommit "
                                         "fails: it is answered a coordinator error and nothing is committed.",
                                         "append:offsets_failed"))
        ids = instance_ids(topo)
        if any(x and ids.count(x) > 1 for x in ids):
            failed.append("static_replacement_append_failed")
            props.append(sometimes_event("static_replacement_append_failed", "the write of a static member's "
                                         "replacement in Stable fails: it is reverted and the new process's JoinGroup "
                                         "is answered a retriable error.", "static:replacement_reverted"))
        props = _with_partners(props, ("healthy_consumer_never_failed", "consumers_react_as_kafka"), *failed)
    if faults.offset_fetch_failure:
        # the new owner's OffsetFetch fails (KAFKA-17267/17279): a 3.8 consumer hears Kafka 4.0's answer to a failed
        # write, a 4.0 consumer COORDINATOR_NOT_AVAILABLE from an inactive coordinator -- both must retry
        props.append(sometimes_event("offset_fetch_failed_old_client", "A 3.8 consumer's OffsetFetch of its new "
                                     "partitions meets a failed write of the 4.0 coordinator.",
                                     "offset_fetch_client:3.8"))
        props.append(sometimes_event("offset_fetch_coordinator_unavailable", "A consumer's OffsetFetch of its new "
                                     "partitions is answered COORDINATOR_NOT_AVAILABLE.",
                                     "offset_fetch:COORDINATOR_NOT_AVAILABLE"))
        props = _with_partners(props, ("healthy_consumer_never_failed", "consumers_react_as_kafka"),
                               "offset_fetch_failed_old_client", "offset_fetch_coordinator_unavailable")
    if faults.moved_coordinator_commit and topo.records:
        # the coordinator moves while an OffsetCommit is in flight: onJoinPrepare's auto-commit must be retried (a
        # retriable error revokes nothing), else revoked_partitions_committed never judges the retry rule
        props.append(sometimes_event("join_prepare_commit_retried", "onJoinPrepare's auto-commit is answered "
                                     "NOT_COORDINATOR (the coordinator moved mid-commit): nothing is revoked and the "
                                     "commit is retried.", "join_prepare:commit_retried"))
        props = _with_partners(props, ("revoked_partitions_committed", "consumers_react_as_kafka"),
                               "join_prepare_commit_retried")
    if faults.moved_coordinator_commit and faults.leave and topo.records:
        # the coordinator moves while close()'s auto-commit is in flight (KAFKA-7540's window): the commit must be
        # sent again before the consumer revokes and leaves, else revoked_partitions_committed never judges it
        props.append(sometimes_event("close_commit_moved_coordinator", "close()'s auto-commit is answered "
                                     "NOT_COORDINATOR (the coordinator moved mid-commit) before the consumer revokes "
                                     "its partitions and leaves.", "close:commit_NOT_COORDINATOR"))
        props = _with_partners(props, ("revoked_partitions_committed",), "close_commit_moved_coordinator")
    if faults.standalone_commit and topo.records:
        # commits from outside group management (admin offset resets, assign() consumers, KAFKA-14201): both of
        # Kafka's answers must be judged -- accepted by an Empty group, refused by an active one
        props.append(sometimes_event("standalone_commit_accepted", "An OffsetCommit without group metadata (an "
                                     "offset reset, an assign() consumer) is accepted by the Empty group.",
                                     "standalone_commit:accepted"))
        props.append(sometimes_event("standalone_commit_refused", "An OffsetCommit without group metadata is "
                                     "refused by the group while it has members.",
                                     "standalone_commit:UNKNOWN_MEMBER_ID"))
        props = _with_partners(props, ("commits_fenced_exactly",),
                               "standalone_commit_accepted", "standalone_commit_refused")
    if topo.async_join_prepare and topo.records:
        # the asynchronous onJoinPrepare (KAFKA-14196's window) must be entered: a rule that sends the commit
        # synchronously after all leaves revoked_partitions_committed judging the old path only
        props.append(sometimes_event("join_prepare_commit_in_flight", "An eager member's onJoinPrepare auto-commit was "
                                     "accepted while its revocation and JoinGroup waited for a later poll.",
                                     "join_prepare:commit_in_flight"))
        props = _with_partners(props, ("revoked_partitions_committed",), "join_prepare_commit_in_flight")
    if faults.commit_before_sync and topo.records:
        # a client that commits between its JoinGroup and SyncGroup answers: the coordinator's CompletingRebalance
        # answer and the client's reaction to it (KAFKA-8487: requestRejoin, no generation reset) must be judged
        props.append(sometimes_event("early_commit_rebalance_in_progress", "An OffsetCommit sent between the "
                                     "JoinGroup and SyncGroup answers is answered REBALANCE_IN_PROGRESS.",
                                     "early_commit:REBALANCE_IN_PROGRESS"))
        props = _with_partners(props, ("commits_fenced_exactly", "consumers_react_as_kafka"),
                               "early_commit_rebalance_in_progress")
    if faults.lost_join_response:
        # a JoinGroup retried after its response was lost: answered with the current generation (Kafka 4.0
        # classicGroupJoinExistingMember), also by the leader while the group is CompletingRebalance
        props.append(sometimes_event("join_answered_with_current_generation", "A known member's JoinGroup "
                                     "retried after a lost response is answered with the current generation.",
                                     "join:current_generation"))
    if faults.coordinator_failover and topo.late_consumers:
        # the coordinator must move while a rebalance request is in flight, else coordinator_move_keeps_member
        # only ever judges a Stable member (a JoinGroup parked at the old coordinator: NOT_COORDINATOR)
        props.append(sometimes_event("join_lost_to_coordinator_move", "A JoinGroup parked at a coordinator that "
                                     "moved is answered NOT_COORDINATOR and sent again.", "join:NOT_COORDINATOR"))
        props = _with_partners(props, ("coordinator_move_keeps_member",), "join_lost_to_coordinator_move")
    if faults.coordinator_failover and faults.late_sync_response:
        # ... and a SyncGroup the old coordinator took but whose answer the broken connection lost
        props.append(sometimes_event("sync_lost_to_coordinator_move", "A SyncGroup in flight when the coordinator "
                                     "moved fails (NOT_COORDINATOR): the member rejoins.", "sync:NOT_COORDINATOR"))
        props = _with_partners(props, ("coordinator_move_keeps_member",), "sync_lost_to_coordinator_move")
    if faults.late_sync_response and faults.lost_heartbeats:
        # a SyncGroup answer must arrive after a generation reset, else the hasGenerationReset rule is never judged
        props.append(sometimes_event("stale_sync_response_ignored", "A SyncGroup answer that arrives after the "
                                     "consumer's generation was reset is not taken.", "sync:stale_response_ignored"))
        props = _with_partners(props, ("consumers_react_as_kafka", "fenced_consumer_owns_nothing"),
                               "stale_sync_response_ignored")
    if faults.late_heartbeat:
        # a Heartbeat response of a generation the member has left must reach it, else consumers_react_as_kafka
        # never judges the generationUnchanged() rule
        props.append(sometimes_event("late_heartbeat_ignored", "A Heartbeat response with a fencing error, sent with "
                                     "a member id or generation the consumer has since left, is ignored.",
                                     "late_heartbeat:ignored"))
        # ... and in its worst state too: Stable again, consuming, in the generation its rejoin gave it (the
        # generationUnchanged() rule must hold after the rebalance completed, not only while it is under way)
        props.append(sometimes_event("late_heartbeat_ignored_when_stable", "A Heartbeat response with a fencing error "
                                     "of a generation the consumer left reaches it once it is Stable again in its "
                                     "new generation, and is ignored.", "late_heartbeat:ignored_when_stable"))
        late = ("late_heartbeat_ignored", "late_heartbeat_ignored_when_stable")
        props = _with_partners(props, ("consumers_react_as_kafka",), *late)
    if topo.join_group_version >= 4:
        # KIP-394: the MEMBER_ID_REQUIRED round trip and its pending members must be driven, else the JoinGroup judge
        # and the join barrier's wait for pending members are never exercised
        kip394 = {"group_requests_fenced_exactly": ["member_id_required"], "rebalance_completes": []}
        props.append(sometimes_event("member_id_required", "A new dynamic member's JoinGroup is answered "
                                     "MEMBER_ID_REQUIRED and it joins again with the id (KIP-394).",
                                     "join:MEMBER_ID_REQUIRED"))
        if faults.lost_member_id or faults.crash:
            kip394["rebalance_completes"].append("pending_member_expired")
            props.append(sometimes_event("pending_member_expired", "A pending member whose JoinGroup never came "
                                         "back expires, and the join barrier stops waiting for it.",
                                         "pending_member_expired"))
        if faults.rebalance_timeout and faults.lost_member_id:
            # an orphan pending member holds up the join barrier, not the delayed join: rebalance.timeout.ms completes
            # the join without it (completeClassicGroupJoin), before the pending member's own session expires
            kip394["rebalance_completes"].append("rebalance_timeout_left_pending_member")
            props.append(sometimes_event("rebalance_timeout_left_pending_member", "rebalance.timeout.ms completes the "
                                         "join while a pending member (KIP-394) is still to come.",
                                         "rebalance_timeout:pending_member_left_out"))
        if faults.coordinator_failover:
            kip394["group_requests_fenced_exactly"].append("pending_member_lost_on_failover")
            props.append(sometimes_event("pending_member_lost_on_failover", "A JoinGroup with a member id but no "
                                         "generation (here: a pending member's) reaches a coordinator that does "
                                         "not hold the id, e.g. a new one (UNKNOWN_MEMBER_ID).",
                                         "join:unknown_member_id_without_generation"))
        props = [replace(p, partners=(*p.partners, *kip394[p.name])) if p.name in kip394 else p for p in props]
    if not any(instances) and (faults.coordinator_failover or faults.moved_coordinator_commit or (
            faults.late_commit and faults.lost_heartbeats)):
        # a member whose id the coordinator forgot -- its generation reset by ILLEGAL_GENERATION (a late commit's
        # answer, or a commit fenced after a coordinator move) before its session expired, or its JoinGroup parked
        # at a coordinator that moved -- rejoins with that id: the JoinGroup judge's UNKNOWN_MEMBER_ID branch
        props.append(sometimes_event("forgotten_member_id_rejoined", "A JoinGroup carrying a member id but no "
                                     "generation is answered UNKNOWN_MEMBER_ID: the coordinator no longer holds the "
                                     "id (the member's session expired, or a new coordinator loaded the group "
                                     "without it), and the consumer rejoins as a new member.",
                                     "join:unknown_member_id_without_generation"))
        props = _with_partners(props, ("consumers_react_as_kafka", "group_requests_fenced_exactly"),
                               "forgotten_member_id_rejoined")
    if faults.stale_subscription and topo.consumers > 1:
        # the step's self-report is borne out by the state it leaves (Property.witness): a JoinGroup stands for the
        # hostile input only if some consumer's last assignment -- what a stale subscription claims -- names a
        # partition another running consumer owns
        props.append(replace(
            sometimes_event("stale_claim_contested", "A faulty client's JoinGroup claims a partition another consumer "
                            "owns now (KAFKA-13419, KIP-792).", "stale_claim:contested"),
            witness=_claim_contested))
    if faults.create_partitions:
        props.append(sometimes_event("leader_rejoined_for_metadata", "The leader rejoins after partitions were added "
                                     "to the topic (its assignment snapshot no longer matches the metadata).",
                                     "leader:metadata_changed"))
        # the added partition itself must reach a member, else rebalance_completes would judge a topic that
        # never grew (settled() counts the partitions the run added)
        props.append(sometimes_state("added_partition_assigned", "A partition added while the group was Stable "
                                     "is owned by a member (the leader's rejoin assigned it).",
                                     lambda s: any(p >= topo.partitions for c in s.consumers for p in c.owned)))
        props = _with_partners(props, ("rebalance_completes",),
                               "leader_rejoined_for_metadata", "added_partition_assigned")
    # a static member's new process exists only if a process of its instance restarts or two processes share it
    replaceable = bool(duplicated) or bool(faults.crash or faults.leave or faults.poll_timeout)
    static_partners: dict[str, tuple[str, ...]] = {}
    if any(instances) and replaceable:
        # KIP-345: a static member's new process takes the old one's place in a Stable group without a rebalance
        props.append(sometimes_event("static_member_replaced", "A static member's new process (no member id, a "
                                     "group.instance.id the group holds) joins a Stable group and keeps its "
                                     "generation.", "static:replaced_in_stable"))
        static_partners["no_needless_rebalance"] = ("static_member_replaced",)
        # the replaced member id's session timer is left scheduled and fires (GroupMetadataManager, Kafka 4.0)
        props.append(sometimes_event("replaced_member_timer_fired", "The session timer of a static member's "
                                     "replaced member id fires after the replacement.", "stale_session_timer"))
        static_partners["rebalance_has_cause"] = ("replaced_member_timer_fired",)
    if duplicated:
        # two processes of one instance: the replaced one is fenced, fatally (FENCED_INSTANCE_ID)
        props.append(sometimes_event("static_member_fenced", "A replaced static member's request is answered "
                                     "FENCED_INSTANCE_ID.", "error:FENCED_INSTANCE_ID"))
        static_partners["healthy_consumer_never_failed"] = ("static_member_fenced",)
        static_partners["group_requests_fenced_exactly"] = ("static_member_fenced",)
    if any(instances):
        props = [replace(p, partners=(*p.partners, *static_partners[p.name])) if p.name in static_partners else p
                 for p in props]
    if faults.coordinator_failover:
        props.append(sometimes_event("coordinator_loaded", "A new coordinator loads the group from the log.",
                                     "coordinator:loaded"))
        if faults.leave or faults.crash or faults.lost_heartbeats or faults.poll_timeout:
            props.append(sometimes_event("empty_group_loaded", "A new coordinator loads a group whose members all "
                                         "left (its last GroupMetadata record has none).", "coordinator:loaded_empty"))
    if topo.records and (faults.leave or faults.crash or faults.lost_heartbeats or faults.poll_timeout):
        props.append(sometimes_event("offsets_expired", "An Empty group's offsets expire as tombstones (KIP-211).",
                                     "offsets:expired"))
    if topo.compactions:
        props.append(sometimes_event("log_compacted", "The log cleaner compacts __consumer_offsets.", "log:compacted"))
        # the log properties judge a compacted log only if a cleaner pass removed something
        props = _with_partners(props, ("offsets_cache_matches_log", "group_metadata_matches_log"), "log_compacted")
    if topo.assignor == "cooperative-sticky":
        props.append(sometimes_event("cooperative_revocation", "A member revokes a partition that moves (KIP-429).",
                                     "cooperative:revoked"))
    return tuple(props)


def _claim_contested(s: GroupState) -> bool:
    """Some consumer's last assignment (the claim of a stale subscription, KAFKA-13419) names a partition that another
    running consumer owns now."""
    return any(
        p in o.owned
        for i, c in enumerate(s.consumers)
        for p in c.last_assignment[0]
        for j, o in enumerate(s.consumers)
        if j != i and o.up
    )


def _falsely_claimed(s: GroupState, partition: int) -> bool:
    """A member's subscription claims ``partition`` though its consumer does not own it (a faulty client's
    stale ``ownedPartitions``, KAFKA-13419): cooperative-sticky withholds the partition until that member
    revokes it, which it never does -- Kafka cannot see through the claim until the next rebalance."""
    return any(partition in m.owned and partition not in s.consumers[m.client].owned for m in s.group.members)


def settled(s: GroupState, partitions: int, false_claims: bool = True) -> bool:
    """The rebalance is over: the group is Stable and every running consumer is a member that went
    through SyncGroup of the current generation, at the current coordinator; every member's process
    runs (dead members' sessions have expired); each of the topic's ``partitions`` is owned by exactly
    one of them (or by none while a faulty client's false claim withholds it -- only where the run has
    faulty clients, ``false_claims``: a healthy member that revoked a partition rejoins, and its next
    JoinGroup drops the claim)."""
    g = s.group
    if g.state != cg.STABLE:
        return False
    running = {c.member_id: c for c in s.consumers if c.up and c.state != cc.FAILED}
    if {m.member_id for m in g.members} != set(running):
        return False
    owners = Counter(p for c in running.values() for p in c.owned)
    withheld = (lambda p: _falsely_claimed(s, p)) if false_claims else (lambda p: False)
    if any(owners[p] > 1 or (owners[p] == 0 and not withheld(p)) for p in range(partitions)):
        return False
    return all(c.state == cc.STABLE and c.generation == g.generation and c.coordinator == g.epoch
               for c in running.values())
