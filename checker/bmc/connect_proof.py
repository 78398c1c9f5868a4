"""An unbounded z3 proof of the KIP-618 zombie-fencing core of Kafka Connect (``prove_connect_fencing``).

The protocol (KIP-618 §Task count records, §Source task startup, §Zombie fencing)
-------------------------------------------------------------------
A source connector's tasks of task-config generation ``g`` (the ``g``-th
``commit-<connector>`` record in the config topic) are ``0..count(g)-1``; task
``n`` of *every* generation uses the transactional id
``${groupId}-${connector}-${n}`` (``Worker.taskTransactionalId``).  A
worker starting an exactly-once task (``ExactlyOnceWorkerSourceTask``) records ``taskGeneration``, asks
the leader for a **zombie-fencing round** (step 3), calls
``initTransactions()`` -- InitProducerId, which bumps the epoch of the id and
so fences every older instance of the same task id (step 5) -- and then
**re-reads the config topic** and gives up if the generation moved
(``postProducerCheck``, step 6).  The round (``DistributedHerder.doFenceZombieSourceTasks``,
``DistributedHerder.doFenceZombieSourceTasks``) reads the config topic; if
the connector is pending fencing (no task-count record follows the latest
task configs) it calls ``Admin.fenceProducers`` on the ids of tasks
``0..record-1`` of the latest *task-count record* (skipped for the first
round and for the 1 -> 1 shortcut), re-reads (409 if the generation moved)
and writes the task-count record = the current task count through the
leader's transactional producer ``connect-cluster-${groupId}`` (``DistributedConfig.transactionalProducerId``; a
deposed leader's write is aborted by its successor's ``claimWritePrivileges``).

Property proved (for all depths)
--------------------------------
For any two exactly-once task instances ``Z`` (task ``nz`` of generation
``gz``) and ``X`` (task ``nx`` of generation ``gx``), in any interleaving:

* **P1** (``task_starts_after_task_count_record``): if ``Z`` is in its send
  loop, a task-count record follows generation ``gz``'s task configs;
* **P2** (``no_commit_by_fenced_generation``): if ``X`` has entered its send
  loop and ``gx > gz``, then ``Z`` cannot commit a transaction any more: it
  is not in its send loop holding the current epoch of its transactional id
  (an instance whose epoch is not the coordinator's gets PRODUCER_FENCED /
  INVALID_PRODUCER_EPOCH, so none of its records becomes committed).

Because ``Z`` and ``X`` are arbitrary (symbolic task numbers, generations and
task counts), the proof covers every pair of instances of an unbounded run
with unboundedly many generations; task counts range over ``1..max_tasks``
(the scenario schema's bound is 4).

The abstraction (why it is sound)
---------------------------------
The abstract state is: ``G`` the latest committed generation; ``F`` the
generation after whose commit the latest task-count record was written (-1:
none; the connector is pending fencing iff ``F < G``) and ``R`` that record's
value; the current leader's round (``rph`` 0 none / 1 fenced / 2 record sent,
``rg`` its generation); and for ``Z`` and ``X``: the start-up phase, whether
the instance holds the *current* epoch of its transactional id, whether and at
which ``G`` it called InitProducerId, and (for ``X``) whether it entered its
send loop.  Every other instance, worker and fault is the environment: it may
call InitProducerId on any transactional id at any time (which can only fence
``Z``/``X``), and ``Z``/``X`` may fail at any phase.  Moves (each one step of
:class:`model.systems.connect.ConnectSystem` or of the environment):
``Reconfigure``, ``FenceZombies``, ``WriteTaskCountRecord``,
``CommitTaskCountRecord``, ``RoundAbandoned`` (409, 500, a failed privileged
write, a new leader), ``InitProducerId(other)``, and per focus instance
``StartTask``, ``InitProducer``, ``VerifyGeneration``, ``TaskFailed``,
``CommitTransaction``.  Guards are *weaker* than the model's (no assignment or
membership checks, rounds may start without a requester, requesters of a
failed round stay waiting), so every concrete run maps to an abstract run and
a property of all abstract runs holds of the model.  Two premises come from
the leader protocol rather than from this core, and are read from
``connect_transactional_leader``: with the transactional leader, the
task-count record is committed only if the generation is still the round's
(a reconfiguration between the send and the commit needs a new leader, whose
``claimWritePrivileges`` aborts the old leader's transaction) and the leader
does not reconfigure while its record is in flight.  Without it, the record is
appended at whatever the log end then is (``F := G``) -- and the proof fails.

What is read from the model, not restated
-----------------------------------------
* flags (:class:`model.variants.ProtocolFlags`): ``connect_zombie_fencing``
  (start-up asks for a round, rounds exist), ``connect_reread_after_producer_init``
  (the verify guard ``G == g``), ``connect_transactional_leader`` (above),
  ``transaction_version`` (for the coordinator runs below);
* the round's plan: :func:`model.connect.herder.fencing_plan` evaluated on
  every (pending, record, task count) snapshot -- outcome and fenced tasks --
  and compiled into an ``If`` table;
* the transactional ids: :func:`model.connect.records.task_tid` for every task
  (two instances fence each other iff their ids are equal);
* the epoch-fencing rule: :func:`derive_coordinator_rules` runs the shared
  client/coordinator code (:func:`model.connect.producers.init_transactions`,
  ``send_transactional``, ``end_transaction`` over
  :mod:`model.coordinator.transaction.transaction_coordinator`) to establish that InitProducerId makes the
  caller current, fences an older holder whether idle or mid-transaction
  (PRODUCER_FENCED / INVALID_PRODUCER_EPOCH on its next send or commit), and
  that a commit keeps the committer current; each fact that does not hold is
  left out of the transition relation (and the proof then fails).

Method: 1-induction with a strengthening invariant (like
:func:`checker.bmc.engine.prove_broker_core`): the base case (the initial abstract
state satisfies it), the induction step (one arbitrary move from any state
satisfying it keeps it and the property).  If the step fails, the result is
"induction step fails" with the counterexample step, and a bounded search
from the initial state reports whether the property itself is violated in the
abstraction (``abstract_trace``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, NamedTuple

import z3

from keos.model.connect import herder as herder
from keos.model.connect.config_topic import ConfigSnapshot
from keos.model.connect.producers import KafkaCluster, end_transaction, init_transactions, send_transactional
from keos.model.connect.records import OUTPUT, task_tid
from keos.model.connect.worker import TaskPhase
from keos.model.coordinator.transaction import transaction_coordinator as tc
from keos.model.log.partition import PartitionLeader
from keos.model.protocol.errors import Errors
from keos.model.variants import ProtocolFlags

__all__ = [
    "MOVES",
    "PHASES",
    "WITNESSES",
    "AbstractEvaluator",
    "CoreRules",
    "abstract_reachable",
    "cross_check",
    "derive_coordinator_rules",
    "derive_rules",
    "prove_connect_fencing",
    "prove_for_model",
]

#: Abstract start-up phases of a focus instance (0: not started yet; FAILED also stands for stopped).
PHASES: tuple[str, ...] = (
    "NOT_STARTED",
    TaskPhase.FENCING_REQUESTED,
    TaskPhase.FENCING_DONE,
    TaskPhase.PRODUCER_READY,
    TaskPhase.RUNNING,
    TaskPhase.FAILED,
)
NOT_STARTED, REQUESTED, DONE, READY, RUNNING, FAILED = range(len(PHASES))

_FOCUS = ("z", "x")
_INST_MOVES = ("StartTask", "InitProducer", "VerifyGeneration", "TaskFailed", "CommitTransaction")
#: The abstract moves, by index (the counterexample names them).
MOVES: tuple[str, ...] = (
    "Reconfigure",
    "FenceZombies",
    "WriteTaskCountRecord",
    "CommitTaskCountRecord",
    "RoundAbandoned",
    "InitProducerId(other instance)",
    *(f"{m}({f.upper()})" for f in _FOCUS for m in _INST_MOVES),
)
_FENCED = (Errors.INVALID_PRODUCER_EPOCH, Errors.PRODUCER_FENCED)
_STATE_VARS: tuple[tuple[str, str], ...] = (
    ("G", "int"),
    ("F", "int"),
    ("R", "int"),
    ("rph", "int"),
    ("rg", "int"),
    ("x_started", "bool"),
    *(
        (f"{f}_{v}", k)
        for f in _FOCUS
        for v, k in (("ph", "int"), ("cur", "bool"), ("inited", "bool"), ("initG", "int"))
    ),
)


# -- rules read from the executable model ------------------------------------------------------------


@dataclass(frozen=True)
class CoreRules:
    """What the abstraction reads from the model (see the module docstring)."""

    init_makes_current: bool
    init_fences_older: bool
    stale_commit_rejected: bool
    commit_keeps_current: bool
    plan: tuple[tuple[bool, int, int, str, tuple[int, ...]], ...]
    tids: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        """The facts (the plan table is summarised by its size)."""
        return {
            "init_makes_current": self.init_makes_current,
            "init_fences_older": self.init_fences_older,
            "stale_commit_rejected": self.stale_commit_rejected,
            "commit_keeps_current": self.commit_keeps_current,
            "fencing_plan_rows": len(self.plan),
            "task_transactional_ids": list(self.tids),
        }


def _current(cluster: KafkaCluster, h: Any) -> bool:
    md = cluster.coordinator[h.transactional_id]
    return md is not None and (md.producer_id, md.producer_epoch) == (h.producer_id, h.producer_epoch)


def derive_coordinator_rules(flags: ProtocolFlags) -> dict[str, bool]:
    """Run the shared producer/coordinator code on one transactional id and report the epoch-fencing facts.

    Scenarios: an instance A initialises, sends and commits (does it stay
    current?); a second instance B initialises while A is idle, and again
    while A has an open transaction (is A fenced -- its send / commit gets
    PRODUCER_FENCED or INVALID_PRODUCER_EPOCH -- and is B current?).
    """
    cfg = tc.coordinator_config(flags, tc.SHORT_MAX_VALUE)
    tid = task_tid(0)
    fresh = KafkaCluster(tuple(PartitionLeader() for _ in range(OUTPUT + 1)), (None,) * (tid + 1), 0)
    makes_current, fences, rejected, keeps = True, True, True, True
    k, a, _ = init_transactions(fresh, tid, OUTPUT + 1, cfg)
    if a is None:
        return dict(
            init_makes_current=False, init_fences_older=False, stale_commit_rejected=False, commit_keeps_current=False
        )
    makes_current &= _current(k, a)
    k, a, err, _ = send_transactional(k, a, OUTPUT, (1,), flags)
    k, a, err2, _ = end_transaction(k, a, True, cfg)
    keeps &= err == err2 == Errors.NONE and _current(k, a)
    for open_txn in (False, True):
        k1, a1 = k, a
        if open_txn:
            k1, a1, err, _ = send_transactional(k1, a1, OUTPUT, (2,), flags)
            keeps &= err == Errors.NONE and _current(k1, a1)
        k1, b, _ = init_transactions(k1, tid, OUTPUT + 1, cfg)
        if b is None:
            return dict(
                init_makes_current=False,
                init_fences_older=False,
                stale_commit_rejected=False,
                commit_keeps_current=keeps,
            )
        makes_current &= _current(k1, b)
        fences &= not _current(k1, a1)
        if not open_txn:
            k1, a1, err, _ = send_transactional(k1, a1, OUTPUT, (3,), flags)
            rejected &= err in _FENCED
            if err != Errors.NONE:
                continue
        _k, _a, err, _ = end_transaction(k1, a1, True, cfg)
        rejected &= err in _FENCED
    return dict(
        init_makes_current=makes_current,
        init_fences_older=fences,
        stale_commit_rejected=rejected,
        commit_keeps_current=keeps,
    )


def derive_rules(flags: ProtocolFlags, max_tasks: int = 4) -> CoreRules:
    """The coordinator facts, the round's plan table and the task transactional ids, from the model."""
    plan = tuple(
        (pending, record, count, *herder.fencing_plan(ConfigSnapshot(0, count, pending, record, 0)))
        for pending in (False, True)
        for record in range(-1, max_tasks + 1)
        for count in range(1, max_tasks + 1)
    )
    return CoreRules(**derive_coordinator_rules(flags), plan=plan, tids=tuple(task_tid(n) for n in range(max_tasks)))


