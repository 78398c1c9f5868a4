"""Progress of Kafka Connect's exactly-once source tasks (KIP-618) once faults stop.

The safety invariants of :mod:`keos.invariants.connect` hold for a cluster whose tasks never start: a
zombie-fencing round that is never answered, a task stuck between ``initTransactions`` and its
config-topic check, or records polled into a transaction that never commits break none of them.  The
``EVENTUALLY`` properties here (``□◇P`` under fairness) say what an operator expects:

* ``assigned_tasks_run`` -- every task assigned to a live worker of the group finishes its start-up
  (KIP-618 §5.5 steps 1-6: fencing request, fencing round, ``initTransactions``, config re-read) and
  is RUNNING, or has FAILED (a final state the REST API reports; a restart is an operator's decision)
  *because of an injected fault*: in a fault-free run a FAILED task is not progress;
* ``started_tasks_commit`` -- every running exactly-once task eventually commits what it polled: no
  records stay in an open transaction (§5.5 step 7), and an at-least-once task flushes its offsets.
"""

from __future__ import annotations

from keos.invariants.connect_logs import committed_records
from keos.model.connect.records import OUTPUT, ConnectConfig, ConnectState
from keos.model.connect.worker import TaskPhase, WorkerStatus, decode_source_record, owned_partitions
from keos.model.interface import Expectation, Property

__all__ = [
    "CONNECT_FAIRNESS",
    "connect_progress_properties",
    "uncommitted_tasks",
    "undelivered_records",
    "unstarted_tasks",
]

#: The fairness Connect's progress relies on.
CONNECT_FAIRNESS = (
    "faults stop (no more pauses, crashes, failed fencing rounds or config writes)",
    "every enabled protocol step is eventually taken (weak fairness)",
    "the group rebalances after a membership change (session.timeout.ms fires for a silent worker)",
    "the leader serves every zombie-fencing request (PUT /connectors/{c}/fence)",
    "a task's transaction boundary is eventually reached (poll / interval / connector-defined)",
)


def unstarted_tasks(owners: tuple[tuple[int, ...], ...], s: ConnectState) -> list[str]:
    """Tasks assigned to a running group member that are neither RUNNING nor FAILED.

    A task that owns no source partition in the worker's task-config generation is idle: the model
    starts no instance for it, and none is required.

    FAILED is a final state only for a cause: in a run where no fault was injected (no pause, crash,
    failed fencing round, failed config or offset write, manual restart) nothing entitles a healthy
    task to fail, so a FAILED task there is not progress (issue 23: "a task that fails with no
    injected fault is not progress").  A fault-free FAILED instance must be restarted by the herder
    (a rebalance onto a new task-config generation, ``DistributedHerder.processTaskConfigUpdates``)
    or by the restart request every FAILED task is eligible for (``RestartFailedTask``).
    """
    faulty = any(s.faults_used)
    out: list[str] = []
    for w, worker in enumerate(s.workers):
        if worker.status != WorkerStatus.RUNNING or not worker.member:
            continue
        for task in worker.assigned:
            inst = worker.instance(task)
            if inst is None and owned_partitions(owners, worker.config_generation, task):
                out.append(f"worker {w}: assigned task {task} has no instance")
            elif inst is not None and inst.phase == TaskPhase.FAILED and not faulty:
                out.append(f"worker {w}: task {task} (generation {inst.generation}) is FAILED although no fault "
                           "was injected")
            elif inst is not None and inst.phase not in (TaskPhase.RUNNING, TaskPhase.FAILED):
                out.append(f"worker {w}: task {task} (generation {inst.generation}) is stuck in {inst.phase}")
    return out


def uncommitted_tasks(s: ConnectState) -> list[str]:
    """Running task instances on running workers with records or offsets not yet committed."""
    out: list[str] = []
    for w, worker in enumerate(s.workers):
        if worker.status != WorkerStatus.RUNNING:
            continue
        for inst in worker.tasks:
            if inst.phase != TaskPhase.RUNNING:
                continue
            if inst.pending:
                out.append(f"worker {w}: task {inst.task} has polled records in a transaction that never commits")
            if inst.unflushed:
                out.append(f"worker {w}: task {inst.task} never flushes the offsets of its committed records")
    return out


def undelivered_records(sources: int, records: int, s: ConnectState) -> list[str]:
    """Source records neither committed to the output nor discarded by a connector abort."""
    have = {decode_source_record(rid)[3:] for _, rid in committed_records(s.kafka.partitions[OUTPUT])}
    gone = have | set(s.ghost.discarded)
    return [f"src{p}[{k}] is never committed" for p in range(sources) for k in range(records) if (p, k) not in gone]


def connect_progress_properties(config: ConnectConfig) -> tuple[Property, ...]:
    """The progress properties of the Connect model."""
    owners = config.topology.owners
    sources, records = config.topology.source_partitions, config.topology.records
    return (
        Property(
            name="every_source_record_delivered",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, every record of every source partition is committed to the output topic "
            "(or was discarded by the connector's own abort): a task that takes over resumes from the committed "
            "offsets and nothing polled is lost, whichever worker crashed, paused or was fenced.",
            source="KIP-618 §Goals (source offset accuracy); Connect's at-least-once baseline "
            "(WorkerSourceTask / ExactlyOnceWorkerSourceTask commit the offsets only with or after their records)",
            catches="offsets committed ahead of their records, a source partition forgotten by a zombie's "
            "tombstone, a task that never resumes after a takeover",
            predicate=lambda s: not undelivered_records(sources, records, s),
            partners=("source_record_committed",),
            explain=lambda s: "; ".join(undelivered_records(sources, records, s)),
            fairness=CONNECT_FAIRNESS,
        ),
        Property(
            name="assigned_tasks_run",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, every task assigned to a live group member completes its start-up "
            "(fencing round, initTransactions, config re-read) and runs; it may end FAILED only in a run with a "
            "fault (a healthy task of a fault-free run never fails for good).",
            source="KIP-618 §5.5 steps 1-6 (preProducerCheck, initTransactions, postProducerCheck); "
            "DistributedHerder.fenceZombieSourceTasks",
            catches="a fencing request the leader never serves, a task-count record never written, a start-up "
            "that waits on a generation that never arrives",
            predicate=lambda s: not unstarted_tasks(owners, s),
            partners=("exactly_once_task_started",),
            explain=lambda s: "; ".join(unstarted_tasks(owners, s)),
            fairness=CONNECT_FAIRNESS,
        ),
        Property(
            name="started_tasks_commit",
            expectation=Expectation.EVENTUALLY,
            fact="Once faults stop, every running source task commits the records it polled (with their "
            "offsets, in one transaction) and no committed record waits for its offsets.",
            source="KIP-618 §5.5 step 7 (transaction boundaries); ExactlyOnceWorkerSourceTask.commitTransaction",
            catches="a transaction boundary that is never reached, a commit that is never retried",
            predicate=lambda s: not uncommitted_tasks(s),
            partners=("source_record_committed",),
            explain=lambda s: "; ".join(uncommitted_tasks(s)),
            fairness=CONNECT_FAIRNESS,
        ),
    )
