"""The consumer-group model: __consumer_offsets, the classic group, the scenarios and the weakened variants."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keos.checker.explore.search import ExploreOptions, explore
from keos.checker.results import Verdict
from keos.checker.trace import replay_actions
from keos.invariants.groups import settled
from keos.model.clients import consumer_coordinator as cc
from keos.model.coordinator.group import append_errors as aerr
from keos.model.coordinator.group import classic_group as cg
from keos.model.coordinator.group import offsets_log as olog
from keos.model.interface import Action
from keos.model.protocol.errors import Errors
from keos.model.systems.commit_fencing import kafka_answer, misfenced
from keos.model.systems.groups import GroupState, GroupSystem
from keos.model.variants import VARIANTS
from keos.scenarios import build_model, builtin_scenarios

SCENARIOS = builtin_scenarios()

# --------------------------------------------------------------------------------- __consumer_offsets


def unsettled_forever(model: GroupSystem, limit: int = 200_000) -> list[GroupState]:
    """A test oracle (moved here from invariants/groups.py in issue 23: the gate judges the same thing with
    the EVENTUALLY property ``rebalance_completes``).  A liveness-minded check ("a rebalance eventually
    completes when faults stop"), until the
    engines judge ``Expectation.EVENTUALLY``: every reachable state must reach a :func:`settled`
    state by protocol and timing steps alone (no fault action).  On a finite state graph this
    ``AG EF settled`` is what lets a fair scheduler -- sessions do expire, members do rejoin --
    settle the group once faults stop.  Returns the reachable states from which no settled state
    is reachable (empty when the property holds)."""
    init = model.init_states()
    index: dict[str, int] = {}
    states: list[GroupState] = []
    calm_preds: list[list[int]] = []
    frontier: list[GroupState] = []
    for s in init:
        index[model.fingerprint(s)] = len(states)
        states.append(s)
        calm_preds.append([])
        frontier.append(s)
    while frontier:
        nxt: list[GroupState] = []
        for s in frontier:
            i = index[model.fingerprint(s)]
            for action in model.actions(s):
                step = model.step(s, action)
                if step is None:
                    continue
                key = model.fingerprint(step.state)
                j = index.get(key)
                if j is None:
                    if len(states) >= limit:
                        raise RuntimeError(f"more than {limit} states")
                    j = index[key] = len(states)
                    states.append(step.state)
                    calm_preds.append([])
                    nxt.append(step.state)
                if model.fault_kind(action) is None:
                    calm_preds[j].append(i)
        frontier = nxt
    good = [settled(s, model.topo.partitions) for s in states]
    stack = [i for i, ok in enumerate(good) if ok]
    while stack:
        j = stack.pop()
        for i in calm_preds[j]:
            if not good[i]:
                good[i] = True
                stack.append(i)
    return [s for s, ok in zip(states, good) if not ok]



def test_find_coordinator_partition_is_the_books_example() -> None:
    # Utils.abs("consumerGroupId".hashCode()) % 50 == 20, as the book computes for its example group.
    assert olog.java_string_hash("hello") == 99162322
    assert olog.partition_for("consumerGroupId") == 20


def test_tombstones_remove_keys_and_compaction_drops_superseded_records() -> None:
    meta = olog.GroupMetadataValue(1, "range", "c0-0", (("c0-0", (0,)),))
    g = "consumerGroupId"
    log = (olog.offset_commit_record(g, "t0", 0, 1), olog.group_metadata_record(g, meta),
           olog.offset_commit_record(g, "t0", 0, 2), olog.offset_commit_record(g, "t0", 1, 1),
           olog.offset_commit_record("other", "t0", 1, 7), olog.offset_commit_record(g, "t0", 1, None))
    assert olog.load(log, g) == olog.LoadedGroup(meta, ((0, 2),))
    assert olog.load(log, "other") == olog.LoadedGroup(None, ((1, 7),))
    compacted = olog.compact(log)
    assert compacted == (log[1], log[2], log[4])
    assert olog.load(compacted, g) == olog.load(log, g)


records = st.builds(
    olog.OffsetsRecord, st.sampled_from(("g1", "g2")), st.just("t0"), st.integers(-1, 2),
    st.one_of(st.none(), st.integers(0, 5)),
).map(lambda r: r if r.partition >= 0 or r.value is None else r._replace(
    value=olog.GroupMetadataValue(r.value if isinstance(r.value, int) else 0, "range", "", ())))


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(records, max_size=12))
def test_compaction_never_changes_what_a_new_coordinator_loads(log: list[olog.OffsetsRecord]) -> None:
    full = tuple(log)
    for group in ("g1", "g2"):
        assert olog.load(olog.compact(full), group) == olog.load(full, group)
    assert olog.compact(olog.compact(full)) == olog.compact(full)


# ---------------------------------------------------------------------------------- the classic group


def test_join_sync_and_offset_commit_fencing() -> None:
    g = cg.empty_group()
    a = cg.join_group(g, 0, "", ())
    b = cg.join_group(a.group, 1, "", ())
    assert b.group.state == cg.PREPARING_REBALANCE and cg.join_complete_ready(b.group)
    g = cg.complete_join(b.group, "range")
    assert (g.state, g.generation, g.leader) == (cg.COMPLETING_REBALANCE, 1, a.member_id)
    assert cg.sync_group(g, b.member_id, 1, None) is None  # a follower's SyncGroup is parked
    assert cg.validate_offset_commit(g, a.member_id, 1, True) == Errors.REBALANCE_IN_PROGRESS
    res = cg.sync_group(g, a.member_id, 1, {a.member_id: (0,), b.member_id: (1,)})
    assert res is not None and res.error == Errors.NONE and res.assignment == (0,)
    g = res.group
    assert g.state == cg.STABLE and olog.load(g.log, g.group_id).metadata is not None
    assert cg.validate_offset_commit(g, a.member_id, 0, True) == Errors.ILLEGAL_GENERATION
    assert cg.validate_offset_commit(g, "zombie", 1, True) == Errors.UNKNOWN_MEMBER_ID
    assert cg.validate_offset_commit(g, "zombie", 0, False) == Errors.NONE  # no generation fencing
    g = cg.remove_member(g, b.member_id)
    assert g.state == cg.PREPARING_REBALANCE
    assert cg.heartbeat(g, a.member_id, 1) == Errors.REBALANCE_IN_PROGRESS
    assert cg.heartbeat(g, b.member_id, 1) == Errors.UNKNOWN_MEMBER_ID
    g = cg.remove_member(g, a.member_id)
    assert (g.state, g.generation) == (cg.EMPTY, 2)


def test_group_transitions_follow_the_valid_previous_states_table() -> None:
    with pytest.raises(AssertionError, match="illegal group transition Empty -> Stable"):
        cg.transition(cg.empty_group(), cg.STABLE)
    for target, previous in cg.VALID_PREVIOUS_STATES.items():
        for state in previous:
            assert cg.transition(cg.empty_group()._replace(state=state), target).state == target


def test_failover_loads_members_assignment_and_offsets_from_the_log() -> None:
    g = cg.empty_group()
    j = cg.join_group(g, 0, "", ())
    g = cg.complete_join(j.group, "sticky")
    res = cg.sync_group(g, j.member_id, 1, {j.member_id: (0, 1)})
    assert res is not None
    g = cg.commit_offsets(res.group, "t0", ((0, 1),))
    loaded = cg.load_group(g.log, g.epoch + 1, g.next_member)
    assert (loaded.state, loaded.generation, loaded.offsets) == (cg.STABLE, 1, ((0, 1),))
    assert loaded.members[0].assignment == (0, 1) and loaded.members[0].client == 0


def test_failover_restores_each_members_subscription_metadata() -> None:
    """GroupMetadataManager.replay (Kafka trunk 1eb7644): MemberMetadata.subscription becomes the loaded member's
    protocol metadata, so a follower's retried JoinGroup at the new coordinator is still "unchanged"."""
    g = cg.empty_group()
    a = cg.join_group(g, 0, "", (1,), 3)
    b = cg.join_group(a.group, 1, "", (0,), 2)
    g = cg.complete_join(b.group, "cooperative-sticky")
    res = cg.sync_group(g, g.leader, g.generation, {a.member_id: (1,), b.member_id: (0,)})
    assert res is not None and res.group.state == cg.STABLE
    loaded = cg.load_group(res.group.log, 1, res.group.next_member)
    assert [(m.member_id, m.owned, m.generation) for m in loaded.members] == [
        (a.member_id, (1,), 3), (b.member_id, (0,), 2)]
    follower = b.member_id if loaded.leader == a.member_id else a.member_id
    mine = loaded.member(follower)
    assert mine is not None
    again = cg.join_group(loaded, mine.client, follower, mine.owned, mine.generation)
    assert again.immediate and again.group.state == cg.STABLE
    dropped = cg.load_group(res.group.log, 1, res.group.next_member, restore_subscriptions=False)
    assert [(m.owned, m.generation) for m in dropped.members] == [((), -1), ((), -1)]
    assert not cg.join_group(dropped, mine.client, follower, mine.owned, mine.generation).immediate


def test_static_member_replaced_without_rebalance_and_the_old_process_fenced() -> None:
    """KIP-345 (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin, ClassicGroup.validateMember,
    Kafka trunk 1eb7644): a new process of instance i0 takes c0-0's place -- its assignment, its leadership, the
    generation -- and every request of the replaced member id carrying i0 is FENCED_INSTANCE_ID."""
    g = cg.empty_group()
    a = cg.join_group(g, 0, "", (), 1, instance="i0")
    b = cg.join_group(a.group, 1, "", (), 1, instance="i1")
    g = cg.complete_join(b.group, "range")
    res = cg.sync_group(g, a.member_id, g.generation, {a.member_id: (0,), b.member_id: ()}, "i0")
    assert res is not None and res.group.state == cg.STABLE and res.group.leader == a.member_id
    g = res.group
    new = cg.join_group(g, 2, "", (), 1, instance="i0")
    assert new.immediate and new.error == Errors.NONE and new.group.state == cg.STABLE
    h = new.group
    assert (h.generation, h.leader) == (g.generation, new.member_id)
    held = h.static_member("i0")
    assert held is not None and (held.member_id, held.client, held.assignment) == (new.member_id, 2, (0,))
    meta = olog.load(h.log, h.group_id).metadata
    assert meta is not None and (new.member_id, "i0") in meta.instances
    assert cg.load_group(h.log, 1, h.next_member).static_member("i0") == held._replace(joined=False)
    old = a.member_id
    assert cg.heartbeat(h, old, g.generation, "i0") == Errors.FENCED_INSTANCE_ID
    assert cg.validate_offset_commit(h, old, g.generation, True, instance="i0") == Errors.FENCED_INSTANCE_ID
    assert cg.join_group(h, 0, old, (), 1, instance="i0").error == Errors.FENCED_INSTANCE_ID
    assert cg.heartbeat(h, old, g.generation) == Errors.UNKNOWN_MEMBER_ID  # without the instance id: unknown
    assert cg.heartbeat(h, new.member_id, g.generation, "i0") == Errors.NONE
    assert cg.heartbeat(h, b.member_id, g.generation, "i9") == Errors.UNKNOWN_MEMBER_ID
    again = cg.join_group(g, 2, "", (), 1, instance="i0", static_keeps_generation=False)
    assert not again.immediate and again.group.state == cg.PREPARING_REBALANCE
    # in CompletingRebalance the leader may have assigned to the old member id: rebalance
    mid = cg.join_group(cg.complete_join(b.group, "range"), 2, "", (), 1, instance="i1")
    assert mid.group.state == cg.PREPARING_REBALANCE and not mid.immediate


def test_a_replaced_member_ids_session_timer_expires_without_effect() -> None:
    """Kafka 4.0 (trunk 1eb7644, ``updateStaticMemberThenRebalanceOrCompleteJoin``) leaves the replaced member id's
    heartbeat timer scheduled; ``expireClassicGroupMemberHeartbeat`` then finds no such member: no removal, no
    rebalance, the timer gone.  Without the check (no_kafka_7196_fix) the Stable group rebalances."""
    g = cg.empty_group()
    a = cg.join_group(g, 0, "", (), 1, instance="i0")
    b = cg.join_group(a.group, 1, "", (), 1, instance="i1")
    g = cg.complete_join(b.group, "range")
    res = cg.sync_group(g, a.member_id, g.generation, {a.member_id: (0,), b.member_id: ()}, "i0")
    assert res is not None
    new = cg.join_group(res.group, 2, "", (), 1, instance="i0")
    h = new.group
    assert h.stale_timers == (a.member_id,) and h.state == cg.STABLE
    fired = cg.expire_member_heartbeat(h, a.member_id)
    assert fired == h._replace(stale_timers=())
    assert cg.load_group(h.log, 1, h.next_member).stale_timers == ()  # a new coordinator schedules none
    weak = cg.expire_member_heartbeat(h, a.member_id, checks_member=False)
    assert weak.state == cg.PREPARING_REBALANCE and {m.member_id for m in weak.members} == {
        m.member_id for m in h.members}
    # a live member's own timer still removes it (its heartbeats stopped)
    gone = cg.expire_member_heartbeat(h, b.member_id)
    assert gone.member(b.member_id) is None and gone.state == cg.PREPARING_REBALANCE


def test_offset_fetch_failures_translate_to_answers_every_drawn_consumer_retries() -> None:
    """Kafka 4.0's answer to a requireStable OffsetFetch that meets a failed write, a loading or an inactive
    coordinator (``GroupCoordinatorService.fetchOffsets`` / ``handleOffsetFetchException``, trunk 1eb7644) is the
    documented table's, and the consumers the fault draws retry it: the 4.0 ``OffsetFetchResponseHandler`` every
    answer, the 3.8 one (before KAFKA-17279) the answers to a failed write (KAFKA-17267's remap to NOT_COORDINATOR)."""
    c = cc.fresh(up=True)._replace(coordinator=3, state=cc.STABLE, owned=(0,))
    for failure in aerr.FETCH_FAILURES:
        answer = aerr.fetch_failure_answer(failure)
        assert answer == aerr.FETCH_FAILURE_ANSWERS[failure]
        assert cc.on_offset_fetch_error(c, answer, "4.0").state == cc.STABLE
        if failure in aerr.STORAGE_APPEND_ERRORS:
            assert cc.on_offset_fetch_error(c, answer, "3.8").state == cc.STABLE
        rediscover = answer in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE)
        assert (cc.on_offset_fetch_error(c, answer).coordinator < 0) == rediscover
    assert aerr.fetch_failure_answer(Errors.REQUEST_TIMED_OUT, remaps_write_failures=False) == Errors.REQUEST_TIMED_OUT
    assert cc.on_offset_fetch_error(c, Errors.REQUEST_TIMED_OUT, "3.8").state == cc.FAILED
    assert cc.on_offset_fetch_error(c, Errors.COORDINATOR_NOT_AVAILABLE, retries_retriable=False).state == cc.FAILED
    system = build_model(SCENARIOS["groups_offset_fetch_failure"], "kafka")
    assert isinstance(system, GroupSystem)
    drawn = set(system._fetch_failures)
    assert {f for f, _ in drawn} == set(aerr.FETCH_FAILURES) and (aerr.INACTIVE, "3.8") not in drawn