# -- the abstract system --------------------------------------------------------------------------------


State = dict[str, Any]


class _Core:
    """The abstract transition system for fixed flags and rules; symbolic focus parameters."""

    def __init__(self, flags: ProtocolFlags, rules: CoreRules, max_tasks: int) -> None:
        self.flags, self.rules, self.M = flags, rules, max_tasks
        self.count = z3.Function("task_count", z3.IntSort(), z3.IntSort())
        self.n = {f: z3.Int(f"n_{f}") for f in _FOCUS}
        self.g = {f: z3.Int(f"g_{f}") for f in _FOCUS}
        self.counted: list[Any] = []

    def c(self, gen: Any) -> Any:
        """``count(gen)``: the task count of generation ``gen`` (bounded by :meth:`axioms`)."""
        self.counted.append(gen)
        return self.count(gen)

    def axioms(self) -> Any:
        """Task counts in ``1..max_tasks`` for every generation the formulas mention; focus tasks exist."""
        out = [z3.Implies(t >= 0, z3.And(self.count(t) >= 1, self.count(t) <= self.M)) for t in self.counted]
        for f in _FOCUS:
            out += [
                self.g[f] >= 0,
                self.n[f] >= 0,
                self.n[f] < self.c(self.g[f]),
                z3.And(self.count(self.g[f]) >= 1, self.count(self.g[f]) <= self.M),
            ]
        return z3.And(out)

    def tid(self, n: Any) -> Any:
        """``task_tid(n)`` as a table read from :func:`model.connect.records.task_tid`."""
        out: Any = z3.IntVal(-1)
        for k, t in enumerate(self.rules.tids):
            out = z3.If(n == k, t, out)
        return out

    def state(self, tag: str) -> State:
        return {v: (z3.Int if k == "int" else z3.Bool)(f"{v}_{tag}") for v, k in _STATE_VARS}

    def _plan(self, pending: Any, record: Any, count: Any, n: Any) -> tuple[Any, Any, Any]:
        """(nothing to do, a round is started, task ``n``'s id is fenced) per :func:`fencing_plan`."""
        nothing, fenced = [], []
        for p, r, c, outcome, tasks in self.rules.plan:
            row = z3.And(pending == p, record == r, count == c)
            if outcome == herder.NOTHING_TO_DO:
                nothing.append(row)
            if tasks:
                fenced.append(z3.And(row, z3.Or([self.tid(n) == task_tid(t) for t in tasks])))
        no = z3.Or(nothing) if nothing else z3.BoolVal(False)
        return no, z3.Not(no), z3.Or(fenced) if fenced else z3.BoolVal(False)

    def init(self, S: State) -> Any:
        """Generation 0 committed, no task-count record, no round, no instance started."""
        return z3.And(
            S["G"] == 0,
            S["F"] == -1,
            S["R"] == -1,
            S["rph"] == 0,
            S["rg"] == -1,
            z3.Not(S["x_started"]),
            *(
                z3.And(
                    S[f"{f}_ph"] == NOT_STARTED, z3.Not(S[f"{f}_cur"]), z3.Not(S[f"{f}_inited"]), S[f"{f}_initG"] == -1
                )
                for f in _FOCUS
            ),
        )

    @staticmethod
    def _upd(S: State, T: State, **changes: Any) -> Any:
        return z3.And([T[v] == changes.get(v, S[v]) for v, _ in _STATE_VARS])

    def _answer(self, S: State) -> dict[str, Any]:
        """A round's 200 reaches every requester: FENCING_REQUESTED -> FENCING_DONE."""
        return {f"{f}_ph": z3.If(S[f"{f}_ph"] == REQUESTED, DONE, S[f"{f}_ph"]) for f in _FOCUS}

    def moves(self, S: State, T: State, t: Any) -> list[Any]:
        """One formula per entry of :data:`MOVES`; ``t`` is the other instance's transactional id."""
        fl, ru = self.flags, self.rules
        txn_leader = fl.connect_transactional_leader
        out: list[Any] = []
        # Reconfigure: the commit record of new task configs (the model's CommitTaskConfigs; its Reconfigure writes
        # the task configs, which change no snapshot: a stutter here), a transactional leader not while its
        # task-count record is in flight (putTaskConfigs and the round's followup both run on its tick thread).
        out.append(z3.And(z3.Or(not txn_leader, S["rph"] != 2), self._upd(S, T, G=S["G"] + 1)))
        # FenceZombies: read to the end; fencing_plan; Admin.fenceProducers on the planned task ids.
        pending = S["F"] < S["G"]
        no_z, start, fenced = {}, None, {}
        for f in _FOCUS:
            no_z[f], start, fenced[f] = self._plan(pending, S["R"], self.c(S["G"]), self.n[f])
        assert start is not None
        nothing = no_z["z"]
        fence_ok = fl.connect_zombie_fencing
        out.append(
            z3.And(
                fence_ok,
                z3.If(
                    nothing,
                    self._upd(S, T, **self._answer(S)),
                    self._upd(
                        S, T, rph=1, rg=S["G"], **{f"{f}_cur": z3.And(S[f"{f}_cur"], z3.Not(fenced[f])) for f in _FOCUS}
                    ),
                ),
            )
        )
        # WriteTaskCountRecord: re-read; 409 if the generation moved, else the record is sent.
        out.append(z3.And(S["rph"] == 1, self._upd(S, T, rph=z3.If(S["G"] == S["rg"], 2, 0))))
        # CommitTaskCountRecord: the record follows the latest commit in the log; requesters get 200.
        out.append(
            z3.And(
                S["rph"] == 2,
                z3.Or(not txn_leader, S["G"] == S["rg"]),
                self._upd(S, T, F=S["G"], R=self.c(S["rg"]), rph=0, **self._answer(S)),
            )
        )
        # RoundAbandoned: 409 / 500 / privileged write failed / the leader was deposed.
        out.append(self._upd(S, T, rph=0))
        # InitProducerId by any other instance or Admin.fenceProducers call on transactional id t.
        out.append(
            self._upd(
                S,
                T,
                **{
                    f"{f}_cur": z3.And(S[f"{f}_cur"], z3.Not(z3.And(ru.init_fences_older, self.tid(self.n[f]) == t)))
                    for f in _FOCUS
                },
            )
        )
        for f in _FOCUS:
            other = "x" if f == "z" else "z"
            ph, g = S[f"{f}_ph"], self.g[f]
            first = REQUESTED if fl.connect_zombie_fencing else DONE
            out.append(z3.And(ph == NOT_STARTED, g <= S["G"], self._upd(S, T, **{f"{f}_ph": first})))
            same = self.tid(self.n[f]) == self.tid(self.n[other])
            out.append(
                z3.And(
                    ph == DONE,
                    self._upd(
                        S,
                        T,
                        **{
                            f"{f}_ph": READY,
                            f"{f}_inited": True,
                            f"{f}_initG": S["G"],
                            f"{f}_cur": ru.init_makes_current,
                            f"{other}_cur": z3.And(S[f"{other}_cur"], z3.Not(z3.And(ru.init_fences_older, same))),
                        },
                    ),
                )
            )
            ok = z3.Or(not fl.connect_reread_after_producer_init, S["G"] == g)
            started = {"x_started": z3.Or(S["x_started"], ok)} if f == "x" else {}
            out.append(z3.And(ph == READY, self._upd(S, T, **{f"{f}_ph": z3.If(ok, RUNNING, FAILED)}, **started)))
            out.append(z3.And(ph >= REQUESTED, ph <= RUNNING, self._upd(S, T, **{f"{f}_ph": FAILED})))
            out.append(z3.And(ph == RUNNING, S[f"{f}_cur"], self._upd(S, T, **{f"{f}_cur": ru.commit_keeps_current})))
        assert len(out) == len(MOVES)
        return out

    def step(self, S: State, T: State, move: Any, t: Any) -> Any:
        return z3.Or([z3.And(move == i, m) for i, m in enumerate(self.moves(S, T, t))])

    def can_commit(self, S: State, f: str) -> Any:
        """Focus instance ``f`` could commit a transaction: in its send loop, and not rejected by its epoch."""
        return z3.And(S[f"{f}_ph"] == RUNNING, z3.Or(S[f"{f}_cur"], not self.rules.stale_commit_rejected))

    def properties(self, S: State) -> dict[str, Any]:
        """P1 and P2 of the module docstring."""
        return {
            "task_starts_after_task_count_record": z3.Implies(S["z_ph"] == RUNNING, S["F"] >= self.g["z"]),
            "no_commit_by_fenced_generation": z3.Not(
                z3.And(S["x_started"], self.g["x"] > self.g["z"], self.can_commit(S, "z"))
            ),
        }

    def invariant(self, S: State) -> dict[str, Any]:
        """The strengthening invariant, by name (the counterexample says which conjunct breaks)."""
        G, F, R, rph, rg = S["G"], S["F"], S["R"], S["rph"], S["rg"]
        gz, nz = self.g["z"], self.n["z"]
        inv: dict[str, Any] = {
            "config topic: 0 <= G, -1 <= F <= G, R = count(F)": z3.And(
                G >= 0, F >= -1, F <= G, z3.If(F >= 0, self.c(F) == R, R == -1)
            ),
            "round: generation read while pending, still current once sent": z3.And(
                rph >= 0, rph <= 2, z3.Implies(rph != 0, z3.And(rg > F, rg <= G)), z3.Implies(rph == 2, rg == G)
            ),
            "x_started only after X's verify": z3.Implies(
                S["x_started"], z3.Or(S["x_ph"] == RUNNING, S["x_ph"] == FAILED)
            ),
        }
        for f in _FOCUS:
            ph, g, initG = S[f"{f}_ph"], self.g[f], S[f"{f}_initG"]
            inv[f"{f}: phase, started only with g <= G, current only after InitProducerId"] = z3.And(
                ph >= NOT_STARTED,
                ph <= FAILED,
                z3.Implies(ph != NOT_STARTED, g <= G),
                z3.Implies(ph <= DONE, z3.And(z3.Not(S[f"{f}_inited"]), z3.Not(S[f"{f}_cur"]))),
                z3.Implies(z3.Or(ph == READY, ph == RUNNING), S[f"{f}_inited"]),
                z3.Implies(S[f"{f}_inited"], z3.And(g <= initG, initG <= G)),
                z3.Implies(z3.Not(S[f"{f}_inited"]), z3.Not(S[f"{f}_cur"])),
            )
            inv[f"{f}: answered only after a task-count record follows its generation"] = z3.Implies(
                z3.Or(ph == DONE, ph == READY, ph == RUNNING, S[f"{f}_inited"]), g <= F
            )
            inv[f"{f}: in the send loop only if it initialised while G == g"] = z3.Implies(ph == RUNNING, initG == g)
        same = self.tid(self.n["z"]) == self.tid(self.n["x"])
        both = z3.And(S["z_inited"], S["x_inited"], same)
        inv["one current holder per transactional id; the later InitProducerId wins"] = z3.And(
            z3.Implies(both, z3.Not(z3.And(S["z_cur"], S["x_cur"]))),
            z3.Implies(z3.And(both, S["z_initG"] < S["x_initG"]), z3.Not(S["z_cur"])),
            z3.Implies(z3.And(both, S["x_initG"] < S["z_initG"]), z3.Not(S["x_cur"])),
        )
        survivor = z3.And(S["z_cur"], S["z_inited"], S["z_initG"] <= gz)
        inv["Z survives rounds of later generations only through the 1 -> 1 shortcut"] = z3.Implies(
            z3.And(survivor, gz < F), z3.And(R == 1, nz == 0)
        )
        _no, _start, fenced_now = self._plan(rg > F, R, self.c(rg), nz)
        inv["Z survived the fence of a round in progress"] = z3.Implies(
            z3.And(survivor, rph != 0, rg > gz), z3.Not(fenced_now)
        )
        inv["X started => its generation is fenced and X initialised at it"] = z3.Implies(
            S["x_started"], z3.And(S["x_inited"], self.g["x"] <= F)
        )
        inv["a newer generation started => Z (initialised before it) is fenced"] = z3.Implies(
            z3.And(S["x_started"], self.g["x"] > gz, S["z_inited"], S["z_initG"] <= gz), z3.Not(S["z_cur"])
        )
        return inv


