"""The distributed herder: leadership, assignment, rebalance, the zombie-fencing round, preflight.

``DistributedHerder`` (KIP-618 §Zombie fencing, §Task count records, §Leader access to config topic):

* **Rebalance.**  The workers that are running rejoin the group; a paused or
  crashed worker is dropped (session timeout).  The leader stays if it is
  still a member, otherwise the first member leads (Connect picks the member
  with the most recent config offset; all members here read to the end).  The
  leader reads the config topic to the end and assigns the tasks of the latest
  generation round-robin over the members sorted by id (``EagerAssignor``).
* **Write privileges** (KIP-618 §Leader access to config topic).  A new leader with
  ``exactly.once.source.support`` preparing or enabled claims the config topic
  (``claimWritePrivileges``, in its first tick: the same step as the rebalance): ``initTransactions()`` on
  ``connect-cluster-${groupId}`` fences every older leader.  A failed
  privileged write sets ``fencedFromConfigTopic`` and the leader reclaims on
  its next tick.
* **Zombie-fencing round** (:func:`fencing_plan`, ``doFenceZombieSourceTasks``):
  read the config topic to the end; if the connector is not pending fencing,
  answer 200 at once; if there is no task-count record yet, or both the
  recorded and the current task count are 1 (the single new task fences the
  single old one with its own ``initTransactions``, KIP-618 §Zombie fencing),
  skip the fencing; otherwise ``Admin.fenceProducers`` the transactional ids
  of tasks 0..record-1.  Then re-read: a task-config generation that advanced
  meanwhile is a 409 CONFLICT; else write the task-count record = the current
  task count through the leader's transactional producer.  A task-config update
  read while a round awaits its record fails that round at once with 409
  (:func:`_fail_active_rounds`), so the next fencing request starts a new round.
  A request that needs a fencing while a started round is active joins it
  (``activeZombieFencings.get``, ``addCallback``), whatever generation the round
  read: a round that outlived new task configs answers the new generation's
  requests with its 409 (``ZombieFencing.joined``).
* **Task reconfiguration** (:func:`reconfigure`, :func:`commit_task_configs`;
  ``KafkaConfigBackingStore.putTaskConfigs``, Kafka 4.0, apache/kafka 1eb7644): the
  task configs and their commit record are two privileged writes; workers apply a
  set only at its commit record, so a leader paused, crashed or fenced between them
  leaves an uncommitted set no worker acts on.  A leader dropped from the group
  finishes the call it was blocked in, but rejoins before a new reconfiguration.
* **Preflight validation** (:func:`preflight_errors`, ``AbstractHerder.validateConnectorConfig``).
"""

from __future__ import annotations

from keos.model.connect import config_topic as cfgt
from keos.model.connect import source_task as task
from keos.model.connect.cluster import ConnectCluster
from keos.model.connect.config_topic import ConfigSnapshot
from keos.model.connect.producers import (
    append_plain,
    end_transaction,
    fence_producers,
    init_transactions,
    send_transactional,
)
from keos.model.connect.records import CONFIG_TOPIC, LEADER_TID, ConnectState, task_tid
from keos.model.connect.worker import ConnectWorker, ZombieFencing
from keos.model.connect.worker import TaskPhase as P
from keos.model.connect.worker import WorkerStatus as W
from keos.model.log.partition import CONTROL_COMMIT, PartitionLeader
from keos.model.protocol.errors import Errors

__all__ = [
    "FENCE",
    "NOTHING_TO_DO",
    "WRITE_ONLY",
    "assignment",
    "claim_write_privileges",
    "commit_task_configs",
    "commit_task_count_record",
    "delete_connector",
    "elect_leader",
    "fail_config_write",
    "fail_zombie_fencing",
    "fence_zombies",
    "fencing_plan",
    "preflight_errors",
    "rebalance",
    "reconfigure",
    "rejoins",
    "transactional_leader",
    "write_task_count_record",
]

Result = tuple[ConnectState, tuple[str, ...]]  # no mutate: a type alias

#: Start-up phases: a revoked instance in one of them finishes its blocking call before it stops.
_STARTING = (P.FENCING_REQUESTED, P.FENCING_DONE, P.PRODUCER_READY)

#: Outcomes of :func:`fencing_plan`.
NOTHING_TO_DO = "not_pending"
WRITE_ONLY = "write_only"
FENCE = "fence"