def test_rebalance_timeout_completes_the_join_without_dynamic_laggards() -> None:
    """``completeClassicGroupJoin`` on rebalance.timeout.ms (Kafka trunk 1eb7644): the dynamic members that did not
    rejoin are removed, a static one stays (KIP-345), the leader is re-elected among the rejoined members and the
    generation advances; with nobody rejoined only the dynamic laggards go; with nobody left the group is Empty."""
    g = cg.empty_group()
    a = cg.join_group(g, 0, "", (), -1, instance="i0")
    b = cg.join_group(a.group, 1, "", (), -1)
    g = cg.complete_join(b.group, "range")
    res = cg.sync_group(g, a.member_id, g.generation, {a.member_id: (0,), b.member_id: (1,)}, "i0")
    assert res is not None and res.group.state == cg.STABLE and res.group.leader == a.member_id
    c = cg.join_group(res.group, 2, "", (), -1)  # a third consumer: the rebalance starts, c0 and c1 must rejoin
    h = c.group
    assert h.state == cg.PREPARING_REBALANCE and cg.join_timeout_changes(h) and not cg.join_complete_ready(h)
    done = cg.complete_join_on_timeout(h, "range")
    assert done.state == cg.COMPLETING_REBALANCE and done.generation == h.generation + 1
    assert {m.member_id for m in done.members} == {a.member_id, c.member_id}  # the dynamic c1 is gone
    assert done.leader == c.member_id  # the static leader did not rejoin: a rejoined member leads
    kept = cg.complete_join_on_timeout(h, "range", advances_generation=False)  # the weakened variant
    assert kept.generation == h.generation
    dropped = cg.complete_join_on_timeout(h, "range", keeps_static=False)  # the weakened variant: static removed too
    assert [m.member_id for m in dropped.members] == [c.member_id]
    # nobody rejoined: the dynamic laggards are removed, the static member alone stays, the join waits
    lone = cg.prepare_rebalance(res.group)
    waiting = cg.complete_join_on_timeout(lone, "range")
    assert waiting.state == cg.PREPARING_REBALANCE and [m.member_id for m in waiting.members] == [a.member_id]
    assert not cg.join_timeout_changes(waiting)
    # only dynamic members, none rejoined: a new, empty generation written to the log
    d = cg.join_group(cg.empty_group(), 0, "", (), -1)
    e = cg.complete_join(d.group, "range")
    f = cg.sync_group(e, d.member_id, e.generation, {d.member_id: (0,)})
    assert f is not None
    empty = cg.complete_join_on_timeout(cg.prepare_rebalance(f.group), "range")
    assert (empty.state, empty.members, empty.generation) == (cg.EMPTY, (), f.group.generation + 1)
    meta = olog.load(empty.log, empty.group_id).metadata
    assert meta is not None and meta.generation == empty.generation and not meta.members


