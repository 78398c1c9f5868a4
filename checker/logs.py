"""Third-party logs (librdkafka, py4j, Spark's Python side): captured into the run's log file, summarised in one line.

The libraries keos drives log on their own: librdkafka writes every failed connection attempt to stderr
(an unreachable ``--bootstrap-servers`` printed 115 such lines before keos's one-line error), and py4j
logs a traceback for every call the JVM did not answer when Ctrl-C stops a Spark run.  None of it is a
keos verdict, and on a terminal it buries the one line that is.  So:

* librdkafka clients get ``logger=`` :func:`client_logger` (confluent-kafka forwards librdkafka's log
  to a Python logger instead of stderr);
* the ``py4j`` and ``pyspark`` loggers, and the root logger (py4j reports an interrupted call there), are
  routed to the same place by :func:`capture`;
* every captured line goes to the run's log file (``--out``/``keos.log``) and is counted;
* with ``--verbose`` the lines are shown on stderr as well; without it, :func:`summary` gives one line
  (how many lines, from which libraries, the first one, where the file is).
"""

from __future__ import annotations

import logging
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["THIRD_PARTY", "capture", "client_logger", "summary"]

#: Loggers of the libraries whose output is captured (librdkafka's is :func:`client_logger`'s).
THIRD_PARTY = ("librdkafka", "py4j", "pyspark")


class _Counting(logging.Handler):
    """Counts the captured lines per library and keeps the first one."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.counts: Counter[str] = Counter()
        self.first: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        library = record.name.split(".", 1)[0] if record.name != "root" else "the root logger (py4j)"
        self.counts[library] += 1
        if self.first is None:
            self.first = " ".join(record.getMessage().split())[:160]


_STATE: dict[str, logging.Handler | Path | None] = {"counter": None, "path": None}


@contextmanager
def capture(log_file: Path | None, verbose: bool = False) -> Iterator[None]:
    """Route third-party loggers to ``log_file`` (created on the first line) and, with ``verbose``, stderr."""
    counter = _Counting()
    handlers: list[logging.Handler] = [counter]
    if log_file is not None:
        handlers.append(_LazyFile(log_file))
    if verbose:
        handlers.append(logging.StreamHandler(sys.stderr))
    fmt = logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s")
    for h in handlers:
        h.setFormatter(fmt)
    saved = {}
    # The root logger too: py4j reports a Ctrl-C with ``logging.exception`` on it, and Python's implicit
    # ``basicConfig`` would print that traceback to stderr.
    for name in (*THIRD_PARTY, ""):
        log = logging.getLogger(name)
        saved[name] = (log.handlers[:], log.propagate, log.level)
        log.handlers[:] = handlers
        log.propagate = False
        quiet = logging.WARNING if name == "" else logging.INFO  # other libraries' chatter stays out
        log.setLevel(logging.DEBUG if verbose else quiet)
    _STATE["counter"], _STATE["path"] = counter, log_file
    try:
        yield
    finally:
        for name, (old, propagate, level) in saved.items():
            log = logging.getLogger(name)
            log.handlers[:] = old
            log.propagate = propagate
            log.setLevel(level)
        for h in handlers[1:]:
            h.close()


def client_logger(who: str = "client") -> logging.Logger:
    """The logger to pass as a librdkafka client's ``logger`` (captured by :func:`capture`)."""
    return logging.getLogger(f"librdkafka.{who}")


def summary() -> str | None:
    """One line on what was captured since :func:`capture` began, or ``None`` when nothing was."""
    counter, path = _STATE["counter"], _STATE["path"]
    if not isinstance(counter, _Counting) or not counter.counts:
        return None
    parts = ", ".join(f"{n} from {lib}" for lib, n in sorted(counter.counts.items()))
    where = f" in {path}" if isinstance(path, Path) and path.exists() else ""
    return f"third-party log: {parts} (first: {counter.first}){where}; --verbose shows them"


class _LazyFile(logging.Handler):
    """A file handler that creates the file (and its folder) only when a line arrives."""

    def __init__(self, path: Path) -> None:
        super().__init__(logging.DEBUG)
        self.path = path
        self.stream: logging.FileHandler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self.stream is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.stream = logging.FileHandler(self.path, encoding="utf-8")
                self.stream.setFormatter(self.formatter)
            self.stream.emit(record)
        except OSError:
            pass  # the log is a convenience: a full disk must not stop the run

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
        super().close()
