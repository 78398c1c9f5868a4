"""The visited set of a search: 64-bit state fingerprints, in memory or on disk.

Two representations, one interface:

* **fast** (default): a Python ``set`` of ints, about 60-70 bytes a state, with a
  membership test cheap enough to run on every successor;
* **compact**: sorted runs of ``int64`` fingerprints (8 bytes a state), tested a
  whole level at a time with :func:`numpy.searchsorted`.  Runs are merged as they
  accumulate (each merge is linear: both inputs are sorted); with ``spill_dir``
  every merged run is written to a ``.npy`` file and memory-mapped, so the visited
  set lives on disk and in the page cache rather than in the process's heap.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
import weakref
from pathlib import Path

import numpy as np

__all__ = ["FingerprintSet"]

_MAX_RUNS = 6


class FingerprintSet:
    """A set of 64-bit fingerprints that grows a level at a time."""

    def __init__(self, *, compact: bool = False, spill_dir: Path | None = None) -> None:
        self.compact = compact or spill_dir is not None
        self._set: set[int] = set()
        self._runs: list[np.ndarray] = []
        self._spill: Path | None = None
        if spill_dir is not None:
            Path(spill_dir).mkdir(parents=True, exist_ok=True)
            self._spill = Path(tempfile.mkdtemp(prefix="keos-visited-", dir=spill_dir))
            weakref.finalize(self, shutil.rmtree, self._spill, ignore_errors=True)  # the runs go with the set
        self._names = itertools.count()
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def fast_contains(self, fp: int) -> bool:
        """Whether ``fp`` is known to be visited (compact sets answer ``False``: they test per level)."""
        return fp in self._set

    def add_new(self, fps: np.ndarray) -> np.ndarray:
        """Add the distinct fingerprints ``fps``; return those that were not in the set yet."""
        if not self.compact:
            known = self._set
            fresh = [fp for fp in fps.tolist() if fp not in known]
            known.update(fresh)
            self._size += len(fresh)
            return np.array(fresh, dtype=np.int64)
        cand = np.sort(fps)
        for run in self._runs:
            if not len(cand):
                break
            i = np.searchsorted(run, cand)
            i[i == len(run)] = 0
            cand = cand[run[i] != cand] if len(run) else cand
        if len(cand):
            self._runs.append(cand)
            self._size += len(cand)
            if len(self._runs) > _MAX_RUNS:
                self._merge()
        return cand

    def _merge(self) -> None:
        merged = np.concatenate(self._runs)
        merged.sort(kind="stable")  # timsort: a merge of sorted runs
        if self._spill is not None:
            path = self._spill / f"run{next(self._names)}.npy"
            np.save(path, merged)
            for run in self._runs:
                if isinstance(run, np.memmap):
                    Path(run.filename).unlink(missing_ok=True)  # type: ignore[arg-type]
            merged = np.load(path, mmap_mode="r")
        self._runs = [merged]

    def memory_bytes(self) -> int:
        """Heap bytes the set holds (a spilled run counts as disk, not memory)."""
        if not self.compact:
            return 64 * len(self._set)
        return sum(r.nbytes for r in self._runs if not isinstance(r, np.memmap))