def test_static_member_fencing_oracle() -> None:
    st = cg.STABLE
    assert kafka_answer("Heartbeat", False, 1, 1, st, "i0", "c2-2", "c0-0") == Errors.FENCED_INSTANCE_ID
    assert kafka_answer("OffsetCommit", True, 1, 1, st, "i0", None, "c0-0") == Errors.UNKNOWN_MEMBER_ID
    assert kafka_answer("SyncGroup", True, 0, 1, st, "i0", "c0-0", "c0-0") == Errors.ILLEGAL_GENERATION
    assert "FENCED_INSTANCE_ID" in misfenced("Heartbeat", "c0-0", False, 1, 1, st, Errors.UNKNOWN_MEMBER_ID, "i0",
                                             "c2-2")


def test_commits_without_group_metadata_are_accepted_only_by_an_empty_group() -> None:
    """KAFKA-14201 / ``ClassicGroup.validateOffsetCommit`` (Kafka 4.0): generation -1 and an Empty group pass whatever
    member id and instance id the commit carries; with members, a commit carrying neither is UNKNOWN_MEMBER_ID."""
    empty = cg.empty_group()
    for instance in ("", "standalone"):
        assert cg.validate_offset_commit(empty, "", -1, True, True, instance) == Errors.NONE
        assert kafka_answer("OffsetCommit", False, -1, 0, cg.EMPTY, instance) == Errors.NONE
    assert cg.validate_offset_commit(empty, "", -1, True, True, "standalone",
                                     standalone_in_empty=False) == Errors.UNKNOWN_MEMBER_ID
    active = cg.join_group(empty, 0, "", (), -1).group
    assert active.state == cg.PREPARING_REBALANCE
    for instance in ("", "standalone"):
        assert cg.validate_offset_commit(active, "", -1, True, True, instance) == Errors.UNKNOWN_MEMBER_ID
        assert kafka_answer("OffsetCommit", False, -1, active.generation, active.state, instance) == (
            Errors.UNKNOWN_MEMBER_ID)
    # older TxnOffsetCommit versions carry no member id: no member check
    assert kafka_answer("TxnOffsetCommit", False, -1, 1, cg.STABLE) == Errors.NONE


