"""Request sequences derived from the model: the cases of a differential run.

A case is a short sequence of client requests with every field the model controls fixed
(producer id as the model's symbol, epoch, base sequence, record count, transactional id,
group generation, member id).  Cases come from the model's own state space, read from a
:class:`~keos.checker.differential.sides.ModelSide` while the sequence is built:

* **systematic** (:func:`systematic_cases`, a bounded breadth-first cover): every prefix that
  puts the transaction coordinator into one of its client-reachable states (no entry, Empty,
  Ongoing with data or offsets, CompleteCommit, CompleteAbort, fenced by a new InitProducerId,
  aborted by the transaction timeout) and the group into each of its states (none, Stable,
  CompletingRebalance, Empty after a leave), followed by every request with its edge variants:
  stale, current and next epoch; the next sequence, a gap, sequence 0, a duplicate of each of
  the last five batches; a stale, current and next generation; a known, unknown and former member.
* **random walks** (:func:`random_case`): from a fresh state, each step picks one enabled client
  action and one of its edge variants with an explicit ``random.Random(seed)``.

A few cases run with a short transaction timeout so that the coordinator's timeout abort
(``abortTimedOutTransactions``) can be awaited between requests (``wait_timeout``).
"""

from __future__ import annotations

import random
from typing import Any, NamedTuple

from keos.checker.differential.sides import PARTITIONS, ModelSide
from keos.model.coordinator.transaction.transaction_state import TransactionState as S

__all__ = ["Case", "Step", "execute_model", "random_case", "systematic_cases"]

#: A producer id no InitProducerId of a case ever returns.
BOGUS_PID = "p99"
#: The transaction timeout of the cases that await a timeout abort (ms).
SHORT_TIMEOUT_MS = 1000


class Step(NamedTuple):
    """One client request: its handler and its fields (sorted name/value pairs)."""

    kind: str
    fields: tuple[tuple[str, Any], ...] = ()

    def get(self, name: str, default: Any = None) -> Any:
        for k, v in self.fields:
            if k == name:
                return v
        return default

    def render(self) -> str:
        return f"{self.kind}(" + ", ".join(f"{k}={v!r}" for k, v in self.fields) + ")"


def step(kind: str, **fields: Any) -> Step:
    return Step(kind, tuple(sorted(fields.items())))


class Case(NamedTuple):
    """A request sequence; ``timeout_ms`` is the transaction timeout its InitProducerId asks for."""

    name: str
    steps: tuple[Step, ...]
    timeout_ms: int = 60000


# -- what a client knows (read from the model while the case is built) ------------------------------------


class Knowledge:
    """The client-visible identifiers after each step (as a real client would hold them)."""

    def __init__(self) -> None:
        self.pid = "-1"
        self.epoch = -1
        self.idem_pid = ""
        self.member = ""
        self.members: list[str] = []

    def learn(self, s: Step, answer: Any) -> None:
        if s.kind == "init" and answer.error == "NONE":
            if s.get("transactional"):
                self.pid, self.epoch = answer.producer_id, answer.producer_epoch
            else:
                self.idem_pid = answer.producer_id
        if s.kind == "join" and answer.error == "NONE":
            self.member = answer.extra[0]
            if self.member not in self.members:
                self.members.append(self.member)


def execute_model(model: ModelSide, s: Step) -> Any:
    """Run one step on the model side (the runner does the same on both sides)."""
    return dispatch(model, s, lambda pid: pid, lambda m: m)


def dispatch(side: Any, s: Step, pid: Any, member: Any) -> Any:
    """Send step ``s`` to ``side``; ``pid``/``member`` translate the model's symbols for that side."""
    g = s.get
    k = s.kind
    if k == "init":
        return side.init_producer_id(g("transactional"), pid(g("pid")), g("epoch"))
    if k == "add_partitions":
        return side.add_partitions(pid(g("pid")), g("epoch"), g("partitions"))
    if k == "add_offsets":
        return side.add_offsets(pid(g("pid")), g("epoch"))
    if k == "end_txn":
        return side.end_txn(pid(g("pid")), g("epoch"), g("committed"))
    if k == "produce":
        values = tuple(range(g("first_value"), g("first_value") + g("count")))
        return side.produce(pid(g("pid")), g("epoch"), g("partition"), g("base_sequence"), values,
                            g("transactional"))
    if k == "txn_offset_commit":
        return side.txn_offset_commit(pid(g("pid")), g("epoch"), member(g("member")), g("generation"),
                                      g("partition"), g("offset"))
    if k == "join":
        return side.join(member(g("member")))
    if k == "sync":
        return side.sync(member(g("member")), g("generation"))
    if k == "heartbeat":
        return side.heartbeat(member(g("member")), g("generation"))
    if k == "leave":
        return side.leave(member(g("member")))
    if k == "offset_commit":
        return side.offset_commit(member(g("member")), g("generation"), g("partition"), g("offset"))
    if k == "offset_fetch":
        return side.offset_fetch(g("partition"), g("require_stable"))
    if k == "find_coordinator":
        return side.find_coordinator(g("key_type"))
    if k == "wait_timeout":
        return side.timeout_abort()
    raise ValueError(f"unknown step kind {k!r}")


