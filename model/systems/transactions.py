"""The composed transactions system: producers, the transaction coordinator, partition leaders.

KIP-98 §6-8 as a :class:`model.interface.Model`, built from the component
modules (``transactional_producer``, ``txn_coordinator``, ``transaction_log``,
``txn_markers``, ``partition``, ``network``).  Separate from
:mod:`model.systems.idempotence` so the idempotence model stays small and fast.

Actors and channels: client ``p<i>`` talks to the transaction coordinator
``tc`` (connection = the client's coordinator-connection incarnation) and to
the broker ``b0`` leading every data partition; ``tc`` sends WriteTxnMarkers
to ``b0`` on connection = coordinator epoch.  Channels are FIFO
(:mod:`model.network`); a request whose client timed out stays in flight and
may arrive late -- the KIP-890 scenarios A/B/C.

Abstractions (documented simplifications):

* the transaction-log append is atomic with the coordinator step (the log is
  replicated with acks=-1); ``AppendFailure`` delivers a request whose append
  fails;
* the marker response is handled in the step that writes the marker;
* KIP-890 part 1 verification and the TV2 implicit AddPartitionsToTxn are
  evaluated against the coordinator's metadata in the step that appends the
  batch (the VerificationGuard makes the real round trip equivalent, §2.7);
* the coordinator's timeout abort and transactional-id expiry are environment
  actions with budgets (no clocks);
* consumers are the pure views of :mod:`model.clients.consumer`.

Application: producer ``i`` runs ``transactions_per_producer`` transactions
of ``records_per_transaction`` records; record ``n`` goes to partition ``n mod
partitions``.  It commits each transaction (or, with ``voluntary_abort``,
may abort it) and aborts after an abortable error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any, ClassVar

from keos.model import codec
from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.clients.producer_config import ProducerConfig
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.coordinator.transaction.transaction_log import needs_markers
from keos.model.coordinator.transaction.transaction_state import TransactionState, is_valid_transition
from keos.model.interface import Action, ModelError, Property, Step
from keos.model.log import partition as part
from keos.model.log.txn_markers import append_end_txn_marker
from keos.model.protocol.messages import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
    WriteTxnMarkersRequest,
)
from keos.model.systems.transactions_records import (
    TXN_FAULT_KINDS,
    ClientTxn,
    Completion,
    Fence,
    TxnConfig,
    TxnFaultBudget,
    TxnGhost,
    TxnSystemState,
    TxnTopology,
)
from keos.model.variants import Variant

__all__ = [
    "TXN_ACTION_ARGS",
    "TXN_FAULT_KINDS",
    "TransactionalSystem",
    "TxnConfig",
    "TxnFaultBudget",
    "TxnGhost",
    "TxnSystemState",
    "TxnTopology",
]

BROKER = "b0"
COORDINATOR = "tc"
TXN_ACTION_ARGS: dict[str, tuple[str, ...]] = {
    "InitTransactions": ("producer",),
    "BeginTransaction": ("producer",),
    "Send": ("producer",),
    "CommitTransaction": ("producer",),
    "AbortTransaction": ("producer",),
    "SendTxnRequest": ("producer",),
    "SendProduce": ("producer", "partition"),
    "Deliver": ("message",),
    "DropMessage": ("message",),
    "RequestTimeout": ("producer",),
    "ExpireBatch": ("producer", "partition"),
    "TxnTimeout": ("transactional_id",),
    "AppendFailure": ("message",),
    "CoordinatorFailover": (),
    "ExpireTransactionalId": ("transactional_id",),
}
FAULT_OF_ACTION = {
    "DropMessage": "drop",
    "RequestTimeout": "request_timeout",
    "ExpireBatch": "batch_expiry",
    "TxnTimeout": "txn_timeout",
    "AppendFailure": "append_failure",
    "CoordinatorFailover": "coordinator_failover",
    "ExpireTransactionalId": "txn_id_expiry",
}


Result = tuple[TxnSystemState, tuple[str, ...]] | None


def _at(items: tuple[Any, ...], i: int, value: Any) -> tuple[Any, ...]:
    return (*items[:i], value, *items[i + 1 :])


class TransactionalSystem:
    """Transactional producers, one transaction coordinator and one broker, as a Model."""

    #: Action kind -> argument names (JSON keys); extended by subclasses.
    ACTION_ARGS: ClassVar[dict[str, tuple[str, ...]]] = TXN_ACTION_ARGS
    #: Action kind -> fault kind of :data:`TXN_FAULT_KINDS`.
    FAULT_OF_ACTION: ClassVar[dict[str, str]] = FAULT_OF_ACTION

    def __init__(
        self,
        config: TxnConfig,
        variant: Variant,
        properties: Sequence[Property] = (),
        name: str = "transactions",
        scenario_info: dict[str, Any] | None = None,
    ) -> None:
        topo = config.topology
        if topo.producers * topo.transactions_per_producer * topo.records_per_transaction >= prod.RECORDS_PER_PRODUCER:
            raise ModelError("too many records for the record-id encoding")
        self.name = name
        self.config = config
        self.variant = variant
        self.flags = variant.flags
        self.tv = self.flags.transaction_version
        self.kip_360 = self.flags.kip_360
        self.cc = tc.CoordinatorConfig(self.tv, config.max_producer_epoch, self.flags.timeout_abort_bumps_epoch)
        self.producer_config = ProducerConfig(retries=config.retries, max_in_flight=1)
        self._properties = tuple(properties)
        self._limits = config.faults.limits()
        self._scenario_info = scenario_info or {}
        self.tids = 1 if topo.shared_transactional_id else topo.producers

    # -- Model interface -------------------------------------------------------------------

    def init_states(self) -> Sequence[TxnSystemState]:
        """Clients before initTransactions, no coordinator entries, empty logs."""
        topo = self.config.topology
        clients = tuple(
            tp.new_client(0 if topo.shared_transactional_id else i, topo.partitions) for i in range(topo.producers)
        )
        return (
            TxnSystemState(
                clients,
                (None,) * self.tids,
                (None,) * self.tids,
                0,
                tuple(part.PartitionLeader() for _ in range(topo.partitions)),
                (),
                0,
                (0,) * len(TXN_FAULT_KINDS),
                TxnGhost(),
            ),
        )

    def properties(self) -> Sequence[Property]:
        """The properties this instance checks."""
        return self._properties

    def within_bounds(self, state: TxnSystemState) -> bool:
        """Budgets and record counts make the space finite."""
        return True

    def fingerprint(self, state: TxnSystemState) -> str:
        """Stable blake2b-64 fingerprint."""
        return codec.fingerprint(state)

    def record_of(self, i: int, n: int) -> int:
        """Record id of producer ``i``'s ``n``-th record."""
        return prod.record_id(i, n)

    def txn_records(self, i: int, txn: int) -> tuple[int, ...]:
        """The record ids of transaction ``txn`` of producer ``i``."""
        rpt = self.config.topology.records_per_transaction
        return tuple(prod.record_id(i, txn * rpt + n) for n in range(rpt))

    def actions(self, state: TxnSystemState) -> list[Action]:
        """Enabled actions: application and client steps, deliveries, then faults."""
        out: list[Action] = []
        topo = self.config.topology
        for i, c in enumerate(state.clients):
            if c.state == tp.C.UNINITIALIZED and self._may_init_transactions(state, i):
                out.append(Action("InitTransactions", (i,)))
            out.extend(self._application_actions(state, i, c))
            if tp.next_txn_request(c, i, self.tv, self.kip_360) is not None:
                out.append(Action("SendTxnRequest", (i,)))
            for q in range(topo.partitions):
                if self._drain(c, i, q) is not None:
                    out.append(Action("SendProduce", (i, q)))
        heads = net.channel_heads(state.network)
        out.extend(Action("Deliver", (env,)) for env in heads)
        if sum(state.faults_used) < self.config.faults.total:
            out.extend(self._fault_actions(state, heads))
        return out

    def _may_init_transactions(self, state: TxnSystemState, i: int) -> bool:
        """Whether the application calls initTransactions now (always, for the plain application)."""
        return True

    def _application_actions(self, state: TxnSystemState, i: int, c: tp.TxnClient) -> list[Action]:
        """The plain application's calls for client ``i`` (overridden by :mod:`model.systems.eos`)."""
        out: list[Action] = []
        topo = self.config.topology
        rpt = topo.records_per_transaction
        if tp.begin_transaction(c, topo.transactions_per_producer) is not None:
            out.append(Action("BeginTransaction", (i,)))
        if c.state == tp.C.IN_TRANSACTION and c.data.next_record < (c.txn + 1) * rpt:
            out.append(Action("Send", (i,)))
        if c.state == tp.C.IN_TRANSACTION and c.data.next_record == (c.txn + 1) * rpt:
            out.append(Action("CommitTransaction", (i,)))
        if c.state == tp.C.ABORTABLE_ERROR or (topo.voluntary_abort and c.state == tp.C.IN_TRANSACTION):
            out.append(Action("AbortTransaction", (i,)))
        return out

    def _droppable(self, env: net.Envelope) -> bool:
        """Whether a connection reset may lose ``env`` (markers are retried by the coordinator)."""
        return not isinstance(env.body, WriteTxnMarkersRequest)

    def _fault_actions(self, state: TxnSystemState, heads: Sequence[net.Envelope]) -> list[Action]:
        """Fault actions whose per-kind budget is not used up (the total is checked by the caller)."""
        out: list[Action] = []
        topo = self.config.topology
        used = state.faults_used
        lim = self._limits
        if used[0] < lim[0]:
            out.extend(Action("DropMessage", (env,)) for env in heads if self._droppable(env))
        if used[1] < lim[1]:
            for i, c in enumerate(state.clients):
                if c.inflight or c.data.in_flight:
                    out.append(Action("RequestTimeout", (i,)))
        if used[2] < lim[2]:
            for i, c in enumerate(state.clients):
                for q in range(topo.partitions):
                    if prod.expire_batch(c.data, q, self.producer_config) is not None:
                        out.append(Action("ExpireBatch", (i, q)))
        if used[3] < lim[3]:
            out.extend(
                Action("TxnTimeout", (t,)) for t in range(self.tids) if tc.timeout_abort(state.coordinator[t], self.cc)
            )
        if used[4] < lim[4]:
            out.extend(Action("AppendFailure", (env,)) for env in heads if env.dst == COORDINATOR)
        if used[5] < lim[5]:
            out.append(Action("CoordinatorFailover", ()))
        if used[6] < lim[6]:
            out.extend(
                Action("ExpireTransactionalId", (t,))
                for t in range(self.tids)
                if tc.expire_transactional_id(state.coordinator[t]) is not None
            )
        return out

    def step(self, state: TxnSystemState, action: Action) -> Step | None:
        """Apply one action; ``None`` if it is not enabled."""
        handler = self._HANDLERS.get(action.kind)
        if handler is None or not self._valid_args(state, action):
            return None
        fault = self.FAULT_OF_ACTION.get(action.kind)
        if fault is not None:
            k = TXN_FAULT_KINDS.index(fault)
            if state.faults_used[k] >= self._limits[k] or sum(state.faults_used) >= self.config.faults.total:
                return None
        return self._apply(state, action)

    def _apply(self, state: TxnSystemState, action: Action) -> Step | None:
        """Run ``action``'s handler, charge a fault to its budget, record invalid coordinator transitions."""
        result = self._HANDLERS[action.kind](self, state, *action.args)
        if result is None:
            return None
        new, events = result
        fault = self.FAULT_OF_ACTION.get(action.kind)
        if fault is not None:
            k = TXN_FAULT_KINDS.index(fault)
            new = new._replace(faults_used=_at(new.faults_used, k, new.faults_used[k] + 1))
            events = (f"fault:{fault}", *events)
        bad = [e for e in events if e.startswith("txn:") and not is_valid_transition(*e[4:].split("->"))]
        if bad:
            new = new._replace(ghost=new.ghost._replace(bad_transitions=(*new.ghost.bad_transitions, *bad)))
        return Step(new, events)

    def successors(self, state: TxnSystemState) -> list[tuple[Action, TxnSystemState, tuple[str, ...]]]:
        """Every enabled action with its next state and events, in :meth:`actions` order.

        The same handlers and bookkeeping as :meth:`step` (:meth:`_apply`), without the
        argument and budget checks :meth:`step` makes for actions that come from outside
        (``tests/test_successors.py`` checks the equality on every reachable state).
        """
        out = []
        for action in self.actions(state):
            step = self._apply(state, action)
            if step is None:
                raise AssertionError(f"{action} listed as enabled but its handler refused it")
            out.append((action, step.state, step.events))
        return out

    def _valid_args(self, state: TxnSystemState, action: Action) -> bool:
        names = self.ACTION_ARGS[action.kind]
        if len(action.args) != len(names):
            return False
        bounds = {
            "producer": len(state.clients),
            "instance": len(state.clients),
            "partition": len(state.partitions),
            "transactional_id": self.tids,
        }
        for name, value in zip(names, action.args, strict=True):
            if name in bounds and not (type(value) is int and 0 <= value < bounds[name]):
                return False
            if name == "message" and not isinstance(value, net.Envelope):
                return False
        return True

    # -- application and client ------------------------------------------------------------------

    def _set_client(self, s: TxnSystemState, i: int, c: tp.TxnClient | None) -> Result:
        return None if c is None else (s._replace(clients=_at(s.clients, i, c)), ())

    def _init_transactions(self, s: TxnSystemState, i: int) -> Result:
        if not self._may_init_transactions(s, i):
            return None
        return self._set_client(s, i, tp.init_transactions(s.clients[i]))

    def _begin(self, s: TxnSystemState, i: int) -> Result:
        """beginTransaction; records of an earlier transaction aborted before they were sent are skipped."""
        topo = self.config.topology
        c = tp.begin_transaction(s.clients[i], topo.transactions_per_producer)
        if c is None:
            return None
        first = c.txn * topo.records_per_transaction
        return self._set_client(s, i, c._replace(data=c.data._replace(next_record=first)))

    def _send(self, s: TxnSystemState, i: int) -> Result:
        c = s.clients[i]
        topo = self.config.topology
        if c.state != tp.C.IN_TRANSACTION or c.data.next_record >= (c.txn + 1) * topo.records_per_transaction:
            return None
        n = c.data.next_record
        return self._set_client(s, i, tp.send(c, n % topo.partitions, prod.record_id(i, n), self.tv))

    def _commit(self, s: TxnSystemState, i: int) -> Result:
        c = s.clients[i]
        if c.data.next_record != (c.txn + 1) * self.config.topology.records_per_transaction:
            return None
        return self._set_client(s, i, tp.commit_transaction(c))

    def _abort(self, s: TxnSystemState, i: int) -> Result:
        c = s.clients[i]
        if c.state == tp.C.IN_TRANSACTION and not self.config.topology.voluntary_abort:
            return None
        return self._set_client(s, i, tp.abort_transaction(c))

    def _send_txn_request(self, s: TxnSystemState, i: int) -> Result:
        nxt = tp.next_txn_request(s.clients[i], i, self.tv, self.kip_360)
        if nxt is None:
            return None
        c, request = nxt
        s = s._replace(clients=_at(s.clients, i, c))
        if request is None:
            outcome = "committed" if s.clients[i].state == tp.C.COMMITTING else "aborted"
            return self._record_outcome(s, i, s.clients[i].txn - 1, outcome), ("client_txn_local_end",)
        env = net.Envelope(f"p{i}", COORDINATOR, c.tc_connection, request)
        return s._replace(network=net.send(s.network, env)), (type(request).__name__,)

    def _record_outcome(self, s: TxnSystemState, i: int, txn: int, outcome: str) -> TxnSystemState:
        if not outcome:
            return s
        ghost = s.ghost._replace(outcomes=(*s.ghost.outcomes, ClientTxn(i, txn, outcome == "committed")))
        return s._replace(ghost=ghost)

    def _drain(self, c: tp.TxnClient, i: int, q: int) -> tuple[prod.Producer, ProduceRequest] | None:
        if c.state not in (tp.C.IN_TRANSACTION, tp.C.COMMITTING, tp.C.ABORTING, tp.C.ABORTABLE_ERROR):
            return None
        if self.tv < 2 and q not in c.added:
            return None
        return prod.drain(c.data, i, q, self.producer_config, 2**31)

    def _send_produce(self, s: TxnSystemState, i: int, q: int) -> Result:
        c = s.clients[i]
        drained = self._drain(c, i, q)
        if drained is None:
            return None
        data, request = drained
        request = request._replace(transactional=True)
        added = c.added if q in c.added else tuple(sorted((*c.added, q)))
        c = c._replace(data=data, added=added)
        env = net.Envelope(f"p{i}", BROKER, data.connection, request)
        events = ("produce", "resend") if any(b.attempts > 1 for b in data.batches if b.in_flight) else ("produce",)
        return s._replace(clients=_at(s.clients, i, c), network=net.send(s.network, env)), events

    # -- delivery ------------------------------------------------------------------------------

    def _deliver(self, s: TxnSystemState, env: net.Envelope) -> Result:
        if env not in net.channel_heads(s.network):
            return None
        return self._receive(s, env, True)

    def _append_failure(self, s: TxnSystemState, env: net.Envelope) -> Result:
        if env.dst != COORDINATOR or env not in net.channel_heads(s.network):
            return None
        return self._receive(s, env, False)

    def _receive(self, s: TxnSystemState, env: net.Envelope, append_ok: bool) -> Result:
        network = net.remove(s.network, env)
        if network is None:
            return None
        s = s._replace(network=network)
        body = env.body
        if isinstance(body, ProduceRequest):
            return self._on_produce(s, env, body)
        if isinstance(body, WriteTxnMarkersRequest):
            return self._on_marker(s, body)
        if isinstance(body, (InitProducerIdRequest, AddPartitionsToTxnRequest, EndTxnRequest)):
            return self._on_coordinator_request(s, env, body, append_ok)
        i = body.producer
        c = s.clients[i]
        if isinstance(body, ProduceResponse):
            if body.connection != c.data.connection:
                return s, ("stale_response",)
            c, _acked, events = tp.handle_produce_response(c, body, self.producer_config, self.tv, self.kip_360)
            return s._replace(clients=_at(s.clients, i, c)), events
        txn = c.txn
        c, outcome, events = tp.handle_txn_response(c, body, self.tv, self.kip_360)
        s = s._replace(clients=_at(s.clients, i, c))
        return self._record_outcome(s, i, txn, outcome), events

    def _on_produce(self, s: TxnSystemState, env: net.Envelope, req: ProduceRequest) -> Result:
        leader = s.partitions[req.partition]
        verification = "NONE"
        events: tuple[str, ...] = ()
        if part.txn_produce_needs_verification(leader, req, self.flags):
            tid = self._tid_of_pid(s, req.producer_id)
            md = s.coordinator[tid] if tid >= 0 else None
            if self.tv >= 2:
                out = tc.handle_add_partitions(md, req.producer_id, req.producer_epoch, (req.partition,))
                if tid >= 0:
                    s, events = self._apply_coordinator(s, tid, out)
                verification = out.error
            else:
                verification = tc.handle_verify_partition(md, req.producer_id, req.producer_epoch, req.partition)
            events = (*events, "verification")
        leader, response, pevents = part.handle_txn_produce(s.partitions[req.partition], req, self.flags, verification)
        s = s._replace(partitions=_at(s.partitions, req.partition, leader))
        s = s._replace(network=net.send(s.network, net.Envelope(BROKER, env.src, env.connection, response)))
        return s, (*events, *pevents)

    def _tid_of_pid(self, s: TxnSystemState, pid: int) -> int:
        for t, md in enumerate(s.coordinator):
            if md is not None and pid in (md.producer_id, md.prev_producer_id):
                return t
        return -1

    def _on_coordinator_request(self, s: TxnSystemState, env: net.Envelope, req: Any, append_ok: bool) -> Result:
        t = req.transactional_id
        md = s.coordinator[t]
        if isinstance(req, InitProducerIdRequest):
            out = tc.handle_init_producer_id(
                md, t, req.producer_id, req.producer_epoch, s.next_producer_id, self.cc, append_ok
            )
            resp: Any = InitProducerIdResponse(
                req.producer, req.connection, out.error, out.producer_id, out.producer_epoch
            )
        elif isinstance(req, AddPartitionsToTxnRequest):
            out = tc.handle_add_partitions(md, req.producer_id, req.producer_epoch, req.partitions, append_ok)
            resp = AddPartitionsToTxnResponse(req.producer, req.connection, out.error, req.partitions)
        else:
            out = tc.handle_end_txn(
                md, req.producer_id, req.producer_epoch, req.committed, s.next_producer_id, self.cc, append_ok
            )
            resp = EndTxnResponse(req.producer, req.connection, out.error, out.producer_id, out.producer_epoch)
        s, events = self._apply_coordinator(s, t, out)
        s = s._replace(network=net.send(s.network, net.Envelope(COORDINATOR, env.src, env.connection, resp)))
        return s, events

    def _apply_coordinator(self, s: TxnSystemState, t: int, out: tc.Outcome) -> tuple[TxnSystemState, tuple[str, ...]]:
        """Install a handler's outcome: cache, log, pid allocation, fences, markers."""
        old = s.coordinator[t]
        s = s._replace(coordinator=_at(s.coordinator, t, out.metadata))
        if out.used_fresh_pid:
            s = s._replace(next_producer_id=s.next_producer_id + 1)
        events = out.events
        if out.wrote:
            s = s._replace(txn_log=_at(s.txn_log, t, out.written))
        if "fence" in events and out.wrote and old is not None:
            s = self._record_fence(s, old)
        md = out.metadata
        if (
            out.wrote
            and md is not None
            and md.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)
        ):
            s, more = self._send_markers(s, t, md)
            events = (*events, *more)
        return s, events

    def _record_fence(self, s: TxnSystemState, old: tc.TransactionMetadata) -> TxnSystemState:
        fence = Fence(old.producer_id, old.producer_epoch, tuple(len(p.log) for p in s.partitions))
        return s._replace(ghost=s.ghost._replace(fences=(*s.ghost.fences, fence)))

    def _send_markers(
        self, s: TxnSystemState, t: int, md: tc.TransactionMetadata
    ) -> tuple[TxnSystemState, tuple[str, ...]]:
        committed = md.state == TransactionState.PREPARE_COMMIT
        network = s.network
        for q in md.partitions:
            marker = WriteTxnMarkersRequest(t, md.producer_id, md.producer_epoch, s.coordinator_epoch, committed, q)
            network = net.send(network, net.Envelope(COORDINATOR, BROKER, s.coordinator_epoch, marker))
        s = s._replace(network=network)
        if md.partitions and self.flags.complete_after_markers:
            return s, ("markers_sent",)
        return self._complete(s, t, md)

    def _complete(
        self, s: TxnSystemState, t: int, md: tc.TransactionMetadata
    ) -> tuple[TxnSystemState, tuple[str, ...]]:
        prepared = s.txn_log[t]
        out = tc.complete_transaction(md._replace(partitions=()))
        full = prepared.partitions if prepared is not None else ()
        completion = Completion(t, md.producer_id, md.producer_epoch, md.state == TransactionState.PREPARE_COMMIT, full)
        s = s._replace(ghost=s.ghost._replace(completions=(*s.ghost.completions, completion)))
        s, events = self._apply_coordinator(s, t, out)
        return s, events

    def _write_marker(
        self, s: TxnSystemState, m: WriteTxnMarkersRequest
    ) -> tuple[TxnSystemState, str, tuple[str, ...]]:
        """The partition leader appends the marker (the group coordinator's partition: :mod:`model.systems.eos`)."""
        leader, error, events = append_end_txn_marker(s.partitions[m.partition], m, self.tv)
        return s._replace(partitions=_at(s.partitions, m.partition, leader)), error, events

    def _on_marker(self, s: TxnSystemState, m: WriteTxnMarkersRequest) -> Result:
        s, error, events = self._write_marker(s, m)
        if m.coordinator_epoch != s.coordinator_epoch:
            return s, (*events, "stale_coordinator_marker")
        md, go_on = tc.handle_marker_response(
            s.coordinator[m.transactional_id], m.producer_id, m.producer_epoch, m.partition, error
        )
        s = s._replace(coordinator=_at(s.coordinator, m.transactional_id, md))
        if not go_on:
            return s, (*events, "markers_dropped") if error != "NONE" else events
        if md is not None and not md.partitions and self.flags.complete_after_markers:
            s, more = self._complete(s, m.transactional_id, md)
            events = (*events, *more)
        return s, events

    # -- faults ----------------------------------------------------------------------------------

    def _client_of(self, name: str) -> int:
        return int(name[1:])

    def _drop(self, s: TxnSystemState, env: net.Envelope) -> Result:
        if env not in net.channel_heads(s.network) or (env.src == COORDINATOR and env.dst == BROKER):
            return None
        network = net.reset_connection(s.network, env)
        if network is None:
            return None
        s = s._replace(network=network)
        client = env.src if env.src.startswith("p") else env.dst
        i = self._client_of(client)
        c = s.clients[i]
        if COORDINATOR in (env.src, env.dst):
            if env.connection == c.tc_connection:
                c = tp.txn_request_timeout(c) or c._replace(tc_connection=c.tc_connection + 1)
            return s._replace(clients=_at(s.clients, i, c)), ("connection_reset",)
        if env.connection == c.data.connection:
            outcome = prod.request_timeout(c.data, self.producer_config)
            data = outcome.producer if outcome else c.data._replace(connection=c.data.connection + 1)
            c = c._replace(data=data)
            if outcome is not None and outcome.failed:
                c = tp.classify_batch_failure(c, "REQUEST_TIMED_OUT", self.tv, self.kip_360)
        return s._replace(clients=_at(s.clients, i, c)), ("connection_reset",)

    def _request_timeout(self, s: TxnSystemState, i: int) -> Result:
        c = s.clients[i]
        events: tuple[str, ...] = ()
        if c.inflight:
            c = tp.txn_request_timeout(c) or c
            events = ("txn_request_timeout",)
        outcome = prod.request_timeout(c.data, self.producer_config)
        if outcome is not None:
            c = c._replace(data=outcome.producer)
            events = (*events, *outcome.events)
            if outcome.failed:
                c = tp.classify_batch_failure(c, "REQUEST_TIMED_OUT", self.tv, self.kip_360)
        if not events:
            return None
        return s._replace(clients=_at(s.clients, i, c)), events

    def _expire_batch(self, s: TxnSystemState, i: int, q: int) -> Result:
        c = s.clients[i]
        outcome = prod.expire_batch(c.data, q, self.producer_config)
        if outcome is None:
            return None
        c = tp.classify_batch_failure(c._replace(data=outcome.producer), "TIMEOUT", self.tv, self.kip_360)
        return s._replace(clients=_at(s.clients, i, c)), outcome.events

    def _txn_timeout(self, s: TxnSystemState, t: int) -> Result:
        out = tc.timeout_abort(s.coordinator[t], self.cc)
        if out is None:
            return None
        out = out._replace(events=("timeout_abort", *out.events))
        old = s.coordinator[t]
        if out.wrote and "fence" not in out.events and old is not None:
            s = self._record_fence(s, old)
        return self._apply_coordinator(s, t, out)

    def _expire_tid(self, s: TxnSystemState, t: int) -> Result:
        out = tc.expire_transactional_id(s.coordinator[t])
        if out is None:
            return None
        s = s._replace(coordinator=_at(s.coordinator, t, None), txn_log=_at(s.txn_log, t, None))
        return s, out.events

    def _failover(self, s: TxnSystemState) -> Result:
        """A new coordinator loads the log at coordinator epoch + 1 and re-sends Prepare* markers (§1.9)."""
        epoch = s.coordinator_epoch + 1
        cache = tuple(None if v is None else tc.from_log_value(t, v) for t, v in enumerate(s.txn_log))
        network = net.without(s.network, lambda e: e.dst == COORDINATOR or (e.src == COORDINATOR and e.dst != BROKER))
        clients = tuple(
            c._replace(inflight=False, tc_connection=c.tc_connection + 1) if c.inflight else c for c in s.clients
        )
        s = s._replace(coordinator_epoch=epoch, coordinator=cache, network=network, clients=clients)
        events: tuple[str, ...] = ("coordinator_failover",)
        for t, v in enumerate(s.txn_log):
            md = s.coordinator[t]
            if needs_markers(v) and md is not None:
                s, more = self._send_markers(s, t, md)
                events = (*events, *more)
        return s, events

    _HANDLERS: ClassVar[dict[str, Callable[..., Result]]] = {
        "InitTransactions": _init_transactions,
        "BeginTransaction": _begin,
        "Send": _send,
        "CommitTransaction": _commit,
        "AbortTransaction": _abort,
        "SendTxnRequest": _send_txn_request,
        "SendProduce": _send_produce,
        "Deliver": _deliver,
        "DropMessage": _drop,
        "RequestTimeout": _request_timeout,
        "ExpireBatch": _expire_batch,
        "TxnTimeout": _txn_timeout,
        "AppendFailure": _append_failure,
        "CoordinatorFailover": _failover,
        "ExpireTransactionalId": _expire_tid,
    }

    # -- codec and display -------------------------------------------------------------------------

    def action_to_json(self, action: Action) -> dict[str, Any]:
        """``{"kind": ..., <arg>: <value>}``."""
        data: dict[str, Any] = {"kind": action.kind}
        for name, value in zip(self.ACTION_ARGS[action.kind], action.args, strict=True):
            data[name] = codec.to_json(value)
        return data

    def action_from_json(self, data: Any) -> Action:
        """Decode an action; raises :class:`ModelError` on malformed input."""
        if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
            raise ModelError(f"an action must be an object with a 'kind', got {data!r:.80}")
        names = self.ACTION_ARGS.get(data["kind"])
        if names is None:
            raise ModelError(f"unknown action kind {data['kind']!r}")
        extra = sorted(set(data) - {"kind", *names})
        missing = [n for n in names if n not in data]
        if extra or missing:
            raise ModelError(f"action {data['kind']}: missing {missing}, unexpected {extra}")
        try:
            return Action(data["kind"], tuple(codec.from_json(data[n]) for n in names))
        except codec.CodecError as exc:
            raise ModelError(f"action {data['kind']}: {exc}") from None

    def format_action(self, action: Action) -> str:
        """``Deliver(message=p0->tc#0:EndTxn(...))``."""
        names = self.ACTION_ARGS.get(action.kind, ())
        parts = [f"{n}={format_value(v)}" for n, v in zip(names, action.args, strict=False)]
        return f"{action.kind}({', '.join(parts)})"

    def state_to_json(self, state: TxnSystemState) -> dict[str, Any]:
        """A JSON view of the state."""
        out = codec.to_json(state)
        assert isinstance(out, dict)
        return out

    def fault_kinds(self) -> tuple[str, ...]:
        """The fault kinds with a budget above zero (:class:`model.interface.FaultHooks`)."""
        if self.config.faults.total <= 0:
            return ()
        return tuple(k for k, limit in zip(TXN_FAULT_KINDS, self._limits) if limit > 0)

    def fault_kind(self, action: Action) -> str | None:
        """The fault kind ``action`` is charged to, ``None`` for a protocol step."""
        return self.FAULT_OF_ACTION.get(action.kind)

    def describe(self) -> dict[str, Any]:
        """Scenario, variant and bounds, recorded in traces."""
        cfg = self.config
        return {
            "model": self.name,
            **self._scenario_info,
            "variant": self.variant.name,
            "flags": self.flags.to_json(),
            "topology": {f.name: getattr(cfg.topology, f.name) for f in fields(cfg.topology)},
            "faults": cfg.faults.to_json(),
            "retries": cfg.retries,
            "max_producer_epoch": cfg.max_producer_epoch,
        }


def format_value(value: Any) -> str:
    """Short Kafka-flavoured rendering of an action argument."""
    if isinstance(value, net.Envelope):
        return f"{value.src}->{value.dst}#{value.connection}:{format_value(value.body)}"
    if isinstance(value, ProduceRequest):
        recs = ",".join(prod.record_label(r) for r in value.records)
        stamp = f"pid={value.producer_id}, epoch={value.producer_epoch}, seq={value.base_sequence}"
        return f"Produce(p{value.partition}, {stamp}, [{recs}])"
    if isinstance(value, ProduceResponse):
        stamp = f"epoch={value.producer_epoch}, seq={value.base_sequence}"
        return f"ProduceResponse(p{value.partition}, {stamp}, {value.error})"
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        fields_ = ", ".join(
            f"{k}={v}" for k, v in zip(value._fields, value, strict=True) if k not in ("producer", "connection")
        )
        return f"{type(value).__name__.removesuffix('Request')}({fields_})"
    return repr(value)