def test_offsets_topic_append_errors_translate_to_coordinator_errors() -> None:
    """``appendGroupMetadataErrorToResponseError`` / ``handleOperationException`` (Kafka 4.0) and the Scala
    ``storeGroup`` / ``storeOffsets`` (2.x-3.9): every transient storage error of a ``__consumer_offsets`` append is
    answered a coordinator error the consumer retries -- never the storage error itself (KAFKA-3590, KAFKA-4362) --
    and the code agrees with the documented table the fault's choices come from."""
    retriable = {Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR}
    for e in aerr.STORAGE_APPEND_ERRORS:
        for scala in (False, True):
            assert aerr.group_append_answer(e, scala) == aerr.GROUP_APPEND_ANSWERS[e, scala]
            assert aerr.commit_append_answer(e, scala) == aerr.COMMIT_APPEND_ANSWERS[e, scala]
            if e != Errors.REQUEST_TIMED_OUT:
                assert aerr.group_append_answer(e, scala) in retriable
    assert aerr.group_append_answer(Errors.REQUEST_TIMED_OUT, True) == Errors.REBALANCE_IN_PROGRESS
    assert aerr.commit_append_answer(Errors.REQUEST_TIMED_OUT, True) == Errors.REQUEST_TIMED_OUT
    assert aerr.group_append_answer(Errors.NOT_ENOUGH_REPLICAS, False, maps_replication_errors=False) == (
        Errors.NOT_ENOUGH_REPLICAS)
    # the default scenario draws every storage error whose answer it names (REBALANCE_IN_PROGRESS: the Scala one)
    system = build_model(SCENARIOS["groups_append_failure"])
    assert isinstance(system, GroupSystem)
    assert {e for e, _ in system._group_storage_errors} == set(aerr.STORAGE_APPEND_ERRORS)
    assert (Errors.REQUEST_TIMED_OUT, True) in system._group_storage_errors  # the Scala storeGroup's answer
    assert (Errors.REQUEST_TIMED_OUT, False) in system._group_storage_errors  # Kafka 4.0's
    assert (Errors.REQUEST_TIMED_OUT, False) in system._commit_storage_errors
    assert (Errors.REQUEST_TIMED_OUT, True) not in system._commit_storage_errors  # answered as itself: not named


