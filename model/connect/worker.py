"""A Connect worker and its task instances (``Worker``): records, start-up phases, source records.

``ExactlyOnceWorkerSourceTask`` and KIP-618 §Source task startup: a worker starting an exactly-once source
task goes through these phases (:class:`TaskPhase`)::

    StartTask            step 1  record taskGeneration = configState.taskConfigGeneration(connector)
                         step 2  build the task; step 3 preProducerCheck: ask the leader for a
                                 zombie-fencing round (PUT /connectors/{c}/fence)   -> FENCING_REQUESTED
    (leader's round)     the round succeeded (200)                                  -> FENCING_DONE
                         or failed (500, 409)                                      -> FAILED
    InitProducer         step 4  a stopping task returns (it is gone); step 5
                                 producer.initTransactions() fences every older
                                 instance of the same task id                      -> PRODUCER_READY
    VerifyGeneration     step 6  postProducerCheck: read the config topic to the end; fail if the
                                 task-config generation moved or the task was revoked; otherwise
                                 read the source offsets (read_committed)          -> RUNNING / FAILED
    Poll / CommitTransaction / AbortTransaction
                         step 7  the send loop: each record opens a transaction if none is open;
                                 at the boundary (poll | interval | connector) the offsets are
                                 written *in the same transaction* and it commits

A worker whose ``exactly.once.source.support`` is not ``enabled`` runs the
classic at-least-once task (``WorkerSourceTask``): no fencing request, a
plain producer, and offsets flushed separately (``CommitOffsets``).

The step functions are in :mod:`model.connect.source_task`.  Output records
carry the source record's identity (source partition, position) and, for
explanations only, the instance that wrote it (worker, task, generation) --
see :func:`source_record`.
"""

from __future__ import annotations

from typing import NamedTuple

from keos.model.codec import record
from keos.model.connect.producers import ProducerHandle

__all__ = [
    "ConnectWorker",
    "TaskInstance",
    "TaskPhase",
    "WorkerStatus",
    "decode_source_record",
    "owned_partitions",
    "source_record",
    "source_record_label",
]


class TaskPhase:
    """Where a task instance is in the start-up protocol or the send loop."""

    FENCING_REQUESTED = "FENCING_REQUESTED"
    FENCING_DONE = "FENCING_DONE"
    PRODUCER_READY = "PRODUCER_READY"
    RUNNING = "RUNNING"
    FAILED = "FAILED"


class WorkerStatus:
    """A worker process: running, paused (a long GC pause: it drops out of the group) or crashed."""

    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    CRASHED = "CRASHED"


@record
class TaskInstance(NamedTuple):
    """One instance of a source task on a worker.

    ``positions`` is the next record to poll per source partition (-1: not
    owned by this task in its generation); ``committed`` the positions whose
    offsets this instance has written; ``pending`` whether records were sent
    since the last transaction boundary; ``unflushed`` whether committed
    records still wait for their offsets (the at-least-once path).
    ``stopping``: a rebalance revoked the instance while its start-up thread
    was blocked (in preProducerCheck, before initTransactions or in
    postProducerCheck); ``Worker.stopAndAwaitTask`` waits for the thread, which
    finishes its current call and returns without initialising a producer
    (KIP-618 §Source task startup step 4) or entering its send loop.
    """

    task: int
    generation: int
    phase: str
    exactly_once: bool
    producer: ProducerHandle | None = None
    positions: tuple[int, ...] = ()
    committed: tuple[int, ...] = ()
    pending: bool = False
    unflushed: bool = False
    stopping: bool = False


@record
class ZombieFencing(NamedTuple):
    """The leader's zombie-fencing round for the connector (``DistributedHerder.ZombieFencing``).

    ``generation`` is the task-config generation the round read,
    ``task_count`` the count the task-count record will carry, ``phase``
    ``fenced`` (Admin.fenceProducers done or skipped; the record is next),
    ``sent`` (the record is sent in the leader's open transaction, or batched
    by a plain producer, and awaits commit / flush) or ``unstarted`` (a round
    put in ``activeZombieFencings`` whose ``start()`` threw: it is never removed,
    and every later request that joins it fails).  ``joined`` is the newest
    task-config generation whose fencing request joined the started round
    (``doFenceZombieSourceTasks`` finds it in ``activeZombieFencings`` and calls
    ``addCallback``; Kafka 4.0, apache/kafka 1eb7644), -1 if none newer than the
    round's own did: the round's answer reaches the requests of generations up
    to ``max(generation, joined)``.
    """

    generation: int
    task_count: int
    phase: str = "fenced"
    joined: int = -1


