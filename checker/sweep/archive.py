"""A Go-Explore archive for ``keos sweep``: runs that learn from the runs before them.

Swarm profiles, priority orders, fault triggers and fault branching all *draw*
a run afresh; a prefix that took twenty lucky draws to reach (a batch expired
while its Produce was in flight, the transaction aborted, the epoch-bumping
InitProducerId answered) is thrown away after its run and must be drawn again.
Go-Explore (Ecoffet et al., "First return, then explore", Nature 2021) keeps an
*archive* of the distinct *cells* the search has reached, each with the path
that reached it, and starts new explorations from rarely seen cells: a rare
prefix is *extended* instead of re-drawn, and each extension that reaches a new
cell is itself archived, so a bug that needs a chain of unlikely steps is found
stage by stage.

Cells.  A cell is a coarse abstraction of a walk's *path*: the set of the
distinct events its steps emitted (``model.interface.Step.events``: state
transitions, errors returned, faults injected, client outcomes).  Any model that
labels its steps gets cells without a line written for it, and a cell changes
only when a path does something it had not done before: after a batch expiry,
after the first abort-then-bump (``txn:CompleteAbort->Empty``), after the first
PRODUCER_FENCED.  A cell's key is the XOR of one 64-bit blake2b digest per
event (:func:`feature`), updated as the path grows -- stable across processes
and platforms, never :func:`hash`.  (Counting events AFL-style, 1/2/3-4/5+
times, doubled the cells and halved the catches of ``init_pid_retry_fenced``.)

Groups.  The runs of a sweep cell (scenario x variant x profile) are split into
*groups* of :data:`ARCHIVE_GROUP` consecutive runs that share one archive: run
``i`` of a group may start from a cell that runs ``0 .. i-1`` of the group
archived.  A run's result is then a pure function of its descriptor *and the
runs before it in its group*; :func:`checker.sweep.runs.describe_batch` adds
the earlier runs of a group a batch starts in the middle of (executed to
rebuild the archive, never reported), so the results still do not depend on
the partitioning, the number of executors or task retries.  A counterexample
is the whole path from the initial state (archived prefix, then the run's own
steps): it is minimised and replayed on the model like any other.

Selection.  A run whose swarm profile carries :data:`ARCHIVE` (half of the swarm
runs) starts from a cell drawn with weight ``1 / sqrt(hits(rarest) * seen * (1 + chosen))``
-- ``rarest`` is the event of the cell's path that the fewest of the group's
paths had emitted when the cell was archived, ``hits`` how many paths have
emitted it now, ``seen`` how many paths reached the cell itself (:data:`CELL_RARITY`),
``chosen`` how many runs started from the cell -- from a stream
of its own (``derive_seed(seed, "archive")``), and walks on under its own
profile until its step budget (counted from the initial state) or quiescence.
So the descendants of a rare event (a batch expiry: one path in 20) are
extended far more often than the hundreds of cells of common interleavings.
Without an archived cell a run starts from the initial state like any run.

Fault probing (:data:`ARCHIVE_PROBE`, issue 27).  The archive's cells say *what*
a path has done, not *when* its faults struck, and a bug that needs two or
three faults each in its own short window is a chain the runs must draw
whole: ``retry_refused_next_sequence_unchanged`` needs the producer's state
expired, then NOT_LEADER_OR_FOLLOWER on the first of two pipelined batches,
then a leader restart before the second one's answer -- 0 of 2,000 runs on
sweep seed 0, and the few paths that reached the reordering in between had
spent the fault budget on a fault that did not matter.  So the archive does
what the explicit search does for faults, at the moments that matter: at
every *milestone* of a walk (a step whose events add to the path's set: the
path did something it had not done before -- a second request in flight, a
batch appended behind a retried one, an expiry) each fault enabled there is
taken once, off the walk, and the state it reaches is archived when its cell
is new (the path plus that fault; the features it adds are counted as the
path's).  A later run that starts from it has the fault in place with the
budget left for the next one, and probes again at its own milestones, so a
chain of precisely placed faults is built one fault per run instead of being
drawn at once.  The probe reads nothing of the scenario or the variant: every
fault kind the model enables, at every milestone of every archive group's
path.  A probed fault that breaks an invariant the scenario does not permit
is the walk's next step (the run reports it, its path ends with that fault).
It costs a few steps per milestone (measured: +10-35 % walk CPU on the
weakened variants' cells).

Fault placement and cell rarity (:data:`ARCHIVE_PLACEMENT`, :data:`CELL_RARITY`;
issue 27, session 30).  A set of events says which faults struck, not *where*:
a failed offset copy after the first of two commits and one after the second
are one cell, the archive keeps whichever path came first, and a crash probed
after it extends the wrong one (``global_offsets_first``: 7 of 2,000 runs).  So
each fault event also adds the feature ``fault:KIND@n``, ``n`` the number of the
path's distinct features when it struck: the same fault at a different
milestone is a different cell (the number of cells grows by at most fault kinds
x milestones, the probe's own granularity).  And a cell whose features are each
common -- every path that reaches a commit probes the copy failure there, every
path probes a crash -- can still be a combination no other path has reached: a
cell is drawn by the rarer of its rarest feature and its own visits, so a
chain of faults built by probing (copy failure at the second commit, then the
crash) is extended while it is rare *as a whole*.  (The cell's own visits
*replace* the feature's hits in a first try, ``min(hits, seen)``: nearly every
cell is reached once, so the draw became almost uniform and lost the chain of
``retry_refused_next_sequence_unchanged``, 2 -> 0 of 2,000 runs; the geometric
mean keeps both, 2 -> 6.)  Both read nothing of a
scenario or a variant: the ``fault:`` events are the models' own labels
(:meth:`model.interface.FaultHooks.fault_kind`).  Measured (``keos sweep --mutants
--runs 2000``, seed 0, README "Measured figures"): ``global_offsets_first`` 7 -> 56
catches, the ten rarest cells 57 -> 119; 13 of 142 cells are caught later, none
lost; the toy ladder of ``tests/test_sweep_probe.py`` shows the cost (twice the
cells, its catch comes later).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from keos.model.interface import Action

__all__ = [
    "ARCHIVE",
    "ARCHIVE_CAP",
    "ARCHIVE_GROUP",
    "ARCHIVE_PLACEMENT",
    "ARCHIVE_PROBE",
    "ARCHIVE_RUNS",
    "CELL_RARITY",
    "FAULT_EVENT",
    "Archive",
    "ArchivedCell",
    "feature",
]

#: Profile key of an archive run (see the module doc); like every ``~`` key it never names a fault kind.
ARCHIVE = "~archive"
#: The share of swarm runs that start from the archive.
ARCHIVE_RUNS = 0.5
#: Consecutive runs of a sweep cell that share one archive (a Spark task holds whole groups when a cell's runs
#: and the chunk's are multiples of it).  Measured on ``init_pid_retry_fenced`` over 4 sweep seeds of 2,000
#: runs: 22 catches with groups of 250, 36 with 500, 35 with 2,000.
ARCHIVE_GROUP = 500
#: At most this many cells per archive; later new cells are not archived (their visits are not counted either).
ARCHIVE_CAP = 4096
#: Fault probing (see the module doc): when a walk archives a new cell it also takes every enabled fault there
#: once, off the walk, and archives the new cells those faults reach.
ARCHIVE_PROBE = True
#: Fault placement (see the module doc): a fault's event also counts as the feature ``"fault:KIND@n"``, ``n`` the
#: number of the path's distinct features when it struck, so the same faults at different milestones are
#: different cells.
ARCHIVE_PLACEMENT = True
#: Cell rarity (see the module doc): a cell's weight divides by ``sqrt(hits(rarest) * seen)`` instead of
#: ``hits(rarest)``: a rare combination of common features is drawn too.
CELL_RARITY = True
#: The prefix of the event a model emits for an injected fault (``model.interface.FaultHooks``: ``fault:KIND``).
FAULT_EVENT = "fault:"


_FEATURES: dict[str, int] = {}


def feature(event: str) -> int:
    """The 64-bit digest (blake2b) of the feature "the path emitted ``event``"."""
    h = _FEATURES.get(event)
    if h is None:
        if len(_FEATURES) > 1 << 16:
            _FEATURES.clear()
        h = _FEATURES[event] = int.from_bytes(hashlib.blake2b(event.encode(), digest_size=8).digest(), "big")
    return h


@dataclass
class ArchivedCell:
    """A cell of the archive: the first path that reached it and the walk's bookkeeping there.

    ``key`` is the cell's key; ``state`` the model state at the end of ``path``; ``events`` the path's distinct
    events; ``since``,
    ``lanes`` and ``last_lane`` the walk's newest-first and lane bookkeeping (see
    :func:`checker.sweep.simulate.random_walk`), so a run that starts here continues as the path's own
    walk would have.
    """

    key: int
    state: Any
    path: tuple[Action, ...]
    events: frozenset[str]
    since: dict[Action, int]
    lanes: dict[str, int]
    last_lane: str
    rarest: int = 0
    seen: int = 1
    chosen: int = 0


class Archive:
    """The cells reached by the runs of one group, in the order they were first reached."""

    def __init__(
        self,
        cap: int = ARCHIVE_CAP,
        probe: bool = ARCHIVE_PROBE,
        placement: bool = ARCHIVE_PLACEMENT,
        cell_rarity: bool = CELL_RARITY,
    ) -> None:
        self.cells: dict[int, ArchivedCell] = {}
        self.cap = cap
        self.probe = probe
        self.placement = placement
        self.cell_rarity = cell_rarity
        self.hits: dict[int, int] = {}  # feature -> how many paths reached it

    def hit(self, feature_key: int) -> None:
        """A path emitted an event for the first time."""
        self.hits[feature_key] = self.hits.get(feature_key, 0) + 1

    def features(self, events: Sequence[str], milestone: int) -> Sequence[str]:
        """The features a step with ``events`` adds to its path's cell (those the path has not emitted yet count):
        its events, and with :attr:`placement` each fault event's placement ``"fault:KIND@milestone"``
        (``milestone``: how many distinct features the path had before the step)."""
        if not self.placement:
            return events
        placed = [f"{ev}@{milestone}" for ev in events if ev.startswith(FAULT_EVENT)]
        return [*events, *placed] if placed else events

    def __len__(self) -> int:
        return len(self.cells)

    def visit(self, key: int) -> bool:
        """Count a visit of cell ``key``; ``True`` when it is new and the archive has room for it."""
        cell = self.cells.get(key)
        if cell is not None:
            cell.seen += 1
            return False
        return len(self.cells) < self.cap

    def add(self, key: int, cell: ArchivedCell) -> None:
        """Archive a new cell (after :meth:`visit` said it is new); its rarest feature is the one of its path
        fewest paths had reached so far."""
        hits = self.hits
        cell.rarest = min(
            (feature(ev) for ev in cell.events),
            key=lambda f: (hits.get(f, 0), f),
            default=0,
        )
        self.cells[key] = cell

    def pick(self, seed: int) -> ArchivedCell | None:
        """The cell a run with ``seed`` starts from (``None`` for an empty archive), drawn by rarity with
        ``random.Random(seed)``; its ``chosen`` count goes up."""
        if not self.cells:
            return None
        cells = list(self.cells.values())
        hits = self.hits
        if self.cell_rarity:
            weights = [
                1.0 / (math.sqrt(max(1, hits.get(c.rarest, 0)) * max(1, c.seen)) * math.sqrt(1 + c.chosen))
                for c in cells
            ]
        else:
            weights = [1.0 / (max(1, hits.get(c.rarest, 0)) * math.sqrt(1 + c.chosen)) for c in cells]
        rng = random.Random(seed)
        r = rng.random() * sum(weights)
        i, last = 0, len(cells) - 1
        while i < last and r >= weights[i]:
            r -= weights[i]
            i += 1
        cells[i].chosen += 1
        return cells[i]