# ------------------------------------------------------------------------------------------ scenarios

REAL = {
    "groups_zombie_commit": 8756,
    "groups_coordinator_failover": 4645,
    "groups_cooperative_join": 1452,
    "groups_offsets_expiry": 1410,
    "groups_cooperative_crash": 906,
    "groups_eager_rebalance": 16243,
    "groups_slow_consumer": 10053,
    "groups_cooperative_commit_rebalance": 12318,
    "groups_eager_late_join_zombie": 4162,
    "groups_late_commit": 23560,
    "groups_cooperative_stale_claim": 1081,
    "groups_lost_join_response": 53,
    "groups_cooperative_follower_revoke": 6453,
    "groups_partitions_added": 218,
    "groups_static_membership": 1424,
    "groups_member_id_required": 2111,
    "groups_static_coordinator_moved": 556,
    "groups_coordinator_moved_commit": 491,
    "groups_early_commit": 1413,
    "groups_coordinator_moved_mid_rebalance": 3013,
    "groups_cooperative_coordinator_moved": 8689,
    "groups_stalled_sync": 1107,
    "groups_static_timeout_late_commit": 198,
    "groups_append_failure": 6514,
    "groups_close_coordinator_moved": 11848,
    "groups_standalone_commit": 282,
    "groups_offset_fetch_failure": 582,
}


@pytest.mark.parametrize(("name", "states"), sorted(REAL.items()))
def test_protocol_holds_with_every_partner_reached(name: str, states: int) -> None:
    scenario = SCENARIOS[name]
    assert scenario.default == (name != "groups_cooperative_join") and scenario.model == "groups"
    result, _ = explore(build_model(scenario, "kafka"), name, "kafka", ExploreOptions())
    assert result.complete and not result.violated
    verdicts = {p.name: p.verdict for p in result.properties}
    assert all(v in (Verdict.HOLDS, Verdict.REACHED) for v in verdicts.values()), verdicts
    assert result.stats["distinct_states"] == states


