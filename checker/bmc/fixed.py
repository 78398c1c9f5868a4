"""The idempotence core as one fixed-size state vector: the step of :mod:`checker.bmc.encoding`, every depth alike.

Why a second representation.  The unrolled encoding gives step ``t`` its own
network slot ``t``, so the state grows with the depth and step ``t``'s
constraints differ from step ``t + 1``'s.  That suits bounded model checking,
but the methods that learn facts *across* time frames -- IC3/PDR,
interpolation, BDD reachability, k-induction over a uniform relation, and
the hardware model checkers that implement them (ABC, the HWMCC tools) --
need one transition function ``S' = f(S, inputs)`` over a state of fixed
size.  This module is that function; :mod:`checker.bmc.aiger` bit-blasts it into
an AIGER circuit (``keos export-aiger``), and ``benchmarks/abc_bench.py``
measures what ABC's BMC and PDR reach on it.

It reuses the templates of :class:`checker.bmc.encoding.Encoding` unchanged
(``_apply_templates``: the client, the leader's ``ProducerStateManager``
checks in :data:`model.log.producer_state.VALIDATION_STEPS` order, faults and
budgets); only the network is stored differently:

* ``K`` message slots, each holding the fields of
  :data:`checker.bmc.encoding.SLOT_FIELDS` (but ``order``) and a ``live``
  bit.  A message a step sends goes into the lowest free slot; a delivered or
  lost message frees its slot, whose fields are zeroed, so each model state
  has one encoding up to the choice of slots.
* Network order is a relation over live slots: ``ord{a}.{b}`` says slot ``a``
  is older than slot ``b`` (earlier in the model's network tuple).  A sent
  message is younger than every live one (``network.send`` appends); a
  duplicated message sits right behind its original (``network.duplicate``).
  Only the oldest live slot of a channel ``(request?, producer, connection)``
  is deliverable, as in :func:`model.network.channel_heads`.
* Values are signed bit-vectors of ``bits`` bits.

Bounds and exactness.  The slots, the log (``L`` entries), the producer ids
and the integer domain are finite, so the encoding is exact only while none
of them is exhausted.  :meth:`FixedEncoding.overflow` is the state predicate
"a bound is at its limit": every slot live; or a log full while a request for
it is in flight; or the producer-id pool empty while a producer may ask for
one; or some integer at ``top`` (every step raises a counter by at most one,
so no value passes ``top`` before a state with ``top`` is reached).  A
checker that proves ``overflow`` unreachable has proved the encoding exact on
every reachable state; one that reaches it has found a bound to raise, not a
protocol bug.  Constants outside the domain are decided as
:meth:`checker.bmc.encoding.Encoding._value_bound` argues (sequence spaces
larger than ``2 * top + 4`` never wrap before ``top``; epochs never pass a
``max_producer_epoch`` above ``top``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3

from keos.checker.bmc.aiger import Aig, bitblast
from keos.checker.bmc.encoding import INVARIANTS, SLOT_FIELDS, Encoding, Expr, State, _ite, _num
from keos.model.interface import Action
from keos.model.systems.idempotence import FAULT_KINDS, KafkaSystem, SystemState

__all__ = ["FIELDS", "FixedEncoding", "circuit", "default_slots", "witness_actions"]

#: Fields of a fixed slot: the unrolled encoding's, without the order key (``ord`` replaces it).
FIELDS = tuple(f for f in SLOT_FIELDS if f != "order")


def _sends(model: KafkaSystem) -> tuple[int, int]:
    """(attempts of every batch plus duplicates, duplicates): bounds on requests sent and copies made."""
    cfg = model.config
    dup = min(cfg.faults.limits()[FAULT_KINDS.index("duplicate")], cfg.faults.total)
    return cfg.topology.producers * cfg.topology.records_per_producer * (model.producer_config.retries + 1) + dup, dup


def default_slots(model: KafkaSystem) -> int:
    """Slots for the messages that can be in flight at once, plus one (so "every slot live" means too few).

    A message on the wire is a request for one attempt of one batch, or the
    response that replaced it, or a duplicate: at most ``sends`` (attempts
    plus duplicates) at once.  Usually far fewer are: each producer keeps at
    most ``max_in_flight`` requests on its connection, and requests given up
    on (timeout, reset) may still be on the wire beside their retries: three
    times that, plus duplicates, covers the built-in scenarios (twice does not:
    ``idempotence_epoch_bump`` has 5 messages in flight with a limit of 2).
    The smaller guess is taken; a wrong guess is not unsound,
    :meth:`FixedEncoding.overflow` reports it.
    """
    sends, dup = _sends(model)
    return min(sends, model.config.topology.producers * 3 * model.producer_config.max_in_flight + dup) + 1


class FixedEncoding(Encoding):
    """The idempotence core's transition function over ``K`` reusable message slots (module docstring)."""

    def __init__(self, model: KafkaSystem, slots: int | None = None, bits: int = 6):
        sends, _dup = _sends(model)
        # ``depth`` only sizes the log (every append is a distinct request: ``sends`` bounds it) and the producer
        # id pool (``overflow`` watches it); the domain is set below.
        super().__init__(model, sends, bitvector=True)
        self.K = slots if slots is not None else default_slots(model)
        space = self.flags.sequence_space
        if space <= 2 * (2 ** (bits - 1) - 2) + 4:  # a small sequence space is a constant inside the domain
            bits = max(bits, (space + 2).bit_length() + 2)
        if self.max_epoch <= 2 ** (bits - 1) - 2:
            bits = max(bits, (self.max_epoch + 2).bit_length() + 1)
        # every template number and slot index must be a value of the domain, or some steps could not be chosen
        bits = max(bits, (max(len(self.templates), self.K) + 2).bit_length() + 1)
        self.bits = bits
        self.width = bits
        self.top = 2 ** (bits - 1) - 2
        self.bound = self.top
        self.big_space = space > 2 * self.top + 4
        self.nslots = self.K
        self.schema = self._schema()
        network: dict[str, bool] = {}
        for j in range(self.K):
            network[f"live{j}"] = True
            network.update({f"m{j}.{f}": False for f in FIELDS})
            network[f"m{j}.isreq"] = True
            network.update({f"ord{j}.{b}": True for b in range(self.K) if b != j})
        self.schema.update(network)
        #: The variables that hold the network (computed by ``next_state`` itself, not by the templates).
        self._network_names = frozenset(network)

    # -- state ------------------------------------------------------------------------------------------

    def _bind(self, S: State) -> None:
        """Point the templates' slot reads (``self.slot``) at the slots of ``S``."""
        self.slot = [
            {f: S[f"m{j}.{f}"] for f in FIELDS} | {"isreq": S[f"m{j}.isreq"], "order": self.val(0)}
            for j in range(self.K)
        ]  # order: read by nothing but ``concretize``, which sets it

    def _older(self, S: State, a: int, b: int) -> Expr:
        return z3.BoolVal(False) if a == b else S[f"ord{a}.{b}"]

    def values(self, s: SystemState) -> dict[str, Any]:
        """The state vector of a concrete state: envelope ``j`` of the network tuple in slot ``j``."""
        if len(s.network) > self.K:
            raise ValueError(f"{len(s.network)} messages in flight do not fit {self.K} slots")
        v = self.abstract(s)
        for j in range(self.K):
            live = j < len(s.network)
            for f in FIELDS:
                v[f"m{j}.{f}"] = v.get(f"m{j}.{f}", 0) if live else 0
            v[f"m{j}.isreq"] = bool(v.get(f"m{j}.isreq", False)) if live else False
            v.pop(f"m{j}.order", None)
            for b in range(self.K):
                if b != j:
                    v[f"ord{j}.{b}"] = live and b < len(s.network) and j < b
        return v

    def equal_to(self, S: State, values: dict[str, Any], slots: bool = True) -> Expr:
        return z3.And([S[n] == (values[n] if self.schema[n] else self.val(values[n])) for n in self.schema])

    def initial(self, S: State) -> Expr:
        return self.equal_to(S, self.values(self.model.init_states()[0]))

    def concretize(self, m: z3.ModelRef, S: State) -> SystemState:
        """The ``SystemState`` of ``S`` in a z3 model; the network tuple ordered by ``ord``."""
        self._bind(S)
        for j in range(self.K):
            self.slot[j]["order"] = self._count([z3.And(S[f"live{b}"], self._older(S, b, j)) for b in range(self.K)])
        return super().concretize(m, S)

    # -- the step -------------------------------------------------------------------------------------------

    def _heads(self, S: State, upto: int) -> list[Expr]:
        out = []
        for j in range(upto):
            a = self.slot[j]
            older = [
                z3.And(
                    S[f"live{b}"],
                    self.slot[b]["isreq"] == a["isreq"],
                    self.slot[b]["prod"] == a["prod"],
                    self.slot[b]["conn"] == a["conn"],
                    self._older(S, b, j),
                )
                for b in range(upto)
                if b != j
            ]
            out.append(z3.And(S[f"live{j}"], z3.Not(z3.Or(older or [False]))))
        return out

    def next_state(self, S: State, k: Expr, m: Expr) -> tuple[Expr, State]:
        """``(enabled, S')``: template ``k`` (message slot ``m``) is enabled in ``S`` and leads to ``S'``."""
        K = self.K
        self._bind(S)
        heads = self._heads(S, K)
        msg = {f: _ite([(m == j, self.slot[j][f]) for j in range(K)], self.val(-1)) for f in FIELDS}
        msg["isreq"] = _ite([(m == j, self.slot[j]["isreq"]) for j in range(K)], z3.BoolVal(False))
        at_head = z3.Or([z3.And(m == j, heads[j]) for j in range(K)])
        cons, updates, created = self._apply_templates(S, k, msg, m, K, at_head, None)
        enabled = z3.And(cons)
        nxt: State = {
            name: _ite(updates.get(name, []), S[name]) for name in self.schema if name not in self._network_names
        }
        kept = [_ite(updates.get(f"live{j}", []), S[f"live{j}"]) for j in range(K)]  # after the template
        sending = z3.Or([sel for sel, _, _ in created] or [False])
        dup = z3.Or([sel for sel, _, kind in created if kind == "DuplicateMessage"] or [False])
        new = [z3.And(sending, z3.Not(kept[j]), *kept[:j]) for j in range(K)]  # the lowest free slot
        live = [z3.Or(kept[j], new[j]) for j in range(K)]
        for j in range(K):
            nxt[f"live{j}"] = live[j]
            for f in FIELDS:
                sent = _ite([(sel, out.get(f, self.val(0))) for sel, out, _ in created], self.val(0))
                nxt[f"m{j}.{f}"] = z3.If(new[j], sent, z3.If(live[j], S[f"m{j}.{f}"], self.val(0)))
            sent_req = _ite([(sel, out["isreq"]) for sel, out, _ in created], z3.BoolVal(False))
            nxt[f"m{j}.isreq"] = z3.If(new[j], sent_req, z3.And(live[j], S[f"m{j}.isreq"]))
        # a message is older than a new one if it was kept -- or, for a copy, if it is the original or older
        older_than_new = [
            z3.If(dup, z3.Or(m == a, *[z3.And(m == x, self._older(S, a, x)) for x in range(K)]), kept[a])
            for a in range(K)
        ]
        # a new message is older than another only as a copy of a message older than it
        new_older_than = [
            z3.And(dup, z3.Or([z3.And(m == x, self._older(S, x, b)) for x in range(K)])) for b in range(K)
        ]
        for a in range(K):
            for b in range(K):
                if a != b:
                    rel = z3.If(new[b], older_than_new[a], z3.If(new[a], new_older_than[b], self._older(S, a, b)))
                    nxt[f"ord{a}.{b}"] = z3.And(live[a], live[b], rel)
        return enabled, nxt

    def transition(self, t: int, S: State, S2: State, k: Expr, m: Expr, halt: Expr | None = None) -> list[Expr]:
        """The step as constraints (``t`` is ignored: every step is the same function)."""
        if halt is not None:
            raise ValueError("the fixed encoding has no halting steps")
        enabled, nxt = self.next_state(S, k, m)
        return [enabled] + [S2[n] == nxt[n] for n in self.schema]

    # -- bounds ---------------------------------------------------------------------------------------------

    def overflow(self, S: State) -> Expr:
        """Some bound of the encoding is at its limit (module docstring): unreachable means exact."""
        K = self.K
        full = z3.And([S[f"live{j}"] for j in range(K)])
        pids = z3.And(
            S["npid"] >= self.npids, z3.Or([z3.And(S[f"p{i}.pid"] < 0, z3.Not(S[f"p{i}.bump"])) for i in range(self.N)])
        )
        logs = [
            z3.And(
                S[f"q{q}.len"] >= self.L,
                z3.Or([z3.And(S[f"live{j}"], S[f"m{j}.isreq"], S[f"m{j}.part"] == q) for j in range(K)]),
            )
            for q in range(self.P)
        ]
        top = [S[n] >= self.top for n, boolean in self.schema.items() if not boolean]
        return z3.Or(full, pids, *logs, *top)

    def bad(self, S: State, name: str) -> Expr:
        return INVARIANTS[name](self, S)


