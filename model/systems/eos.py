"""A consume-transform-produce application over transactions and a consumer group.

KIP-98 §"consume-transform-produce" and KIP-447 (``OffsetMetadataManager``,
``TransactionCoordinator.handleAddPartitionsToTransaction``).
Each application instance ``i`` is a member ``i`` of one classic consumer
group and owns a transactional producer (transactional.id ``i``, KIP-447: one
id per instance, not per input partition).  The input partition holds
``input_records`` records (offsets ``0..N-1``); the output record for input
offset ``k`` goes to output partition 0.  An instance that owns the input
partition loops::

    OffsetFetch(requireStable)            -> position := committed offset
                                             (UNSTABLE_OFFSET_COMMIT: wait)
    beginTransaction; poll(); send(out)   -> "Process": one input record per transaction
    sendOffsetsToTransaction(position, groupMetadata)
        TV0/TV1: AddOffsetsToTxn (transaction coordinator), then TxnOffsetCommit
        TV2:     TxnOffsetCommit (the group coordinator adds the partition, KIP-890)
    commitTransaction                      -> EndTxn; markers to the output partition
                                              and to the group's __consumer_offsets partition
    on an abortable error: abortTransaction, then seek back to the committed
    offset (KAFKA-17582: the position does not rewind by itself)

Rebalances are a fault (``Rebalance(instance)``: the group moves to the next
generation and the input partition to ``instance``).  The application learns
the new generation and assignment only at its ``SyncGroup``; until then it is a
*zombie* holding the old group metadata, and its TxnOffsetCommit fails with
ILLEGAL_GENERATION (KIP-447 fencing by generation).  An instance that learns it
lost the partition while its transaction is open aborts it
(``onPartitionsLost``; Kafka Streams closes the task dirty) -- or, once its
offsets are staged, may still commit.

**Protocol mode** (``[eos] assignor``, issue 28): instead of the abstract ``Rebalance`` the
instances run the classic rebalance protocol as :mod:`model.systems.groups` composes it -- each
instance's consumer (:mod:`model.clients.consumer_coordinator`) sends JoinGroup / SyncGroup /
Heartbeat to the classic group (:mod:`model.coordinator.group.classic_group`), whose leader runs the
assignor (:mod:`model.coordinator.group.assignors`; eager range/roundrobin/sticky or
cooperative-sticky); rebalances come from late joins (``Start``), ``LeaveGroup`` and
``SessionTimeout`` (the ``rebalance`` budget) and heartbeat errors.  The consumer's owned partitions
are the application's ownership; JoinGroup and SyncGroup (and the rebalance listener) run inside
``poll()``, between transactions; the heartbeat thread at any time.  ``sendOffsetsToTransaction``
captures ``KafkaConsumer.groupMetadata()`` (generation, member id; ``group.instance.id`` is null:
static membership is not modelled) and the group coordinator validates the TxnOffsetCommit with
``ClassicGroup.validateOffsetCommit(isTransactional=true)`` (Kafka 4.0, trunk ``1eb7644349cb``:
``OffsetMetadataManager.validateTransactionalOffsetCommit``), then stages it as pending in
:mod:`model.coordinator.group.group_coordinator` until the marker (``replayEndTransactionMarker``).
The client side follows ``TransactionManager.TxnOffsetCommitHandler``: UNKNOWN_MEMBER_ID and
ILLEGAL_GENERATION are abortable (CommitFailedException).

Abstractions: the input partition is a fixed, non-transactional log (reading
it is local); OffsetFetch and SyncGroup are atomic request/response steps; the
group coordinator lives on the broker and its messages are not lost (their
connection resets are not modelled); offsets are those of one input partition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from keos.model import network as net
from keos.model.clients import consumer_coordinator as cc
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.clients.txn_reactions import unexpected_offsets_reaction
from keos.model.coordinator.group import assignors as asg
from keos.model.coordinator.group import classic_group as cg
from keos.model.coordinator.group import group_coordinator as gc
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.coordinator.transaction.answer_table import Ask
from keos.model.interface import Action, ModelError, Property
from keos.model.log import partition as part
from keos.model.log.partition import PartitionLeader
from keos.model.protocol.errors import RETRIABLE, Errors
from keos.model.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    VerifyTxnOffsetCommitRequest,
    VerifyTxnOffsetCommitResponse,
    WriteTxnMarkersRequest,
)
from keos.model.security import gate as authz
from keos.model.systems.commit_fencing import misfenced
from keos.model.systems.offset_fetch_table import fetch_table_mismatches
from keos.model.systems.transactions import (
    COORDINATOR,
    FAULT_OF_ACTION,
    TXN_ACTION_ARGS,
    TXN_STATE_REFUSALS,
    VERIFICATION_CONNECTION,
    Result,
    TransactionalSystem,
    _at,
    _flagged,
    _judge_version_request,
    _moved,
    _moved_to,
    stale_response_read,
)
from keos.model.systems.transactions_records import (
    AppInstance,
    EosConfig,
    TxnConfig,
    TxnSystemState,
)
from keos.model.systems.txn_offset_commit_table import (
    OffsetAsk,
    PlainOffsetAsk,
    offset_table_mismatch,
    plain_offset_table_mismatch,
)
from keos.model.variants import Variant

__all__ = [
    "EOS_ACTION_ARGS",
    "GROUP",
    "GROUP_COORDINATOR",
    "INPUT_PARTITION",
    "OUTPUT_PARTITION",
    "EosSystem",
    "OffsetsPhase",
    "current_owner",
    "decode_output",
    "moved_mid_transaction",
    "output_record",
]

GROUP_COORDINATOR = "gc"
GROUP = 0
INPUT_PARTITION = 0
OUTPUT_PARTITION = 0
OFFSETS_PARTITION = tc.OFFSETS_PARTITION_BASE + GROUP

#: The plain application's calls (BeginTransaction, Send) are replaced by Process.
EOS_ACTION_ARGS: dict[str, tuple[str, ...]] = {  # no mutate: trace format (JSON keys, display)
    **{k: v for k, v in TXN_ACTION_ARGS.items() if k not in ("BeginTransaction", "Send", "SendRejected")},
    "FetchOffsets": ("instance",),
    "Process": ("instance",),
    # ``[transactions] send_rejections``: the iteration's send(out) is refused synchronously (KAFKA-9279)
    "ProcessSendRejected": ("instance",),
    "SendAddOffsetsToTxn": ("instance",),
    "CommitOffsets": ("instance",),
    # a mixed application's consumer commits its position outside the transaction (``[eos] plain_commits``)
    "CommitAsync": ("instance",),
    "SyncGroup": ("instance",),
    "Rebalance": ("instance",),
    # protocol mode (``[eos] assignor``): the classic rebalance protocol
    "Start": ("instance",),
    "JoinGroup": ("instance",),
    "CompleteJoin": (),
    "Heartbeat": ("instance",),
    "SessionTimeout": ("instance",),
    "LeaveGroup": ("instance",),
    # the group coordinator moves to another broker (the ``coordinator_failover`` budget)
    "GroupCoordinatorFailover": (),
    # the new group coordinator finishes loading the group (a protocol step, no fault)
    "GroupCoordinatorLoaded": (),
}

#: The input topic the group subscribes to (one partition, :data:`INPUT_PARTITION`).
INPUT_TOPIC = "input"

#: Producer states in which the application is inside ``poll()`` between two transactions (the
#: loop polls before ``beginTransaction``): where a rebalance's JoinGroup/SyncGroup and the
#: rebalance listener run.
BETWEEN_TRANSACTIONS = (tp.C.UNINITIALIZED, tp.C.READY, tp.C.FATAL_ERROR)

#: The state of a consumer its instance closed (LeaveGroup): the instance has shut down for good.
CLOSED = "CLOSED"

#: The connection of an instance's consumer to the group coordinator (its plain OffsetCommits, ``[eos]
#: plain_commits``): the consumer's NetworkClient is not the producer's, so its requests and the producer's
#: TxnOffsetCommit are not ordered with each other.
CONSUMER_CONNECTION = -1

#: TxnOffsetCommit errors by which the group coordinator fences a member that lost its partition.
FENCING_ERRORS = (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID)

#: TxnOffsetCommit errors the client retries -- every ``RetriableException`` (``TxnOffsetCommitHandler``, Kafka trunk
#: 1eb7644349cb: COORDINATOR_NOT_AVAILABLE / NOT_COORDINATOR / REQUEST_TIMED_OUT after a coordinator lookup, the others
#: with ``continue``); abortable ones (CommitFailedException, FENCED_INSTANCE_ID, TRANSACTION_ABORTABLE, a denied
#: group); the rest is fatal.
RETRIABLE_OFFSET_ERRORS = (
    Errors.CONCURRENT_TRANSACTIONS,
    Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_COORDINATOR,
    Errors.COORDINATOR_LOAD_IN_PROGRESS,
    *sorted(RETRIABLE - {Errors.CONCURRENT_TRANSACTIONS, Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
                         Errors.COORDINATOR_LOAD_IN_PROGRESS}),
)
ABORTABLE_OFFSET_ERRORS = (
    Errors.ILLEGAL_GENERATION,
    Errors.UNKNOWN_MEMBER_ID,
    Errors.FENCED_INSTANCE_ID,
    Errors.TRANSACTION_ABORTABLE,
    Errors.GROUP_AUTHORIZATION_FAILED,
)


class OffsetsPhase:
    """``AppInstance.offsets``: where the current transaction's offset commit stands."""

    NONE = ""
    ADD = "ADD_OFFSETS"  # TV0/TV1: AddOffsetsToTxn to send or in flight
    COMMITTING = "TXN_OFFSET_COMMIT"  # TxnOffsetCommit in flight
    DONE = "DONE"  # staged at the group coordinator: commitTransaction may go
    PLAIN = "PLAIN"  # offsets_outside_transaction: OffsetCommit after commitTransaction
    PLAIN_SENT = "PLAIN_SENT"


P = OffsetsPhase


def assigned_to(s: TxnSystemState, i: int) -> bool:
    """Whether the group assigns the input partition to instance ``i`` (protocol mode, where the state has the
    classic group's ``members``: the last assignment a leader's SyncGroup brought gave it to ``i``'s member,
    which is still in the group -- during a cooperative rebalance the owner keeps its partition until it
    revokes it)."""
    members = s.members
    if members is None:
        return s.group is not None and s.group.assignment[INPUT_PARTITION] == i
    c = s.consumers[i]
    return members.member(c.member_id) is not None and c.member_id == s.ghost.assigned_member


def current_owner(s: TxnSystemState, i: int) -> bool:
    """Whether instance ``i`` is the input partition's rightful owner: assigned it, and (abstract mode) it
    learnt the group's current generation at its SyncGroup."""
    if s.members is None:
        g = s.group
        return g is not None and assigned_to(s, i) and s.apps[i].generation == g.generation
    return assigned_to(s, i)


def moved_mid_transaction(s: TxnSystemState) -> bool:
    """Reach witness: an instance holds a transaction with an input record open while the group assigns the
    input partition elsewhere (a rebalance or an expired session moved it away: the instance is a zombie)."""
    return any(
        app.processing >= 0 and s.clients[i].state not in BETWEEN_TRANSACTIONS and not assigned_to(s, i)
        for i, app in enumerate(s.apps)
    )


def output_record(instance: int, txn: int, input_offset: int, input_records: int) -> int:
    """The output record id for ``input_offset`` written by ``instance`` in its transaction ``txn``."""
    return prod.record_id(instance, txn * input_records + input_offset)


def decode_output(rid: int, input_records: int) -> tuple[int, int, int]:
    """``(instance, txn, input_offset)`` of an output record id."""
    instance, n = prod.record_owner(rid)
    txn, k = divmod(n, input_records)
    return instance, txn, k


