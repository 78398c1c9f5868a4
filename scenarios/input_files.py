"""Reading the files users hand to keos (scenarios, traces, histories): regular files of bounded size only.

``keos replay /dev/zero`` used to read forever, deaf to Ctrl-C (one ``read()`` call in C that never returns);
a FIFO blocks the same way and a multi-gigabyte file exhausts memory.  Every user file is therefore checked
before it is read: it must be a regular file (``stat``, which does not open a FIFO) no larger than the limit
for its kind, and it is read with at most that many bytes plus one.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["MAX_HISTORY_BYTES", "MAX_SCENARIO_BYTES", "MAX_TRACE_BYTES", "InputFileError", "read_user_file"]

#: A scenario is a page of TOML; the largest built-in one is under 4 KiB.
MAX_SCENARIO_BYTES = 1 << 20
#: The longest keos trace (a deep lasso with every state recorded) is a few MiB.
MAX_TRACE_BYTES = 256 << 20
#: A recorded history: Jepsen's histories of hour-long runs are tens of MiB.
MAX_HISTORY_BYTES = 512 << 20


class InputFileError(ValueError):
    """A user file that keos refuses to read (not a regular file, too large, unreadable); one line."""


def read_user_file(path: str | Path, what: str, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes`` bytes; :class:`InputFileError` otherwise."""
    p = Path(path)
    try:
        info = os.stat(p)
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read {what} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file (a device, FIFO or socket)"
        raise InputFileError(f"{p}: {kind}; a {what} must be a regular file")
    if info.st_size > max_bytes:
        raise InputFileError(f"{p}: {info.st_size:,} bytes, more than the {max_bytes:,} a {what} may have")
    try:
        with open(p, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read {what} ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        raise InputFileError(f"{p}: more than the {max_bytes:,} bytes a {what} may have")
    return data