@record
class ConnectWorker(NamedTuple):
    """One Connect worker: process status, group view, config-topic position, tasks, leader state.

    ``member`` is whether the worker is in the current group generation;
    ``leader`` whether it believes it leads (a deposed, paused leader still
    does until it rejoins); ``assigned`` its tasks from its last rebalance;
    ``config_generation`` the task-config generation of its snapshot of the config
    topic (read_committed) -- the only part of the snapshot a follower uses.
    The leader's ``config_producer`` is its claimed transactional producer on
    the config topic; ``fenced_from_config_topic`` is set by a failed
    privileged write (``PrivilegedWriteException``) and cleared by a reclaim.
    ``deleted_this_tick``: the worker, as leader, wrote the connector's tombstone in its current herder
    tick (``deleteConnectorConfig``): the herder's ``configState`` -- refreshed at the start of its next tick,
    or by ``refreshConfigSnapshot`` -- still holds the connector until the worker does anything else.
    ``task_configs_written`` is the task-config generation whose task configs the
    leader has written and whose commit record it is about to write (-1: none):
    ``KafkaConfigBackingStore.putTaskConfigs`` is one blocking call of the
    herder's tick thread, so the worker does nothing else until it returns.
    """

    status: str = WorkerStatus.RUNNING
    member: bool = True
    leader: bool = False
    assigned: tuple[int, ...] = ()
    config_generation: int = 0
    tasks: tuple[TaskInstance, ...] = ()
    config_producer: ProducerHandle | None = None
    fenced_from_config_topic: bool = False
    fencing: ZombieFencing | None = None
    task_configs_written: int = -1
    deleted_this_tick: bool = False

    def instance(self, task: int) -> TaskInstance | None:
        """This worker's instance of ``task``, if any."""
        for t in self.tasks:
            if t.task == task:
                return t
        return None

    def with_instance(self, inst: TaskInstance) -> ConnectWorker:
        """Replace (or add) the instance of ``inst.task``."""
        rest = tuple(t for t in self.tasks if t.task != inst.task)
        return self._replace(tasks=tuple(sorted((*rest, inst))))

    def without_instance(self, task: int) -> ConnectWorker:
        """Drop the instance of ``task``."""
        return self._replace(tasks=tuple(t for t in self.tasks if t.task != task))


_SOURCE_BASE = 30_000_000


def source_record(generation: int, worker: int, task: int, partition: int, position: int) -> int:
    """The output record for source partition ``partition`` at ``position``, written by (worker, task, generation)."""
    return _SOURCE_BASE + generation * 100_000 + worker * 10_000 + task * 1000 + partition * 100 + position


def decode_source_record(rid: int) -> tuple[int, int, int, int, int]:
    """``(generation, worker, task, source partition, position)``."""
    rest = rid - _SOURCE_BASE
    g, rest = divmod(rest, 100_000)
    w, rest = divmod(rest, 10_000)
    n, rest = divmod(rest, 1000)
    p, k = divmod(rest, 100)
    return g, w, n, p, k


def source_record_label(rid: int) -> str:
    """``src0[1] (w2/t0@g1)``: source partition 0, position 1, written by worker 2's task 0 of generation 1."""
    g, w, n, p, k = decode_source_record(rid)
    return f"src{p}[{k}] (w{w}/t{n}@g{g})"


def owned_partitions(owners: tuple[tuple[int, ...], ...], generation: int, task: int) -> tuple[int, ...]:
    """The source partitions task ``task`` reads in task-config generation ``generation`` (0..len(owners)-1)."""
    return tuple(p for p, owner in enumerate(owners[generation]) if owner == task)