class EosSystem(TransactionalSystem):
    """The transactions system plus a group coordinator and consume-transform-produce instances."""

    ACTION_ARGS: ClassVar[dict[str, tuple[str, ...]]] = EOS_ACTION_ARGS
    FAULT_OF_ACTION: ClassVar[dict[str, str]] = {
        **FAULT_OF_ACTION,
        "Rebalance": "rebalance",
        "SessionTimeout": "rebalance",
        # no LeaveGroup: a close() is the application's step, not a fault (see _fault_free_fencing)
        "GroupCoordinatorFailover": "coordinator_failover",
    }

    def __init__(
        self,
        config: TxnConfig,
        variant: Variant,
        properties: Sequence[Property] = (),
        name: str = "eos",
        scenario_info: dict[str, Any] | None = None,
    ) -> None:
        topo = config.topology
        # a programmatic TxnConfig: the scenario loader rejects both shapes first (ScenarioError, its own message)
        if topo.shared_transactional_id or topo.partitions != 1 or topo.records_per_transaction != 1:  # input: config
            raise ModelError("the eos model needs one output partition, one record per transaction, own ids")
        self.eos = config.eos or EosConfig()
        inputs = topo.transactions_per_producer * self.eos.input_records
        if self.eos.input_records < 1 or inputs >= 1000:  # input: a hand-edited scenario
            raise ModelError("eos: input_records must be >= 1 and transactions * input_records < 1000")
        #: protocol mode: the instances run the classic rebalance protocol with this assignor
        self.protocol = bool(self.eos.assignor)
        self.cooperative = self.eos.assignor in asg.COOPERATIVE
        if self.protocol:
            try:
                self.assignor = asg.load_assignor(self.eos.assignor)
            except asg.AssignorError as exc:
                raise ModelError(f"eos: {exc}") from None
            if not 0 <= self.eos.late_instances < topo.producers:  # input: a hand-edited scenario
                raise ModelError("eos: late_instances must leave at least one instance in the first generation")
        elif self.eos.late_instances:  # input: a hand-edited scenario
            raise ModelError("eos: late_instances needs an assignor (the classic rebalance protocol)")
        super().__init__(config, variant, properties, name, scenario_info)

    def init_states(self) -> Sequence[TxnSystemState]:
        """Every instance a member of generation 1; instance 0 owns the input partition."""
        base = super().init_states()[0]
        n = len(base.clients)
        if self.protocol:
            return (self._form_group(base, n),)
        group = gc.form_group(GROUP, tuple(range(n)), (0,))
        apps = tuple(AppInstance(group.generation, i == 0) for i in range(n))
        ghost = base.ghost._replace(start_owner=0)  # no mutate: ghost (the first owner counts as the last one)
        return (base._replace(group=group, apps=apps, ghost=ghost),)

    def _form_group(self, base: TxnSystemState, n: int) -> TxnSystemState:
        """Protocol mode: the first generation, formed by the protocol's own steps.

        Every instance but the ``late_instances`` first ones starts, sends JoinGroup, the join
        barrier lifts, the leader's SyncGroup brings the assignor's assignment and the followers
        sync: the group is Stable at generation 1 before the exploration begins.
        """
        late = self.eos.late_instances
        s = base._replace(
            group=gc.GroupMetadata(GROUP),
            members=cg.empty_group(),
            consumers=tuple(cc.fresh(up=False) for _ in range(n)),
            apps=tuple(AppInstance() for _ in range(n)),
        )
        first = range(late, n)
        for i in first:
            for handler in (self._start, self._join_group):
                result = handler(s, i)
                assert result is not None
                s = result[0]
        completed = self._complete_join(s)
        assert completed is not None
        s = completed[0]
        members = s.members
        assert members is not None
        leader = next(i for i in first if s.consumers[i].member_id == members.leader)
        for i in (leader, *(i for i in first if i != leader)):
            synced = self._protocol_sync(s, i)
            assert synced is not None
            s = synced[0]
        # the first owner counts as the last one to start (as in the abstract mode), by the one ownership rule every
        # later start is judged by (current_owner): a ghost of its own here could name an instance that never owned
        # the partition and make the first real start look like a takeover (owner_started_after_move)
        owner = next((i for i in first if current_owner(s, i)), -1)
        return s._replace(ghost=s.ghost._replace(start_owner=owner))

    def describe(self) -> dict[str, Any]:  # no mutate: display (the trace header)
        """Scenario, variant and bounds, plus the application's input and group protocol."""
        protocol = {
            "assignor": self.eos.assignor,
            "protocol": "cooperative" if self.cooperative else "eager",
            "late_instances": self.eos.late_instances,
        }
        eos = {"input_records": self.eos.input_records, **(protocol if self.protocol else {})}
        return {**super().describe(), "eos": eos}

    # -- actions ---------------------------------------------------------------------------------------

    def _may_init_transactions(self, state: TxnSystemState, i: int) -> bool:
        """An instance initialises its producer when it is first assigned the input partition."""
        return state.apps[i].owns

    def _application_actions(self, state: TxnSystemState, i: int, c: tp.TxnClient) -> list[Action]:
        out: list[Action] = []
        for kind in ("FetchOffsets", "Process", "SendAddOffsetsToTxn"):
            if self._app_step(state, kind, i) is not None:
                out.append(Action(kind, (i,)))
                if kind == "Process" and self._output_rejectable(state, i):
                    out.append(Action("ProcessSendRejected", (i,)))
        if self._commit_ok(state, i):
            out.append(Action("CommitTransaction", (i,)))
        if self._abort_ok(state, i):
            out.append(Action("AbortTransaction", (i,)))
        if self._plain_commit_ok(state, i):  # unreachable: weakened variant offsets_outside_transaction
            out.append(Action("CommitOffsets", (i,)))
        if self._may_commit_async(state, i):
            out.append(Action("CommitAsync", (i,)))
        if self.protocol:
            return out + self._group_actions(state, i)
        g = state.group
        if g is not None and g.state == gc.COMPLETING_REBALANCE and i in g.members and i not in g.synced:
            out.append(Action("SyncGroup", (i,)))
        return out

    def _group_actions(self, s: TxnSystemState, i: int) -> list[Action]:
        """Protocol mode: the consumer's group requests and the coordinator's timing steps for ``i``."""
        return [Action(kind, (i,)) for kind, ok in self._GROUP_GUARDS.items() if ok(self, s, i)]

    # One guard per group request, read by actions() and by the request's own step alike (a trace that
    # names a request its guard refuses is refused by the step).

    def _may_start(self, s: TxnSystemState, i: int) -> bool:
        c = s.consumers[i]
        return not c.up and c.state != CLOSED

    def _may_join(self, s: TxnSystemState, i: int) -> bool:
        """JoinGroup from poll(), between transactions, by a consumer that must (re)join."""
        c = s.consumers[i]
        return c.up and c.state == cc.UNJOINED and s.clients[i].state in BETWEEN_TRANSACTIONS

    def _may_sync(self, s: TxnSystemState, i: int) -> bool:
        """SyncGroup from poll(), between transactions, once the coordinator would answer it."""
        c = s.consumers[i]
        between = s.clients[i].state in BETWEEN_TRANSACTIONS
        return c.up and c.state == cc.AWAITING_SYNC and between and self._sync_request(s, i) is not None

    def _may_heartbeat(self, s: TxnSystemState, i: int) -> bool:
        """The heartbeat thread's request, modelled only when its answer is an error."""
        c, g = s.consumers[i], s.members
        assert g is not None
        beating = c.up and c.state in (cc.STABLE, cc.AWAITING_SYNC)
        return beating and cg.heartbeat(g, c.member_id, c.generation) != Errors.NONE

    def _is_member(self, s: TxnSystemState, i: int) -> bool:
        c, g = s.consumers[i], s.members
        assert g is not None
        return c.up and g.member(c.member_id) is not None

    def _may_leave(self, s: TxnSystemState, i: int) -> bool:
        """close() between transactions (LeaveGroup) by a member."""
        return self._is_member(s, i) and s.clients[i].state in BETWEEN_TRANSACTIONS

    def _protocol_actions(self, state: TxnSystemState) -> list[Action]:
        """The application's and clients' steps, plus the end of a new group coordinator's load."""
        out = super()._protocol_actions(state)
        # the join barrier lifts at the coordinator, once per group (not one instance's step)
        if state.members is not None and cg.join_complete_ready(state.members):
            out.append(Action("CompleteJoin", ()))
        if state.group is not None and state.group.loading:
            out.append(Action("GroupCoordinatorLoaded", ()))
        return out

    def _droppable(self, env: net.Envelope) -> bool:
        """A connection reset may lose a TxnOffsetCommit or its answer too (the group coordinator's other
        requests -- JoinGroup, SyncGroup, OffsetFetch, Heartbeat -- are atomic steps here)."""
        if GROUP_COORDINATOR in (env.src, env.dst):
            return isinstance(env.body, (TxnOffsetCommitRequest, TxnOffsetCommitResponse))
        return super()._droppable(env)

    def _gc_disconnected(self, s: TxnSystemState, i: int) -> TxnSystemState:
        """The producer's connection to the group coordinator closes (a reset, or the in-flight
        TxnOffsetCommit exceeded request.timeout.ms: ``NetworkClient.handleTimedOutRequests`` closes it).

        ``TransactionManager.TxnRequestHandler.onComplete`` (trunk ``1eb7644349cb``) sees the disconnect,
        looks the group coordinator up again and re-enqueues the TxnOffsetCommit: it is sent again on a
        new connection.  A request the broker already read from the old socket is still handled (it may
        land late, after the transaction ended -- what KIP-890's verification of TxnOffsetCommit,
        KAFKA-15449, guards); its answer is never read.
        """
        # its only request to the group coordinator is the TxnOffsetCommit: every envelope on the current
        # connection belongs to the one in flight (a reset of an older connection closes nothing open)
        app = s.apps[i]._replace(gc_connection=s.apps[i].gc_connection + 1)
        return self._send_txn_offset_commit(s, i, app)

    def _eos_drop(self, s: TxnSystemState, env: net.Envelope) -> Result:
        """Fault ``drop`` on the group coordinator's connection: the reset loses everything in flight on it."""
        if GROUP_COORDINATOR not in (env.src, env.dst):
            dropped = self._drop(s, env)
            if dropped is None:  # input: an edited trace
                return None
            return dropped[0], (*dropped[1], "producer_connection_reset")
        if env not in net.channel_heads(s.network) or not self._droppable(env):  # input: an edited trace
            return None
        network = net.reset_connection(s.network, env)
        assert network is not None  # a channel head
        s = s._replace(network=network)
        i = self._client_of(env.src if env.dst == GROUP_COORDINATOR else env.dst)
        if env.connection == s.apps[i].gc_connection:
            s = self._gc_disconnected(s, i)
        return s, ("connection_reset", "group_coordinator_connection_reset")

    def _gc_request_timeout(self, s: TxnSystemState, i: int) -> bool:
        """Whether instance ``i``'s TxnOffsetCommit is in flight on its current connection (it can time out)."""
        return s.apps[i].offsets == P.COMMITTING

    def _eos_request_timeout(self, s: TxnSystemState, i: int) -> Result:
        """Fault ``request_timeout``: the producer's in-flight requests time out -- its TxnOffsetCommit too
        (the request stays in flight towards the group coordinator and may still be handled, late)."""
        if not self._gc_request_timeout(s, i):
            return self._request_timeout(s, i)
        s = self._gc_disconnected(s, i)
        rest = self._request_timeout(s, i)
        if rest is not None:  # its produce requests in flight time out with it
            return rest[0], ("txn_offset_commit_timeout", *rest[1])
        return s, ("txn_offset_commit_timeout",)

    def _fault_actions(self, state: TxnSystemState, heads: Sequence[net.Envelope]) -> list[Action]:
        out = super()._fault_actions(state, heads)
        if self._budget_left(state, "request_timeout"):
            timing_out = {a.args[0] for a in out if a.kind == "RequestTimeout"}
            for i in range(len(state.apps)):
                if i not in timing_out and self._gc_request_timeout(state, i):
                    out.append(Action("RequestTimeout", (i,)))
        if self._budget_left(state, "append_failure"):
            out.extend(Action("AppendFailure", (env,)) for env in heads if self._group_append(env))
        if self._budget_left(state, "coordinator_failover") and state.group is not None and not self.protocol:
            out.append(Action("GroupCoordinatorFailover", ()))
        if not self._budget_left(state, "rebalance") or state.group is None:
            return out
        if not self.protocol:
            out.extend(Action("Rebalance", (i,)) for i in state.group.members)
            return out
        g = state.members
        assert g is not None
        for i in range(len(state.consumers)):
            if self.eos.session_timeouts and self._is_member(state, i):
                out.append(Action("SessionTimeout", (i,)))
            if self.eos.leaves and self._may_leave(state, i):
                out.append(Action("LeaveGroup", (i,)))
        return out

    def _group_append(self, env: net.Envelope) -> bool:
        """A request whose handling appends to the group's ``__consumer_offsets`` partition (with
        ``txn_offset_commit_round_trip``, a verified one's callback appends)."""
        if env.dst != GROUP_COORDINATOR:
            return False
        if isinstance(env.body, VerifyTxnOffsetCommitResponse):
            return env.body.verdict == Errors.NONE
        return isinstance(env.body, TxnOffsetCommitRequest)

    def _append_may_fail(self, env: net.Envelope) -> bool:
        """The group coordinator's verification reaches the transaction coordinator's log only under TV2 (the
        implicit add of ``__consumer_offsets``); under TV0/TV1 it only reads the cache."""
        if isinstance(env.body, VerifyTxnOffsetCommitRequest):
            return self.tv >= 2
        return super()._append_may_fail(env)

    def _append_failure(self, s: TxnSystemState, env: net.Envelope) -> Result:
        """Fault ``append_failure`` on the group's partition too: the TxnOffsetCommit's write to
        ``__consumer_offsets`` fails (NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT), which the group coordinator
        answers COORDINATOR_NOT_AVAILABLE (``CoordinatorOperationExceptionHelper.handleOperationException``,
        Kafka trunk ``1eb7644349cb``); nothing is staged, and the client retries."""
        if not self._group_append(env):
            return super()._append_failure(s, env)
        if env not in net.channel_heads(s.network):  # input: not offered here (edited trace)
            return None
        return self._receive(s, env, False)

    # -- application steps -----------------------------------------------------------------------------

    def _judge_reads(self, s: TxnSystemState) -> list[str]:  # no mutate: a judge (answers_per_kafka_table)
        """OffsetFetch of the input partition under every value of its request flags -- the consumer's
        ``requireStable=true`` and an administrator's ``requireStable=false`` (``Admin.listConsumerGroupOffsets``'
        default) -- in every group state a step produces, judged by Kafka's table
        (:func:`~keos.model.systems.offset_fetch_table.fetch_table_mismatches`): an answer that depends on a request
        flag no scenario's client varies is still judged under both values."""
        return fetch_table_mismatches(self._offset_fetch, s.group, INPUT_PARTITION)

    def _offset_fetch(self, g: gc.GroupMetadata | None, partition: int, require_stable: bool) -> tuple[str, int]:
        """The group coordinator's OffsetFetch handler under this system's configuration."""
        return gc.handle_offset_fetch(g, partition, require_stable, self.flags.offset_fetch_checks_loading,
                                      self.flags.offset_fetch_honours_require_stable)

    def _set_app(self, s: TxnSystemState, i: int, app: AppInstance) -> TxnSystemState:
        return s._replace(apps=_at(s.apps, i, app))

    def _waits(self, state: TxnSystemState, action: Action) -> bool:
        """The new owner's OffsetFetch retry: answered an error (UNSTABLE_OFFSET_COMMIT while another
        transaction's offsets are pending), it leaves the state as it was and repeats after
        ``retry.backoff.ms`` (``ConsumerCoordinator.OffsetFetchResponseHandler``, trunk ``1eb7644349cb``)."""
        if action.kind != "FetchOffsets":
            return False
        result = self._app_step(state, "FetchOffsets", action.args[0])
        return result is not None and result[0] is state

    def _app_step(self, s: TxnSystemState, kind: str, i: int) -> Result:
        handler = {
            "FetchOffsets": EosSystem._fetch_offsets,
            "Process": EosSystem._process,
            "SendAddOffsetsToTxn": EosSystem._send_add_offsets,
        }[kind]
        return handler(self, s, i)

    def _fetch_offsets(self, s: TxnSystemState, i: int) -> Result:
        """OffsetFetch(requireStable): the new owner waits while a transactional offset is pending.

        The group coordinator (Kafka 4.0 ``OffsetMetadataManager.fetchOffsets``, trunk
        ``1eb7644349cb``) answers UNSTABLE_OFFSET_COMMIT for a partition while
        ``hasPendingTransactionalOffsets`` -- a TxnOffsetCommit whose transaction's marker has
        not reached ``__consumer_offsets`` yet; ``ConsumerCoordinator``'s OffsetFetch handler
        retries it.  A successful fetch is the instance's *start* as the partition's owner
        (ghost: :attr:`TxnGhost.start_owner`; a start that supersedes another owner marks that
        instance, and the record of its transaction still open, as superseded).
        """
        app, c = s.apps[i], s.clients[i]
        if c.state != tp.C.READY or not app.owns or app.position >= 0:
            return None
        pending_visible = not self.flags.pending_offsets_wait_for_marker
        require_stable = self.flags.offset_fetch_require_stable and not pending_visible
        error, offset = self._offset_fetch(s.group, INPUT_PARTITION, require_stable)
        loading = s.group is not None and s.group.loading  # no mutate: ghost observer (the judge's input)
        if loading != (error == Errors.COORDINATOR_LOAD_IN_PROGRESS):  # no branch: ghost observer of a violation
            # CoordinatorRuntime.withActiveContextOrThrow (Kafka trunk 1eb7644349cb): every read of a LOADING shard --
            # OffsetFetch as much as a commit -- is COORDINATOR_LOAD_IN_PROGRESS, and only a LOADING shard answers it;
            # the model's load is one step, so the cache a loading shard would serve is complete here, and only the
            # answer shows a read that skipped the check (coordinator_answers_per_kafka_table)
            want = Errors.COORDINATOR_LOAD_IN_PROGRESS if loading else "no load error"  # no mutate: display
            s = _flagged(s, f"answer_table:OffsetFetch:loading:{error}:kafka:{want}")  # no mutate: ghost observer
        if error != Errors.NONE:
            return s, (error, "offset_fetch_retry")
        stable = 0 if offset < 0 else offset
        events: tuple[str, ...] = ("offset_fetched",)
        if pending_visible and s.group is not None:  # unreachable: weakened txn_offsets_visible_before_marker only
            pending = [p.offset for p in s.group.pending if p.partition == INPUT_PARTITION]
            offset = max([offset, *pending])
        position = max(offset, 0)
        ghost = s.ghost
        if not self._current_owner(s, i):
            # a zombie (its session expired, it does not know yet) fetches too: OffsetFetch of a classic
            # group checks no member (ClassicGroup.validateOffsetFetch); it is no start, and if the
            # partition's current owner already started, nothing it processes may ever commit
            return self._set_app(s, i, app._replace(position=position)), (*events, "zombie_fetch")
        notes: list[str] = []
        if position != stable:  # no branch: ghost observer of a violation (new_owner_starts_from_stable_offset)
            notes.append(f"instance {i} started from offset {position} while the group's committed offset was {stable}")
        if gc.has_pending(s.group, INPUT_PARTITION):  # no branch: ghost observer of a violation (as above)
            notes.append(f"instance {i} started from offset {position} while a transactional offset was pending")
        if ghost.start_owner != i:
            # the first generation always has an owner (init_states), so another one started before
            events = (*events, "owner_started_after_move")
            # every other instance is superseded, and so is the record of its transaction still open
            opn = [cl.state not in BETWEEN_TRANSACTIONS for cl in s.clients]  # no mutate: ghost
            apps = tuple(  # no mutate: ghost
                a._replace(superseded=True, txn_superseded=a.txn_superseded or opn[j])  # no mutate: ghost
                if j != i  # no mutate: ghost
                else a
                for j, a in enumerate(s.apps)  # no mutate: ghost
            )
            s = s._replace(apps=apps)  # no mutate: ghost
        ghost = ghost._replace(start_owner=i, unstable_starts=(*ghost.unstable_starts, *notes))
        s = s._replace(ghost=ghost)
        return self._set_app(s, i, s.apps[i]._replace(position=position, superseded=False)), events

    def _current_owner(self, s: TxnSystemState, i: int) -> bool:
        return current_owner(s, i)

    def _output_rejectable(self, s: TxnSystemState, i: int) -> bool:
        """``send_rejections``: the iteration's record has an output whose ``send()`` may be refused synchronously."""
        return self.config.topology.send_rejections and s.apps[i].position >= self.eos.filtered_records

    def _process_send_rejected(self, s: TxnSystemState, i: int) -> Result:
        """``Process`` whose ``send(out)`` ``KafkaProducer.doSend`` refuses synchronously (``send_rejections``)."""
        if not self._output_rejectable(s, i):  # no branch: a trace read from a file
            return None
        return self._process(s, i, rejected=True)

    def _process(self, s: TxnSystemState, i: int, rejected: bool = False) -> Result:
        """One loop iteration: beginTransaction, poll one input record, send its output record (none for a
        filtered one, ``EosConfig.filtered_records``), sendOffsetsToTransaction(position, groupMetadata).

        The calls are local (they enqueue requests), so they are one step; the
        requests they enqueue travel separately.  ``rejected``: ``send(out)`` failed synchronously
        (:func:`model.clients.transactional_producer.send_rejected`); once the transaction is abortable,
        ``sendOffsetsToTransaction`` throws it (``maybeFailWithError``) and the application aborts.
        """
        app, c = s.apps[i], s.clients[i]
        n = self.eos.input_records
        if not app.owns or not 0 <= app.position < n or app.offsets not in (P.NONE, P.DONE):
            return None
        begun = tp.begin_transaction(c, self.config.topology.transactions_per_producer)
        if begun is None:
            return None
        c = begun
        if rejected:
            c = tp.send_rejected(begun, self.tv, self.kip_360, self.flags.send_error_aborts_transaction)
        elif app.position >= self.eos.filtered_records:  # a filtered record has no output: offsets only
            c = tp.send(begun, OUTPUT_PARTITION, output_record(i, begun.txn, app.position, n), self.tv)
        generation, member = app.generation, ""
        if self.protocol:  # KafkaConsumer.groupMetadata(): the consumer's generation and member id
            generation, member = s.consumers[i].generation, s.consumers[i].member_id
        app = app._replace(
            position=app.position + 1,
            processing=app.position,
            offsets_generation=generation,
            offsets_member=member,
            txn_superseded=app.superseded,  # no mutate: ghost
        )
        s = s._replace(clients=_at(s.clients, i, c))
        if c.state == tp.C.ABORTABLE_ERROR:  # send(out) refused: sendOffsetsToTransaction throws the error
            return self._set_app(s, i, app), ("process", "send_rejected", "send_rejected_abortable")
        if not self.flags.offsets_in_transaction:  # unreachable: weakened variant offsets_outside_transaction
            return self._set_app(s, i, app._replace(offsets=P.PLAIN)), ("process", "offsets_deferred")
        if self.tv < 2 or not self.flags.tv2_offsets_without_add_offsets:
            return self._set_app(s, i, app._replace(offsets=P.ADD)), ("process", "send_offsets_to_transaction")
        s = self._send_txn_offset_commit(s, i, app)
        return s, ("process", "send_offsets_to_transaction", "TxnOffsetCommitRequest")

    def _send_txn_offset_commit(self, s: TxnSystemState, i: int, app: AppInstance) -> TxnSystemState:
        """TxnOffsetCommit(offset after the processed record, the captured generation); also a retry.

        TV2 (KIP-890 part 2, Kafka 4.0 ``TransactionManager.sendOffsetsToTransaction``): the group
        coordinator adds ``__consumer_offsets`` to the transaction itself, so the client counts the
        transaction as started (``transactionStarted``) once it enqueues the TxnOffsetCommit, as it does
        for a partition it produces to -- an abort after a lost answer still sends EndTxn.
        """
        c = s.clients[i]
        if self.tv >= 2 and self.flags.txn_offset_commit_starts_transaction and OFFSETS_PARTITION not in c.added:
            c = c._replace(added=tuple(sorted({*c.added, OFFSETS_PARTITION})))
            s = s._replace(clients=_at(s.clients, i, c))
        req = TxnOffsetCommitRequest(
            i,
            app.gc_connection,
            c.transactional_id,
            c.data.producer_id,
            c.data.producer_epoch,
            GROUP,
            app.offsets_generation,
            i,
            INPUT_PARTITION,
            app.processing + 1,
            app.offsets_member,
        )
        if self.tv < 2 and OFFSETS_PARTITION not in c.added:  # no branch: the violation side, only a defect takes it
            # TV0/TV1: TxnOffsetCommitHandler is enqueued only by a successful AddOffsetsToTxn (AddOffsetsToTxnHandler)
            label = f"version_request:{i}:TxnOffsetCommitRequest before AddOffsetsToTxn at TV{self.tv}"
            s = _flagged(s, label)  # no mutate: ghost observer (client_requests_match_transaction_version)
        env = net.Envelope(f"p{i}", GROUP_COORDINATOR, app.gc_connection, req)
        s = s._replace(network=net.send(s.network, env))
        return self._set_app(s, i, app._replace(offsets=P.COMMITTING))

    def _send_add_offsets(self, s: TxnSystemState, i: int) -> Result:
        """TV0/TV1: AddOffsetsToTxn to the transaction coordinator (one coordinator request at a time); also
        while aborting, when abortTransaction found it still queued (see :meth:`_eos_abort`)."""
        app, c = s.apps[i], s.clients[i]
        if app.offsets != P.ADD or c.inflight or c.state not in (tp.C.IN_TRANSACTION, tp.C.ABORTING):
            return None
        req = AddOffsetsToTxnRequest(
            i, c.tc_connection, c.transactional_id, c.data.producer_id, c.data.producer_epoch, GROUP
        )
        s = s._replace(
            clients=_at(s.clients, i, c._replace(inflight=True)),
            network=net.send(s.network, net.Envelope(f"p{i}", COORDINATOR, c.tc_connection, req)),
        )
        return _judge_version_request(s, i, type(req).__name__, self.tv), ("AddOffsetsToTxnRequest",)

    def _commit_ok(self, s: TxnSystemState, i: int) -> bool:
        return s.clients[i].state == tp.C.IN_TRANSACTION and s.apps[i].offsets in (P.DONE, P.PLAIN)

    def _eos_commit(self, s: TxnSystemState, i: int) -> Result:
        if not self._commit_ok(s, i):  # input: not offered here (edited trace)
            return None
        return self._set_client(s, i, tp.commit_transaction(s.clients[i]))

    def _abort_ok(self, s: TxnSystemState, i: int) -> bool:
        c, app = s.clients[i], s.apps[i]
        if app.offsets == P.COMMITTING:
            return False  # the Sender keeps one transactional request in flight: EndTxn waits for it
        lost = c.state == tp.C.IN_TRANSACTION and not app.owns
        voluntary = self.config.topology.voluntary_abort and c.state == tp.C.IN_TRANSACTION
        return c.state == tp.C.ABORTABLE_ERROR or lost or voluntary

    def _eos_abort(self, s: TxnSystemState, i: int) -> Result:
        """abortTransaction, then seek back to the committed offset (re-fetched before the next poll)."""
        if not self._abort_ok(s, i):  # input: not offered here (edited trace)
            return None
        voluntary = s.clients[i].state == tp.C.IN_TRANSACTION
        c = tp.abort_transaction(s.clients[i])
        assert c is not None  # _abort_ok: in a transaction or abortable
        app = s.apps[i]
        position = -1 if self.flags.seek_after_abort or not app.owns else app.position
        # ``TransactionManager.beginAbort`` (trunk ``1eb7644349cb``) clears only ``newPartitionsInTransaction``:
        # an AddOffsetsToTxn already enqueued by sendOffsetsToTransaction stays in ``pendingRequests``, whose
        # priority (ADD_PARTITIONS_OR_OFFSETS before END_TXN) sends it before EndTxn.  From ABORTABLE_ERROR the
        # model takes the interleaving in which the Sender failed it first (``maybeTerminateRequestWithError``).
        keep = voluntary and app.offsets == P.ADD and self.flags.abort_keeps_queued_add_offsets
        offsets = P.ADD if keep else P.NONE
        s = self._set_app(s, i, app._replace(position=position, processing=-1, offsets=offsets))
        return s._replace(clients=_at(s.clients, i, c)), ("app_abort", *(("abort_after_add_offsets",) if keep else ()))

    def _plain_commit_ok(self, s: TxnSystemState, i: int) -> bool:
        return s.apps[i].offsets == P.PLAIN and s.clients[i].state == tp.C.READY

    def _commit_offsets(  # unreachable: weakened variant offsets_outside_transaction
        self, s: TxnSystemState, i: int
    ) -> Result:
        """offsets_outside_transaction: commitSync(position) after commitTransaction returned."""
        if not self._plain_commit_ok(s, i):
            return None
        app = s.apps[i]
        req = OffsetCommitRequest(i, 0, GROUP, app.offsets_generation, i, INPUT_PARTITION, app.processing + 1)
        s = s._replace(network=net.send(s.network, net.Envelope(f"p{i}", GROUP_COORDINATOR, 0, req)))
        return self._set_app(s, i, app._replace(offsets=P.PLAIN_SENT)), ("OffsetCommitRequest",)

    def _may_commit_async(self, s: TxnSystemState, i: int) -> bool:
        """A mixed application's consumer may commit its position plainly: between transactions, as the input
        partition's owner with a position, while the run's ``plain_commits`` allow one more."""
        app = s.apps[i]
        used = sum(a.plain_commits for a in s.apps)
        return used < self.eos.plain_commits and app.owns and app.position >= 0 and s.clients[i].state == tp.C.READY

    def _commit_async(self, s: TxnSystemState, i: int) -> Result:
        """``KafkaConsumer.commitAsync(position)`` beside the transactions (KAFKA-5247's mixed application): an
        OffsetCommit with the consumer's generation on the consumer's own connection to the group coordinator
        (:data:`CONSUMER_CONNECTION`), which may reach it after the next transaction's TxnOffsetCommit."""
        if not self._may_commit_async(s, i):  # input: not offered here (edited trace)
            return None
        app = s.apps[i]
        req = OffsetCommitRequest(i, CONSUMER_CONNECTION, GROUP, app.generation, i, INPUT_PARTITION, app.position)
        env = net.Envelope(f"p{i}", GROUP_COORDINATOR, CONSUMER_CONNECTION, req)
        s = s._replace(network=net.send(s.network, env))
        return self._set_app(s, i, app._replace(plain_commits=app.plain_commits + 1)), ("commit_async",)

    def _sync_group(self, s: TxnSystemState, i: int) -> Result:
        """SyncGroup: the application takes the new generation and assignment (onPartitionsAssigned/Lost)."""
        if self.protocol:
            return self._protocol_sync(s, i)
        g = s.group
        if g is None or g.state != gc.COMPLETING_REBALANCE or i not in g.members or i in g.synced:  # input: edited
            return None
        g = gc.sync_group(g, i)
        app = s.apps[i]
        owns = g.assignment[INPUT_PARTITION] == i
        # an owner keeps the partition (and its position) only from the generation it last synced, the one just
        # before: a member that missed a generation's assignment (the zombie old owner of a rebalance that moved
        # the partition away) cannot be in a later one without having learnt it lost it -- its SyncGroup of the
        # missed generation is answered REBALANCE_IN_PROGRESS or ILLEGAL_GENERATION, and the rejoin gives up
        # or revokes its claim (ConsumerCoordinator.onJoinPrepare, the sticky assignors' generation check on
        # owned partitions, Kafka trunk 1eb7644349cb): it fetches the committed offset again
        kept = app.owns and app.generation == g.generation - 1
        position = app.position if owns and kept else -1
        events: tuple[str, ...] = ("sync_group",)
        if app.owns and not owns:
            events = (*events, "partition_lost")
        elif app.owns and not kept:
            events = (*events, "partition_lost", "partition_assigned_again")
        app = app._replace(generation=g.generation, owns=owns, position=position)
        return self._set_app(s._replace(group=g), i, app), events

    def _rebalance(self, s: TxnSystemState, i: int) -> Result:
        """A rebalance: next generation, the input partition assigned to member ``i``.

        Every member but the previous owner takes part at once (JoinGroup and
        SyncGroup in the same round); the previous owner -- stalled, a zombie
        -- learns the new generation only at its own ``SyncGroup``.
        """
        g = s.group
        if g is None or i not in g.members:  # input: not offered here (edited trace)
            return None
        old = g.assignment[INPUT_PARTITION]
        events: tuple[str, ...] = ("rebalance",)
        s = s._replace(group=gc.rebalance(g, g.members, (i,)))
        for m in g.members:
            if m != old:
                synced = self._sync_group(s, m)
                assert synced is not None
                s = synced[0]
        return s, events

    # -- protocol mode: the classic rebalance protocol ------------------------------------------------
    #
    # Each instance's consumer (model.clients.consumer_coordinator) talks to the classic group
    # (model.coordinator.group.classic_group) as model.systems.groups composes them; the group
    # coordinator is one broker whose requests are atomic steps (FindCoordinator and its failover
    # are not modelled here).  The consumer's owned partitions *are* the application's ownership:
    # an instance processes the input partition while its consumer owns it.  The rebalance listener
    # runs inside poll(), which the loop calls between transactions, so JoinGroup and SyncGroup are
    # taken only there (eager: onPartitionsRevoked after the transaction ended; cooperative: the
    # revocation after SyncGroup likewise); the heartbeat thread runs at any time, and is how a
    # member whose session expired -- a zombie that kept processing -- learns it lost everything.

    def _put_consumer(self, s: TxnSystemState, i: int, c: cc.Consumer) -> tuple[TxnSystemState, tuple[str, ...]]:
        """Install consumer ``i`` and derive the application's ownership from its owned partitions."""
        s = s._replace(consumers=_at(s.consumers, i, c))
        app = s.apps[i]
        owns = c.up and INPUT_PARTITION in c.owned
        events: tuple[str, ...] = ()
        if owns != app.owns:
            events = ("partition_assigned",) if owns else ("partition_lost",)
            app = app._replace(owns=owns, position=-1)  # a new owner fetches its committed offset first
        return self._set_app(s, i, app._replace(generation=c.generation)), events

    def _start(self, s: TxnSystemState, i: int) -> Result:
        """The instance's consumer starts (a late instance, or one that left) and will join."""
        if not self._may_start(s, i):  # input: not offered here (edited trace)
            return None
        return s._replace(consumers=_at(s.consumers, i, cc.fresh(up=True)._replace(coordinator=0))), (
            "consumer_started",
        )

    def _join_group(self, s: TxnSystemState, i: int) -> Result:
        """JoinGroup from poll(); eager: onJoinPrepare revokes every owned partition first."""
        if not self._may_join(s, i):  # input: not offered here (edited trace)
            return None
        c, g = s.consumers[i], s.members
        assert g is not None
        events: tuple[str, ...] = ()
        if not self.cooperative:
            if c.owned:
                events = ("eager:revoked_all",)
            c = cc.lose_partitions(c)
        answer = self.flags.join_unchanged_answers_current_generation
        out = cc.join_group(g, i, c, c.owned, c.generation, answer, self.flags.rebalance_in_progress_rejoins,
                            rebalance_retried=self.flags.join_rebalance_in_progress_retried)
        s, more = self._put_consumer(s._replace(members=out.group), i, out.consumer)
        return s, (*events, *more, out.event)

    def _complete_join(self, s: TxnSystemState) -> Result:
        """The join barrier lifts: next generation, the leader elected, every waiting member answered."""
        g = s.members
        if g is None or not cg.join_complete_ready(g):  # input: not offered here (edited trace)
            return None
        g = cg.complete_join(g, self.eos.assignor)
        s = s._replace(members=g)
        for i, c in enumerate(s.consumers):
            s = self._put_consumer(s, i, cc.join_completed(c, g))[0]
        return s, ("join:complete", f"generation:{g.generation}")

    def _assign(self, g: cg.ClassicGroup) -> dict[str, tuple[int, ...]]:
        """The leader runs the group's assignor over the members' subscriptions its JoinGroup response carried
        (as model.systems.groups)."""
        withhold = not self.cooperative or self.flags.cooperative_revoke_before_reassign
        # outside CompletingRebalance the coordinator ignores the plan (classic_group.sync_group): any list will do
        members = g.joined_members or tuple((m.member_id, m.owned, m.generation) for m in g.members)
        return asg.leader_assignment(self.assignor, INPUT_TOPIC, 1, members, withhold)

    def _sync_request(self, s: TxnSystemState, i: int) -> cg.SyncResult | None:
        assert s.members is not None
        return cc.sync_group(s.members, s.consumers[i], self._assign)

    def _protocol_sync(self, s: TxnSystemState, i: int) -> Result:
        """SyncGroup: the assignment arrives (onPartitionsAssigned; cooperative: revoke, then rejoin)."""
        if not self._may_sync(s, i):  # input: not offered here (edited trace)
            return None
        c = s.consumers[i]
        res = self._sync_request(s, i)
        assert res is not None  # _may_sync
        before = s.members
        s = s._replace(members=res.group)
        if res.error != Errors.NONE:
            s = _fault_free_fencing(s, i, "SyncGroup", res.error)  # no mutate: ghost observer (a judge's input)
            s, more = self._put_consumer(s, i, cc.on_error(c, res.error, self.flags.rebalance_in_progress_rejoins))
            return s, (*more, f"sync:{res.error}")
        if before is not None and before.state == cg.COMPLETING_REBALANCE and res.group.state == cg.STABLE:
            owner = [m.member_id for m in res.group.members if INPUT_PARTITION in m.assignment]
            # ghost: cooperative-sticky would withhold a moving partition for one generation, but with one
            # input partition it never moves between two members (only from one that left, unclaimed)
            if owner:  # no branch: one input partition, always assigned when the rebalance completes
                s = s._replace(ghost=s.ghost._replace(assigned_member=owner[0]))
        c, revoked = cc.assigned(c, res.assignment, {})
        events: tuple[str, ...] = ("sync:assignment",)
        if revoked:  # unreachable: one input partition, which cooperative-sticky never takes from a member
            c = c._replace(state=cc.UNJOINED)
            events = (*events, "cooperative:revoked")
        s, more = self._put_consumer(s, i, c)
        return s, (*events, *more)

    def _heartbeat(self, s: TxnSystemState, i: int) -> Result:
        """A heartbeat answered with an error (REBALANCE_IN_PROGRESS: rejoin; UNKNOWN_MEMBER_ID,
        ILLEGAL_GENERATION: the partitions are lost, onPartitionsLost)."""
        if not self._may_heartbeat(s, i):  # input: not offered here (edited trace)
            return None
        c, g = s.consumers[i], s.members
        assert g is not None
        error = cg.heartbeat(g, c.member_id, c.generation)
        s = _fault_free_fencing(s, i, "Heartbeat", error)  # no mutate: ghost observer (a judge's input)
        s, events = self._put_consumer(s, i, cc.on_error(c, error, self.flags.rebalance_in_progress_rejoins))
        return s, (*events, f"heartbeat:{error}")

    def _session_timeout(self, s: TxnSystemState, i: int) -> Result:
        """Fault: the member's heartbeats stop reaching the coordinator while the instance keeps working
        (a long GC pause, a partition of the network): the coordinator removes it and rebalances; the
        instance is a zombie until a heartbeat tells it UNKNOWN_MEMBER_ID."""
        if not self._is_member(s, i):  # input: not offered here (edited trace)
            return None
        c, g = s.consumers[i], s.members
        assert g is not None
        return s._replace(members=cg.remove_member(g, c.member_id)), ("session_expired:zombie",)

    def _leave_group(self, s: TxnSystemState, i: int) -> Result:
        """The instance shuts down between transactions: KafkaConsumer.close() sends LeaveGroup and the group
        rebalances (it does not come back: a restart is a late instance's Start)."""
        if not self._may_leave(s, i):  # input: not offered here (edited trace)
            return None
        c, g = s.consumers[i], s.members
        assert g is not None
        s = s._replace(members=cg.remove_member(g, c.member_id))
        s, events = self._put_consumer(s, i, cc.fresh(up=False)._replace(state=CLOSED))
        return s, (*events, "left_group")

    def _gc_failover(self, s: TxnSystemState) -> Result:
        """Fault: the group's ``__consumer_offsets`` partition gets a new leader and with it a new group
        coordinator, which loads the group from the partition (:func:`gc.load_offsets`: committed offsets,
        and the transactional offsets whose marker has not arrived yet back as pending).  Requests in
        flight to the old one are answered NOT_COORDINATOR (``CoordinatorRuntime``: the shard is no longer
        hosted there), which the client retries after FindCoordinator; WriteTxnMarkers for the partition
        reach the new leader (the transaction coordinator retries them).  The abstract eos mode only: the
        protocol mode's membership would have to be reloaded too (``classic_group.load_group``)."""
        g = s.group
        if g is None or self.protocol:  # input: not offered here (edited trace)
            return None
        inflight = [e for e in s.network if e.dst == GROUP_COORDINATOR]
        network = net.without(s.network, lambda e: e.dst == GROUP_COORDINATOR)
        for e in inflight:
            body = e.body
            resp: TxnOffsetCommitResponse | OffsetCommitResponse
            resp = TxnOffsetCommitResponse(body.producer, body.connection, Errors.NOT_COORDINATOR)
            if isinstance(body, OffsetCommitRequest):  # unreachable: weakened variant offsets_outside_transaction
                resp = OffsetCommitResponse(body.producer, body.connection, Errors.NOT_COORDINATOR)
            network = net.send(network, net.Envelope(GROUP_COORDINATOR, e.src, e.connection, resp))
        events: tuple[str, ...] = ("group_coordinator_loaded",)
        if gc.has_pending(g, INPUT_PARTITION):
            events = (*events, "group_coordinator_loaded_pending_offsets")
        loaded = gc.load_offsets(g, self.flags.load_keeps_pending_offsets)
        return s._replace(group=loaded, network=network), events

    def _gc_loaded(self, s: TxnSystemState) -> Result:
        """The new group coordinator's load completes (``CoordinatorRuntime.scheduleLoadOperation``, Kafka trunk
        ``1eb7644349cb``): until then OffsetFetch and TxnOffsetCommit are answered COORDINATOR_LOAD_IN_PROGRESS,
        which the clients retry.  WriteTxnMarkers for the group's partition are applied meanwhile: Kafka answers
        them NOT_LEADER_OR_FOLLOWER while the shard loads (``KafkaApis.handleWriteTxnMarkersRequest``) and the
        transaction coordinator retries them, which ends as the model's one write after or during the replay."""
        g = s.group
        if g is None or not g.loading:  # input: not offered here (edited trace)
            return None
        return s._replace(group=gc.finish_load(g)), ("group_coordinator_load_completed",)

    # -- ghost: ownership history for the eos properties ---------------------------------------------

    def _apply_coordinator(self, s: TxnSystemState, t: int, out: tc.Outcome) -> tuple[TxnSystemState, tuple[str, ...]]:
        """Ghost: a transaction with an input record decided to commit after its instance was
        superseded as the partition's owner (another instance started since) is a zombie commit."""
        old = s.coordinator[t]
        s, events = super()._apply_coordinator(s, t, out)
        md = out.metadata
        if (
            md is not None  # no mutate: ghost
            and md.state == tc.TransactionState.PREPARE_COMMIT  # no mutate: ghost
            and (old is None or old.state != tc.TransactionState.PREPARE_COMMIT)  # no mutate: ghost
            and t < len(s.apps)  # no mutate: ghost
        ):
            app = s.apps[t]
            if app.processing >= 0 and app.txn_superseded:  # unreachable: a zombie commit (a violation)
                note = (
                    f"instance {t} committed its transaction with input offset {app.processing} after "
                    f"instance {s.ghost.start_owner} started as the partition's owner"
                )
                s = s._replace(ghost=s.ghost._replace(zombie_commits=(*s.ghost.zombie_commits, note)))
        return s, events

    def _may_send_txn_request(self, state: TxnSystemState, i: int, c: tp.TxnClient) -> bool:
        """EndTxn waits while abortTransaction left an AddOffsetsToTxn queued: ``pendingRequests`` orders
        ADD_PARTITIONS_OR_OFFSETS before END_TXN (``TransactionManager``, trunk ``1eb7644349cb``)."""
        if c.state == tp.C.ABORTING and state.apps[i].offsets == P.ADD:
            return False
        return super()._may_send_txn_request(state, i, c)

    def _eos_send_txn_request(self, s: TxnSystemState, i: int) -> Result:
        """The Sender's next coordinator request; ghost: a transaction it ends locally must be unknown to the
        coordinator.

        ``TransactionManager`` completes commitTransaction/abortTransaction without EndTxn only when
        ``transactionStarted`` is false: no partition was added (TV0/TV1) and, under TV2, no
        TxnOffsetCommit was enqueued either (``sendOffsetsToTransaction`` sets it: the group coordinator
        adds ``__consumer_offsets`` to the transaction itself, KIP-890 part 2; Kafka 4.0, trunk
        ``1eb7644349cb``).  A local end while the coordinator holds the producer's transaction Ongoing at
        its epoch leaves a transaction nobody ends until ``transaction.timeout.ms`` (its next transaction
        silently joins it).  Judged under every transaction version: a voluntary abort keeps a queued
        AddOffsetsToTxn (:meth:`_eos_abort`), so a TV0/TV1 client learns whether the coordinator added the
        offsets before it decides between EndTxn and a local end.  (Kafka's remaining TV0/TV1 window -- a
        lost answer, then an abortable error failing the re-enqueued request -- is not modelled: from
        ABORTABLE_ERROR the model takes the interleaving in which the request had not been sent.)
        """
        c = s.clients[i]
        if not self._may_send_txn_request(s, i, c):  # input: not offered here (edited trace)
            return None
        out = self._send_txn_request(s, i)
        if out is None or "client_txn_local_end" not in out[1]:  # no mutate: ghost
            return out
        md = s.coordinator[i]
        if (  # no branch: ghost observer of a violation (client_transaction_ends_at_coordinator)
            md is not None  # no mutate: ghost
            and md.state == tc.TransactionState.ONGOING  # no mutate: ghost
            and (md.producer_id, md.producer_epoch) == (c.data.producer_id, c.data.producer_epoch)  # no mutate: ghost
        ):
            note = (  # no mutate: ghost
                f"instance {i} ended its transaction without EndTxn while the coordinator held it Ongoing "
                f"with {list(md.partitions)} at epoch {md.producer_epoch}"
            )
            new = out[0]
            new = new._replace(ghost=new.ghost._replace(local_ends_open=(*new.ghost.local_ends_open, note)))
            return new, out[1]
        return out

    # -- deliveries ------------------------------------------------------------------------------------

    def _record_outcome(self, s: TxnSystemState, i: int, txn: int, outcome: str) -> TxnSystemState:
        """The application's outcomes are judged by the eos invariants, not kept as history."""
        return s

    def _receive(self, s: TxnSystemState, env: net.Envelope, append_ok: bool) -> Result:
        body = env.body
        if not isinstance(
            body,
            (
                AddOffsetsToTxnRequest,
                AddOffsetsToTxnResponse,
                TxnOffsetCommitRequest,
                TxnOffsetCommitResponse,
                OffsetCommitRequest,
                OffsetCommitResponse,
                VerifyTxnOffsetCommitRequest,
                VerifyTxnOffsetCommitResponse,
            ),
        ):
            return super()._receive(s, env, append_ok)
        network = net.remove(s.network, env)
        if network is None:  # input: not offered here (edited trace)
            return None
        s = s._replace(network=network)
        if isinstance(body, AddOffsetsToTxnRequest):
            return self._on_add_offsets(s, env, body, append_ok)
        if isinstance(body, TxnOffsetCommitRequest):
            return self._on_txn_offset_commit(s, env, body, append_ok)
        if isinstance(body, VerifyTxnOffsetCommitRequest):
            return self._on_verify_txn_offset_commit(s, body, append_ok)
        if isinstance(body, VerifyTxnOffsetCommitResponse):
            return self._after_offsets_verification(s, body, append_ok)
        if isinstance(body, OffsetCommitRequest):
            return self._on_offset_commit(s, env, body)
        if isinstance(body, OffsetCommitResponse):
            return self._on_offset_commit_response(s, body)
        i = body.producer
        before = (s.clients[i], s.apps[i])
        closed = body.connection != (
            before[0].tc_connection if isinstance(body, AddOffsetsToTxnResponse) else before[1].gc_connection
        )
        if isinstance(body, AddOffsetsToTxnResponse):
            result = self._on_add_offsets_response(s, body)
        else:
            result = self._on_txn_offset_commit_response(s, body)
        if closed and result is not None and (result[0].clients[i], result[0].apps[i]) != before:  # no branch
            # a defect's side: the answer of a request whose connection the client closed is never read
            result = (_flagged(result[0], stale_response_read(i, body)), result[1])  # no mutate: ghost observer
        awaited = before[0].inflight if isinstance(body, AddOffsetsToTxnResponse) else before[1].offsets == P.COMMITTING
        if result is not None and awaited and not closed:
            # client_reacts_as_kafka: the state TransactionManager's handler leaves (txn_reactions, judged apart from
            # the tables the handlers above read)
            kind, after = type(body).__name__.removesuffix("Response"), result[0].clients[i]
            label = unexpected_offsets_reaction(
                kind, body.error, before[0].state, after.state, after.fenced, self.kip_360, i
            )
            if label is not None:  # no branch: the violation side, only a defect takes it (client_reacts_as_kafka)
                result = (_flagged(result[0], label), result[1])  # no mutate: ghost observer
        return result

    def _on_add_offsets(
        self, s: TxnSystemState, env: net.Envelope, req: AddOffsetsToTxnRequest, append_ok: bool
    ) -> Result:
        if self.security is not None:
            denied = authz.deny_add_offsets(self, s, env, req)
            if denied is not None:
                return denied
        before, t = s, req.transactional_id
        md = s.coordinator[t]
        if s.loading and self.flags.loading_answers_load_in_progress:
            # KafkaApis.handleAddOffsetsToTxnRequest goes through handleAddPartitionsToTransaction, whose
            # getTransactionState answers COORDINATOR_LOAD_IN_PROGRESS first, as for every coordinator request
            return self._answer_loading(s, env, req, md)
        # pending_transitions: the append to __transaction_state is a step of its own, whose callback answers
        append: bool | None = tc.APPEND_IN_FLIGHT if self.pending else append_ok
        out = tc.handle_add_offsets(md, req.producer_id, req.producer_epoch, req.group, append, self.cc)
        ask = Ask("AddOffsetsToTxn", md, req.producer_id, req.producer_epoch, False,
                  (tc.OFFSETS_PARTITION_BASE + req.group,), self.tv, self.cc, s.loading)
        s = self._judge_table(s, ask, out.error, _moved_to(out), append, _moved(out))
        if out.transit is not None:
            s, events = self._prepare(s, t, out, tc.TxnLogAppend(t, "client", out.transit, req, env.src))
            return self._observed(s, before, env, "AddOffsetsToTxn", t), ("add_offsets_to_txn", *events)
        s, events = self._apply_coordinator(s, t, out)
        resp = AddOffsetsToTxnResponse(req.producer, req.connection, out.error)
        s = s._replace(network=net.send(s.network, net.Envelope(COORDINATOR, env.src, env.connection, resp)))
        return self._observed(s, before, env, "AddOffsetsToTxn", t), ("add_offsets_to_txn", *events)

    def _observed(self, s: TxnSystemState, before: TxnSystemState, env: net.Envelope, api: str, t: int) -> Any:
        """``s`` with a client's change of transactional id ``t``'s coordinator entry judged by the ACLs in force
        (:func:`model.security.gate.observe_change`; the adversary's forged requests are observed by
        :mod:`model.security.adversary`)."""
        if self.security is None or env.src == authz.ADVERSARY:
            return s
        principal = authz.principal_of(authz.acls_in_force(self, before), env.src)
        return authz.observe_change(self, s, before, principal, api, t)  # no mutate: ghost observer

    def _response(self, req: Any, error: str, pid: int, epoch: int) -> Any:
        """The transaction coordinator's answer to AddOffsetsToTxn is an AddOffsetsToTxnResponse -- also the old
        instance's NOT_COORDINATOR at emigration and the new one's COORDINATOR_LOAD_IN_PROGRESS."""
        if isinstance(req, AddOffsetsToTxnRequest):
            return AddOffsetsToTxnResponse(req.producer, req.connection, error)
        return super()._response(req, error, pid, epoch)

    def _on_add_offsets_response(self, s: TxnSystemState, resp: AddOffsetsToTxnResponse) -> Result:
        """``TransactionManager.AddOffsetsToTxnHandler`` (trunk ``1eb7644349cb``): NONE queues the
        TxnOffsetCommit; retriable errors re-enqueue; UNKNOWN_PRODUCER_ID / INVALID_PRODUCER_ID_MAPPING
        are ``abortableErrorIfPossible`` (KIP-360: abortable with an epoch bump); PRODUCER_FENCED /
        INVALID_PRODUCER_EPOCH fatal (fenced); GROUP_AUTHORIZATION_FAILED and TRANSACTION_ABORTABLE
        abortable; anything else fatal ("Unexpected error in AddOffsetsToTxnResponse"; ``AddPartitionsToTxnHandler``
        makes an unexpected error abortable instead)."""
        i = resp.producer
        c, app = s.clients[i], s.apps[i]
        if resp.connection != c.tc_connection or not c.inflight:
            return s, ("stale_response",)
        c = c._replace(inflight=False)
        err = resp.error
        cls = tp.coordinator_error_class("AddOffsetsToTxn", err)
        if err == Errors.GROUP_AUTHORIZATION_FAILED:
            cls = tp.ErrorClass.ABORTABLE
        if cls == tp.ErrorClass.RETRIABLE or err in RETRIABLE:  # "error.exception() instanceof RetriableException"
            return s._replace(clients=_at(s.clients, i, c)), (f"client_error:{err}", "retry")
        if cls == tp.ErrorClass.ABORTABLE_IF_POSSIBLE and self.kip_360:
            c, events = tp.classify_batch_failure(c, err, self.tv, True), (f"client_error:{err}", "client_abortable")
            return self._set_app(s._replace(clients=_at(s.clients, i, c)), i, app._replace(offsets=P.NONE)), events
        if cls == tp.ErrorClass.ABORTABLE:
            c, events = tp.abortable_error(c), (f"client_error:{err}", "client_abortable")
            return self._set_app(s._replace(clients=_at(s.clients, i, c)), i, app._replace(offsets=P.NONE)), events
        if err != Errors.NONE:
            fatal = tp.fatal_error(c, err)
            event = "client_fenced" if fatal.fenced else "client_fatal"
            return s._replace(clients=_at(s.clients, i, fatal)), (f"client_error:{err}", event)
        c = c._replace(added=tuple(sorted({*c.added, OFFSETS_PARTITION})))
        s = s._replace(clients=_at(s.clients, i, c))
        if c.state != tp.C.IN_TRANSACTION or app.offsets != P.ADD:
            # aborting: Kafka still sends the TxnOffsetCommit it enqueues here before EndTxn; the abort marker
            # discards what it stages, so the model skips it (modelling choice) and lets EndTxn go.
            return self._set_app(s, i, app._replace(offsets=P.NONE)), ("offsets_added",)
        return self._send_txn_offset_commit(s, i, app), ("offsets_added", "TxnOffsetCommitRequest")

    def _on_txn_offset_commit(
        self, s: TxnSystemState, env: net.Envelope, req: TxnOffsetCommitRequest, append_ok: bool = True
    ) -> Result:
        """The group coordinator's TxnOffsetCommit, in Kafka's order (trunk ``1eb7644349cb``).

        ``KafkaApis.handleTxnOffsetCommitRequest`` authorizes the transactional id and the group;
        ``GroupCoordinatorService.commitTransactionalOffsets`` schedules a *transactional* write
        (``CoordinatorRuntime.scheduleTransactionalWriteOperation``), which verifies the
        transaction first (``CoordinatorPartitionWriter.maybeStartTransactionVerification``,
        KIP-890 part 1, KAFKA-15449: is the group's ``__consumer_offsets`` partition in the
        producer's ongoing transaction? TV2: the same round trip adds it, KIP-890 part 2) and only
        then runs ``OffsetMetadataManager.commitTransactionalOffset``: the group's member and
        generation checks (``ClassicGroup.validateOffsetCommit(isTransactional=true)``), then the
        append with the producer's epoch.  A zombie that is both fenced and of a stale generation
        therefore hears INVALID_PRODUCER_EPOCH (fatal), not ILLEGAL_GENERATION (abortable).  A coordinator
        still loading the group answers COORDINATOR_LOAD_IN_PROGRESS after the verification; a failed append
        (``append_ok`` false) COORDINATOR_NOT_AVAILABLE after the checks, with nothing staged.

        With ``[eos] txn_offset_commit_round_trip`` a commit that needs verification is three steps, as in Kafka:
        this one holds the request back with a verification guard on ``__consumer_offsets``
        (:meth:`_start_offsets_verification`), the transaction coordinator answers in a step of its own
        (:meth:`_on_verify_txn_offset_commit`) and the callback checks and appends
        (:meth:`_after_offsets_verification`).
        """
        if self.security is not None:
            denied = authz.deny_txn_offset_commit(self, s, env, req, GROUP_COORDINATOR)
            if denied is not None:
                return denied
        g, before = s.group, s
        assert g is not None
        ask = self._offset_ask(s, req, append_ok)
        events: tuple[str, ...] = ()
        error = Errors.NONE
        verify = self.tv >= 2 or (self.flags.partition_verification and self.flags.txn_offset_commit_verification)
        if verify and gc.txn_offset_commit_needs_verification(
            g, req.producer_id, req.producer_epoch, self.flags.ongoing_txn_check_epoch
        ):
            if self.eos.txn_offset_commit_round_trip:
                return self._start_offsets_verification(s, env, req)
            s, verdict, events = self._offsets_verdict(s, req, True)
            error = gc.verification_error(verdict)
            events = (*events, "txn_offset_commit_verification")
            if error != Errors.NONE:
                events = (*events, "txn_offset_commit_verification_failed", f"error:{error}")
        s, error, events = self._commit_offsets_checked(s, req, error, events, append_ok)
        return self._answer_txn_offset_commit(s, before, env.src, req, ask, error, events)

    def _offsets_verdict(
        self, s: TxnSystemState, req: TxnOffsetCommitRequest, append_ok: bool
    ) -> tuple[TxnSystemState, str, tuple[str, ...]]:
        """The transaction coordinator's verdict on the group's ``__consumer_offsets`` partition for ``req``:
        ``handleVerifyPartitionsInTransaction`` (TV0/TV1, verifyOnly) or the implicit add (TV2,
        ``handleAddPartitionsToTransaction``, its append succeeding with ``append_ok``)."""
        t = req.transactional_id
        md = s.coordinator[t]
        events: tuple[str, ...] = ()
        if s.loading and self.flags.loading_answers_load_in_progress:
            # the transaction coordinator's getTransactionState answers the group coordinator's verification
            # (AddPartitionsToTxn, verifyOnly under TV0/TV1) COORDINATOR_LOAD_IN_PROGRESS while it loads the
            # id's __transaction_state partition, before it looks at the entry (TransactionCoordinator.scala
            # @1eb7644349cb); the TxnOffsetCommit carries it back, and the client retries
            return s, Errors.COORDINATOR_LOAD_IN_PROGRESS, ("txn_offset_commit_verification_loading",)
        if self.tv >= 2:
            out = tc.handle_add_offsets(md, req.producer_id, req.producer_epoch, req.group, append_ok, self.cc)
            add = Ask("AddOffsetsToTxn", md, req.producer_id, req.producer_epoch, False,
                      (tc.OFFSETS_PARTITION_BASE + req.group,), self.tv, self.cc, s.loading)
            s = self._judge_table(s, add, out.error, _moved_to(out), append_ok, _moved(out))
            s, events = self._apply_coordinator(s, t, out)
            return s, out.error, events
        return s, tc.handle_verify_partition(md, req.producer_id, req.producer_epoch, OFFSETS_PARTITION), events

    def _validate_txn_offset_commit(self, s: TxnSystemState, req: TxnOffsetCommitRequest) -> tuple[TxnSystemState, str]:
        """``ClassicGroup.validateOffsetCommit(isTransactional=true)`` against the group as it stands in ``s``."""
        g = s.group
        assert g is not None
        check_generation = self.flags.generation_fencing
        if self.protocol:
            assert s.members is not None
            error = cg.validate_txn_offset_commit(s.members, req.member_id, req.generation, check_generation)
            member, known = req.member_id, s.members.member(req.member_id) is not None
            current, state = s.members.generation, s.members.state
        else:
            error = gc.validate_offset_commit(g, req.member, req.generation, True, check_generation)
            member, known, current, state = str(req.member), req.member in g.members, g.generation, g.state
        note = misfenced("TxnOffsetCommit", member, known, req.generation, current, state, error)
        if note:  # unreachable: ghost observer of a violation (txn_offset_commits_fenced_exactly)
            s = s._replace(ghost=s.ghost._replace(misfenced=(*s.ghost.misfenced, note)))
        return s, error

    def _commit_offsets_checked(
        self, s: TxnSystemState, req: TxnOffsetCommitRequest, error: str, events: tuple[str, ...], append_ok: bool,
        validated: bool = False, guard_lost: bool = False,
    ) -> tuple[TxnSystemState, str, tuple[str, ...]]:
        """``OffsetMetadataManager.commitTransactionalOffset`` after the verification answered ``error``: the shard's
        load state, the member and generation checks (skipped when ``validated``: the pre-KAFKA-15784 order ran them
        on arrival), the append (``append_ok``) and the staging of the offset.  ``guard_lost``: the verification
        guard the request presents is no longer the partition's (:meth:`_after_offsets_verification`)."""
        g = s.group
        assert g is not None
        if error == Errors.NONE and g.loading:
            # the verification ran (CoordinatorPartitionWriter, before the write event is queued); the write
            # event then finds the shard LOADING (CoordinatorRuntime.withActiveContextOrThrow)
            error = Errors.COORDINATOR_LOAD_IN_PROGRESS
            events = (*events, f"error:{error}")
        if error == Errors.NONE and not validated:
            s, error = self._validate_txn_offset_commit(s, req)
            if error != Errors.NONE:
                events = (*events, f"txn_offset_commit_rejected:{error}", f"error:{error}")
        if error == Errors.NONE and not append_ok:
            error = Errors.COORDINATOR_NOT_AVAILABLE
            events = (*events, "txn_offset_commit_append_failed", f"error:{error}")
        entry = g.offsets_log.entry(req.producer_id)
        stale = entry is not None and req.producer_epoch < entry.producer_epoch
        if error == Errors.NONE and guard_lost and not stale:
            # UnifiedLog.analyzeAndValidateProducerState: a stale epoch is answered first (INVALID_PRODUCER_EPOCH,
            # PR #20534), then a batch missing its required verification is refused INVALID_TXN_STATE
            error = Errors.INVALID_TXN_STATE
            events = (*events, "txn_offset_commit_guard_lost", f"error:{error}")
        if error == Errors.NONE:
            pid, epoch = req.producer_id, req.producer_epoch
            g, error, more = gc.append_txn_offset_commit(g, pid, epoch, req.partition, req.offset)
            events = (*events, *more)
            if error == Errors.NONE and s.members is not None and s.members.state == cg.COMPLETING_REBALANCE:
                events = (*events, "txn_offset_commit_during_completing_rebalance")
            s = s._replace(group=g)
        return s, error, events

    def _answer_txn_offset_commit(
        self, s: TxnSystemState, before: TxnSystemState, client: str, req: TxnOffsetCommitRequest,
        ask: OffsetAsk | None, error: str, events: tuple[str, ...],
    ) -> Result:
        """The answer judged by Kafka's table (``ask``; None: a row the table does not state) and sent back."""
        label = None if ask is None else offset_table_mismatch(ask, error, "txn_offset_commit_staged" in events)
        if label is not None:  # no branch: the other side is a violation, only a defect takes it
            s = _flagged(s, label)  # no mutate: ghost observer (coordinator_answers_per_kafka_table)
        resp = TxnOffsetCommitResponse(req.producer, req.connection, error)
        s = s._replace(network=net.send(s.network, net.Envelope(GROUP_COORDINATOR, client, req.connection, resp)))
        env = net.Envelope(client, GROUP_COORDINATOR, req.connection, req)
        return self._observed(s, before, env, "TxnOffsetCommit:verification", req.transactional_id), events

    # -- the TxnOffsetCommit's verification as Kafka's round trip ([eos] txn_offset_commit_round_trip) ---------------

    def _start_offsets_verification(self, s: TxnSystemState, env: net.Envelope, req: TxnOffsetCommitRequest) -> Result:
        """``GroupCoordinator.handleTxnCommitOffsets`` (Kafka 3.7-3.9, the KAFKA-15784 fix, apache/kafka PR #14774)
        -> ``ReplicaManager.maybeStartTransactionVerificationForPartition``: the group's ``__consumer_offsets``
        partition creates (or finds) the producer id's verification entry and its guard
        (``UnifiedLog.maybeStartTransactionVerification``), and ``AddPartitionsToTxnManager`` asks the transaction
        coordinator; nothing is checked or written yet.  The new coordinator does the same
        (``CoordinatorRuntime.scheduleTransactionalWriteOperation`` -> ``CoordinatorPartitionWriter.
        maybeStartTransactionVerification``, Kafka 3.7+/4.0).  Before the fix (Kafka 3.6,
        ``txn_offset_commit_validates_after_verification`` off) ``doTxnCommitOffsets`` ran the member and generation
        checks here, under the group lock, and handed the append to ``appendRecords``, which verified afterwards.
        The request to the transaction coordinator travels on the broker's own connection
        (:data:`VERIFICATION_CONNECTION`); that connection's resets are not modelled."""
        g = s.group
        assert g is not None
        if not self.flags.txn_offset_commit_validates_after_verification:
            s, early = self._validate_txn_offset_commit(s, req)
            if early != Errors.NONE:  # Kafka 3.6: the validation error answered at once, nothing verified
                events = (f"txn_offset_commit_rejected:{early}", f"error:{early}")
                return self._answer_txn_offset_commit(s, s, env.src, req, None, early, events)
        leader, guard = part.start_transaction_verification(
            g.offsets_log, req.producer_id, req.producer_epoch, self.tv >= 2, self.flags.verification_guard_fresh
        )
        s = s._replace(group=g._replace(offsets_log=leader))
        asked = self._offset_ask(s, req, True)
        ask = VerifyTxnOffsetCommitRequest(env.src, req, guard, asked.open_epoch)
        out = net.Envelope(GROUP_COORDINATOR, COORDINATOR, VERIFICATION_CONNECTION, ask)
        return s._replace(network=net.send(s.network, out)), ("txn_offset_commit_verification_started",)

    def _on_verify_txn_offset_commit(
        self, s: TxnSystemState, ask: VerifyTxnOffsetCommitRequest, append_ok: bool
    ) -> Result:
        """The transaction coordinator's half: its verdict, sent back to the group coordinator's callback with the
        entry it read (ghost: the answer-table judge of the callback reads it)."""
        md, loading = s.coordinator[ask.request.transactional_id], s.loading
        s, verdict, events = self._offsets_verdict(s, ask.request, append_ok)
        if "txn_log_append_failed" in events:  # TV2: the implicit add's __transaction_state write failed
            events = (*events, "txn_offset_commit_verification_append_failed")
        answer = VerifyTxnOffsetCommitResponse(
            ask.client, ask.request, ask.guard, verdict, md, loading, ask.open_epoch, append_ok
        )
        env = net.Envelope(COORDINATOR, GROUP_COORDINATOR, VERIFICATION_CONNECTION, answer)
        return s._replace(network=net.send(s.network, env)), (*events, f"txn_offset_commit_verdict:{verdict}")

    def _after_offsets_verification(
        self, s: TxnSystemState, answer: VerifyTxnOffsetCommitResponse, append_ok: bool
    ) -> Result:
        """The group coordinator's ``postVerificationCallback`` (Kafka 3.7+): a refusal is answered translated
        (:func:`gc.verification_error`); a verified commit runs ``doTxnCommitOffsets`` -- the member and generation
        checks against the group *as it stands now*, under the group lock with the append -- and the append carries
        the guard: ``UnifiedLog.analyzeAndValidateProducerState`` refuses it with INVALID_TXN_STATE when the
        producer id has no transaction open at the request's epoch and its verification entry no longer holds that
        guard (a marker cleared it: the transaction the verdict was about has ended).  A transactional record
        appended clears the entry (``UnifiedLog.updateProducers``)."""
        req, before = answer.request, s
        g = s.group
        assert g is not None
        error = gc.verification_error(answer.verdict)
        events: tuple[str, ...] = ("txn_offset_commit_verification",)
        if error != Errors.NONE:
            events = (*events, "txn_offset_commit_verification_failed", f"error:{error}")
        entry = g.offsets_log.entry(req.producer_id)
        open_now = (
            entry is not None and entry.current_txn_first_offset >= 0 and entry.producer_epoch == req.producer_epoch
        )
        guard_lost = g.offsets_log.verification_guard(req.producer_id) != answer.guard and not open_now
        guard_lost = guard_lost and self.flags.txn_offset_commit_guard_checked
        # the table judges the verdict the transaction coordinator gave and the group as the callback finds it
        ask: OffsetAsk | None = self._offset_ask(s, req, append_ok)._replace(
            md=answer.coordinator, txn_loading=answer.loading, open_epoch=answer.open_epoch,
            txn_append_ok=answer.txn_append_ok,
        )
        if not self.flags.txn_offset_commit_validates_after_verification:
            ask = None  # unreachable: weakened variant txn_offset_commit_validates_before_verification
        validated = not self.flags.txn_offset_commit_validates_after_verification
        s, error, more = self._commit_offsets_checked(s, req, error, events, append_ok, validated, guard_lost)
        if "txn_offset_commit_guard_lost" in more:
            # a row the table does not state: judged by what the refusal prevents (no_hanging_transaction: a record
            # staged after the marker that ended its transaction)
            ask = None
        g = s.group
        assert g is not None
        if "txn_offset_commit_staged" in more:
            cleared = part.clear_transaction_verification(g.offsets_log, req.producer_id)
            s = s._replace(group=g._replace(offsets_log=cleared))
        return self._answer_txn_offset_commit(s, before, answer.client, req, ask, error, more)

    def _offset_ask(self, s: TxnSystemState, req: TxnOffsetCommitRequest, append_ok: bool) -> OffsetAsk:
        """What Kafka's TxnOffsetCommit table reads of the request and the state it found (ghost observer)."""
        g = s.group
        assert g is not None
        entry = g.offsets_log.entry(req.producer_id)
        open_epoch = -1 if entry is None or entry.current_txn_first_offset < 0 else entry.producer_epoch
        stored = -1 if entry is None else entry.producer_epoch
        if s.members is not None:
            member, known = req.member_id, s.members.member(req.member_id) is not None
            current, state = s.members.generation, s.members.state
        else:
            member, known, current, state = str(req.member), req.member in g.members, g.generation, g.state
        return OffsetAsk(
            s.coordinator[req.transactional_id], req.producer_id, req.producer_epoch,
            tc.OFFSETS_PARTITION_BASE + req.group, self.tv, self.cc, self.flags.partition_verification,
            open_epoch, stored, g.loading, member, known, req.generation, current, state, append_ok, s.loading,
        )

    def _on_txn_offset_commit_response(self, s: TxnSystemState, resp: TxnOffsetCommitResponse) -> Result:
        i = resp.producer
        c, app = s.clients[i], s.apps[i]
        if resp.connection != app.gc_connection:
            # the answer to a TxnOffsetCommit whose connection was closed (reset, or request.timeout.ms):
            # NetworkClient never reads it; the retry's answer is the one that counts
            return s, ("stale_response",)
        if app.offsets != P.COMMITTING:  # no branch: one TxnOffsetCommit in flight, its phase left only here
            return s, ("stale_response",)
        err = resp.error
        s = _fault_free_offsets_refusal(s, i, err)  # no mutate: ghost observer (the judge of sole_producer_not_fenced)
        # the client's reading of the answer is the reach witness of each error path (invariants/eos_processing.py):
        # a group coordinator answering another error than Kafka's for a condition leaves its witness unreached
        answer = f"txn_offset_commit_answer:{err}"
        if err == Errors.NONE:
            c = c._replace(added=tuple(sorted({*c.added, OFFSETS_PARTITION})))
            s = s._replace(clients=_at(s.clients, i, c))
            return self._set_app(s, i, app._replace(offsets=P.DONE)), ("txn_offset_commit_ok",)
        if err in RETRIABLE_OFFSET_ERRORS:
            return self._send_txn_offset_commit(s, i, app), (f"client_error:{err}", "retry", answer)
        app = app._replace(offsets=P.NONE)
        events: tuple[str, ...]
        if err in ABORTABLE_OFFSET_ERRORS:
            c, events = tp.abortable_error(c), (f"client_error:{err}", "client_abortable", answer)
            if err in FENCING_ERRORS:  # CommitFailedException: the group fenced the member (KIP-447)
                events = (*events, "txn_offset_commit_fenced")
        else:
            c = tp.fatal_error(c, err)
            events = (f"client_error:{err}", "client_fenced" if c.fenced else "client_fatal", answer)
        return self._set_app(s._replace(clients=_at(s.clients, i, c)), i, app), events

    def _on_offset_commit(self, s: TxnSystemState, env: net.Envelope, req: OffsetCommitRequest) -> Result:
        """A plain OffsetCommit (a mixed application's commitAsync, or the weakened offsets_outside_transaction):
        ``OffsetMetadataManager.commitOffset`` validates the member and generation
        (``ClassicGroup.validateOffsetCommit(isTransactional=false)``: REBALANCE_IN_PROGRESS while
        CompletingRebalance) and appends a record without a producer id, which ``replay`` commits at once, beside
        any pending transactional offset of the partition (Kafka trunk 1eb7644349cb)."""
        g = s.group
        assert g is not None
        # the judge's view of the request (coordinator_answers_per_kafka_table, label answer_table:OffsetCommit)
        ask = PlainOffsetAsk(g.loading, str(req.member), req.member in g.members, req.generation, g.generation, g.state)
        if g.loading:
            # CoordinatorRuntime.withActiveContextOrThrow: a write to a LOADING shard
            error = Errors.COORDINATOR_LOAD_IN_PROGRESS
            label = plain_offset_table_mismatch(ask, error, False)  # the loading row is judged like any other
            if label is not None:  # no branch: the other side is a violation, only a defect takes it
                s = _flagged(s, label)  # no mutate: ghost observer (coordinator_answers_per_kafka_table)
            resp = OffsetCommitResponse(req.producer, req.connection, error)
            s = s._replace(network=net.send(s.network, net.Envelope(GROUP_COORDINATOR, env.src, env.connection, resp)))
            return s, (f"error:{error}", "offset_commit_load_in_progress")
        before = g
        g, error, events = gc.handle_offset_commit(
            g, req.member, req.generation, req.partition, req.offset, self.flags.generation_fencing
        )
        note = misfenced("OffsetCommit", str(req.member), req.member in before.members, req.generation,
                         before.generation, before.state, error)
        if note:  # unreachable: ghost observer of a violation (txn_offset_commits_fenced_exactly)
            s = s._replace(ghost=s.ghost._replace(misfenced=(*s.ghost.misfenced, note)))
        if error == Errors.NONE and gc.has_pending(before, req.partition):
            events = (*events, "offset_commit_beside_pending")
        label = plain_offset_table_mismatch(ask, error, error == Errors.NONE)
        if label is not None:  # no branch: the other side is a violation, only a defect takes it
            s = _flagged(s, label)  # no mutate: ghost observer (coordinator_answers_per_kafka_table)
        s = self._note_committed(s._replace(group=g))
        resp = OffsetCommitResponse(req.producer, req.connection, error)
        s = s._replace(network=net.send(s.network, net.Envelope(GROUP_COORDINATOR, env.src, env.connection, resp)))
        return s, events

    def _on_offset_commit_response(self, s: TxnSystemState, resp: OffsetCommitResponse) -> Result:
        if resp.connection == CONSUMER_CONNECTION:
            # commitAsync's callback: the application logs a failure and goes on (the next transaction commits
            # the offsets; ConsumerCoordinator's OffsetCommitResponseHandler, Kafka trunk 1eb7644349cb)
            return s, (f"offset_commit_answer:{resp.error}",)
        return self._on_deferred_commit_response(s, resp)

    def _on_deferred_commit_response(  # unreachable: weakened variant offsets_outside_transaction
        self, s: TxnSystemState, resp: OffsetCommitResponse
    ) -> Result:
        """offsets_outside_transaction: the answer to the commitSync after commitTransaction."""
        i = resp.producer
        app = s.apps[i]
        if app.offsets != P.PLAIN_SENT:
            return s, ("stale_response",)
        if resp.error == Errors.NONE:
            return self._set_app(s, i, app._replace(offsets=P.NONE, processing=-1)), ("offset_commit_ok",)
        app = app._replace(offsets=P.NONE, processing=-1, position=-1)
        return self._set_app(s, i, app), (f"client_error:{resp.error}", "commit_failed")

    def _write_marker(
        self, s: TxnSystemState, m: WriteTxnMarkersRequest
    ) -> tuple[TxnSystemState, str, tuple[str, ...]]:
        """Markers for the group's ``__consumer_offsets`` partition go to the group coordinator."""
        if m.partition < tc.OFFSETS_PARTITION_BASE:
            return super()._write_marker(s, m)
        g = s.group
        assert g is not None
        g, error, events = gc.handle_txn_marker(
            g, m, self.tv, self.cc.markers, self.flags.materialize_in_log_order
        )
        s = self._note_committed(s._replace(group=g))
        return s, error, events

    def _marker_log(self, s: TxnSystemState, m: WriteTxnMarkersRequest) -> PartitionLeader:
        """The group's ``__consumer_offsets`` partition takes the markers of the group's offsets."""
        if m.partition < tc.OFFSETS_PARTITION_BASE:
            return super()._marker_log(s, m)
        assert s.group is not None
        return s.group.offsets_log

    def _note_committed(self, s: TxnSystemState) -> TxnSystemState:
        """Ghost: the highest committed offset ever seen (for ``committed_offset_never_regresses``)."""
        c = gc.committed_offset(s.group, INPUT_PARTITION)  # no mutate: ghost
        if c is None or c.offset <= s.ghost.committed_offset_high:  # no mutate: ghost
            return s
        return s._replace(ghost=s.ghost._replace(committed_offset_high=c.offset))  # no mutate: ghost

    #: The group requests actions() offers per instance, each with the guard its step checks too.
    _GROUP_GUARDS: ClassVar[dict[str, Callable[..., bool]]] = {
        "Start": _may_start,
        "JoinGroup": _may_join,
        "SyncGroup": _may_sync,
        "Heartbeat": _may_heartbeat,
    }

    _HANDLERS: ClassVar[dict[str, Callable[..., Result]]] = {
        **{k: v for k, v in TransactionalSystem._HANDLERS.items() if k in EOS_ACTION_ARGS},
        "FetchOffsets": _fetch_offsets,
        "Process": _process,
        "ProcessSendRejected": _process_send_rejected,
        "SendAddOffsetsToTxn": _send_add_offsets,
        "CommitTransaction": _eos_commit,
        "AbortTransaction": _eos_abort,
        "CommitOffsets": _commit_offsets,
        "CommitAsync": _commit_async,
        "SyncGroup": _sync_group,
        "Rebalance": _rebalance,
        "Start": _start,
        "JoinGroup": _join_group,
        "CompleteJoin": _complete_join,
        "Heartbeat": _heartbeat,
        "SessionTimeout": _session_timeout,
        "LeaveGroup": _leave_group,
        "GroupCoordinatorFailover": _gc_failover,
        "GroupCoordinatorLoaded": _gc_loaded,
        "AppendFailure": _append_failure,
        "DropMessage": _eos_drop,
        "RequestTimeout": _eos_request_timeout,
        "SendTxnRequest": _eos_send_txn_request,
    }


