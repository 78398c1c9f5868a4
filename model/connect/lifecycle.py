"""The life cycle of a source-task instance on a worker, as Kafka's worker allows it (a judge's table).

``WorkerTask`` (Kafka 3.9) runs a task's thread once: ``ExactlyOnceWorkerSourceTask`` goes through its start-up
(KIP-618 §Source task startup: preProducerCheck, initTransactions, postProducerCheck) into its send loop, or fails;
``AbstractStatus.State`` FAILED is final for that instance -- its thread has ended, it sends and commits nothing
more, and only the worker removes it: when a rebalance revokes it (``Worker.stopAndAwaitTask``), a restart request
replaces it (``DistributedHerder.restartTask``), or the worker dies. A revoked instance still in its start-up
(``stopping``) finishes its blocking call and is gone: it never enters its send loop, which runs only while
``!isStopping()`` (``AbstractWorkerSourceTask.execute``). A fencing round's answer
(``DistributedHerder.ZombieFencing``: its callbacks complete with the round's future) reaches only the instances
waiting on it, and a round that ends by one of its own steps answers every request it holds -- those it was started
for and those that joined it. A paused worker's threads are stopped (a GC pause, a stopped JVM): none of its
instances starts, sends or commits; only the answer of a fencing round it waits on may reach it (the leader's HTTP
response, taken when it resumes). A running exactly-once instance that a rebalance stops runs its final offset
commit first (``AbstractWorkerSourceTask.close`` -> ``ExactlyOnceWorkerSourceTask.finalOffsetCommit(false)`` ->
``commitTransaction``, KIP-618 §Source task startup step 8): its open transaction is committed, or the commit
fails because a newer instance fenced its producer -- it never stays open for the next instance to abort (the
records of a clean hand-over are not discarded; with ``poll`` or ``interval`` boundaries, whose
``shouldCommitFinalTransaction`` is true). :func:`illegal_task_changes` compares a step's state before and after against
that table; the Connect model records what it reports, and :mod:`invariants.connect` judges it.
"""

from __future__ import annotations

from typing import Any

from keos.model.clients.consumer import READ_COMMITTED, fetch
from keos.model.connect import config_topic as cfgt
from keos.model.connect.records import CONFIG_TOPIC, ConnectState
from keos.model.connect.worker import TaskPhase as P
from keos.model.connect.worker import WorkerStatus as W
from keos.model.coordinator.transaction.transaction_state import TransactionState
from keos.model.log.partition import PartitionLeader

__all__ = [
    "ANSWERING_STEPS",
    "LEADER_STEPS",
    "NEXT_PHASES",
    "ROUND_STEPS",
    "STOPPING_STEPS",
    "illegal_task_changes",
    "prescribed_fencing",
]

#: The phases an instance may be in after a step that is not one of :data:`STOPPING_STEPS`.
NEXT_PHASES: dict[str, tuple[str, ...]] = {  # no mutate: a judge's table (keos mutate mutates rules, not judges)
    P.FENCING_REQUESTED: (P.FENCING_REQUESTED, P.FENCING_DONE, P.FAILED),
    P.FENCING_DONE: (P.FENCING_DONE, P.PRODUCER_READY, P.FAILED),
    P.PRODUCER_READY: (P.PRODUCER_READY, P.RUNNING, P.FAILED),
    P.RUNNING: (P.RUNNING, P.FAILED),
    P.FAILED: (P.FAILED,),
}
#: Steps that stop, replace or drop instances: a rebalance, a restart request, a worker's crash or restart.
STOPPING_STEPS = ("Rebalance", "RestartTask", "RestartFailedTask", "CrashWorker", "RestartWorker")  # no mutate: judge
#: Steps in which the leader answers fencing requests (``PUT /connectors/{c}/fence``): serving one
#: (``doFenceZombieSourceTasks``: 200 at once, 404, or Admin.fenceProducers failing: 500) or completing its
#: round (``ZombieFencing``: the task-count record written -- 200 -- or its re-read or write failing: 409/500).
#: A reconfiguration answers them only by failing the active round (409, ``onTaskConfigUpdate``).
ANSWERING_STEPS = (  # no mutate: a judge's table
    "FenceZombies", "WriteTaskCountRecord", "CommitTaskCountRecord", "FailZombieFencing", "FailConfigWrite",
)


