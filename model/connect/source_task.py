"""A source task on a worker: ``ExactlyOnceWorkerSourceTask`` (and the at-least-once ``WorkerSourceTask``).

The handlers of :class:`model.systems.connect.ConnectSystem` for one task
instance, ``ExactlyOnceWorkerSourceTask`` and KIP-618 §Source task startup (the phases are listed in
:mod:`model.connect.worker`):

* start-up: ``StartTask`` (steps 1-3: taskGeneration, the fencing request),
  ``InitProducer`` (step 5: ``initTransactions()`` fences older instances of
  the task id), ``VerifyGeneration`` (step 6: re-read the config topic, abort
  on a new generation or a revoked task, then read the source offsets through
  the combined view, read_committed);
* the send loop (step 7): ``Poll`` sends a record in the open transaction
  (``maybeBeginTransaction``), ``CommitTransaction`` writes the offsets into
  the same transaction and commits, ``AbortTransaction`` is the connector's
  ``TransactionContext.abortTransaction``; an at-least-once task writes with a
  plain producer and flushes its offsets separately (``CommitOffsets``);
* stop (step 8): the open transaction is committed first.
"""

from __future__ import annotations

from typing import Any

from keos.model.connect.cluster import ConnectCluster
from keos.model.connect.offsets import combined_offsets, offset_record, offset_tombstone, offsets_after_foreign
from keos.model.connect.offsets import read_offsets as read_topic_offsets
from keos.model.connect.producers import (
    KafkaCluster,
    append_plain,
    end_transaction,
    init_transactions,
    send_transactional,
)
from keos.model.connect.records import CONNECTOR_OFFSETS, GLOBAL_OFFSETS, OUTPUT, ConnectState, task_tid
from keos.model.connect.worker import TaskInstance, owned_partitions, source_record
from keos.model.connect.worker import TaskPhase as P
from keos.model.connect.worker import WorkerStatus as W
from keos.model.protocol.errors import Errors

__all__ = [
    "abort_txn",
    "commit_offsets",
    "commit_tombstone",
    "commit_txn",
    "fail_commit",
    "fail_offset_flush",
    "fail_offset_write",
    "fail_send",
    "init_producer",
    "poll",
    "start",
    "start_task",
    "stop",
    "tombstone_candidate",
    "verify_generation",
]

Result = tuple[ConnectState, tuple[str, ...]]  # no mutate: a type alias
_FENCED_ERRORS = (Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED)


def _at(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*items[:i], value, *items[i + 1 :])


# -- task start-up (``ExactlyOnceWorkerSourceTask``) ---------------------------------------------------------


def read_offsets(sys: ConnectCluster, s: ConnectState, generation: int, task: int) -> tuple[int, ...]:
    parts = s.kafka.partitions
    own = parts[CONNECTOR_OFFSETS] if sys.topo.offsets_topic == "connector" else None
    view = combined_offsets(own, parts[GLOBAL_OFFSETS], sys.sources, sys.flags.connect_own_offsets_first,
                            sys.flags.connect_offsets_skip_foreign_keys, sys.topo.offsets_read == "kip-618")
    mine = owned_partitions(sys.topo.owners, generation, task)
    done = sys.topo.records  # a deleted source partition has nothing left to read, whatever its offset
    return tuple((done if p in s.deleted_sources else max(view[p], 0)) if p in mine else -1 for p in range(sys.sources))


def start(sys: ConnectCluster, s: ConnectState, w: int, n: int, generation: int) -> Result:
    """Steps 1-3: record taskGeneration, then ask the leader for a zombie-fencing round."""
    if not sys._eos(w):
        pos = read_offsets(sys, s, generation, n)
        inst = TaskInstance(n, generation, P.RUNNING, False, None, pos, pos)
        return sys._put(s, w, s.workers[w].with_instance(inst)), ("task_started_at_least_once",)
    phase = P.FENCING_REQUESTED if sys.flags.connect_zombie_fencing else P.FENCING_DONE
    inst = TaskInstance(n, generation, phase, True)
    return sys._put(s, w, s.workers[w].with_instance(inst)), ("fencing_requested",)