def _val(m: Any, x: Any) -> Any:
    v = m.eval(x, model_completion=True)
    return z3.is_true(v) if z3.is_bool(v) else v.as_long()


def _show(core: _Core, m: Any, S: State) -> dict[str, Any]:
    out = {v: _val(m, S[v]) for v, _ in _STATE_VARS}
    for f in _FOCUS:
        out[f"{f}_ph"] = PHASES[out[f"{f}_ph"]] if 0 <= out[f"{f}_ph"] < len(PHASES) else out[f"{f}_ph"]
    return out


def _params(core: _Core, m: Any) -> dict[str, Any]:
    return {
        f"{f.upper()}": f"task {_val(m, core.n[f])} of generation {_val(m, core.g[f])} "
        f"(count {_val(m, core.count(core.g[f]))})"
        for f in _FOCUS
    }


def _bad(core: _Core, S: State) -> Any:
    return z3.Not(z3.And(list(core.properties(S).values())))


#: Named predicates for :func:`abstract_reachable` (the proof is not vacuous if the protocol can reach them).
WITNESSES: dict[str, Any] = {
    "violation": _bad,
    "newer generation started while Z of an older one is in its send loop": lambda core, S: z3.And(
        S["x_started"], core.g["x"] > core.g["z"], S["z_ph"] == RUNNING
    ),
    "Z can commit in its send loop": lambda core, S: core.can_commit(S, "z"),
    "Z holds its epoch in its send loop after a later generation's round": lambda core, S: z3.And(
        S["z_cur"], S["z_ph"] == RUNNING, S["F"] > core.g["z"]
    ),
}