def _bits(name: str, width: int) -> list[Expr]:
    return [z3.Bool(f"{name}[{i}]") for i in range(width)]


def _word(bits: list[Expr]) -> Expr:
    return z3.Concat([z3.If(b, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)) for b in reversed(bits)])


def circuit(enc: FixedEncoding, properties: Sequence[str]) -> Aig:
    """The step as a sequential circuit (:mod:`checker.bmc.aiger`).

    Latches are the state bits (a Boolean variable is one latch ``name``, an
    integer ``bits`` latches ``name[0]`` (least significant) onwards), reset to
    the model's initial state.  Inputs are the bits of the template number
    ``k[...]`` and the message slot ``m[...]``.  A step whose choice is not
    enabled leaves every latch unchanged, so a run that ends stays in its last
    state and no violation is hidden by a missing successor.  Bad outputs: the
    encoding's ``overflow`` first (reaching it means a bound to raise), then one
    per invariant in ``properties``.
    """
    state: State = {}
    latch_bits: list[tuple[str, Expr]] = []
    for name, boolean in enc.schema.items():
        if boolean:
            state[name] = z3.Bool(name)
            latch_bits.append((name, state[name]))
        else:
            bits = _bits(name, enc.width)
            state[name] = _word(bits)
            latch_bits.extend((str(b), b) for b in bits)
    k_bits, m_bits = _bits("k", enc.width), _bits("m", enc.width)
    enabled, nxt = enc.next_state(state, _word(k_bits), _word(m_bits))
    formulas: dict[str, Expr] = {"enabled": enabled}
    for name, boolean in enc.schema.items():
        if boolean:
            formulas[f"next:{name}"] = nxt[name]
        else:
            for i in range(enc.width):
                formulas[f"next:{name}[{i}]"] = z3.Extract(i, i, nxt[name]) == 1
    formulas["bad:overflow"] = enc.overflow(state)
    for prop in properties:
        formulas[f"bad:{prop}"] = enc.bad(state, prop)
    blasted = bitblast(formulas)
    init = enc.values(enc.model.init_states()[0])
    aig = Aig()
    env: dict[str, int] = {}
    for name, boolean in enc.schema.items():
        value = init[name]
        if boolean:
            env[name] = aig.latch(name, bool(value))
        else:
            for i in range(enc.width):
                env[f"{name}[{i}]"] = aig.latch(f"{name}[{i}]", bool((int(value) >> i) & 1))
    for b in k_bits + m_bits:
        env[str(b)] = aig.input(str(b))
    ok = aig.from_z3(blasted["enabled"], env)
    for name, _ in latch_bits:
        aig.set_next(name, aig.ite(ok, aig.from_z3(blasted[f"next:{name}"], env), env[name]))
    aig.add_bad("overflow", aig.from_z3(blasted["bad:overflow"], env))
    for prop in properties:
        aig.add_bad(prop, aig.from_z3(blasted[f"bad:{prop}"], env))
    return aig