def start_task(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    return start(sys, s, w, n, s.workers[w].config_generation)


def _live(s: ConnectState, w: int, inst: TaskInstance) -> bool:
    """Whether ``inst`` on worker ``w`` is the task's current instance: its worker is a running group member
    that still owns the task, and it holds a producer."""
    wk = s.workers[w]
    return (
        wk.status == W.RUNNING  # no mutate: ghost
        and wk.member  # no mutate: ghost
        and inst.task in wk.assigned  # no mutate: ghost
        and not inst.stopping  # no mutate: ghost
        and inst.phase in (P.PRODUCER_READY, P.RUNNING)  # no mutate: ghost
    )


def init_producer(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """Steps 4-5: a stopping task returns; else ``producer.initTransactions()`` fences older instances of the id.

    ``ExactlyOnceWorkerSourceTask.prepareToInitializeTask`` (Kafka 3.9) checks ``isStopping()`` after the
    fencing round and before ``initTransactions()`` "so that newer generations are not fenced by
    accident": an instance its worker revoked meanwhile is gone without touching the producer.  The
    ghost notes a live instance of the id (on another worker that owns it now) fenced by an instance
    whose own worker is in the group -- not a zombie that missed the rebalance.
    """
    wk = s.workers[w]
    inst = wk.instance(n)
    assert inst is not None
    if inst.stopping and sys.flags.connect_stopping_task_skips_producer:
        return sys._put(s, w, wk.without_instance(n)), ("startup_stopped_before_producer",)
    kafka, handle, events = init_transactions(s.kafka, task_tid(n), 4, sys.cc)
    if wk.member:  # no mutate: ghost
        hit = tuple(
            (v, n, t.generation, inst.generation)  # no mutate: ghost
            for v, other in enumerate(s.workers)  # no mutate: ghost
            if v != w  # no mutate: ghost
            for t in other.tasks  # no mutate: ghost
            if t.task == n and _live(s, v, t)  # no mutate: ghost
        )
        s = s._replace(ghost=s.ghost._replace(live_fenced=(*s.ghost.live_fenced, *hit)))  # no mutate: ghost
    inst = inst._replace(phase=P.FAILED) if handle is None else inst._replace(phase=P.PRODUCER_READY, producer=handle)
    return s._replace(kafka=kafka, workers=_at(s.workers, w, wk.with_instance(inst))), (
        *events,
        "task_producer_initialized",
    )


def verify_generation(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """Step 6 (postProducerCheck): re-read the config topic; abort on a new generation or a revoked task."""
    wk = s.workers[w]
    inst = wk.instance(n)
    assert inst is not None
    # A start-up that throws fails the task; a stopping task is then gone (stopAndAwaitTask).
    failed = wk.without_instance(n) if inst.stopping else wk.with_instance(inst._replace(phase=P.FAILED))
    if sys.flags.connect_reread_after_producer_init:  # no branch: the weakened variant no_reread_after_producer_init
        generation = sys._latest(s).generation
        wk, failed = wk._replace(config_generation=generation), failed._replace(config_generation=generation)
        if generation != inst.generation:
            return sys._put(s, w, failed), ("startup_aborted_new_generation",)
    if n not in wk.assigned:
        return sys._put(s, w, failed), ("startup_aborted_revoked",)
    if inst.stopping:  # the send loop runs while !isStopping(): it ends at once (reached without the re-read)
        return sys._put(s, w, wk.without_instance(n)), ("startup_ended_stopping",)
    pos = read_offsets(sys, s, inst.generation, n)
    inst = inst._replace(phase=P.RUNNING, positions=pos, committed=pos)
    s = sys._put(s, w, wk.with_instance(inst))
    events: tuple[str, ...] = ("task_started_exactly_once",)
    if any(k > 0 for k in pos):
        events = (*events, "resumed_from_committed_offset")
    if sys.topo.offsets_topic == "connector":  # no mutate: ghost (a reach witness of FailOffsetCopy)
        glob = read_topic_offsets(s.kafka.partitions[GLOBAL_OFFSETS], sys.sources)  # no mutate: ghost
        if any(k > max(g, 0) for k, g in zip(pos, glob)):  # no mutate: ghost
            events = (*events, "resumed_ahead_of_global_offsets")
    first = CONNECTOR_OFFSETS if sys.topo.offsets_topic == "connector" else GLOBAL_OFFSETS  # no mutate: ghost
    if offsets_after_foreign(s.kafka.partitions[first]):  # no mutate: ghost (a reach witness of ForeignOffsetRecord)
        events = (*events, "started_past_foreign_offset_record")
    if all(g < inst.generation for g, _ in s.ghost.starts):
        start = (inst.generation, len(s.kafka.partitions[OUTPUT].log))  # no mutate: ghost
        s = s._replace(ghost=s.ghost._replace(starts=(*s.ghost.starts, start)))  # no mutate: ghost
        if inst.generation > 0:
            events = (*events, "newer_generation_started")
    return s, events


# -- the send loop (step 7) ---------------------------------------------------------------------


def fail_task(
    sys: ConnectCluster, s: ConnectState, w: int, inst: TaskInstance, kafka: KafkaCluster, error: str
) -> Result:
    s = s._replace(kafka=kafka)
    why = "task_producer_fenced" if error in _FENCED_ERRORS else f"task_failed:{error}"
    return sys._put(s, w, s.workers[w].with_instance(inst._replace(phase=P.FAILED))), (why,)


def poll(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    inst = s.workers[w].instance(n)
    assert inst is not None
    p = next(p for p, pos in enumerate(inst.positions) if 0 <= pos < sys.topo.records)
    rid = source_record(inst.generation, w, n, p, inst.positions[p])
    positions = _at(inst.positions, p, inst.positions[p] + 1)
    if not inst.exactly_once:
        kafka, _ = append_plain(s.kafka, OUTPUT, (rid,), sys.flags)
        inst = inst._replace(positions=positions, unflushed=True)
        return sys._put(s._replace(kafka=kafka), w, s.workers[w].with_instance(inst)), ("record_sent",)
    assert inst.producer is not None
    kafka, h, error, events = send_transactional(s.kafka, inst.producer, OUTPUT, (rid,), sys.flags)
    if error != Errors.NONE:
        return fail_task(sys, s, w, inst, kafka, error)
    inst = inst._replace(producer=h, positions=positions, pending=True)
    return sys._put(s._replace(kafka=kafka), w, s.workers[w].with_instance(inst)), (*events, "record_sent")


def fail_send(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """Fault: the next record's send fails with an error that is not a fencing (the task fails).

    ``AbstractWorkerSourceTask.sendRecords`` dispatches the record inside the open transaction (its
    offset is now the offset writer's to commit) and the producer's callback reports the failure --
    the batch expired after ``delivery.timeout.ms`` (a broker that kept answering NOT_ENOUGH_REPLICAS
    or timing out), or the broker refused it (RECORD_TOO_LARGE).  ``ExactlyOnceWorkerSourceTask
    .producerSendFailed`` ignores an asynchronous failure ("bubbled up again by
    Producer::commitTransaction"): the ``TransactionManager`` is in an abortable error, so the next
    ``send`` or ``commitTransaction`` throws and the task fails (Kafka 4.0, apache/kafka 1eb7644).
    Modelled as one step: the record is not written, the instance is FAILED with its transaction open
    (``pending``) and the failed record counted as dispatched.  A failed task is stopped without its
    final offset commit (:func:`stop`); its open transaction is aborted by the next instance's
    ``initTransactions`` on the task's transactional id.
    """
    inst = s.workers[w].instance(n)
    assert inst is not None
    p = next(p for p, pos in enumerate(inst.positions) if 0 <= pos < sys.topo.records)
    positions = _at(inst.positions, p, inst.positions[p] + 1)
    if not inst.exactly_once:
        return _fail_plain_send(sys, s, w, inst, positions)
    inst = inst._replace(positions=positions, pending=True)
    return fail_task(sys, s, w, inst, s.kafka, Errors.REQUEST_TIMED_OUT)


def _fail_plain_send(
    sys: ConnectCluster, s: ConnectState, w: int, inst: TaskInstance, positions: tuple[int, ...]
) -> Result:
    """The send failure of an at-least-once task (``WorkerSourceTask``, exactly-once support disabled).

    ``AbstractWorkerSourceTask.sendRecords`` submits the record to ``SubmittedRecords`` before the send; the
    producer's callback acknowledges it only on success.  ``WorkerSourceTask.producerSendFailed`` (Kafka 4.0,
    apache/kafka 1eb7644; since KAFKA-8586, commit 237e83dea08, PR #6993, Kafka 2.4) keeps the error
    (``producerSendException``) and leaves the record unacknowledged -- unless ``errors.tolerance=all``, not
    modelled -- so ``updateCommittableOffsets`` never moves the source offset past it, and the next
    ``maybeThrowProducerSendException`` fails the task.  Modelled as one step: the record is not written, the
    instance FAILED with the failed record's position not committable (``positions`` unchanged), and the final offset
    commit of ``AbstractWorkerSourceTask.execute``'s catch (``finalOffsetCommit(true)``; ``WorkerSourceTask``'s
    ignores the failure) flushes the offsets of the records acknowledged before.

    ``connect_plain_send_failure_fails_task`` off (the weakened variant ``plain_send_failure_ignored``, KAFKA-8586
    before its fix): the callback only logged the error and counted the record as sent, so the task went on and
    the next offset flush committed the failed record's offset -- the record is lost.
    """
    if not sys.flags.connect_plain_send_failure_fails_task:  # no branch: the variant plain_send_failure_ignored
        inst = inst._replace(positions=positions, unflushed=True)
        return sys._put(s, w, s.workers[w].with_instance(inst)), ("plain_send_failure_ignored",)
    s, events = fail_task(sys, s, w, inst, s.kafka, Errors.REQUEST_TIMED_OUT)
    events = ("at_least_once_send_failed", *events)
    if inst.unflushed:  # execute()'s catch: finalOffsetCommit(true), which ignores the failure
        s, more = commit_offsets(sys, s, w, inst.task)
        events = (*events, *more, "failed_task_offsets_flushed")
    return s, events


def fail_offset_flush(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """Fault: at a transaction boundary the offset writer fails to flush the transaction's offsets; the task fails.

    ``ExactlyOnceWorkerSourceTask.commitTransaction`` (Kafka 4.0, apache/kafka 1eb7644): ``offsetWriter.doFlush``
    reports an error that does not come from the producer (the offsets' converter cannot serialize them, or the
    backing store refuses them), so the producer never sees it.  Since KAFKA-14339 (PR #12920) the transaction is
    committed only if the offsets were flushed ("otherwise, we may commit source records without committing their
    offsets"): ``producer.commitTransaction`` is skipped, the flush cancelled and the error thrown -- the task
    fails with its transaction open, which the next instance's ``initTransactions`` aborts.  With
    ``connect_commit_only_flushed_offsets`` off (before KAFKA-14339) the records' transaction is committed
    without their offsets, then the task fails.  Shares the ``send_failure`` budget with :func:`fail_send`.
    """
    inst = s.workers[w].instance(n)
    assert inst is not None and inst.producer is not None
    kafka = s.kafka
    events: tuple[str, ...] = ("offset_flush_failed",)
    if not sys.flags.connect_commit_only_flushed_offsets:
        kafka, h, error, more = end_transaction(kafka, inst.producer, True, sys.cc)
        events = (*events, *more)
        if error == Errors.NONE:  # a fenced zombie's commit is refused: it fails all the same
            inst = inst._replace(producer=h, pending=False)
    s, more = fail_task(sys, s, w, inst, kafka, "offset_flush")
    return s, (*events, *more)


def fail_commit(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """Fault: at a transaction boundary the offsets are flushed into the transaction, then commitTransaction fails.

    ``ExactlyOnceWorkerSourceTask.commitTransaction`` (Kafka 4.0, apache/kafka 1eb7644) sends the offsets through the
    transactional producer (``offsetWriter.doFlush``), then calls ``producer.commitTransaction()``; when that throws
    (the EndTxn timed out before it reached the coordinator: ``TimeoutException``) the task fails and its
    transaction -- the records *and their offsets* -- stays open in the log until the next instance's
    ``initTransactions`` aborts it.  The offsets topic then holds offsets of an aborted transaction, which only a
    reader with ``isolation.level=read_committed`` (KIP-618: the worker's offsets consumers) skips.  Shares the
    ``send_failure`` budget with :func:`fail_send`.  The same code path as a commit that succeeds: the fault is
    the error :func:`commit_txn_of` gets from its EndTxn (``commitTransaction`` throws), which it must turn into
    the task's failure -- never into offsets reported committed (``commitRecord``/``commit`` run only after
    ``producer.commitTransaction()`` returned).

    With a connector-specific offsets topic the offsets are copied into the worker's global offsets topic before
    the commit fails: ``ConnectorOffsetBackingStore.setPrimaryThenSecondary`` (Kafka 4.0, apache/kafka 1eb7644)
    issues the secondary write from the primary store's callback, which ``KafkaOffsetBackingStore``'s
    ``SetCallbackFuture`` completes when the transactional producer's sends of the offsets are acknowledged -- while
    ``producer.commitTransaction()`` flushes, before its EndTxn.  The worker's global store writes with its own
    non-transactional producer, so the copy stays although the transaction holding the records is aborted: the
    offsets of records that were never committed are in the global topic, and a new instance whose connector topic
    holds no committed offset for the partition resumes from them (the reach scenario
    ``connect_offset_copy_before_commit`` shows the records lost) -- if the worker reads the global topic as the
    documented fallback (``[connect] offsets_read = "kip-618"``).  Kafka's read (``"kafka-4.0"``,
    :func:`model.connect.offsets.combined_offsets`) never falls back while the connector keeps its own topic, so
    the copy stays unread until the connector moves back to the global topic.
    """
    inst = s.workers[w].instance(n)
    assert inst is not None and inst.producer is not None
    copied = ("offsets_copied_before_commit",) if sys.offsets_partition == CONNECTOR_OFFSETS else ()
    s, events = commit_txn_of(sys, s, w, inst, commit_error="commit_timeout")
    return s, ("commit_failed", *copied, *events)


def offset_records(sys: ConnectCluster, inst: TaskInstance) -> tuple[int, ...]:
    return tuple(
        offset_record(p, pos) for p, (pos, old) in enumerate(zip(inst.positions, inst.committed)) if pos != old
    )


def commit_txn_of(
    sys: ConnectCluster, s: ConnectState, w: int, inst: TaskInstance, copy: bool = True, commit_error: str = ""
) -> Result:
    """``commitTransaction()`` at a boundary: offsets into the same transaction, then commit.

    With a connector-specific offsets topic, the offsets are also copied into the worker's global offsets topic
    (``ConnectorOffsetBackingStore.setPrimaryThenSecondary``, Kafka 4.0, apache/kafka 1eb7644: the secondary
    write follows the primary's acknowledgement, inside commitTransaction's flush and before its EndTxn);
    ``copy`` false: that write fails, which Kafka only logs ("Failed to
    write offsets to secondary backing store") -- the global topic keeps older offsets, and a reader must prefer
    the connector's own (:func:`model.connect.offsets.combined_offsets`).  ``commit_error`` (the fault
    :func:`fail_commit`): ``producer.commitTransaction()`` throws after the flush (its EndTxn timed out), so the
    task fails with its transaction open and its offsets not committed."""
    assert inst.producer is not None
    kafka, h = s.kafka, inst.producer
    events: tuple[str, ...] = ()
    more: tuple[str, ...] = ()
    offsets = offset_records(sys, inst)
    in_txn = sys.flags.connect_offsets_in_transaction
    # A commit follows a Poll, whose record moved an offset: ``offsets`` is never empty here.
    if in_txn and offsets:  # no branch: in_txn is off only in the weakened variant source_offsets_outside_transaction
        kafka, h, sent, events = send_transactional(kafka, h, sys.offsets_partition, offsets, sys.flags)
        if sent != Errors.NONE:  # a fenced zombie: its offsets are refused first
            return fail_task(sys, s, w, inst, kafka, sent)
        if sys.offsets_partition == CONNECTOR_OFFSETS and copy:  # the secondary write, on the primary's acknowledgement
            kafka, _ = append_plain(kafka, GLOBAL_OFFSETS, offsets, sys.flags)
    error, more = (commit_error if sys.flags.connect_commit_error_fails_task else Errors.NONE), ()  # the fault
    if not commit_error:
        kafka, h, error, more = end_transaction(kafka, h, True, sys.cc)
    inst = inst._replace(producer=h)
    # Modelling choice: the offsets' send and the EndTxn are one step, so a producer fenced in between
    # (Kafka: commitTransaction throws ProducerFencedException after the flush) fails at the send above.
    if error != Errors.NONE:
        return fail_task(sys, s, w, inst, kafka, error)
    inst = inst._replace(pending=False)
    # in_txn is off only in the weakened variant source_offsets_outside_transaction
    inst = inst._replace(committed=inst.positions) if in_txn else inst._replace(unflushed=True)
    s = s._replace(kafka=kafka)
    return sys._put(s, w, s.workers[w].with_instance(inst)), (*events, *more, "source_txn_committed")


def fail_offset_copy(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """Fault: a commit at a transaction boundary whose copy of the offsets into the global topic fails."""
    inst = s.workers[w].instance(n)
    assert inst is not None
    s, events = commit_txn_of(sys, s, w, inst, copy=False)
    return s, ("offset_copy_failed", *events)


def commit_txn(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    inst = s.workers[w].instance(n)
    assert inst is not None
    return commit_txn_of(sys, s, w, inst)


def abort_txn(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """``TransactionContext.abortTransaction()``: the records are discarded, their offsets still committed.

    ``ExactlyOnceWorkerSourceTask`` (connector-defined boundaries, Kafka 3.9): ``maybeAbortTransaction``
    aborts the producer's transaction, then ``commitTransaction`` begins a new one, flushes the
    offsets the offset writer already holds for the discarded records and commits it -- "so that the
    records in that transaction are not reprocessed" (``TransactionContext`` javadoc).  Both happen in
    one call of the task thread, one step here.  The ghost notes the discarded source positions.

    An abort requested while the transaction is empty is ignored (``maybeAbortTransaction``, KAFKA-14799's
    fix, PR #13379); ``connect_ignore_empty_abort`` off (the weakened variant ``empty_abort_fails_task``)
    calls ``producer.abortTransaction()`` anyway, which throws, and the task fails.
    """
    inst = s.workers[w].instance(n)
    assert inst is not None and inst.producer is not None
    s = s._replace(connector_aborts=s.connector_aborts + 1)
    if not inst.pending:  # the transaction is empty (nothing polled since the last boundary)
        if sys.flags.connect_ignore_empty_abort:  # no branch: off only in the weakened variant empty_abort_fails_task
            return s, ("empty_abort_ignored",)
        return fail_task(sys, s, w, inst, s.kafka, "illegal_state")
    kafka, h, error, events = end_transaction(s.kafka, inst.producer, False, sys.cc)
    if error != Errors.NONE:
        return fail_task(sys, s, w, inst, kafka, error)
    discarded = tuple(  # no mutate: ghost
        (p, k)  # no mutate: ghost
        for p, (old, pos) in enumerate(zip(inst.committed, inst.positions))  # no mutate: ghost
        for k in range(max(old, 0), pos)  # no mutate: ghost
    )
    discarded = tuple(sorted({*s.ghost.discarded, *discarded}))  # no mutate: ghost
    s = s._replace(kafka=kafka, ghost=s.ghost._replace(discarded=discarded))  # no mutate: ghost
    if not sys.flags.connect_abort_commits_offsets:  # no branch: the weakened variant connector_abort_reprocesses
        inst = inst._replace(producer=h, positions=inst.committed, pending=False)
        return sys._put(s, w, s.workers[w].with_instance(inst)), (*events, "source_txn_aborted")
    s, more = commit_txn_of(sys, s, w, inst._replace(producer=h, pending=False))
    return s, (*events, "source_txn_aborted", *more)


def commit_offsets(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """The at-least-once offset flush: a plain write, separate from the records."""
    inst = s.workers[w].instance(n)
    assert inst is not None
    kafka, _ = append_plain(s.kafka, sys.offsets_partition, offset_records(sys, inst), sys.flags)
    inst = inst._replace(committed=inst.positions, unflushed=False)
    return sys._put(s._replace(kafka=kafka), w, s.workers[w].with_instance(inst)), ("offsets_flushed",)


def stop(sys: ConnectCluster, s: ConnectState, w: int, inst: TaskInstance) -> tuple[ConnectState, tuple[str, ...]]:
    """Stop an instance: step 8, the open transaction (or the offsets) is committed first.

    Only a running instance commits (``AbstractWorkerSourceTask.close`` → ``finalOffsetCommit(failed)``):
    a FAILED exactly-once task skips it ("Skipping final offset commit as task has failed",
    ``ExactlyOnceWorkerSourceTask``, Kafka 4.0) -- its transaction holds a record whose send failed.
    With ``connector`` boundaries the final transaction is committed only if the connector asked for it
    (``ExactlyOnceWorkerSourceTask``, Kafka 4.0 at apache/kafka 1eb7644: ``finalOffsetCommit`` calls
    ``maybeCommitFinalTransaction``, whose ``shouldCommitFinalTransaction`` for ``CONNECTOR`` is
    ``shouldCommitTransactionForBatch``: ``TransactionContext.shouldAbortBatch`` / ``shouldCommitBatch``).  The
    model's connector has no request pending at a stop -- its ``commitTransaction`` / ``abortTransaction`` requests
    are served at once (:func:`commit_txn`, :func:`abort_txn`) -- so the batch is left open: the producer is
    closed, the next instance's ``initTransactions`` (or a fencing round) aborts it, and its records, whose offsets
    were never committed, are polled again.  ``connect_connector_boundary_stop_keeps_batch_open`` off (the
    weakened variant ``connector_boundary_commits_on_stop``) commits the batch the connector never finished.
    """
    events: tuple[str, ...] = ("task_stopped",)
    final_commit = inst.phase == P.RUNNING or not sys.flags.connect_failed_task_skips_final_commit
    # connect_running_task_commits_on_stop is off only in the weakened variant running_task_skips_final_commit
    final_commit = final_commit and (inst.phase != P.RUNNING or sys.flags.connect_running_task_commits_on_stop)
    connector_bounded = inst.exactly_once and sys.topo.transaction_boundary == "connector"
    # the connector decides: no commit request is pending at a stop (see above)
    if connector_bounded and inst.pending and sys.flags.connect_connector_boundary_stop_keeps_batch_open:
        final_commit = False
        events = (*events, "connector_batch_left_open")
    if final_commit and inst.pending:
        s, more = commit_txn_of(sys, s, w, inst)
        events = (*events, *more)
    elif inst.phase == P.RUNNING and inst.unflushed:
        s, more = commit_offsets(sys, s, w, inst.task)
        events = (*events, *more)
    return sys._put(s, w, s.workers[w].without_instance(inst.task)), events


# -- tombstone offsets (KIP-618 source offsets, KAFKA-15018) ------------------------------------------


def tombstone_candidate(sys: ConnectCluster, s: ConnectState, inst: TaskInstance) -> int:
    """A source partition the task finished and may forget with a ``null`` offset, or -1.

    At a transaction boundary (nothing pending or unflushed), within the
    scenario's ``max_tombstones``.
    """
    topo = sys.topo
    if inst.phase != P.RUNNING or inst.pending or inst.unflushed:
        return -1
    # How many partitions the connector forgets is its own choice, bounded by the scenario (the environment).
    if len(s.deleted_sources) >= topo.max_tombstones:  # no mutate: the connector's budget
        return -1
    for p, pos in enumerate(inst.positions):
        if pos == topo.records and p not in s.deleted_sources:
            return p
    return -1


def _write_offsets(
    sys: ConnectCluster, kafka: KafkaCluster, inst: TaskInstance, partition: int, records: tuple[int, ...]
) -> tuple[KafkaCluster, TaskInstance, str, tuple[str, ...]]:
    """One offsets write: in a committed transaction of the task (exactly-once) or a plain append."""
    if not inst.exactly_once:
        kafka, _ = append_plain(kafka, partition, records, sys.flags)
        return kafka, inst, Errors.NONE, ()
    assert inst.producer is not None
    kafka, h, error, events = send_transactional(kafka, inst.producer, partition, records, sys.flags)
    if error == Errors.NONE:
        kafka, h, error, more = end_transaction(kafka, h, True, sys.cc)
        events = (*events, *more)
    return kafka, inst._replace(producer=h), error, events


def _tombstone(sys: ConnectCluster, s: ConnectState, w: int, n: int, second_write_fails: bool) -> Result:
    """``OffsetStorageWriter`` flushes ``{p: null}`` through ``ConnectorOffsetBackingStore.set``.

    With a connector-specific offsets topic there are two writes.  Since
    KAFKA-15018 the tombstone goes to the global topic first and the connector
    topic is written only if that succeeded; before it, the connector topic was
    written first and a failed write to the global topic was only logged.
    ``second_write_fails`` is the fault: the second of the two writes fails.
    """
    inst = s.workers[w].instance(n)
    assert inst is not None
    p = tombstone_candidate(sys, s, inst)  # >= 0: actions() offers the step only then
    tomb = (offset_tombstone(p),)
    kafka = s.kafka
    two_topics = sys.offsets_partition == CONNECTOR_OFFSETS
    events: tuple[str, ...] = ()
    if two_topics and sys.flags.connect_tombstone_to_global_first:
        kafka, _ = append_plain(kafka, GLOBAL_OFFSETS, tomb, sys.flags)
        if second_write_fails:
            s = s._replace(kafka=kafka)
            return s, ("offset_tombstone_to_global", "connector_offsets_write_failed")
        kafka, inst, error, events = _write_offsets(sys, kafka, inst, CONNECTOR_OFFSETS, tomb)
    else:
        kafka, inst, error, events = _write_offsets(sys, kafka, inst, sys.offsets_partition, tomb)
        # Two topics take the branch above, unless in the weakened variant tombstone_to_connector_topic_first.
        if error == Errors.NONE and two_topics and not second_write_fails:  # no branch: that variant only
            kafka, _ = append_plain(kafka, GLOBAL_OFFSETS, tomb, sys.flags)
        elif error == Errors.NONE and two_topics:  # no branch: that variant only
            events = (*events, "global_offsets_write_failed")
    if error != Errors.NONE:
        return fail_task(sys, s, w, inst, kafka, error)
    s = s._replace(kafka=kafka, deleted_sources=tuple(sorted((*s.deleted_sources, p))))
    return sys._put(s, w, s.workers[w].with_instance(inst)), (*events, "offset_tombstone_committed")


def commit_tombstone(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """The connector finished a source partition and commits a ``null`` offset for it (both writes succeed)."""
    return _tombstone(sys, s, w, n, False)


def fail_offset_write(sys: ConnectCluster, s: ConnectState, w: int, n: int) -> Result:
    """The tombstone commit, with the second of its two offsets-topic writes failing (a fault).

    Offered only with a connector-specific offsets topic (two writes).
    """
    return _tombstone(sys, s, w, n, True)