def abstract_reachable(flags: ProtocolFlags, witness: str, depth: int = 12, max_tasks: int = 4) -> list[str] | None:
    """A shortest abstract run from the initial state to :data:`WITNESSES` ``[witness]`` (None up to ``depth``).

    The first entry describes the focus instances; the rest are :data:`MOVES`.
    """
    rules = derive_rules(flags, max_tasks)
    core = _Core(flags, rules, max_tasks)
    pred = WITNESSES[witness]
    xs = [core.state(f"t{i}") for i in range(depth + 1)]
    mv = [z3.Int(f"mv_{i}") for i in range(depth)]
    tt = [z3.Int(f"tid_{i}") for i in range(depth)]
    solver = z3.Solver()
    solver.add(core.init(xs[0]))
    for k in range(depth + 1):
        if k:
            solver.add(core.step(xs[k - 1], xs[k], mv[k - 1], tt[k - 1]))
        solver.push()
        solver.add(pred(core, xs[k]), core.axioms())
        if solver.check() == z3.sat:
            m = solver.model()
            steps = [
                MOVES[_val(m, mv[i])] + (f" on id {_val(m, tt[i])}" if _val(m, mv[i]) == 5 else "") for i in range(k)
            ]
            return ["; ".join(f"{f}: {d}" for f, d in _params(core, m).items()), *steps]
        solver.pop()
    return None