#: The group coordinator's answers that fence a member: it no longer knows the member id, or the member's generation
#: is not the group's (``ClassicGroup`` ``validateMember``/``classicGroupHeartbeat``/``classicGroupSyncGroup``, Kafka
#: trunk ``1eb7644349cb``).  AbstractCoordinator recovers by rejoining, but the member has lost its partitions
#: (``onPartitionsLost``) and its open transaction's offsets will be refused.
MEMBER_FENCED_ANSWERS = (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION, Errors.FENCED_INSTANCE_ID)


def _fault_free_offsets_refusal(  # no mutate: ghost observer (the judge of sole_producer_not_fenced), not a rule
    s: TxnSystemState, i: int, error: str
) -> TxnSystemState:
    """Record a TxnOffsetCommit of instance ``i`` refused for its transaction's state (``TXN_STATE_REFUSALS``:
    INVALID_TXN_STATE, TRANSACTION_ABORTABLE -- the group coordinator's KIP-890 verification of the group's
    ``__consumer_offsets`` partition found it not in the transaction) in a run without faults, the instance being
    the only one of its transactional.id and its id still known to the transaction coordinator.  The same promise
    as for a Produce (``model.systems.transactions._fault_free_refusal``): AddOffsetsToTxn added the partition
    before (TV0/TV1) or the verification adds it (TV2), and nothing aborts the transaction behind its back."""
    if error not in TXN_STATE_REFUSALS or any(s.faults_used):
        return s
    tid = s.clients[i].transactional_id
    if sum(1 for d in s.clients if d.transactional_id == tid) > 1 or s.coordinator[tid] is None:
        return s
    return _flagged(
        s, f"fault_free_refusal:producer {i}'s TxnOffsetCommit was refused {error} in a run without faults"
    )