def illegal_task_changes(  # no mutate: judge
    kind: str, before: ConnectState, after: ConnectState, events: tuple[str, ...] = (), final_commit: bool = False
) -> tuple[str, ...]:
    """What a step of ``kind`` (with ``events``) did to task instances that the worker's life cycle does not allow.

    An instance in its start-up or FAILED changes only by moving on: each start-up call (the round's answer,
    initTransactions, the re-read) is made once and ends its phase; only the send loop (RUNNING) changes an
    instance in place.  A task waiting on its fencing request moves on only when the leader answers it
    (:data:`ANSWERING_STEPS`, or a reconfiguration that failed the active round with 409): a failed write
    of other config records (task configs, a connector's tombstone) is no answer to it.
    ``final_commit``: the task's transaction boundary commits the final transaction at a stop (``poll`` and
    ``interval``; with ``connector`` boundaries only a batch the connector asked to commit is committed).
    """
    if kind in STOPPING_STEPS:
        return _open_after_stop(kind, before, after) if final_commit else _committed_by_stop(kind, before, after)
    out: list[str] = [
        *_unanswered(kind, before, after, events),
        *_unjustified_conflicts(kind, before, after, events),
        *_unfenced_send_loop_failures(kind, before, after),
    ]
    # A failed privileged write answers the round only when it was the round's own task-count record: the commit
    # record of putTaskConfigs is another herder request, whose failure reaches only its REST caller.
    answering = kind in ANSWERING_STEPS and "task_configs_uncommitted" not in events
    for w, (old_wk, new_wk) in enumerate(zip(before.workers, after.workers)):
        if old_wk.tasks is new_wk.tasks:
            continue
        for old in old_wk.tasks:
            new = new_wk.instance(old.task)
            where = f"task:w{w}.t{old.task}.g{old.generation}"
            if new is None:
                if not old.stopping:  # no branch: a violation (task_lifecycle_legal)
                    out.append(f"{where}:{old.phase}->removed by {kind}")
                elif answering and old.phase != P.FENCING_REQUESTED:  # no branch: a violation
                    out.append(f"{where}:{old.phase} instance removed by {kind}, an answer it was not waiting on")
                elif (  # no branch: a violation
                    old.phase == P.FENCING_REQUESTED and not answering and "fencing_409_conflict" not in events
                ):
                    out.append(f"{where}:stopping instance waiting on its fencing request removed by {kind}")
            elif new.generation != old.generation or new.stopping != old.stopping:  # no branch: a violation
                out.append(f"{where}:replaced by {kind}")
            elif new.phase not in NEXT_PHASES[old.phase]:  # no branch: a violation
                out.append(f"{where}:{old.phase}->{new.phase}")
            elif new.stopping and new.phase == P.RUNNING and old.phase != P.RUNNING:  # no branch: a violation
                out.append(f"{where}:stopping instance entered its send loop in {kind}")
            elif (  # no branch: a violation
                new.phase == P.RUNNING and old.phase != P.RUNNING and new_wk.member and old.task not in new_wk.assigned
            ):
                # postProducerCheck: a task its worker no longer runs (revoked, its configs gone) never sends
                out.append(f"{where}:entered its send loop in {kind} although its worker does not own the task")
            elif (  # no branch: a violation
                old.phase == P.FENCING_REQUESTED
                and new.phase != old.phase
                and not answering
                and "fencing_409_conflict" not in events
            ):
                out.append(f"{where}:fencing request answered by {kind}")
            elif old.phase != P.RUNNING and new.phase == old.phase and new != old:  # no branch: a violation
                out.append(f"{where}:{old.phase} instance changed in place by {kind}")
        for new in new_wk.tasks:
            if old_wk.instance(new.task) is None and kind != "StartTask":  # no branch: a violation
                out.append(f"task:w{w}.t{new.task}.g{new.generation}:started by {kind}")
        if old_wk.status == W.PAUSED and new_wk.status == W.PAUSED:
            out.extend(_paused_changes(w, kind, old_wk.tasks, new_wk))
    return tuple(out)


def _open_after_stop(kind: str, before: ConnectState, after: ConnectState) -> tuple[str, ...]:  # no mutate: judge
    """Running exactly-once instances a rebalance stopped whose transaction is still open under their epoch."""
    if kind != "Rebalance":
        return ()
    out: list[str] = []
    for w, (old_wk, new_wk) in enumerate(zip(before.workers, after.workers)):
        for old in old_wk.tasks:
            h = old.producer
            if new_wk.instance(old.task) is not None or old.phase != P.RUNNING or not old.pending or h is None:
                continue
            md = after.kafka.coordinator[h.transactional_id]
            if md is None or (md.producer_id, md.producer_epoch) != (h.producer_id, h.producer_epoch):
                continue  # fenced (or the id's entry replaced): the commit was refused, as Kafka's would be
            if md.state == TransactionState.ONGOING:  # no branch: a violation (task_lifecycle_legal)
                out.append(f"task:w{w}.t{old.task}.g{old.generation}:stopped by {kind} with its transaction open")
    return tuple(out)


