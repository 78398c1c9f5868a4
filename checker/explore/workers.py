"""The breadth-first search on every core: one hash partition per worker process.

Worker ``w`` of ``N`` owns the states whose fingerprint is ``w`` modulo ``N``: their
visited fingerprints, parent links and frontier (:class:`~keos.checker.explore.level.Partition`).
Per level the coordinator (this process) tells every worker to expand its frontier;
each writes, per other worker, one packed batch of the successors it does not own
into a file of a private exchange directory (in ``/dev/shm`` where it can: memory,
not disk) and tells the coordinator only the file's name and size.  The coordinator
then tells each worker which files are its own; the worker reads them, absorbs the
candidates (drops the visited, keeps the rest as its next frontier) and reports counts,
violations and coverage.  The batches pass from worker to worker; the coordinator's
pipes carry commands, reports and the rank messages only.

A crossing state travels as the ids of its parts (issue 27, item 3): its record class
and the canonical encoding of each of its fields
(:attr:`StateEncoder.last_parts <keos.checker.explore.encoding.StateEncoder.last_parts>`,
computed anyway to fingerprint it).  Each sender numbers the parts it has sent to each
receiver, and a batch carries only the parts that receiver has not had yet; the
receiver decodes each part once and rebuilds a state as ``tuple.__new__(class,
fields)`` from its table.  Field values repeat far more than states do (the argument
of :mod:`keos.checker.explore.collapse`), so a batch is mostly small integers, and the
states rebuilt from one sender share their field objects -- as a worker's own
successors share their parents' -- so the encoder's and the model's identity caches
keep hitting on them.  (Before, each state crossed as its whole pickled encoding,
through the coordinator twice, and arrived as a fresh object graph.)

The rules of :mod:`keos.checker.explore.level` (ranks in sequential discovery order,
smallest key wins) make counts, verdicts and traces equal to one worker's: after
each level the coordinator sends every worker the level's sorted keys, from which
each ranks its new states.  Workers are
forked, so they inherit the model; each rebuilds nothing and imports nothing.  A worker checks the time budget and its
share of the memory budget (``max_memory_mb / N``) while it expands.

Figures (README, "Explicit search on several cores"): ``stats`` reports the communication
volume and ``critical_cpu_s``, the wall time the workers would need with a core each.
``--workers`` defaults to 1.
"""

from __future__ import annotations

import contextlib
import gc
import marshal
import multiprocessing
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from keos.checker.budget import Budget
from keos.checker.explore.encoding import decode_fragment, decode_head
from keos.checker.explore.level import LevelReport, Partition, combine
from keos.model.interface import Model

__all__ = ["WorkerError", "WorkerPool"]


def _serve(conn: Connection, factory: Callable[[], Model], index: int, count: int, options: dict[str, Any]) -> None:
    try:
        _loop(conn, factory, index, count, options)
    except Exception as exc:  # reported to the coordinator, which raises it: never a silent hang
        with contextlib.suppress(BrokenPipeError, OSError):
            conn.send(WorkerError(f"explore worker {index}: {type(exc).__name__}: {exc}"))


class WorkerError(RuntimeError):
    """A worker process failed; the search stops (never a verdict)."""


