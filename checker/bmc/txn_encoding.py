"""A z3 encoding of the transactions core: one symbolic step of :class:`model.systems.transactions.TransactionalSystem`.

The slice encoded exactly (``covers`` says why anything else is not):

* **one** transactional producer (so one ``transactional.id`` and, as the
  transactional id never expires and no epoch is exhausted within the bound,
  one producer id), one or two data partitions, any number of transactions and
  records per transaction, any ``retries``, ``voluntary_abort``;
* the coordinator's ``TransactionMetadata`` (state, epoch, last epoch,
  partitions, ``txnStartTimestamp != -1``), the transaction-log value, the
  handlers InitProducerId (KIP-360 expected epoch, fence-and-abort of an
  Ongoing transaction through PrepareEpochFence), AddPartitionsToTxn, the
  verification of KIP-890 part 1, the TV2 implicit add, EndTxn on the TV1 and
  the TV2 paths (epoch bump, retries, the empty abort), the timeout abort with
  and without the epoch bump (KAFKA-6119), markers and completion (also the
  ``complete_without_markers`` variant);
* every legality check of a coordinator transition is **generated** from
  :data:`model.coordinator.transaction.transaction_state.VALID_PREVIOUS_STATES` (:meth:`TxnEncoding.valid`);
* the partition leaders: the log (data batches and COMMIT/ABORT control
  batches), the producer-state entry (epoch, the shift register of cached
  batches, coordinator epoch, ``currentTxnFirstOffset``), the validation
  order of :data:`model.log.producer_state.VALIDATION_STEPS`, the marker epoch
  check per transaction version, the aborted-transaction index (each entry's
  ``last_stable_offset`` is the marker's offset + 1: with one producer id no
  other transaction is open on the partition when one completes,
  :func:`model.log.partition.lso_after_completion`; :meth:`TxnEncoding.abstract`
  refuses any other entry);
* the client: ``TransactionManager`` states, the coordinator connection and
  its one in-flight request, added / pending partitions, ``epochBumpRequired``,
  and the idempotent data path (batches with epoch, sequence, attempts,
  in-flight flag; per-partition sequence entries with unresolved / rewrite;
  ``Producer.expired``, the batches expired in flight whose late NONE /
  DUPLICATE_SEQUENCE_NUMBER answer still raises the last acknowledged
  sequence, ``producer._late_answer``, by record with a dense place key);
* the environment faults ``RequestTimeout``, ``ExpireBatch`` and ``TxnTimeout``
  with their budgets; FIFO channels.

The network is represented by *static slots*, which is exact for this slice:

* a coordinator request (and its response) per client coordinator connection
  ``c``: the client has at most one coordinator request in flight and changes
  connection when it gives up, so every channel ``p0->tc#c`` / ``tc->p0#c``
  holds at most one message (the encoding refuses to send into an occupied
  slot, so a model that did would show up as an enabledness mismatch in the
  step cross-check);
* a produce request (and response) per (record ``n``, attempt ``a``): every
  drain sends batch ``n`` with a new attempt number; several requests can share
  a channel (an expired batch stays on the wire), so each slot keeps an order
  key and only the oldest live slot of a connection is deliverable;
* markers in one append-only array (one coordinator epoch, one channel
  ``tc->b0#0``): only the oldest live marker is deliverable.

Every message carries an order key (the position the executable model's
network tuple gives it), so :meth:`TxnEncoding.concretize` rebuilds the exact
``TxnSystemState``.  ``tests/test_bmc_txn.py`` checks on states reached by BFS
that, for every template, z3 enables it exactly when ``TransactionalSystem.step``
accepts the action and that the concretised z3 successor equals the Python one.

Capacities (markers, fences, completions, aborted-index entries, log length)
hang on the number of Prepare* transitions.  By default they are derived from
the depth (a marker batch, a fence and a completion each need a Prepare*
transition, and every Prepare* needs a distinct earlier step that opened the
transaction or sent the request, so at most ``depth // 2`` happen).  BMC uses
a small ``prepares`` capacity instead and *checks* it: at every depth it asks
whether some step could exceed a capacity (``self.capacity`` false); only if
that is unsatisfiable is the bounded result exact, otherwise the capacity is
doubled and the run restarts (``checker/bmc_txn.py``).  A step that would
exceed a capacity is never silently wrapped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import z3

from keos.checker.bmc.encoding import _ite, _merge, _num, fold_validation
from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.clients import transactional_producer as tp
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.coordinator.transaction.transaction_log import TransactionLogValue
from keos.model.coordinator.transaction.transaction_state import (
    STATE_IDS,
    STATES,
    VALID_PREVIOUS_STATES,
    TransactionState,
)
from keos.model.interface import Action
from keos.model.log import partition as part
from keos.model.log.partition import VERIFICATION_TO_PRODUCE_ERROR
from keos.model.log.producer_state import BatchMetadata, ProducerStateEntry
from keos.model.protocol.errors import Errors
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
from keos.model.systems.transactions import BROKER, COORDINATOR, FAULT_OF_ACTION, TransactionalSystem
from keos.model.systems.transactions_records import (
    TXN_FAULT_KINDS,
    ClientTxn,
    Completion,
    Fence,
    PendingCompleteTxn,
    TxnGhost,
    TxnSystemState,
)

__all__ = ["CLIENT_STATES", "ERRORS", "TXN_INVARIANTS", "TxnEncoding", "TxnTemplate", "covers"]

Expr = Any
State = dict[str, Expr]
TXS = TransactionState
C = tp.ClientState

#: ``TransactionManager.State`` values as small integers.
CLIENT_STATES: tuple[str, ...] = (
    C.UNINITIALIZED,
    C.INITIALIZING,
    C.READY,
    C.IN_TRANSACTION,
    C.COMMITTING,
    C.ABORTING,
    C.ABORTABLE_ERROR,
    C.FATAL_ERROR,
)
#: Error codes carried by responses, as small integers.
ERRORS: tuple[str, ...] = (
    Errors.NONE,
    Errors.CONCURRENT_TRANSACTIONS,
    Errors.PRODUCER_FENCED,
    Errors.INVALID_PRODUCER_ID_MAPPING,
    Errors.INVALID_TXN_STATE,
    Errors.UNKNOWN_SERVER_ERROR,
    Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.INVALID_PRODUCER_EPOCH,
    Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
    Errors.TRANSACTION_ABORTABLE,
    Errors.NOT_ENOUGH_REPLICAS,
    Errors.TRANSACTION_COORDINATOR_FENCED,
    Errors.DUPLICATE_SEQUENCE_NUMBER,
)
#: Coordinator request kinds.
REQ_KINDS = ("InitProducerId", "AddPartitionsToTxn", "EndTxn")
#: Log entry control codes.
CONTROLS = ("", part.CONTROL_COMMIT, part.CONTROL_ABORT)
#: Client steps: read and write the client, consume a response addressed to it or send a request.
CLIENT_STEPS = (
    "InitTransactions",
    "BeginTransaction",
    "Send",
    "CommitTransaction",
    "AbortTransaction",
    "SendTxnRequest",
    "SendProduce",
    "DeliverTxnResponse",
    "DeliverProduceResponse",
)
#: Broker / coordinator steps: never read or write the client.
SERVER_STEPS = ("DeliverTxnRequest", "DeliverProduce", "DeliverMarker")
#: Steps the reduction never reorders although they touch no client: the timeout abort is budget-free only
#: when no other protocol step is enabled, so swapping it with a client step could change what it costs.
UNSWAPPED_SERVER_STEPS = ("TxnTimeout",)
#: Protocol switches whose weakened (False) setting the encoding does not follow.
UNENCODED_FLAGS = (
    "commit_retry_after_abort_fenced",
    "tv2_empty_abort_in_table",
    "single_fence_bump",
    "fence_rotates_exhausted_producer_id",
    "empty_abort_rotates_producer_id",
    "txn_failed_batch_adjusts_sequences",
    "txn_resolve_waits_for_inflight",
)
#: Fault steps (charged to a budget); every other template is a protocol step.
FAULT_STEPS = ("RequestTimeout", "ExpireBatch")
#: Fault kinds the slice encodes (the others must have no budget).
ENCODED_FAULTS = ("request_timeout", "batch_expiry", "txn_timeout")

E = {name: i for i, name in enumerate(ERRORS)}
CS = {name: i for i, name in enumerate(CLIENT_STATES)}
TS = STATE_IDS
PREPARE = (TXS.PREPARE_COMMIT, TXS.PREPARE_ABORT)


def _pending_of(state: str) -> str:
    """The pending state an entry in ``state`` has at the atomic granularity the encoding covers: a logged
    PrepareCommit/PrepareAbort keeps CompleteCommit/CompleteAbort pending while its markers are written
    (``prepareComplete`` in ``sendTxnMarkersCallback``, and on load), every other state none.  So the pending
    state is a function of the state there and needs no variable of its own."""
    if state == TXS.PREPARE_COMMIT:
        return TXS.COMPLETE_COMMIT
    if state == TXS.PREPARE_ABORT:
        return TXS.COMPLETE_ABORT
    return ""
COMPLETE = (TXS.COMPLETE_COMMIT, TXS.COMPLETE_ABORT)
ACTIVE = (TXS.ONGOING, TXS.PREPARE_COMMIT, TXS.PREPARE_ABORT)


def covers(model: Any) -> tuple[bool, str]:
    """Whether the encoding covers this model instance exactly, and why not."""
    if type(model) is not TransactionalSystem:
        return False, f"{type(model).__name__} is not the plain TransactionalSystem"
    topo = model.config.topology
    if topo.producers != 1:
        return False, "only one transactional producer is encoded"
    if topo.partitions > 2:
        return False, "at most two partitions are encoded"
    if topo.max_in_flight != 1:
        return False, "one request in flight per producer is encoded (max_in_flight = 1)"
    if model.config.topology.producer_id_expiration:
        return False, "producer state expiry (ExpireProducerState) is not encoded"
    if model.config.topology.transactional_id_expiration:
        return False, "transactional-id expiry as a timeout action is not encoded"
    if model.config.topology.pending_transitions:
        return False, "pending transitions (transaction-log appends completing in steps of their own) are not encoded"
    if model.config.topology.verification_round_trip:
        return False, "the KIP-890 verification round trip (leader -> coordinator -> callback) is not encoded"
    if model.config.topology.send_rejections:
        return False, "a send() refused synchronously (SendRejected, send_rejections) is not encoded"
    lim = dict(zip(TXN_FAULT_KINDS, model.config.faults.limits()))
    extra = sorted(k for k, v in lim.items() if v > 0 and k not in ENCODED_FAULTS)
    if extra and model.config.faults.total > 0:
        return False, f"fault kinds {', '.join(extra)} are not encoded"
    if model.config.eos is not None:
        return False, "the consume-transform-produce application is not encoded"
    if model.config.max_producer_epoch < 32767:
        return False, "producer-epoch exhaustion (a small max_producer_epoch) is not encoded"
    unencoded = [f for f in UNENCODED_FLAGS if not getattr(model.flags, f)]
    if unencoded:
        return False, f"protocol switches {', '.join(unencoded)} are not encoded"
    if model.config.security is not None:
        return False, "authorization (ACLs, adversary actions) is not encoded"
    return True, ""


class TxnTemplate:
    """One entry of the per-step action alphabet (static: message slots are part of the template)."""

    __slots__ = ("args", "kind")

    def __init__(self, kind: str, args: tuple[int, ...] = ()):
        self.kind = kind
        self.args = args

    def __repr__(self) -> str:
        return f"{self.kind}{self.args}"


class TxnEncoding:
    """The symbolic transition system of one TransactionalSystem instance (the slice above), for ``depth`` steps.

    ``slack`` enlarges every capacity so that a concrete state (from
    :meth:`abstract`) fits as the initial state; ``value_slack`` enlarges the
    bit-vector domain by the largest value of such a state.
    """

    def __init__(
        self, model: TransactionalSystem, depth: int, slack: int = 0, value_slack: int = 0, prepares: int | None = None
    ):
        ok, why = covers(model)
        if not ok:
            raise ValueError(f"the bmc transactions encoding does not cover this model: {why}")
        self.model = model
        cfg = model.config
        topo = cfg.topology
        self.flags = model.flags
        self.tv = model.tv
        self.kip_360 = model.kip_360
        self.cc = model.cc
        self.P = topo.partitions
        self.TX = topo.transactions_per_producer
        self.RPT = topo.records_per_transaction
        self.R = self.TX * self.RPT
        self.voluntary = topo.voluntary_abort
        self.retries = cfg.retries
        self.A = cfg.retries + 1  # attempts per batch
        self.limits = cfg.faults.limits()
        self.total = cfg.faults.total
        self.depth = depth
        lim = dict(zip(TXN_FAULT_KINDS, self.limits))
        timeouts = min(lim["request_timeout"], self.total)
        self.NC = 1 + timeouts + slack  # coordinator connections
        if prepares is None:
            prepares = depth // 2 + slack
        #: Capacity for Prepare* transitions (markers per partition, fences, completions, extra log entries).
        self.prepares = prepares
        self.M = self.P * prepares + slack  # marker array
        self.FC = prepares  # fences
        self.CC = prepares  # completions
        self.recs = [[n for n in range(self.R) if n % self.P == q] for q in range(self.P)]
        self.L = [len(self.recs[q]) * self.A + prepares + slack for q in range(self.P)]
        self.NS = [len(self.recs[q]) * self.A + slack for q in range(self.P)]  # produce slots per partition
        self.W = min(self.flags.duplicate_window, max(1, max(len(r) for r in self.recs) * self.A + slack))
        self.K = 1 + self.P  # messages a step can create
        self.init_msgs = slack
        self.templates = self._alphabet()
        self.bound = (
            max(max(self.L), self.M, self.NC, self.R, self.A, len(ERRORS), len(STATES), 8, self.FC, self.CC)
            + depth
            + value_slack
            + 4
            + self.init_msgs
            + depth * self.K
        )
        if cfg.max_producer_epoch - 1 <= self.bound:
            raise ValueError("epoch exhaustion is within the bound: not encoded")
        self.bits = (self.bound + 1).bit_length() + 1
        self.schema = self._schema()
        self._ev: dict[str, Expr] = {}
        self.step_events: dict[str, Expr] = {}
        self._heads_cache: tuple[State | None, list[Expr]] = (None, [])
        #: Build the per-step event labels (``False`` skips them: invariant-only runs).
        self.events = True
        #: ``transition`` includes the capacity constraints (``False``: the caller handles ``self.capacity``).
        self.include_capacity = True
        self._caps: list[Expr] = []
        self.capacity: Expr = z3.BoolVal(True)

    # -- domain ------------------------------------------------------------------------------------

    def var(self, name: str) -> Expr:
        return z3.BitVec(name, self.bits)

    def v(self, x: int) -> Expr:
        return z3.BitVecVal(x, self.bits)

    def _alphabet(self) -> list[TxnTemplate]:
        t = [
            TxnTemplate("InitTransactions", (0,)),
            TxnTemplate("BeginTransaction", (0,)),
            TxnTemplate("Send", (0,)),
            TxnTemplate("CommitTransaction", (0,)),
            TxnTemplate("AbortTransaction", (0,)),
            TxnTemplate("SendTxnRequest", (0,)),
        ]
        t += [TxnTemplate("SendProduce", (0, q)) for q in range(self.P)]
        t += [TxnTemplate("DeliverTxnResponse", (c,)) for c in range(self.NC)]
        t += [TxnTemplate("DeliverProduceResponse", (q, a)) for q in range(self.P) for a in range(self.NS[q])]
        # broker / coordinator steps after every client step (the partial-order reduction relies on this order)
        t += [TxnTemplate("DeliverTxnRequest", (c,)) for c in range(self.NC)]
        t += [TxnTemplate("DeliverProduce", (q, a)) for q in range(self.P) for a in range(self.NS[q])]
        t += [TxnTemplate("DeliverMarker", (q,)) for q in range(self.P)]
        lim = dict(zip(TXN_FAULT_KINDS, self.limits))
        if self.total > 0:
            if lim["request_timeout"]:
                t.append(TxnTemplate("RequestTimeout", (0,)))
            if lim["batch_expiry"]:
                t += [TxnTemplate("ExpireBatch", (0, q)) for q in range(self.P)]
        # transaction.timeout.ms is a protocol step: budget-free in a state with no other protocol step
        t.append(TxnTemplate("TxnTimeout", (0,)))
        return t

    def _schema(self) -> dict[str, bool]:
        s: dict[str, bool] = {}

        def ints(*names: str) -> None:
            s.update({n: False for n in names})

        def bools(*names: str) -> None:
            s.update({n: True for n in names})

        ints("c.st", "c.conn", "c.txn", "d.pid", "d.ep", "d.conn", "d.next")
        bools("c.infl", "c.ebr", "c.fen")
        for q in range(self.P):
            bools(f"c.add{q}", f"c.pend{q}", f"d.q{q}.unres", f"d.q{q}.rw")
            ints(f"d.q{q}.pe", f"d.q{q}.ns", f"d.q{q}.la", f"d.q{q}.us")
        for n in range(self.R):
            bools(f"b{n}.on", f"b{n}.fl")
            ints(f"b{n}.ep", f"b{n}.seq", f"b{n}.att")
            # Producer.expired: batch n expired in flight (its request's attempt, last sequence and 1-based place
            # in the tuple, larger = later)
            bools(f"x{n}.on")
            ints(f"x{n}.att", f"x{n}.seq", f"x{n}.ord")
        # coordinator metadata and the transaction log
        bools("md.on", "md.started", "lg.on")
        ints("md.pid", "md.ep", "md.last", "md.st", "lg.pid", "lg.ep", "lg.last", "lg.st", "npid")
        for q in range(self.P):
            bools(f"md.p{q}", f"lg.p{q}")
        # partitions
        for q in range(self.P):
            ints(f"q{q}.len", f"q{q}.e.ep", f"q{q}.e.cnt", f"q{q}.e.cep", f"q{q}.e.first", f"q{q}.nab")
            bools(f"q{q}.e.on")
            for w in range(self.W):
                ints(f"q{q}.e.c{w}.seq", f"q{q}.e.c{w}.off")
            for k in range(self.L[q]):
                ints(f"q{q}.l{k}.ep", f"q{q}.l{k}.seq", f"q{q}.l{k}.rec", f"q{q}.l{k}.ctl")
            for k in range(self.L[q]):
                ints(f"q{q}.ab{k}.first", f"q{q}.ab{k}.last")
        # network slots
        for c in range(self.NC):
            bools(f"rq{c}.live", f"rq{c}.com", f"rs{c}.live")
            ints(
                f"rq{c}.kind",
                f"rq{c}.pid",
                f"rq{c}.ep",
                f"rq{c}.ord",
                f"rs{c}.kind",
                f"rs{c}.err",
                f"rs{c}.pid",
                f"rs{c}.ep",
                f"rs{c}.ord",
            )
            for q in range(self.P):
                bools(f"rq{c}.p{q}", f"rs{c}.p{q}")
        for q in range(self.P):
            for a in range(self.NS[q]):
                bools(f"m{q}.{a}.live", f"m{q}.{a}.resp")
                ints(*[f"m{q}.{a}.{f}" for f in ("conn", "rec", "att", "ep", "seq", "err", "off", "ord")])
        ints("mk.n")
        for j in range(self.M):
            bools(f"mk{j}.live", f"mk{j}.com")
            ints(f"mk{j}.q", f"mk{j}.ep", f"mk{j}.ord")
        # ghost
        for x in range(self.TX):
            bools(f"out{x}.on", f"out{x}.com")
        ints("fn.n", "cp.n")
        for f in range(self.FC):
            ints(f"fn{f}.ep", *[f"fn{f}.end{q}" for q in range(self.P)])
        for k in range(self.CC):
            ints(f"cp{k}.ep")
            bools(f"cp{k}.com", *[f"cp{k}.p{q}" for q in range(self.P)])
        for k in range(len(TXN_FAULT_KINDS)):
            ints(f"fu{k}")
        return s

    def state(self, t: int | str) -> State:
        return {n: (z3.Bool(f"{n}@{t}") if b else self.var(f"{n}@{t}")) for n, b in self.schema.items()}

    # -- abstraction / concretisation -------------------------------------------------------------------

    def abstract(self, s: TxnSystemState) -> dict[str, Any]:
        """Values of the state variables for a concrete state (``ValueError`` outside the slice)."""
        v: dict[str, Any] = {n: (False if b else -1) for n, b in self.schema.items()}
        c = s.clients[0]
        d = c.data
        v.update(
            {
                "c.st": CS[c.state],
                "c.conn": c.tc_connection,
                "c.txn": c.txn,
                "c.infl": c.inflight,
                "c.ebr": c.epoch_bump_required,
                "c.fen": c.fenced,
                "d.pid": d.producer_id,
                "d.ep": d.producer_epoch,
                "d.conn": d.connection,
                "d.next": d.next_record,
            }
        )
        if d.epoch_bump_required:
            raise ValueError("data.epoch_bump_required outside the slice")
        for q in range(self.P):
            e = d.partitions[q]
            v[f"c.add{q}"], v[f"c.pend{q}"] = q in c.added, q in c.pending_add
            v[f"d.q{q}.pe"], v[f"d.q{q}.ns"], v[f"d.q{q}.la"] = e.producer_epoch, e.next_sequence, e.last_acked_sequence
            v[f"d.q{q}.unres"], v[f"d.q{q}.rw"] = e.unresolved, e.rewrite
            v[f"d.q{q}.us"] = e.unresolved_sequence
        for n in range(self.R):
            v[f"b{n}.att"] = 0
        recs = [b.records[0] for b in d.batches]
        if recs != sorted(recs) or any(len(b.records) != 1 or b.partition != b.records[0] % self.P for b in d.batches):
            raise ValueError("batches outside the slice")
        for b in d.batches:
            n = b.records[0]
            v[f"b{n}.on"], v[f"b{n}.fl"] = True, b.in_flight
            v[f"b{n}.ep"], v[f"b{n}.seq"], v[f"b{n}.att"] = b.producer_epoch, b.base_sequence, b.attempts
        for pos, (cid, q, last) in enumerate(d.expired):
            rid, att = divmod(cid, prod.MAX_ATTEMPTS)
            if rid >= self.R or q != rid % self.P:
                raise ValueError("expired batch outside the slice")
            v[f"x{rid}.on"], v[f"x{rid}.att"], v[f"x{rid}.seq"], v[f"x{rid}.ord"] = True, att, last, pos + 1
        md = s.coordinator[0]
        v["md.on"] = md is not None
        v["md.started"] = False
        if md is not None:
            if (
                md.pending_state != _pending_of(md.state)
                or md.prev_producer_id != (-1 if md.producer_epoch < 0 else md.producer_id)
                or md.next_producer_id != -1
                or md.client_tv
                or md.has_failed_epoch_fence
            ):
                raise ValueError("coordinator metadata outside the slice")
            v.update(
                {
                    "md.pid": md.producer_id,
                    "md.ep": md.producer_epoch,
                    "md.last": md.last_producer_epoch,
                    "md.st": TS[md.state],
                    "md.started": md.txn_started,
                }
            )
            for q in range(self.P):
                v[f"md.p{q}"] = q in md.partitions
        lg = s.txn_log[0]
        v["lg.on"] = lg is not None
        if lg is not None:
            if lg.prev_producer_id != lg.producer_id or lg.next_producer_id != -1 or lg.client_tv:
                raise ValueError("transaction log value outside the slice")
            v.update(
                {"lg.pid": lg.producer_id, "lg.ep": lg.producer_epoch, "lg.last": lg.last_producer_epoch,
                 "lg.st": TS[lg.state]}
            )
            for q in range(self.P):
                v[f"lg.p{q}"] = q in lg.partitions
        v["npid"] = s.next_producer_id
        if s.coordinator_epoch != 0 or s.group is not None or s.apps:
            raise ValueError("coordinator epoch / group outside the slice")
        if s.pending_markers != self._pending_markers(s.coordinator[0]):
            raise ValueError("pending-markers registry outside the slice (derived from the coordinator entry)")
        for q, leader in enumerate(s.partitions):
            if leader.high_watermark != len(leader.log) or leader.leader_epoch != 0:
                raise ValueError("partition outside the slice")
            v[f"q{q}.len"] = len(leader.log)
            for k, le in enumerate(leader.log):
                if le.producer_id != 0 or not le.transactional:
                    raise ValueError("log entry outside the slice")
                v[f"q{q}.l{k}.ep"], v[f"q{q}.l{k}.seq"] = le.producer_epoch, le.base_sequence
                v[f"q{q}.l{k}.rec"] = le.records[0] if le.records else -1
                v[f"q{q}.l{k}.ctl"] = CONTROLS.index(le.control)
            if any(e.producer_id != 0 for e in leader.producers):
                raise ValueError("producer entries outside the slice")
            ent = leader.entry(0)
            v[f"q{q}.e.on"] = ent is not None
            v[f"q{q}.e.cnt"] = 0
            if ent is not None:
                v[f"q{q}.e.ep"], v[f"q{q}.e.cnt"] = ent.producer_epoch, len(ent.batches)
                v[f"q{q}.e.cep"], v[f"q{q}.e.first"] = ent.coordinator_epoch, ent.current_txn_first_offset
                for w, meta in enumerate(reversed(ent.batches)):
                    if meta.first_seq != meta.last_seq:
                        raise ValueError("multi-record batch")
                    v[f"q{q}.e.c{w}.seq"], v[f"q{q}.e.c{w}.off"] = meta.first_seq, meta.offset
            v[f"q{q}.nab"] = len(leader.aborted)
            for k, ab in enumerate(leader.aborted):
                # one producer id per partition: no other transaction is open when this one completes, so
                # the entry's last stable offset is the marker's offset + 1 (part.lso_after_completion)
                if ab.producer_id != 0 or ab.last_stable_offset != ab.last_offset + 1:
                    raise ValueError("aborted entry outside the slice")
                v[f"q{q}.ab{k}.first"], v[f"q{q}.ab{k}.last"] = ab.first_offset, ab.last_offset
        markers = 0
        used: dict[int, int] = {}
        for o, env in enumerate(s.network):
            body = env.body
            if isinstance(body, (InitProducerIdRequest, AddPartitionsToTxnRequest, EndTxnRequest)):
                p = f"rq{env.connection}"
                if v.get(f"{p}.live"):
                    raise ValueError("two coordinator requests on one connection")
                v[f"{p}.live"], v[f"{p}.ord"] = True, o
                v[f"{p}.kind"] = REQ_KINDS.index(type(body).__name__.removesuffix("Request"))
                v[f"{p}.pid"], v[f"{p}.ep"] = body.producer_id, body.producer_epoch
                v[f"{p}.com"] = bool(getattr(body, "committed", False))
                for q in range(self.P):
                    v[f"{p}.p{q}"] = q in getattr(body, "partitions", ())
            elif isinstance(body, (InitProducerIdResponse, AddPartitionsToTxnResponse, EndTxnResponse)):
                p = f"rs{env.connection}"
                if v.get(f"{p}.live"):
                    raise ValueError("two coordinator responses on one connection")
                v[f"{p}.live"], v[f"{p}.ord"] = True, o
                v[f"{p}.kind"] = REQ_KINDS.index(type(body).__name__.removesuffix("Response"))
                v[f"{p}.err"] = ERRORS.index(body.error)
                v[f"{p}.pid"], v[f"{p}.ep"] = getattr(body, "producer_id", -1), getattr(body, "producer_epoch", -1)
                for q in range(self.P):
                    v[f"{p}.p{q}"] = q in getattr(body, "partitions", ())
            elif isinstance(body, (ProduceRequest, ProduceResponse)):
                q = body.partition
                if isinstance(body, ProduceRequest) and (
                    body.producer_id != 0 or len(body.records) != 1 or not body.transactional
                ):
                    raise ValueError("produce request outside the slice")
                a = used.get(q, 0)
                used[q] = a + 1
                p = f"m{q}.{a}"
                # the request's name (batch and attempt, producer.correlation_id); a response carries its request's
                v[f"{p}.rec"], v[f"{p}.att"] = divmod(body.correlation_id, prod.MAX_ATTEMPTS)
                v[f"{p}.live"], v[f"{p}.ord"], v[f"{p}.conn"] = True, o, env.connection
                v[f"{p}.resp"] = isinstance(body, ProduceResponse)
                v[f"{p}.ep"], v[f"{p}.seq"] = body.producer_epoch, body.base_sequence
                if isinstance(body, ProduceResponse):
                    v[f"{p}.err"], v[f"{p}.off"] = ERRORS.index(body.error), body.base_offset
            elif isinstance(body, WriteTxnMarkersRequest):
                if body.producer_id != 0 or body.coordinator_epoch != 0:
                    raise ValueError("marker outside the slice")
                p = f"mk{markers}"
                v[f"{p}.live"], v[f"{p}.ord"], v[f"{p}.q"] = True, o, body.partition
                v[f"{p}.ep"], v[f"{p}.com"] = body.producer_epoch, body.committed
                markers += 1
            else:
                raise ValueError(f"message {type(body).__name__} outside the slice")
        v["mk.n"] = markers
        for oc in s.ghost.outcomes:
            v[f"out{oc.txn}.on"], v[f"out{oc.txn}.com"] = True, oc.committed
        if [oc.txn for oc in s.ghost.outcomes] != sorted({oc.txn for oc in s.ghost.outcomes}):
            raise ValueError("outcomes out of order")
        v["fn.n"] = len(s.ghost.fences)
        for f, fence in enumerate(s.ghost.fences):
            if fence.producer_id != 0:
                raise ValueError("fence outside the slice")
            v[f"fn{f}.ep"] = fence.producer_epoch
            for q in range(self.P):
                v[f"fn{f}.end{q}"] = fence.log_ends[q]
        v["cp.n"] = len(s.ghost.completions)
        for k, comp in enumerate(s.ghost.completions):
            if comp.producer_id != 0 or comp.transactional_id != 0:
                raise ValueError("completion outside the slice")
            v[f"cp{k}.ep"], v[f"cp{k}.com"] = comp.producer_epoch, comp.committed
            for q in range(self.P):
                v[f"cp{k}.p{q}"] = q in comp.partitions
        if s.ghost.bad_transitions or s.ghost.committed_offset_high != -1:
            raise ValueError("ghost outside the slice")
        for k, u in enumerate(s.faults_used):
            v[f"fu{k}"] = u
        missing = set(v) - set(self.schema)
        if missing:
            raise ValueError(f"state exceeds the encoding's capacities: {sorted(missing)[:4]}")
        return v

    def equal_to(self, S: State, values: dict[str, Any]) -> Expr:
        return z3.And([S[n] == values[n] for n in self.schema])

    def initial(self, S: State) -> Expr:
        return self.equal_to(S, self.abstract(self.model.init_states()[0]))

    # -- decoding ---------------------------------------------------------------------------------------

    def envelope(self, tmpl: TxnTemplate, val: Callable[[str], int], bval: Callable[[str], bool]) -> net.Envelope:
        """The concrete envelope a deliver template's slot holds."""
        if tmpl.kind == "DeliverTxnRequest":
            c = tmpl.args[0]
            p = f"rq{c}"
            kind = REQ_KINDS[val(f"{p}.kind")]
            pid, ep = val(f"{p}.pid"), val(f"{p}.ep")
            parts = tuple(q for q in range(self.P) if bval(f"{p}.p{q}"))
            body: Any
            if kind == "InitProducerId":
                body = InitProducerIdRequest(0, c, 0, pid, ep)
            elif kind == "AddPartitionsToTxn":
                body = AddPartitionsToTxnRequest(0, c, 0, pid, ep, parts)
            else:
                body = EndTxnRequest(0, c, 0, pid, ep, bval(f"{p}.com"))
            return net.Envelope("p0", COORDINATOR, c, body)
        if tmpl.kind == "DeliverTxnResponse":
            c = tmpl.args[0]
            p = f"rs{c}"
            kind = REQ_KINDS[val(f"{p}.kind")]
            err = ERRORS[val(f"{p}.err")]
            parts = tuple(q for q in range(self.P) if bval(f"{p}.p{q}"))
            if kind == "InitProducerId":
                body = InitProducerIdResponse(0, c, err, val(f"{p}.pid"), val(f"{p}.ep"))
            elif kind == "AddPartitionsToTxn":
                body = AddPartitionsToTxnResponse(0, c, err, parts)
            else:
                body = EndTxnResponse(0, c, err, val(f"{p}.pid"), val(f"{p}.ep"))
            return net.Envelope(COORDINATOR, "p0", c, body)
        if tmpl.kind == "DeliverProduce":
            q, a = tmpl.args
            p = f"m{q}.{a}"
            conn = val(f"{p}.conn")
            rid = prod.record_id(0, val(f"{p}.rec"))
            cid = rid * prod.MAX_ATTEMPTS + val(f"{p}.att")
            body = ProduceRequest(0, conn, q, 0, val(f"{p}.ep"), val(f"{p}.seq"), (rid,), True, cid)
            return net.Envelope("p0", BROKER, conn, body)
        if tmpl.kind == "DeliverProduceResponse":
            q, a = tmpl.args
            p = f"m{q}.{a}"
            conn = val(f"{p}.conn")
            cid = prod.record_id(0, val(f"{p}.rec")) * prod.MAX_ATTEMPTS + val(f"{p}.att")
            body = ProduceResponse(
                0, conn, q, val(f"{p}.ep"), val(f"{p}.seq"), ERRORS[val(f"{p}.err")], val(f"{p}.off"), cid
            )
            return net.Envelope(BROKER, "p0", conn, body)
        assert tmpl.kind == "DeliverMarker"
        j = min(j for j in range(self.M) if bval(f"mk{j}.live"))
        body = WriteTxnMarkersRequest(0, 0, val(f"mk{j}.ep"), 0, bval(f"mk{j}.com"), val(f"mk{j}.q"))
        return net.Envelope(COORDINATOR, BROKER, 0, body)

    def action(self, m: z3.ModelRef, k: Expr, S: State) -> Action:
        """The executable model's action for a step of a z3 model (``S`` = the state before it)."""
        tmpl = self.templates[_num(m.eval(k, model_completion=True))]

        def val(name: str) -> int:
            return _num(m.eval(S[name], model_completion=True))

        def bval(name: str) -> bool:
            return bool(z3.is_true(m.eval(S[name], model_completion=True)))

        if tmpl.kind.startswith("Deliver"):
            return Action("Deliver", (self.envelope(tmpl, val, bval),))
        return Action(tmpl.kind, tmpl.args)

    def concretize(self, m: z3.ModelRef, S: State) -> TxnSystemState:
        """The ``TxnSystemState`` a z3 model assigns to ``S``."""

        def val(name: str) -> int:
            return _num(m.eval(S[name], model_completion=True))

        def bval(name: str) -> bool:
            return bool(z3.is_true(m.eval(S[name], model_completion=True)))

        return self._build(val, bval)

    def _build(self, val: Callable[[str], int], bval: Callable[[str], bool]) -> TxnSystemState:
        P = self.P
        entries = tuple(
            prod.TxnPartitionEntry(
                val(f"d.q{q}.pe"),
                val(f"d.q{q}.ns"),
                val(f"d.q{q}.la"),
                bval(f"d.q{q}.unres"),
                bval(f"d.q{q}.rw"),
                val(f"d.q{q}.us"),
            )
            for q in range(P)
        )
        batches = tuple(
            prod.ProducerBatch(
                n % P, (prod.record_id(0, n),), val(f"b{n}.ep"), val(f"b{n}.seq"), bval(f"b{n}.fl"), val(f"b{n}.att")
            )
            for n in range(self.R)
            if bval(f"b{n}.on")
        )
        expired = tuple(
            (prod.record_id(0, n) * prod.MAX_ATTEMPTS + val(f"x{n}.att"), n % P, val(f"x{n}.seq"))
            for _, n in sorted((val(f"x{n}.ord"), n) for n in range(self.R) if bval(f"x{n}.on"))
        )
        data = prod.Producer(
            val("d.pid"), val("d.ep"), val("d.conn"), val("d.next"), entries, batches, False, expired
        )
        client = tp.TxnClient(
            0,
            data,
            CLIENT_STATES[val("c.st")],
            val("c.conn"),
            bval("c.infl"),
            val("c.txn"),
            tuple(q for q in range(P) if bval(f"c.add{q}")),
            tuple(q for q in range(P) if bval(f"c.pend{q}")),
            bval("c.ebr"),
            bval("c.fen"),
        )
        md = None
        if bval("md.on"):
            md = tc.TransactionMetadata(
                0,
                val("md.pid"),
                val("md.ep"),
                val("md.last"),
                # every logged transition records the entry's own id as prevProducerId (no rotation in the slice)
                val("md.pid") if val("md.ep") >= 0 else -1,
                -1,
                STATES[val("md.st")],
                tuple(q for q in range(P) if bval(f"md.p{q}")),
                _pending_of(STATES[val("md.st")]),
                False,
                0,
                bval("md.started"),
            )
        lg = None
        if bval("lg.on"):
            lg = TransactionLogValue(
                val("lg.pid"),
                val("lg.ep"),
                STATES[val("lg.st")],
                tuple(q for q in range(P) if bval(f"lg.p{q}")),
                prev_producer_id=val("lg.pid"),
                last_producer_epoch=val("lg.last"),
            )
        leaders = []
        for q in range(P):
            log = []
            for k in range(val(f"q{q}.len")):
                rec = val(f"q{q}.l{k}.rec")
                control = CONTROLS[val(f"q{q}.l{k}.ctl")]
                log.append(
                    part.LogEntry(
                        0,
                        val(f"q{q}.l{k}.ep"),
                        val(f"q{q}.l{k}.seq"),
                        (prod.record_id(0, rec),) if rec >= 0 else (),
                        True,
                        control,
                        0 if control else -1,  # a marker's coordinator epoch: the encoding's only one is 0
                    )
                )
            producers: tuple[ProducerStateEntry, ...] = ()
            if bval(f"q{q}.e.on"):
                cnt = val(f"q{q}.e.cnt")
                metas = tuple(
                    BatchMetadata(val(f"q{q}.e.c{w}.seq"), val(f"q{q}.e.c{w}.seq"), val(f"q{q}.e.c{w}.off"))
                    for w in reversed(range(cnt))
                )
                producers = (ProducerStateEntry(0, val(f"q{q}.e.ep"), metas, val(f"q{q}.e.cep"), val(f"q{q}.e.first")),)
            aborted = tuple(
                part.AbortedTxn(0, val(f"q{q}.ab{k}.first"), val(f"q{q}.ab{k}.last"), val(f"q{q}.ab{k}.last") + 1)
                for k in range(val(f"q{q}.nab"))
            )
            leaders.append(part.PartitionLeader(tuple(log), len(log), producers, 0, aborted))
        msgs: list[tuple[int, net.Envelope]] = []
        for c in range(self.NC):
            for kind in ("DeliverTxnRequest", "DeliverTxnResponse"):
                p = f"{'rq' if kind.endswith('Request') else 'rs'}{c}"
                if bval(f"{p}.live"):
                    msgs.append((val(f"{p}.ord"), self.envelope(TxnTemplate(kind, (c,)), val, bval)))
        for q in range(P):
            for a in range(self.NS[q]):
                p = f"m{q}.{a}"
                if bval(f"{p}.live"):
                    kind = "DeliverProduceResponse" if bval(f"{p}.resp") else "DeliverProduce"
                    msgs.append((val(f"{p}.ord"), self.envelope(TxnTemplate(kind, (q, a)), val, bval)))
        for j in range(self.M):
            if bval(f"mk{j}.live"):
                body = WriteTxnMarkersRequest(0, 0, val(f"mk{j}.ep"), 0, bval(f"mk{j}.com"), val(f"mk{j}.q"))
                msgs.append((val(f"mk{j}.ord"), net.Envelope(COORDINATOR, BROKER, 0, body)))
        network = tuple(env for _, env in sorted(msgs, key=lambda x: x[0]))
        outcomes = tuple(ClientTxn(0, x, bval(f"out{x}.com")) for x in range(self.TX) if bval(f"out{x}.on"))
        fences = tuple(
            Fence(0, val(f"fn{f}.ep"), tuple(val(f"fn{f}.end{q}") for q in range(P))) for f in range(val("fn.n"))
        )
        completions = tuple(
            Completion(0, 0, val(f"cp{k}.ep"), bval(f"cp{k}.com"), tuple(q for q in range(P) if bval(f"cp{k}.p{q}")))
            for k in range(val("cp.n"))
        )
        faults = tuple(val(f"fu{k}") for k in range(len(TXN_FAULT_KINDS)))
        return TxnSystemState(
            (client,),
            (md,),
            (lg,),
            0,
            tuple(leaders),
            network,
            val("npid"),
            faults,
            TxnGhost(outcomes, fences, completions),
            pending_markers=self._pending_markers(md),
        )

    def _pending_markers(self, md: tc.TransactionMetadata | None) -> tuple[PendingCompleteTxn, ...]:
        """The coordinator's ``transactionsWithPendingMarkers`` (KAFKA-16352), derived, not encoded.

        The encoding covers coordinator epoch 0 only (:meth:`encode_state` refuses any other), so no marker is ever
        answered under an older coordinator epoch and the registry never loses an entry to a cancellation: it holds
        the transaction exactly while its markers are out -- a Prepare* whose completion is pending
        (``pending_state`` Complete*) with partitions still to acknowledge (``_send_markers`` registers it with the
        partitions it sends to; the last acknowledgement removes it as it starts the completion)."""
        if md is None or not self.flags.complete_after_markers or not md.partitions:
            return ()
        preparing = md.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)
        if not preparing or md.pending_state not in (TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT):
            return ()
        return (PendingCompleteTxn(0, 0, md.producer_id, md.producer_epoch),)

    # -- the coordinator table ---------------------------------------------------------------------------

    def valid(self, src: Expr, dst: str) -> Expr:
        """``is_valid_transition(src, dst)`` generated from :data:`VALID_PREVIOUS_STATES` (``src`` symbolic)."""
        return z3.Or([src == TS[p] for p in VALID_PREVIOUS_STATES[dst]] or [z3.BoolVal(False)])

    def st_in(self, x: Expr, states: Sequence[str]) -> Expr:
        return z3.Or([x == TS[s] for s in states])

    # -- one step -----------------------------------------------------------------------------------------

    def commuting_pairs(self) -> list[tuple[int, int]]:
        """Template pairs ``(a, b)``, ``b`` earlier in the alphabet, such that ``a`` then ``b`` can always be
        swapped: a :data:`SERVER_STEPS` step then a :data:`CLIENT_STEPS` step that does not consume the
        response ``a`` created (same connection / same produce slot).  See ``checker/bmc_txn.py`` for the
        argument and ``tests/test_bmc_txn.py`` for the check on BFS states."""
        out = []
        for ia, a in enumerate(self.templates):
            for ib, b in enumerate(self.templates):
                if ib >= ia or a.kind not in SERVER_STEPS or b.kind not in CLIENT_STEPS:
                    continue
                if (a.kind, b.kind) == ("DeliverTxnRequest", "DeliverTxnResponse") and a.args == b.args:
                    continue
                if (a.kind, b.kind) == ("DeliverProduce", "DeliverProduceResponse") and a.args == b.args:
                    continue
                out.append((ia, ib))
        return out

    def transition(self, t: int, S: State, S2: State, k: Expr, halt: Expr | None = None) -> list[Expr]:
        """Constraints: ``S2`` follows ``S`` by template number ``k`` at step ``t``.

        ``halt``: when true, the run has ended before this step (``S2`` equals ``S``; see
        :meth:`checker.bmc.encoding.Encoding.transition`).
        """
        self._base_ord = self.init_msgs + t * self.K
        cons: list[Expr] = [z3.ULT(k, len(self.templates))]
        self.step_events = {}
        updates: dict[str, list[tuple[Expr, Expr]]] = {}
        caps: list[Expr] = []
        # the timeout abort comes last: it is budget-free exactly when no protocol step is enabled
        protocol_guards: list[Expr] = []
        order = sorted(range(len(self.templates)), key=lambda i: self.templates[i].kind == "TxnTimeout")
        for idx in order:
            tmpl = self.templates[idx]
            self._ev = {}
            self._caps = []
            if tmpl.kind == "TxnTimeout":
                self._quiet = z3.Not(z3.Or(protocol_guards or [z3.BoolVal(False)]))
            guard, T = getattr(self, f"_t_{tmpl.kind}")(S, *tmpl.args)
            if tmpl.kind not in FAULT_STEPS:
                protocol_guards.append(guard)
            sel = k == idx if halt is None else z3.And(k == idx, z3.Not(halt))
            cons.append(z3.Implies(sel, guard))
            if self._caps:
                caps.append(z3.Implies(sel, z3.And(self._caps)))
            for label, cond in self._ev.items():
                self.step_events[label] = z3.Or(self.step_events.get(label, z3.BoolVal(False)), z3.And(sel, cond))
            for name, val in T.items():
                if val is not S[name]:
                    updates.setdefault(name, []).append((sel, val))
        for name in self.schema:
            cons.append(S2[name] == _ite(updates.get(name, []), S[name]))
        #: The step stays within the capacities (the caller adds it, or asks whether it can fail).
        self.capacity = z3.And(caps) if caps else z3.BoolVal(True)
        if self.include_capacity:
            cons.append(self.capacity)
        return cons

    def _ord(self, sub: int) -> Expr:
        return self.v(self._base_ord + sub)

    # -- the client ----------------------------------------------------------------------------------

    def _t_InitTransactions(self, S: State, i: int) -> tuple[Expr, State]:
        T = dict(S)
        T["c.st"] = self.v(CS[C.INITIALIZING])
        return S["c.st"] == CS[C.UNINITIALIZED], T

    def _t_BeginTransaction(self, S: State, i: int) -> tuple[Expr, State]:
        T = dict(S)
        T["c.st"] = self.v(CS[C.IN_TRANSACTION])
        for q in range(self.P):
            T[f"c.add{q}"] = T[f"c.pend{q}"] = z3.BoolVal(False)
        T["d.next"] = S["c.txn"] * self.RPT
        return z3.And(S["c.st"] == CS[C.READY], S["c.txn"] < self.TX), T

    def _t_Send(self, S: State, i: int) -> tuple[Expr, State]:
        nxt = S["d.next"]
        guard = z3.And(S["c.st"] == CS[C.IN_TRANSACTION], nxt < (S["c.txn"] + 1) * self.RPT, nxt < self.R)
        T = dict(S)
        T["d.next"] = nxt + 1
        for n in range(self.R):
            hit = nxt == n
            T[f"b{n}.on"] = z3.Or(S[f"b{n}.on"], hit)
            T[f"b{n}.fl"] = z3.And(S[f"b{n}.fl"], z3.Not(hit))
            T[f"b{n}.ep"] = z3.If(hit, self.v(-1), S[f"b{n}.ep"])
            T[f"b{n}.seq"] = z3.If(hit, self.v(-1), S[f"b{n}.seq"])
            T[f"b{n}.att"] = z3.If(hit, self.v(0), S[f"b{n}.att"])
        if self.tv < 2:
            for q in range(self.P):
                to_q = z3.Or([nxt == n for n in self.recs[q]] or [z3.BoolVal(False)])
                T[f"c.pend{q}"] = z3.Or(S[f"c.pend{q}"], z3.And(to_q, z3.Not(S[f"c.add{q}"])))
        return guard, T

    def _t_CommitTransaction(self, S: State, i: int) -> tuple[Expr, State]:
        T = dict(S)
        T["c.st"] = self.v(CS[C.COMMITTING])
        return z3.And(S["c.st"] == CS[C.IN_TRANSACTION], S["d.next"] == (S["c.txn"] + 1) * self.RPT), T

    def _drop_undrained(self, S: State) -> State:
        T = dict(S)
        for n in range(self.R):
            T[f"b{n}.on"] = z3.And(S[f"b{n}.on"], S[f"b{n}.seq"] >= 0)
        for q in range(self.P):
            T[f"c.pend{q}"] = z3.And(S[f"c.pend{q}"], S["c.infl"])
        return T

    def _t_AbortTransaction(self, S: State, i: int) -> tuple[Expr, State]:
        allowed = [S["c.st"] == CS[C.ABORTABLE_ERROR]]
        if self.voluntary:
            allowed.append(S["c.st"] == CS[C.IN_TRANSACTION])
        T = self._drop_undrained(S)
        T["c.st"] = self.v(CS[C.ABORTING])
        return z3.Or(allowed), T

    def _finish(self, S: State, pid: Expr | None, epoch: Expr | None) -> State:
        """``transactional_producer._finish`` (``pid is None``: no new identity)."""
        T = dict(S)
        fresh = z3.BoolVal(False) if pid is None else z3.And(pid >= 0, z3.Or(pid != S["d.pid"], epoch != S["d.ep"]))
        for q in range(self.P):
            unres, rw = S[f"d.q{q}.unres"], S[f"d.q{q}.rw"]
            fix = z3.Or(unres, rw)
            T[f"d.q{q}.ns"] = z3.If(fresh, self.v(0), z3.If(fix, S[f"d.q{q}.la"] + 1, S[f"d.q{q}.ns"]))
            T[f"d.q{q}.pe"] = z3.If(fresh, self.v(-1), S[f"d.q{q}.pe"])
            T[f"d.q{q}.la"] = z3.If(fresh, self.v(-1), S[f"d.q{q}.la"])
            T[f"d.q{q}.unres"] = z3.BoolVal(False)
            T[f"d.q{q}.us"] = self.v(-1)
            T[f"d.q{q}.rw"] = z3.BoolVal(False)
        if pid is not None:
            T["d.pid"] = z3.If(fresh, pid, S["d.pid"])
            T["d.ep"] = z3.If(fresh, epoch, S["d.ep"])
        bump = z3.And(S["c.ebr"], z3.BoolVal(self.kip_360 and self.tv < 2))
        T["c.st"] = z3.If(bump, self.v(CS[C.INITIALIZING]), self.v(CS[C.READY]))
        T["c.txn"] = S["c.txn"] + 1
        for q in range(self.P):
            T[f"c.add{q}"] = T[f"c.pend{q}"] = z3.BoolVal(False)
        T["c.infl"] = z3.BoolVal(False)
        return T

    def _record_outcome(self, T: State, txn: Expr, when: Expr, committed: Expr) -> None:
        for x in range(self.TX):
            hit = z3.And(when, txn == x)
            T[f"out{x}.on"] = z3.Or(T[f"out{x}.on"], hit)
            T[f"out{x}.com"] = z3.If(hit, committed, T[f"out{x}.com"])

    def _t_SendTxnRequest(self, S: State, i: int) -> tuple[Expr, State]:
        st = S["c.st"]
        pend = z3.Or([S[f"c.pend{q}"] for q in range(self.P)])
        added = z3.Or([S[f"c.add{q}"] for q in range(self.P)])
        nob = z3.And([z3.Not(S[f"b{n}.on"]) for n in range(self.R)] or [z3.BoolVal(True)])
        init = st == CS[C.INITIALIZING]
        add = z3.And(
            z3.Not(init), z3.Or(st == CS[C.IN_TRANSACTION], st == CS[C.COMMITTING], st == CS[C.ABORTING]), pend
        )
        endc = z3.And(z3.Not(init), z3.Not(add), z3.Or(st == CS[C.COMMITTING], st == CS[C.ABORTING]), nob, z3.Not(pend))
        local = z3.And(endc, z3.Not(added))
        end = z3.And(endc, added)
        send = z3.Or(init, add, end)
        conn = S["c.conn"]
        free = z3.And([z3.Implies(conn == c, z3.Not(S[f"rq{c}.live"])) for c in range(self.NC)])
        guard = z3.And(z3.Not(S["c.infl"]), z3.Or(send, local), z3.Implies(send, z3.And(free, conn < self.NC)))
        T = dict(S)
        T["c.infl"] = z3.BoolVal(True)
        kind = z3.If(init, self.v(0), z3.If(add, self.v(1), self.v(2)))
        pid = z3.If(z3.And(init, z3.BoolVal(not self.kip_360)), self.v(-1), S["d.pid"])
        ep = z3.If(z3.And(init, z3.BoolVal(not self.kip_360)), self.v(-1), S["d.ep"])
        for c in range(self.NC):
            hit = z3.And(send, conn == c)
            p = f"rq{c}"
            T[f"{p}.live"] = z3.Or(S[f"{p}.live"], hit)
            T[f"{p}.kind"] = z3.If(hit, kind, S[f"{p}.kind"])
            T[f"{p}.pid"] = z3.If(hit, pid, S[f"{p}.pid"])
            T[f"{p}.ep"] = z3.If(hit, ep, S[f"{p}.ep"])
            T[f"{p}.com"] = z3.If(hit, z3.And(end, st == CS[C.COMMITTING]), S[f"{p}.com"])
            T[f"{p}.ord"] = z3.If(hit, self._ord(0), S[f"{p}.ord"])
            for q in range(self.P):
                T[f"{p}.p{q}"] = z3.If(hit, z3.And(add, S[f"c.pend{q}"]), S[f"{p}.p{q}"])
        F = self._finish(T, None, None)
        self._record_outcome(F, S["c.txn"], local, z3.BoolVal(False))
        self._ev["client_txn_local_end"] = local
        return guard, _merge(local, F, T)

    # -- the data path -------------------------------------------------------------------------------------

    def _in_flight(self, S: State) -> Expr:
        return z3.Or([z3.And(S[f"b{n}.on"], S[f"b{n}.fl"]) for n in range(self.R)] or [z3.BoolVal(False)])

    def _first_of(self, S: State, q: int) -> list[Expr]:
        recs = self.recs[q]
        return [z3.And(S[f"b{n}.on"], *[z3.Not(S[f"b{e}.on"]) for e in recs[:x]]) for x, n in enumerate(recs)]

    def _orphan(self, S: State) -> Expr:
        """``producer.orphan_requests`` > 0: a produce request (or its answer) live on the data connection that no
        batch awaits (its batch expired in flight); it still holds a place in ``NetworkClient.InFlightRequests``."""
        out = []
        for q in range(self.P):
            for a in range(self.NS[q]):
                p = f"m{q}.{a}"
                awaited = z3.Or(
                    [
                        z3.And(S[f"b{m}.on"], S[f"b{m}.fl"], S[f"{p}.rec"] == m, S[f"{p}.att"] == S[f"b{m}.att"])
                        for m in self.recs[q]
                    ]
                    or [z3.BoolVal(False)]
                )
                out.append(z3.And(S[f"{p}.live"], S[f"{p}.conn"] == S["d.conn"], z3.Not(awaited)))
        return z3.Or(out or [z3.BoolVal(False)])

    def _seq_outstanding(self, S: State, q: int) -> Expr:
        return z3.Or([z3.And(S[f"b{n}.on"], S[f"b{n}.seq"] >= 0) for n in self.recs[q]] or [z3.BoolVal(False)])

    def _t_SendProduce(self, S: State, i: int, q: int) -> tuple[Expr, State]:
        st = S["c.st"]
        pre = [
            z3.Or([st == CS[x] for x in (C.IN_TRANSACTION, C.COMMITTING, C.ABORTING, C.ABORTABLE_ERROR)]),
            S["d.pid"] >= 0,
            z3.Not(self._in_flight(S)),
            z3.Not(self._orphan(S)),
        ]
        if self.tv < 2:
            pre.append(S[f"c.add{q}"])
        pe, ns, dep = S[f"d.q{q}.pe"], S[f"d.q{q}.ns"], S["d.ep"]
        new_ok = z3.And(z3.Not(S[f"d.q{q}.unres"]), z3.Not(z3.And(pe != dep, self._seq_outstanding(S, q))))
        firsts = self._first_of(S, q)
        sels = [z3.And(f, z3.Or(S[f"b{n}.seq"] >= 0, new_ok)) for f, n in zip(firsts, self.recs[q])]
        T = dict(S)
        req_ep: list[tuple[Expr, Expr]] = []
        req_seq: list[tuple[Expr, Expr]] = []
        req_rec: list[tuple[Expr, Expr]] = []
        req_att: list[tuple[Expr, Expr]] = []
        reset = pe != dep
        for sel, n in zip(sels, self.recs[q]):
            stamp = z3.And(sel, S[f"b{n}.seq"] < 0)
            bep = z3.If(stamp, dep, S[f"b{n}.ep"])
            bseq = z3.If(stamp, z3.If(reset, self.v(0), ns), S[f"b{n}.seq"])
            att = S[f"b{n}.att"] + 1
            T[f"b{n}.ep"], T[f"b{n}.seq"] = bep, bseq
            T[f"b{n}.fl"] = z3.Or(S[f"b{n}.fl"], sel)
            T[f"b{n}.att"] = z3.If(sel, att, S[f"b{n}.att"])
            req_ep.append((sel, bep))
            req_seq.append((sel, bseq))
            req_rec.append((sel, self.v(n)))
            req_att.append((sel, att))
        stamped = z3.Or([z3.And(sel, S[f"b{n}.seq"] < 0) for sel, n in zip(sels, self.recs[q])] or [z3.BoolVal(False)])
        rs = z3.And(stamped, reset)
        T[f"d.q{q}.pe"] = z3.If(stamped, dep, pe)
        T[f"d.q{q}.ns"] = z3.If(stamped, z3.If(reset, self.v(0), ns) + 1, ns)
        T[f"d.q{q}.la"] = z3.If(rs, self.v(-1), S[f"d.q{q}.la"])
        T[f"d.q{q}.unres"] = z3.And(S[f"d.q{q}.unres"], z3.Not(rs))
        T[f"d.q{q}.us"] = z3.If(rs, self.v(-1), S[f"d.q{q}.us"])
        T[f"d.q{q}.rw"] = z3.And(S[f"d.q{q}.rw"], z3.Not(rs))
        T[f"c.add{q}"] = z3.BoolVal(True)
        # the request goes into the first free produce slot of the partition
        frees = [
            z3.And(z3.Not(S[f"m{q}.{a}.live"]), *[S[f"m{q}.{b}.live"] for b in range(a)]) for a in range(self.NS[q])
        ]
        for a, hit in enumerate(frees):
            p = f"m{q}.{a}"
            T[f"{p}.live"] = z3.Or(S[f"{p}.live"], hit)
            T[f"{p}.resp"] = z3.And(S[f"{p}.resp"], z3.Not(hit))
            T[f"{p}.conn"] = z3.If(hit, S["d.conn"], S[f"{p}.conn"])
            T[f"{p}.rec"] = z3.If(hit, _ite(req_rec, self.v(-1)), S[f"{p}.rec"])
            T[f"{p}.att"] = z3.If(hit, _ite(req_att, self.v(-1)), S[f"{p}.att"])
            T[f"{p}.ep"] = z3.If(hit, _ite(req_ep, self.v(-1)), S[f"{p}.ep"])
            T[f"{p}.seq"] = z3.If(hit, _ite(req_seq, self.v(-1)), S[f"{p}.seq"])
            T[f"{p}.ord"] = z3.If(hit, self._ord(0), S[f"{p}.ord"])
        return z3.And(*pre, z3.Or(sels or [z3.BoolVal(False)]), z3.Or(frees or [z3.BoolVal(False)])), T

    def _fail_batch(self, S: State, n: int, cond: Expr, adjust: Expr | None = None) -> State:
        """``producer._fail``: remove the batch; with ``adjust`` (retries left) a transactional producer gives its
        sequence back (``adjustSequencesDueToFailedBatch``: the next sequence and the later batches' go down)."""
        T = dict(S)
        q = n % self.P
        T[f"b{n}.on"] = z3.And(S[f"b{n}.on"], z3.Not(cond))
        if adjust is None:
            return T
        adj = z3.And(cond, adjust, S[f"b{n}.seq"] >= 0)
        T[f"d.q{q}.ns"] = z3.If(adj, S[f"d.q{q}.ns"] - 1, S[f"d.q{q}.ns"])
        for m in self.recs[q]:
            if m == n:
                continue
            later = z3.And(adj, S[f"b{m}.on"], S[f"b{m}.seq"] >= 0, S[f"b{m}.seq"] >= S[f"b{n}.seq"])
            T[f"b{m}.seq"] = z3.If(later, S[f"b{m}.seq"] - 1, S[f"b{m}.seq"])
        return T

    def _mark_unresolved(self, S: State, n: int, cond: Expr) -> State:
        """``producer._mark_unresolved`` of batch ``n`` when ``cond`` (an expired batch in retry)."""
        T = dict(S)
        q = n % self.P
        mark = z3.And(cond, S[f"b{n}.seq"] >= 0, S[f"b{n}.att"] > 0, S[f"d.q{q}.pe"] == S[f"b{n}.ep"])
        T[f"d.q{q}.unres"] = z3.Or(S[f"d.q{q}.unres"], mark)
        after, us = S[f"b{n}.seq"] + 1, S[f"d.q{q}.us"]  # markSequenceUnresolved: the largest lastSequence() + 1
        T[f"d.q{q}.us"] = z3.If(z3.And(mark, after > us), after, us)
        return T

    def _classify(self, S: State, fatal: Expr, bump: Expr | None = None) -> State:
        """``classify_batch_failure``: fatal, or abortable (KIP-360 epoch bump under TV<2 when ``bump``; by default
        a failed batch's: not while COMMITTING_TRANSACTION, ``maybeTransitionToErrorState``'s ``!isCompleting()``)."""
        st = S["c.st"]
        F = dict(S)
        F["c.st"] = self.v(CS[C.FATAL_ERROR])
        F["c.infl"] = z3.BoolVal(False)
        F["c.fen"] = z3.And(st == CS[C.FATAL_ERROR], S["c.fen"])
        A = self._drop_undrained(S)
        A["c.st"] = self.v(CS[C.ABORTABLE_ERROR])
        if bump is None:
            bump = st != CS[C.COMMITTING]
        A["c.ebr"] = z3.Or(S["c.ebr"], z3.And(bump, z3.BoolVal(self.kip_360 and self.tv < 2)))
        keep = z3.Or(st == CS[C.FATAL_ERROR], st == CS[C.ABORTING])
        return _merge(fatal, F, _merge(keep, S, A))

    def _t_DeliverProduceResponse(self, S: State, q: int, a: int) -> tuple[Expr, State]:
        p = f"m{q}.{a}"
        head = self._produce_head(S, q, a, True)
        T = dict(S)
        T[f"{p}.live"] = z3.BoolVal(False)
        current = S[f"{p}.conn"] == S["d.conn"]
        err = S[f"{p}.err"]
        # producer.answers: the response names its request (batch and attempt), whatever the batch's stamp is now
        matches = [
            z3.And(current, S[f"b{m}.on"], S[f"b{m}.fl"], S[f"{p}.rec"] == m, S[f"{p}.att"] == S[f"b{m}.att"])
            for m in self.recs[q]
        ]
        U = dict(T)
        failed = z3.BoolVal(False)
        for x, m in enumerate(self.recs[q]):
            hit = z3.And(matches[x], *[z3.Not(y) for y in matches[:x]])
            bseq, bep, att = S[f"b{m}.seq"], S[f"b{m}.ep"], S[f"b{m}.att"]
            can_retry = att <= self.retries
            ok = z3.Or(err == E[Errors.NONE], err == E[Errors.DUPLICATE_SEQUENCE_NUMBER])
            succ = z3.And(hit, ok)
            U[f"b{m}.on"] = z3.And(U[f"b{m}.on"], z3.Not(succ))
            la = U[f"d.q{q}.la"]
            adv = z3.And(succ, U[f"d.q{q}.pe"] == bep, z3.Or(la < 0, bseq > la))
            U[f"d.q{q}.la"] = z3.If(adv, bseq, la)
            failing = z3.And(hit, z3.Not(ok))
            ooo = err == E[Errors.OUT_OF_ORDER_SEQUENCE_NUMBER]
            expected = S[f"d.q{q}.la"] + 1
            # canRetry: a transactional producer retries only a batch that is not the next one, and never on a
            # partition with an unresolved sequence (KAFKA-8710)
            later = z3.And(bseq != expected, z3.Not(S[f"d.q{q}.unres"]), can_retry)
            ooo_retry = z3.And(failing, ooo, later)
            ooo_fail = z3.And(failing, ooo, z3.Not(later))
            # handleFailedBatch: a transactional producer's OutOfOrderSequenceException takes the common branch
            U = self._fail_batch(U, m, ooo_fail, can_retry)
            rest = z3.And(failing, z3.Not(ooo))
            fenced = err == E[Errors.INVALID_PRODUCER_EPOCH]
            other_retry = z3.And(rest, z3.Not(fenced), can_retry)
            fail = z3.And(rest, z3.Or(fenced, z3.Not(can_retry)))
            U = self._fail_batch(U, m, fail, can_retry)
            U[f"b{m}.fl"] = z3.And(U[f"b{m}.fl"], z3.Not(z3.Or(ooo_retry, other_retry)))
            failed = z3.Or(failed, ooo_fail, fail)
        # maybeTransitionToErrorState: INVALID_TXN_STATE is abortable; OUT_OF_ORDER_SEQUENCE_NUMBER is fatal without
        # KIP-360 (the slice's leader answers no authorization error)
        fatal = z3.And(err == E[Errors.OUT_OF_ORDER_SEQUENCE_NUMBER], z3.BoolVal(not self.kip_360))
        U = _merge(failed, self._classify(U, fatal), U)
        # producer._late_answer: no in-flight batch awaits it, but a batch expired in flight did (Producer.expired,
        # by correlation id): the entry goes, and NONE / DUPLICATE_SEQUENCE_NUMBER raise the partition's last
        # acknowledged sequence (plain comparison, a tracked partition only); nothing fails, nothing is acked
        unanswered = z3.Not(z3.Or(matches or [z3.BoolVal(False)]))
        ok = z3.Or(err == E[Errors.NONE], err == E[Errors.DUPLICATE_SEQUENCE_NUMBER])
        for m in self.recs[q]:
            late = z3.And(unanswered, S[f"x{m}.on"], S[f"{p}.rec"] == m, S[f"{p}.att"] == S[f"x{m}.att"])
            V = self._clear_expired(U, [m])
            for n in range(self.R):  # the later entries move up one place
                if n != m:
                    o = U[f"x{n}.ord"]
                    V[f"x{n}.ord"] = z3.If(z3.And(U[f"x{n}.on"], o > U[f"x{m}.ord"]), o - 1, o)
            U = _merge(late, V, U)
            la, last = U[f"d.q{q}.la"], S[f"x{m}.seq"]
            U[f"d.q{q}.la"] = z3.If(z3.And(late, ok, last > la, U[f"d.q{q}.pe"] >= 0), last, la)
        return z3.And(S[f"{p}.live"], S[f"{p}.resp"], head), _merge(current, U, T)

    def _clear_expired(self, S: State, recs: Sequence[int], cond: Expr | None = None) -> State:
        """``Producer.expired`` without the entries of ``recs`` (when ``cond``)."""
        T = dict(S)
        for n in recs:
            c = z3.BoolVal(True) if cond is None else cond
            T[f"x{n}.on"] = z3.And(S[f"x{n}.on"], z3.Not(c))
            for f in ("att", "seq", "ord"):
                T[f"x{n}.{f}"] = z3.If(c, self.v(-1), S[f"x{n}.{f}"])
        return T

    def _produce_head(self, S: State, q: int, a: int, resp: bool) -> Expr:
        """The slot is the oldest message of its channel (requests and responses are separate channels)."""
        p = f"m{q}.{a}"
        kind = S[f"{p}.resp"] if resp else z3.Not(S[f"{p}.resp"])
        older = []
        for q2 in range(self.P):
            for b in range(self.NS[q2]):
                if (q2, b) == (q, a):
                    continue
                o = f"m{q2}.{b}"
                same = S[f"{o}.resp"] if resp else z3.Not(S[f"{o}.resp"])
                older.append(
                    z3.And(S[f"{o}.live"], same, S[f"{o}.conn"] == S[f"{p}.conn"], S[f"{o}.ord"] < S[f"{p}.ord"])
                )
        return z3.And(kind, z3.Not(z3.Or(older or [z3.BoolVal(False)])))

    # -- the partition leader ----------------------------------------------------------------------------

    def _validate(self, S: State, q: int, ep: Expr, seq: Expr) -> tuple[Expr, Expr, Expr]:
        """Symbolic ``validate_batch`` (via :func:`fold_validation`): (error code, dup offset, append?)."""
        on, eep, cnt = S[f"q{q}.e.on"], S[f"q{q}.e.ep"], S[f"q{q}.e.cnt"]
        W = self.W
        win = self.flags.duplicate_window

        def duplicate() -> tuple[Expr, Expr]:
            hits = [
                (z3.And(on, eep == ep, w < cnt, w < win, S[f"q{q}.e.c{w}.seq"] == seq), S[f"q{q}.e.c{w}.off"])
                for w in reversed(range(W))
            ]
            return z3.Or([h for h, _ in hits]), _ite(hits, self.v(-1))

        rules: dict[str, Callable[[], tuple[Expr, Expr]]] = {
            "duplicate": duplicate,
            "first_sequence": lambda: (z3.And(z3.Or(z3.Not(on), eep == -1), S[f"q{q}.len"] == 0, seq != 0), self.v(-1)),
            "unknown_producer": lambda: (z3.Or(z3.Not(on), eep == -1), self.v(-1)),
            "epoch": lambda: (z3.And(on, ep < eep), self.v(-1)),
            "sequence": lambda: (
                z3.And(on, z3.If(ep != eep, seq != 0, seq != z3.If(cnt > 0, S[f"q{q}.e.c0.seq"] + 1, self.v(0)))),
                self.v(-1),
            ),
        }
        return fold_validation(rules, self.flags, lambda name: self.v(E[name]), self.v)

    def _log_append(self, T: State, q: int, cond: Expr, ep: Expr, seq: Expr, rec: Expr, ctl: int) -> list[Expr]:
        length = T[f"q{q}.len"]
        for k in range(self.L[q]):
            at = z3.And(cond, length == k)
            for f, val in (("ep", ep), ("seq", seq), ("rec", rec), ("ctl", self.v(ctl))):
                T[f"q{q}.l{k}.{f}"] = z3.If(at, val, T[f"q{q}.l{k}.{f}"])
        T[f"q{q}.len"] = z3.If(cond, length + 1, length)
        self._caps.append(z3.Implies(cond, length < self.L[q]))
        return []

    def _t_DeliverProduce(self, S: State, q: int, a: int) -> tuple[Expr, State]:
        p = f"m{q}.{a}"
        head = self._produce_head(S, q, a, False)
        T = dict(S)
        T[f"{p}.live"] = z3.BoolVal(False)
        ep, seq = S[f"{p}.ep"], S[f"{p}.seq"]
        on, eep, first = S[f"q{q}.e.on"], S[f"q{q}.e.ep"], S[f"q{q}.e.first"]
        err, dup, _append = self._validate(S, q, ep, seq)
        is_dup = z3.And(err == E[Errors.NONE], dup >= 0)
        # verification (KIP-890 part 1) / TV2 implicit AddPartitionsToTxn
        if self.flags.partition_verification or self.tv >= 2:
            same = (ep == eep) if self.flags.ongoing_txn_check_epoch else z3.BoolVal(True)
            needs = z3.And(z3.Not(z3.And(on, z3.Or(z3.And(first >= 0, same), ep < eep))), z3.Not(is_dup))
        else:
            needs = z3.BoolVal(False)
        known = z3.And(S["md.on"], S["md.pid"] == 0)
        if self.tv >= 2:
            verr, V = self._add_partitions(T, known, ep, {q}, needs)
            T = _merge(z3.And(needs, known), V, T)
        else:
            verr = self._verify(S, known, ep, q)
        verification = z3.If(needs, verr, self.v(E[Errors.NONE]))
        # handle_txn_produce
        cons: list[Expr] = []
        stale = z3.And(on, ep < eep) if self.flags.check_epoch else z3.BoolVal(False)
        mapped = _ite(
            [
                (verification == E[src], self.v(E[dst]))
                for src, dst in VERIFICATION_TO_PRODUCE_ERROR.items()
                if src in E
            ],
            self.v(E[Errors.INVALID_TXN_STATE]),
        )
        err2 = z3.If(
            is_dup,
            err,
            z3.If(stale, self.v(E[Errors.INVALID_PRODUCER_EPOCH]), z3.If(verification != E[Errors.NONE], mapped, err)),
        )
        do = z3.And(err2 == E[Errors.NONE], z3.Not(is_dup))
        length = S[f"q{q}.len"]
        cons += self._log_append(T, q, do, ep, seq, S[f"{p}.rec"], 0)
        # append_batch + transaction bookkeeping
        fresh = z3.Or(z3.Not(on), eep != ep)
        win = self.flags.duplicate_window
        kept = z3.If(S[f"q{q}.e.cnt"] < win - 1, S[f"q{q}.e.cnt"], self.v(win - 1)) if win > 1 else self.v(0)
        T[f"q{q}.e.on"] = z3.Or(on, do)
        T[f"q{q}.e.ep"] = z3.If(do, ep, eep)
        T[f"q{q}.e.cnt"] = z3.If(do, z3.If(fresh, self.v(1), kept + 1), S[f"q{q}.e.cnt"])
        self._caps.append(z3.Implies(do, z3.If(fresh, self.v(1), kept + 1) <= self.W))
        old = {w: (S[f"q{q}.e.c{w}.seq"], S[f"q{q}.e.c{w}.off"]) for w in range(self.W)}
        T[f"q{q}.e.c0.seq"] = z3.If(do, seq, old[0][0])
        T[f"q{q}.e.c0.off"] = z3.If(do, length, old[0][1])
        for w in range(1, self.W):
            T[f"q{q}.e.c{w}.seq"] = z3.If(do, old[w - 1][0], old[w][0])
            T[f"q{q}.e.c{w}.off"] = z3.If(do, old[w - 1][1], old[w][1])
        T[f"q{q}.e.cep"] = z3.If(do, z3.If(on, S[f"q{q}.e.cep"], self.v(-1)), S[f"q{q}.e.cep"])
        T[f"q{q}.e.first"] = z3.If(do, z3.If(z3.And(on, first >= 0), first, length), first)
        self._ev["txn_opened_on_partition"] = z3.And(do, z3.Or(z3.Not(on), first < 0))
        # the response takes the request's slot
        T[f"{p}.live"], T[f"{p}.resp"] = z3.BoolVal(True), z3.BoolVal(True)
        T[f"{p}.err"] = err2
        T[f"{p}.off"] = z3.If(is_dup, dup, z3.If(do, length, self.v(-1)))
        T[f"{p}.ord"] = self._ord(self.P)
        return z3.And(S[f"{p}.live"], head, *cons), T

    def _verify(self, S: State, known: Expr, ep: Expr, q: int) -> Expr:
        """``handle_verify_partition`` (KIP-890 part 1, verify only)."""
        return z3.If(
            z3.Not(known),
            self.v(E[Errors.INVALID_PRODUCER_ID_MAPPING]),
            z3.If(
                ep != S["md.ep"],
                self.v(E[Errors.PRODUCER_FENCED]),
                z3.If(
                    self.st_in(S["md.st"], PREPARE),
                    self.v(E[Errors.CONCURRENT_TRANSACTIONS]),
                    z3.If(S[f"md.p{q}"], self.v(E[Errors.NONE]), self.v(E[Errors.TRANSACTION_ABORTABLE])),
                ),
            ),
        )

    # -- the coordinator ----------------------------------------------------------------------------------

    def _write_log(self, T: State, cond: Expr) -> None:
        """The log value follows the cache entry after a successful ``_transit`` (``to_log_value``)."""
        T["lg.on"] = z3.Or(T["lg.on"], cond)
        for f in ("pid", "ep", "last", "st"):
            T[f"lg.{f}"] = z3.If(cond, T[f"md.{f}"], T[f"lg.{f}"])
        for q in range(self.P):
            T[f"lg.p{q}"] = z3.If(cond, T[f"md.p{q}"], T[f"lg.p{q}"])

    def _transit(self, S: State, src: Expr, target: dict[str, Expr], cond: Expr) -> tuple[Expr, Expr, State]:
        """``_transit`` when ``cond``: (written?, error code, new state).  The legality check is the table."""
        dst = target["st"]
        ok = z3.Or([z3.And(dst == TS[name], self.valid(src, name)) for name in STATES])
        ok = z3.And(ok, target.get("ep", S["md.ep"]) >= self.v(0))
        wrote = z3.And(cond, ok)
        T = dict(S)
        for f, val in target.items():
            T[f"md.{f}"] = z3.If(wrote, val, S[f"md.{f}"])
        self._write_log(T, wrote)
        for name in STATES if self.events else ():
            for nxt in STATES:
                if VALID_PREVIOUS_STATES[nxt] and name in VALID_PREVIOUS_STATES[nxt]:
                    lab = f"txn:{name}->{nxt}"
                    self._ev[lab] = z3.Or(
                        self._ev.get(lab, z3.BoolVal(False)), z3.And(wrote, src == TS[name], dst == TS[nxt])
                    )
        err = z3.If(ok, self.v(E[Errors.NONE]), self.v(E[Errors.UNKNOWN_SERVER_ERROR]))
        return wrote, err, T

    def _add_partitions(
        self, S: State, known: Expr, ep: Expr, parts: set[int] | list[Expr], cond: Expr
    ) -> tuple[Expr, State]:
        """``handle_add_partitions``: (error code, state).  ``parts``: constant set or per-partition booleans."""
        inc = [z3.BoolVal(q in parts) for q in range(self.P)] if isinstance(parts, set) else parts
        st = S["md.st"]
        ongoing_all = z3.And(st == TS[S_ONGOING], *[z3.Implies(inc[q], S[f"md.p{q}"]) for q in range(self.P)])
        attempt = z3.And(cond, known, ep == S["md.ep"], z3.Not(self.st_in(st, PREPARE)), z3.Not(ongoing_all))
        target = {"st": self.v(TS[S_ONGOING]), "started": z3.BoolVal(True)}
        for q in range(self.P):
            target[f"p{q}"] = z3.Or(S[f"md.p{q}"], inc[q])
        _w, terr, T = self._transit(S, st, target, attempt)
        # a pending transition is answered before the producer id and epoch are checked (KAFKA-18660, PR #18730);
        # in the encoded slice an entry has one pending exactly while it is in Prepare* (see _pending_of)
        err = z3.If(
            z3.Not(S["md.on"]),
            self.v(E[Errors.INVALID_PRODUCER_ID_MAPPING]),
            z3.If(
                self.st_in(st, PREPARE),
                self.v(E[Errors.CONCURRENT_TRANSACTIONS]),
                z3.If(
                    z3.Not(known),
                    self.v(E[Errors.INVALID_PRODUCER_ID_MAPPING]),
                    z3.If(
                        ep != S["md.ep"],
                        self.v(E[Errors.PRODUCER_FENCED]),
                        z3.If(ongoing_all, self.v(E[Errors.NONE]), terr),
                    ),
                ),
            ),
        )
        return err, T

    def _send_markers(self, T: State, cond: Expr) -> list[Expr]:
        """``_send_markers`` + ``_complete`` when the transaction has no partition (or markers are not awaited)."""
        com = T["md.st"] == TS[TXS.PREPARE_COMMIT]
        cnt = T["mk.n"]
        offs: list[Expr] = []
        for q in range(self.P):
            on = z3.And(cond, T[f"md.p{q}"])
            idx = cnt + self._count(offs)
            for j in range(self.M):
                hit = z3.And(on, idx == j)
                T[f"mk{j}.live"] = z3.Or(T[f"mk{j}.live"], hit)
                T[f"mk{j}.q"] = z3.If(hit, self.v(q), T[f"mk{j}.q"])
                T[f"mk{j}.ep"] = z3.If(hit, T["md.ep"], T[f"mk{j}.ep"])
                T[f"mk{j}.com"] = z3.If(hit, com, T[f"mk{j}.com"])
                T[f"mk{j}.ord"] = z3.If(hit, self._ord(q), T[f"mk{j}.ord"])
            offs.append(on)
        total = cnt + self._count(offs)
        self._caps.append(z3.Implies(cond, total <= self.M))
        cons: list[Expr] = []
        T["mk.n"] = total
        any_part = z3.Or([T[f"md.p{q}"] for q in range(self.P)])
        self._ev["markers_sent"] = z3.And(cond, any_part)
        now = z3.And(cond, z3.Not(any_part)) if self.flags.complete_after_markers else cond
        cons += self._complete(T, now)
        return cons

    def _count(self, conds: Sequence[Expr]) -> Expr:
        return z3.Sum([z3.If(c, self.v(1), self.v(0)) for c in conds]) if conds else self.v(0)

    def _complete(self, T: State, cond: Expr) -> list[Expr]:
        """``_complete``: the Completion ghost record, then CompleteCommit/CompleteAbort (in place)."""
        n = T["cp.n"]
        com = T["md.st"] == TS[TXS.PREPARE_COMMIT]
        for k in range(self.CC):
            hit = z3.And(cond, n == k)
            T[f"cp{k}.ep"] = z3.If(hit, T["md.ep"], T[f"cp{k}.ep"])
            T[f"cp{k}.com"] = z3.If(hit, com, T[f"cp{k}.com"])
            for q in range(self.P):
                T[f"cp{k}.p{q}"] = z3.If(hit, T[f"lg.p{q}"], T[f"cp{k}.p{q}"])
        T["cp.n"] = z3.If(cond, n + 1, n)
        target = {
            "st": z3.If(com, self.v(TS[TXS.COMPLETE_COMMIT]), self.v(TS[TXS.COMPLETE_ABORT])),
            "started": z3.BoolVal(False),
        }
        for q in range(self.P):
            target[f"p{q}"] = z3.BoolVal(False)
        # the source is the Prepare* entry with its partitions emptied: only the state matters to the table
        _w, _e, U = self._transit(T, T["md.st"], target, cond)
        T.update(U)
        self._ev["txn:Prepare*"] = cond
        self._caps.append(z3.Implies(cond, n < self.CC))
        return []

    def _record_fence(self, T: State, cond: Expr, ep: Expr) -> list[Expr]:
        n = T["fn.n"]
        for f in range(self.FC):
            hit = z3.And(cond, n == f)
            T[f"fn{f}.ep"] = z3.If(hit, ep, T[f"fn{f}.ep"])
            for q in range(self.P):
                T[f"fn{f}.end{q}"] = z3.If(hit, T[f"q{q}.len"], T[f"fn{f}.end{q}"])
        T["fn.n"] = z3.If(cond, n + 1, n)
        self._caps.append(z3.Implies(cond, n < self.FC))
        return []

    def _prepare_and_markers(self, T: State, wrote: Expr, cons: list[Expr]) -> None:
        prep = z3.And(wrote, self.st_in(T["md.st"], PREPARE))
        cons += self._send_markers(T, prep)

    def _fence_and_abort(self, S: State, cond: Expr) -> tuple[Expr, State, list[Expr]]:
        """``fence_and_abort`` (PrepareEpochFence -> PrepareAbort at epoch + 1) when ``cond``; records the fence."""
        # the TV2 fence is the abort's own bump (prepareAbortOrCommit, KAFKA-19367): lastProducerEpoch the fenced epoch
        last = S["md.ep"] if self.tv >= 2 else self.v(-1)
        target = {"st": self.v(TS[TXS.PREPARE_ABORT]), "ep": S["md.ep"] + 1, "last": last}
        wrote, err, T = self._transit(S, self.v(TS[TXS.PREPARE_EPOCH_FENCE]), target, cond)
        self._ev[f"txn:{S_ONGOING}->{TXS.PREPARE_EPOCH_FENCE}"] = wrote
        cons = self._record_fence(T, wrote, S["md.ep"])
        self._prepare_and_markers(T, wrote, cons)
        return err, T, cons

    def _end_txn(
        self, S: State, cond: Expr, pid: Expr, ep: Expr, committed: Expr, from_client: bool
    ) -> tuple[Expr, Expr, Expr, State, list[Expr]]:
        """``end_transaction`` for the slice: (error, pid, epoch returned, state, constraints)."""
        md_on, mpid, mep, st = S["md.on"], S["md.pid"], S["md.ep"], S["md.st"]
        prep_x = z3.If(committed, self.v(TS[TXS.PREPARE_COMMIT]), self.v(TS[TXS.PREPARE_ABORT]))
        same_complete = st == z3.If(committed, self.v(TS[TXS.COMPLETE_COMMIT]), self.v(TS[TXS.COMPLETE_ABORT]))
        ongoing = st == TS[S_ONGOING]
        in_prep = self.st_in(st, PREPARE)
        idle = self.st_in(st, (TXS.EMPTY, *COMPLETE))
        ECONC, EITS, EPF = (
            self.v(E[Errors.CONCURRENT_TRANSACTIONS]),
            self.v(E[Errors.INVALID_TXN_STATE]),
            self.v(E[Errors.PRODUCER_FENCED]),
        )
        no = self.v(-1)
        bad_id = z3.Or(z3.Not(md_on), pid != mpid)
        if self.tv >= 2:
            current = ep == mep
            retry = ep == mep - 1
            go_ongoing = z3.And(cond, z3.Not(bad_id), ongoing, current)
            empty_abort = z3.And(cond, z3.Not(bad_id), idle, z3.Not(committed), current)
            tgt = {"st": prep_x, "ep": mep + 1, "last": mep}
            tgt_empty = {
                "st": self.v(TS[TXS.PREPARE_ABORT]),
                "ep": mep + 1,
                "last": mep,
                **{f"p{q}": z3.BoolVal(False) for q in range(self.P)},
            }
            w1, e1, T1 = self._transit(S, st, tgt, go_ongoing)
            w2, e2, T2 = self._transit(S, st, tgt_empty, empty_abort)
            self._ev["empty_abort"] = w2
            T = _merge(empty_abort, T2, T1)
            wrote = z3.Or(w1, w2)
            idle_err = z3.If(
                z3.And(z3.Not(committed), current),
                e2,
                z3.If(
                    z3.And(retry, same_complete),
                    self.v(E[Errors.NONE]),
                    z3.If(
                        z3.And(retry, st == TS[TXS.COMPLETE_COMMIT], z3.Not(committed)),
                        EITS,
                        z3.If(z3.And(current, committed), EITS, EPF),
                    ),
                ),
            )
            err = z3.If(
                bad_id,
                self.v(E[Errors.INVALID_PRODUCER_ID_MAPPING]),
                z3.If(
                    ongoing,
                    z3.If(current, e1, EPF),
                    z3.If(
                        in_prep,
                        # a Prepare* entry has CompleteX pending (_pending_of): Kafka 4.0 answers
                        # CONCURRENT_TRANSACTIONS first, 3.x after isValidEpoch (a retry's epoch is valid in Prepare*)
                        ECONC if self.cc.concurrent_before_epoch_check else z3.If(retry, ECONC, EPF),
                        z3.If(idle, idle_err, self.v(E[Errors.UNKNOWN_SERVER_ERROR])),
                    ),
                ),
            )
            retry_ok = z3.And(z3.Not(bad_id), idle, retry, same_complete, z3.Not(z3.And(z3.Not(committed), current)))
        else:
            fenced = (ep != mep) if from_client else (ep < mep)
            go = z3.And(cond, z3.Not(bad_id), z3.Not(fenced), ongoing)
            tgt = {"st": prep_x}
            wrote, e1, T = self._transit(S, st, tgt, go)
            # a Prepare* entry has CompleteX pending (_pending_of): CONCURRENT_TRANSACTIONS before the epoch check
            # (KAFKA-18464, Kafka 4.0) or, in Kafka 3.x's order, after it
            pending_first = in_prep if self.cc.concurrent_before_epoch_check else z3.BoolVal(False)
            err = z3.If(
                bad_id,
                self.v(E[Errors.INVALID_PRODUCER_ID_MAPPING]),
                z3.If(
                    pending_first,
                    ECONC,
                    z3.If(
                        fenced,
                        EPF,
                        z3.If(
                            in_prep,
                            ECONC,
                            z3.If(
                                ongoing,
                                e1,
                                z3.If(
                                    same_complete,
                                    self.v(E[Errors.NONE]),
                                    z3.If(idle, EITS, self.v(E[Errors.UNKNOWN_SERVER_ERROR])),
                                ),
                            ),
                        ),
                    ),
                ),
            )
            retry_ok = z3.And(z3.Not(bad_id), z3.Not(fenced), z3.Not(ongoing), same_complete)
        cons: list[Expr] = []
        self._prepare_and_markers(T, wrote, cons)
        rpid = z3.If(z3.Or(wrote, retry_ok), mpid, no)
        rep = z3.If(wrote, T["md.ep"] if self.tv < 2 else mep + 1, z3.If(retry_ok, mep, no))
        return err, rpid, rep, T, cons

    def _init_pid(
        self, S: State, exp_pid: Expr, exp_ep: Expr, cond: Expr
    ) -> tuple[Expr, Expr, Expr, State, list[Expr]]:
        """``handle_init_producer_id`` for the slice (one producer id; no epoch exhaustion within the bound)."""
        T = dict(S)
        new = z3.Not(S["md.on"])
        # a new entry: fresh producer id at epoch -1, Empty
        T["md.on"] = z3.BoolVal(True)
        T["md.pid"] = z3.If(new, S["npid"], S["md.pid"])
        T["md.ep"] = z3.If(new, self.v(-1), S["md.ep"])
        T["md.last"] = z3.If(new, self.v(-1), S["md.last"])
        T["md.st"] = z3.If(new, self.v(TS[TXS.EMPTY]), S["md.st"])
        T["md.started"] = z3.And(S["md.started"], z3.Not(new))
        for q in range(self.P):
            T[f"md.p{q}"] = z3.And(S[f"md.p{q}"], z3.Not(new))
        T["npid"] = z3.If(new, S["npid"] + 1, S["npid"])
        mpid, mep, mlast, st = T["md.pid"], T["md.ep"], T["md.last"], T["md.st"]
        fenced_id = z3.And(exp_pid >= 0, z3.Not(z3.Or(mep == -1, exp_pid == mpid)))
        in_prep = self.st_in(st, PREPARE)
        ongoing = st == TS[S_ONGOING]
        idle = self.st_in(st, (TXS.EMPTY, *COMPLETE))
        ok_path = z3.And(z3.Not(fenced_id), z3.Not(in_prep), z3.Not(ongoing), idle)
        bump_a = exp_ep < 0
        bump_b = z3.And(z3.Not(bump_a), z3.Or(exp_ep == mep, mep == -1))
        retry = z3.And(
            z3.Not(bump_a), z3.Not(bump_b), exp_ep == mlast, z3.BoolVal(self.flags.init_pid_retry_by_last_epoch)
        )
        # a KIP-360 retry keeps (epoch, last epoch) but still transitions to Empty through the log
        bump = z3.And(cond, ok_path, z3.Or(bump_a, bump_b, retry))
        target = {
            "st": self.v(TS[TXS.EMPTY]),
            "ep": z3.If(retry, mep, mep + 1),
            "last": z3.If(bump_a, self.v(-1), z3.If(retry, mlast, mep)),
            "started": z3.BoolVal(False),
            **{f"p{q}": z3.BoolVal(False) for q in range(self.P)},
        }
        w, terr, B = self._transit(T, st, target, bump)
        self._ev["epoch_bump"] = z3.And(w, z3.Not(retry))
        fence = z3.And(z3.Not(fenced_id), z3.Not(in_prep), ongoing)
        _ferr, F, fcons = self._fence_and_abort(T, z3.And(cond, fence))
        ECONC = self.v(E[Errors.CONCURRENT_TRANSACTIONS])
        err = z3.If(
            fenced_id,
            self.v(E[Errors.PRODUCER_FENCED]),
            z3.If(
                in_prep,
                ECONC,
                z3.If(
                    ongoing,
                    ECONC,
                    z3.If(
                        z3.Not(idle),
                        self.v(E[Errors.UNKNOWN_SERVER_ERROR]),
                        z3.If(z3.Or(bump_a, bump_b, retry), terr, self.v(E[Errors.PRODUCER_FENCED])),
                    ),
                ),
            ),
        )
        ok_ret = err == E[Errors.NONE]
        # the fence path answers CONCURRENT_TRANSACTIONS with the fenced (pid, epoch + 1) of its transit
        rpid = z3.If(fence, F["md.pid"], z3.If(ok_ret, B["md.pid"], self.v(-1)))
        rep = z3.If(fence, F["md.ep"], z3.If(ok_ret, B["md.ep"], self.v(-1)))
        U = _merge(fence, F, B)
        return err, rpid, rep, U, [z3.Implies(fence, c) for c in fcons]

    def _t_DeliverTxnRequest(self, S: State, c: int) -> tuple[Expr, State]:
        p, r = f"rq{c}", f"rs{c}"
        kind, pid, ep, com = S[f"{p}.kind"], S[f"{p}.pid"], S[f"{p}.ep"], S[f"{p}.com"]
        base = dict(S)
        base[f"{p}.live"] = z3.BoolVal(False)
        is_init, is_add = kind == 0, kind == 1
        e0, pid0, ep0, T0, c0 = self._init_pid(base, pid, ep, is_init)
        known = z3.And(base["md.on"], pid == base["md.pid"])
        e1, T1 = self._add_partitions(base, known, ep, [S[f"{p}.p{q}"] for q in range(self.P)], is_add)
        e2, pid2, ep2, T2, c2 = self._end_txn(base, z3.And(z3.Not(is_init), z3.Not(is_add)), pid, ep, com, True)
        T = _merge(is_init, T0, _merge(is_add, T1, T2))
        T[f"{r}.live"] = z3.BoolVal(True)
        T[f"{r}.kind"] = kind
        T[f"{r}.err"] = z3.If(is_init, e0, z3.If(is_add, e1, e2))
        T[f"{r}.pid"] = z3.If(is_init, pid0, z3.If(is_add, self.v(-1), pid2))
        T[f"{r}.ep"] = z3.If(is_init, ep0, z3.If(is_add, self.v(-1), ep2))
        for q in range(self.P):
            T[f"{r}.p{q}"] = z3.And(is_add, S[f"{p}.p{q}"])
        T[f"{r}.ord"] = self._ord(self.P)
        cons = [z3.Implies(is_init, x) for x in c0] + [
            z3.Implies(z3.And(z3.Not(is_init), z3.Not(is_add)), x) for x in c2
        ]
        return z3.And(S[f"{p}.live"], z3.Not(S[f"{r}.live"]), *cons), T

    def _t_DeliverTxnResponse(self, S: State, c: int) -> tuple[Expr, State]:
        r = f"rs{c}"
        T = dict(S)
        T[f"{r}.live"] = z3.BoolVal(False)
        handle = z3.And(S["c.conn"] == c, S["c.infl"])
        kind, err = S[f"{r}.kind"], S[f"{r}.err"]
        retriable = z3.Or([err == E[x] for x in tp.RETRIABLE_COORDINATOR_ERRORS if x in E])
        H = dict(T)
        H["c.infl"] = z3.BoolVal(False)
        fatal = dict(H)
        fatal["c.st"] = self.v(CS[C.FATAL_ERROR])
        fatal["c.fen"] = self._err_in(err, tp.FENCED_ERRORS)
        ok = err == E[Errors.NONE]
        # TransactionManager's error classes (tp.COORDINATOR_ERROR_CLASSES): abortable, else fatal/fenced
        not_aborting = S["c.st"] != CS[C.ABORTING]
        if_possible = (
            tuple(
                e for e, c in tp.COORDINATOR_ERROR_CLASSES["EndTxn"].items() if c == tp.ErrorClass.ABORTABLE_IF_POSSIBLE
            )
            if self.kip_360
            else ()
        )
        abortable_init = z3.And(not_aborting, self._err_in(err, (Errors.TRANSACTION_ABORTABLE,)))
        abortable_add = z3.And(not_aborting, self._err_in(err, (Errors.TRANSACTION_ABORTABLE, *if_possible)))
        # abortableErrorIfPossible sets epochBumpRequired, abortableError (TRANSACTION_ABORTABLE) does not
        abortable = self._classify_abortable(H, self._err_in(err, if_possible))
        # InitProducerId
        Ip = dict(H)
        Ip["d.pid"], Ip["d.ep"] = S[f"{r}.pid"], S[f"{r}.ep"]
        for q in range(self.P):
            Ip[f"d.q{q}.pe"], Ip[f"d.q{q}.ns"], Ip[f"d.q{q}.la"] = self.v(-1), self.v(0), self.v(-1)
            Ip[f"d.q{q}.unres"] = Ip[f"d.q{q}.rw"] = z3.BoolVal(False)
            Ip[f"d.q{q}.us"] = self.v(-1)
        for n in range(self.R):
            Ip[f"b{n}.on"] = z3.BoolVal(False)
        Ip["c.st"] = self.v(CS[C.READY])
        Ip["c.ebr"] = z3.BoolVal(False)
        Ip = _merge(ok, Ip, _merge(abortable_init, abortable, fatal))
        # AddPartitionsToTxn
        Ad = dict(H)
        for q in range(self.P):
            Ad[f"c.add{q}"] = z3.Or(S[f"c.add{q}"], S[f"{r}.p{q}"])
            Ad[f"c.pend{q}"] = z3.And(S[f"c.pend{q}"], z3.Not(S[f"{r}.p{q}"]))
        Ad = _merge(ok, Ad, _merge(abortable_add, abortable, fatal))
        # EndTxn
        committing = S["c.st"] == CS[C.COMMITTING]
        F = self._finish(H, S[f"{r}.pid"], S[f"{r}.ep"]) if self.tv >= 2 else self._finish(H, None, None)
        ended = z3.And(handle, kind == 2, ok)
        self._record_outcome(F, S["c.txn"], ended, committing)
        self._ev["client_txn_committed"] = z3.And(ended, committing)
        self._ev["client_txn_aborted"] = z3.And(ended, z3.Not(committing))
        En = _merge(ok, F, _merge(abortable_add, abortable, fatal))
        handled = _merge(kind == 0, Ip, _merge(kind == 1, Ad, En))
        handled = _merge(retriable, H, handled)
        return S[f"{r}.live"], _merge(handle, handled, T)

    def _err_in(self, err: Expr, names: Sequence[str]) -> Expr:
        return z3.Or([err == E[x] for x in names if x in E] or [z3.BoolVal(False)])

    def _classify_abortable(self, S: State, bump: Expr) -> State:
        """``_abortable`` for a coordinator answer (``bump``: it was ``abortableErrorIfPossible``'s)."""
        return self._classify(S, z3.BoolVal(False), bump)

    # -- markers ------------------------------------------------------------------------------------------

    def _marker_heads(self, S: State) -> list[Expr]:
        """Per marker slot: it is the oldest live marker (one channel ``tc->b0#0``); a linear prefix chain."""
        if self._heads_cache[0] is S:
            return self._heads_cache[1]
        heads, none_before = [], z3.BoolVal(True)
        for j in range(self.M):
            heads.append(z3.And(S[f"mk{j}.live"], none_before))
            none_before = z3.And(none_before, z3.Not(S[f"mk{j}.live"]))
        self._heads_cache = (S, heads)
        return heads

    def _t_DeliverMarker(self, S: State, q: int) -> tuple[Expr, State]:
        heads = self._marker_heads(S)

        def pick(f: str) -> Expr:
            return _ite([(h, S[f"mk{j}.{f}"]) for j, h in enumerate(heads)], self.v(-1))

        guard = z3.And(z3.Or(heads or [z3.BoolVal(False)]), pick("q") == q)
        mep = pick("ep")
        com = _ite([(h, S[f"mk{j}.com"]) for j, h in enumerate(heads)], z3.BoolVal(False))
        T = dict(S)
        for j, h in enumerate(heads):
            T[f"mk{j}.live"] = z3.And(S[f"mk{j}.live"], z3.Not(h))
        on, eep, first, ecep = S[f"q{q}.e.on"], S[f"q{q}.e.ep"], S[f"q{q}.e.first"], S[f"q{q}.e.cep"]
        if self.tv >= 2:
            retry = z3.And(mep == eep, first < 0) if self.flags.marker_retry_same_epoch else z3.BoolVal(False)
            stale = z3.And(on, mep <= eep, z3.Not(retry))
        else:
            stale = z3.And(on, mep < eep)
        cfenced = z3.And(on, z3.Not(stale), ecep > 0)
        write = z3.And(z3.Not(stale), z3.Not(cfenced))
        length = S[f"q{q}.len"]
        cons = self._log_append(T, q, write, mep, self.v(-1), self.v(-1), 0)
        for k in range(self.L[q]):
            at = z3.And(write, length == k)
            T[f"q{q}.l{k}.ctl"] = z3.If(at, z3.If(com, self.v(1), self.v(2)), T[f"q{q}.l{k}.ctl"])
        closes = z3.And(write, on, first >= 0)
        self._ev["txn_completed_on_partition"] = closes
        add_ab = z3.And(closes, z3.Not(com))
        nab = S[f"q{q}.nab"]
        for k in range(self.L[q]):
            hit = z3.And(add_ab, nab == k)
            T[f"q{q}.ab{k}.first"] = z3.If(hit, first, S[f"q{q}.ab{k}.first"])
            T[f"q{q}.ab{k}.last"] = z3.If(hit, length, S[f"q{q}.ab{k}.last"])
        T[f"q{q}.nab"] = z3.If(add_ab, nab + 1, nab)
        self._caps.append(z3.Implies(add_ab, nab < self.L[q]))
        reset = z3.And(write, z3.Or(z3.Not(on), eep != mep))
        T[f"q{q}.e.on"] = z3.Or(on, write)
        T[f"q{q}.e.ep"] = z3.If(write, mep, eep)
        T[f"q{q}.e.cnt"] = z3.If(reset, self.v(0), S[f"q{q}.e.cnt"])
        T[f"q{q}.e.cep"] = z3.If(write, self.v(0), ecep)
        T[f"q{q}.e.first"] = z3.If(write, self.v(-1), first)
        self._ev["marker_written"] = write
        # handle_marker_response
        md_match = z3.And(
            S["md.on"], self.st_in(S["md.st"], PREPARE), S["md.pid"] == 0, S["md.ep"] == mep, S[f"md.p{q}"]
        )
        go_on = z3.And(md_match, write)
        T[f"md.p{q}"] = z3.And(S[f"md.p{q}"], z3.Not(go_on))
        if self.flags.complete_after_markers:
            done = z3.And(go_on, *[z3.Not(T[f"md.p{x}"]) for x in range(self.P)])
            cons += [z3.Implies(done, c) for c in self._complete(T, done)]
        return z3.And(guard, *cons), T

    # -- faults --------------------------------------------------------------------------------------------

    def _faults_ok(self, S: State, kind: str) -> Expr:
        k = TXN_FAULT_KINDS.index(kind)
        used = z3.Sum([S[f"fu{x}"] for x in range(len(TXN_FAULT_KINDS))])
        return z3.And(S[f"fu{k}"] < self.limits[k], used < self.total)

    def _charge(self, S: State, T: State, action: str) -> None:
        k = TXN_FAULT_KINDS.index(FAULT_OF_ACTION[action])
        T[f"fu{k}"] = S[f"fu{k}"] + 1

    def _t_RequestTimeout(self, S: State, i: int) -> tuple[Expr, State]:
        T = dict(S)
        infl = S["c.infl"]
        T["c.infl"] = z3.BoolVal(False)
        T["c.conn"] = z3.If(infl, S["c.conn"] + 1, S["c.conn"])
        data = self._in_flight(S)
        T["d.conn"] = z3.If(data, S["d.conn"] + 1, S["d.conn"])
        T = self._clear_expired(T, range(self.R), data)  # cancelInFlightRequests (producer.request_timeout)
        failed = []
        for n in range(self.R):
            fl = z3.And(S[f"b{n}.on"], S[f"b{n}.fl"])
            give_up = z3.And(fl, S[f"b{n}.att"] > self.retries)
            T = self._fail_batch(T, n, give_up)
            T[f"b{n}.fl"] = z3.And(S[f"b{n}.fl"], z3.Not(fl))
            failed.append(give_up)
        T = _merge(z3.Or(failed or [z3.BoolVal(False)]), self._classify(T, z3.BoolVal(False)), T)
        self._charge(S, T, "RequestTimeout")
        return z3.And(self._faults_ok(S, "request_timeout"), z3.Or(infl, data)), T

    def _t_ExpireBatch(self, S: State, i: int, q: int) -> tuple[Expr, State]:
        firsts = self._first_of(S, q)
        expire = [z3.And(f, S[f"b{n}.att"] > 0) for f, n in zip(firsts, self.recs[q])]
        T = dict(S)
        # ord: the places 1..len(expired)
        last_ord = self._count([S[f"x{n}.on"] for n in range(self.R)])
        for e, n in zip(expire, self.recs[q]):
            # expire_batch: a batch expired in flight joins Producer.expired (its request's answer still counts)
            gone = z3.And(e, S[f"b{n}.fl"])
            T[f"x{n}.on"] = z3.Or(S[f"x{n}.on"], gone)
            T[f"x{n}.att"] = z3.If(gone, S[f"b{n}.att"], S[f"x{n}.att"])
            T[f"x{n}.seq"] = z3.If(gone, S[f"b{n}.seq"], S[f"x{n}.seq"])
            T[f"x{n}.ord"] = z3.If(gone, last_ord + 1, S[f"x{n}.ord"])
            T = self._fail_batch(T, n, e)
            # Sender: markSequenceUnresolved only for a batch in retry (ProducerBatch.inRetry)
            T = self._mark_unresolved(T, n, z3.And(e, z3.Or(S[f"b{n}.att"] > 1, z3.Not(S[f"b{n}.fl"]))))
        T = self._classify(T, z3.BoolVal(False))
        self._charge(S, T, "ExpireBatch")
        return z3.And(self._faults_ok(S, "batch_expiry"), z3.Or(expire or [z3.BoolVal(False)])), T

    def _t_TxnTimeout(self, S: State, t: int) -> tuple[Expr, State]:
        quiet = getattr(self, "_quiet", z3.BoolVal(False))
        guard = z3.And(z3.Or(quiet, self._faults_ok(S, "txn_timeout")), S["md.on"], S["md.st"] == TS[S_ONGOING])
        self._ev["timeout_abort"] = z3.BoolVal(True)
        if self.cc.timeout_abort_bumps_epoch:
            _e, T, cons = self._fence_and_abort(S, guard)
        else:
            F = dict(S)
            cons = self._record_fence(F, guard, S["md.ep"])
            _e, _p, _ep, T, more = self._end_txn(F, guard, S["md.pid"], S["md.ep"], z3.BoolVal(False), False)
            cons += more
        k = TXN_FAULT_KINDS.index(FAULT_OF_ACTION["TxnTimeout"])
        T[f"fu{k}"] = z3.If(quiet, S[f"fu{k}"], S[f"fu{k}"] + 1)
        return z3.And(guard, *cons), T

    # -- invariants ------------------------------------------------------------------------------------------

    def bad(self, S: State, name: str) -> Expr:
        return TXN_INVARIANTS[name](self, S)

    def _fate(self, S: State, n: int) -> tuple[Expr, Expr]:
        """(committed, aborted) for record ``n``: the first control batch after its last occurrence."""
        q = n % self.P
        L, ln = self.L[q], S[f"q{q}.len"]

        def lg(k: int, f: str) -> Expr:
            return S[f"q{q}.l{k}.{f}"]

        occ = [z3.And(k < ln, lg(k, "ctl") == 0, lg(k, "rec") == n) for k in range(L)]
        last = [z3.And(occ[k], *[z3.Not(o) for o in occ[k + 1 :]]) for k in range(L)]
        com, ab = [], []
        for k in range(L):
            for m in range(k + 1, L):
                first_ctl = z3.And(
                    m < ln, lg(m, "ctl") != 0, *[z3.Not(z3.And(x < ln, lg(x, "ctl") != 0)) for x in range(k + 1, m)]
                )
                com.append(z3.And(last[k], first_ctl, lg(m, "ctl") == 1))
                ab.append(z3.And(last[k], first_ctl, lg(m, "ctl") == 2))
        return z3.Or(com or [z3.BoolVal(False)]), z3.Or(ab or [z3.BoolVal(False)])

    def _network_empty(self, S: State) -> Expr:
        lives = [S[n] for n in self.schema if n.endswith(".live")]
        return z3.Not(z3.Or(lives))

    def _quiescent(self, S: State) -> Expr:
        return z3.And(self._network_empty(S), z3.Or(z3.Not(S["md.on"]), z3.Not(self.st_in(S["md.st"], ACTIVE))))

    def _bad_atomic(self, S: State) -> Expr:
        quiet = self._quiescent(S)
        out = []
        for x in range(self.TX):
            for r in range(self.RPT):
                n = x * self.RPT + r
                com, ab = self._fate(S, n)
                on, oc = S[f"out{x}.on"], S[f"out{x}.com"]
                out.append(z3.And(on, z3.Or(z3.And(oc, ab), z3.And(oc, quiet, z3.Not(com)), z3.And(z3.Not(oc), com))))
        return z3.Or(out or [z3.BoolVal(False)])

    def _bad_hanging(self, S: State) -> Expr:
        out = []
        for q in range(self.P):
            open_ = z3.And(S[f"q{q}.e.on"], S[f"q{q}.e.first"] >= 0)
            coord = z3.And(S["md.on"], self.st_in(S["md.st"], ACTIVE), S["md.pid"] == 0, S[f"md.p{q}"])
            marker = z3.Or([z3.And(S[f"mk{j}.live"], S[f"mk{j}.q"] == q) for j in range(self.M)] or [z3.BoolVal(False)])
            out.append(z3.And(open_, z3.Not(coord), z3.Not(marker)))
        return z3.Or(out)

    def _bad_lso(self, S: State) -> Expr:
        return z3.And(
            self._quiescent(S), z3.Or([z3.And(S[f"q{q}.e.on"], S[f"q{q}.e.first"] >= 0) for q in range(self.P)])
        )

    def _bad_markers(self, S: State) -> Expr:
        out = []
        for k in range(self.CC):
            for q in range(self.P):
                ctl = z3.If(S[f"cp{k}.com"], self.v(1), self.v(2))
                found = z3.Or(
                    [
                        z3.And(m < S[f"q{q}.len"], S[f"q{q}.l{m}.ctl"] == ctl, S[f"q{q}.l{m}.ep"] == S[f"cp{k}.ep"])
                        for m in range(self.L[q])
                    ]
                )
                out.append(z3.And(k < S["cp.n"], S[f"cp{k}.p{q}"], z3.Not(found)))
        return z3.Or(out or [z3.BoolVal(False)])

    def _bad_zombie(self, S: State) -> Expr:
        out = []
        fates = {n: self._fate(S, n)[0] for n in range(self.R)}
        for f in range(self.FC):
            for q in range(self.P):
                for k in range(self.L[q]):
                    rec = S[f"q{q}.l{k}.rec"]
                    committed = z3.Or([z3.And(rec == n, fates[n]) for n in self.recs[q]] or [z3.BoolVal(False)])
                    out.append(
                        z3.And(
                            f < S["fn.n"],
                            k < S[f"q{q}.len"],
                            k >= S[f"fn{f}.end{q}"],
                            S[f"q{q}.l{k}.ctl"] == 0,
                            S[f"q{q}.l{k}.ep"] <= S[f"fn{f}.ep"],
                            committed,
                        )
                    )
        return z3.Or(out or [z3.BoolVal(False)])


S_ONGOING = TXS.ONGOING

#: Invariant name -> symbolic violation (``invariants/transactions.py``).
TXN_INVARIANTS: dict[str, Callable[[TxnEncoding, State], Expr]] = {
    "atomic_commit": TxnEncoding._bad_atomic,
    "no_hanging_transaction": TxnEncoding._bad_hanging,
    "lso_reaches_high_watermark": TxnEncoding._bad_lso,
    "markers_before_complete": TxnEncoding._bad_markers,
    "zombie_fencing": TxnEncoding._bad_zombie,
}