def prove_connect_fencing(flags: ProtocolFlags, max_tasks: int = 4, trace_depth: int = 12) -> dict[str, Any]:
    """1-induction of P1 and P2 (module docstring) over the abstract Connect core under ``flags``."""
    start = time.perf_counter()
    rules = derive_rules(flags, max_tasks)
    core = _Core(flags, rules, max_tasks)
    S, T = core.state("pre"), core.state("post")
    move, t = z3.Int("move"), z3.Int("other_tid")
    inv_pre, inv_post = core.invariant(S), core.invariant(T)
    props_post = core.properties(T)
    out: dict[str, Any] = {
        "property": "KIP-618 fencing core: for any two exactly-once task instances Z, X -- P1 Z is in its send "
        "loop only after a task-count record follows its generation; P2 once X of a newer generation "
        "entered its send loop, Z cannot commit (it does not hold its transactional id's epoch)",
        "method": "1-induction with a strengthening invariant over an abstraction of ConnectSystem "
        f"(two symbolic focus instances, unbounded generations, task counts 1..{max_tasks})",
        "flags": {
            k: getattr(flags, k)
            for k in (
                "connect_zombie_fencing",
                "connect_reread_after_producer_init",
                "connect_transactional_leader",
                "transaction_version",
            )
        },
        "rules": rules.to_json(),
        "moves": list(MOVES),
    }
    base = z3.Solver()
    base.add(core.init(S), z3.Not(z3.And(*inv_pre.values(), *core.properties(S).values())), core.axioms())
    if base.check() == z3.sat:
        out.update(result="base case fails", elapsed_s=round(time.perf_counter() - start, 3))
        return out
    solver = z3.Solver()
    solver.add(*inv_pre.values(), *core.properties(S).values(), core.step(S, T, move, t))
    # The premise must be satisfiable with every move the flags enable, or UNSAT below would prove nothing.
    for i, (name, formula) in enumerate(zip(MOVES, core.moves(S, T, t), strict=True)):
        if z3.is_false(z3.simplify(formula)):
            continue  # switched off by the flags (FenceZombies without connect_zombie_fencing)
        solver.push()
        solver.add(move == i, core.axioms())
        if solver.check() != z3.sat:
            out.update(
                result="unknown",
                reason=f"vacuous: no state satisfying the invariant takes {name}",
                elapsed_s=round(time.perf_counter() - start, 3),
            )
            return out
        solver.pop()
    goal = {**inv_post, **props_post}
    solver.add(z3.Not(z3.And(list(goal.values()))), core.axioms())
    res = solver.check()
    if res == z3.unsat:
        out["result"] = "proved for all depths"
    elif res == z3.sat:
        m = solver.model()
        broken = [name for name, f in goal.items() if not z3.is_true(m.eval(f, model_completion=True))]
        mv = _val(m, move)
        out["result"] = "induction step fails"
        out["counterexample"] = {
            "focus": _params(core, m),
            "before": _show(core, m, S),
            "move": MOVES[mv] + (f" on transactional id {_val(m, t)}" if mv == 5 else ""),
            "after": _show(core, m, T),
            "broken": broken,
        }
        out["abstract_trace"] = abstract_reachable(flags, "violation", trace_depth, max_tasks)
        out["abstract_trace_depth"] = trace_depth
    else:
        out["result"] = "unknown"
    out["elapsed_s"] = round(time.perf_counter() - start, 3)
    return out