def _fault_free_fencing(  # no mutate: ghost observer (the judge of never_fenced_without_fault), not a rule
    s: TxnSystemState, i: int, request: str, error: str
) -> TxnSystemState:
    """Record a member fenced by its group coordinator in a run without any fault.

    The classic coordinator removes a member, or moves the group to a generation without it, only when its session
    expires, it leaves, or a rebalance completes without its rejoin; expiry and rebalance are faults, a leave is
    not (Kafka 4.0 ``removeMember`` drops only the closed member, which sends nothing after); the join barrier waits
    for every member (``join_complete_ready``).  A healthy instance's consumer heartbeats only as a member, in STABLE or
    COMPLETING_REBALANCE (``AbstractCoordinator.HeartbeatThread`` disables itself while ``hasNotJoinedGroup``), and
    sends SyncGroup only with the generation its JoinGroup answer gave it, so without a fault no answer fences it.
    (A TxnOffsetCommit is not judged: a cooperative member keeps processing while its JoinGroup waits, and the
    generation its ``groupMetadata()`` gave ``sendOffsetsToTransaction`` may be gone when the request lands --
    ILLEGAL_GENERATION, CommitFailedException, an abort: Kafka's own behaviour without any fault.)
    """
    if error not in MEMBER_FENCED_ANSWERS or any(s.faults_used):
        return s
    return _flagged(s, f"fault_free_fencing:instance {i}'s {request} answered {error} in a run without faults")
