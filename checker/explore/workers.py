"""The breadth-first search on every core: one hash partition per worker process.

Worker ``w`` of ``N`` owns the states whose fingerprint is ``w`` modulo ``N``: their
visited fingerprints, parent links and frontier (:class:`~keos.checker.explore.level.Partition`).
Per level the coordinator (this process) tells every worker to expand its frontier;
each returns, per other worker, one packed batch (int64 columns of fingerprint,
key, parent fingerprint, successor index and length, then the canonical encodings)
of the successors it does not own.  The coordinator forwards the batches unopened to their owners, which absorb
them (drop the visited, keep the rest as their next frontier) and report counts,
violations and coverage.  States travel as their canonical encodings
(:mod:`keos.checker.explore.encoding`), which the sender computed anyway to
fingerprint them and the receiver decodes with :func:`pickle.loads`.

The rules of :mod:`keos.checker.explore.level` (ranks in sequential discovery order,
smallest key wins) make counts, verdicts and traces equal to one worker's: after
each level the coordinator sends every worker the level's sorted keys, from which
each ranks its new states.  Workers are
forked, so they inherit the model; each rebuilds nothing and imports nothing.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from keos.checker.explore.encoding import StateEncoder
from keos.checker.explore.level import LevelReport, Partition
from keos.model.interface import Model

__all__ = ["WorkerError", "WorkerPool"]


def _serve(
    conn: Connection, factory: Callable[[], Model], index: int, count: int, compact: bool, spill_dir: Path | None
) -> None:
    try:
        _loop(conn, factory, index, count, compact, spill_dir)
    except Exception as exc:  # reported to the coordinator, which raises it: never a silent hang
        with contextlib.suppress(BrokenPipeError, OSError):
            conn.send(WorkerError(f"explore worker {index}: {type(exc).__name__}: {exc}"))


class WorkerError(RuntimeError):
    """A worker process failed; the search stops (never a verdict)."""


def _loop(
    conn: Connection, factory: Callable[[], Model], index: int, count: int, compact: bool, spill_dir: Path | None
) -> None:
    gc.disable()
    part = Partition(factory(), index, count, compact=compact, spill_dir=spill_dir)
    while True:
        cmd, *args = conn.recv()
        if cmd == "seed":
            conn.send(part.seed())
        elif cmd == "ranks":
            part.set_ranks(args[0])
        elif cmd == "expand":
            outbox, report = part.expand(*args)
            blobs = {dest: _pack(items, part.encoder) for dest, items in outbox.items()}
            conn.send((blobs, report))
        elif cmd == "absorb":
            blobs, depth, max_depth, already = args
            inbox = [item for blob in blobs for item in _unpack(blob)]
            conn.send(part.absorb(inbox, depth, max_depth, already))
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

    def __init__(self, factory: Callable[[], Model], count: int, compact: bool = False, spill_dir: Path | None = None):
        ctx = multiprocessing.get_context("fork")
        self.count = count
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        for w in range(count):
            parent_end, child_end = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(child_end, factory, w, count, compact, spill_dir), daemon=True)
            proc.start()
            child_end.close()
            self.conns.append(parent_end)
            self.procs.append(proc)
        self.worker_cpu: list[float] = [0.0] * count

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
        """Level 0 on every worker."""
        return self._ranked(self._all(("seed",)))

    def _ranked(self, reports: list[LevelReport]) -> LevelReport:
        """Combine the workers' reports and send every worker the level's sorted keys (its ranks)."""
        report = _combine(reports)
        keys = np.sort(np.concatenate([np.empty(0, np.int64), *(r.keys for r in reports if r.keys is not None)]))
        for c in self.conns:
            c.send(("ranks", keys))
        return report

    def level(self, depth: int, max_depth: int, already: frozenset[str] = frozenset()) -> LevelReport:
        """Expand level ``depth`` everywhere, exchange successors, absorb level ``depth + 1``."""
        expanded = self._all(("expand", depth, max_depth))
        inboxes: list[list[bytes]] = [[] for _ in range(self.count)]
        for blobs, _ in expanded:
            for dest, blob in blobs.items():
                inboxes[dest].append(blob)
        for c, inbox in zip(self.conns, inboxes):
            c.send(("absorb", inbox, depth + 1, max_depth, already))
        report = self._ranked([self._recv(c) for c in self.conns])
        first = _combine([r for _, r in expanded])
        report.transitions = first.transitions
        report.events = first.events
        report.cut_by_depth = report.cut_by_depth or first.cut_by_depth
        report.reached |= first.reached
        return report

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

    def close(self) -> None:
        """Stop the workers."""
        for c, p in zip(self.conns, self.procs):
            with contextlib.suppress(BrokenPipeError, OSError):
                c.send(("stop",))
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join()


def _pack(items: dict[int, list[Any]], encoder: StateEncoder) -> bytes:
    """One batch of candidates as bytes: five int64 columns, then the encodings back to back."""
    n = len(items)
    fps = np.fromiter(items.keys(), dtype=np.int64, count=n)
    rows = list(items.values())
    keys = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
    parents = np.fromiter((r[1] for r in rows), dtype=np.int64, count=n)
    ks = np.fromiter((r[2] for r in rows), dtype=np.int64, count=n)
    encodings = [r[3] if type(r[3]) is bytes else encoder.encode(r[3]) for r in rows]
    lengths = np.fromiter((len(e) for e in encodings), dtype=np.int64, count=n)
    columns = [np.int64(n).tobytes(), fps.tobytes(), keys.tobytes(), parents.tobytes(), ks.tobytes(), lengths.tobytes()]
    return b"".join(columns + encodings)


def _unpack(blob: bytes) -> Iterator[tuple[int, int, int, int, bytes]]:
    """The candidates of a batch made by :func:`_pack`."""
    n = int(np.frombuffer(blob, dtype=np.int64, count=1)[0])
    cols = np.frombuffer(blob, dtype=np.int64, count=5 * n, offset=8).reshape(5, n)
    fps, keys, parents, ks, lengths = (c.tolist() for c in cols)
    pos = 8 + 40 * n
    view = memoryview(blob)
    for i in range(n):
        end = pos + lengths[i]
        yield fps[i], keys[i], parents[i], ks[i], bytes(view[pos:end])
        pos = end


def _combine(reports: list[LevelReport]) -> LevelReport:
    out = LevelReport()
    for r in reports:
        out.new_states += r.new_states
        out.transitions += r.transitions
        out.cut_by_depth = out.cut_by_depth or r.cut_by_depth
        for name, best in r.violations.items():
            if name not in out.violations or best[0] < out.violations[name][0]:
                out.violations[name] = best
        out.reached |= r.reached
        out.events.update(r.events)
    return out
