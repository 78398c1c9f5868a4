"""The composed Kafka Connect model: a distributed Connect cluster running an exactly-once source connector.

KIP-618 as implemented (its §Task count records, §Source task startup, §Leader access to config topic,
§Zombie fencing, rolling upgrades) as a
:class:`model.interface.Model`, on top of the transactions model's Kafka:
workers (:mod:`model.connect.worker`), their source tasks
(:mod:`model.connect.source_task`), the herder's decisions and steps
(:mod:`model.connect.herder`), the config topic
(:mod:`model.connect.config_topic`), offsets (:mod:`model.connect.offsets`)
and the producers (:mod:`model.connect.producers`, which drive the shared
transaction coordinator, partition leaders and markers).

Actors: workers ``w<i>``; the Kafka cluster is passive (each client call is
one atomic step, see :mod:`model.connect.producers`).  Protocol steps: the
start-up protocol (StartTask, InitProducer, VerifyGeneration), the send loop
(Poll, CommitTransaction, AbortTransaction, CommitOffsets), the leader's work
(ClaimWritePrivileges, FenceZombies, WriteTaskCountRecord,
CommitTaskCountRecord, Reconfigure and CommitTaskConfigs -- ``putTaskConfigs``' two privileged writes --,
DeleteConnector: the connector is deleted and
later created again with the scenario's ``recreated_at`` generation), Rebalance, ResumeWorker, RestartWorker,
RestartFailedTask (a restart request for a FAILED task: a rebalance does not
restart it, ``DistributedHerder.restartTask``), CommitTombstone (the connector
forgets a finished source partition with a ``null`` offset).  Fault
FailOffsetWrite: the second of a tombstone commit's two offsets-topic writes
fails (KAFKA-15018).  Fault FailSend: an exactly-once task's send fails with a non-fencing error and the
task fails (``ExactlyOnceWorkerSourceTask``: commitTransaction rethrows it; no final offset commit); an at-least-once
task's send fails and the task fails with the record unacknowledged (``WorkerSourceTask``, KAFKA-8586; its final
offset commit covers the records acknowledged before); FailOffsetFlush
(the offsets cannot be flushed) and FailCommit (the offsets were flushed into the transaction, then
commitTransaction fails) share its budget.  Fault FailOffsetCopy: a commit's copy of the offsets into the
worker's global offsets topic fails (``ConnectorOffsetBackingStore.setPrimaryThenSecondary`` only logs a failed
secondary write), so the global topic keeps older offsets than the connector's own.  Fault ForeignOffsetRecord:
another writer appends a record the Connect reader cannot parse to the offsets topic the tasks read first (a hostile
input: KAFKA-15800's reader lost the records after it).
Faults with budgets: PauseWorker (a GC pause), CrashWorker, FailZombieFencing
(fenceProducers fails: 500), FailConfigWrite (a privileged write fails) and
RestartTask (a manual restart through REST).

Simplifications (documented): one connector; a task whose config reads no
source partition is not started (it would only fence and idle); a stopped
task commits its open transaction in the rebalance step that revokes it; the
connector's abort and the commit of the discarded records' offsets are one
step; the transaction timeout is not modelled (a crashed
task's open transaction is aborted by the next InitProducerId on its id).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from keos.model import codec
from keos.model.connect import config_topic as cfgt
from keos.model.connect import herder as herder
from keos.model.connect import source_task as task
from keos.model.connect.lifecycle import LEADER_STEPS, illegal_task_changes, prescribed_fencing
from keos.model.connect.offsets import foreign_record, offset_record
from keos.model.connect.producers import (
    KafkaCluster,
    append_plain,
)
from keos.model.connect.records import (
    CONFIG_TOPIC,
    CONNECT_FAULT_KINDS,
    CONNECTOR_OFFSETS,
    GLOBAL_OFFSETS,
    LEADER_TID,
    OUTPUT,
    ConnectConfig,
    ConnectGhost,
    ConnectState,
    task_tid,
)
from keos.model.connect.worker import ConnectWorker, TaskInstance, ZombieFencing, owned_partitions, source_record
from keos.model.connect.worker import TaskPhase as P
from keos.model.connect.worker import WorkerStatus as W
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.coordinator.transaction.transaction_state import is_valid_transition
from keos.model.interface import Action, ModelError, Property, Step
from keos.model.log.partition import PartitionLeader
from keos.model.variants import Variant

__all__ = ["CONNECT_ACTION_ARGS", "ConnectSystem"]

#: The argument names of each action in a trace (the trace codec; the searches never encode an action).
_ACTIONS_BY_ARGS: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (  # no mutate: codec
    (("worker", "task"), ("StartTask", "InitProducer", "VerifyGeneration")),  # no mutate: codec
    (("worker", "task"), ("Poll", "CommitTransaction", "AbortTransaction", "CommitOffsets")),  # no mutate: codec
    (("worker",), ("ClaimWritePrivileges", "FenceZombies", "WriteTaskCountRecord")),  # no mutate: codec
    (("worker",), ("CommitTaskCountRecord", "Reconfigure", "CommitTaskConfigs", "DeleteConnector")),  # no mutate: codec
    ((), ("Rebalance", "ForeignOffsetRecord")),  # no mutate: codec
    (("worker",), ("ResumeWorker", "RestartWorker", "PauseWorker", "CrashWorker")),  # no mutate: codec
    (("worker",), ("FailZombieFencing", "FailConfigWrite")),  # no mutate: codec
    (("worker", "task"), ("RestartTask", "RestartFailedTask")),  # no mutate: codec
    (("worker", "task"), ("CommitTombstone", "FailOffsetWrite", "FailSend", "FailOffsetFlush")),  # no mutate: codec
    (("worker", "task"), ("FailCommit", "FailOffsetCopy")),  # no mutate: codec
)
CONNECT_ACTION_ARGS: dict[str, tuple[str, ...]] = {  # no mutate: codec
    kind: args for args, kinds in _ACTIONS_BY_ARGS for kind in kinds  # no mutate: codec
}
#: The fault kind each fault action spends from the scenario's budget (the fault model).
FAULT_OF_ACTION = {  # no mutate: fault budget bookkeeping
    "PauseWorker": "pause",
    "CrashWorker": "crash",
    "FailZombieFencing": "fencing_failure",
    "FailConfigWrite": "config_write_failure",
    "RestartTask": "manual_restart",
    "FailOffsetWrite": "offset_write_failure",
    "FailSend": "send_failure",
    "FailOffsetFlush": "send_failure",
    "FailCommit": "send_failure",
    "FailOffsetCopy": "offset_copy_failure",
    "ForeignOffsetRecord": "foreign_offset_record",
}
#: Actions shown with ``connector=source`` (display only).
_CONNECTOR_ACTIONS = (  # no mutate: display
    "FenceZombies", "WriteTaskCountRecord", "CommitTaskCountRecord", "Reconfigure", "CommitTaskConfigs",
    "DeleteConnector",
)

Result = tuple[ConnectState, tuple[str, ...]]  # no mutate: a type alias

#: Steps that run in the herder tick of the worker's previous step (its configState not refreshed).
_SAME_TICK = ("DeleteConnector", "FenceZombies")


def _at(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*items[:i], value, *items[i + 1 :])


class ConnectSystem:
    """A Connect cluster with one exactly-once source connector, as a Model."""

    def __init__(
        self,
        config: ConnectConfig,
        variant: Variant,
        properties: Sequence[Property] = (),
        name: str = "connect",
        scenario_info: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.topo = config.topology
        self.variant = variant
        self.flags = variant.flags
        self.cc = tc.coordinator_config(self.flags, tc.SHORT_MAX_VALUE)
        self.sources = self.topo.source_partitions
        self.offsets_partition = CONNECTOR_OFFSETS if self.topo.offsets_topic == "connector" else GLOBAL_OFFSETS
        self._properties = tuple(properties)
        self._limits = config.faults.limits()
        self._scenario_info = scenario_info or {}  # no mutate: trace metadata (describe)
        self._cache_state: ConnectState | None = None
        self._cache_actions: frozenset[Action] = frozenset()

    # -- Model interface -------------------------------------------------------------------------

    def init_states(self) -> Sequence[ConnectState]:
        """Generation 0's task configs committed, no task-count record; every worker joined; no task started."""
        topo = self.topo
        tids = 1 + topo.max_tasks
        kafka = KafkaCluster(tuple(PartitionLeader() for _ in range(4)), (None,) * tids, 0)
        count = topo.task_counts[0]
        history = tuple(cfgt.config_record(cfgt.TASK_CONFIG, -1, 0, n) for n in range(count))
        kafka, _ = append_plain(
            kafka, CONFIG_TOPIC, (*history, cfgt.config_record(cfgt.COMMIT, -1, 0, count)), self.flags
        )
        end = len(kafka.partitions[CONFIG_TOPIC].log)
        kafka = self._earlier_run(kafka)
        members = tuple(range(len(topo.workers)))
        asg = herder.assignment(members, count, len(members))
        workers = tuple(ConnectWorker(member=True, leader=w == topo.leader, assigned=asg[w]) for w in members)
        claims = () if self._txn_leader(topo.leader) else ((topo.leader, end),)  # no mutate: ghost
        no_faults = (0,) * len(CONNECT_FAULT_KINDS)  # no mutate: fault budget bookkeeping
        no_aborts = 0  # no mutate: the connector's abort budget (its choice, bounded by the scenario)
        s = ConnectState(workers, topo.leader, False, kafka, no_aborts, no_faults, ConnectGhost(claims))
        if self._txn_leader(topo.leader):
            s = herder.claim_write_privileges(self, s, topo.leader)[0]
        return (s,)

    def _earlier_run(self, kafka: KafkaCluster) -> KafkaCluster:
        """What an earlier run of the connector left (the scenario's ``delivered``): records and their offsets.

        The output topic holds records ``0..d-1`` of each source partition, committed; their offset ``d`` is in the
        worker's global offsets topic, the connector's own, or both (``delivered_offsets``).  KIP-618 §Migration: a
        connector given its own ``offsets.storage.topic`` still finds the offsets it committed to the global topic,
        because ``ConnectorOffsetBackingStore.get`` (Kafka 4.0, apache/kafka 1eb7644) reads the worker's store for
        the partitions its own store lacks; so a task resumes partitions from either topic, and records committed
        before the scenario starts count for the delivery properties as any others do.
        """
        topo = self.topo
        done = [(p, d, where) for p, (d, where) in enumerate(zip(topo.delivered, topo.delivered_offsets)) if d > 0]
        if not done:
            return kafka
        records = tuple(source_record(-1, 0, 0, p, k) for p, d, _ in done for k in range(d))
        kafka, _ = append_plain(kafka, OUTPUT, records, self.flags)
        for partition, kinds in ((GLOBAL_OFFSETS, ("global", "both")), (CONNECTOR_OFFSETS, ("connector", "both"))):
            offsets = tuple(offset_record(p, d) for p, d, where in done if where in kinds)
            if offsets:
                kafka, _ = append_plain(kafka, partition, offsets, self.flags)
        return kafka

    def properties(self) -> Sequence[Property]:
        """The properties this instance checks."""
        return self._properties

    def within_bounds(self, state: ConnectState) -> bool:
        """Budgets, records and generations make the space finite."""
        return True

    def fingerprint(self, state: ConnectState) -> str:
        """Stable blake2b-64 fingerprint."""
        return codec.fingerprint(state)

    def fault_kinds(self) -> Sequence[str]:
        """Fault kinds with a budget."""
        return tuple(k for k, lim in zip(CONNECT_FAULT_KINDS, self._limits) if lim > 0)  # no mutate: simulation weights

    def fault_kind(self, action: Action) -> str | None:
        """The fault kind an action injects."""
        return FAULT_OF_ACTION.get(action.kind)

    # -- helpers ------------------------------------------------------------------------------------

    def _eos(self, w: int) -> bool:
        return self.topo.workers[w] == "enabled"

    def _txn_leader(self, w: int) -> bool:
        return herder.transactional_leader(self.topo.workers[w], self.flags.connect_transactional_leader)

    def _config(self, s: ConnectState) -> PartitionLeader:
        return s.kafka.partitions[CONFIG_TOPIC]

    def _can_write(self, wk: ConnectWorker, w: int) -> bool:
        """Whether leader ``w`` (running) serves requests that write the config topic (it holds its privileges)."""
        return not self._txn_leader(w) or (wk.config_producer is not None and not wk.fenced_from_config_topic)

    def _requesters(self, s: ConnectState) -> bool:
        return any(t.phase == P.FENCING_REQUESTED for wk in s.workers for t in wk.tasks)

    def _joins_round(self, s: ConnectState, round_: ZombieFencing) -> bool:
        """Whether a waiting fencing request the started ``round_`` does not answer yet would join it.

        ``DistributedHerder.doFenceZombieSourceTasks`` (Kafka 4.0, apache/kafka 1eb7644): a request for a connector
        that needs a fencing (pending fencing, a task-count record, not 1 -> 1) joins the round in
        ``activeZombieFencings`` whatever generation that round read.  Requests of generations the round already
        answers are not offered again (joining changes nothing for them).
        """
        if herder.fencing_plan(self._latest(s))[0] != herder.FENCE:
            return False
        upto = max(round_.generation, round_.joined)
        return any(t.phase == P.FENCING_REQUESTED and t.generation > upto for wk in s.workers for t in wk.tasks)

    def _answer_requesters(self, s: ConnectState, phase: str, upto: int | None = None) -> ConnectState:
        """The round's HTTP response reaches every task waiting on it (200: FENCING_DONE; 409/500: FAILED).

        A stopping task whose round failed is gone: its start-up threw while the worker awaited its stop.
        ``upto``: a round failed with 409 CONFLICT answers the requests of generations up to its own or the newest
        that joined it (:attr:`ZombieFencing.joined`); a task of a newer generation that did not join it was not
        waiting on it -- it sent its request to the leader that wrote its task configs
        (``DistributedHerder.fenceZombieSourceTasks`` forwards to the current leader), whose own round answers it.
        """
        def answered(t: TaskInstance) -> bool:
            return t.phase == P.FENCING_REQUESTED and (upto is None or t.generation <= upto)

        workers = tuple(
            wk._replace(
                tasks=tuple(
                    t._replace(phase=phase) if answered(t) else t
                    for t in wk.tasks
                    if not (t.stopping and answered(t) and phase == P.FAILED)
                )
            )
            for wk in s.workers
        )
        return s._replace(workers=workers)

    def _put(self, s: ConnectState, w: int, wk: ConnectWorker) -> ConnectState:
        return s._replace(workers=_at(s.workers, w, wk))

    def _needs_rebalance(self, s: ConnectState) -> bool:
        return s.rebalance_pending or any(herder.rejoins(wk) != wk.member for wk in s.workers)

    def _snapshot(self, s: ConnectState, upto: int) -> cfgt.ConfigSnapshot:
        f = self.flags
        return cfgt.snapshot(
            self._config(s),
            upto,
            f.connect_task_configs_effective_at_commit,
            f.connect_ignore_deleted_connector_commits,
            f.connect_tombstone_drops_task_configs,
        )

    def _latest(self, s: ConnectState) -> cfgt.ConfigSnapshot:
        return self._snapshot(s, cfgt.read_to_end(self._config(s)))

    def _restartable(self, s: ConnectState, w: int, n: int) -> cfgt.ConfigSnapshot | None:
        """``DistributedHerder.restartTask``: read to the end; 409 if a rebalance is due, 404 if the task is gone."""
        wk = s.workers[w]
        if wk.status != W.RUNNING or not wk.member or n not in wk.assigned:
            return None
        latest = self._latest(s)
        if latest.generation != wk.config_generation:
            return None
        # A task that reads no source partition is not started (the module's documented simplification).
        if not owned_partitions(self.topo.owners, latest.generation, n):  # no mutate: state-space reduction
            return None
        return latest

    # -- actions ------------------------------------------------------------------------------------

    def actions(self, state: ConnectState) -> list[Action]:
        """Enabled actions: worker steps, the leader's steps, rebalance, then faults."""
        out: list[Action] = []
        topo = self.topo
        for w, wk in enumerate(state.workers):
            if wk.status == W.PAUSED:
                out.append(Action("ResumeWorker", (w,)))
                continue
            if wk.status == W.CRASHED:
                out.append(Action("RestartWorker", (w,)))
                continue
            if wk.leader:
                # A worker dropped from the group still believes it leads (isLeader() reads its last
                # assignment) and finishes the tick it was in: the round in progress and a task
                # reconfiguration it was writing (putTaskConfigs: the commit record after the task configs);
                # it rejoins before it reclaims write privileges, starts a new round or a new reconfiguration.
                # DistributedHerder.tick: a leader that is fencedFromConfigTopic reclaims its write privileges.
                if wk.task_configs_written >= 0:
                    # putTaskConfigs blocks the tick thread: its commit record is the worker's next step.
                    out.append(Action("CommitTaskConfigs", (w,)))
                elif wk.member and self._txn_leader(w) and wk.fenced_from_config_topic:
                    out.append(Action("ClaimWritePrivileges", (w,)))
                if wk.task_configs_written < 0 and self._can_write(wk, w):
                    unstarted = wk.fencing is not None and wk.fencing.phase == "unstarted"
                    if (wk.fencing is None or unstarted) and wk.member and self._requesters(state):
                        out.append(Action("FenceZombies", (w,)))
                    elif wk.fencing is not None and not unstarted:
                        kind = "WriteTaskCountRecord" if wk.fencing.phase == "fenced" else "CommitTaskCountRecord"
                        out.append(Action(kind, (w,)))
                        if wk.member and self._joins_round(state, wk.fencing):
                            out.append(Action("FenceZombies", (w,)))
                    busy = wk.fencing is not None and wk.fencing.phase == "sent"
                    latest = self._latest(state)
                    g = latest.generation + 1
                    # A new reconfiguration (or deletion) is a herder request, handled in a tick after
                    # ensureActive: a worker dropped from the group rejoins first (DistributedHerder.tick).
                    if wk.member and not busy and g < len(topo.task_counts):
                        # Generation recreated_at is written by a connector deleted and created again.
                        delete = g == topo.recreated_at and latest.exists
                        out.append(Action("DeleteConnector" if delete else "Reconfigure", (w,)))
            for n in wk.assigned:
                if wk.member and wk.instance(n) is None and owned_partitions(topo.owners, wk.config_generation, n):
                    out.append(Action("StartTask", (w, n)))
            for t in wk.tasks:
                out.extend(Action(kind, (w, t.task)) for kind in self._task_steps(state, t))
                if t.phase == P.FAILED and self._restartable(state, w, t.task):
                    out.append(Action("RestartFailedTask", (w, t.task)))
        if self._needs_rebalance(state):
            out.append(Action("Rebalance", ()))
        # Faults: the environment, bounded per kind and in total (the scenario's [faults]); where a fault may
        # strike is the fault model's choice, not a rule of Kafka's, so keos mutate leaves these lines alone.
        used = state.faults_used
        if sum(used) >= self.config.faults.total:  # no mutate: fault budget
            return out
        lim = self._limits
        for w, wk in enumerate(state.workers):
            if used[0] < lim[0] and wk.status == W.RUNNING:  # no mutate: fault model
                out.append(Action("PauseWorker", (w,)))
            if used[1] < lim[1] and wk.status != W.CRASHED:  # no mutate: fault model
                out.append(Action("CrashWorker", (w,)))
            if (
                used[2] < lim[2]  # no mutate: fault model
                and wk.leader  # no mutate: fault model
                and wk.status == W.RUNNING  # no mutate: fault model
                and self._can_write(wk, w)  # no mutate: fault model
                and wk.member  # no mutate: fault model
                and wk.fencing is None  # no mutate: fault model
                and self._requesters(state)  # no mutate: fault model
                and herder.fencing_plan(self._latest(state))[0] == herder.FENCE  # no mutate: fault model
            ):
                out.append(Action("FailZombieFencing", (w,)))
            in_flight = wk.fencing is not None and wk.fencing.phase == "sent"  # no mutate: fault model
            in_flight = in_flight or wk.task_configs_written >= 0  # no mutate: fault model
            if used[3] < lim[3] and wk.status == W.RUNNING and in_flight:  # no mutate: fault model
                out.append(Action("FailConfigWrite", (w,)))
            if used[4] < lim[4]:  # no mutate: fault model
                out.extend(Action("RestartTask", (w, n)) for n in wk.assigned if self._restartable(state, w, n))
            two_topics = self.offsets_partition == CONNECTOR_OFFSETS  # no mutate: fault model
            if used[5] < lim[5] and two_topics and wk.status == W.RUNNING:  # no mutate: fault model
                out.extend(
                    Action("FailOffsetWrite", (w, t.task))
                    for t in wk.tasks
                    if task.tombstone_candidate(self, state, t) >= 0  # no mutate: fault model
                )
            if used[6] < lim[6] and wk.status == W.RUNNING:  # no mutate: fault model
                out.extend(
                    Action("FailSend", (w, t.task))
                    for t in wk.tasks
                    if "Poll" in self._task_steps(state, t)  # no mutate: fault model
                )
                out.extend(
                    Action(kind, (w, t.task))
                    for t in wk.tasks
                    if t.exactly_once and "CommitTransaction" in self._task_steps(state, t)  # no mutate: fault model
                    for kind in ("FailOffsetFlush", "FailCommit")  # no mutate: fault model
                )
            if used[7] < lim[7] and two_topics and wk.status == W.RUNNING:  # no mutate: fault model
                out.extend(
                    Action("FailOffsetCopy", (w, t.task))
                    for t in wk.tasks
                    if t.exactly_once and "CommitTransaction" in self._task_steps(state, t)  # no mutate: fault model
                )
        if used[8] < lim[8]:  # no mutate: fault model
            out.append(Action("ForeignOffsetRecord", ()))
        return out

    def _task_steps(self, s: ConnectState, t: TaskInstance) -> tuple[str, ...]:
        if t.phase == P.FENCING_DONE:
            return ("InitProducer",)
        if t.phase == P.PRODUCER_READY:
            return ("VerifyGeneration",)
        if t.phase != P.RUNNING:
            return ()
        steps: list[str] = []
        boundary = self.topo.transaction_boundary
        more = any(0 <= pos < self.topo.records for pos in t.positions)
        if more and not (t.exactly_once and boundary == "poll" and t.pending):
            steps.append("Poll")
        if t.pending:
            steps.append("CommitTransaction")
        # When the connector calls TransactionContext.abortTransaction is its own choice, bounded by the
        # scenario's max_connector_aborts (the environment, like the fault budgets) -- with records in the
        # transaction or none (KAFKA-14799: the task must ignore an empty one).
        if boundary == "connector" and s.connector_aborts < self.topo.max_connector_aborts:  # no mutate: connector
            steps.append("AbortTransaction")
        if t.unflushed:
            steps.append("CommitOffsets")
        if self.topo.max_tombstones and task.tombstone_candidate(self, s, t) >= 0:
            steps.append("CommitTombstone")
        return tuple(steps)

    def _enabled(self, state: ConnectState) -> frozenset[Action]:
        # Engines list a state's actions, then step each: remember the last state's set.
        if self._cache_state is not state:
            self._cache_state, self._cache_actions = state, frozenset(self.actions(state))
        return self._cache_actions

    def step(self, state: ConnectState, action: Action) -> Step | None:
        """Apply one action; ``None`` if it is not enabled."""
        if action not in self._enabled(state):  # no branch: engines step listed actions; a replayed trace may not
            return None
        fault = FAULT_OF_ACTION.get(action.kind)
        new, events = self._HANDLERS[action.kind](self, state, *action.args)
        # The worker's next tick refreshes its herder's configState (DistributedHerder.tick reads the config
        # updates its listener flagged): a deletion is no longer stale for it once it does anything else.
        if action.args and action.kind not in _SAME_TICK:
            w = action.args[0]
            if new.workers[w].deleted_this_tick:
                new = self._put(new, w, new.workers[w]._replace(deleted_this_tick=False))
        # Every coordinator transition the step's requests made is judged against TransactionState's table,
        # as in the transactions model (the Connect producers drive the same coordinator).
        # So is every change the step made to task instances, against the worker's life cycle of a task.
        bad = tuple(  # no mutate: ghost
            e for e in events  # no mutate: ghost
            if e.startswith("illegal:") or (e.startswith("txn:") and not is_valid_transition(*e[4:].split("->")))
        ) + illegal_task_changes(  # no mutate: ghost
            action.kind, state, new, events, self.topo.transaction_boundary != "connector"  # no mutate: ghost
        ) + self._stale_round_write(state, action, events) + self._round_judge(state, action, new)  # no mutate: ghost
        if bad:  # no branch: a ghost observer of a violation (task_lifecycle_legal, connect_coordinator_...)
            new = new._replace(ghost=new.ghost._replace(illegal=(*new.ghost.illegal, *bad)))  # no mutate: ghost
        if fault is not None:
            k = CONNECT_FAULT_KINDS.index(fault)
            new = new._replace(faults_used=_at(new.faults_used, k, new.faults_used[k] + 1))  # no mutate: fault budget
            events = (f"fault:{fault}", *events)
        return Step(new, events)

    def _stale_round_write(  # no mutate: judge
        self, s: ConnectState, action: Action, events: tuple[str, ...]
    ) -> tuple[str, ...]:
        """A round that sent its task-count record although the task configs it fenced for are no longer the latest.

        ``DistributedHerder.ZombieFencing.onZombieFencingSuccess`` (Kafka 4.0, apache/kafka 1eb7644) re-reads the
        config topic before it writes the record and fails the round with 409 CONFLICT when the task-config
        generation moved since the round read it: a record of the older round would clear the newer generation's
        pending fencing although no round fenced the zombies of the generations before it.
        """
        if action.kind != "WriteTaskCountRecord":
            return ()
        w = action.args[0]
        round_ = s.workers[w].fencing
        written = "task_count_record_sent" in events or "task_count_record_batched" in events
        latest = self._latest(s).generation
        if round_ is None or not written or latest == round_.generation:
            return ()
        where = f"task:round:w{w}.g{round_.generation}"
        return (f"{where}:task-count record sent after generation {latest}'s task configs",)

    def _round_judge(self, s: ConnectState, action: Action, new: ConnectState) -> tuple[str, ...]:  # no mutate: judge
        """Leader-only steps taken by a worker that is not the group's leader; rounds that fence other ids than Kafka's.

        ``DistributedHerder`` (Kafka 4.0, apache/kafka 1eb7644): a tick first rejoins the group (``ensureActive``),
        then serves requests only ``isLeader()`` may serve (:data:`model.connect.lifecycle.LEADER_STEPS`).  A round
        a fencing request starts (``doFenceZombieSourceTasks``) fences exactly the transactional ids
        :func:`model.connect.lifecycle.prescribed_fencing` reads off the config topic -- tasks 0..record-1, none for
        a first record or the 1 -> 1 shortcut -- and a step that starts no round fences nothing
        (``Admin.fenceProducers`` runs only in ``ZombieFencing.start``).  The fenced ids are those whose coordinator
        entry the step changed (InitProducerId bumps the epoch).
        """
        if action.kind not in LEADER_STEPS:
            return ()
        w = action.args[0]
        out: tuple[str, ...] = ()
        if not (s.workers[w].member and s.leader == w):
            out = (f"task:leader:w{w}:{action.kind} served by a worker that is not the group's leader",)
        if action.kind != "FenceZombies":
            return out
        ids = range(self.topo.max_tasks)
        fenced = tuple(n for n in ids if s.kafka.coordinator[task_tid(n)] != new.kafka.coordinator[task_tid(n)])
        old, round_ = s.workers[w].fencing, new.workers[w].fencing
        started = round_ is not None and round_.phase != "unstarted" and (old is None or old.phase == "unstarted")
        want = prescribed_fencing(s.kafka.partitions[CONFIG_TOPIC]) if started else ()
        if want != fenced:
            what = "no round may start" if want is None else f"task ids {list(want)}"
            out = (*out, f"task:round:w{w}:fenced task ids {list(fenced)} where Kafka's round fences {what}")
        return out

    # -- worker processes and faults -----------------------------------------------------------------

    def _pause(self, s: ConnectState, w: int) -> Result:
        return self._put(s, w, s.workers[w]._replace(status=W.PAUSED)), ("worker_paused",)

    def _resume(self, s: ConnectState, w: int) -> Result:
        return self._put(s, w, s.workers[w]._replace(status=W.RUNNING)), ("worker_resumed",)

    def _crash(self, s: ConnectState, w: int) -> Result:
        member = s.workers[w].member
        return self._put(s, w, ConnectWorker(status=W.CRASHED, member=member)), ("worker_crashed",)

    def _restart_worker(self, s: ConnectState, w: int) -> Result:
        return self._put(s, w, ConnectWorker(member=False)), ("worker_restarted",)

    def _foreign_offset_record(self, s: ConnectState) -> Result:
        """Fault (a hostile input): a writer that is not Connect -- a tool, another cluster, a connector sharing
        ``offsets.storage.topic`` -- appends with a plain producer a record whose key is not Connect's
        ``[connector, partition]`` JSON to the offsets topic the tasks read first (the connector's own if it has one).
        Kafka's reader ignores it since KAFKA-15800 (``OffsetUtils.processPartitionKey``, Kafka 3.7)."""
        topic = CONNECTOR_OFFSETS if self.topo.offsets_topic == "connector" else GLOBAL_OFFSETS
        kafka, _ = append_plain(s.kafka, topic, (foreign_record(),), self.flags)
        return s._replace(kafka=kafka), ("foreign_offset_record",)

    def _restart_task(self, s: ConnectState, w: int, n: int) -> Result:
        latest = self._restartable(s, w, n)
        assert latest is not None
        s = self._put(s, w, s.workers[w]._replace(config_generation=latest.generation))
        events: tuple[str, ...] = ("manual_restart",)
        old = s.workers[w].instance(n)
        if old is not None:
            s, events = task.stop(self, s, w, old)
            events = ("manual_restart", *events)
        s, more = task.start(self, s, w, n, latest.generation)
        return s, (*events, *more)

    def _restart_failed_task(self, s: ConnectState, w: int, n: int) -> Result:
        """``POST /connectors/{c}/tasks/{n}/restart`` for a FAILED task: stop it, start it afresh."""
        # Offered by actions() only for a FAILED instance that _restartable() accepts.
        new, events = self._restart_task(s, w, n)
        return new, ("failed_task_restart_requested", *events)

    _HANDLERS: ClassVar[dict[str, Callable[..., Result]]] = {}

    # -- codec and display ---------------------------------------------------------------------------

    def action_to_json(self, action: Action) -> dict[str, Any]:
        """``{"kind": ..., <arg>: <value>}``."""
        return codec.action_to_json(action, CONNECT_ACTION_ARGS)

    def action_from_json(self, data: Any) -> Action:
        """Decode an action; raises :class:`ModelError` on malformed input."""
        values = codec.action_from_json(data, CONNECT_ACTION_ARGS).args
        if not all(type(v) is int and v >= 0 for v in values):  # input: a hand-edited trace (tests/test_bad_input.py)
            raise ModelError(f"action {data['kind']}: worker and task must be non-negative integers")
        return Action(data["kind"], values)

    def format_action(self, action: Action) -> str:
        """``StartTask(worker=1, task=0)``, ``FenceZombies(worker=2, connector=source)``."""
        names = CONNECT_ACTION_ARGS.get(action.kind, ())
        parts = [f"{n}={v}" for n, v in zip(names, action.args, strict=False)]
        if action.kind in _CONNECTOR_ACTIONS:  # no branch: display; the gate prints no connector-level action
            parts.append(f"connector={cfgt.CONNECTOR}")
        return f"{action.kind}({', '.join(parts)})"

    def state_to_json(self, state: ConnectState) -> dict[str, Any]:
        """A JSON view of the state."""
        out = codec.to_json(state)
        assert isinstance(out, dict)
        return out

    def describe(self) -> dict[str, Any]:
        """Scenario, variant and bounds, recorded in traces."""
        return {
            "model": self.name,
            **self._scenario_info,
            "variant": self.variant.name,
            "flags": self.flags.to_json(),
            "topology": self.topo.to_json(),
            "faults": self.config.faults.to_json(),
            "leader_transactional_id": LEADER_TID,
        }


