"""What stands between a user and a traceback: flag types, output-path checks, pipes, crash reports.

The ``keos`` command promises one documented exit code for every way a run can end (see
:mod:`keos.checker.cli.main`).  This module holds the pieces that keep that promise:

* argparse types that reject bad numbers when the flags are parsed (``--time-budget nan``,
  ``--repeat 0``), so the message is argparse's one line and the exit code 2;
* :func:`check_output_dir` / :func:`check_output_file`: every ``--out``, ``--html``, ``--junit``,
  ``--graph``, ``--output``, ... is checked *before* any work starts (a file where a directory is
  needed, a directory where a file is needed, a parent that cannot be written);
* :class:`PipeSafeStream`: ``keos list | head -1`` closes the pipe early; the rest of the output is
  dropped and the command still ends with its own exit code;
* :func:`write_crash_report`: an exception nobody expected is a keos bug.  Its traceback goes to a
  file (with the command line, versions and what ran), the user sees one line naming that file,
  and the exit code is 3 -- never 0 or 1, so a crash can never pass or fail a gate as a verdict.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import platform
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

__all__ = [
    "PipeSafeStream",
    "budget_seconds",
    "check_output_dir",
    "check_output_file",
    "non_negative_int",
    "positive_int",
    "sigterm_as_interrupt",
    "silence_closed_stdout",
    "write_crash_report",
]


def non_negative_int(text: str) -> int:
    """An argparse type: an integer >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _finite_non_negative(text: str, what: str, note: str = "") -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what} >= 0, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite {what.removeprefix('a ')} >= 0{note}, got {text!r}")
    return value


def budget_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds >= 0 (``nan``, ``inf`` and negatives are refused)."""
    return _finite_non_negative(text, "a number of seconds", " (0 = no limit)")


def non_negative_factor(text: str) -> float:
    """An argparse type: a finite number >= 0 (a multiplier; ``nan``, ``inf`` and negatives are refused)."""
    return _finite_non_negative(text, "a number")


def _probe(directory: Path) -> str | None:
    """Why nothing can be created in the existing ``directory`` (tried with a temporary file), or None."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        return f"{directory} is not writable ({exc.strerror or exc})"
    return None


def _existing_ancestor(path: Path, flag: str, value: Any) -> tuple[Path | None, str | None]:
    """The nearest existing ancestor of ``path`` (a directory), or why there is none usable."""
    probe = path.absolute()
    while not probe.exists():
        if probe.parent == probe:
            return None, f"{flag} {value}: no existing parent directory"
        probe = probe.parent
    if not probe.is_dir():
        return None, f"{flag} {value}: a file is in the way ({probe} is not a directory)"
    return probe, None


def check_output_dir(value: Any, flag: str) -> str | None:
    """Why ``value`` cannot be used as an output directory, or ``None`` if it can.

    The check is a real one, without side effects: a temporary file is created (and removed) in
    the directory, or in its nearest existing ancestor, so a read-only file system or a missing
    permission is found now, not after the run.
    """
    if str(value) == "":
        return f"{flag}: empty path"
    path = Path(value)
    if path.exists() and not path.is_dir():
        return f"{flag} {value}: exists and is not a directory"
    where, why = _existing_ancestor(path / "x", flag, value)
    if where is None:
        return why
    why = _probe(where)
    return f"{flag} {value}: {why}" if why else None


def check_output_file(value: Any, flag: str) -> str | None:
    """Why ``value`` cannot be written as an output file, or ``None`` if it can (checked without side effects)."""
    text = str(value)
    if text == "" or text.endswith(("/", os.sep)):
        return f"{flag} {value!r}: expected a file name"
    path = Path(value)
    if path.is_dir():
        return f"{flag} {value}: is a directory, expected a file"
    if path.exists():
        try:
            with path.open("a", encoding="utf-8"):
                pass
        except OSError as exc:
            return f"{flag} {value}: cannot write it ({exc.strerror or exc})"
        return None
    where, why = _existing_ancestor(path, flag, value)
    if where is None:
        return why
    why = _probe(where)
    return f"{flag} {value}: {why}" if why else None


class PipeSafeStream(io.TextIOBase):
    """A text stream over stdout that stops writing, quietly, once the reader closed the pipe."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner
        self.closed_by_reader = False

    def write(self, text: str) -> int:
        if not self.closed_by_reader:
            try:
                self.inner.write(text)
            except BrokenPipeError:
                self.closed_by_reader = True
        return len(text)

    def flush(self) -> None:
        if not self.closed_by_reader:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self.closed_by_reader = True

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")


def silence_closed_stdout(stream: TextIO) -> None:
    """Point a stdout whose reader is gone at /dev/null, so the interpreter's final flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def write_crash_report(argv: Sequence[str], exc: BaseException, out_dir: Any = None) -> Path:
    """Write the traceback of an unexpected exception, with the command line, to a file; return its path.

    The file goes into ``out_dir`` (the command's ``--out``) when that is a writable directory,
    else into the system's temporary directory.
    """
    from keos.checker.trace import KEOS_VERSION

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    name = f"keos-crash-{stamp}-{os.getpid()}.txt"
    lines = [
        "keos crash report: an unexpected exception (a bug in keos, not a verdict on your system).",
        "Please attach this file to a bug report.",
        "",
        f"command: keos {' '.join(argv)}",
        f"working directory: {os.getcwd()}",
        f"keos {KEOS_VERSION}, Python {sys.version.split()[0]}, {platform.platform()}",
        f"time (UTC): {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())}",
        "",
        "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
    ]
    text = "\n".join(lines)
    candidates = []
    if out_dir is not None and check_output_dir(out_dir, "--out") is None:
        candidates.append(Path(out_dir))
    candidates.append(Path(tempfile.gettempdir()))
    for directory in candidates:
        try:
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / name
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            continue
    return Path("(not written)")


def sigterm_as_interrupt() -> Callable[[], None]:
    """Treat SIGTERM (a CI job cancelled, a container stopped) like Ctrl-C; returns the undo.

    Only in the main thread (signal handlers cannot be set elsewhere); elsewhere it does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore
