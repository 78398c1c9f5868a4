"""Invariants of Kafka Connect's exactly-once source support (KIP-618), over the Connect model.

Sources are KIP-618's sections (Goals, Atomic offset writes, Task count records,
Source task startup, Leader access to config topic, its zombie and heterogeneous-cluster
scenarios) and the Connect runtime (``ExactlyOnceWorkerSourceTask``, ``DistributedHerder``).
What is *committed* is read from the control batches in the logs
(:func:`invariants.connect_logs.entry_fates`), not from the LSO, so a duplicate
is caught as soon as its transaction commits.

Each ``always`` property names its ``sometimes`` partners; properties that
need a fault or a reconfiguration to be meaningful are only checked by
scenarios that have one (like :mod:`invariants.transactions`).
"""

from __future__ import annotations

from functools import lru_cache

from keos.invariants._common import no_findings, sometimes_event, sometimes_state
from keos.invariants.connect_boundaries import transaction_boundary_properties
from keos.invariants.connect_bounds import connect_bounds_properties
from keos.invariants.connect_logs import (
    committed_offsets,
    committed_records,
    config_record_label,
    entry_fates,
    task_count_follows_generation,
)
from keos.invariants.connect_offsets import (
    acknowledgement_properties,
    task_offsets_properties,
    tombstone_properties,
)
from keos.invariants.connect_progress import connect_progress_properties
from keos.model.clients.consumer import COMMITTED, READ_COMMITTED, fetch
from keos.model.connect import config_topic as cfgt
from keos.model.connect.herder import rejoins
from keos.model.connect.records import (
    CONFIG_TOPIC,
    CONNECT_FAULT_KINDS,
    CONNECTOR_OFFSETS,
    GLOBAL_OFFSETS,
    OUTPUT,
    ConnectConfig,
    ConnectState,
)
from keos.model.connect.worker import TaskPhase, WorkerStatus, decode_source_record, source_record_label
from keos.model.interface import Expectation, Property
from keos.model.log.partition import PartitionLeader

__all__ = ["connect_properties"]


def _by_partition(s: ConnectState, sources: int) -> list[list[tuple[int, int]]]:
    """Per source partition: (output offset, record id) of every committed output record, in log order."""
    out: list[list[tuple[int, int]]] = [[] for _ in range(sources)]
    for offset, rid in committed_records(s.kafka.partitions[OUTPUT]):
        out[decode_source_record(rid)[3]].append((offset, rid))
    return out


def _delivery_problems(sources: int, records: int, s: ConnectState) -> list[str]:
    """Per source partition: each of its records committed at most once, in order, no gap but the discarded ones."""
    problems: list[str] = []
    discarded = set(s.ghost.discarded)
    for p, recs in enumerate(_by_partition(s, sources)):
        first: dict[int, tuple[int, int]] = {}
        expect = 0
        for offset, rid in recs:
            k = decode_source_record(rid)[4]
            if k in first:
                o0, r0 = first[k]
                problems.append(
                    f"src{p}[{k}] is committed twice: offset {o0} {source_record_label(r0)} and offset {offset} "
                    f"{source_record_label(rid)}"
                )
                continue
            first[k] = (offset, rid)
            if k >= records:
                problems.append(f"src{p}[{k}] is committed at offset {offset}, but src{p} has only {records} records")
            while (p, expect) in discarded:
                expect += 1
            if (p, k) in discarded:
                problems.append(
                    f"src{p}[{k}] is committed at offset {offset} ({source_record_label(rid)}) although the connector "
                    "aborted its transaction: its offset was committed so that it is not reprocessed"
                )
            elif k != expect:
                problems.append(f"src{p}[{k}] is committed at offset {offset} out of order or after a gap")
            expect = max(expect, k + 1)
    return problems


def _offsets(s: ConnectState, config: ConnectConfig) -> tuple[int, ...]:
    sources = config.topology.source_partitions
    glob = committed_offsets(s.kafka.partitions[GLOBAL_OFFSETS], sources)
    if config.topology.offsets_topic != "connector":
        return glob
    own = committed_offsets(s.kafka.partitions[CONNECTOR_OFFSETS], sources)
    return tuple(o if o >= 0 else g for o, g in zip(own, glob))


def _offset_problems(config: ConnectConfig, s: ConnectState) -> list[str]:
    topo = config.topology
    offsets = _offsets(s, config)
    problems: list[str] = []
    for p, recs in enumerate(_by_partition(s, topo.source_partitions)):
        if p in s.deleted_sources:  # finished and forgotten with a tombstone (invariants/connect_offsets.py)
            continue
        offset = max(offsets[p], 0)
        have = {decode_source_record(rid)[4] for _, rid in recs}
        missing = [k for k in range(offset) if k not in have and (p, k) not in s.ghost.discarded]
        if missing:
            problems.append(f"the source offset of src{p} is committed at {offset} but src{p}[{missing[0]}] is not")
        for _, rid in recs:
            _g, w, _n, _p, k = decode_source_record(rid)
            if topo.workers[w] == "enabled" and k >= offset:
                problems.append(
                    f"{source_record_label(rid)} of an exactly-once task is committed but the source offset of "
                    f"src{p} is {offset}"
                )
    return problems


def _fenced_generation_commits(s: ConnectState) -> list[str]:
    problems: list[str] = []
    for offset, rid in committed_records(s.kafka.partitions[OUTPUT]):
        g = decode_source_record(rid)[0]
        for g2, end in s.ghost.starts:
            if g2 > g and end <= offset:
                problems.append(
                    f"{source_record_label(rid)} at output offset {offset} is committed, written after a task of "
                    f"generation {g2} started (output end {end}): generation {g} should have been fenced"
                )
                break
    return problems


def _live_instances_fenced(s: ConnectState) -> list[str]:
    return [
        f"worker {w}'s task {n} of generation {tg}, the task's current instance, was fenced on behalf of generation "
        f"{g} (a zombie-fencing round, or the producer of a revoked instance): only zombies may be fenced"
        for w, n, tg, g in s.ghost.live_fenced
    ]


@lru_cache(maxsize=65536)
def _deleted_since_commit(config: PartitionLeader) -> bool:
    """Whether a tombstone deleted the connector after the commit record of its latest task-config generation.

    A connector created again has no generation of its own until its new task configs are committed
    (``putTaskConfigs`` writes the commit record in a second privileged write): the latest generation's
    tasks then belong to the deleted connector.
    """
    deleted, exists = False, True
    for rid in fetch(config, READ_COMMITTED):
        r = cfgt.decode_config_record(rid)
        if r.kind == cfgt.COMMIT and exists:
            deleted = False
        elif r.kind == cfgt.CONNECTOR_CONFIG:
            exists = r.value == 1
            deleted = deleted or not exists
    return deleted


@lru_cache(maxsize=65536)
def _live_generation(config: PartitionLeader) -> int:
    """The task-config generation the connector's current incarnation runs, by the checker's own read (-1: none).

    ``KafkaConfigBackingStore`` as Kafka 4.0 documents it, not the model's reader: a commit record applies the
    task configs read since the previous commit (or tombstone) if they cover tasks 0..count-1, and only while
    the connector has a config (``processTasksCommitRecord`` ignores a deleted connector's commit, KAFKA-16838);
    a tombstone drops the connector's task configs (``processConnectorRemoval``, KAFKA-8869).  -1 while the
    connector is deleted, or created again with no committed task configs yet.
    """
    generation, live, exists = -1, -1, True
    deferred: set[int] = set()
    for rid in fetch(config, READ_COMMITTED):
        r = cfgt.decode_config_record(rid)
        if r.kind == cfgt.TASK_CONFIG:
            deferred.add(r.value)
        elif r.kind == cfgt.COMMIT:
            if exists and deferred and all(n in deferred for n in range(r.value)):
                generation += 1
                live = generation
            deferred = set()
        elif r.kind == cfgt.CONNECTOR_CONFIG:
            exists, live, deferred = r.value == 1, -1, set()
    return live


@lru_cache(maxsize=65536)
def committed_task_counts(config: PartitionLeader) -> tuple[int, ...]:
    """The task count of each task-config generation (0, 1, ...) the config topic committed, by the checker's read.

    ``KafkaConfigBackingStore`` (Kafka 4.0, apache/kafka 1eb7644) as its javadoc and code state it: a commit record
    of a connector with a config applies the task configs read since the previous commit (or tombstone) only if
    they cover tasks 0..count-1 (``completeTaskIdSet``) -- else the connector is inconsistent and
    ``ClusterConfigState.tasks`` is empty -- and each applied commit is the next ``taskConfigGeneration``; a
    tombstone drops the deferred configs (``processConnectorRemoval``) and a deleted connector's commit applies
    nothing (KAFKA-16838).
    """
    counts: list[int] = []
    exists = True
    deferred: set[int] = set()
    for rid in fetch(config, READ_COMMITTED):
        r = cfgt.decode_config_record(rid)
        if r.kind == cfgt.TASK_CONFIG:
            deferred.add(r.value)
        elif r.kind == cfgt.COMMIT:
            if exists and deferred and all(n in deferred for n in range(r.value)):
                counts.append(r.value)
            deferred = set()
        elif r.kind == cfgt.CONNECTOR_CONFIG:
            exists, deferred = r.value == 1, set()
    return tuple(counts)


def _uncommitted_task_instances(s: ConnectState) -> list[str]:
    """Task instances of a generation the config topic never committed, or beyond its task count."""
    counts = committed_task_counts(s.kafka.partitions[CONFIG_TOPIC])
    return [
        f"worker {w} runs task {t.task} of task-config generation {t.generation}, but "
        + (
            f"the config topic committed only generations 0..{len(counts) - 1}"
            if t.generation >= len(counts)
            else f"generation {t.generation}'s committed task configs cover tasks 0..{counts[t.generation] - 1}"
        )
        for w, wk in enumerate(s.workers)
        for t in wk.tasks
        if t.generation >= len(counts) or t.task >= counts[t.generation]
    ]


def _task_count_record_mismatches(s: ConnectState) -> list[str]:
    """Committed task-count records whose count is not the task count of the generation they follow.

    The checker's own read of the config topic (as :func:`_live_generation`): a task-count record written by a
    round of generation g carries generation g's task count -- the number of task ids the next round must fence.
    Between a connector's tombstone (or its re-creation) and the first commit of its new task configs a record is
    not judged: a round that started before the deletion writes the deleted incarnation's count (its re-read sees
    no new task-config generation), and a round of the re-created connector writes the count of none (0).
    """
    return list(_count_record_mismatches(s.kafka.partitions[CONFIG_TOPIC]))


@lru_cache(maxsize=65536)
def _count_record_mismatches(config: PartitionLeader) -> tuple[str, ...]:
    """:func:`_task_count_record_mismatches` of the config topic's leader (a judge of the topic alone, cached by
    its value: most states a search reaches share their config topic with many others)."""
    count, exists, generation, problems = -1, True, -1, []
    deferred: set[int] = set()
    for rid in fetch(config, READ_COMMITTED):
        r = cfgt.decode_config_record(rid)
        if r.kind == cfgt.TASK_CONFIG:
            deferred.add(r.value)
        elif r.kind == cfgt.COMMIT:
            if exists and deferred and all(n in deferred for n in range(r.value)):
                count, generation = r.value, generation + 1
            deferred = set()
        elif r.kind == cfgt.CONNECTOR_CONFIG:  # not judged again until the new incarnation's first commit
            exists, deferred, count = r.value == 1, set(), -1
        elif count >= 0 and r.value != count:
            problems.append(
                f"{config_record_label(rid)} follows task configs of {count} task(s): the next round would fence "
                f"task ids 0..{r.value - 1} instead of 0..{count - 1}"
            )
        elif count >= 0 and r.generation < generation:
            problems.append(
                f"{config_record_label(rid)} was written by a round of generation {r.generation} after the task "
                f"configs of generation {generation} were committed (such a round fails with 409, or its "
                f"leader's write is fenced): generation {generation} is no longer pending fencing although no "
                "round fenced for it"
            )
    return tuple(problems)


def _deleted_connector_assignments(s: ConnectState) -> list[str]:
    """Once the group settled (no rebalance due), members assigned tasks the connector's live incarnation lacks."""
    if s.rebalance_pending or any(rejoins(wk) != wk.member for wk in s.workers):
        return []
    live = _live_generation(s.kafka.partitions[CONFIG_TOPIC])
    return [
        f"worker {w} is assigned tasks {list(wk.assigned)} of task-config generation {wk.config_generation} after "
        f"the group rebalanced, but "
        + (
            "the connector has no committed task configs of its own (deleted, or created again and its new "
            "task configs not committed)"
            if live < 0
            else f"the connector's current task configs are generation {live}"
        )
        for w, wk in enumerate(s.workers)
        if wk.status == WorkerStatus.RUNNING
        and wk.member
        and wk.assigned
        and (live < 0 or wk.config_generation > live)
    ]


def _healthy_failures(s: ConnectState) -> list[str]:
    """In a run without faults: instances of the latest task-config generation that failed, in their start-up
    (the zombie-fencing round answered 409/500, initTransactions or the re-read threw) or in their send loop."""
    if any(s.faults_used):
        return []
    config = s.kafka.partitions[CONFIG_TOPIC]
    snap = cfgt.snapshot(config, cfgt.read_to_end(config))
    if _deleted_since_commit(config):  # the latest generation's connector was deleted: its requests get 404
        return []
    latest = snap.generation
    return [
        f"worker {w}'s task {t.task} of generation {t.generation}, the latest, failed in its "
        f"{'send loop' if t.positions else 'start-up'} although no fault was injected"
        for w, wk in enumerate(s.workers)
        for t in wk.tasks
        if t.phase == TaskPhase.FAILED and t.generation == latest
    ]


def _deposed_leader_writes(s: ConnectState) -> list[str]:
    config = s.kafka.partitions[CONFIG_TOPIC]
    fates = entry_fates(config)
    problems: list[str] = []
    for offset, e in enumerate(config.log):
        if fates[offset] != COMMITTED:
            continue
        for rid in e.records:
            writer = cfgt.decode_config_record(rid).writer
            if writer < 0:
                continue
            claims = [(w, end) for w, end in s.ghost.claims if end <= offset]
            if claims and claims[-1][0] != writer:
                w2, end = claims[-1]
                problems.append(
                    f"{config_record_label(rid)} is committed at config offset {offset} although worker {w2} "
                    f"claimed the config topic as leader at offset {end}"
                )
    return problems


_CONFIG_WRITE_FAULT = CONNECT_FAULT_KINDS.index("config_write_failure")


def _healthy_leaders_fenced(s: ConnectState) -> list[str]:
    """Running workers fenced from the config topic whose own claim is still the latest one.

    ``fencedFromConfigTopic`` is set only by a failed privileged write.  The leader's transactional producer
    (``connect-cluster-${groupId}``) is fenced only by a newer ``claimWritePrivileges`` of another worker
    (KIP-618 §Leader access to config topic): a leader whose claim is the latest one that fails its write
    was fenced by its own stale producer state (an epoch, a sequence or a partition set the client failed to
    carry over from its last commit), or by a write failure injected as a fault.
    """
    if s.faults_used[_CONFIG_WRITE_FAULT] or not s.ghost.claims:
        return []
    latest = s.ghost.claims[-1][0]
    return [
        f"worker {w} is fenced from the config topic, but no worker claimed the config topic after its own "
        f"claim at config offset {s.ghost.claims[-1][1]}: only a newer leader fences the leader's producer"
        for w, wk in enumerate(s.workers)
        if wk.fenced_from_config_topic and w == latest
    ]


def _illegal(s: ConnectState, coordinator: bool) -> list[str]:
    """The ghost's illegal changes: coordinator transitions, or task-instance changes (``task:``)."""
    return [e for e in s.ghost.illegal if e.startswith("task:") != coordinator]


def _unfenced_starts(s: ConnectState) -> list[str]:
    config = s.kafka.partitions[CONFIG_TOPIC]
    return [
        f"worker {w}'s task {t.task} of generation {t.generation} is running, but no task-count record follows "
        f"generation {t.generation}'s task configs in the config topic"
        for w, wk in enumerate(s.workers)
        for t in wk.tasks
        if t.exactly_once
        and t.phase == TaskPhase.RUNNING
        and not task_count_follows_generation(config, t.generation)
    ]