CAUGHT = {
    ("groups_zombie_commit", "no_offset_commit_generation_check"): {
        "committed_offsets_never_regress": 14, "revoked_partitions_committed": 15, "commits_fenced_exactly": 7},
    ("groups_cooperative_join", "cooperative_assigns_before_revoke"): {"no_partition_owned_twice": 20},
    ("groups_late_commit", "offset_commit_any_generation"): {
        "committed_offsets_never_regress": 15, "revoked_partitions_committed": 18, "commits_fenced_exactly": 13},
    ("groups_coordinator_failover", "offset_commit_acked_before_log"): {
        "offsets_cache_matches_log": 6, "committed_offsets_never_regress": 7, "revoked_partitions_committed": 12},
    ("groups_lost_join_response", "rejoin_always_rebalances"): {"no_needless_rebalance": 4},
    ("groups_eager_late_join_zombie", "no_commit_on_revoke"): {"revoked_partitions_committed": 10},
    ("groups_offsets_expiry", "no_offset_fetch_on_assign"): {"new_owner_resumes_at_committed_offset": 11},
    ("groups_coordinator_failover", "rejoin_on_coordinator_change"): {"stable_members_rejoin_on_request": 6},
    ("groups_eager_rebalance", "rebalance_in_progress_resets_generation"): {"consumers_react_as_kafka": 6},
    ("groups_coordinator_failover", "load_drops_subscriptions"): {"group_metadata_matches_log": 10},
    ("groups_static_membership", "static_rejoin_rebalances"): {"no_needless_rebalance": 7},
    ("groups_zombie_commit", "fenced_member_keeps_partitions"): {"consumers_react_as_kafka": 6,
                                                                 "fenced_consumer_owns_nothing": 6},
    # the JoinGroup judge (onJoinPrepare's fenced commit, then the JoinGroup) and the identity a step hands out
    ("groups_eager_late_join_zombie", "join_prepare_commit_keeps_identity"): {"consumers_react_as_kafka": 11},
    ("groups_rebalance_timeout_static", "rebalance_timeout_answers_old_group"): {"consumer_identity_issued": 8},
    # a coordinator move mid-rebalance is a retriable failure: KAFKA-13214 (member reset), KAFKA-5154 (rebalance ended)
    ("groups_coordinator_moved_mid_rebalance", "retriable_join_error_resets_member"): {
        "coordinator_move_keeps_member": 4},
    ("groups_coordinator_moved_mid_rebalance", "failed_sync_ends_rebalance"): {
        "coordinator_move_keeps_member": 6, "rebalance_completes": 16},
    # a member that heartbeats but never syncs: without the pending-sync timer the group is stuck (KAFKA-12890)
    ("groups_stalled_sync", "no_pending_sync_expiry"): {"rebalance_completes": 4},
    # close()'s auto-commit answered NOT_COORDINATOR (the coordinator moved mid-commit) and not sent again (KAFKA-7540)
    ("groups_close_coordinator_moved", "close_commit_not_retried"): {"revoked_partitions_committed": 6},
    # an assign() consumer with a group.instance.id commits to the Empty group: refused before KAFKA-14201's fix
    ("groups_standalone_commit", "standalone_commit_member_checked"): {"commits_fenced_exactly": 1},
    # a failed group-metadata write answered REBALANCE_IN_PROGRESS to a static replacement's JoinGroup (KAFKA-10870)
    ("groups_append_failure", "join_rebalance_in_progress_fatal"): {"consumers_react_as_kafka": 7},
    # the offsets partition under-replicated: NOT_ENOUGH_REPLICAS passed to the client untranslated (KAFKA-3590)
    ("groups_append_failure", "append_not_enough_replicas_unmapped"): {
        "consumers_react_as_kafka": 4, "healthy_consumer_never_failed": 4, "stable_members_rejoin_on_request": 6,
        "rebalance_completes": 6},
    # the session timer a static member's replaced id leaves scheduled rebalances the Stable group (KAFKA-7196)
    ("groups_static_membership", "no_kafka_7196_fix"): {"rebalance_has_cause": 8},
    # a partition added between the leader's JoinGroup answer and its SyncGroup: the leader never rejoins (KAFKA-3949)
    ("groups_partitions_added", "no_kafka_3949_fix"): {"rebalance_completes": 8},
    # the new owner's OffsetFetch: a timed-out write answered as itself to a 3.8 consumer (KAFKA-17267), and a 4.0
    # consumer that does not retry COORDINATOR_NOT_AVAILABLE (KAFKA-17279)
    ("groups_offset_fetch_failure", "no_kafka_17267_fix"): {
        "consumers_react_as_kafka": 4, "healthy_consumer_never_failed": 4, "rebalance_completes": 6},
    ("groups_offset_fetch_failure", "no_kafka_17279_fix"): {
        "consumers_react_as_kafka": 4, "healthy_consumer_never_failed": 4, "rebalance_completes": 6},
}


@pytest.mark.parametrize(("key", "lengths"), sorted(CAUGHT.items()))
def test_weakened_variant_caught_with_minimal_replayable_trace(key: tuple[str, str], lengths: dict[str, int]) -> None:
    name, variant = key
    v = VARIANTS[variant]
    assert v.weakened and name in v.scenarios and set(v.breaks) == set(lengths)
    scenario = SCENARIOS[name]
    result, _ = explore(build_model(scenario, variant), name, variant, ExploreOptions())
    found = {p.name: p for p in result.violations()}
    assert {n: len(p.trace.actions) for n, p in found.items() if p.trace} == lengths
    fresh = build_model(scenario, variant)
    props = {p.name: p for p in fresh.properties()}
    for inv, prop_result in found.items():
        assert prop_result.trace is not None
        replay = replay_actions(fresh, prop_result.trace.actions, props[inv])
        assert replay.confirmed and replay.violated_at == len(prop_result.trace.actions), replay.reason
        real = build_model(scenario, "kafka")
        real_prop = {p.name: p for p in real.properties()}[inv]
        assert not replay_actions(real, prop_result.trace.actions, real_prop).confirmed


def test_the_zombie_commit_story_step_by_step() -> None:
    """c0 owns t0p0 and polls a record; its heartbeats are lost; c1 takes over, polls both records and
    commits 2; the zombie's commit of 1 is fenced -- unless the generation check is off."""
    story = [
        Action("FindCoordinator", (0,)), Action("FindCoordinator", (1,)),
        Action("JoinGroup", (0,)), Action("JoinGroup", (1,)), Action("CompleteJoin"),
        Action("SyncGroup", (0,)), Action("SyncGroup", (1,)),
    ]
    for variant, fenced in (("kafka", True), ("no_offset_commit_generation_check", False)):
        model = build_model(SCENARIOS["groups_zombie_commit"], variant)
        assert isinstance(model, GroupSystem)
        s = model.init_states()[0]
        for a in story:
            step = model.step(s, a)
            assert step is not None, a
            s = step.state
        owner = next(i for i, c in enumerate(s.consumers) if c.owned)
        other = 1 - owner
        for a in (Action("Poll", (owner, 0)), Action("LoseHeartbeats", (owner,)), Action("Heartbeat", (other,)),
                  Action("JoinGroup", (other,)), Action("CompleteJoin"), Action("SyncGroup", (other,)),
                  Action("Poll", (other, 0)), Action("Poll", (other, 0)), Action("Commit", (other,))):
            step = model.step(s, a)
            assert step is not None, a
            s = step.state
        assert s.group.offsets == ((0, 2),)
        step = model.step(s, Action("Commit", (owner,)))
        assert step is not None
        if fenced:
            assert "commit:UNKNOWN_MEMBER_ID" in step.events and step.state.group.offsets == ((0, 2),)
        else:
            assert "commit:accepted" in step.events and step.state.group.offsets == ((0, 1),)