def fencing_plan(snap: ConfigSnapshot) -> tuple[str, tuple[int, ...]]:
    """What the round does for a snapshot: (outcome, the tasks whose producers to fence)."""
    if not snap.pending_fencing:
        return NOTHING_TO_DO, ()
    record = snap.task_count_record
    if record < 0 or (record == 1 and snap.task_count == 1):
        return WRITE_ONLY, ()
    return FENCE, tuple(range(record))


def rejoins(wk: ConnectWorker) -> bool:
    """Whether worker ``wk`` is in the group after a rebalance: running, and not blocked outside the group.

    A deposed leader that resumes inside ``putTaskConfigs`` (its task configs written, the commit record
    not yet) finishes that call on its tick thread before the tick can rejoin the group.
    """
    return wk.status == W.RUNNING and (wk.member or wk.task_configs_written < 0)


def elect_leader(current: int, members: tuple[int, ...]) -> int:
    """The group's leader after a rebalance (-1 if nobody is left)."""
    if current in members:
        return current
    return members[0] if members else -1


def assignment(members: tuple[int, ...], task_count: int, workers: int) -> tuple[tuple[int, ...], ...]:
    """Tasks per worker: task ``n`` goes to ``members[n mod len(members)]``."""
    out: list[list[int]] = [[] for _ in range(workers)]
    if members:
        for n in range(task_count):
            out[members[n % len(members)]].append(n)
    return tuple(tuple(x) for x in out)


def transactional_leader(support: str, flag: bool) -> bool:
    """``transactionalLeaderEnabled``: support preparing or enabled (and the protocol switch on)."""
    return flag and support in ("preparing", "enabled")


def preflight_errors(
    exactly_once_support: str,
    connector_exactly_once: str,
    transaction_boundary: str,
    connector_boundaries: str,
    validating_worker_support: str,
) -> list[str]:
    """``DistributedHerder.validateSourceConnectorConfig`` under KIP-618 (Kafka 3.9): the pre-flight validation.

    ``validateSourceConnectorExactlyOnceSupport`` (``required`` needs ``exactly.once.source.support=enabled``
    on the validating worker and ``SUPPORTED`` from the connector) and
    ``validateSourceConnectorTransactionBoundary`` (``connector`` boundaries need ``SUPPORTED``).  Scenario
    parsing calls it (the leader validates): a rejected config never runs, tests/test_connect_model.py
    checks the rejections.
    """
    errors: list[str] = []
    if exactly_once_support == "required":
        if validating_worker_support != "enabled":  # no branch: a rejected config never runs (exit 2)
            errors.append(
                "exactly.once.support: 'required' but the worker validating the connector does not have "
                "exactly.once.source.support=enabled"
            )
        if connector_exactly_once == "UNSUPPORTED":  # no branch: a rejected config never runs (exit 2)
            errors.append(
                "exactly.once.support: the connector does not provide exactly-once support with the given "
                "configuration (SourceConnector::exactlyOnceSupport returned UNSUPPORTED)"
            )
        elif connector_exactly_once == "null":  # no branch: a rejected config never runs (exit 2)
            errors.append(
                "exactly.once.support: Connect cannot determine whether the connector provides exactly-once "
                "guarantees (exactlyOnceSupport returned null); consult its documentation and consider 'requested'"
            )
    unsupported = connector_boundaries != "SUPPORTED"
    if transaction_boundary == "connector" and unsupported:  # no branch: a rejected config never runs (exit 2)
        errors.append(
            "transaction.boundary: the connector does not support defining its own transaction boundaries "
            f"(canDefineTransactionBoundaries returned {connector_boundaries}); use 'poll' or 'interval'"
        )
    return errors


# -- the herder's steps (handlers of :class:`model.systems.connect.ConnectSystem`) ----------------------


def _fenced_from_config_topic(sys: ConnectCluster, s: ConnectState, w: int, answer: bool) -> ConnectState:
    """``PrivilegedWriteException``: fencedFromConfigTopic, producer closed; the round, its requesters fail (500)."""
    fenced = sys._txn_leader(w)  # a plain writer's failure is no PrivilegedWriteException (sendPrivileged, Kafka 4.0)
    s = sys._put(s, w, s.workers[w]._replace(config_producer=None, fenced_from_config_topic=fenced, fencing=None))
    # Only the round's own write answers its requests; a failed task-config or tombstone write is another
    # herder request (its REST caller gets the 500), unless connect_config_write_failure_answers_fencing is on.
    answer = answer or sys.flags.connect_config_write_failure_answers_fencing
    return sys._answer_requesters(s, P.FAILED) if answer else s