def _committed_by_stop(kind: str, before: ConnectState, after: ConnectState) -> tuple[str, ...]:  # no mutate: judge
    """Connector-defined boundaries: running exactly-once instances a stop removed whose open batch it committed.

    ``ExactlyOnceWorkerSourceTask`` (Kafka 4.0, apache/kafka 1eb7644) commits a connector-bounded batch only when
    the connector asks (``shouldCommitFinalTransaction`` is ``shouldCommitTransactionForBatch`` for ``CONNECTOR``);
    a stop commits nothing on its own, so the coordinator entry of a removed instance's transaction, Ongoing under
    its epoch before, is not committing under its producer id after the stop.
    """
    out: list[str] = []
    committing = (TransactionState.PREPARE_COMMIT, TransactionState.COMPLETE_COMMIT)
    for w, (old_wk, new_wk) in enumerate(zip(before.workers, after.workers)):
        for old in old_wk.tasks:
            h = old.producer
            if new_wk.instance(old.task) is not None or old.phase != P.RUNNING or not old.pending or h is None:
                continue
            was, md = before.kafka.coordinator[h.transactional_id], after.kafka.coordinator[h.transactional_id]
            if was is None or md is None or was.state != TransactionState.ONGOING:
                continue
            # the same producer id (transaction.version 2 bumps the epoch at EndTxn), committing now
            if md.producer_id == h.producer_id and md.state in committing:  # no branch: a violation
                where = f"task:w{w}.t{old.task}.g{old.generation}"
                out.append(f"{where}:{kind} committed a batch the connector did not ask to commit")
    return tuple(out)


#: The round's own steps: its fencing (``Admin.fenceProducers``), its task-count record's write and commit.
ROUND_STEPS = ("FenceZombies", "WriteTaskCountRecord", "CommitTaskCountRecord")  # no mutate: a judge's table


def _unanswered(  # no mutate: judge
    kind: str, before: ConnectState, after: ConnectState, events: tuple[str, ...] = ()
) -> list[str]:
    """Requests a round left waiting when one of its own steps ended it.

    ``DistributedHerder.ZombieFencing`` (Kafka 3.9) completes every callback added to the round -- the requests
    it was started for and those that joined it while it ran -- when its future completes, with 200 or the
    failure (409 on a generation change, 500 on a failed fencing or write): a round that ends answers them all.
    A request of a generation newer than a round that failed with 409 never joined it (it went to the leader that
    wrote that generation's task configs).
    """
    ended = [old.fencing.generation for old, new in zip(before.workers, after.workers)
             if old.fencing is not None and new.fencing is None]
    if not ended or kind not in ROUND_STEPS:
        return []
    newer = max(ended) if "fencing_409_conflict" in events else None
    return [
        f"task:w{w}.t{t.task}.g{t.generation}:fencing request left unanswered when {kind} ended the round"
        for w, wk in enumerate(after.workers)
        for t in wk.tasks
        if t.phase == P.FENCING_REQUESTED and (newer is None or t.generation <= newer)
    ]


def _unjustified_conflicts(  # no mutate: judge
    kind: str, before: ConnectState, after: ConnectState, events: tuple[str, ...]
) -> list[str]:
    """Requests answered 409 CONFLICT although no newer task configs than the requester's were committed.

    ``DistributedHerder`` (Kafka 4.0, apache/kafka 1eb7644) fails a round with 409 only for new task configs:
    ``onTaskConfigUpdate`` (the listener runs when a worker reads a commit record, ``processTasksCommitRecord``) or
    ``onZombieFencingSuccess``'s re-read (``taskGen < configState.taskConfigGeneration``).  A request of the
    generation the config topic's committed records still make the latest was not replaced: no 409 is owed to it
    (a refused or uncommitted write of task configs changes no generation)."""
    if "fencing_409_conflict" not in events:
        return []
    config = after.kafka.partitions[CONFIG_TOPIC]
    latest = cfgt.snapshot(config, cfgt.read_to_end(config)).generation
    return [
        f"task:w{w}.t{old.task}.g{old.generation}:answered 409 by {kind} although generation {old.generation} "
        "is the latest committed"
        for w, (old_wk, new_wk) in enumerate(zip(before.workers, after.workers))
        for old in old_wk.tasks
        if old.phase == P.FENCING_REQUESTED and old.generation >= latest
        and getattr(new_wk.instance(old.task), "phase", P.FAILED) == P.FAILED
    ]