@pytest.mark.parametrize("name", sorted(set(REAL) - {"groups_eager_rebalance"}))
def test_every_rebalance_can_complete_once_faults_stop(name: str) -> None:
    # AG EF settled over the whole state graph: from every reachable state, protocol and timing
    # steps alone lead to a Stable group whose running consumers all synced the current generation.
    model = build_model(SCENARIOS[name])
    assert isinstance(model, GroupSystem)
    assert unsettled_forever(model) == []


def test_the_liveness_check_finds_a_join_lost_in_failover(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without resending a JoinGroup that was parked at a coordinator that failed over, the consumer
    # waits forever: the check must find such states (it found this bug in the model).
    def find_without_resend(self: GroupSystem, s: GroupState, i: int) -> tuple[GroupState, tuple[str, ...]]:
        return self._put(s, i, s.consumers[i]._replace(coordinator=s.group.epoch)), ("find_coordinator",)

    monkeypatch.setitem(GroupSystem._HANDLERS, "FindCoordinator", find_without_resend)
    model = build_model(SCENARIOS["groups_coordinator_failover"])
    assert isinstance(model, GroupSystem)
    stuck = unsettled_forever(model)
    assert stuck and all(any(c.state == "JOINING" for c in s.consumers) for s in stuck)


def test_the_books_broadcast_assignor_overwrites_offsets() -> None:
    # A user-supplied assignor named in the scenario ("module:function"): the book's broadcast assignor
    # gives both consumers t0p0; one commits 2, the other 1 after it.
    scenario = SCENARIOS["groups_broadcast_assignor"]
    assert scenario.groups.topology.assignor == "keos.scenarios.assignor_examples:broadcast"
    result, _ = explore(build_model(scenario), scenario.name, "kafka", ExploreOptions(), scenario.permitted)
    verdicts = {p.name: p for p in result.properties}
    assert not result.violated
    for name in scenario.permitted:
        assert verdicts[name].verdict is Verdict.PERMITTED
    regress = verdicts["committed_offsets_never_regress"]
    assert regress.trace is not None and len(regress.trace.actions) == 12
    assert "committed offset is 1 but 2 was acknowledged" in regress.detail


def test_only_a_stable_member_sends_offset_commit() -> None:
    """Issue 23 (ConsumerCoordinator.sendOffsetCommitRequest uses generationIfStable(), Kafka 4.0): a cooperative
    member between its JoinGroup and SyncGroup keeps polling but sends no OffsetCommit.  Before the fix its commit
    was answered REBALANCE_IN_PROGRESS, it rejoined and restarted the rebalance, without end: the state space of
    groups_cooperative_commit_rebalance was unbounded (more than 600,000 states, depth 65+)."""
    model = build_model(SCENARIOS["groups_cooperative_commit_rebalance"])
    assert isinstance(model, GroupSystem)
    s = model.init_states()[0]
    seen = {model.fingerprint(s)}
    frontier, checked = [s], 0
    while frontier and len(seen) < 3000:
        nxt = []
        for state in frontier:
            for a in model.actions(state):
                c = state.consumers[a.args[0]] if a.kind == "Commit" else None
                if c is not None:
                    checked += 1
                    assert c.state not in ("JOINING", "AWAITING_SYNC"), (c, a)
                step = model.step(state, a)
                assert step is not None
                key = model.fingerprint(step.state)
                if key not in seen:
                    seen.add(key)
                    nxt.append(step.state)
        frontier = nxt
    assert checked


def test_commit_fencing_oracle_in_kafkas_order() -> None:
    """The member checks of a classic group, in Kafka's order (Kafka 4.0, trunk 1eb7644): the member, then the
    generation, then the request's own rebalance state (``ClassicGroup.validateOffsetCommit``,
    ``validateSyncGroup``, ``validateClassicGroupHeartbeat``)."""
    pr, cr = cg.PREPARING_REBALANCE, cg.COMPLETING_REBALANCE
    assert kafka_answer("OffsetCommit", False, 1, 2, cr) == Errors.UNKNOWN_MEMBER_ID
    assert kafka_answer("OffsetCommit", True, 1, 2, cr) == Errors.ILLEGAL_GENERATION
    assert kafka_answer("OffsetCommit", True, 2, 2, cr) == Errors.REBALANCE_IN_PROGRESS
    assert kafka_answer("OffsetCommit", True, 2, 2, pr) == Errors.NONE  # onJoinPrepare's auto-commit
    assert kafka_answer("TxnOffsetCommit", True, 2, 2, cr) == Errors.NONE  # KIP-447
    assert kafka_answer("SyncGroup", True, 2, 2, pr) == Errors.REBALANCE_IN_PROGRESS
    assert kafka_answer("Heartbeat", True, 2, 2, cr) == Errors.NONE
    assert kafka_answer("Heartbeat", True, 1, 2, pr) == Errors.ILLEGAL_GENERATION
    assert misfenced("OffsetCommit", "c0-0", True, 2, 2, cg.STABLE, Errors.NONE) == ""
    note = misfenced("TxnOffsetCommit", "c0-0", False, 1, 1, cg.STABLE, Errors.NONE)
    assert "answered NONE, Kafka answers UNKNOWN_MEMBER_ID" in note


def test_stable_leader_rejoin_with_unchanged_metadata_rebalances() -> None:
    """``classicGroupJoinExistingMember``: a Stable group's leader's JoinGroup forces a rebalance even with unchanged
    subscription metadata (the leader saw topic metadata change); a follower's is answered with the generation."""
    g = cg.empty_group()
    a = cg.join_group(g, 0, "", ())
    b = cg.join_group(a.group, 1, "", ())
    g = cg.complete_join(b.group, "range")
    res = cg.sync_group(g, g.leader, g.generation, {a.member_id: (0,), b.member_id: ()})
    assert res is not None and res.group.state == cg.STABLE
    follower = b.member_id if g.leader == a.member_id else a.member_id
    again = cg.join_group(res.group, 1, follower, ())
    assert again.immediate and again.group.state == cg.STABLE
    leader = cg.join_group(res.group, 0, g.leader, ())
    assert not leader.immediate and leader.group.state == cg.PREPARING_REBALANCE


def test_offset_commit_response_handler_judges_the_identity_it_was_sent_with() -> None:
    """``ConsumerCoordinator.OffsetCommitResponseHandler`` (trunk 1eb7644, KAFKA-9823): a fencing answer to a commit
    sent as (c0-0, 1) is only an exception for a consumer that has since left that identity *and* has its JoinGroup
    out; otherwise it resets the member; FENCED_INSTANCE_ID of a left identity is not fatal; NOT_COORDINATOR marks
    the coordinator unknown."""
    from keos.model.clients import consumer_coordinator as ccm

    sent = ("c0-0", 1)
    joining = ccm.fresh(up=True)._replace(member_id="c0-2", state=ccm.JOINING, coordinator=0)
    stable = joining._replace(generation=2, state=ccm.STABLE, owned=(0,), positions=((0, 1),))
    for error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
        assert ccm.on_commit_response(joining, error, sent) == joining
        assert ccm.on_commit_response(joining, error, sent, checks_generation=False).state == ccm.UNJOINED
        reset = ccm.on_commit_response(stable, error, sent)
        assert reset.state == ccm.UNJOINED and not reset.owned and reset.generation == ccm.NO_GENERATION
    assert ccm.on_commit_response(stable, Errors.UNKNOWN_MEMBER_ID, sent).member_id == ""
    assert ccm.on_commit_response(stable, Errors.ILLEGAL_GENERATION, sent).member_id == "c0-2"
    assert ccm.on_commit_response(stable, Errors.FENCED_INSTANCE_ID, sent) == stable
    assert ccm.on_commit_response(stable, Errors.FENCED_INSTANCE_ID, ("c0-2", 2)).state == ccm.FAILED
    assert ccm.on_commit_response(stable, Errors.REBALANCE_IN_PROGRESS, sent).state == ccm.UNJOINED
    assert ccm.on_commit_response(joining, Errors.REBALANCE_IN_PROGRESS, sent) == joining
    assert ccm.on_commit_response(stable, Errors.NOT_COORDINATOR, sent).coordinator == -1
    assert ccm.on_commit_response(stable, Errors.COORDINATOR_LOAD_IN_PROGRESS, sent) == stable
    assert ccm.on_commit_response(stable, Errors.NONE, sent) == stable


def test_kip_394_pending_member_round_trip() -> None:
    """JoinGroup v4+ (``classicGroupJoinNewDynamicMember`` / ``classicGroupJoinExistingMember``, trunk 1eb7644): a new
    dynamic member is answered MEMBER_ID_REQUIRED and kept pending; the barrier waits for it; its JoinGroup with the id
    is admitted and clears the entry; an orphan pending id expires and releases the barrier; a static member skips
    the round trip; a pending id unknown to a new coordinator is UNKNOWN_MEMBER_ID."""
    from keos.model.protocol.errors import MEMBER_ID_REQUIRED

    g = cg.empty_group()
    first = cg.join_group(g, 0, "", (), requires_member_id=True)
    assert first.error == MEMBER_ID_REQUIRED and first.group.pending == (first.member_id,)
    assert not first.group.members
    joined = cg.join_group(first.group, 0, first.member_id, (), requires_member_id=True)
    assert joined.error == Errors.NONE and joined.group.member(first.member_id) and not joined.group.pending
    assert cg.join_complete_ready(joined.group)
    orphan = cg.join_group(joined.group, 1, "", (), requires_member_id=True)
    assert orphan.error == MEMBER_ID_REQUIRED and not cg.join_complete_ready(orphan.group)
    released = cg.expire_pending(orphan.group, orphan.member_id)
    assert not released.pending and cg.join_complete_ready(released)
    kept = cg.join_group(orphan.group, 1, orphan.member_id, (), requires_member_id=True, clears_pending=False)
    assert kept.group.pending and not cg.join_complete_ready(kept.group)
    static = cg.join_group(g, 2, "", (), instance="i2", requires_member_id=True)
    assert static.error == Errors.NONE and static.group.member(static.member_id)
    assert cg.join_group(g, 0, first.member_id, (), requires_member_id=True).error == Errors.UNKNOWN_MEMBER_ID