def claim_write_privileges(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """``claimWritePrivileges``: a new ``connect-cluster-${groupId}`` producer runs initTransactions (KIP-618).

    ``KafkaConfigBackingStore.claimWritePrivileges`` (Kafka 3.9): if the initialisation fails the
    producer is closed (``relinquishWritePrivileges``) and the herder sets
    ``fencedFromConfigTopic``, so its next tick tries again.
    """
    kafka, handle, events = init_transactions(s.kafka, LEADER_TID, len(s.kafka.partitions), sys.cc)
    s = s._replace(kafka=kafka)
    # A fresh InitProducerId is refused only with CONCURRENT_TRANSACTIONS, retried until the fenced txn completes.
    if handle is None:  # unreachable: init_transactions retries until the older transaction is aborted
        wk = s.workers[w]._replace(config_producer=None, fenced_from_config_topic=True)
        return sys._put(s, w, wk), (*events, "claim_write_privileges_failed")
    end = len(kafka.partitions[CONFIG_TOPIC].log)
    s = s._replace(ghost=s.ghost._replace(claims=(*s.ghost.claims, (w, end))))  # no mutate: ghost
    wk = s.workers[w]._replace(config_producer=handle, fenced_from_config_topic=False)
    return sys._put(s, w, wk), (*events, "claimed_write_privileges")


def _live_fenced(s: ConnectState, tasks: tuple[int, ...], generation: int) -> tuple[tuple[int, int, int, int], ...]:
    """The ghost's ``live_fenced`` after the group leader fenced ``tasks`` for ``generation``.

    A round fences the producers of *older* generations (KIP-618 §Zombie fencing): an instance of the
    round's generation holding a producer passed a round that already wrote its task-count record,
    so the connector cannot be pending fencing for it.  Only the group's leader starts a round
    (``ConnectSystem.actions``), and it reads the config topic and fences in one step.
    """
    hit = tuple(
        (v, t.task, t.generation, generation)  # no mutate: ghost
        for v, wk in enumerate(s.workers)  # no mutate: ghost
        for t in wk.tasks  # no mutate: ghost
        if t.task in tasks and t.generation >= generation  # no mutate: ghost
        and t.phase in (P.PRODUCER_READY, P.RUNNING)  # no mutate: ghost
    )
    return (*s.ghost.live_fenced, *hit)  # no mutate: ghost


def fence_zombies(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """``DistributedHerder.doFenceZombieSourceTasks`` up to Admin.fenceProducers (Kafka trunk 1eb7644).

    Kafka's order: the connector must exist in the herder's ``configState`` -- the snapshot of its last tick,
    not refreshed after the herder's own writes (:attr:`ConnectWorker.deleted_this_tick`) -- and only then is the
    config topic read to the end (``refreshConfigSnapshot``) and the round planned from it.  A connector the
    leader deleted in the same tick passes the first check; the refreshed snapshot then has no task count for
    it (``ClusterConfigState.taskCount``: 0) but keeps its task-count record and pending fencing
    (``processConnectorRemoval``).  So the round writes a task-count record of 0, or -- with old tasks to
    fence -- ``ZombieFencing.start()`` throws in ``Worker.fenceZombies`` (``configState.connectorConfig`` is
    null): the request fails, and the round it already put in ``activeZombieFencings`` is never removed, so a
    later request that would start a round joins it and fails (``addCallback`` before ``start``).
    ``connect_fencing_refreshes_first`` (variant ``fencing_refreshes_first``) refreshes before the check.
    """
    snap = sys._latest(s)
    stale = s.workers[w].deleted_this_tick and not sys.flags.connect_fencing_refreshes_first
    contains = snap.exists or stale
    active = s.workers[w].fencing
    s = sys._put(s, w, s.workers[w]._replace(config_generation=snap.generation))
    tick: tuple[str, ...] = ("fencing_request_in_deletion_tick",) if s.workers[w].deleted_this_tick else ()
    if not contains:  # NotFoundException: the connector was deleted
        return sys._answer_requesters(s, P.FAILED), (*tick, "fencing_connector_not_found")
    outcome, tasks = (fencing_plan if sys.flags.connect_fence_recorded_task_ids else _fencing_plan_by_count)(snap)
    if outcome == NOTHING_TO_DO:
        return sys._answer_requesters(s, P.FENCING_DONE), (*tick, "fencing_not_needed")
    if outcome == FENCE and active is not None and active.phase != "unstarted":
        # activeZombieFencings holds a started round: the request joins it (addCallback) and gets its answer,
        # whichever task-config generation the round read -- a round of replaced task configs answers 409.
        round_ = active._replace(joined=max(active.joined, snap.generation))
        return sys._put(s, w, s.workers[w]._replace(fencing=round_)), (*tick, "fencing_request_joined_round")
    if outcome == FENCE and active is not None:  # the unstarted round: addCallback throws IllegalStateException
        return sys._answer_requesters(s, P.FAILED), ("fencing_joined_unstarted_round",)
    if outcome == FENCE and not snap.exists:  # Worker.fenceZombies(connName, n, null): NullPointerException
        round_ = ZombieFencing(snap.generation, snap.task_count, "unstarted")
        s = sys._put(s, w, s.workers[w]._replace(fencing=round_))
        return sys._answer_requesters(s, P.FAILED), (*tick, "fencing_round_failed_to_start")
    events: tuple[str, ...] = (*tick, "fencing_skipped")
    if snap.task_count_record == 1 and snap.task_count == 1:
        events = (*tick, "fencing_skipped", "fencing_shortcut_1_to_1")
    if outcome == FENCE:
        kafka, ok, more = fence_producers(s.kafka, tuple(task_tid(n) for n in tasks), sys.cc)
        live = _live_fenced(s, tasks, snap.generation)  # no mutate: ghost
        s = s._replace(kafka=kafka, ghost=s.ghost._replace(live_fenced=live))  # no mutate: ghost
        events = (*tick, *more, "fence_producers")
        if not ok:  # unreachable: InitProducerId(-1, -1) succeeds (producers.py); FailZombieFencing is the fault
            return sys._answer_requesters(s, P.FAILED), (*events, "fencing_failed")
    round_ = ZombieFencing(snap.generation, snap.task_count)
    return sys._put(s, w, s.workers[w]._replace(fencing=round_)), events


def fail_zombie_fencing(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """Admin.fenceProducers fails (coordinator unreachable, missing ACLs): 500, the requesting tasks fail."""
    return sys._answer_requesters(s, P.FAILED), ("fencing_failed",)


def _answered_upto(round_: ZombieFencing) -> int:
    """The newest task-config generation a failed round answers: its own, or a newer one whose request joined it."""
    return max(round_.generation, round_.joined)


def _task_count_record(sys: ConnectCluster, w: int, round_: ZombieFencing) -> int:
    return cfgt.config_record(cfgt.TASK_COUNT, w, round_.generation, round_.task_count)


def write_task_count_record(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """Re-read the config topic (409 if the generation moved), then send the task-count record.

    ``DistributedHerder.ZombieFencing.onZombieFencingSuccess`` (Kafka 4.0, apache/kafka 1eb7644): after
    ``refreshConfigSnapshot`` a task-config generation newer than the round's fails it with 409 CONFLICT ("new task
    configurations were generated"); the leader's own reconfiguration fails the round earlier
    (:func:`_fail_active_rounds`), so this re-read is what stops a round whose leader stalled while another leader
    wrote new task configs (the reach scenario ``connect_disabled_leader_paused``)."""
    wk = s.workers[w]
    round_ = wk.fencing
    assert round_ is not None
    wk = wk._replace(config_generation=sys._latest(s).generation)
    # connect_fencing_conflict_on_new_generation is off only in the weakened variant fencing_conflict_ignored
    if wk.config_generation != round_.generation and sys.flags.connect_fencing_conflict_on_new_generation:
        s = sys._put(s, w, wk._replace(fencing=None))
        # the 409 answers the requests that joined the round: a newer generation's only if the round was still
        # active when the leader served them (it outlived the task-config update, see _fail_active_rounds)
        return sys._answer_requesters(s, P.FAILED, _answered_upto(round_)), ("fencing_409_conflict",)
    if not sys._txn_leader(w):
        return sys._put(s, w, wk._replace(fencing=round_._replace(phase="sent"))), ("task_count_record_batched",)
    assert wk.config_producer is not None
    rid = _task_count_record(sys, w, round_)
    kafka, h, error, events = send_transactional(s.kafka, wk.config_producer, CONFIG_TOPIC, (rid,), sys.flags)
    s = sys._put(s._replace(kafka=kafka), w, wk)
    if error != Errors.NONE:
        return _fenced_from_config_topic(sys, s, w, True), (*events, "config_write_fenced")
    wk = wk._replace(config_producer=h, fencing=round_._replace(phase="sent"))
    return sys._put(s, w, wk), (*events, "task_count_record_sent")


def commit_task_count_record(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """Commit (transactional leader) or flush (plain producer) the task-count record; answer 200."""
    wk = s.workers[w]
    round_ = wk.fencing
    assert round_ is not None
    events: tuple[str, ...] = ()
    if sys._txn_leader(w):
        assert wk.config_producer is not None
        kafka, h, error, events = end_transaction(s.kafka, wk.config_producer, True, sys.cc)
        s = s._replace(kafka=kafka)
        if error != Errors.NONE:
            return _fenced_from_config_topic(sys, s, w, True), (*events, "config_write_fenced")
        wk = wk._replace(config_producer=h)
    else:
        kafka, _ = append_plain(s.kafka, CONFIG_TOPIC, (_task_count_record(sys, w, round_),), sys.flags)
        s = s._replace(kafka=kafka)
    s = _acknowledge(s, (_task_count_record(sys, w, round_),), "task_count_record_written")
    wk = wk._replace(fencing=None, config_generation=sys._latest(s).generation)
    s = sys._answer_requesters(sys._put(s, w, wk), P.FENCING_DONE)
    return s, (*events, "task_count_record_written")


def fail_config_write(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """A privileged write fails: the leader must reclaim its privileges.

    The write is the commit record of the task configs the leader wrote (``putTaskConfigs`` throws: the
    reconfiguration fails, its task configs stay uncommitted and no fencing request is answered) or else
    the task-count record of its round (the round fails with 500).  A plain (non-transactional) leader's write
    fails too -- the config topic's partition is offline, the send times out -- and since KAFKA-14455 (PR #12984,
    Kafka 3.5: ``sendPrivileged`` awaits the plain producer's futures) ``putTaskConfigs`` throws all the same; it
    is no ``PrivilegedWriteException``, so the leader is not fenced from the config topic
    (:func:`_fenced_from_config_topic`).  ``connect_plain_config_write_acknowledged`` off (the weakened variant
    ``plain_config_write_failure_unseen``): the send is fire-and-forget, as before that fix.
    """
    wk = s.workers[w]
    unseen = not sys._txn_leader(w) and not sys.flags.connect_plain_config_write_acknowledged
    if wk.task_configs_written >= 0 and unseen:  # no branch: unseen only in the weakened variant
        # The weakened variant plain_config_write_failure_unseen (before KAFKA-14455): the plain producer's send
        # is not awaited, putTaskConfigs returns and the herder goes on as if the commit record were written.
        g = wk.task_configs_written
        rid = cfgt.config_record(cfgt.COMMIT, w, g, sys.topo.task_counts[g])
        s = _acknowledge(sys._put(s, w, wk._replace(task_configs_written=-1)), (rid,), "reconfigured")
        return s._replace(rebalance_pending=True), ("privileged_write_failed", "reconfigured")
    if wk.task_configs_written >= 0:
        s = sys._put(s, w, wk._replace(task_configs_written=-1))
        return _fenced_from_config_topic(sys, s, w, False), ("privileged_write_failed", "task_configs_uncommitted")
    return _fenced_from_config_topic(sys, s, w, True), ("privileged_write_failed",)


def _written_for_good(leader: PartitionLeader) -> frozenset[int]:
    """Record ids of the config topic with a copy that is written for good: in a non-transactional batch, or in a
    transactional batch its producer's COMMIT marker decided (``ProducerStateManager``: a control batch ends the
    producer's open transaction).  A copy in an aborted or still open transaction does not count."""
    done: set[int] = set()
    open_by_pid: dict[int, list[int]] = {}
    for e in leader.log:
        if e.control:
            decided = open_by_pid.pop(e.producer_id, [])
            if e.control == CONTROL_COMMIT:
                done.update(decided)
        elif e.transactional:
            open_by_pid.setdefault(e.producer_id, []).extend(e.records)
        else:
            done.update(e.records)
    return frozenset(done)


def _acknowledge(s: ConnectState, records: tuple[int, ...], what: str) -> ConnectState:
    """The herder goes on as if ``records`` were written: the ghost notes those the config topic does not hold.

    Since KAFKA-14455 (PR #12984, Kafka 3.5) every config-topic write of ``KafkaConfigBackingStore`` waits for
    its acknowledgement (``sendPrivileged``: the plain producer's futures, or the transactional producer's
    ``commitTransaction``) and throws on a failure, so a REST request that created or updated a connector, a
    ``putTaskConfigs`` that returned and a zombie-fencing round answered 200 all mean the records are in the
    config topic for good: a plain batch once appended (the producer's future completes with acks=all), a
    transactional one once its producer's commit marker follows.  Not "visible to a read_committed reader now":
    another writer's open transaction earlier in the log holds the LSO below a record that is already written
    (a disabled leader's plain write behind the enabled leader's task-count transaction,
    ``connect_disabled_leader_paused``), and every worker reads it once that transaction ends.  Called wherever
    the herder treats a write as done; the property ``acknowledged_config_writes_durable`` judges the ghost.
    """
    written = _written_for_good(s.kafka.partitions[CONFIG_TOPIC])
    missing = tuple((r, what) for r in records if r not in written)
    if not missing:
        return s
    return s._replace(ghost=s.ghost._replace(unwritten=(*s.ghost.unwritten, *missing)))  # no mutate: ghost


def _privileged_write(
    sys: ConnectCluster,
    s: ConnectState,
    w: int,
    records: tuple[int, ...],
    done: tuple[str, ...],
    rebalance: bool = True,
) -> Result:
    """``KafkaConfigBackingStore.sendPrivileged``: begin, send, commit (or a plain send without a fencable writer).

    A failed transactional write closes the producer and sets ``fencedFromConfigTopic``
    (``writeToConfigTopicAsLeader``); the request fails and is retried later.  A write that succeeded
    reports ``done`` (the request's own events: every privileged write -- task configs, their commit record,
    a connector's config or its tombstone -- fails the same way, in this one place); then, if ``rebalance``,
    a rebalance is due: the workers read a change that needs one (``onConnectorConfigUpdate`` of a new
    connector, ``onConnectorConfigRemove``, ``onTaskConfigUpdate`` at a commit record).  Task configs alone
    call no listener (``processTaskConfigRecord`` defers them).
    """
    wk = s.workers[w]
    events: tuple[str, ...] = ()
    if sys._txn_leader(w):
        assert wk.config_producer is not None
        kafka, h, error, events = send_transactional(s.kafka, wk.config_producer, CONFIG_TOPIC, records, sys.flags)
        if error == Errors.NONE:
            kafka, h, error, more = end_transaction(kafka, h, True, sys.cc)
            events = (*events, *more)
        s = s._replace(kafka=kafka)
        if error != Errors.NONE:
            return _fenced_from_config_topic(sys, s, w, False), (*events, "config_write_fenced")
        wk = wk._replace(config_producer=h)
    else:
        kafka, _ = append_plain(s.kafka, CONFIG_TOPIC, records, sys.flags)
        s = s._replace(kafka=kafka)
    s = _acknowledge(s, records, done[0])
    s = sys._put(s, w, wk._replace(config_generation=sys._latest(s).generation))
    return s._replace(rebalance_pending=s.rebalance_pending or rebalance), (*events, *done)


def _fail_active_rounds(sys: ConnectCluster, s: ConnectState) -> Result:
    """``ConfigUpdateListener.onTaskConfigUpdate`` fails the active zombie-fencing round at once (409 CONFLICT).

    ``DistributedHerder`` (Kafka 4.0, apache/kafka 1eb7644): when a worker reads new task configs of a
    connector it calls ``completeExceptionally`` on the connector's entry of ``activeZombieFencings``
    ("a new set of task configs was generated"): the round's followup is done, so
    ``onZombieFencingSuccess`` writes no task-count record, every request waiting on the round is answered
    409 as soon as Admin.fenceProducers has returned (it has, in a round of phase ``fenced``), and the
    round leaves ``activeZombieFencings``: a fencing request of the new generation starts a new round
    instead of joining the stale one.  The leader reads the configs it wrote in the same step; a round
    whose record is already being written (phase ``sent``) finishes its write first.  With
    ``connect_config_update_fails_fencing`` off the round stays until WriteTaskCountRecord's re-read.
    """
    if not sys.flags.connect_config_update_fails_fencing:  # no branch: off only in a weakened variant
        return s, ()
    stale = [
        w for w, wk in enumerate(s.workers)
        if wk.status == W.RUNNING and wk.fencing is not None and wk.fencing.phase == "fenced"
    ]
    if not stale:
        return s, ()
    upto = max(_answered_upto(s.workers[w].fencing) for w in stale)  # type: ignore[arg-type]
    for w in stale:
        s = sys._put(s, w, s.workers[w]._replace(fencing=None))
    return sys._answer_requesters(s, P.FAILED, upto), ("fencing_409_conflict",)


def reconfigure(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """The connector requests a task reconfiguration: ``putTaskConfigs`` writes the task configs first.

    ``KafkaConfigBackingStore.putTaskConfigs`` (Kafka 4.0, apache/kafka 1eb7644) reads the config topic to
    the end, sends the task configs in one privileged write, reads to the end again and sends the commit
    record in a second privileged write (:func:`commit_task_configs`).  Workers defer task configs until
    their commit record (:func:`model.connect.config_topic.snapshot`), so the first write changes no
    snapshot and calls no listener -- unless the set counts as effective at once (the weakened variant
    ``uncommitted_task_configs_effective``: then it is the task-config update).  For a deleted connector
    the leader first writes its config again (the connector is created anew, starts and generates its
    task configs; modelled as one write with the task configs): a new connector needs a rebalance.
    """
    snap = sys._latest(s)
    g = snap.generation + 1
    count = sys.topo.task_counts[g]
    created = () if snap.exists else (cfgt.config_record(cfgt.CONNECTOR_CONFIG, w, g, 1),)
    records = (*created, *(cfgt.config_record(cfgt.TASK_CONFIG, w, g, n) for n in range(count)))
    at_commit = sys.flags.connect_task_configs_effective_at_commit
    done = ("task_configs_written", *(("connector_recreated",) if created else ()))
    s, events = _privileged_write(sys, s, w, records, done, bool(created) or not at_commit)
    # A member leader holding its claim is fenced only by a newer leader's claim, which needs a rebalance that
    # deposes it: a member's task-config write does not fail (FailConfigWrite strikes the commit record).
    if "task_configs_written" not in events:  # no branch: see above (putTaskConfigs would throw)
        return s, events
    s = sys._put(s, w, s.workers[w]._replace(task_configs_written=g))
    if at_commit:  # no branch: off only in the weakened variant uncommitted_task_configs_effective
        return s, events
    s, failed = _fail_active_rounds(sys, s)
    return s, (*events, *failed)


def commit_task_configs(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """``putTaskConfigs``' second privileged write: the commit record that makes the task configs effective.

    Every worker that reads it applies the deferred set (``processTasksCommitRecord``) and calls
    ``onTaskConfigUpdate``: a rebalance is due and the leader's active zombie-fencing round fails with 409
    (:func:`_fail_active_rounds`).  A leader deposed meanwhile still sends it (its tick thread was blocked
    in the call): a transactional leader's write is then refused as fenced.
    """
    wk = s.workers[w]
    g = wk.task_configs_written
    s = sys._put(s, w, wk._replace(task_configs_written=-1))
    count = sys.topo.task_counts[g]
    was = sys._latest(s).generation
    s, events = _privileged_write(sys, s, w, (cfgt.config_record(cfgt.COMMIT, w, g, count),), ("reconfigured",))
    if "reconfigured" not in events:  # the commit record was refused: the task configs stay uncommitted
        return s, (*events, "task_configs_uncommitted")
    # processTasksCommitRecord calls onTaskConfigUpdate with the tasks it applied: a commit record whose task configs
    # another leader's commit already consumed (an incomplete set) applies none, and fails no round
    # (KafkaConfigBackingStore, DistributedHerder.ConfigUpdateListener; Kafka 4.0, apache/kafka 1eb7644).
    if sys._latest(s).generation == was:
        return s, (*events, "task_configs_commit_applied_nothing")
    s, failed = _fail_active_rounds(sys, s)
    return s, (*events, *failed)


def delete_connector(sys: ConnectCluster, s: ConnectState, w: int) -> Result:
    """``DELETE /connectors/{c}``: the leader writes the connector's config tombstone (``removeConnectorConfig``).

    Every worker reads it (``processConnectorRemoval``): the connector has no tasks, so the next
    rebalance revokes them all; its task-count record is kept (a zombie of a deleted connector must
    be fenced if it is created again).
    """
    snap = sys._latest(s)
    tombstone = cfgt.config_record(cfgt.CONNECTOR_CONFIG, w, snap.generation, 0)
    s, events = _privileged_write(sys, s, w, (tombstone,), ("connector_deleted",))
    if "connector_deleted" in events:  # no branch: a member leader's write does not fail (see reconfigure)
        s = sys._put(s, w, s.workers[w]._replace(deleted_this_tick=True))
    return s, events


def rebalance(sys: ConnectCluster, s: ConnectState) -> Result:
    """A rebalance: running workers rejoin, the leader assigns the latest generation's tasks.

    Members stop the instances they lost or whose task configs changed
    (committing their open transaction first); an instance still in its
    start-up (blocked in preProducerCheck, before initTransactions or in
    postProducerCheck) is only marked stopping: its thread finishes that call
    first (``Worker.stopAndAwaitTask``), and the worker starts no new instance
    of the task until it is gone.  Paused and crashed workers leave the group
    but keep their (stale) local state.

    A FAILED instance the worker keeps at the same generation stays FAILED
    (``DistributedHerder.startWork`` starts only the assigned tasks missing
    from the running assignment, and a failed ``WorkerTask`` is still in it;
    Kafka 3.9, incremental cooperative protocol): only a restart request
    (``RestartFailedTask``) starts it again.  With
    ``connect_failed_task_stays_failed`` off, failed instances are dropped and
    restarted, as under the eager protocol.
    """
    members = tuple(w for w, wk in enumerate(s.workers) if rejoins(wk))
    leader = elect_leader(s.leader, members)
    end = cfgt.read_to_end(sys._config(s))
    snap = sys._snapshot(s, end)
    asg = assignment(members, snap.task_count, len(s.workers))
    events: tuple[str, ...] = ("rebalance",)
    for w, wk in enumerate(s.workers):
        if w not in members:
            s = sys._put(s, w, wk._replace(member=False))
            continue
        for inst in wk.tasks:
            drop_failed = inst.phase == P.FAILED and not sys.flags.connect_failed_task_stays_failed
            if not (drop_failed or inst.task not in asg[w] or inst.generation != snap.generation):
                continue
            if inst.phase in _STARTING:
                if not inst.stopping:
                    s = sys._put(s, w, s.workers[w].with_instance(inst._replace(stopping=True)))
                    events = (*events, "task_stopping_in_startup")
                continue
            s, more = task.stop(sys, s, w, inst)
            events = (*events, *more)
        wk = s.workers[w]._replace(
            member=True, leader=w == leader, assigned=asg[w], config_generation=snap.generation, deleted_this_tick=False
        )
        if w != leader:
            # The tick of a worker that no longer leads clears fencedFromConfigTopic; the fencable producer is
            # kept (KafkaConfigBackingStore closes it only on a failed claim or write, or at shutdown), so a
            # worker elected again later writes with it -- already fenced by the leaders in between.
            wk = wk._replace(fenced_from_config_topic=False, fencing=None)
        s = sys._put(s, w, wk)
    if leader != s.leader:
        events = (*events, "leader_changed")
        if leader >= 0 and not sys._txn_leader(leader):  # no mutate: ghost
            s = s._replace(ghost=s.ghost._replace(claims=(*s.ghost.claims, (leader, end))))  # no mutate: ghost
    if leader >= 0 and sys._txn_leader(leader) and s.workers[leader].config_producer is None:
        # onAssigned of the leader: claimWritePrivileges (a no-op while it holds a producer).
        s, more = claim_write_privileges(sys, s, leader)
        events = (*events, *more)
    # A group may rebalance at any time in Kafka: a rebalance left due is one more the environment may run.
    s = s._replace(leader=leader)
    return s._replace(rebalance_pending=False), events  # no mutate: when the group rebalances


def _fencing_plan_by_count(snap: ConfigSnapshot) -> tuple[str, tuple[int, ...]]:
    """The weakened variant ``fencing_round_fences_task_count``: a round fences the current task count's ids."""
    outcome, tasks = fencing_plan(snap)
    return outcome, tuple(range(snap.task_count)) if tasks else ()
