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

Abstractions: the input partition is a fixed, non-transactional log (reading
it is local); OffsetFetch and SyncGroup are atomic request/response steps; the
group coordinator lives on the broker and its messages are not lost (their
connection resets are not modelled); offsets are those of one input partition.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.coordinator.group import group_coordinator as gc
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.interface import Action, ModelError, Property
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    WriteTxnMarkersRequest,
)
from keos.model.security import gate as authz
from keos.model.systems.transactions import (
    COORDINATOR,
    FAULT_OF_ACTION,
    TXN_ACTION_ARGS,
    Result,
    TransactionalSystem,
    _at,
)
from keos.model.systems.transactions_records import AppInstance, EosConfig, TxnConfig, TxnSystemState
from keos.model.variants import Variant

__all__ = [
    "EOS_ACTION_ARGS",
    "GROUP",
    "GROUP_COORDINATOR",
    "INPUT_PARTITION",
    "OUTPUT_PARTITION",
    "EosSystem",
    "OffsetsPhase",
    "decode_output",
    "output_record",
]

GROUP_COORDINATOR = "gc"
GROUP = 0
INPUT_PARTITION = 0
OUTPUT_PARTITION = 0
OFFSETS_PARTITION = tc.OFFSETS_PARTITION_BASE + GROUP

#: The plain application's calls (BeginTransaction, Send) are replaced by Process.
EOS_ACTION_ARGS: dict[str, tuple[str, ...]] = {
    **{k: v for k, v in TXN_ACTION_ARGS.items() if k not in ("BeginTransaction", "Send")},
    "FetchOffsets": ("instance",),
    "Process": ("instance",),
    "SendAddOffsetsToTxn": ("instance",),
    "CommitOffsets": ("instance",),
    "SyncGroup": ("instance",),
    "Rebalance": ("instance",),
}

#: TxnOffsetCommit errors the client retries; abortable ones (CommitFailedException); the rest is fatal.
RETRIABLE_OFFSET_ERRORS = (
    Errors.CONCURRENT_TRANSACTIONS,
    Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_COORDINATOR,
    Errors.COORDINATOR_LOAD_IN_PROGRESS,
)
ABORTABLE_OFFSET_ERRORS = (
    Errors.ILLEGAL_GENERATION,
    Errors.UNKNOWN_MEMBER_ID,
    Errors.TRANSACTION_ABORTABLE,
    Errors.GROUP_AUTHORIZATION_FAILED,
)

#: How the transaction coordinator's answer to the group coordinator's add/verify reaches the client.
ADD_OFFSETS_TO_CLIENT_ERROR = {
    Errors.NONE: Errors.NONE,
    Errors.PRODUCER_FENCED: Errors.PRODUCER_FENCED,
    Errors.INVALID_PRODUCER_ID_MAPPING: Errors.TRANSACTION_ABORTABLE,
    Errors.TRANSACTION_ABORTABLE: Errors.TRANSACTION_ABORTABLE,
    Errors.CONCURRENT_TRANSACTIONS: Errors.CONCURRENT_TRANSACTIONS,
    Errors.COORDINATOR_NOT_AVAILABLE: Errors.COORDINATOR_NOT_AVAILABLE,
}


class OffsetsPhase:
    """``AppInstance.offsets``: where the current transaction's offset commit stands."""

    NONE = ""
    ADD = "ADD_OFFSETS"  # TV0/TV1: AddOffsetsToTxn to send or in flight
    COMMITTING = "TXN_OFFSET_COMMIT"  # TxnOffsetCommit in flight
    DONE = "DONE"  # staged at the group coordinator: commitTransaction may go
    PLAIN = "PLAIN"  # offsets_outside_transaction: OffsetCommit after commitTransaction
    PLAIN_SENT = "PLAIN_SENT"