def prove_for_model(model: Any) -> dict[str, Any]:
    """The proof for a :class:`~model.systems.connect.ConnectSystem` scenario (the ``keos check --engine bmc`` hook).

    The transactional-leader premise holds only if every worker that may lead
    has ``exactly.once.source.support`` preparing or enabled
    (:func:`model.connect.herder.transactional_leader`); task counts up to the
    scenario's.  ``scope`` says what the result does not cover: records of
    at-least-once workers (plain writes, which no epoch fences) and the
    invariants the proof is not about.
    """
    from dataclasses import replace

    topo = model.topo
    txn = all(herder.transactional_leader(w, model.flags.connect_transactional_leader) for w in topo.workers)
    flags = replace(model.flags, connect_transactional_leader=txn)
    out = prove_connect_fencing(flags, max(4, topo.max_tasks))
    plain = [w for w, level in enumerate(topo.workers) if level != "enabled"]
    out["scope"] = (
        "exactly-once task instances of any run (abstract core, not the scenario's bounded space)"
        + (f"; not the plain records of at-least-once workers {plain}" if plain else "")
        + "; exactly_once_source_delivery, offsets_committed_with_records and no_config_write_by_deposed_leader "
        "are not covered"
    )
    return out


class AbstractEvaluator:
    """Evaluate the proof's named invariant conjuncts and properties on concrete abstract values.

    The formulas are the ones the proof uses (built once), with the state
    variables, focus parameters and ``task_count`` replaced by constants.
    """

    def __init__(self, flags: ProtocolFlags, counts: tuple[int, ...], max_tasks: int = 4) -> None:
        self.core = _Core(flags, derive_rules(flags, max_tasks), max_tasks)
        self.S = self.core.state("c")
        self.named = {**self.core.invariant(self.S), **self.core.properties(self.S)}
        body: Any = z3.IntVal(1)
        for g, c in enumerate(counts):
            body = z3.If(z3.Var(0, z3.IntSort()) == g, c, body)
        self.named = {k: z3.substitute_funs(f, (self.core.count, body)) for k, f in self.named.items()}
        self.cache: dict[tuple[Any, ...], dict[str, bool]] = {}

    def __call__(self, values: dict[str, Any]) -> dict[str, bool]:
        """``values``: every state variable plus ``n_z, g_z, n_x, g_x``; returns ``{name: holds}``."""
        key = tuple(sorted(values.items()))
        if key not in self.cache:
            subst = [
                (self.S[v], z3.BoolVal(values[v]) if k == "bool" else z3.IntVal(values[v])) for v, k in _STATE_VARS
            ]
            subst += [(self.core.n[f], z3.IntVal(values[f"n_{f}"])) for f in _FOCUS]
            subst += [(self.core.g[f], z3.IntVal(values[f"g_{f}"])) for f in _FOCUS]
            out = {}
            for name, formula in self.named.items():
                v = z3.simplify(z3.substitute(formula, *subst))
                assert z3.is_true(v) or z3.is_false(v), f"{name} did not evaluate: {v}"
                out[name] = z3.is_true(v)
            self.cache[key] = out
        return self.cache[key]