# -- the menu of actions and their edge variants ---------------------------------------------------------


def _epochs(e: int) -> list[int]:
    return [max(e - 1, -1) if e > 0 else 0, e, e + 1] if e >= 0 else [0]


def _sequences(model: ModelSide, pid: str, epoch: int, partition: int) -> list[int]:
    """Next sequence, a gap, 0, the one before, and a duplicate of each of the last five batches."""
    entry = model.leaders[partition].entry(model.pid_int(pid)) if pid.startswith("p") else None
    if entry is None or entry.producer_epoch != epoch or not entry.batches:
        return [0, 1, 2]
    nxt = entry.last_seq + 1
    return [nxt, nxt + 1, nxt + 3, 0, max(nxt - 1, 0), *(b.first_seq for b in entry.batches[-5:])]


def _batch_count(model: ModelSide, pid: str, epoch: int, partition: int, seq: int) -> int:
    """A duplicate repeats the cached batch exactly (same first and last sequence)."""
    entry = model.leaders[partition].entry(model.pid_int(pid)) if pid.startswith("p") else None
    if entry is not None and entry.producer_epoch == epoch:
        for b in entry.batches:
            if b.first_seq == seq:
                return b.last_seq - b.first_seq + 1
    return 0


def variants(model: ModelSide, know: Knowledge, kind: str, timeout_case: bool, value: int) -> list[Step]:
    """Every variant of request ``kind`` the client could send now (fields from the model's state)."""
    pid, e = know.pid, know.epoch
    out: list[Step] = []
    gen = model.group.generation
    members = [know.member or "", *(m for m in know.members if m != know.member), "c9-9"]
    if kind == "init":
        out.append(step("init", transactional=True, pid="-1", epoch=-1))
        if pid != "-1":
            out += [step("init", transactional=True, pid=pid, epoch=x) for x in _epochs(e)]
            out.append(step("init", transactional=True, pid=BOGUS_PID, epoch=0))
        out.append(step("init", transactional=False, pid="-1", epoch=-1))
    elif kind in ("add_partitions", "add_offsets", "end_txn"):
        for x in _epochs(e):
            if kind == "add_partitions":
                out += [step(kind, pid=pid, epoch=x, partitions=ps) for ps in ((0,), (1,), (0, 1))]
            elif kind == "add_offsets":
                out.append(step(kind, pid=pid, epoch=x))
            else:
                out += [step(kind, pid=pid, epoch=x, committed=c) for c in (True, False)]
        if kind == "end_txn":
            out.append(step(kind, pid=BOGUS_PID, epoch=max(e, 0), committed=True))
        else:
            out.append(step(kind, pid=BOGUS_PID, epoch=max(e, 0), **({"partitions": (0,)} if kind ==
                                                                         "add_partitions" else {})))
    elif kind == "produce":
        producers = []
        if pid != "-1":
            producers += [(pid, x, True) for x in _epochs(e)] + [(pid, e, False)]
        if know.idem_pid:
            producers.append((know.idem_pid, 0, False))
        for p_, x, txn in producers:
            for partition in range(PARTITIONS):
                for seq in _sequences(model, p_, x, partition):
                    count = _batch_count(model, p_, x, partition, seq) or (1 + value % 3)
                    out.append(step("produce", pid=p_, epoch=x, partition=partition, base_sequence=seq,
                                    count=count, transactional=txn, first_value=value))
    elif kind == "txn_offset_commit":
        for x in _epochs(e):
            for m in members:
                for g in sorted({gen, gen - 1, gen + 1, -1}):
                    out.append(step(kind, pid=pid, epoch=x, member=m if g >= 0 else "", generation=g,
                                    partition=value % PARTITIONS, offset=value))
    elif kind == "join":
        out += [step("join", member=m) for m in members]
    elif kind in ("sync", "heartbeat"):
        out += [step(kind, member=m, generation=g) for m in members for g in sorted({gen, gen - 1, gen + 1})]
    elif kind == "leave":
        out += [step("leave", member=m) for m in members if m]
    elif kind == "offset_commit":
        for m in members:
            for g in sorted({gen, gen - 1, gen + 1, -1}):
                out.append(step(kind, member=m if g >= 0 else "", generation=g, partition=value % PARTITIONS,
                                offset=value))
    elif kind == "offset_fetch":
        out += [step(kind, partition=p, require_stable=r) for p in range(PARTITIONS) for r in (False, True)]
    elif kind == "find_coordinator":
        out += [step(kind, key_type=t) for t in (0, 1)]
    elif kind == "wait_timeout" and timeout_case and model.md is not None and model.md.state == S.ONGOING:
        out.append(step("wait_timeout"))
    return list(dict.fromkeys(out))


