"""A z3 encoding of the idempotence core: one symbolic step of :class:`model.systems.idempotence.KafkaSystem`.

The encoding restates, over z3 integers and booleans, the step function the
executable model runs in Python: the idempotent client (``Sender`` /
``TransactionManager`` retries, expiry, KIP-360 resolution and epoch bump),
the partition leader's ``ProducerStateManager`` (duplicate cache, epoch and
sequence checks, in :data:`model.log.producer_state.VALIDATION_STEPS` order), the
FIFO network with connection resets and duplicated messages, leader failover
with the producer state rebuilt from the kept log, and the fault budgets.

Every rule parameter comes from the same data the model uses -- the variant's
:class:`~model.variants.ProtocolFlags` (``check_epoch``, ``check_sequence``,
``duplicate_window``, ``sequence_space``, ``force_idempotence_off``), the
validated :class:`~model.clients.producer_config.ProducerConfig`, the scenario's topology and
:class:`~model.systems.idempotence.FaultBudget` (:data:`~model.systems.idempotence.FAULT_KINDS` order),
and the validation table.  ``tests/test_bmc.py`` checks that the encoding *is*
the model: for concrete states reached by breadth-first search, every action
of the encoding's alphabet is enabled in z3 exactly when ``KafkaSystem.step``
accepts it, and the z3 successor, turned back into a ``SystemState``, equals
the Python successor.

Representation (bounded, exact within the bounds, which are sized so that
``depth`` steps cannot exceed them):

* each producer's batches are indexed by record number (batches are created in
  record order and only removed, so the client's batch tuple is the present
  records in ascending order; each batch holds one record);
* each producer's ``Producer.expired`` (batches ``delivery.timeout.ms`` failed
  while their request was in flight, whose NONE / DUPLICATE_SEQUENCE_NUMBER
  answer still raises the partition's last acknowledged sequence:
  ``producer._late_answer``) is indexed by record number too (a one-record
  batch expires once): the request's attempt, the batch's last sequence and an
  ``ord`` key, the entry's 1-based place in the tuple (kept dense: a removed
  entry moves the later ones up, so each tuple has one encoding); emptied when
  the connection is cancelled with requests in flight (``request_timeout``) and
  on a producer restart;
* the network is a set of *slots*: slot ``j`` is created by at most one step
  and its content never changes, only its ``live`` bit; an ``order`` key keeps
  TCP's per-connection FIFO order (a duplicated message takes its original's
  key, ties broken by slot index);
* each partition's log is an array with a length and a high watermark; the
  leader's per-producer-id table holds the epoch and a shift register of the
  last ``duplicate_window`` cached batches (slot 0 = newest).

Values are unbounded integers (``bitvector=False``, used by the broker-core
induction proof, where requests are arbitrary) or signed bit-vectors whose
width holds every value reachable within ``depth`` steps (``bitvector=True``,
used by BMC; :meth:`Encoding._value_bound` gives the argument).  The tests
cross-check both domains against ``KafkaSystem.step``.

Not covered (``covers`` says why): ``acks=0`` and ``ReorderMessage`` budgets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import z3

from keos.model import network as net
from keos.model.clients import producer as prod
from keos.model.interface import Action
from keos.model.log import partition as part
from keos.model.log.producer_state import VALIDATION_STEPS, BatchMetadata, ProducerStateEntry
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse
from keos.model.systems.idempotence import BROKER, FAULT_KINDS, FAULT_OF_ACTION, Ghost, KafkaSystem, SystemState

__all__ = ["ERROR_CODES", "Encoding", "Template", "covers", "fold_validation"]

#: Response errors the leader can return, as small integers.
ERROR_CODES: tuple[str, ...] = (
    Errors.NONE,
    Errors.INVALID_PRODUCER_EPOCH,
    Errors.OUT_OF_ORDER_SEQUENCE_NUMBER,
    Errors.DUPLICATE_SEQUENCE_NUMBER,
)

#: Fields of a network slot (request and response share them).
#: ``rec`` and ``att`` name the request (its batch's first record and attempt: ``producer.correlation_id``); a
#: response carries its request's.
SLOT_FIELDS = ("prod", "conn", "part", "pid", "ep", "seq", "rec", "att", "err", "off", "order")

Expr = Any  # z3 ExprRef (untyped in z3's stubs)
State = dict[str, Expr]


def covers(model: KafkaSystem) -> tuple[bool, str]:
    """Whether the encoding covers this model instance, and why not."""
    if model.producer_config.acks == "0":
        return False, "acks=0 (completion on send) is not encoded"
    if model.config.faults.limits()[FAULT_KINDS.index("reorder")] > 0 and model.config.faults.total > 0:
        return False, "ReorderMessage (non-FIFO delivery) is not encoded"
    if model.config.topology.records_per_batch > 1:
        return False, "batches of several records (records_per_batch) are not encoded"
    if model.flags.defer_bump_until_resolved:
        return False, "defer_bump_until_resolved (the KAFKA-14034 fix) is not encoded"
    if not model.flags.resolve_by_last_acked_sequence:
        return False, "resolve_by_last_acked_sequence off (every expired batch bumps) is not encoded"
    if not model.flags.retry_by_unresolved_sequence:
        return False, "retry_by_unresolved_sequence off (canRetry ignoring an unresolved sequence) is not encoded"
    if not model.flags.bump_on_next_sequence_refusal:
        return False, "bump_on_next_sequence_refusal off (the next sequence retried unchanged) is not encoded"
    if model.config.separate_replication:  # ExpireDelayedProduce (the purgatory's REQUEST_TIMED_OUT) needs it too
        return False, "separate_replication (acks=all answered after a ReplicatePartition step) is not encoded"
    if not model.flags.truncation_rebuilds_producer_state:
        return False, "truncation_rebuilds_producer_state off (producer state kept across a failover) is not encoded"
    if model.config.producer_id_expiration:
        return False, "producer_id_expiration (ExpireProducerState) is not encoded"
    if model.config.delete_records:
        return False, "delete_records (DeleteRecords: the log start offset) is not encoded"
    if model.config.read_uncommitted_consumer:
        return False, "read_uncommitted_consumer (a consumer's Fetch and position) is not encoded"
    if model.config.faults.limits()[FAULT_KINDS.index("not_leader")] > 0 and model.config.faults.total > 0:
        return False, "NotLeaderOrFollower (a NOT_LEADER_OR_FOLLOWER answer) is not encoded"
    if model.config.faults.limits()[FAULT_KINDS.index("leader_move")] > 0 and model.config.faults.total > 0:
        return False, "MoveLeader (a leadership move with the clients connected) is not encoded"
    if model.config.faults.limits()[FAULT_KINDS.index("forged_sequence")] > 0 and model.config.faults.total > 0:
        return False, "ForgedProduce (a misbehaving client's batch) is not encoded"
    return True, ""


@dataclass(frozen=True)
class Template:
    """One entry of the per-step action alphabet; ``message`` templates pick a slot symbolically."""

    kind: str
    args: tuple[int, ...] = ()
    message: bool = False


def _ite(pairs: Sequence[tuple[Expr, Expr]], default: Expr) -> Expr:
    out = default
    for cond, val in reversed(pairs):
        out = z3.If(cond, val, out)
    return out


def _num(v: Expr) -> int:
    """A z3 numeral as a Python int (bit-vectors read as two's complement)."""
    return int(v.as_signed_long()) if z3.is_bv_value(v) else int(v.as_long())


def fold_validation(
    rules: dict[str, Callable[[], tuple[Expr, Expr]]],
    flags: Any,
    code: Callable[[str], Expr],
    val: Callable[[int], Expr],
) -> tuple[Expr, Expr, Expr]:
    """The leader's validation as one expression: :data:`VALIDATION_STEPS` folded from the last rule back.

    ``rules[name]()`` gives ``(fires, duplicate offset)`` for each rule; a rule
    switched off by ``flags`` is skipped; the first enabled rule that fires
    decides ``(error code, duplicate offset or -1, append?)``.  Both encodings
    (idempotence and transactions) read the table through this one function.
    """
    err: Expr = code(Errors.NONE)
    dup: Expr = val(-1)
    append: Expr = z3.BoolVal(True)
    for step in reversed(VALIDATION_STEPS):
        if step.switch is not None and not getattr(flags, step.switch):
            continue
        fires, offset = rules[step.name]()
        if step.outcome == "duplicate":
            e_code, d_off, app = code(Errors.NONE), offset, z3.BoolVal(False)
        elif step.outcome == "append":
            e_code, d_off, app = code(Errors.NONE), val(-1), z3.BoolVal(True)
        else:
            e_code, d_off, app = code(step.outcome), val(-1), z3.BoolVal(False)
        err, dup, append = z3.If(fires, e_code, err), z3.If(fires, d_off, dup), z3.If(fires, app, append)
    return err, dup, append


def _merge(cond: Expr, a: State, b: State) -> State:
    """``If(cond, a, b)`` key by key (keys whose expressions are identical stay shared)."""
    out = dict(b)
    for k, v in a.items():
        if v is not b[k]:
            out[k] = z3.If(cond, v, b[k])
    return out


class Encoding:
    """The symbolic transition system of one model instance, for ``depth`` steps.

    ``init_slots`` / ``log_slack`` / ``pid_slack`` enlarge the bounded arrays so
    that a concrete state (from :meth:`abstract`) fits as the initial state.
    """

    def __init__(
        self,
        model: KafkaSystem,
        depth: int,
        init_slots: int = 0,
        log_slack: int = 0,
        pid_slack: int = 0,
        bitvector: bool = False,
        value_slack: int = 0,
    ):
        ok, why = covers(model)
        if not ok:
            raise ValueError(f"the bmc encoding does not cover this model: {why}")
        self.model = model
        cfg = model.config
        self.flags = model.flags
        self.pc = model.producer_config
        self.idem = self.pc.enable_idempotence
        self.space = self.flags.sequence_space
        self.window = self.flags.duplicate_window
        self.N = cfg.topology.producers
        self.P = cfg.topology.partitions
        self.R = cfg.topology.records_per_producer
        self.limits = cfg.faults.limits()
        self.total = cfg.faults.total
        self.max_epoch = cfg.max_producer_epoch
        self.depth = depth
        self.init_slots = init_slots
        self.nslots = init_slots + depth
        # appends <= requests ever created: each batch is sent at most retries + 1 times, plus duplicates
        sends = self.N * self.R * (self.pc.retries + 1) + min(self.limits[FAULT_KINDS.index("duplicate")], self.total)
        self.L = max(1, log_slack + min(depth, sends))
        restarts = min(self.limits[FAULT_KINDS.index("producer_restart")], self.total)
        overflow = depth if self.max_epoch < depth else 0
        self.npids = max(1, self.N * (1 + restarts) + overflow + pid_slack)
        self.templates = self._alphabet()
        self.bound = self._value_bound(value_slack)
        #: Bit-vector width (``None``: unbounded integers).  See :meth:`_value_bound` for why it is exact.
        self.bits: int | None = (self.bound + 1).bit_length() + 1 if bitvector else None
        self.big_space = self.space > 2 * self.bound + 4
        self._ev: dict[str, Expr] = {}
        self.step_events: dict[str, Expr] = {}
        self.schema = self._schema()
        self.slot = [
            {f: self._slot_var(j, f) for f in SLOT_FIELDS} | {"isreq": z3.Bool(f"m{j}.isreq")}
            for j in range(self.nslots)
        ]

    # -- value domain -----------------------------------------------------------------------------

    def _value_bound(self, slack: int) -> int:
        """An upper bound ``B`` on every integer the encoding can hold within ``depth`` steps.

        Every integer state variable is either an index into a bounded array
        (producer, partition, record ``< N*R``, log offset ``< L``, producer id
        ``< npids``, slot order ``< nslots``, template ``< len(templates)``,
        cache count ``<= window``, error code, an expired batch's place
        ``<= R``), or a counter that a step raises
        by at most one from its value in the initial state: connection,
        producer epoch (bump), next sequence (one per stamped batch), attempts,
        leader epoch, fault use, next record, next producer id.  So after
        ``depth`` steps every value lies in ``[-2, B]`` with ``B`` = the largest
        index plus ``depth`` plus the initial values (``value_slack``, for a
        concrete initial state), and the signed bit-vector width holds ``B + 1``
        (the ``x + 1`` a step computes) without overflow.  Constants outside
        the domain are decided statically: with ``sequence_space > 2B + 4`` no
        reachable sequence wraps (``_next_seq`` is ``+ 1``, exactly as the modular
        definition on ``[-1, B]``), and with
        ``max_producer_epoch > B`` no bump overflows.  Small sequence spaces and
        epoch limits are kept as constants inside the domain.
        """
        idx = max(
            self.N * self.R,
            self.L,
            self.npids,
            self.nslots,
            len(self.templates),
            self.window,
            len(ERROR_CODES),
            self.pc.retries + 2,
            self.pc.max_in_flight,
            self.P,
            self.N,
            len(FAULT_KINDS),
        )
        bound = idx + self.depth + slack + self.R + 2
        if self.space <= 2 * bound + 4:
            bound = max(bound, self.space)
        if self.max_epoch <= bound:
            bound = max(bound, self.max_epoch + 1)
        return bound

    def var(self, name: str) -> Expr:
        """A fresh integer variable of the encoding's domain."""
        return z3.Int(name) if self.bits is None else z3.BitVec(name, self.bits)

    def val(self, v: int) -> Expr:
        """An integer constant of the encoding's domain."""
        return z3.IntVal(v) if self.bits is None else z3.BitVecVal(v, self.bits)

    def _count(self, conds: Sequence[Expr]) -> Expr:
        return z3.Sum([z3.If(c, self.val(1), self.val(0)) for c in conds]) if conds else self.val(0)

    # -- vocabulary -----------------------------------------------------------------------------

    def _alphabet(self) -> list[Template]:
        t: list[Template] = []
        for i in range(self.N):
            if self.idem:
                t.append(Template("InitProducerId", (i,)))
            t.append(Template("Send", (i,)))
            if self.idem:
                t.append(Template("BumpEpoch", (i,)))
            for q in range(self.P):
                if self.idem:
                    t.append(Template("ResolveSequence", (i, q)))
                t.append(Template("SendProduce", (i, q)))
        for q in range(self.P):
            t.append(Template("DeliverRequest", (q,), True))
        for i in range(self.N):
            t.append(Template("DeliverResponse", (i,), True))
        if self.pc.acks == "1":
            t.extend(Template("ReplicatePartition", (q,)) for q in range(self.P))
        lim = dict(zip(FAULT_KINDS, self.limits))
        if self.total > 0:
            if lim["drop"]:
                t.extend(Template("DropMessage", (i,), True) for i in range(self.N))
            if lim["duplicate"]:
                t.append(Template("DuplicateMessage", (), True))
            if lim["request_timeout"]:
                t.extend(Template("RequestTimeout", (i,)) for i in range(self.N))
            if lim["batch_expiry"]:
                t.extend(Template("ExpireBatch", (i, q)) for i in range(self.N) for q in range(self.P))
            if lim["leader_restart"]:
                t.append(Template("RestartLeader"))
            if lim["producer_restart"]:
                t.extend(Template("RestartProducer", (i,)) for i in range(self.N))
        return t

    def _slot_var(self, j: int, f: str) -> Expr:
        return self.var(f"m{j}.{f}")

    def _schema(self) -> dict[str, bool]:
        """State variable names -> is boolean."""
        s: dict[str, bool] = {}
        for i in range(self.N):
            for f in ("pid", "ep", "conn", "next"):
                s[f"p{i}.{f}"] = False
            s[f"p{i}.bump"] = True
            for q in range(self.P):
                for f in ("pe", "ns", "la", "us"):
                    s[f"p{i}.q{q}.{f}"] = False
                s[f"p{i}.q{q}.unres"] = True
                s[f"p{i}.q{q}.rw"] = True
            for n in range(self.R):
                s[f"p{i}.b{n}.on"] = True
                s[f"p{i}.b{n}.fl"] = True
                for f in ("ep", "seq", "att"):
                    s[f"p{i}.b{n}.{f}"] = False
                s[f"ack{i}.{n}"] = True
                s[f"fail{i}.{n}"] = True
                # Producer.expired: record n's batch expired in flight (its request's attempt, last sequence and
                # place in the tuple: ``ord``, 1-based, larger = later)
                s[f"p{i}.x{n}.on"] = True
                for f in ("att", "seq", "ord"):
                    s[f"p{i}.x{n}.{f}"] = False
        for q in range(self.P):
            for f in ("len", "hw", "lep"):
                s[f"q{q}.{f}"] = False
            for k in range(self.L):
                for f in ("pid", "ep", "seq", "rec"):
                    s[f"q{q}.l{k}.{f}"] = False
            for e in range(self.npids):
                s[f"q{q}.e{e}.on"] = True
                s[f"q{q}.e{e}.ep"] = False
                s[f"q{q}.e{e}.cnt"] = False
                for w in range(self.window):
                    s[f"q{q}.e{e}.c{w}.seq"] = False
                    s[f"q{q}.e{e}.c{w}.off"] = False
        for j in range(self.nslots):
            s[f"live{j}"] = True
        s["npid"] = False
        for k in range(len(FAULT_KINDS)):
            s[f"fu{k}"] = False
        return s

    def state(self, t: int | str) -> State:
        """Fresh state variables for step ``t``."""
        return {n: (z3.Bool(f"{n}@{t}") if b else self.var(f"{n}@{t}")) for n, b in self.schema.items()}

    # -- initial state, abstraction and concretisation --------------------------------------------

    def abstract(self, s: SystemState) -> dict[str, Any]:
        """Values of the state variables (and slot contents) for a concrete state."""
        v: dict[str, Any] = {}
        for i, p in enumerate(s.producers):
            v[f"p{i}.pid"], v[f"p{i}.ep"], v[f"p{i}.conn"], v[f"p{i}.next"] = (
                p.producer_id,
                p.producer_epoch,
                p.connection,
                p.next_record,
            )
            v[f"p{i}.bump"] = p.epoch_bump_required
            for q, te in enumerate(p.partitions):
                v[f"p{i}.q{q}.pe"], v[f"p{i}.q{q}.ns"], v[f"p{i}.q{q}.la"] = (
                    te.producer_epoch,
                    te.next_sequence,
                    te.last_acked_sequence,
                )
                v[f"p{i}.q{q}.unres"], v[f"p{i}.q{q}.rw"] = te.unresolved, te.rewrite
                v[f"p{i}.q{q}.us"] = te.unresolved_sequence
            present = {prod.record_owner(b.records[0])[1]: b for b in p.batches}
            for n in range(self.R):
                b = present.get(n)
                v[f"p{i}.b{n}.on"] = b is not None
                v[f"p{i}.b{n}.fl"] = bool(b and b.in_flight)
                v[f"p{i}.b{n}.ep"] = b.producer_epoch if b else -1
                v[f"p{i}.b{n}.seq"] = b.base_sequence if b else -1
                v[f"p{i}.b{n}.att"] = b.attempts if b else 0
                rid = prod.record_id(i, n)
                v[f"ack{i}.{n}"] = rid in s.ghost.acked
                v[f"fail{i}.{n}"] = rid in s.ghost.failed
                v[f"p{i}.x{n}.on"], v[f"p{i}.x{n}.att"], v[f"p{i}.x{n}.seq"], v[f"p{i}.x{n}.ord"] = False, 0, -1, 0
            for pos, (cid, _q, last) in enumerate(p.expired):
                rid, att = divmod(cid, prod.MAX_ATTEMPTS)
                n = prod.record_owner(rid)[1]
                v[f"p{i}.x{n}.on"], v[f"p{i}.x{n}.att"] = True, att
                v[f"p{i}.x{n}.seq"], v[f"p{i}.x{n}.ord"] = last, pos + 1
        for q, leader in enumerate(s.partitions):
            v[f"q{q}.len"], v[f"q{q}.hw"], v[f"q{q}.lep"] = len(leader.log), leader.high_watermark, leader.leader_epoch
            for k in range(self.L):
                le = leader.log[k] if k < len(leader.log) else None
                v[f"q{q}.l{k}.pid"] = le.producer_id if le else -1
                v[f"q{q}.l{k}.ep"] = le.producer_epoch if le else -1
                v[f"q{q}.l{k}.seq"] = le.base_sequence if le else -1
                v[f"q{q}.l{k}.rec"] = self._flat(le.records[0]) if le else -1
            for e in range(self.npids):
                ent: ProducerStateEntry | None = leader.entry(e)
                v[f"q{q}.e{e}.on"] = ent is not None
                v[f"q{q}.e{e}.ep"] = ent.producer_epoch if ent else -1
                v[f"q{q}.e{e}.cnt"] = len(ent.batches) if ent else 0
                newest = list(reversed(ent.batches)) if ent else []
                for w in range(self.window):
                    meta = newest[w] if w < len(newest) else None
                    v[f"q{q}.e{e}.c{w}.seq"] = meta.first_seq if meta else -1
                    v[f"q{q}.e{e}.c{w}.off"] = meta.offset if meta else -1
        for j in range(self.nslots):
            v[f"live{j}"] = j < len(s.network)
        v["npid"] = s.next_producer_id
        for k, u in enumerate(s.faults_used):
            v[f"fu{k}"] = u
        for j, env in enumerate(s.network):
            body = env.body
            isreq = isinstance(body, ProduceRequest)
            v[f"m{j}.isreq"] = isreq
            v[f"m{j}.prod"] = body.producer
            v[f"m{j}.conn"] = env.connection
            v[f"m{j}.part"] = body.partition
            v[f"m{j}.pid"] = body.producer_id if isreq else 0
            v[f"m{j}.ep"] = body.producer_epoch
            v[f"m{j}.seq"] = body.base_sequence
            rid, att = divmod(body.correlation_id, prod.MAX_ATTEMPTS)
            v[f"m{j}.rec"] = self._flat(rid)
            v[f"m{j}.att"] = att
            v[f"m{j}.err"] = 0 if isreq else ERROR_CODES.index(body.error)
            v[f"m{j}.off"] = 0 if isreq else body.base_offset
            v[f"m{j}.order"] = j
        return v

    def _flat(self, rid: int) -> int:
        i, n = prod.record_owner(rid)
        return i * self.R + n

    def _rid(self, flat: int) -> int:
        return prod.record_id(flat // self.R, flat % self.R)

    def equal_to(self, S: State, values: dict[str, Any], slots: bool = True) -> Expr:
        """Constraint: ``S`` (and the slot contents) take the given values."""
        eqs = [S[n] == values[n] for n in self.schema]
        if slots:
            for j in range(self.nslots):
                if f"m{j}.isreq" in values:
                    eqs.append(self.slot[j]["isreq"] == values[f"m{j}.isreq"])
                    eqs.extend(self.slot[j][f] == values[f"m{j}.{f}"] for f in SLOT_FIELDS)
        return z3.And(eqs)

    def initial(self, S: State) -> Expr:
        """Constraint: ``S`` is the model's initial state."""
        return self.equal_to(S, self.abstract(self.model.init_states()[0]), slots=False)

    def envelope(self, m: z3.ModelRef, j: int) -> net.Envelope:
        """The network envelope held by slot ``j`` in a z3 model."""
        val = {f: _num(m.eval(self.slot[j][f], model_completion=True)) for f in SLOT_FIELDS}
        isreq = z3.is_true(m.eval(self.slot[j]["isreq"], model_completion=True))
        cid = self._rid(val["rec"]) * prod.MAX_ATTEMPTS + val["att"]
        if isreq:
            body: Any = ProduceRequest(
                val["prod"],
                val["conn"],
                val["part"],
                val["pid"],
                val["ep"],
                val["seq"],
                (self._rid(val["rec"]),),
                correlation_id=cid,
            )
            return net.Envelope(f"p{val['prod']}", BROKER, val["conn"], body)
        body = ProduceResponse(
            val["prod"], val["conn"], val["part"], val["ep"], val["seq"], ERROR_CODES[val["err"]], val["off"], cid
        )
        return net.Envelope(BROKER, f"p{val['prod']}", val["conn"], body)

    def concretize(self, m: z3.ModelRef, S: State) -> SystemState:
        """The ``SystemState`` a z3 model assigns to ``S`` (inverse of :meth:`abstract`)."""

        def iv(name: str) -> int:
            return int(_num(m.eval(S[name], model_completion=True)))

        def bv(name: str) -> bool:
            return bool(z3.is_true(m.eval(S[name], model_completion=True)))

        producers = []
        acked: list[int] = []
        failed: list[int] = []
        for i in range(self.N):
            entries = tuple(
                prod.TxnPartitionEntry(
                    iv(f"p{i}.q{q}.pe"),
                    iv(f"p{i}.q{q}.ns"),
                    iv(f"p{i}.q{q}.la"),
                    bv(f"p{i}.q{q}.unres"),
                    bv(f"p{i}.q{q}.rw"),
                    iv(f"p{i}.q{q}.us"),
                )
                for q in range(self.P)
            )
            batches = tuple(
                prod.ProducerBatch(
                    n % self.P,
                    (prod.record_id(i, n),),
                    iv(f"p{i}.b{n}.ep"),
                    iv(f"p{i}.b{n}.seq"),
                    bv(f"p{i}.b{n}.fl"),
                    iv(f"p{i}.b{n}.att"),
                )
                for n in range(self.R)
                if bv(f"p{i}.b{n}.on")
            )
            producers.append(
                prod.Producer(
                    iv(f"p{i}.pid"),
                    iv(f"p{i}.ep"),
                    iv(f"p{i}.conn"),
                    iv(f"p{i}.next"),
                    entries,
                    batches,
                    bv(f"p{i}.bump"),
                    self._expired(i, iv, bv),
                )
            )
            acked.extend(prod.record_id(i, n) for n in range(self.R) if bv(f"ack{i}.{n}"))
            failed.extend(prod.record_id(i, n) for n in range(self.R) if bv(f"fail{i}.{n}"))
        partitions = []
        for q in range(self.P):
            length = iv(f"q{q}.len")
            log = tuple(
                part.LogEntry(
                    iv(f"q{q}.l{k}.pid"), iv(f"q{q}.l{k}.ep"), iv(f"q{q}.l{k}.seq"), (self._rid(iv(f"q{q}.l{k}.rec")),)
                )
                for k in range(length)
            )
            ents = []
            for e in range(self.npids):
                if not bv(f"q{q}.e{e}.on"):
                    continue
                cnt = iv(f"q{q}.e{e}.cnt")
                metas = tuple(
                    BatchMetadata(iv(f"q{q}.e{e}.c{w}.seq"), iv(f"q{q}.e{e}.c{w}.seq"), iv(f"q{q}.e{e}.c{w}.off"))
                    for w in reversed(range(cnt))
                )
                ents.append(ProducerStateEntry(e, iv(f"q{q}.e{e}.ep"), metas))
            partitions.append(part.PartitionLeader(log, iv(f"q{q}.hw"), tuple(sorted(ents)), iv(f"q{q}.lep")))
        live = [
            (_num(m.eval(self.slot[j]["order"], model_completion=True)), j)
            for j in range(self.nslots)
            if bv(f"live{j}")
        ]
        network = tuple(self.envelope(m, j) for _, j in sorted(live))
        faults = tuple(iv(f"fu{k}") for k in range(len(FAULT_KINDS)))
        return SystemState(
            tuple(producers),
            tuple(partitions),
            network,
            iv("npid"),
            faults,
            Ghost(tuple(sorted(acked)), tuple(sorted(failed))),
        )

    def _expired(self, i: int, iv: Callable[[str], int], bv: Callable[[str], bool]) -> tuple[tuple[int, int, int], ...]:
        """``Producer.expired`` of producer ``i``: (correlation id, partition, last sequence) in ``ord`` order."""
        present = sorted((iv(f"p{i}.x{n}.ord"), n) for n in range(self.R) if bv(f"p{i}.x{n}.on"))
        return tuple(
            (prod.record_id(i, n) * prod.MAX_ATTEMPTS + iv(f"p{i}.x{n}.att"), n % self.P, iv(f"p{i}.x{n}.seq"))
            for _, n in present
        )

    # -- symbolic helpers -----------------------------------------------------------------------

    def _next_seq(self, seq: Expr) -> Expr:
        """``next_sequence(seq, 1, space)`` for ``-1 <= seq < space``."""
        if self.bits is not None and self.big_space:
            return seq + 1  # no reachable sequence wraps (see _value_bound)
        return z3.If(seq + 1 >= self.space, seq + 1 - self.space, seq + 1)

    def _in_flight(self, S: State, i: int) -> Expr:
        return self._count([z3.And(S[f"p{i}.b{n}.on"], S[f"p{i}.b{n}.fl"]) for n in range(self.R)])

    def _records_of(self, q: int) -> list[int]:
        return [n for n in range(self.R) if n % self.P == q]

    def _seq_outstanding(self, S: State, i: int, q: int) -> Expr:
        return z3.Or([z3.And(S[f"p{i}.b{n}.on"], S[f"p{i}.b{n}.seq"] >= 0) for n in self._records_of(q)] or [False])

    def _fail(self, S: State, i: int, n: int, cond: Expr) -> State:
        """``producer._fail`` of batch ``n`` when ``cond`` (sequences not adjusted); records it failed."""
        T = dict(S)
        T[f"p{i}.b{n}.on"] = z3.And(S[f"p{i}.b{n}.on"], z3.Not(cond))
        T[f"fail{i}.{n}"] = z3.Or(S[f"fail{i}.{n}"], cond)
        return T

    def _mark_unresolved(self, S: State, i: int, n: int, cond: Expr) -> State:
        """``producer._mark_unresolved`` for batch ``n`` when ``cond`` (an expired batch in retry)."""
        T = dict(S)
        q = n % self.P
        mark = z3.And(
            cond, S[f"p{i}.b{n}.seq"] >= 0, S[f"p{i}.b{n}.att"] > 0, S[f"p{i}.q{q}.pe"] == S[f"p{i}.b{n}.ep"]
        )
        T[f"p{i}.q{q}.unres"] = z3.Or(S[f"p{i}.q{q}.unres"], mark)
        # markSequenceUnresolved keeps the largest sequence after a failed batch (plain lastSequence() + 1)
        after, us = S[f"p{i}.b{n}.seq"] + 1, S[f"p{i}.q{q}.us"]
        T[f"p{i}.q{q}.us"] = z3.If(z3.And(mark, after > us), after, us)
        return T

    def _request_timeout(self, S: State, i: int) -> State:
        """``producer.request_timeout`` effects (the caller guards ``in_flight > 0`` where needed)."""
        T = dict(S)
        T[f"p{i}.conn"] = S[f"p{i}.conn"] + 1
        # cancelInFlightRequests drops the requests of batches expired in flight, when a request is in flight
        # (producer.request_timeout; a reset connection with none in flight keeps Producer.expired)
        T = self._clear_expired(T, i, self._in_flight(S, i) > 0)
        for n in range(self.R):
            fl = z3.And(S[f"p{i}.b{n}.on"], S[f"p{i}.b{n}.fl"])
            give_up = z3.And(fl, S[f"p{i}.b{n}.att"] > self.pc.retries)
            T = self._fail(T, i, n, give_up)
            T[f"p{i}.b{n}.fl"] = z3.And(S[f"p{i}.b{n}.fl"], z3.Not(fl))
        return T

    def _clear_expired(self, S: State, i: int, cond: Expr) -> State:
        """``Producer.expired`` emptied when ``cond``."""
        T = dict(S)
        for n in range(self.R):
            T[f"p{i}.x{n}.on"] = z3.And(S[f"p{i}.x{n}.on"], z3.Not(cond))
            T[f"p{i}.x{n}.att"] = z3.If(cond, self.val(0), S[f"p{i}.x{n}.att"])
            T[f"p{i}.x{n}.seq"] = z3.If(cond, self.val(-1), S[f"p{i}.x{n}.seq"])
            T[f"p{i}.x{n}.ord"] = z3.If(cond, self.val(0), S[f"p{i}.x{n}.ord"])
        return T

    def _faults_ok(self, S: State, kind: str) -> Expr:
        k = FAULT_KINDS.index(kind)
        used = z3.Sum([S[f"fu{x}"] for x in range(len(FAULT_KINDS))])
        return z3.And(S[f"fu{k}"] < self.limits[k], used < self.total)

    def _charge(self, S: State, T: State, kind: str) -> None:
        k = FAULT_KINDS.index(kind)
        T[f"fu{k}"] = S[f"fu{k}"] + 1

    # -- the leader's producer state ----------------------------------------------------------------

    def _entry(self, S: State, q: int, pid: Expr) -> dict[str, Expr]:
        """The table entry of (symbolic) ``pid`` on partition ``q``."""

        def pick(suffix: str, default: Expr) -> Expr:
            return _ite([(pid == e, S[f"q{q}.e{e}.{suffix}"]) for e in range(self.npids)], default)

        out = {"on": pick("on", z3.BoolVal(False)), "ep": pick("ep", self.val(-1)), "cnt": pick("cnt", self.val(0))}
        for w in range(self.window):
            out[f"c{w}.seq"] = pick(f"c{w}.seq", self.val(-1))
            out[f"c{w}.off"] = pick(f"c{w}.off", self.val(-1))
        return out

    def _validate(self, ent: dict[str, Expr], ep: Expr, seq: Expr, length: Expr) -> tuple[Expr, Expr, Expr]:
        """Symbolic ``validate_batch`` following :data:`VALIDATION_STEPS`: (error code, dup offset, append?).

        ``length``: the log's length, the ``map_end_offset`` of the KAFKA-15591 rule.
        """
        rules: dict[str, Callable[[], tuple[Expr, Expr]]] = {}

        def duplicate() -> tuple[Expr, Expr]:
            # oldest cached batch first, as ``entry.batches[-window:]`` is scanned
            hits = [
                (z3.And(ent["on"], ent["ep"] == ep, w < ent["cnt"], ent[f"c{w}.seq"] == seq), ent[f"c{w}.off"])
                for w in reversed(range(self.window))
            ]
            return z3.Or([h for h, _ in hits]), _ite(hits, self.val(-1))

        def unknown_producer() -> tuple[Expr, Expr]:
            return z3.Or(z3.Not(ent["on"]), ent["ep"] == -1), self.val(-1)

        def first_sequence() -> tuple[Expr, Expr]:
            return z3.And(unknown_producer()[0], length == 0, seq != 0), self.val(-1)

        def epoch() -> tuple[Expr, Expr]:
            return z3.And(ent["on"], ep < ent["ep"]), self.val(-1)

        def sequence() -> tuple[Expr, Expr]:
            expected = z3.If(ent["cnt"] > 0, self._next_seq(ent["c0.seq"]), 0)
            bad = z3.If(ep != ent["ep"], seq != 0, seq != expected)
            return z3.And(ent["on"], bad), self.val(-1)

        rules.update(
            duplicate=duplicate,
            first_sequence=first_sequence,
            unknown_producer=unknown_producer,
            epoch=epoch,
            sequence=sequence,
        )
        # Fold the table from the last rule back: each enabled rule that fires decides.
        return fold_validation(rules, self.flags, lambda name: self.val(ERROR_CODES.index(name)), self.val)

    def _append_entry(self, T: State, q: int, pid: Expr, ep: Expr, seq: Expr, off: Expr, cond: Expr) -> None:
        """``append_batch`` into the table of partition ``q`` when ``cond`` (in place on ``T``)."""
        W = self.window
        for e in range(self.npids):
            hit = z3.And(cond, pid == e)
            fresh = z3.Or(z3.Not(T[f"q{q}.e{e}.on"]), T[f"q{q}.e{e}.ep"] != ep)
            kept = z3.If(T[f"q{q}.e{e}.cnt"] < W - 1, T[f"q{q}.e{e}.cnt"], W - 1) if W > 1 else self.val(0)
            new_cnt = z3.If(fresh, 1, kept + 1)
            old = {w: (T[f"q{q}.e{e}.c{w}.seq"], T[f"q{q}.e{e}.c{w}.off"]) for w in range(W)}
            T[f"q{q}.e{e}.on"] = z3.Or(T[f"q{q}.e{e}.on"], hit)
            T[f"q{q}.e{e}.ep"] = z3.If(hit, ep, T[f"q{q}.e{e}.ep"])
            T[f"q{q}.e{e}.cnt"] = z3.If(hit, new_cnt, T[f"q{q}.e{e}.cnt"])
            T[f"q{q}.e{e}.c0.seq"] = z3.If(hit, seq, old[0][0])
            T[f"q{q}.e{e}.c0.off"] = z3.If(hit, off, old[0][1])
            for w in range(1, W):
                T[f"q{q}.e{e}.c{w}.seq"] = z3.If(hit, old[w - 1][0], old[w][0])
                T[f"q{q}.e{e}.c{w}.off"] = z3.If(hit, old[w - 1][1], old[w][1])

    # -- message slots --------------------------------------------------------------------------------

    def _heads(self, S: State, upto: int) -> list[Expr]:
        """Per slot: live and at the head of its (kind, producer, connection) channel."""
        out = []
        for j in range(upto):
            a = self.slot[j]
            older = []
            for j2 in range(upto):
                if j2 == j:
                    continue
                b = self.slot[j2]
                before = (b["order"] < a["order"]) if j2 > j else (b["order"] <= a["order"])
                older.append(
                    z3.And(
                        S[f"live{j2}"], b["isreq"] == a["isreq"], b["prod"] == a["prod"], b["conn"] == a["conn"], before
                    )
                )
            out.append(z3.And(S[f"live{j}"], z3.Not(z3.Or(older or [False]))))
        return out

    # -- one step ----------------------------------------------------------------------------------------

    def _apply_templates(
        self, S: State, k: Expr, msg: dict[str, Expr], m: Expr, upto: int, at_head: Expr, halt: Expr | None
    ) -> tuple[list[Expr], dict[str, list[tuple[Expr, Expr]]], list[tuple[Expr, dict[str, Expr], str]]]:
        """Every template applied to ``S``: (guard constraints, per-variable updates, created messages).

        Template ``idx`` is selected by ``k == idx`` (and not ``halt``); its guard must hold when selected, each
        state variable it changes gets ``(selected, new value)``, and a message it sends is ``(selected, fields,
        template kind)``.
        ``self.step_events`` collects the events the step emits.  Shared by the unrolled encoding and the
        fixed-size one (:mod:`checker.bmc.fixed`), which differ only in how the network is stored.
        """
        cons: list[Expr] = [k >= 0, k < len(self.templates)]
        self.step_events = {}
        updates: dict[str, list[tuple[Expr, Expr]]] = {}
        created: list[tuple[Expr, dict[str, Expr], str]] = []
        for idx, tmpl in enumerate(self.templates):
            handler = getattr(self, f"_t_{tmpl.kind}")
            self._ev = {}
            if tmpl.message:
                guard, T, out = handler(S, *tmpl.args, msg=msg, m=m, upto=upto)
                guard = z3.And(at_head, guard)
            else:
                guard, T, out = handler(S, *tmpl.args)
            sel = k == idx if halt is None else z3.And(k == idx, z3.Not(halt))
            cons.append(z3.Implies(sel, guard))
            for label, cond in self._ev.items():
                prev = self.step_events.get(label, z3.BoolVal(False))
                self.step_events[label] = z3.Or(prev, z3.And(sel, cond))
            if out is not None:
                created.append((sel, dict(out), tmpl.kind))
            for name, val in T.items():
                if val is not S[name]:
                    updates.setdefault(name, []).append((sel, val))
        return cons, updates, created

    def transition(self, t: int, S: State, S2: State, k: Expr, m: Expr, halt: Expr | None = None) -> list[Expr]:
        """Constraints: ``S2`` follows ``S`` by template number ``k`` (message slot ``m``) at step ``t``.

        ``halt`` (a Boolean, for the leap queries of :func:`checker.bmc.witness.leap_search`): when
        true, the run has ended before this step -- no template is selected, ``S2`` equals ``S``, no
        slot is created and no event fires.
        """
        upto = self.init_slots + t  # slots that may exist before step t
        new = self.init_slots + t  # the slot step t may create
        heads = self._heads(S, upto)
        msg = {f: _ite([(m == j, self.slot[j][f]) for j in range(upto)], self.val(-1)) for f in SLOT_FIELDS}
        msg["isreq"] = _ite([(m == j, self.slot[j]["isreq"]) for j in range(upto)], z3.BoolVal(False))
        at_head = z3.Or([z3.And(m == j, heads[j]) for j in range(upto)] or [False])
        cons, updates, created = self._apply_templates(S, k, msg, m, upto, at_head, halt)
        sent = [(sel, {**out, "order": out.get("order", self.val(new))}) for sel, out, _kind in created]
        updates.setdefault(f"live{new}", []).extend((sel, z3.BoolVal(True)) for sel, _ in sent)
        for name in self.schema:
            cons.append(S2[name] == _ite(updates.get(name, []), S[name]))
        if new < self.nslots:
            slot = self.slot[new]
            for f in SLOT_FIELDS:
                cons.append(slot[f] == _ite([(sel, out.get(f, self.val(0))) for sel, out in sent], self.val(0)))
            cons.append(slot["isreq"] == _ite([(sel, out["isreq"]) for sel, out in sent], z3.BoolVal(False)))
        return cons

    # -- templates: protocol steps -----------------------------------------------------------------------

    def _t_InitProducerId(self, S: State, i: int) -> tuple[Expr, State, None]:
        guard = z3.And(S[f"p{i}.pid"] < 0, z3.Not(S[f"p{i}.bump"]), S["npid"] < self.npids)
        T = dict(S)
        T[f"p{i}.pid"], T[f"p{i}.ep"], T["npid"] = S["npid"], self.val(0), S["npid"] + 1
        return guard, T, None

    def _t_Send(self, S: State, i: int) -> tuple[Expr, State, None]:
        nxt = S[f"p{i}.next"]
        T = dict(S)
        T[f"p{i}.next"] = nxt + 1
        for n in range(self.R):
            hit = nxt == n
            T[f"p{i}.b{n}.on"] = z3.Or(S[f"p{i}.b{n}.on"], hit)
            T[f"p{i}.b{n}.fl"] = z3.And(S[f"p{i}.b{n}.fl"], z3.Not(hit))
            T[f"p{i}.b{n}.ep"] = z3.If(hit, -1, S[f"p{i}.b{n}.ep"])
            T[f"p{i}.b{n}.seq"] = z3.If(hit, -1, S[f"p{i}.b{n}.seq"])
            T[f"p{i}.b{n}.att"] = z3.If(hit, 0, S[f"p{i}.b{n}.att"])
        return nxt < self.R, T, None

    def _orphans(self, S: State, i: int) -> Expr:
        """``idempotence._orphan_requests``: batches of producer ``i`` with a request (or its answer) live on the
        current connection that they do not await (expired in flight), one per batch."""
        out = []
        for n in range(self.R):
            b_on, b_fl, b_att = S[f"p{i}.b{n}.on"], S[f"p{i}.b{n}.fl"], S[f"p{i}.b{n}.att"]
            hits = [
                z3.And(
                    S[f"live{j}"],
                    self.slot[j]["prod"] == i,
                    self.slot[j]["conn"] == S[f"p{i}.conn"],
                    self.slot[j]["rec"] == i * self.R + n,
                    z3.Not(z3.And(b_on, b_fl, self.slot[j]["att"] == b_att)),
                )
                for j in range(self.nslots)
            ]
            out.append(z3.Or(hits or [False]))
        return self._count(out)

    def _t_SendProduce(self, S: State, i: int, q: int) -> tuple[Expr, State, dict[str, Expr]]:
        pre = [self._in_flight(S, i) + self._orphans(S, i) < self.pc.max_in_flight]
        if self.idem:
            pre += [S[f"p{i}.pid"] >= 0, z3.Not(S[f"p{i}.bump"])]
        recs = self._records_of(q)
        pe, ns = S[f"p{i}.q{q}.pe"], S[f"p{i}.q{q}.ns"]
        sels = []
        for x, n in enumerate(recs):
            on, fl, hs = S[f"p{i}.b{n}.on"], S[f"p{i}.b{n}.fl"], S[f"p{i}.b{n}.seq"] >= 0
            earlier = recs[:x]
            cand = z3.And(
                on, z3.Not(fl), *[z3.Not(z3.And(S[f"p{i}.b{e}.on"], z3.Not(S[f"p{i}.b{e}.fl"]))) for e in earlier]
            )
            if not self.idem:
                sels.append(cand)
                continue
            first_seq = z3.And(*[z3.Not(z3.And(S[f"p{i}.b{e}.on"], S[f"p{i}.b{e}.seq"] >= 0)) for e in earlier])
            new_ok = z3.And(
                z3.Not(S[f"p{i}.q{q}.unres"]), z3.Not(z3.And(pe != S[f"p{i}.ep"], self._seq_outstanding(S, i, q)))
            )
            sels.append(z3.And(cand, z3.If(hs, first_seq, new_ok)))
        guard = z3.And(*pre, z3.Or(sels or [False]))
        T = dict(S)
        out: dict[str, Expr] = {
            "isreq": z3.BoolVal(True),
            "prod": self.val(i),
            "conn": S[f"p{i}.conn"],
            "part": self.val(q),
            "pid": S[f"p{i}.pid"] if self.idem else self.val(-1),
        }
        ep_pairs, seq_pairs, rec_pairs, att_pairs = [], [], [], []
        stamp_any = []
        for sel, n in zip(sels, recs):
            bep, bseq = S[f"p{i}.b{n}.ep"], S[f"p{i}.b{n}.seq"]
            if self.idem:
                stamp = z3.And(sel, bseq < 0)
                stamp_any.append(stamp)
                reset = pe != S[f"p{i}.ep"]
                seq_now = z3.If(reset, 0, ns)
                bep = z3.If(stamp, S[f"p{i}.ep"], bep)
                bseq = z3.If(stamp, seq_now, bseq)
                T[f"p{i}.b{n}.ep"], T[f"p{i}.b{n}.seq"] = bep, bseq
            T[f"p{i}.b{n}.fl"] = z3.Or(S[f"p{i}.b{n}.fl"], sel)
            T[f"p{i}.b{n}.att"] = z3.If(sel, S[f"p{i}.b{n}.att"] + 1, S[f"p{i}.b{n}.att"])
            ep_pairs.append((sel, bep))
            seq_pairs.append((sel, bseq))
            rec_pairs.append((sel, self.val(i * self.R + n)))
            att_pairs.append((sel, S[f"p{i}.b{n}.att"] + 1))
        if self.idem:
            stamped = z3.Or(stamp_any or [False])
            reset = z3.And(stamped, pe != S[f"p{i}.ep"])
            base = z3.If(reset, 0, ns)
            T[f"p{i}.q{q}.pe"] = z3.If(stamped, S[f"p{i}.ep"], pe)
            T[f"p{i}.q{q}.ns"] = z3.If(stamped, self._next_seq(base), ns)
            T[f"p{i}.q{q}.la"] = z3.If(reset, -1, S[f"p{i}.q{q}.la"])
            T[f"p{i}.q{q}.unres"] = z3.And(S[f"p{i}.q{q}.unres"], z3.Not(reset))
            T[f"p{i}.q{q}.us"] = z3.If(reset, -1, S[f"p{i}.q{q}.us"])
            T[f"p{i}.q{q}.rw"] = z3.And(S[f"p{i}.q{q}.rw"], z3.Not(reset))
        self._ev["concurrent_in_flight"] = self._in_flight(S, i) + 1 >= 2
        self._ev["resend"] = z3.Or(
            [z3.And(T[f"p{i}.b{n}.on"], T[f"p{i}.b{n}.fl"], T[f"p{i}.b{n}.att"] > 1) for n in recs] or [False]
        )
        out["ep"] = _ite(ep_pairs, self.val(-1))
        out["seq"] = _ite(seq_pairs, self.val(-1))
        out["rec"] = _ite(rec_pairs, self.val(-1))
        out["att"] = _ite(att_pairs, self.val(-1))
        return guard, T, out

    def _t_BumpEpoch(self, S: State, i: int) -> tuple[Expr, State, None]:
        guard = z3.And(S[f"p{i}.bump"], self._in_flight(S, i) == 0)
        self._ev["epoch_bump"] = z3.BoolVal(True)
        over = (
            (S[f"p{i}.ep"] + 1 > self.max_epoch)
            if self.bits is None or self.max_epoch <= self.bound
            else z3.BoolVal(False)
        )
        pid2 = z3.If(over, -1, S[f"p{i}.pid"])
        ep2 = z3.If(over, -1, S[f"p{i}.ep"] + 1)
        T = dict(S)
        T[f"p{i}.pid"], T[f"p{i}.ep"], T[f"p{i}.bump"] = pid2, ep2, z3.BoolVal(False)
        for q in range(self.P):
            apply = z3.Or(S[f"p{i}.q{q}.rw"], pid2 < 0)
            rank: list[Expr] = []
            for n in self._records_of(q):
                hs = z3.And(S[f"p{i}.b{n}.on"], S[f"p{i}.b{n}.seq"] >= 0)
                do = z3.And(apply, hs)
                T[f"p{i}.b{n}.ep"] = z3.If(do, ep2, S[f"p{i}.b{n}.ep"])
                T[f"p{i}.b{n}.seq"] = z3.If(do, z3.If(pid2 >= 0, self._count(rank), -1), S[f"p{i}.b{n}.seq"])
                rank.append(hs)
            T[f"p{i}.q{q}.pe"] = z3.If(apply, ep2, S[f"p{i}.q{q}.pe"])
            T[f"p{i}.q{q}.ns"] = z3.If(apply, z3.If(pid2 >= 0, self._count(rank), 0), S[f"p{i}.q{q}.ns"])
            T[f"p{i}.q{q}.la"] = z3.If(apply, -1, S[f"p{i}.q{q}.la"])
            T[f"p{i}.q{q}.unres"] = z3.And(S[f"p{i}.q{q}.unres"], z3.Not(apply))
            T[f"p{i}.q{q}.us"] = z3.If(apply, -1, S[f"p{i}.q{q}.us"])
            T[f"p{i}.q{q}.rw"] = z3.And(S[f"p{i}.q{q}.rw"], z3.Not(apply))
        return guard, T, None

    def _t_ResolveSequence(self, S: State, i: int, q: int) -> tuple[Expr, State, None]:
        guard = z3.And(S[f"p{i}.q{q}.unres"], z3.Not(self._seq_outstanding(S, i, q)))
        la, ns = S[f"p{i}.q{q}.la"], S[f"p{i}.q{q}.ns"]
        resolved = ns == la + 1  # isNextSequence (no acknowledgement: la = -1)
        T = dict(S)
        T[f"p{i}.q{q}.unres"] = z3.BoolVal(False)
        T[f"p{i}.q{q}.us"] = self.val(-1)
        T[f"p{i}.q{q}.rw"] = z3.Or(S[f"p{i}.q{q}.rw"], z3.Not(resolved))
        T[f"p{i}.bump"] = z3.Or(S[f"p{i}.bump"], z3.Not(resolved))
        return guard, T, None

    def _t_DeliverRequest(
        self, S: State, q: int, msg: dict[str, Expr], m: Expr, upto: int
    ) -> tuple[Expr, State, dict[str, Expr] | None]:
        guard = z3.And(msg["isreq"], msg["part"] == q)
        T = dict(S)
        for j in range(upto):
            T[f"live{j}"] = z3.And(S[f"live{j}"], m != j)
        pid, ep, seq = msg["pid"], msg["ep"], msg["seq"]
        idem_req = pid != -1
        length = S[f"q{q}.len"]
        err, dup, append = self._validate(self._entry(S, q, pid), ep, seq, length)
        err = z3.If(idem_req, err, 0)
        dup = z3.If(idem_req, dup, -1)
        append = z3.Or(z3.Not(idem_req), append)
        guard = z3.And(guard, z3.Or(z3.Not(append), length < self.L))
        for k in range(self.L):
            at = z3.And(append, length == k)
            for f, val in (("pid", pid), ("ep", ep), ("seq", seq), ("rec", msg["rec"])):
                T[f"q{q}.l{k}.{f}"] = z3.If(at, val, S[f"q{q}.l{k}.{f}"])
        T[f"q{q}.len"] = z3.If(append, length + 1, length)
        if self.pc.acks == "all":
            T[f"q{q}.hw"] = z3.If(append, length + 1, S[f"q{q}.hw"])
        self._append_entry(T, q, pid, ep, seq, length, z3.And(append, idem_req))
        offset = z3.If(append, length, dup)
        self._ev["dedup"] = z3.And(idem_req, z3.Not(append), err == 0)
        for code, name in enumerate(ERROR_CODES):
            if code:
                self._ev[f"error:{name}"] = err == code
        out = {
            "isreq": z3.BoolVal(False),
            "prod": msg["prod"],
            "conn": msg["conn"],
            "part": self.val(q),
            "ep": ep,
            "seq": seq,
            "rec": msg["rec"],
            "att": msg["att"],
            "err": err,
            "off": offset,
        }
        return guard, T, out

    def _t_DeliverResponse(
        self, S: State, i: int, msg: dict[str, Expr], m: Expr, upto: int
    ) -> tuple[Expr, State, None]:
        guard = z3.And(z3.Not(msg["isreq"]), msg["prod"] == i)
        T = dict(S)
        for j in range(upto):
            T[f"live{j}"] = z3.And(S[f"live{j}"], m != j)
        current = msg["conn"] == S[f"p{i}.conn"]
        matches = []
        for n in range(self.R):
            matches.append(
                z3.And(
                    current,
                    S[f"p{i}.b{n}.on"],
                    S[f"p{i}.b{n}.fl"],
                    # producer.answers: the response names the request (batch and attempt) it answers
                    msg["rec"] == i * self.R + n,
                    msg["att"] == S[f"p{i}.b{n}.att"],
                )
            )
        err = msg["err"]
        ok = z3.Or(err == ERROR_CODES.index(Errors.NONE), err == ERROR_CODES.index(Errors.DUPLICATE_SEQUENCE_NUMBER))
        ooo = err == ERROR_CODES.index(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER)
        fenced = err == ERROR_CODES.index(Errors.INVALID_PRODUCER_EPOCH)
        for n in range(self.R):
            q = n % self.P
            hit = z3.And(matches[n], *[z3.Not(x) for x in matches[:n]])
            bseq, bep, att = S[f"p{i}.b{n}.seq"], S[f"p{i}.b{n}.ep"], S[f"p{i}.b{n}.att"]
            can_retry = att <= self.pc.retries
            # success
            succ = z3.And(hit, ok)
            T[f"p{i}.b{n}.on"] = z3.And(T[f"p{i}.b{n}.on"], z3.Not(succ))
            T[f"ack{i}.{n}"] = z3.Or(T[f"ack{i}.{n}"], succ)
            if self.idem:
                la = T[f"p{i}.q{q}.la"]
                adv = z3.And(succ, T[f"p{i}.q{q}.pe"] == bep, bseq > la)
                T[f"p{i}.q{q}.la"] = z3.If(adv, bseq, la)
            failing = z3.And(hit, z3.Not(ok))
            if self.idem:
                unres = S[f"p{i}.q{q}.unres"]
                expected = z3.If(unres, S[f"p{i}.q{q}.us"], S[f"p{i}.q{q}.la"] + 1)
                ooo_retry = z3.And(failing, ooo, can_retry)
                ooo_fail = z3.And(failing, ooo, z3.Not(can_retry))
                # canRetry requests a bump for a real gap: the next sequence, or with an unresolved sequence the
                # one right after the failed batch (isNextSequenceForUnresolvedPartition); handleFailedBatch always
                ooo_bump = z3.And(failing, ooo, z3.Or(z3.Not(can_retry), bseq == expected))
                T[f"p{i}.b{n}.on"] = z3.And(T[f"p{i}.b{n}.on"], z3.Not(ooo_fail))
                T[f"fail{i}.{n}"] = z3.Or(T[f"fail{i}.{n}"], ooo_fail)
                T[f"p{i}.bump"] = z3.Or(T[f"p{i}.bump"], ooo_bump)
                T[f"p{i}.q{q}.rw"] = z3.Or(T[f"p{i}.q{q}.rw"], ooo_bump)
                rest = z3.And(failing, z3.Not(ooo))
            else:
                ooo_retry = z3.BoolVal(False)
                rest = failing
            fence_fail = z3.And(rest, fenced)
            other_retry = z3.And(rest, z3.Not(fenced), can_retry)
            other_fail = z3.And(rest, z3.Not(fenced), z3.Not(can_retry))
            T = self._fail(T, i, n, z3.Or(fence_fail, other_fail))
            if self.idem:
                # failBatch(adjustSequenceNumbers = retries left) -> handleFailedBatch: an idempotent producer
                # requests a bump for the partition of a batch failed on an error it does not retry
                adjust = z3.And(fence_fail, can_retry)
                T[f"p{i}.bump"] = z3.Or(T[f"p{i}.bump"], adjust)
                T[f"p{i}.q{q}.rw"] = z3.Or(T[f"p{i}.q{q}.rw"], adjust)
            retry = z3.Or(ooo_retry, other_retry)
            T[f"p{i}.b{n}.fl"] = z3.And(T[f"p{i}.b{n}.fl"], z3.Not(retry))
        # producer._late_answer: no in-flight batch awaits it, but a batch expired in flight on this connection
        # did (Producer.expired, by correlation id): the entry goes; NONE / DUPLICATE_SEQUENCE_NUMBER raise the
        # partition's last acknowledged sequence (plain comparison, a tracked partition only) unless the variant
        # ignores late answers (ProtocolFlags.late_success_updates_last_acked)
        unanswered = z3.And(current, z3.Not(z3.Or(matches or [False])))
        for n in range(self.R):
            q = n % self.P
            late = z3.And(
                unanswered, S[f"p{i}.x{n}.on"], msg["rec"] == i * self.R + n, msg["att"] == S[f"p{i}.x{n}.att"]
            )
            T = _merge(late, self._clear_one_expired(T, i, n), T)
            if self.flags.late_success_updates_last_acked:
                la, last = T[f"p{i}.q{q}.la"], S[f"p{i}.x{n}.seq"]
                raise_la = z3.And(late, ok, last > la, T[f"p{i}.q{q}.pe"] >= 0)
                T[f"p{i}.q{q}.la"] = z3.If(raise_la, last, la)
        return guard, T, None

    def _clear_one_expired(self, S: State, i: int, n: int) -> State:
        """``Producer.expired`` without record ``n``'s entry; the later entries move up one place."""
        T = dict(S)
        T[f"p{i}.x{n}.on"], T[f"p{i}.x{n}.att"] = z3.BoolVal(False), self.val(0)
        T[f"p{i}.x{n}.seq"], T[f"p{i}.x{n}.ord"] = self.val(-1), self.val(0)
        for n2 in range(self.R):
            if n2 != n:
                o = S[f"p{i}.x{n2}.ord"]
                T[f"p{i}.x{n2}.ord"] = z3.If(z3.And(S[f"p{i}.x{n2}.on"], o > S[f"p{i}.x{n}.ord"]), o - 1, o)
        return T

    def _t_ReplicatePartition(self, S: State, q: int) -> tuple[Expr, State, None]:
        T = dict(S)
        T[f"q{q}.hw"] = S[f"q{q}.len"]
        return S[f"q{q}.hw"] < S[f"q{q}.len"], T, None

    # -- templates: faults ----------------------------------------------------------------------------------

    def _t_DropMessage(self, S: State, i: int, msg: dict[str, Expr], m: Expr, upto: int) -> tuple[Expr, State, None]:
        guard = z3.And(self._faults_ok(S, "drop"), msg["prod"] == i)
        T = dict(S)
        for j in range(upto):
            same = z3.And(self.slot[j]["prod"] == msg["prod"], self.slot[j]["conn"] == msg["conn"])
            T[f"live{j}"] = z3.And(S[f"live{j}"], z3.Not(same))
        T = _merge(msg["conn"] == S[f"p{i}.conn"], self._request_timeout(T, i), T)
        self._charge(S, T, FAULT_OF_ACTION["DropMessage"])
        return guard, T, None

    def _t_DuplicateMessage(
        self, S: State, msg: dict[str, Expr], m: Expr, upto: int
    ) -> tuple[Expr, State, dict[str, Expr]]:
        T = dict(S)
        self._charge(S, T, FAULT_OF_ACTION["DuplicateMessage"])
        return self._faults_ok(S, "duplicate"), T, dict(msg)

    def _t_RequestTimeout(self, S: State, i: int) -> tuple[Expr, State, None]:
        guard = z3.And(self._faults_ok(S, "request_timeout"), self._in_flight(S, i) > 0)
        T = self._request_timeout(S, i)
        self._charge(S, T, FAULT_OF_ACTION["RequestTimeout"])
        return guard, T, None

    def _t_ExpireBatch(self, S: State, i: int, q: int) -> tuple[Expr, State, None]:
        recs = self._records_of(q)
        firsts = [
            z3.And(S[f"p{i}.b{n}.on"], *[z3.Not(S[f"p{i}.b{e}.on"]) for e in recs[:x]]) for x, n in enumerate(recs)
        ]
        expire = [z3.And(f, S[f"p{i}.b{n}.att"] > 0) for f, n in zip(firsts, recs)]
        guard = z3.And(self._faults_ok(S, "batch_expiry"), z3.Or(expire or [False]))
        T = dict(S)
        last_ord = self._count([S[f"p{i}.x{n}.on"] for n in range(self.R)])  # ord: the places 1..len(expired)
        for e, n in zip(expire, recs):
            if self.idem:  # expire_batch: a batch expired in flight joins Producer.expired (its request's answer)
                gone = z3.And(e, S[f"p{i}.b{n}.fl"])
                T[f"p{i}.x{n}.on"] = z3.Or(S[f"p{i}.x{n}.on"], gone)
                T[f"p{i}.x{n}.att"] = z3.If(gone, S[f"p{i}.b{n}.att"], S[f"p{i}.x{n}.att"])
                T[f"p{i}.x{n}.seq"] = z3.If(gone, S[f"p{i}.b{n}.seq"], S[f"p{i}.x{n}.seq"])
                T[f"p{i}.x{n}.ord"] = z3.If(gone, last_ord + 1, S[f"p{i}.x{n}.ord"])
            T = self._fail(T, i, n, e)
            if self.idem:  # Sender: markSequenceUnresolved only for a batch in retry (ProducerBatch.inRetry)
                in_retry = z3.Or(S[f"p{i}.b{n}.att"] > 1, z3.Not(S[f"p{i}.b{n}.fl"]))
                T = self._mark_unresolved(T, i, n, z3.And(e, in_retry))
        self._charge(S, T, FAULT_OF_ACTION["ExpireBatch"])
        return guard, T, None

    def _t_RestartLeader(self, S: State) -> tuple[Expr, State, None]:
        T = dict(S)
        for q in range(self.P):
            hw = S[f"q{q}.hw"]
            T[f"q{q}.len"] = hw
            T[f"q{q}.lep"] = S[f"q{q}.lep"] + 1
            for e in range(self.npids):
                T[f"q{q}.e{e}.on"] = z3.BoolVal(False)
                T[f"q{q}.e{e}.ep"] = self.val(-1)
                T[f"q{q}.e{e}.cnt"] = self.val(0)
                for w in range(self.window):
                    T[f"q{q}.e{e}.c{w}.seq"] = self.val(-1)
                    T[f"q{q}.e{e}.c{w}.off"] = self.val(-1)
            for k in range(self.L):  # rebuild_producer_state: replay the kept log, no checks
                pid = S[f"q{q}.l{k}.pid"]
                self._append_entry(
                    T, q, pid, S[f"q{q}.l{k}.ep"], S[f"q{q}.l{k}.seq"], self.val(k), z3.And(k < hw, pid != -1)
                )
        for j in range(self.nslots):
            T[f"live{j}"] = z3.BoolVal(False)
        for i in range(self.N):
            T = _merge(self._in_flight(S, i) > 0, self._request_timeout(T, i), T)
        self._charge(S, T, FAULT_OF_ACTION["RestartLeader"])
        self._ev["leader_restart_with_acked_data"] = z3.And(
            z3.Or([T[f"q{q}.len"] > 0 for q in range(self.P)]),
            z3.Or([T[f"ack{i}.{n}"] for i in range(self.N) for n in range(self.R)] or [False]),
        )
        self._ev["unreplicated_batches_truncated"] = z3.Or([S[f"q{q}.hw"] < S[f"q{q}.len"] for q in range(self.P)])
        return self._faults_ok(S, "leader_restart"), T, None

    def _t_RestartProducer(self, S: State, i: int) -> tuple[Expr, State, None]:
        T = dict(S)
        T[f"p{i}.pid"], T[f"p{i}.ep"], T[f"p{i}.conn"] = self.val(-1), self.val(-1), S[f"p{i}.conn"] + 1
        T[f"p{i}.bump"] = z3.BoolVal(False)
        for q in range(self.P):
            T[f"p{i}.q{q}.pe"], T[f"p{i}.q{q}.ns"], T[f"p{i}.q{q}.la"] = self.val(-1), self.val(0), self.val(-1)
            T[f"p{i}.q{q}.unres"], T[f"p{i}.q{q}.rw"] = z3.BoolVal(False), z3.BoolVal(False)
            T[f"p{i}.q{q}.us"] = self.val(-1)
        for n in range(self.R):
            T[f"p{i}.b{n}.on"] = z3.BoolVal(False)
        T = self._clear_expired(T, i, z3.BoolVal(True))  # new_producer: a new instance holds no request
        self._charge(S, T, FAULT_OF_ACTION["RestartProducer"])
        return self._faults_ok(S, "producer_restart"), T, None

    # -- decoding ---------------------------------------------------------------------------------------------

    def action(self, m: z3.ModelRef, t: int, k: Expr, slot: Expr) -> Action:
        """The executable model's action for step ``t`` of a z3 model."""
        tmpl = self.templates[_num(m.eval(k, model_completion=True))]
        if tmpl.message:
            env = self.envelope(m, _num(m.eval(slot, model_completion=True)))
            kind = {"DeliverRequest": "Deliver", "DeliverResponse": "Deliver"}.get(tmpl.kind, tmpl.kind)
            return Action(kind, (env,))
        return Action(tmpl.kind, tmpl.args)

    # -- invariants -------------------------------------------------------------------------------------------

    def _owner(self, rec: Expr) -> tuple[Expr, Expr]:
        return rec / self.R, rec % self.R

    def bad(self, S: State, name: str) -> Expr:
        """Symbolic negation of the named invariant (``invariants/idempotence.py``)."""
        return INVARIANTS[name](self, S)

    def _bad_duplicate(self, S: State) -> Expr:
        out = []
        for q in range(self.P):
            ln = S[f"q{q}.len"]
            for a in range(self.L):
                for b in range(a + 1, self.L):
                    out.append(z3.And(b < ln, S[f"q{q}.l{a}.rec"] == S[f"q{q}.l{b}.rec"]))
        return z3.Or(out or [False])

    def _bad_acked_loss(self, S: State) -> Expr:
        out = []
        for i in range(self.N):
            for n in range(self.R):
                flat = i * self.R + n
                present = [
                    z3.And(k < S[f"q{q}.len"], S[f"q{q}.l{k}.rec"] == flat)
                    for q in range(self.P)
                    for k in range(self.L)
                ]
                out.append(z3.And(S[f"ack{i}.{n}"], z3.Not(z3.Or(present))))
        return z3.Or(out or [False])

    def _bad_order(self, S: State) -> Expr:
        out = []
        for q in range(self.P):
            ln = S[f"q{q}.len"]
            for a in range(self.L):
                for b in range(a + 1, self.L):
                    ra, rb = S[f"q{q}.l{a}.rec"], S[f"q{q}.l{b}.rec"]
                    pa, na = self._owner(ra)
                    pb, nb = self._owner(rb)
                    out.append(z3.And(b < ln, pa == pb, S[f"q{q}.l{a}.pid"] == S[f"q{q}.l{b}.pid"], nb < na))
        return z3.Or(out or [False])

    def _bad_table(self, S: State) -> Expr:
        out = []
        for q in range(self.P):
            ln = S[f"q{q}.len"]

            def lg(k: int, f: str, q: int = q) -> Expr:
                return S[f"q{q}.l{k}.{f}"]

            # consecutive batches of one producer id
            for a in range(self.L):
                for b in range(a + 1, self.L):
                    between = [z3.Not(lg(c, "pid") == lg(a, "pid")) for c in range(a + 1, b)]
                    pair = z3.And(b < ln, lg(a, "pid") != -1, lg(a, "pid") == lg(b, "pid"), *between)
                    ea, eb = lg(a, "ep"), lg(b, "ep")
                    wrong = z3.Or(
                        eb < ea,
                        z3.And(eb > ea, lg(b, "seq") != 0),
                        z3.And(eb == ea, lg(b, "seq") != self._next_seq(lg(a, "seq"))),
                    )
                    out.append(z3.And(pair, wrong))
            # the stored table against the log, for each producer id in the log
            for e in range(self.npids):
                in_log = [z3.And(k < ln, lg(k, "pid") == e) for k in range(self.L)]
                lasts = [z3.And(in_log[k], *[z3.Not(x) for x in in_log[k + 1 :]]) for k in range(self.L)]
                last_ep = _ite([(lasts[k], lg(k, "ep")) for k in range(self.L)], self.val(-2))
                on, ep, cnt = S[f"q{q}.e{e}.on"], S[f"q{q}.e{e}.ep"], S[f"q{q}.e{e}.cnt"]
                ok = [on, ep == last_ep, cnt >= 1]
                for w in range(self.window):
                    off, seq = S[f"q{q}.e{e}.c{w}.off"], S[f"q{q}.e{e}.c{w}.seq"]
                    tail_after = [z3.And(in_log[k], lg(k, "ep") == last_ep, off < k) for k in range(self.L)]
                    at = z3.Or(
                        [
                            z3.And(off == k, in_log[k], lg(k, "ep") == last_ep, lg(k, "seq") == seq)
                            for k in range(self.L)
                        ]
                    )
                    ok.append(z3.Implies(w < cnt, z3.And(at, self._count(tail_after) == w)))
                out.append(z3.And(z3.Or(in_log), z3.Not(z3.And(ok))))
        return z3.Or(out or [False])


#: Invariant name -> symbolic violation.
INVARIANTS: dict[str, Callable[[Encoding, State], Expr]] = {
    "no_duplicate_append": Encoding._bad_duplicate,
    "no_acked_loss": Encoding._bad_acked_loss,
    "per_partition_order": Encoding._bad_order,
    "sequence_table_consistent": Encoding._bad_table,
}