def _loop(conn: Connection, factory: Callable[[], Model], index: int, count: int, options: dict[str, Any]) -> None:
    gc.disable()
    budget = None
    if options["time_s"] or options["memory_mb"]:
        budget = Budget(options["time_s"], max(1, options["memory_mb"] // count) if options["memory_mb"] else 0)
    part = Partition(factory(), index, count, compact=options["compact"], spill_dir=options["spill_dir"], budget=budget)
    exchange = Path(options["exchange"])
    sent: list[dict[bytes, int]] = [{} for _ in range(count)]  # per receiver: the parts it knows, by id
    known: list[list[Any]] = [[] for _ in range(count)]  # per sender: the parts it sent, decoded, by id
    while True:
        cmd, *args = conn.recv()
        if cmd == "seed":
            conn.send(part.seed())
        elif cmd == "ranks":
            part.set_ranks(*args)
        elif cmd == "expand":
            cpu = time.process_time()
            outbox, report = part.expand(*args)
            batches = {}
            for dest, items in outbox.items():
                blob = _pack(items, sent[dest])
                path = exchange / f"{args[0]}-{index}-{dest}"
                path.write_bytes(blob)
                batches[dest] = (str(path), len(blob), len(items))
            conn.send((batches, report, time.process_time() - cpu))
        elif cmd == "absorb":
            paths, depth, max_depth, already = args
            cpu = time.process_time()
            inbox = []
            for source, name in paths:
                path = Path(name)
                inbox.extend(_unpack(path.read_bytes(), known[source]))
                path.unlink()
            report = part.absorb(inbox, depth, max_depth, already)
            conn.send((report, time.process_time() - cpu))
        elif cmd == "parent":
            try:
                conn.send(part.parent(*args))
            except KeyError as exc:
                conn.send(exc)
        elif cmd == "memory":
            conn.send(part.memory_bytes())
        elif cmd == "cpu":
            conn.send(time.process_time())
        elif cmd == "stop":
            conn.close()
            return


class WorkerPool:
    """``count`` forked workers, one partition each, driven level by level."""

    def __init__(
        self,
        factory: Callable[[], Model],
        count: int,
        compact: bool = False,
        spill_dir: Path | None = None,
        time_s: float = 0.0,
        memory_mb: int = 0,
    ) -> None:
        ctx = multiprocessing.get_context("fork")
        shm = Path("/dev/shm")
        self.exchange = Path(tempfile.mkdtemp(prefix="keos-explore-", dir=shm if os.access(shm, os.W_OK) else None))
        options = {"compact": compact, "spill_dir": spill_dir, "time_s": time_s, "memory_mb": memory_mb,
                   "exchange": str(self.exchange)}
        self.count = count
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        for w in range(count):
            parent_end, child_end = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child_end, factory, w, count, options), daemon=True)
            proc.start()
            child_end.close()
            self.conns.append(parent_end)
            self.procs.append(proc)
        self.worker_cpu: list[float] = [0.0] * count
        #: Communication volume (issue 27: to project the scaling to more cores): the packed successor
        #: batches the workers passed each other (bytes, candidate states, batches) and the rank messages
        #: (the level's sorted keys, sent to every worker through the coordinator's pipes).  Pickling and
        #: pipe framing are not counted.
        self.crossed_bytes = 0
        self.crossed_states = 0
        self.crossed_batches = 0
        self.rank_bytes = 0
        #: The sum over levels of the busiest worker's CPU seconds in each phase (expand, absorb): the
        #: wall time the workers would need with a core each, as every phase ends at a barrier.
        self.critical_cpu = 0.0

    def _all(self, message: tuple[Any, ...]) -> list[Any]:
        for c in self.conns:
            c.send(message)
        return [self._recv(c) for c in self.conns]

    @staticmethod
    def _recv(conn: Connection) -> Any:
        try:
            answer = conn.recv()
        except (EOFError, OSError) as exc:
            raise WorkerError(f"an explore worker died: {exc}") from None
        if isinstance(answer, WorkerError):
            raise answer
        return answer

    def seed(self) -> LevelReport:
        """Level 0 on every worker (ranked by :meth:`rank`)."""
        return combine(self._all(("seed",)))

    def rank(self, keys: np.ndarray, cut: frozenset[int]) -> None:
        """Send every worker the level's sorted expandable keys and its cut fingerprints."""
        for c in self.conns:
            c.send(("ranks", keys, cut))
        self.rank_bytes += (int(keys.nbytes) + 8 * len(cut)) * self.count

    def expand(
        self, depth: int, max_depth: int, stuck_known: frozenset[str]
    ) -> tuple[list[list[tuple[int, str]]], LevelReport]:
        """Expand level ``depth`` everywhere: per receiving worker its batches (sender, file), and the counts."""
        expanded = self._all(("expand", depth, max_depth, stuck_known))
        inboxes: list[list[tuple[int, str]]] = [[] for _ in range(self.count)]
        self.critical_cpu += max(cpu for _, _, cpu in expanded)
        for source, (batches, _, _) in enumerate(expanded):
            for dest, (path, size, states) in sorted(batches.items()):
                inboxes[dest].append((source, path))
                self.crossed_bytes += size
                self.crossed_states += states
                self.crossed_batches += 1
        return inboxes, combine([r for _, r, _ in expanded])

    def absorb(
        self, inboxes: list[list[tuple[int, str]]], depth: int, max_depth: int, already: frozenset[str]
    ) -> LevelReport:
        """Every worker absorbs what it was sent: level ``depth``."""
        for c, inbox in zip(self.conns, inboxes):
            c.send(("absorb", inbox, depth, max_depth, already))
        absorbed = [self._recv(c) for c in self.conns]
        self.critical_cpu += max(cpu for _, cpu in absorbed)
        return combine([r for r, _ in absorbed])

    def parent(self, depth: int, fp: int) -> tuple[int, int]:
        """The parent link of ``fp``, from the worker that owns it."""
        conn = self.conns[fp % self.count]
        conn.send(("parent", depth, fp))
        answer = self._recv(conn)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def memory_bytes(self) -> int:
        """Visited sets and parent links of every worker."""
        return sum(self._all(("memory",)))

    def child_cpu(self) -> float:
        """CPU seconds the workers spent (also kept per worker in ``worker_cpu``)."""
        self.worker_cpu = self._all(("cpu",))
        return sum(self.worker_cpu)

    def volume(self) -> dict[str, Any]:
        """The communication volume so far (stats ``crossed_states``, ``crossed_bytes``, ``crossed_batches``,
        ``rank_bytes``) and ``critical_cpu_s`` (:attr:`critical_cpu`)."""
        return {"crossed_states": self.crossed_states, "crossed_bytes": self.crossed_bytes,
                "crossed_batches": self.crossed_batches, "rank_bytes": self.rank_bytes,
                "critical_cpu_s": round(self.critical_cpu, 3)}

    def close(self) -> None:
        """Stop the workers."""
        for c, p in zip(self.conns, self.procs):
            with contextlib.suppress(BrokenPipeError, OSError):
                c.send(("stop",))
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join()
        shutil.rmtree(self.exchange, ignore_errors=True)