def connect_properties(config: ConnectConfig) -> tuple[Property, ...]:
    """The Connect properties for a model with ``config``."""
    topo = config.topology
    faults = config.faults
    sources, records = topo.source_partitions, topo.records
    leader_can_change = faults.pause > 0 or faults.crash > 0
    generations = len(topo.task_counts) > 1
    plain_sends_fail = faults.send_failure > 0 and "disabled" in topo.workers
    props: list[Property] = [
        no_findings(
            name="exactly_once_source_delivery",
            fact="Each record of each source partition appears in the committed output at most once, in order and "
            "without gaps, across worker pauses, crashes, rebalances and reconfigurations; the only gaps are the "
            "records of transactions the connector aborted, which never appear (their offsets are committed so "
            "that they are not reprocessed).",
            source="KIP-618 §Goals (source offset accuracy and zombies); "
            "connect_distributed_test.py::test_exactly_once_source; TransactionContext.abortTransaction javadoc",
            catches="KAFKA-13719 / KAFKA-9841 duplicate tasks without fencing; KIP-618's "
            "worker-lag duplicate; offsets written outside the records' transaction",
            findings=lambda s: _delivery_problems(sources, records, s),
            # a failed copy into the global offsets topic must be followed by a task resuming from its own, newer
            # offsets (ConnectorOffsetBackingStore.get: the connector store overrides the worker store)
            partners=(
                "source_record_committed",
                *(("resumed_ahead_of_global_offsets",) if faults.offset_copy_failure > 0 else ()),
                *(("started_past_foreign_offset_record",) if faults.foreign_offset_record > 0 else ()),
                # a failed at-least-once task's final offset commit (WorkerSourceTask.finalOffsetCommit)
                *(("failed_task_offsets_flushed",) if plain_sends_fail else ()),
            ),
        ),
        no_findings(
            name="offsets_committed_with_records",
            fact="A committed source offset k means records 0..k-1 are committed, and a record an exactly-once "
            "task wrote is committed only with its offset: offsets are committed iff their records are (an "
            "at-least-once task commits records first and offsets later).",
            source="KIP-618 §Atomic offset writes; ``ExactlyOnceWorkerSourceTask.commitTransaction``",
            catches="offsets flushed outside the records' transaction (exactly.once.source.support=disabled)",
            findings=lambda s: _offset_problems(config, s),
            # an at-least-once task's failed send must leave its record's offset uncommitted (KAFKA-8586)
            partners=("source_offsets_committed", *(("at_least_once_send_failed",) if plain_sends_fail else ())),
        ),
        no_findings(
            name="task_starts_after_task_count_record",
            fact="An exactly-once source task of generation g runs only if a task-count record follows generation "
            "g's task configs in the config topic (its zombie-fencing round completed).",
            source="KIP-618 §Task count records and §Source task startup; DistributedHerder.doFenceZombieSourceTasks, "
            "ExactlyOnceWorkerSourceTask.prepareToInitializeTask",
            catches="tasks started without a zombie-fencing round",
            findings=_unfenced_starts,
            partners=("exactly_once_task_started", "task_count_record_written"),
        ),
    ]
    if generations:
        props.append(
            no_findings(
                name="no_commit_by_fenced_generation",
                fact="Once a task of a newer task-config generation started, no record written afterwards by a task "
                "instance of an older generation becomes committed.",
                source="KIP-618 §Zombie fencing (a worker lags after being assigned a task: workers F, O, L); "
                "``ExactlyOnceWorkerSourceTask``, ``initTransactions``",
                catches="a start-up without the re-read after producer instantiation (postProducerCheck)",
                findings=_fenced_generation_commits,
                partners=("newer_generation_started",),
            )
        )
        props.append(
            sometimes_event(
                "newer_generation_started", "A task of a reconfigured generation started.", "newer_generation_started"
            )
        )
        props.append(
            sometimes_event(
                "zombie_producers_fenced",
                "A zombie-fencing round fenced the producers of an older generation (Admin.fenceProducers).",
                "fence_producers",
            )
        )
    props.append(
        no_findings(
            name="acknowledged_config_writes_durable",
            fact="A config-topic write the herder acknowledged -- a connector config or tombstone whose REST request "
            "it answered, task configs and the commit record of a putTaskConfigs that returned, the task-count "
            "record of a zombie-fencing round it answered 200 -- is in the config topic for good (a plain batch, or a "
            "transaction its commit marker decided; readers at read_committed see it once the LSO passes it) when the "
            "herder goes on: a failed write fails the request (it is retried or reported), never answered as done.",
            source="KAFKA-14455 (PR #12984, Kafka 3.5): KafkaConfigBackingStore.sendPrivileged awaits every "
            "config-topic write; KIP-618 §Leader access to config topic",
            catches="KAFKA-14455 fire-and-forget config writes of a plain leader; a transactional write whose "
            "commitTransaction error is ignored; a fencing round answered 200 although its task-count record was "
            "refused",
            findings=lambda s: [
                f"the herder went on as {what!r} although {config_record_label(rid)} is not in the config topic"
                for rid, what in s.ghost.unwritten
            ],
            partners=(
                ("task_configs_left_uncommitted",) if generations and faults.config_write_failure > 0 else ()
            ),
        )
    )
    if generations and faults.config_write_failure > 0:
        props.append(
            sometimes_event(
                "task_configs_left_uncommitted",
                "A leader wrote a set of task configs but not its commit record (putTaskConfigs' second "
                "privileged write failed or was fenced): an uncommitted set stays in the config topic.",
                "task_configs_uncommitted",
            )
        )
    if leader_can_change:
        props.append(
            no_findings(
                name="no_config_write_by_deposed_leader",
                fact="No config-topic record written by a worker becomes committed if another worker claimed the "
                "config topic as leader before the write.",
                source="KIP-618 §Leader access to config topic; ``DistributedHerder.claimWritePrivileges``",
                catches="a zombie leader writing a task-count record after the new leader's task configs",
                findings=_deposed_leader_writes,
                partners=("leader_changed",),
            )
        )
        props.append(sometimes_event("leader_changed", "The group elected a new leader.", "leader_changed"))
    if any(support in ("preparing", "enabled") for support in topo.workers):
        props.append(
            no_findings(
                name="healthy_leader_keeps_write_privileges",
                fact="A leader whose claim of the config topic is the latest one (no other worker claimed it since) "
                "is never fenced from the config topic, unless a write failure was injected: its task-count records, "
                "task configs and connector configs are written with the producer its claim initialised, carried "
                "over from commit to commit.",
                source="KIP-618 §Leader access to config topic; KafkaConfigBackingStore.claimWritePrivileges and "
                "sendPrivileged; DistributedHerder (fencedFromConfigTopic)",
                catches="a leader that keeps a stale producer epoch or transaction state after a commit (TV2 bumps "
                "the epoch at every EndTxn), a privileged write refused with no newer leader",
                findings=_healthy_leaders_fenced,
                partners=("leader_claimed_config_topic", "task_count_record_written"),
            )
        )
        props.append(
            sometimes_state(
                "leader_claimed_config_topic",
                "A leader holds the config topic's transactional producer (claimWritePrivileges succeeded).",
                lambda s: any(wk.config_producer is not None for wk in s.workers),
            )
        )
    props.append(
        no_findings(
            name="task_count_record_counts_latest_tasks",
            fact="Every committed task-count record carries the task count of the task-config generation it follows "
            "in the config topic: the number of task ids (0..count-1) whose producers the next zombie-fencing round "
            "fences, and whether the 1 -> 1 shortcut may skip it; and it is written by a round of that generation "
            "(a round whose re-read finds newer task configs fails with 409 and writes nothing, so a generation is "
            "never taken off pending fencing by an older generation's round).",
            source="KIP-618 §Task count records (\"the number of tasks in the latest set of task configurations\"); "
            "DistributedHerder.ZombieFencing (writes taskCount, not the fenced taskCountRecord; "
            "onZombieFencingSuccess: 409 CONFLICT when taskGen < taskConfigGeneration after the refresh), "
            "KafkaConfigBackingStore.putTaskCountRecord",
            catches="a task-count record that keeps the older count (the ids it fenced), so a later round fences "
            "too few task ids or takes the 1 -> 1 shortcut and leaves a zombie; a round that ignores its 409 (or "
            "is answered for a newer generation) and clears pending fencing for task configs it never fenced for",
            findings=_task_count_record_mismatches,
            partners=("task_count_record_written",),
        )
    )
    if topo.recreated_at > 0:
        props.append(
            no_findings(
                name="deleted_connector_tasks_unassigned",
                fact="Once the group has rebalanced after DELETE /connectors/{c}, no worker is assigned a task of "
                "the deleted connector; a connector created again gets tasks only once its new task configs are "
                "committed -- never the deleted incarnation's task configs, nor a set whose commit record was read "
                "after the connector's tombstone (a deposed leader finishing putTaskConfigs, or what compaction "
                "leaves).",
                source="KafkaConfigBackingStore.processConnectorRemoval and processTasksCommitRecord (Kafka 4.0, "
                "apache/kafka 1eb7644; KAFKA-16838 fix, PR #16122); ClusterConfigState.tasks, "
                "EagerAssignor / IncrementalCooperativeAssignor",
                catches="a tombstone that leaves the connector's task configs or task count in the snapshot "
                "(KAFKA-8869), a commit record of a deleted connector applied (KAFKA-16838)",
                findings=_deleted_connector_assignments,
                partners=("connector_deleted_and_settled",),
            )
        )
        props.append(
            sometimes_state(
                "connector_deleted_and_settled",
                "The connector was deleted (its tombstone read) and the group rebalanced after it.",
                lambda s: not s.rebalance_pending
                and _live_generation(s.kafka.partitions[CONFIG_TOPIC]) < 0
                and any(wk.member and wk.status == WorkerStatus.RUNNING for wk in s.workers),
            )
        )
    props.append(
        no_findings(
            name="tasks_run_committed_task_configs",
            fact="A worker runs (or starts) an instance of task n of task-config generation g only if the config "
            "topic committed generation g as a complete set of task configs covering n: a commit record makes the "
            "task configs read before it effective only if they cover tasks 0..count-1 (else the connector is "
            "inconsistent and runs no task until a complete set is committed), a set without its commit record "
            "is never effective, and a deleted connector's commit applies nothing -- in faulty runs too (a leader "
            "paused, crashed or fenced inside putTaskConfigs, a deposed leader's late commit record).",
            source="KafkaConfigBackingStore.processTaskConfigRecord / processTasksCommitRecord / completeTaskIdSet "
            "and ClusterConfigState.tasks (Kafka 4.0, apache/kafka 1eb7644); KIP-618 §Task count records",
            catches="a reader that applies an incomplete or uncommitted set of task configs, keeps a deleted "
            "connector's deferred configs, or counts a generation the config topic never committed",
            findings=_uncommitted_task_instances,
            partners=("exactly_once_task_started",),
        )
    )
    props.append(
        no_findings(
            name="healthy_task_never_failed",
            fact="In a run without faults (no pause, crash, failed round or write, manual restart), a task of the "
            "latest task-config generation never fails, in its start-up or its send loop: its zombie-fencing round "
            "succeeds (a round fails with 409 only for a generation that new task configs replaced, and is then "
            "gone: the new generation's request starts a new round), nothing may fence it (no zombie exists, and "
            "rounds fence older generations only) and every request it makes succeeds.",
            source="KIP-618 §Zombie fencing, §Source task startup; ExactlyOnceWorkerSourceTask (a task fails only "
            "on an exception: a failed fencing request, a fenced producer, a failed flush or commit); "
            "DistributedHerder.ConfigUpdateListener.onTaskConfigUpdate and ZombieFencing (Kafka 4.0, apache/kafka "
            "1eb7644)",
            catches="an error returned where Kafka returns none, a commit or send that fails a healthy task, a "
            "healthy task's producer fenced by the herder, a fencing round of a replaced generation that the new "
            "generation's tasks join and fail with",
            findings=_healthy_failures,
            partners=("exactly_once_task_started",),
        )
    )
    props.append(
        Property(
            name="live_tasks_never_fenced",
            expectation=Expectation.ALWAYS,
            fact="A task's current instance (its worker is a running group member that owns the task, and it holds "
            "a producer) is fenced only by zombies: never by the leader's zombie-fencing round, which fences older "
            "task-config generations only, nor by initTransactions of another instance whose worker is in the group "
            "(a revoked instance returns before initialising its producer).",
            source="KIP-618 §Zombie fencing, §Task count records (a round runs only while the connector is pending "
            "fencing) and §Source task startup step 4; DistributedHerder.doFenceZombieSourceTasks, "
            "ExactlyOnceWorkerSourceTask.prepareToInitializeTask ('so that newer generations are not fenced by "
            "accident')",
            catches="a round that ignores connectorsPendingFencing or the task-count record, a task-count record "
            "that does not clear pending fencing, a revoked task that still initialises its producer",
            predicate=lambda s: not s.ghost.live_fenced,
            partners=("exactly_once_task_started", *(("zombie_producers_fenced",) if generations else ())),
            explain=lambda s: "; ".join(_live_instances_fenced(s)),
        )
    )
    props.extend(
        [
            sometimes_state(
                "source_record_committed",
                "A source record was committed to the output topic.",
                lambda s: bool(committed_records(s.kafka.partitions[OUTPUT])),
            ),
            sometimes_state(
                "source_offsets_committed",
                "A source offset was committed.",
                lambda s: any(k > 0 for k in _offsets(s, config)),
            ),
            sometimes_event(
                "exactly_once_task_started",
                "An exactly-once source task entered its send loop.",
                "task_started_exactly_once",
            ),
            sometimes_event(
                "task_count_record_written", "The leader wrote a task-count record.", "task_count_record_written"
            ),
        ]
    )
    props.append(
        no_findings(
            name="connect_coordinator_transitions_legal",
            fact="Every transaction-coordinator transition the Connect producers cause (task producers, the leader's "
            "connect-cluster producer, Admin.fenceProducers) is one TransactionState's table allows, and the "
            "coordinator never refuses one of their requests as an illegal transition.",
            source="TransactionState.java (validPreviousStates), TransactionMetadata.prepareTransitionTo; KIP-618 "
            "(Connect drives InitProducerId, AddPartitionsToTxn and EndTxn like any transactional producer)",
            catches="a producer call sequence of ExactlyOnceWorkerSourceTask or the herder that the coordinator "
            "would reject (EndTxn with no transaction, a commit after an abort began), a coordinator rule broken "
            "on a path only Connect takes (fenceProducers of an id with an open transaction)",
            findings=lambda s: _illegal(s, coordinator=True),
            heading="illegal transitions: ",
            separator=", ",
            partners=("connect_transaction_completed",),
        )
    )
    props.append(
        no_findings(
            name="task_lifecycle_legal",
            fact="A source-task instance moves only forward through its start-up (fencing round, initTransactions, "
            "config re-read) into its send loop or to FAILED; FAILED is final -- the instance sends, commits and "
            "changes nothing more -- and an instance leaves its worker only when a rebalance revokes it, a restart "
            "request replaces it, its worker dies, or (revoked during its start-up) its blocking call returns; "
            "an instance revoked during its start-up never enters its send loop, and a running instance a "
            "rebalance stops commits its open transaction first (poll and interval boundaries) unless it was "
            "fenced (with connector-defined boundaries it commits only a batch the connector asked to commit). A "
            "zombie-fencing round's answer reaches only the instances waiting on it, a round that ends answers every "
            "request it holds, and a round whose task configs changed meanwhile answers 409 and writes no "
            "task-count record.",
            source="WorkerTask / AbstractStatus.State; Worker.stopAndAwaitTask; DistributedHerder.restartTask; "
            "KIP-618 §Source task startup (ExactlyOnceWorkerSourceTask.prepareToInitializeTask, step 8: "
            "finalOffsetCommit); AbstractWorkerSourceTask.execute (while !isStopping()); "
            "DistributedHerder.ZombieFencing (its callbacks complete with the round's future, Kafka 3.9)",
            catches="a failed task that keeps polling or committing, a task the worker drops or restarts on its own "
            "when its fencing round fails, an instance that skips a start-up step, a failed round that drops "
            "instances not waiting on it, a round that ends leaving its requests unanswered, a revoked task that "
            "starts sending anyway, a stop that skips the final commit (its records discarded on a clean "
            "hand-over), a stop that commits a connector-bounded batch the connector did not finish, a round that "
            "writes its task-count record after a newer generation's task configs (409 ignored)",
            findings=lambda s: _illegal(s, coordinator=False),
            heading="illegal task changes: ",
            separator=", ",
            partners=("exactly_once_task_started",),
        )
    )
    props.append(
        sometimes_event(
            "connect_transaction_completed",
            "A Connect producer's transaction was completed by the coordinator.",
            "txn:Prepare*",
        )
    )
    if faults.offset_copy_failure > 0:
        props.append(
            sometimes_event(
                "resumed_ahead_of_global_offsets",
                "A task started from offsets in its connector's own offsets topic ahead of the worker's global "
                "offsets topic (the copy into the global topic had failed).",
                "resumed_ahead_of_global_offsets",
            )
        )
    if faults.foreign_offset_record > 0:
        props.append(
            sometimes_event(
                "started_past_foreign_offset_record",
                "A task started while the offsets topic it reads first held committed offset records after a record "
                "the Connect reader cannot parse (KAFKA-15800's input).",
                "started_past_foreign_offset_record",
            )
        )
    if plain_sends_fail:
        props.append(
            sometimes_event(
                "failed_task_offsets_flushed",
                "A FAILED at-least-once source task's final offset commit flushed the offsets of the records "
                "acknowledged before its failure (WorkerSourceTask.finalOffsetCommit ignores the failure).",
                "failed_task_offsets_flushed",
            )
        )
        props.append(
            sometimes_event(
                "at_least_once_send_failed",
                "An at-least-once source task's send failed and the task failed with the record unacknowledged "
                "(WorkerSourceTask.producerSendFailed, KAFKA-8586).",
                "at_least_once_send_failed",
            )
        )
    if faults.send_failure > 0:
        props.append(
            sometimes_event(
                "task_send_failed",
                "An exactly-once source task's send failed with a non-fencing error and the task failed.",
                "task_failed:REQUEST_TIMED_OUT",
            )
        )
        props.append(
            sometimes_event(
                "task_offset_flush_failed",
                "An exactly-once source task's offset flush failed at a transaction boundary and the task failed.",
                "offset_flush_failed",
            )
        )
        props.append(
            sometimes_event(
                "task_commit_failed",
                "An exactly-once source task flushed its offsets into the transaction, then commitTransaction failed.",
                "commit_failed",
            )
        )
        props.append(
            sometimes_event(
                "failed_task_restarted",
                "A restart request replaced a FAILED source task.",
                "failed_task_restart_requested",
            )
        )
    if config.topology.transaction_boundary == "connector" and config.topology.max_connector_aborts > 0:
        props.append(
            sometimes_event(
                "empty_abort_ignored",
                "The connector asked to abort an empty transaction and the task ignored it (KAFKA-14799's fix).",
                "empty_abort_ignored",
            )
        )
    if config.topology.recreated_at > 0:
        props.append(
            sometimes_event(
                "fencing_request_in_deletion_tick",
                "The leader handled a zombie-fencing request in the herder tick in which it deleted the connector "
                "(DistributedHerder.doFenceZombieSourceTasks checks configState, not yet refreshed, first).",
                "fencing_request_in_deletion_tick",
            )
        )
    props.extend(tombstone_properties(config))
    props.extend(task_offsets_properties(config))
    props.extend(acknowledgement_properties(config))
    props.extend(transaction_boundary_properties(config))
    props.extend(connect_bounds_properties(config))
    return (*props, *connect_progress_properties(config))

