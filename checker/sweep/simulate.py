"""Seeded random walks with swarm fault injection: the pure core of ``keos sweep``.

Exhaustive search (:mod:`checker.explore.search`) proves an invariant within a
scenario's bounds; random walks trade that proof for reach.  A walk starts in
the model's initial state and, at every step, picks one of the enabled actions
(:meth:`model.interface.Model.actions`) at random, checks every ``always``
property on the state it reaches and stops at the first violation, when no
action is enabled (the protocol has quiesced: every record acknowledged or
failed) or after ``steps`` steps.

Faults are actions (``DropMessage``, ``RequestTimeout``, ``RestartLeader`` ...),
so fault injection is a matter of *weighting*: a protocol step has weight 1, a
fault action the weight of its kind (:meth:`model.interface.FaultHooks.fault_kind`), and a kind
with weight 0 is never injected.  *Swarm testing* (Groce et al., "Swarm
Testing", ISSTA 2012) draws, per run, a random subset of the model's fault
kinds (:meth:`model.interface.FaultHooks.fault_kinds`) with random weights: a run that never resets
a connection explores deeper retry interleavings than one that spends its
fault budget on resets, and the diversity across runs finds more bugs than
one "all faults on" configuration.  The profile is part of the run's
descriptor, so every run can be replayed exactly.

Swarm testing applies to protocol steps too.  Half of the swarm runs also
carry a *protocol bias* (the profile key :data:`PROTOCOL_BIAS`, never a fault
kind): every *lane* of protocol steps -- an action kind, and for a delivery
the kind of message delivered (``Deliver:WriteTxnMarkersRequest``) -- gets a
weight of its own between ``2**-spread`` and ``2**spread``, drawn from the
run's seed and the lane's name (:func:`protocol_bias`).  A uniform
walk almost never leaves one enabled step untaken for twenty steps; a biased
run that starves, say, marker deliveries or heartbeats reaches the states
where Kafka's races live (a request that arrives while the previous
transaction's markers are still being written, KAFKA-18464) without a
scenario or a weight written for that race.  The bias is a pure function of
the seed and the lane, so the walk still replays exactly.

Two more swarm dimensions, each drawn for half of the swarm runs, independently
(issue 27; measured on the weakened variants of ``keos sweep --mutants``):

* *Newest first* (:data:`NEWEST_FIRST`): a protocol step that has stayed
  enabled for ``k`` steps weighs ``2 ** -(a * k)`` times as much.  The walk
  follows the causal chain it is on (a request, its answer, the next request)
  while whatever has been pending for a while -- markers in flight, a paused
  worker's resumption, a timeout, a rebalance -- waits: the shape of most of
  Kafka's races between a slow background task and a fast client.  A uniform
  walk takes a long-enabled step almost surely within a few steps; PCT's lane
  order starves a lane only when it happens to draw it low.  On KAFKA-18464's
  race (``no_kafka_18464_fix``) it raised the catch rate from 2 % to 12 % of runs.
* *Fault triggers* (:data:`FAULT_TRIGGER`, :func:`fault_trigger`): a fault
  fires right after the n-th step of a protocol lane -- a fault at a *moment*,
  not at a rate.  A run with a fault budget of one or two and always-enabled
  faults (restarts, failovers) otherwise spends its budget in the first few
  steps; most bugs need the fault while one particular thing is pending
  (a leader restart after an acks=all answer but before replication, a
  group-coordinator failover after a TxnOffsetCommit was written, a failed
  CompleteCommit append).  Each (lane, fault kind) pair triggers with a
  probability ``p`` drawn per run, at an occurrence ``n`` drawn per pair, both
  from the run's seed and the pair's name, so the walk replays exactly;
  elsewhere the run injects no fault.

Two more, from the shortest counterexamples of the variants the sweep still
missed (issue 27, item 4):

* *Priority change points* (PCT's second ingredient): under the protocol bias a
  lane's weight is drawn anew at each of its first :data:`PRIORITY_CHANGES`
  steps (the weight of its k-th step is that of the lane ``"lane#k"``), so one
  lane can run early once and then starve -- the first rebalance after a worker
  pauses happens at once, the one after the reconfiguration waits while the
  lagging worker initialises its producer and commits
  (``no_reread_after_producer_init``; a single weight per lane has to be high
  and low at once).
* *Fault branching* (:data:`BRANCH`, half of the swarm runs): a fault is the
  expensive part of a run to reach, so the run does not throw its future away
  after one try: when the walk ends (step budget, quiescence; its eventually
  properties judged first), it restarts from the state right after one of the
  faults on its current path -- the least restarted, seeded -- and walks on,
  :data:`BRANCH_RESTARTS` times.  A fault placed well is tried with several
  continuations (the interleavings after a coordinator failover, a pause, an
  append failure), at the cost of more steps per run.  The run's ``actions``
  are the path that ended it (for a violation: the path from the initial state
  to it, which is what is minimised and replayed); ``events``, ``faults`` and
  ``reached`` count every branch.

The profile key of each (``~protocol``, ``~newest``, ``~trigger``, ``~branch``)
is part of the run's descriptor, next to the fault weights.  All of these draw
a run afresh; a bug that needs *two* precisely placed faults (a batch expiry,
then the loss of the second InitProducerId answer: ``init_pid_retry_fenced``;
from the state right after the expiry one continuation in about 120 catches it,
and a run places the expiry in its short window in about one run in 20) was
caught by none of 2,000 such runs.  The last dimension, :data:`ARCHIVE` (half
of the swarm runs), learns across runs: the runs of a group share a Go-Explore
archive of the cells (sets of events on the path) they reached, and an archive
run starts from a rare cell instead of the initial state
(:mod:`checker.sweep.archive`; the walk takes the archive as ``archive``).
The archive also *probes faults at milestones*: at each step that adds an
event to the path's set, every fault enabled there is taken once, off the
walk, and the states it reaches are archived as new cells, so a chain of
faults each in its own short window is built one fault per run (a probed
fault that breaks an invariant is the walk's next step).

Determinism contract: a run is a pure function of its descriptor (model,
seed, step budget, fault weights).  All randomness comes from
``random.Random(seed)`` (Mersenne Twister, stable across platforms and Python
versions); seeds derive from the sweep seed and the run's key with blake2b
(:func:`derive_seed`), never :func:`hash`.  A violating walk is shrunk with
:func:`checker.minimize.minimize` (ddmin, replaying on the model) and turned
into the common trace format with :func:`checker.trace.make_trace` (which
replays it first).  Violations are deduplicated by :func:`signature`: the
invariant plus the *shape* (sequence of action kinds) of the minimal trace.

Eventually (liveness) properties: after the walk's fault phase, a model
with eventually properties runs a *fair quiescence phase*
(:func:`checker.liveness.settle`): protocol steps only, timeouts included,
least recently taken first, until no protocol step is enabled, for at most
``settle_factor`` times the walk's step budget.  A walk that settles in a
state where an eventually property is false found a *stuck* state; a walk
that revisits a state around a weakly fair cycle with the property false
found a *livelock* (its trace is a lasso, ``loop_start`` marks the cycle);
a walk that does neither within the bound is a *suspected livelock*
(``WalkResult.suspected``), not a violation: nothing replayable confirms it.

This module imports no Spark: the sweep's executors, the plain-Python
baseline and the tests all run the same code.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from keos.checker.liveness import LIVELOCK, STUCK, settle
from keos.checker.minimize import minimize
from keos.checker.sweep.archive import ARCHIVE, ARCHIVE_RUNS, Archive, ArchivedCell, feature
from keos.checker.trace import Trace, make_trace
from keos.model.interface import Action, Expectation, Model, Property, Step

__all__ = [
    "BRANCH",
    "FAULT_TRIGGER",
    "NEWEST_FIRST",
    "PROFILES",
    "PROTOCOL_BIAS",
    "PROTOCOL_BIAS_SPREAD",
    "SETTLE_FACTOR",
    "Finding",
    "WalkResult",
    "derive_seed",
    "fault_classifier",
    "fault_profile",
    "fault_trigger",
    "investigate",
    "lane",
    "model_fault_kinds",
    "protocol_bias",
    "random_walk",
    "shape",
    "signature",
    "swarm_profile",
]

#: Fault profiles a sweep can use: ``swarm`` (random subset, random weights per
#: run), ``uniform`` (every fault kind, weight 1) and ``none`` (no faults: the
#: control group; invariants that need a fault to break must hold here).
PROFILES = ("swarm", "uniform", "none")

#: Profile key of the protocol bias (see the module doc): its value is the spread ``s``, a biased lane weighs
#: between ``2**-s`` and 2.  Fault kinds are identifiers, so a key starting with ``~`` never names one.
PROTOCOL_BIAS = "~protocol"

#: The spread of a swarm run's protocol bias: lane weights range over 2**-8 .. 2**8 (close to a random priority order).
PROTOCOL_BIAS_SPREAD = 8.0

#: Profile key of the newest-first bias (see the module doc): its value ``a`` makes a protocol step that has been
#: enabled without interruption for ``k`` steps weigh ``2 ** -(a * k)`` times as much (``k`` capped at
#: :data:`NEWEST_FIRST_CAP`).  Like :data:`PROTOCOL_BIAS` it starts with ``~``, so it never names a fault kind.
NEWEST_FIRST = "~newest"
NEWEST_FIRST_CAP = 12
#: The share of swarm runs with the newest-first bias, and the range its rate ``a`` is drawn from (uniformly).
NEWEST_FIRST_RUNS = 0.5
NEWEST_FIRST_RATE = (0.5, 2.0)

#: Profile key of the fault triggers (see :func:`fault_trigger`): its value is the share ``p`` of (lane, fault
#: kind) pairs that trigger a fault.
FAULT_TRIGGER = "~trigger"
#: The share of swarm runs with fault triggers, and the range their share ``p`` is drawn from (log-uniformly):
#: a small ``p`` leaves the fault budget for late trigger points, a large one spends it early.
TRIGGER_RUNS = 0.5
TRIGGER_SHARE = (1 / 32, 1 / 4)
#: In a triggered run a fault weighs this many times its weight at its trigger point (right after the n-th step
#: of its lane: 64 against protocol steps of weight about 1, so it almost surely fires), and 0 elsewhere.
TRIGGER_BOOST = 64.0
#: A trigger fires at the n-th step of its lane, n at most this.
TRIGGER_MAX_OCCURRENCE = 6

#: Priority change points of the protocol bias: a lane's weight is drawn anew at each of its first
#: ``PRIORITY_CHANGES`` occurrences (the lane's k-th step weighs ``protocol_bias`` of ``"lane#k"``), then stays.
PRIORITY_CHANGES = 3

#: Profile key of fault branching (see :func:`random_walk`): its value is the number of restarts, each from
#: the state right after one of the faults the run injected so far.
BRANCH = "~branch"
#: The share of swarm runs that branch at their faults, and how many restarts they make.
BRANCH_RUNS = 0.5
BRANCH_RESTARTS = 7

#: The fair quiescence phase may take this many times the walk's step budget before the walk is a
#: suspected livelock (the budget bounds the fault phase, so it is about the longest protocol run).
SETTLE_FACTOR = 10


def derive_seed(sweep_seed: int, key: str | int) -> int:
    """The seed of run ``key`` in a sweep: 63 bits of blake2b(``"{sweep_seed}:{key}"``).

    63 bits so the seed fits a signed 64-bit column (Spark ``LongType``,
    Parquet ``INT64``) unchanged.
    """
    digest = hashlib.blake2b(f"{sweep_seed}:{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def swarm_profile(fault_kinds: Sequence[str], seed: int) -> dict[str, float]:
    """A random subset of ``fault_kinds`` with random weights (swarm testing).

    Each kind is enabled with probability 1/2 (at least one is, when the model
    has any); an enabled kind gets a weight in [1/8, 2] on a log scale,
    relative to a protocol step's weight of 1.  Then, each with probability
    1/2 and independently: the protocol bias (:data:`PROTOCOL_BIAS`), the
    newest-first bias (:data:`NEWEST_FIRST`, rate in :data:`NEWEST_FIRST_RATE`)
    and fault triggers (:data:`FAULT_TRIGGER`, share in :data:`TRIGGER_SHARE`;
    the subset still says which kinds a triggered run may inject: fewer kinds,
    fewer trigger points that spend the budget before the one that matters;
    against triggers over every kind, measured on ``keos sweep --mutants
    --runs 2000``, it raised the rarest catches, e.g. a failed CompleteCommit
    append from 2 to 6 runs, at a cost to easier ones); last, fault branching
    (:data:`BRANCH`, :data:`BRANCH_RESTARTS` restarts).  The draws come in that order from a stream of their
    own (``derive_seed(seed, "swarm")``), so the profile does not shift the
    walk and a later dimension never changes an earlier one's draw.
    """
    kinds = list(fault_kinds)
    if not kinds:
        return {}
    rng = random.Random(derive_seed(seed, "swarm"))
    enabled = [k for k in kinds if rng.random() < 0.5]
    if not enabled:
        enabled = [kinds[rng.randrange(len(kinds))]]
    profile = {k: round(2.0 ** rng.uniform(-3.0, 1.0), 4) for k in enabled}
    if rng.random() < 0.5:
        profile[PROTOCOL_BIAS] = PROTOCOL_BIAS_SPREAD
    if rng.random() < NEWEST_FIRST_RUNS:
        low, high = NEWEST_FIRST_RATE
        profile[NEWEST_FIRST] = round(low + (high - low) * rng.random(), 4)
    if rng.random() < TRIGGER_RUNS:
        low, high = TRIGGER_SHARE
        profile[FAULT_TRIGGER] = round(2.0 ** rng.uniform(math.log2(low), math.log2(high)), 4)
    if rng.random() < BRANCH_RUNS:
        profile[BRANCH] = float(BRANCH_RESTARTS)
    if rng.random() < ARCHIVE_RUNS:
        profile[ARCHIVE] = 1.0
    return profile


def lane(action: Action) -> str:
    """The lane of a protocol step for the protocol bias: its kind, and for a step whose argument is a
    network envelope (``model.network.Envelope``: anything with a ``body``) the class of the message."""
    for arg in action.args:
        body = getattr(arg, "body", None)
        if body is not None:
            return f"{action.kind}:{type(body).__name__}"
    return action.kind


def protocol_bias(seed: int, lane_name: str, spread: float) -> float:
    """The weight of protocol lane ``lane_name`` in the run with ``seed`` under a bias of ``spread``:
    ``2 ** x`` with ``x`` uniform in ``[-spread, spread]``, drawn from ``derive_seed(seed, "bias:" + lane)``
    (stable across processes and platforms).

    With a wide spread the weights approach a random *priority order* of the lanes, as in PCT
    (Burckhardt et al., "A Randomized Scheduler with Probabilistic Guarantees of Finding Bugs",
    ASPLOS 2010): the run mostly takes the highest-weighted enabled lane, so a low lane stays pending
    for as long as others can move, which is what a race between two of Kafka's threads needs.
    Measured on KAFKA-18464's race (``no_kafka_18464_fix``, 25 steps): 0.5 % of biased walks at
    spread 8 against 0.1 % at spread 4 and 0.05 % unbiased; wider spreads gain nothing more.
    """
    u = (derive_seed(seed, f"bias:{lane_name}") % 1_000_000) / 1_000_000
    return 2.0 ** (spread * (2.0 * u - 1.0))


def fault_trigger(seed: int, lane_name: str, kind: str, share: float) -> int:
    """Which step of lane ``lane_name`` triggers a fault of ``kind`` in the run with ``seed``: ``0`` for
    none (a share ``1 - share`` of the (lane, kind) pairs), else ``n >= 1``, the n-th step of the lane
    (``n`` geometric: 1 for half of the pairs, 2 for a quarter, ... at most :data:`TRIGGER_MAX_OCCURRENCE`).

    Both come from ``derive_seed(seed, "trigger:{lane}>{kind}")``: its low bits read as a fraction decide
    whether the pair triggers, its high bits' trailing ones count the occurrence.
    """
    h = derive_seed(seed, f"trigger:{lane_name}>{kind}")
    if (h % 1_000_000) / 1_000_000 >= share:
        return 0
    bits, n = h >> 32, 1
    while bits & 1 and n < TRIGGER_MAX_OCCURRENCE:
        bits >>= 1
        n += 1
    return n


def fault_profile(profile: str, fault_kinds: Sequence[str], seed: int) -> dict[str, float]:
    """The fault weights of a run under ``profile`` (one of :data:`PROFILES`)."""
    if profile == "swarm":
        return swarm_profile(fault_kinds, seed)
    if profile == "uniform":
        return {k: 1.0 for k in fault_kinds}
    if profile == "none":
        return {}
    raise ValueError(f"unknown fault profile {profile!r} (known: {', '.join(PROFILES)})")


@dataclass
class WalkResult:
    """What one random walk did.

    Attributes:
        seed: the walk's seed.
        actions: the actions taken, in order.
        violation: the first ``always`` property violated (``None`` if none was).
        quiescent: the walk ended because no action (with non-zero weight) was enabled.
        events: how often each event label was emitted (coverage counters).
        faults: how many faults of each kind were injected.
        reached: the ``sometimes`` properties witnessed on the walk.
        liveness: ``"stuck"`` or ``"livelock"`` when ``violation`` is an
            eventually property, else ``None``.
        loop_start: a livelock's cycle is ``actions[loop_start:]``.
        settle_steps: protocol steps taken by the quiescence phase (the last
            ``settle_steps`` of :attr:`actions`).
        suspected: eventually properties of a *suspected livelock*: the
            quiescence phase did not settle within its bound and they were
            false all through its second half, yet no fair cycle repeated.
        violation_path: for a *permitted* violation the walk went on past, the
            path up to it (``None`` otherwise: the path is :attr:`actions`).
    """

    seed: int
    actions: list[Action]
    violation: str | None = None
    quiescent: bool = False
    events: dict[str, int] = field(default_factory=dict)
    faults: dict[str, int] = field(default_factory=dict)
    reached: tuple[str, ...] = ()
    liveness: str | None = None
    loop_start: int | None = None
    settle_steps: int = 0
    suspected: tuple[str, ...] = ()
    violation_path: list[Action] | None = None

    @property
    def steps(self) -> int:
        """Number of steps taken."""
        return len(self.actions)

    @property
    def violating_actions(self) -> list[Action]:
        """The path that ends in :attr:`violation`: :attr:`actions`, or for a permitted violation the walk went
        on past (see ``permitted`` of :func:`random_walk`), the path as it was then."""
        return self.violation_path if self.violation_path is not None else self.actions


def model_fault_kinds(model: Model) -> tuple[str, ...]:
    """The model's fault kinds (:meth:`model.interface.FaultHooks.fault_kinds`).

    A model without the hook falls back to the kinds with a positive budget in
    ``describe()["faults"]`` (the convention every keos model follows).
    """
    hook = getattr(model, "fault_kinds", None)
    if hook is not None:
        return tuple(hook())
    budget = model.describe().get("faults", {})
    if not isinstance(budget, dict) or budget.get("total", 1) <= 0:
        return ()
    return tuple(k for k, v in budget.items() if k != "total" and isinstance(v, int) and v > 0)


def fault_classifier(model: Model) -> Callable[[Any, Action], str | None]:
    """``(state, action) -> fault kind or None`` (:meth:`model.interface.FaultHooks.fault_kind`).

    A model without the hook falls back to taking the action and reading the
    ``fault:<kind>`` event its step emits (slower: one extra step per action).
    """
    hook = getattr(model, "fault_kind", None)
    if hook is not None:
        return lambda _state, action: hook(action)

    def by_event(state: Any, action: Action) -> str | None:
        step = model.step(state, action)
        if step is None:
            return None
        return next((e[len("fault:") :] for e in step.events if e.startswith("fault:")), None)

    return by_event


def _event_witnesses(event_props: Sequence[Property]) -> dict[str, tuple[str, ...]]:
    """Memo ``event label -> names of the event-based sometimes properties it witnesses``.

    :meth:`Property.matches_event` is a pure function of the property and the
    label, so one memo per set of properties serves every walk of a worker.
    """
    key = tuple((p.name, p.event) for p in event_props)
    memo = _WITNESS_MEMO.get(key)
    if memo is None:
        if len(_WITNESS_MEMO) > 64:
            _WITNESS_MEMO.clear()
        memo = _WITNESS_MEMO[key] = {}
    return memo


_WITNESS_MEMO: dict[tuple[tuple[str, str | None], ...], dict[str, tuple[str, ...]]] = {}


def random_walk(
    model: Model,
    seed: int,
    steps: int,
    fault_weights: Mapping[str, float] | None = None,
    settle_factor: int = SETTLE_FACTOR,
    archive: Archive | None = None,
    permitted: Collection[str] = (),
) -> WalkResult:
    """One seeded random walk of at most ``steps`` steps, checking invariants at each.

    A model with eventually properties then runs the fair quiescence phase
    (see the module doc) for at most ``settle_factor * steps`` protocol steps.

    ``fault_weights`` maps fault kinds to weights (protocol steps weigh 1);
    kinds not listed are disabled.  ``None`` enables every fault with weight 1.
    With the key :data:`PROTOCOL_BIAS` protocol steps weigh :func:`protocol_bias`
    of their :func:`lane` instead of 1; with :data:`NEWEST_FIRST` a protocol step
    enabled for ``k`` consecutive steps weighs ``2 ** -(a * min(k, NEWEST_FIRST_CAP))``
    times as much; with :data:`FAULT_TRIGGER` a fault weighs :data:`TRIGGER_BOOST`
    times its weight right after the step that :func:`fault_trigger` names for
    its kind (the n-th step of a lane; lane ``""`` is the initial state) and 0
    elsewhere; with :data:`BRANCH` the walk restarts that many times from the
    state right after one of the faults on its current path (the least
    restarted, ties drawn from the walk's stream), each end judged like a
    run's end.  With an ``archive`` (:class:`checker.sweep.archive.Archive`)
    every state the walk reaches is filed under its path's cell, and with
    :data:`ARCHIVE` the walk starts from a cell the archive draws (its path is
    the start of :attr:`WalkResult.actions`, so a counterexample still runs
    from the initial state).  The walk is deterministic given its arguments
    and the archive's contents.

    ``permitted`` names invariants whose violation the scenario permits (a
    documented Kafka behaviour, ``permitted = [...]`` in its TOML).  The walk does
    not stop at one: it records the first (its path becomes
    :attr:`WalkResult.violation_path`), stops checking that invariant and walks
    on, as the explicit search goes on past a permitted violation, so a
    non-permitted violation *behind* a permitted one is still found (issue 27:
    ``retry_refused_next_sequence_unchanged`` breaks its invariant four steps
    after its scenario's permitted reordering, and no walk that stopped there
    could catch it).  A walk reports a non-permitted violation if it finds one,
    else the permitted one.

    Per step: ``model.actions`` once; each enabled action classified once
    (fault kind -> weight); one draw ``rng.random() * total`` picks the action
    by its cumulative weight; ``model.step`` once (a model without the
    :class:`model.interface.FaultHooks` hook is classified by stepping every
    enabled action, and the chosen action's step is reused, not recomputed);
    then every ``always`` invariant is checked on the new state -- every step,
    whatever it emitted.  Sometimes-properties already witnessed are not
    evaluated again (they only feed the ``reached`` set).
    """
    props = model.properties()
    always = [(p, p.predicate) for p in props if p.expectation is Expectation.ALWAYS]
    pending_state = [p for p in props if p.expectation is Expectation.SOMETIMES and p.predicate is not None]
    event_sometimes = [p for p in props if p.expectation is Expectation.SOMETIMES and p.event is not None]
    witnesses = _event_witnesses(event_sometimes)
    pending_events = len(event_sometimes)
    rng = random.Random(seed)
    state = model.init_states()[0]
    taken: list[Action] = []
    events: dict[str, int] = {}
    faults: dict[str, int] = {}
    reached: set[str] = set()

    allowed = frozenset(permitted)
    permitted_hit: list[Any] = []  # [name, path] of the first permitted violation the walk went on past

    def first_violation(s: Any) -> Property | None:
        while True:
            bad = next((p for p, pred in always if pred is None or not pred(s)), None)  # no predicate: fails
            if bad is None or bad.name not in allowed:
                return bad
            if not permitted_hit:
                permitted_hit.extend((bad.name, list(taken)))
            marks.append(f"permitted:{bad.name}")
            always[:] = [(p, pred) for p, pred in always if p is not bad]

    marks: list[str] = []  # milestones of the current step for the archive: a permitted invariant broken

    def witness(s: Any) -> None:
        for p in [p for p in pending_state if p.predicate is not None and p.predicate(s)]:
            reached.add(p.name)
            pending_state.remove(p)

    bad = first_violation(state)
    if pending_state:
        witness(state)
    quiescent = False
    hook = getattr(model, "fault_kind", None)
    classify_by_step = hook is None
    actions_of = model.actions
    step_of = model.step
    weight_of = dict(fault_weights) if fault_weights is not None else None
    spread = weight_of.pop(PROTOCOL_BIAS, 0.0) if weight_of is not None else 0.0
    share = weight_of.pop(FAULT_TRIGGER, 0.0) if weight_of is not None else 0.0
    rate = weight_of.pop(NEWEST_FIRST, 0.0) if weight_of is not None else 0.0
    restarts = int(weight_of.pop(BRANCH, 0.0)) if weight_of is not None else 0
    from_archive = bool(weight_of.pop(ARCHIVE, 0.0)) if weight_of is not None else False
    count_lanes = bool(share or spread)
    enabled_since: dict[Action, int] = {}  # protocol step -> the step since which it has been enabled
    lane_weight: dict[str, float] = {}
    triggers: dict[tuple[str, str], int] = {}
    lane_steps: dict[str, int] = {"": 1}  # steps taken per lane ("": the initial state, once)
    last_lane = ""  # the lane of the last step: faults it triggers weigh TRIGGER_BOOST times more now
    # fault branching: the states right after the faults of the current path, as
    # [times restarted from, depth, state, enabled_since, lane_steps, last_lane, path_events, cell]
    branches: list[list[Any]] = []
    path_events: frozenset[str] = frozenset()  # the current path's distinct events (its archive cell)
    cell = 0  # the current path's cell key
    if archive is not None and from_archive:
        start = archive.pick(derive_seed(seed, "archive"))
        if start is not None:
            state, taken, path_events, cell = start.state, list(start.path), start.events, start.key
            enabled_since, lane_steps, last_lane = dict(start.since), dict(start.lanes), start.last_lane
            if pending_state:
                witness(state)
    eventually = [p for p in props if p.expectation is Expectation.EVENTUALLY]

    def triggered(kind: str) -> bool:
        key = (last_lane, kind)
        n = triggers.get(key)
        if n is None:
            n = triggers[key] = fault_trigger(seed, last_lane, kind, share)
        return n == lane_steps[last_lane]

    def protocol_weight(a: Action) -> float:
        name = lane(a)
        name = f"{name}#{min(lane_steps.get(name, 0), PRIORITY_CHANGES)}"
        w = lane_weight.get(name)
        if w is None:
            w = lane_weight[name] = protocol_bias(seed, name, spread)
        return w

    forced: tuple[Action, Step] | None = None  # a probed fault that breaks an invariant: the walk's next step

    def fault_of(a: Action, st: Step | None) -> str | None:
        if not classify_by_step:
            return hook(a)  # type: ignore[misc]
        return None if st is None else next((e[len("fault:") :] for e in st.events if e.startswith("fault:")), None)

    def probe_faults() -> tuple[Action, Step] | None:
        """Fault probing at a milestone (:attr:`checker.sweep.archive.Archive.probe`): every fault enabled in
        the current state is taken once, off the walk; each state it reaches that is a new cell is archived (the
        path plus that fault), so a later run can start from it.  A probed fault that breaks an invariant the
        scenario does not permit is returned: the walk takes it next (even past its step budget), so the run
        reports it."""
        assert archive is not None
        for a in actions_of(state):
            if not classify_by_step and hook(a) is None:  # type: ignore[misc]
                continue
            st = step_of(state, a)
            if st is None or fault_of(a, st) is None:
                continue
            if any(p.name not in allowed and (pred is None or not pred(st.state)) for p, pred in always):
                return a, st
            key, evs = cell, path_events
            for ev in archive.features(st.events, len(path_events)):
                if ev not in evs:
                    evs |= {ev}
                    new = feature(ev)
                    archive.hit(new)
                    key ^= new
            if archive.visit(key):
                probe_lane = lane(a) if count_lanes else last_lane
                lanes = dict(lane_steps)
                if count_lanes:
                    lanes[probe_lane] = lanes.get(probe_lane, 0) + 1
                archive.add(key, ArchivedCell(key, st.state, (*taken, a), evs, dict(enabled_since), lanes, probe_lane))
        return None

    while True:
        if bad is not None:
            break
        if forced is None and (quiescent or len(taken) >= steps):
            if not restarts or not branches:
                break
            if eventually:
                # the end of this branch is a run's end too: its eventually properties are judged before it is left
                segment = WalkResult(seed=seed, actions=taken, quiescent=quiescent, events=events, faults=faults)
                _quiesce(model, state, segment, settle_factor * max(steps, 1), [p for p, _ in always], eventually)
                if segment.violation is not None and (segment.liveness or segment.violation not in allowed):
                    segment.reached = tuple(sorted(reached))
                    return segment
                if segment.violation is not None and not permitted_hit:
                    permitted_hit.extend((segment.violation, list(taken)))  # a permitted one: go on
            restarts -= 1
            # the least-restarted fault point, the latest among equals (ties are rare: a fresh point is 0)
            low = min(b[0] for b in branches)
            pick = [b for b in branches if b[0] == low]
            point = pick[rng.randrange(len(pick))]
            point[0] += 1
            _, depth, state, since, lanes_at, last_lane, path_events, cell = point
            del taken[depth:]
            branches = [b for b in branches if b[1] <= depth]
            enabled_since, lane_steps = dict(since), dict(lanes_at)
            quiescent = False
            continue
        choices: list[Action] = []
        weights: list[float] = []
        kinds: list[str | None] = []
        stepped: list[Step | None] = []
        total = 0.0
        now = len(taken)
        fresh: dict[Action, int] = {}
        for a in actions_of(state):
            if classify_by_step:
                st = step_of(state, a)
                kind = (
                    None
                    if st is None
                    else next((e[len("fault:") :] for e in st.events if e.startswith("fault:")), None)
                )
            else:
                kind = hook(a)  # type: ignore[misc]
            if kind is None:
                w = protocol_weight(a) if spread else 1.0
                if rate:
                    since = enabled_since.get(a, now)
                    fresh[a] = since
                    w *= 2.0 ** -(rate * min(now - since, NEWEST_FIRST_CAP))
            else:
                w = 1.0 if weight_of is None else weight_of.get(kind, 0.0)
                if share and w:
                    w = w * TRIGGER_BOOST if triggered(kind) else 0.0
            if w > 0.0:
                choices.append(a)
                weights.append(w)
                kinds.append(kind)
                if classify_by_step:
                    stepped.append(st)
                total += w
        if rate:
            enabled_since = fresh
        step: Step | None
        if forced is not None:
            # a fault probe broke an invariant one fault away from the milestone just reached: take that fault
            action, step = forced
            kind = fault_of(action, step)
            forced = None
        else:
            if not choices:
                quiescent = True
                continue
            r = rng.random() * total
            i = 0
            last = len(choices) - 1
            while i < last and r >= weights[i]:
                r -= weights[i]
                i += 1
            action = choices[i]
            kind = kinds[i]
            step = stepped[i] if classify_by_step else step_of(state, action)
        if step is None:
            raise AssertionError(f"model listed {model.format_action(action)} as enabled but step() refused it")
        state = step.state
        taken.append(action)
        events_before = path_events
        if count_lanes:
            last_lane = lane(action)
            lane_steps[last_lane] = lane_steps.get(last_lane, 0) + 1
        if kind is not None:
            faults[kind] = faults.get(kind, 0) + 1
        if archive is not None:
            for ev in archive.features(step.events, len(events_before)):
                if ev not in path_events:
                    path_events |= {ev}
                    new = feature(ev)
                    archive.hit(new)
                    cell ^= new
        for ev in step.events:
            events[ev] = events.get(ev, 0) + 1
            if pending_events:
                names = witnesses.get(ev)
                if names is None:
                    names = witnesses[ev] = tuple(p.name for p in event_sometimes if p.matches_event(ev))
                for name in names:
                    if name not in reached:
                        reached.add(name)
                        pending_events -= 1
        if pending_state:
            witness(state)
        bad = first_violation(state)
        if marks:
            if archive is not None:
                for ev in marks:
                    if ev not in path_events:
                        path_events |= {ev}
                        new = feature(ev)
                        archive.hit(new)
                        cell ^= new
            marks.clear()
        if restarts and kind is not None and bad is None:
            branches.append([0, len(taken), state, dict(enabled_since), dict(lane_steps), last_lane, path_events, cell])
        if archive is not None and bad is None:
            if archive.visit(cell):
                archive.add(
                    cell,
                    ArchivedCell(
                        cell, state, tuple(taken), path_events, dict(enabled_since), dict(lane_steps), last_lane
                    ),
                )
            if archive.probe and path_events is not events_before:
                forced = probe_faults()  # a milestone: the path did something it had not done before
    result = WalkResult(
        seed=seed,
        actions=taken,
        violation=bad.name if bad is not None else None,
        quiescent=quiescent,
        events=events,
        faults=faults,
        reached=tuple(sorted(reached)),
    )
    if bad is None and eventually:
        _quiesce(model, state, result, settle_factor * max(steps, 1), [p for p, _ in always], eventually)
    if result.violation is None and permitted_hit:
        result.violation, result.violation_path = permitted_hit
    return result


def _quiesce(
    model: Model, state: Any, walk: WalkResult, bound: int, always: list[Property], eventually: list[Property]
) -> None:
    """The fair quiescence phase after the fault phase: extend ``walk`` and judge its eventually properties."""
    phase = settle(model, state, bound, always, eventually)
    offset = len(walk.actions)
    walk.actions.extend(phase.actions)
    walk.settle_steps = len(phase.actions)
    for ev, n in phase.events.items():
        walk.events[ev] = walk.events.get(ev, 0) + n
    if phase.outcome == "violation":
        walk.violation = phase.violation
    elif phase.outcome == "livelock":
        walk.violation, walk.liveness = phase.violation, LIVELOCK
        walk.loop_start = offset + (phase.loop_start or 0)
    elif phase.outcome == "settled":
        stuck = next((p for p in eventually if not p.holds(phase.final)), None)
        if stuck is not None:
            walk.violation, walk.liveness = stuck.name, STUCK
    elif phase.outcome == "unsettled":
        walk.suspected = phase.suspects


def shape(actions: Sequence[Action]) -> str:
    """The shape of a trace: its action kinds, space separated."""
    return " ".join(a.kind for a in actions)


def signature(invariant: str, actions: Sequence[Action]) -> str:
    """Deduplication key of a violation: blake2b-64 of the invariant and the trace's shape.

    Two runs that break the same invariant through the same sequence of
    action kinds (after minimisation) are one bug found twice.
    """
    return hashlib.blake2b(f"{invariant}|{shape(actions)}".encode(), digest_size=8).hexdigest()


@dataclass
class Finding:
    """A minimised, replayed violation of one random walk."""

    invariant: str
    signature: str
    shape: str
    trace: Trace
    original_length: int


def investigate(
    model: Model,
    walk: WalkResult,
    scenario: str,
    variant: str,
    permitted: Sequence[str] = (),
    cache: dict[tuple[str, tuple[Action, ...]], list[Action]] | None = None,
) -> Finding | None:
    """Minimise a violating walk into a replayed trace (``None`` if the walk held).

    ``cache`` memoises minimisation by (invariant, walk) within one worker:
    seeds that hit the same interleaving are shrunk once.
    """
    if walk.violation is None:
        return None
    prop = next(p for p in model.properties() if p.name == walk.violation)
    if walk.liveness is not None:
        # A liveness counterexample is kept whole: ddmin shrinks toward a first bad *state*, which a stuck
        # end or a lasso is not; replay (make_trace) still confirms it before it is reported.
        trace = make_trace(
            model,
            prop,
            walk.actions,
            "sweep",
            scenario,
            variant,
            seed=walk.seed,
            permitted=prop.name in permitted,
            loop_start=walk.loop_start,
        )
        sig = signature(f"{prop.name}:{walk.liveness}", walk.actions)
        return Finding(prop.name, sig, shape(walk.actions), trace, len(walk.actions))
    path = walk.violating_actions
    key = (prop.name, tuple(path))
    minimal = cache.get(key) if cache is not None else None
    if minimal is None:
        minimal = minimize(model, path, prop)
        if cache is not None:
            cache[key] = minimal
    trace = make_trace(
        model, prop, minimal, "sweep", scenario, variant, seed=walk.seed, permitted=prop.name in permitted
    )
    return Finding(prop.name, signature(prop.name, minimal), shape(minimal), trace, len(path))
