"""And-inverter graphs from z3 formulas, written as AIGER 1.9 -- the input format of hardware model checkers.

AIGER (Biere, "The AIGER And-Inverter Graph Format, Version 1.9") describes a
sequential circuit: primary inputs, latches (each with a next-state function
and a reset value), two-input AND gates over literals (``2 * variable``,
``+ 1`` for negation; literal 0 is false, 1 is true) and *bad-state*
properties, each a literal that must never be 1 in a reachable state.  ABC
(``berkeley-abc``: ``bmc3``, ``pdr``, ``int``), and the tools of the
hardware model checking competition read it.

:func:`bitblast` turns z3 Boolean formulas over bit-vectors into formulas over
named Boolean variables (z3's own bit-blaster); :class:`Aig` builds the graph
with structural hashing and writes the binary format with a symbol table;
:meth:`Aig.simulate` evaluates the circuit on concrete inputs, which is how
the tests check that a written circuit computes the model's step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, TypeVar

import z3

__all__ = ["OUT_PREFIX", "Aig", "Latch", "bitblast", "fold"]

Expr = Any  # z3 BoolRef
#: Names of the output variables :func:`bitblast` introduces; :meth:`Aig.from_z3` reads them as true.
OUT_PREFIX = "__keos_out"
T = TypeVar("T")


def bitblast(formulas: Mapping[str, Expr]) -> dict[str, Expr]:
    """Each formula rewritten over Boolean variables only (bit-vector leaves must be built from Booleans).

    z3's ``bit-blast`` tactic works on assertions, so each formula ``f`` is
    asserted as ``out <-> f`` for a fresh ``out``; the simplifier may reshape
    or split that assertion, but the conjunction of the assertions mentioning
    ``out``, with ``out`` set to true, is equivalent to ``f``.  That
    conjunction is returned as is: :meth:`Aig.from_z3` reads every variable
    named with :data:`OUT_PREFIX` as true.  An assertion
    that mentions no output, or two, would mean a definition this trick
    cannot see, and raises ``ValueError``.
    """
    names = list(formulas)
    outs = [z3.Bool(f"{OUT_PREFIX}{i}") for i in range(len(names))]
    goal = z3.Goal()
    for out, name in zip(outs, names):
        goal.add(out == formulas[name])
    result = z3.Then("simplify", "bit-blast", "simplify")(goal)
    if len(result) != 1:
        raise ValueError("bit-blasting split the goal")
    index = {str(o): i for i, o in enumerate(outs)}
    memo: dict[int, frozenset[int]] = {}

    def mentions(x: Expr, kids: list[frozenset[int]]) -> frozenset[int]:
        own = frozenset([index[str(x)]]) if z3.is_const(x) and str(x) in index else frozenset()
        return own.union(*kids)

    groups: dict[int, list[Expr]] = {}
    for assertion in result[0]:
        which = fold(assertion, memo, mentions)
        if len(which) != 1:
            raise ValueError(f"a bit-blasted assertion mentions {len(which)} outputs")
        groups.setdefault(next(iter(which)), []).append(assertion)
    blasted = {}
    for i, name in enumerate(names):
        if i not in groups:
            raise ValueError(f"bit-blasting lost formula {name!r}")
        blasted[name] = z3.And(groups[i])
    return blasted


def fold(root: Expr, memo: dict[int, T], combine: Callable[[Expr, list[T]], T]) -> T:
    """``combine`` applied bottom-up over a z3 expression DAG, each shared node once (``memo`` by node id).

    Iterative, so deep formulas do not hit Python's recursion limit; ``memo`` may be kept between calls
    over DAGs that share nodes.
    """
    stack = [root]
    while stack:
        e = stack[-1]
        if e.get_id() in memo:
            stack.pop()
            continue
        kids = [c for c in e.children() if c.get_id() not in memo]
        if kids:
            stack.extend(kids)
            continue
        stack.pop()
        memo[e.get_id()] = combine(e, [memo[c.get_id()] for c in e.children()])
    return memo[root.get_id()]


@dataclass(frozen=True)
class Latch:
    """A state bit: its current-value literal, next-state literal and reset value."""

    name: str
    lit: int
    next: int
    reset: bool


class Aig:
    """An and-inverter graph under construction: inputs, latches, AND gates, named bad-state outputs."""

    def __init__(self) -> None:
        self.nvars = 0
        self.inputs: list[tuple[str, int]] = []
        self.latches: list[Latch] = []
        self.bad: list[tuple[str, int]] = []
        self.ands: list[tuple[int, int, int]] = []
        self._strash: dict[tuple[int, int], int] = {}
        self._pending: dict[str, tuple[int, bool]] = {}
        self._memo: dict[int, int] = {}  # z3 expression id -> literal, for one ``env`` (``_memo_env``)
        self._memo_env: Mapping[str, int] | None = None
        self._memo_roots: list[Expr] = []  # keeps the memoised expressions alive: z3 reuses a freed node's id

    # -- construction --------------------------------------------------------------------------------

    def _fresh(self) -> int:
        self.nvars += 1
        return 2 * self.nvars

    def input(self, name: str) -> int:
        lit = self._fresh()
        self.inputs.append((name, lit))
        return lit

    def latch(self, name: str, reset: bool) -> int:
        """A latch's current-value literal; its next-state function is given later by :meth:`set_next`."""
        lit = self._fresh()
        self._pending[name] = (lit, reset)
        return lit

    def set_next(self, name: str, nxt: int) -> None:
        lit, reset = self._pending.pop(name)
        self.latches.append(Latch(name, lit, nxt, reset))

    def add_bad(self, name: str, lit: int) -> None:
        self.bad.append((name, lit))

    def AND(self, a: int, b: int) -> int:
        if a == 0 or b == 0 or a == b ^ 1:
            return 0
        if a == 1 or a == b:
            return b
        if b == 1:
            return a
        key = (max(a, b), min(a, b))
        if key not in self._strash:
            lit = self._fresh()
            self.ands.append((lit, *key))
            self._strash[key] = lit
        return self._strash[key]

    def and_all(self, lits: Iterable[int]) -> int:
        xs = list(lits)
        while len(xs) > 1:
            xs = [self.AND(xs[i], xs[i + 1]) if i + 1 < len(xs) else xs[i] for i in range(0, len(xs), 2)]
        return xs[0] if xs else 1

    def or_all(self, lits: Iterable[int]) -> int:
        return self.and_all(x ^ 1 for x in lits) ^ 1

    def xor(self, a: int, b: int) -> int:
        return self.or_all([self.AND(a, b ^ 1), self.AND(a ^ 1, b)])

    def ite(self, c: int, a: int, b: int) -> int:
        return self.or_all([self.AND(c, a), self.AND(c ^ 1, b)])

    def from_z3(self, formula: Expr, env: Mapping[str, int]) -> int:
        """The literal of a bit-blasted z3 formula; ``env`` maps its Boolean variables to literals.

        Subformulas shared between calls with the same ``env`` are translated once.
        """
        if env is not self._memo_env:
            self._memo, self._memo_env, self._memo_roots = {}, env, []
        self._memo_roots.append(formula)
        return fold(formula, self._memo, lambda e, kids: self._gate(e, kids, env))

    def _gate(self, e: Expr, ch: list[int], env: Mapping[str, int]) -> int:
        if z3.is_true(e):
            return 1
        if z3.is_false(e):
            return 0
        kind = e.decl().kind()
        if kind == z3.Z3_OP_UNINTERPRETED and not ch:
            if str(e).startswith(OUT_PREFIX):
                return 1
            if str(e) not in env:
                raise ValueError(f"free variable {e} in a bit-blasted formula")
            return env[str(e)]
        if kind == z3.Z3_OP_NOT:
            return ch[0] ^ 1
        if kind == z3.Z3_OP_AND:
            return self.and_all(ch)
        if kind == z3.Z3_OP_OR:
            return self.or_all(ch)
        if kind in (z3.Z3_OP_EQ, z3.Z3_OP_IFF) and len(ch) == 2 and z3.is_bool(e.arg(0)):
            return self.xor(ch[0], ch[1]) ^ 1
        if kind == z3.Z3_OP_XOR or (kind == z3.Z3_OP_DISTINCT and len(ch) == 2):
            out = ch[0]
            for c in ch[1:]:
                out = self.xor(out, c)
            return out
        if kind == z3.Z3_OP_ITE:
            return self.ite(ch[0], ch[1], ch[2])
        if kind == z3.Z3_OP_IMPLIES:
            return self.or_all([ch[0] ^ 1, ch[1]])
        raise ValueError(f"operator {e.decl()} is not Boolean")

    # -- output --------------------------------------------------------------------------------------

    def _numbering(self) -> dict[int, int]:
        """AIGER's order: inputs 1..I, latches I+1..I+L, gates after, each after its operands."""
        if self._pending:
            raise ValueError(f"latches without a next-state function: {sorted(self._pending)}")
        order = [lit for _, lit in self.inputs] + [la.lit for la in self.latches] + [g[0] for g in self.ands]
        return {lit >> 1: i + 1 for i, lit in enumerate(order)}

    def write(self, stream: IO[bytes], comments: Sequence[str] = ()) -> None:
        """The binary AIGER 1.9 format, with a symbol table and ``comments``."""
        num = self._numbering()

        def lit(x: int) -> int:
            return x if x < 2 else 2 * num[x >> 1] + (x & 1)

        n_in, n_latch, n_and = len(self.inputs), len(self.latches), len(self.ands)
        stream.write(f"aig {n_in + n_latch + n_and} {n_in} {n_latch} 0 {n_and} {len(self.bad)}\n".encode())
        for la in self.latches:
            stream.write(f"{lit(la.next)} {int(la.reset)}\n".encode())
        for _, b in self.bad:
            stream.write(f"{lit(b)}\n".encode())
        for out, a, b in self.ands:
            lo, r0, r1 = lit(out), lit(a), lit(b)
            r0, r1 = max(r0, r1), min(r0, r1)
            stream.write(_varint(lo - r0) + _varint(r0 - r1))
        for i, (name, _) in enumerate(self.inputs):
            stream.write(f"i{i} {name}\n".encode())
        for i, la in enumerate(self.latches):
            stream.write(f"l{i} {la.name}\n".encode())
        for i, (name, _) in enumerate(self.bad):
            stream.write(f"b{i} {name}\n".encode())
        if comments:
            stream.write(b"c\n" + "".join(f"{c}\n" for c in comments).encode())

    def simulate(self, steps: Sequence[Mapping[str, bool]]) -> list[dict[str, bool]]:
        """Run the circuit from its reset state: per step, the latch values and which bad outputs are 1.

        ``steps[t]`` gives the inputs of step ``t`` by name (missing inputs are 0).  The result has one entry
        more than ``steps``: the state before each step and after the last, keyed by latch name and by
        ``"bad:" + property``.
        """
        value: dict[int, bool] = {}

        def ev(x: int) -> bool:
            return bool(x) if x < 2 else value[x >> 1] ^ bool(x & 1)

        state = {la.lit >> 1: la.reset for la in self.latches}
        frames = []
        for t in range(len(steps) + 1):
            value = dict(state)
            given = steps[t] if t < len(steps) else {}
            for name, lit in self.inputs:
                value[lit >> 1] = bool(given.get(name, False))
            for out, a, b in self.ands:
                value[out >> 1] = ev(a) and ev(b)
            frame = {la.name: value[la.lit >> 1] for la in self.latches}
            frame.update({f"bad:{name}": ev(lit) for name, lit in self.bad})
            frames.append(frame)
            state = {la.lit >> 1: ev(la.next) for la in self.latches}
        return frames


def _varint(x: int) -> bytes:
    out = bytearray()
    while x & ~0x7F:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)
    return bytes(out)