def _pack(items: dict[int, list[Any]], sent: dict[bytes, int]) -> bytes:
    """One batch of candidates for one receiver, as :mod:`marshal` bytes.

    Four int64 columns (fingerprint, key, parent fingerprint, successor index), then per candidate the
    ids of its parts -- the record head (its class) and the encoding of each field, or ``-1`` and the id
    of the whole encoding for a state that is not a record -- then the parts this receiver has not been
    sent before (``(1, head)`` or ``(0, encoding)``), which take the next ids in order.  ``sent`` (the
    parts this receiver knows, by id) is updated.
    """
    n = len(items)
    fps = np.fromiter(items.keys(), dtype=np.int64, count=n)
    rows = list(items.values())
    keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    parents = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
    ks = np.fromiter((r[2] for r in rows), dtype=np.int64, count=n)
    fresh: list[tuple[int, bytes]] = []
    ids: list[tuple[int, ...]] = []
    get = sent.get
    for r in rows:
        parts = r[4]
        if parts is None:
            whole = r[3][2:-1]  # the value's opcodes, without the protocol header and the stop
            i = get(whole)
            if i is None:
                i = sent[whole] = len(sent)
                fresh.append((0, whole))
            ids.append((-1, i))
            continue
        row = []
        for j in range(1, len(parts) - 1):
            part = parts[j]
            i = get(part)
            if i is None:
                i = sent[part] = len(sent)
                fresh.append((1 if j == 1 else 0, part))
            row.append(i)
        ids.append(tuple(row))
    return marshal.dumps((fps.tobytes(), keys.tobytes(), parents.tobytes(), ks.tobytes(), ids, fresh))


def _unpack(blob: bytes, known: list[Any]) -> list[tuple[int, int, int, int, Any]]:
    """The candidates of a batch made by :func:`_pack`, rebuilt as states; ``known`` (the sender's parts
    decoded, by id) is extended first.  States rebuilt from one sender share their field objects, as the
    sender's own successors share their parents' (the encoder's identity caches hit on them)."""
    fps_b, keys_b, parents_b, ks_b, ids, fresh = marshal.loads(blob)
    for kind, part in fresh:
        known.append(decode_head(part) if kind else decode_fragment(part))
    fps, keys, parents, ks = (np.frombuffer(c, dtype=np.int64).tolist() for c in (fps_b, keys_b, parents_b, ks_b))
    new = tuple.__new__
    part_of = known.__getitem__
    states = [known[row[1]] if row[0] < 0 else new(known[row[0]], map(part_of, row[1:])) for row in ids]
    return list(zip(fps, keys, parents, ks, states))