# -- cross-check against the executable model ------------------------------------------------------------


class _Instance(NamedTuple):
    """History of one exactly-once task instance along a run (what the abstraction's ghosts record)."""

    worker: int
    task: int
    generation: int
    phase: str
    handle: Any = None
    inited: bool = False
    init_g: int = -1
    started: bool = False
    retired: bool = False


def _globals(sys: Any, s: Any) -> dict[str, Any]:
    from keos.invariants.connect_logs import task_count_follows_generation
    from keos.model.connect.records import CONFIG_TOPIC

    config = s.kafka.partitions[CONFIG_TOPIC]
    latest = sys._latest(s)
    fenced = [g for g in range(len(sys.topo.task_counts)) if task_count_follows_generation(config, g)]
    rnd = s.workers[s.leader].fencing if s.leader >= 0 else None
    return {
        "G": latest.generation,
        "F": max(fenced, default=-1),
        "R": latest.task_count_record,
        "rph": 0 if rnd is None else (1 if rnd.phase == "fenced" else 2),
        "rg": -1 if rnd is None else rnd.generation,
    }


def _focus(s: Any, f: str, inst: _Instance | None) -> dict[str, Any]:
    if inst is None:
        return {
            f"n_{f}": 0,
            f"g_{f}": 0,
            f"{f}_ph": NOT_STARTED,
            f"{f}_cur": False,
            f"{f}_inited": False,
            f"{f}_initG": -1,
        }
    cur = inst.handle is not None and _current(s.kafka, inst.handle)
    ph = FAILED if inst.retired else PHASES.index(inst.phase)
    return {
        f"n_{f}": inst.task,
        f"g_{f}": inst.generation,
        f"{f}_ph": ph,
        f"{f}_cur": cur,
        f"{f}_inited": inst.inited,
        f"{f}_initG": inst.init_g,
    }


