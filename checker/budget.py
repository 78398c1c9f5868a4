"""Resource budgets every engine can check cheaply: wall-clock time and the process's memory.

A budget is checked between units of work (every few hundred expanded states, every solver call),
never by a signal, so an engine stops at a clean point and returns what it has, marked partial
(``stats["limit_reached"]``; exit code 4 on the command line).

Memory is the process's *current* resident set size, read from ``/proc/self/statm`` on Linux; where
that file does not exist, the peak RSS from :func:`resource.getrusage` stands in (an overestimate,
so a budget never lets a run grow past it).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Budget", "MemoryWatch", "memory_exceeded", "memory_limit", "rss_mb"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_mb() -> float:
    """The process's resident memory in MiB."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * _PAGE / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 1024


@dataclass
class Budget:
    """A time and memory budget starting now (0 = no limit for either)."""

    time_s: float = 0.0
    memory_mb: int = 0
    start: float = field(default_factory=time.perf_counter)

    def exceeded(self) -> tuple[str, str] | None:
        """``(limit, detail)`` when a limit is reached -- ``("time", ...)`` or ``("memory", ...)`` -- else None."""
        if self.time_s and time.perf_counter() - self.start >= self.time_s:
            return "time", f"time budget of {self.time_s:g} s reached"
        if self.memory_mb:
            used = rss_mb()
            if used >= self.memory_mb:
                return "memory", f"memory budget of {self.memory_mb} MiB reached ({used:.0f} MiB resident)"
        return None


@dataclass
class MemoryWatch:
    """A memory budget for code that cannot take a :class:`Budget` argument deep down (the z3 engines' queries).

    Set by :func:`memory_limit` for the duration of one run; :func:`memory_exceeded` is asked before each
    solver query, and ``detail`` records the first time the budget was found spent.
    """

    memory_mb: int = 0
    detail: str | None = None


_WATCH: list[MemoryWatch] = []


@contextmanager
def memory_limit(memory_mb: int) -> Iterator[MemoryWatch]:
    """Watch the process's resident memory against ``memory_mb`` MiB (0 = no limit) while the block runs."""
    watch = MemoryWatch(memory_mb)
    _WATCH.append(watch)
    try:
        yield watch
    finally:
        _WATCH.remove(watch)


def memory_exceeded() -> bool:
    """Whether the innermost :func:`memory_limit` is spent (recorded in its ``detail``)."""
    if not _WATCH or not _WATCH[-1].memory_mb:
        return False
    watch = _WATCH[-1]
    if watch.detail is None:
        used = rss_mb()
        if used >= watch.memory_mb:
            watch.detail = f"memory budget of {watch.memory_mb} MiB reached ({used:.0f} MiB resident)"
    return watch.detail is not None