def witness_actions(enc: FixedEncoding, text: str) -> list[Action]:
    """The model actions of a counterexample a model checker wrote for :func:`circuit` (AIGER witness format).

    A witness is a status line (``1``) and the violated outputs (``b0``...)
    -- ABC's ``write_cex -a`` omits both and ends with ``# DONE`` --, one line of initial latch values,
    then one line of input values per frame (``k[0..]`` then ``m[0..]``, least
    significant bit first; ``x`` = either), ended by ``.``.  Each frame's
    ``(k, m)`` is decoded on the encoding itself, from the state the frames
    before it reached: a template that is enabled is the action it stands for
    (a ``Deliver``, drop or duplicate carries the envelope in slot ``m``); a
    choice that is not enabled is the circuit's stutter step and no action.
    The last frame's inputs are not applied (its state is the one that is bad).
    Raises ``ValueError`` when the lines do not fit this circuit.
    """
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]  # ABC ends with "# DONE"
    rows = [
        line for line in lines if line and not line.startswith(("b", "j", "c")) and line not in {"0", "1", "2", "."}
    ]
    n_latches = sum(1 if boolean else enc.width for boolean in enc.schema.values())
    if not rows or len(rows[0]) != n_latches:
        raise ValueError(
            f"expected a line of {n_latches} initial latch values (is the witness for this scenario, "
            "variant, --slots and --bits?)"
        )
    frames = rows[1:]
    for row in frames:
        if len(row) != 2 * enc.width or set(row) - set("01x"):
            raise ValueError(f"expected lines of {2 * enc.width} input values (0, 1 or x), got {row[:40]!r}")
    S0, S1 = enc.state(0), enc.state(1)
    k, m = enc.var("k"), enc.var("m")
    solver = z3.Solver()
    solver.add(enc.transition(0, S0, S1, k, m))
    values = enc.values(enc.model.init_states()[0])
    actions: list[Action] = []
    for row in frames[:-1]:
        bits = row.replace("x", "0")
        kv, mv = (int(bits[lo : lo + enc.width][::-1], 2) for lo in (0, enc.width))
        solver.push()
        solver.add(enc.equal_to(S0, values), k == kv, m == mv)
        if solver.check() == z3.sat:
            mdl = solver.model()
            enc._bind(S0)
            actions.append(enc.action(mdl, 0, k, m))
            values = {
                n: z3.is_true(mdl.eval(S1[n], model_completion=True))
                if boolean
                else _num(mdl.eval(S1[n], model_completion=True))
                for n, boolean in enc.schema.items()
            }
        solver.pop()
    return actions