def _advance(sys: Any, s: Any, action: Any, new: Any, history: tuple[_Instance, ...]) -> tuple[_Instance, ...]:
    """The instances' histories after ``action`` took ``s`` to ``new``."""
    renewed = tuple(action.args) if action.kind in ("StartTask", "RestartTask", "RestartFailedTask") else None
    latest = sys._latest(s).generation
    out: list[_Instance] = []
    seen: set[tuple[int, int]] = set()
    for inst in history:
        key = (inst.worker, inst.task)
        t = None if inst.retired else new.workers[inst.worker].instance(inst.task)
        if inst.retired or key == renewed or t is None:
            out.append(inst._replace(retired=True))
            continue
        seen.add(key)
        inited, init_g = inst.inited, inst.init_g
        if action.kind == "InitProducer" and tuple(action.args) == key and t.producer is not None:
            inited, init_g = True, latest
        out.append(
            inst._replace(
                phase=t.phase,
                handle=t.producer or inst.handle,
                inited=inited,
                init_g=init_g,
                started=inst.started or t.phase == TaskPhase.RUNNING,
            )
        )
    for w, wk in enumerate(new.workers):
        for t in wk.tasks:
            if t.exactly_once and (w, t.task) not in seen:
                out.append(_Instance(w, t.task, t.generation, t.phase, started=t.phase == TaskPhase.RUNNING))
    return tuple(out)


def cross_check(model: Any, max_nodes: int = 300_000, max_tasks: int = 4) -> dict[str, Any]:
    """Exhaustive search of a :class:`~model.systems.connect.ConnectSystem` mapped into the abstraction.

    The search is over (state, run history) nodes -- the history being, per
    exactly-once instance of the run, what the abstraction's ghost variables
    record: when it called InitProducerId, whether it reached its send loop.
    For every node and every ordered pair (Z, X) of instances (X may be
    absent) the abstract state is computed -- ``G``, ``F``, ``R`` from the
    config topic, the current leader's round, each instance's phase and
    whether its producer holds the coordinator's epoch -- and every invariant
    conjunct and property of the proof is evaluated on it (``failures``: the
    first abstract state breaking each).  P1 is compared with the model's
    ``task_starts_after_task_count_record`` at every node; every step that
    violates ``no_commit_by_fenced_generation`` must start from a node where
    P2 is false for some pair (``p2_unexplained`` counts those that do not).
    ``reached`` lists the :data:`WITNESSES` the concrete runs reach.
    """
    from collections import deque

    ev = AbstractEvaluator(model.flags, model.topo.task_counts, max_tasks)
    props = {p.name: p for p in model.properties()}
    p1 = props.get("task_starts_after_task_count_record")
    p2 = props.get("no_commit_by_fenced_generation")
    failures: dict[str, dict[str, Any]] = {}
    reached: set[str] = set()
    counts = {"nodes": 0, "pairs": 0, "p1_disagreements": 0, "p2_violating_steps": 0, "p2_unexplained": 0}
    init: tuple[Any, tuple[_Instance, ...]] = (model.init_states()[0], ())
    seen: set[tuple[str, tuple[_Instance, ...]]] = {(model.fingerprint(init[0]), ())}
    queue: deque[tuple[Any, tuple[_Instance, ...]]] = deque([init])
    while queue and counts["nodes"] < max_nodes:
        s, history = queue.popleft()
        counts["nodes"] += 1
        base = _globals(model, s)
        p2_false = False
        for z in history:
            for x in [*[i for i in history if i is not z], None]:
                values = {**base, **_focus(s, "z", z), **_focus(s, "x", x), "x_started": bool(x and x.started)}
                counts["pairs"] += 1
                result = ev(values)
                for name, ok in result.items():
                    if not ok:
                        failures.setdefault(name, values)
                p2_false |= not result["no_commit_by_fenced_generation"]
                if values["x_started"] and values["g_x"] > values["g_z"] and values["z_ph"] == RUNNING:
                    reached.add("newer generation started while Z of an older one is in its send loop")
                if values["z_ph"] == RUNNING and values["z_cur"]:
                    reached.add("Z can commit in its send loop")
                    if values["F"] > values["g_z"]:
                        reached.add("Z holds its epoch in its send loop after a later generation's round")
        if p1 is not None and p1.predicate is not None:
            running = [z for z in history if not z.retired and z.phase == TaskPhase.RUNNING]
            abstract = all(base["F"] >= z.generation for z in running)
            counts["p1_disagreements"] += abstract != p1.predicate(s)
        for action in model.actions(s):
            step = model.step(s, action)
            if step is None:
                continue
            if p2 is not None and p2.predicate is not None and p2.predicate(s) and not p2.predicate(step.state):
                counts["p2_violating_steps"] += 1
                counts["p2_unexplained"] += not p2_false
            node = (step.state, _advance(model, s, action, step.state, history))
            key = (model.fingerprint(node[0]), node[1])
            if key not in seen:
                seen.add(key)
                queue.append(node)
    return {**counts, "complete": not queue, "failures": failures, "reached": sorted(reached)}