KINDS = ("init", "add_partitions", "produce", "end_txn", "add_offsets", "txn_offset_commit", "join", "sync",
         "heartbeat", "leave", "offset_commit", "offset_fetch", "find_coordinator", "wait_timeout")
#: Relative weights of the random walk (the transactional path dominates, as in a real client).
WEIGHTS = {"init": 3, "add_partitions": 4, "produce": 8, "end_txn": 4, "add_offsets": 2, "txn_offset_commit": 2,
           "join": 2, "sync": 2, "heartbeat": 1, "leave": 1, "offset_commit": 2, "offset_fetch": 1,
           "find_coordinator": 1, "wait_timeout": 3}


def _advance(model: ModelSide, know: Knowledge, s: Step) -> None:
    answer = execute_model(model, s)
    model.settle()
    know.learn(s, answer)


def random_case(rng: random.Random, name: str, max_len: int = 10) -> Case:
    """A random walk over the client's enabled actions, each with a random edge variant."""
    timeout_case = rng.random() < 0.06
    model, know = ModelSide(), Knowledge()
    steps: list[Step] = []
    length = rng.randint(3, max_len)
    # most walks start like a client: InitProducerId first (a fresh id otherwise sees its absence only)
    if rng.random() < 0.9:
        first = step("init", transactional=True, pid="-1", epoch=-1)
        steps.append(first)
        _advance(model, know, first)
    while len(steps) < length:
        kinds = [k for k in KINDS if variants(model, know, k, timeout_case, 0)]
        kind = rng.choices(kinds, weights=[WEIGHTS[k] for k in kinds])[0]
        options = variants(model, know, kind, timeout_case, len(steps) * 10)
        # the current epoch / next sequence first: a walk mostly follows the protocol, edges sometimes
        s = options[0] if rng.random() < 0.5 and kind not in ("init",) else rng.choice(options)
        if kind == "produce" and rng.random() < 0.5:
            good = [o for o in options if o.get("epoch") == know.epoch and o.get("pid") == know.pid]
            s = good[0] if good else s
        steps.append(s)
        _advance(model, know, s)
    return Case(name, tuple(steps), SHORT_TIMEOUT_MS if timeout_case else 60000)


def _prefixes() -> list[tuple[str, list[Step], bool]]:
    init = step("init", transactional=True, pid="-1", epoch=-1)
    add0 = step("add_partitions", pid="p0", epoch=0, partitions=(0,))
    prod0 = step("produce", pid="p0", epoch=0, partition=0, base_sequence=0, count=2, transactional=True,
                 first_value=1)
    prod1 = step("produce", pid="p0", epoch=0, partition=0, base_sequence=2, count=1, transactional=True,
                 first_value=3)
    ongoing = [init, add0, prod0, prod1]
    join = step("join", member="")
    sync = step("sync", member="c0-0", generation=1)
    return [
        ("no transactional id", [], False),
        ("Empty", [init], False),
        ("Ongoing", ongoing, False),
        ("CompleteCommit", [*ongoing, step("end_txn", pid="p0", epoch=0, committed=True)], False),
        ("CompleteAbort", [*ongoing, step("end_txn", pid="p0", epoch=0, committed=False)], False),
        ("fenced by InitProducerId", [*ongoing, init], False),
        ("aborted by the timeout", [*ongoing, step("wait_timeout")], True),
        ("Ongoing with offsets", [init, step("add_offsets", pid="p0", epoch=0), join, sync,
                                  step("txn_offset_commit", pid="p0", epoch=0, member="c0-0", generation=1,
                                       partition=0, offset=5)], False),
        ("group CompletingRebalance", [init, join], False),
        ("group Stable, idempotent producer", [init, step("init", transactional=False, pid="-1", epoch=-1), join,
                                               sync, step("offset_commit", member="c0-0", generation=1,
                                                          partition=0, offset=3)], False),
        ("group Empty after leave", [init, join, sync, step("leave", member="c0-0")], False),
    ]


def systematic_cases(prefix_name: str = "sys") -> list[Case]:
    """Every request variant after every coordinator/group state prefix (bounded BFS of depth one)."""
    cases: list[Case] = []
    for label, prefix, timeout_case in _prefixes():
        model, know = ModelSide(), Knowledge()
        for s in prefix:
            _advance(model, know, s)
        for kind in KINDS:
            for v in variants(model, know, kind, timeout_case, 7):
                name = f"{prefix_name}-{len(cases)}"
                cases.append(Case(name, (*prefix, v), SHORT_TIMEOUT_MS if timeout_case else 60000))
        del label
    return cases