P = OffsetsPhase


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
    FAULT_OF_ACTION: ClassVar[dict[str, str]] = {**FAULT_OF_ACTION, "Rebalance": "rebalance"}

    def __init__(
        self,
        config: TxnConfig,
        variant: Variant,
        properties: Sequence[Property] = (),
        name: str = "eos",
        scenario_info: dict[str, Any] | None = None,
    ) -> None:
        topo = config.topology
        if topo.shared_transactional_id or topo.partitions != 1 or topo.records_per_transaction != 1:
            raise ModelError("the eos model needs one output partition, one record per transaction, own ids")
        self.eos = config.eos or EosConfig()
        if self.eos.input_records < 1 or topo.transactions_per_producer * self.eos.input_records >= 1000:
            raise ModelError("eos: input_records must be >= 1 and transactions * input_records < 1000")
        super().__init__(config, variant, properties, name, scenario_info)

    def init_states(self) -> Sequence[TxnSystemState]:
        """Every instance a member of generation 1; instance 0 owns the input partition."""
        base = super().init_states()[0]
        n = len(base.clients)
        group = gc.form_group(GROUP, tuple(range(n)), (0,))
        apps = tuple(AppInstance(group.generation, i == 0) for i in range(n))
        return (base._replace(group=group, apps=apps),)

    def describe(self) -> dict[str, Any]:
        """Scenario, variant and bounds, plus the application's input."""
        return {**super().describe(), "eos": {"input_records": self.eos.input_records}}

    # -- actions ---------------------------------------------------------------------------------------

    def _may_init_transactions(self, state: TxnSystemState, i: int) -> bool:
        """An instance initialises its producer when it is first assigned the input partition."""
        return state.apps[i].owns

    def _application_actions(self, state: TxnSystemState, i: int, c: tp.TxnClient) -> list[Action]:
        out: list[Action] = []
        for kind in ("FetchOffsets", "Process", "SendAddOffsetsToTxn"):
            if self._app_step(state, kind, i) is not None:
                out.append(Action(kind, (i,)))
        if self._commit_ok(state, i):
            out.append(Action("CommitTransaction", (i,)))
        if self._abort_ok(state, i):
            out.append(Action("AbortTransaction", (i,)))
        if self._plain_commit_ok(state, i):
            out.append(Action("CommitOffsets", (i,)))
        g = state.group
        if g is not None and g.state == gc.COMPLETING_REBALANCE and i in g.members and i not in g.synced:
            out.append(Action("SyncGroup", (i,)))
        return out

    def _droppable(self, env: net.Envelope) -> bool:
        return super()._droppable(env) and GROUP_COORDINATOR not in (env.src, env.dst)

    def _fault_actions(self, state: TxnSystemState, heads: Sequence[net.Envelope]) -> list[Action]:
        out = super()._fault_actions(state, heads)
        k = len(state.faults_used) - 1  # "rebalance" is the last fault kind
        if state.faults_used[k] < self._limits[k] and state.group is not None:
            out.extend(Action("Rebalance", (i,)) for i in state.group.members)
        return out

    # -- application steps -----------------------------------------------------------------------------

    def _set_app(self, s: TxnSystemState, i: int, app: AppInstance) -> TxnSystemState:
        return s._replace(apps=_at(s.apps, i, app))

    def _app_step(self, s: TxnSystemState, kind: str, i: int) -> Result:
        handler = {
            "FetchOffsets": EosSystem._fetch_offsets,
            "Process": EosSystem._process,
            "SendAddOffsetsToTxn": EosSystem._send_add_offsets,
        }[kind]
        return handler(self, s, i)

    def _fetch_offsets(self, s: TxnSystemState, i: int) -> Result:
        """OffsetFetch(requireStable): the new owner waits while a transactional offset is pending."""
        app, c = s.apps[i], s.clients[i]
        if c.state != tp.C.READY or not app.owns or app.position >= 0:
            return None
        error, offset = gc.handle_offset_fetch(s.group, INPUT_PARTITION, require_stable=True)
        if error != Errors.NONE:
            return s, (error, "offset_fetch_retry")
        return self._set_app(s, i, app._replace(position=max(offset, 0))), ("offset_fetched",)

    def _process(self, s: TxnSystemState, i: int) -> Result:
        """One loop iteration: beginTransaction, poll one input record, send its output record,
        sendOffsetsToTransaction(position, groupMetadata).

        The calls are local (they enqueue requests), so they are one step; the
        requests they enqueue travel separately.
        """
        app, c = s.apps[i], s.clients[i]
        n = self.eos.input_records
        if not app.owns or not 0 <= app.position < n or app.offsets not in (P.NONE, P.DONE):
            return None
        begun = tp.begin_transaction(c, self.config.topology.transactions_per_producer)
        if begun is None:
            return None
        rid = output_record(i, begun.txn, app.position, n)
        c = tp.send(begun, OUTPUT_PARTITION, rid, self.tv)
        app = app._replace(position=app.position + 1, processing=app.position, offsets_generation=app.generation)
        s = s._replace(clients=_at(s.clients, i, c))
        if not self.flags.offsets_in_transaction:
            return self._set_app(s, i, app._replace(offsets=P.PLAIN)), ("process", "offsets_deferred")
        if self.tv < 2:
            return self._set_app(s, i, app._replace(offsets=P.ADD)), ("process", "send_offsets_to_transaction")
        s = self._send_txn_offset_commit(s, i, app)
        return s, ("process", "send_offsets_to_transaction", "TxnOffsetCommitRequest")

    def _send_txn_offset_commit(self, s: TxnSystemState, i: int, app: AppInstance) -> TxnSystemState:
        """TxnOffsetCommit(offset after the processed record, the captured generation); also a retry."""
        c = s.clients[i]
        req = TxnOffsetCommitRequest(
            i,
            0,
            c.transactional_id,
            c.data.producer_id,
            c.data.producer_epoch,
            GROUP,
            app.offsets_generation,
            i,
            INPUT_PARTITION,
            app.processing + 1,
        )
        s = s._replace(network=net.send(s.network, net.Envelope(f"p{i}", GROUP_COORDINATOR, 0, req)))
        return self._set_app(s, i, app._replace(offsets=P.COMMITTING))

    def _send_add_offsets(self, s: TxnSystemState, i: int) -> Result:
        """TV0/TV1: AddOffsetsToTxn to the transaction coordinator (one coordinator request at a time)."""
        app, c = s.apps[i], s.clients[i]
        if app.offsets != P.ADD or c.inflight or c.state != tp.C.IN_TRANSACTION:
            return None
        req = AddOffsetsToTxnRequest(
            i, c.tc_connection, c.transactional_id, c.data.producer_id, c.data.producer_epoch, GROUP
        )
        s = s._replace(
            clients=_at(s.clients, i, c._replace(inflight=True)),
            network=net.send(s.network, net.Envelope(f"p{i}", COORDINATOR, c.tc_connection, req)),
        )
        return s, ("AddOffsetsToTxnRequest",)

    def _commit_ok(self, s: TxnSystemState, i: int) -> bool:
        return s.clients[i].state == tp.C.IN_TRANSACTION and s.apps[i].offsets in (P.DONE, P.PLAIN)

    def _eos_commit(self, s: TxnSystemState, i: int) -> Result:
        if not self._commit_ok(s, i):
            return None
        return self._set_client(s, i, tp.commit_transaction(s.clients[i]))

    def _abort_ok(self, s: TxnSystemState, i: int) -> bool:
        c, app = s.clients[i], s.apps[i]
        if app.offsets == P.COMMITTING:
            return False  # the Sender keeps one transactional request in flight: EndTxn waits for it
        lost = c.state == tp.C.IN_TRANSACTION and not app.owns
        return c.state == tp.C.ABORTABLE_ERROR or lost

    def _eos_abort(self, s: TxnSystemState, i: int) -> Result:
        """abortTransaction, then seek back to the committed offset (re-fetched before the next poll)."""
        if not self._abort_ok(s, i):
            return None
        c = tp.abort_transaction(s.clients[i])
        if c is None:
            return None
        app = s.apps[i]
        position = -1 if self.flags.seek_after_abort or not app.owns else app.position
        s = self._set_app(s, i, app._replace(position=position, processing=-1, offsets=P.NONE))
        return s._replace(clients=_at(s.clients, i, c)), ("app_abort",)

    def _plain_commit_ok(self, s: TxnSystemState, i: int) -> bool:
        return s.apps[i].offsets == P.PLAIN and s.clients[i].state == tp.C.READY

    def _commit_offsets(self, s: TxnSystemState, i: int) -> Result:
        """offsets_outside_transaction: commitSync(position) after commitTransaction returned."""
        if not self._plain_commit_ok(s, i):
            return None
        app = s.apps[i]
        req = OffsetCommitRequest(i, 0, GROUP, app.offsets_generation, i, INPUT_PARTITION, app.processing + 1)
        s = s._replace(network=net.send(s.network, net.Envelope(f"p{i}", GROUP_COORDINATOR, 0, req)))
        return self._set_app(s, i, app._replace(offsets=P.PLAIN_SENT)), ("OffsetCommitRequest",)

    def _sync_group(self, s: TxnSystemState, i: int) -> Result:
        """SyncGroup: the application takes the new generation and assignment (onPartitionsAssigned/Lost)."""
        g = s.group
        if g is None or g.state != gc.COMPLETING_REBALANCE or i in g.synced:
            return None
        g, error = gc.sync_group(g, i, g.generation)
        if error != Errors.NONE:
            return None
        app = s.apps[i]
        owns = g.assignment[INPUT_PARTITION] == i
        position = app.position if owns and app.owns else -1
        events: tuple[str, ...] = ("sync_group",)
        if app.owns and not owns:
            events = (*events, "partition_lost")
        app = app._replace(generation=g.generation, owns=owns, position=position)
        return self._set_app(s._replace(group=g), i, app), events

    def _rebalance(self, s: TxnSystemState, i: int) -> Result:
        """A rebalance: next generation, the input partition assigned to member ``i``.

        Every member but the previous owner takes part at once (JoinGroup and
        SyncGroup in the same round); the previous owner -- stalled, a zombie
        -- learns the new generation only at its own ``SyncGroup``.
        """
        g = s.group
        if g is None or i not in g.members:
            return None
        old = g.assignment[INPUT_PARTITION]
        events: tuple[str, ...] = ("rebalance",)
        if old != i and old >= 0 and s.apps[old].processing >= 0 and s.clients[old].state != tp.C.READY:
            events = (*events, "rebalance_moved_partition_mid_transaction")
        s = s._replace(group=gc.rebalance(g, g.members, (i,)))
        for m in g.members:
            if m != old:
                synced = self._sync_group(s, m)
                assert synced is not None
                s = synced[0]
        return s, events

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
            ),
        ):
            return super()._receive(s, env, append_ok)
        network = net.remove(s.network, env)
        if network is None:
            return None
        s = s._replace(network=network)
        if isinstance(body, AddOffsetsToTxnRequest):
            return self._on_add_offsets(s, env, body, append_ok)
        if isinstance(body, TxnOffsetCommitRequest):
            return self._on_txn_offset_commit(s, env, body)
        if isinstance(body, OffsetCommitRequest):
            return self._on_offset_commit(s, env, body)
        if isinstance(body, AddOffsetsToTxnResponse):
            return self._on_add_offsets_response(s, body)
        if isinstance(body, TxnOffsetCommitResponse):
            return self._on_txn_offset_commit_response(s, body)
        return self._on_offset_commit_response(s, body)

    def _on_add_offsets(
        self, s: TxnSystemState, env: net.Envelope, req: AddOffsetsToTxnRequest, append_ok: bool
    ) -> Result:
        if self.security is not None:
            denied = authz.deny_add_offsets(self, s, env, req)
            if denied is not None:
                return denied
        t = req.transactional_id
        out = tc.handle_add_offsets(s.coordinator[t], req.producer_id, req.producer_epoch, req.group, append_ok)
        s, events = self._apply_coordinator(s, t, out)
        resp = AddOffsetsToTxnResponse(req.producer, req.connection, out.error)
        s = s._replace(network=net.send(s.network, net.Envelope(COORDINATOR, env.src, env.connection, resp)))
        return s, ("add_offsets_to_txn", *events)

    def _on_add_offsets_response(self, s: TxnSystemState, resp: AddOffsetsToTxnResponse) -> Result:
        i = resp.producer
        c, app = s.clients[i], s.apps[i]
        if resp.connection != c.tc_connection or not c.inflight:
            return s, ("stale_response",)
        c = c._replace(inflight=False)
        err = resp.error
        if err in tp.RETRIABLE_COORDINATOR_ERRORS:
            return s._replace(clients=_at(s.clients, i, c)), (f"client_error:{err}", "retry")
        if err == Errors.GROUP_AUTHORIZATION_FAILED:
            c, events = tp.abortable_error(c), (f"client_error:{err}", "client_abortable")
            return self._set_app(s._replace(clients=_at(s.clients, i, c)), i, app._replace(offsets=P.NONE)), events
        if err != Errors.NONE:
            fatal = tp.fatal_error(c, err)
            return s._replace(clients=_at(s.clients, i, fatal)), (f"client_error:{err}", "client_fatal")
        c = c._replace(added=tuple(sorted({*c.added, OFFSETS_PARTITION})))
        s = s._replace(clients=_at(s.clients, i, c))
        if c.state != tp.C.IN_TRANSACTION or app.offsets != P.ADD:
            return s, ("offsets_added",)
        return self._send_txn_offset_commit(s, i, app), ("offsets_added", "TxnOffsetCommitRequest")

    def _on_txn_offset_commit(self, s: TxnSystemState, env: net.Envelope, req: TxnOffsetCommitRequest) -> Result:
        """The group coordinator: group validation, the transaction check (TV2: implicit add), then stage."""
        if self.security is not None:
            denied = authz.deny_txn_offset_commit(self, s, env, req, GROUP_COORDINATOR)
            if denied is not None:
                return denied
        g = s.group
        assert g is not None
        check_generation = self.flags.generation_fencing
        error = gc.validate_offset_commit(g, req.member, req.generation, True, check_generation)
        events: tuple[str, ...] = ()
        if error == Errors.NONE and (self.tv >= 2 or self.flags.partition_verification):
            t = req.transactional_id
            md = s.coordinator[t]
            if self.tv >= 2:
                out = tc.handle_add_offsets(md, req.producer_id, req.producer_epoch, req.group)
                s, events = self._apply_coordinator(s, t, out)
                verdict = out.error
            else:
                verdict = tc.handle_verify_partition(md, req.producer_id, req.producer_epoch, OFFSETS_PARTITION)
            error = ADD_OFFSETS_TO_CLIENT_ERROR.get(verdict, Errors.TRANSACTION_ABORTABLE)
            if error != Errors.NONE:
                events = (*events, "txn_offset_commit_verification_failed", f"error:{error}")
        if error == Errors.NONE:
            g, error, more = gc.handle_txn_offset_commit(
                g,
                req.producer_id,
                req.producer_epoch,
                req.member,
                req.generation,
                req.partition,
                req.offset,
                check_generation,
            )
            events = (*events, *more)
            s = s._replace(group=g)
        elif not events:
            events = (f"txn_offset_commit_rejected:{error}", f"error:{error}")
        resp = TxnOffsetCommitResponse(req.producer, req.connection, error)
        s = s._replace(network=net.send(s.network, net.Envelope(GROUP_COORDINATOR, env.src, env.connection, resp)))
        return s, events

    def _on_txn_offset_commit_response(self, s: TxnSystemState, resp: TxnOffsetCommitResponse) -> Result:
        i = resp.producer
        c, app = s.clients[i], s.apps[i]
        if app.offsets != P.COMMITTING:
            return s, ("stale_response",)
        err = resp.error
        if err == Errors.NONE:
            c = c._replace(added=tuple(sorted({*c.added, OFFSETS_PARTITION})))
            s = s._replace(clients=_at(s.clients, i, c))
            return self._set_app(s, i, app._replace(offsets=P.DONE)), ("txn_offset_commit_ok",)
        if err in RETRIABLE_OFFSET_ERRORS:
            return self._send_txn_offset_commit(s, i, app), (f"client_error:{err}", "retry")
        app = app._replace(offsets=P.NONE)
        if err in ABORTABLE_OFFSET_ERRORS:
            c, events = tp.abortable_error(c), (f"client_error:{err}", "client_abortable")
        else:
            c, events = tp.fatal_error(c, err), (f"client_error:{err}", "client_fatal")
        return self._set_app(s._replace(clients=_at(s.clients, i, c)), i, app), events

    def _on_offset_commit(self, s: TxnSystemState, env: net.Envelope, req: OffsetCommitRequest) -> Result:
        g = s.group
        assert g is not None
        g, error, events = gc.handle_offset_commit(
            g, req.member, req.generation, req.partition, req.offset, self.flags.generation_fencing
        )
        s = self._note_committed(s._replace(group=g))
        resp = OffsetCommitResponse(req.producer, req.connection, error)
        s = s._replace(network=net.send(s.network, net.Envelope(GROUP_COORDINATOR, env.src, env.connection, resp)))
        return s, events

    def _on_offset_commit_response(self, s: TxnSystemState, resp: OffsetCommitResponse) -> Result:
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
        g, error, events = gc.handle_txn_marker(g, m, self.tv, self.flags.marker_retry_same_epoch)
        return self._note_committed(s._replace(group=g)), error, events

    def _note_committed(self, s: TxnSystemState) -> TxnSystemState:
        """Ghost: the highest committed offset ever seen (for ``committed_offset_never_regresses``)."""
        c = gc.committed_offset(s.group, INPUT_PARTITION)
        if c is None or c.offset <= s.ghost.committed_offset_high:
            return s
        return s._replace(ghost=s.ghost._replace(committed_offset_high=c.offset))

    _HANDLERS: ClassVar[dict[str, Callable[..., Result]]] = {
        **{k: v for k, v in TransactionalSystem._HANDLERS.items() if k in EOS_ACTION_ARGS},
        "FetchOffsets": _fetch_offsets,
        "Process": _process,
        "SendAddOffsetsToTxn": _send_add_offsets,
        "CommitTransaction": _eos_commit,
        "AbortTransaction": _eos_abort,
        "CommitOffsets": _commit_offsets,
        "SyncGroup": _sync_group,
        "Rebalance": _rebalance,
    }