#: Steps of a running instance's send loop that hit no fault of the environment: the instance's own requests.
SEND_LOOP_STEPS = (  # no mutate: a judge's table
    "Poll", "CommitTransaction", "AbortTransaction", "CommitOffsets", "CommitTombstone", "FailOffsetCopy",
)


def _unfenced_send_loop_failures(kind: str, before: ConnectState, after: ConnectState) -> list[str]:  # no mutate: judge
    """Exactly-once instances a send-loop step failed although their producer was current.

    In its send loop an ``ExactlyOnceWorkerSourceTask`` (Kafka 4.0, apache/kafka 1eb7644) fails only on an
    exception from its producer or its offset writer; without an injected fault (a failed send, flush or commit
    is a fault action of its own; a failed copy into the global offsets topic is only logged) the producer throws
    only when it was fenced -- a newer epoch of its transactional id (a newer instance's ``initTransactions``, the
    leader's ``fenceProducers``) -- and retries every retriable error (``CONCURRENT_TRANSACTIONS``,
    ``COORDINATOR_LOAD_IN_PROGRESS``, ...).  A task whose producer id and epoch are still the coordinator's has no
    cause to fail, in a faulty run too."""
    if kind not in SEND_LOOP_STEPS:
        return []
    out: list[str] = []
    for w, (old_wk, new_wk) in enumerate(zip(before.workers, after.workers)):
        for old in old_wk.tasks:
            new, h = new_wk.instance(old.task), old.producer
            if old.phase != P.RUNNING or new is None or new.phase != P.FAILED or h is None:
                continue
            md = before.kafka.coordinator[h.transactional_id]
            if md is not None and (md.producer_id, md.producer_epoch) == (h.producer_id, h.producer_epoch):
                out.append(f"task:w{w}.t{old.task}.g{old.generation}:failed by {kind} although its producer "
                           f"(id {h.producer_id}, epoch {h.producer_epoch}) was not fenced")
    return out


def _paused_changes(w: int, kind: str, old_tasks: tuple[Any, ...], new_wk: Any) -> list[str]:  # no mutate: judge
    """Instances of paused worker ``w`` that a step changed other than by answering their fencing request."""
    out: list[str] = []
    for new in new_wk.tasks:
        old = next((t for t in old_tasks if t.task == new.task), None)
        if old != new and (old is None or old.phase != P.FENCING_REQUESTED):  # no branch: a violation
            out.append(f"task:w{w}.t{new.task}.g{new.generation}:changed by {kind} while its worker was paused")
    return out


#: Steps only the group's leader takes (``DistributedHerder``: ``isLeader()`` after the tick's ``ensureActive``):
#: serving a fencing request (a round's start), a task reconfiguration, a connector's deletion, reclaiming the
#: config topic.  A worker dropped from the group only finishes the call it was blocked in (the commit record of
#: ``putTaskConfigs``, its round's own record) before it rejoins.
LEADER_STEPS = ("FenceZombies", "Reconfigure", "DeleteConnector", "ClaimWritePrivileges")  # no mutate: judge table


def prescribed_fencing(config: PartitionLeader) -> tuple[int, ...] | None:  # no mutate: judge
    """The task ids a zombie-fencing round must fence, by the judge's own read of the config topic (None: no round).

    ``KafkaConfigBackingStore`` (Kafka 4.0, apache/kafka 1eb7644) as the leader reads it to the end
    (read_committed): a commit record of a connector with a config sets its task count and marks it pending
    fencing (``processTasksCommitRecord``; a deleted connector's commit is ignored), a task-count record sets
    ``connectorTaskCountRecords`` and clears pending fencing, a tombstone drops the task count but keeps the
    task-count record and pending fencing (``processConnectorRemoval``).  ``doFenceZombieSourceTasks``: no round
    unless pending fencing; no task-count record yet, or a record of 1 and a current task count of 1 (KIP-618:
    the single new task's ``initTransactions`` fences the single old one): a round that fences nothing and
    writes the record; else ``Worker.fenceZombies`` fences the transactional ids of tasks 0..record-1 -- and
    throws for a connector without a config (its round never starts).
    """
    pending, exists, record, count = False, True, -1, 0
    for rid in fetch(config, READ_COMMITTED):
        r = cfgt.decode_config_record(rid)
        if r.kind == cfgt.COMMIT and exists:
            pending, count = True, r.value
        elif r.kind == cfgt.TASK_COUNT:
            pending, record = False, r.value
        elif r.kind == cfgt.CONNECTOR_CONFIG:
            exists = r.value == 1
            count = count if exists else 0
    if not pending:
        return None
    if record < 0 or (record == 1 and count == 1):
        return ()
    return tuple(range(record)) if exists else None