ConnectSystem._HANDLERS.update(
    {
        "StartTask": task.start_task,
        "InitProducer": task.init_producer,
        "VerifyGeneration": task.verify_generation,
        "Poll": task.poll,
        "CommitTransaction": task.commit_txn,
        "AbortTransaction": task.abort_txn,
        "CommitOffsets": task.commit_offsets,
        "ClaimWritePrivileges": herder.claim_write_privileges,
        "FenceZombies": herder.fence_zombies,
        "WriteTaskCountRecord": herder.write_task_count_record,
        "CommitTaskCountRecord": herder.commit_task_count_record,
        "Reconfigure": herder.reconfigure,
        "CommitTaskConfigs": herder.commit_task_configs,
        "DeleteConnector": herder.delete_connector,
        "Rebalance": herder.rebalance,
        "ResumeWorker": ConnectSystem._resume,
        "RestartWorker": ConnectSystem._restart_worker,
        "PauseWorker": ConnectSystem._pause,
        "CrashWorker": ConnectSystem._crash,
        "FailZombieFencing": herder.fail_zombie_fencing,
        "FailConfigWrite": herder.fail_config_write,
        "RestartTask": ConnectSystem._restart_task,
        "RestartFailedTask": ConnectSystem._restart_failed_task,
        "CommitTombstone": task.commit_tombstone,
        "FailOffsetWrite": task.fail_offset_write,
        "FailSend": task.fail_send,
        "FailOffsetFlush": task.fail_offset_flush,
        "FailCommit": task.fail_commit,
        "FailOffsetCopy": task.fail_offset_copy,
        "ForeignOffsetRecord": ConnectSystem._foreign_offset_record,
    }
)
