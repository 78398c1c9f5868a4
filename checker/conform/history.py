"""Histories of a real Kafka client talking to a real broker, in Jepsen's Kafka shape.

Jepsen's Kafka workload (``jepsen.tests.kafka``, the checker that found
KAFKA-17754) records a history: a list of operations, each one either the
*invocation* of a client call or its *completion*.  keos keeps that shape so a
history moves between the two tools (see :mod:`keos.checker.conform.edn`):

``index``    position in the history (0, 1, 2, ...)
``time``     nanoseconds since the run started (monotonic clock)
``type``     ``invoke``; then ``ok`` (it happened), ``fail`` (it certainly did not
             happen -- for a transaction: aborted) or ``info`` (unknown: timed out,
             crashed)
``process``  the logical client (one producer or consumer instance) that ran it;
             a process runs one operation at a time, so an invocation's
             completion is the next ``ok``/``fail``/``info`` of the same process
``f``        ``send``, ``poll`` or ``txn`` as in Jepsen (``txn`` mixes both), plus
             keos's own ``init`` (InitProducerId, KIP-98 §5.1), ``offsets`` (a
             ListOffsets probe of the log-end and last stable offsets) and
             ``assign`` (a consumer was (re)positioned)
``value``    a list of micro-operations, exactly as Jepsen writes them:

             * ``["send", key, v]`` on invocation, ``["send", key, [offset, v]]``
               on completion;
             * ``["poll"]`` on invocation, ``["poll", {key: [[offset, v], ...]}]``
               on completion.

             ``key`` stands for one topic-partition; values are unique per key,
             so every record can be traced back to the operation that wrote it.

keos adds optional fields Jepsen ignores (Jepsen's EDN export keeps them as
extra map entries): ``error`` (Kafka ``Errors`` name or librdkafka error name,
e.g. ``PRODUCER_FENCED``), ``isolation`` (``read_committed`` /
``read_uncommitted`` on polls), ``transactional_id`` and ``instance`` (which
producer instance sent it: two instances with one transactional.id are a
fenced producer and its zombie, KIP-98 §5.1), ``commit_at`` (the time
``commitTransaction`` was called, on a ``txn`` completion), ``client`` (events
from the client's own view, e.g. librdkafka ``debug=eos`` state changes).

The JSON file is ``{"format": "keos-conform-history/1", "meta": {...}, "ops":
[...]}``; a bare list of operations is read as well.
"""

from __future__ import annotations

import json
import time as _time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

__all__ = [
    "FORMAT",
    "History",
    "HistoryError",
    "Op",
    "Read",
    "Recorder",
    "Write",
    "dump_json",
    "load_json",
]

FORMAT = "keos-conform-history/1"
TYPES = ("invoke", "ok", "fail", "info")

Key = int | str
Value = int | str


class HistoryError(ValueError):
    """A history that does not follow the format (bad input: exit 2)."""


@dataclass(frozen=True)
class Op:
    """One invocation or completion."""

    index: int
    time: int
    type: str
    process: int | str
    f: str
    value: Any = None
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def isolation(self) -> str | None:
        iso = self.extra.get("isolation")
        return str(iso) if iso is not None else None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "time": self.time,
            "type": self.type,
            "process": self.process,
            "f": self.f,
            "value": _value_to_json(self.value),
        }
        if self.error is not None:
            out["error"] = self.error
        out.update(self.extra)
        return out

    def brief(self) -> str:
        """``#12 ok p3 txn [send 0 [4 17]] (PRODUCER_FENCED)``: one line for reports."""
        err = f" ({self.error})" if self.error else ""
        tid = self.extra.get("transactional_id")
        who = f" {tid}/{self.extra.get('instance', '?')}" if tid is not None else ""
        iso = f" {self.isolation}" if self.isolation else ""
        return f"#{self.index} {self.type} p{self.process}{who}{iso} {self.f} {_brief_value(self.value)}{err}"


def _brief_value(value: Any) -> str:
    if not isinstance(value, list):
        return json.dumps(value)
    parts = []
    for mop in value:
        if isinstance(mop, list) and mop and mop[0] == "poll" and len(mop) > 1 and isinstance(mop[1], Mapping):
            polled = " ".join(f"{k}:{[tuple(r) for r in rs]}" for k, rs in mop[1].items())
            parts.append(f"[poll {polled}]")
        else:
            parts.append(json.dumps(mop).replace('"', ""))
    return " ".join(parts)


def _value_to_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _value_to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_value_to_json(v) for v in value]
    return value


def _key_from_json(k: str) -> Key:
    try:
        return int(k)
    except ValueError:
        return k


def _value_from_json(f: str, value: Any) -> Any:
    """Poll maps come back from JSON with string keys; Jepsen's keys are integers."""
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for mop in value:
        if isinstance(mop, list) and len(mop) == 2 and mop[0] == "poll" and isinstance(mop[1], Mapping):
            out.append(["poll", {_key_from_json(str(k)): [list(r) for r in rs] for k, rs in mop[1].items()}])
        else:
            out.append(mop)
    return out


_CORE = {"index", "time", "type", "process", "f", "value", "error"}


def op_from_json(obj: Mapping[str, Any], index: int) -> Op:
    """One operation from its JSON form; raises :class:`HistoryError` on a malformed one."""
    if not isinstance(obj, Mapping):
        raise HistoryError(f"operation {index} is not an object")
    typ = obj.get("type")
    if typ not in TYPES:
        raise HistoryError(f"operation {index}: type must be one of {', '.join(TYPES)}, got {typ!r}")
    f = obj.get("f")
    if not isinstance(f, str):
        raise HistoryError(f"operation {index}: f must be a string")
    process = obj.get("process")
    if not isinstance(process, int | str):
        raise HistoryError(f"operation {index}: process must be an integer or a string")
    t = obj.get("time", 0)
    if not isinstance(t, int):
        raise HistoryError(f"operation {index}: time must be an integer (nanoseconds)")
    err = obj.get("error")
    extra = {k: v for k, v in obj.items() if k not in _CORE}
    return Op(
        index=int(obj.get("index", index)),
        time=t,
        type=typ,
        process=process,
        f=f,
        value=_value_from_json(f, obj.get("value")),
        error=None if err is None else str(err),
        extra=extra,
    )


@dataclass(frozen=True)
class Write:
    """A record some operation sent: ``key``/``value``, the offset if acknowledged."""

    key: Key
    value: Value
    offset: int | None
    op: Op  # the completion (or the invocation if it never completed)
    invoke: Op


@dataclass(frozen=True)
class Read:
    """A record a poll observed."""

    key: Key
    offset: int
    value: Value
    op: Op
    invoke: Op


class History:
    """An ordered list of operations with invocation/completion pairing."""

    def __init__(self, ops: Sequence[Op], meta: Mapping[str, Any] | None = None) -> None:
        self.ops: list[Op] = list(ops)
        self.meta: dict[str, Any] = dict(meta or {})
        self._completion: dict[int, Op] = {}
        self._invocation: dict[int, Op] = {}
        open_by_process: dict[int | str, Op] = {}
        for op in self.ops:
            if op.type == "invoke":
                if op.process in open_by_process:
                    prev = open_by_process[op.process]
                    raise HistoryError(
                        f"process {op.process} invoked #{op.index} while #{prev.index} was still running"
                    )
                open_by_process[op.process] = op
            else:
                inv = open_by_process.pop(op.process, None)
                if inv is None:
                    # A completion without invocation: Jepsen writes none, but tolerate
                    # (e.g. a truncated history); it pairs with itself.
                    inv = op
                self._completion[inv.index] = op
                self._invocation[op.index] = inv

    def __iter__(self) -> Iterator[Op]:
        return iter(self.ops)

    def __len__(self) -> int:
        return len(self.ops)

    def invocation(self, op: Op) -> Op:
        """The invocation an operation completes (itself for an invocation)."""
        return self._invocation.get(op.index, op)

    def completion(self, invoke: Op) -> Op | None:
        """The completion of an invocation; ``None`` if it never completed."""
        return self._completion.get(invoke.index)

    def completions(self) -> Iterator[Op]:
        """Every completed operation, in history order."""
        return (op for op in self.ops if op.type != "invoke")

    def pairs(self) -> Iterator[tuple[Op, Op]]:
        """``(invocation, outcome)``; an invocation that never completed pairs with a synthetic ``info``."""
        for op in self.ops:
            if op.type != "invoke":
                continue
            done = self._completion.get(op.index)
            yield op, done if done is not None else replace(op, type="info", error="never completed")

    # -- records -----------------------------------------------------------------

    def writes(self) -> list[Write]:
        """Every record sent, with the outcome of the operation that sent it."""
        out: list[Write] = []
        for inv, done in self.pairs():
            # A completion's value is authoritative (offsets on ok; a fail may list the sends
            # that were attempted, e.g. a consume-transform-produce batch that aborted; an info
            # may carry the offsets some sends got before the outcome was lost, as in Jepsen's).
            source = done.value if isinstance(done.value, list) else inv.value
            for mop in source if isinstance(source, list) else []:
                if not (isinstance(mop, list) and len(mop) == 3 and mop[0] == "send"):
                    continue
                _, key, v = mop
                if isinstance(v, list) and len(v) == 2:
                    offset, v = v
                    out.append(Write(key, v, None if offset is None else int(offset), done, inv))
                else:
                    out.append(Write(key, v, None, done, inv))
        return out

    def reads(self) -> list[Read]:
        """Every record observed by a successful poll, in history order."""
        out: list[Read] = []
        for op in self.ops:
            if op.type != "ok" or not isinstance(op.value, list):
                continue
            inv = self.invocation(op)
            for mop in op.value:
                if isinstance(mop, list) and len(mop) == 2 and mop[0] == "poll" and isinstance(mop[1], Mapping):
                    for key, records in mop[1].items():
                        for rec in records:
                            offset, v = rec
                            out.append(Read(key, int(offset), v, op, inv))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "meta": self.meta, "ops": [op.to_json() for op in self.ops]}


def history_from_json(doc: Any) -> History:
    """A :class:`History` from a parsed JSON document (object with ``ops`` or a bare list)."""
    meta: Mapping[str, Any]
    if isinstance(doc, list):
        ops_doc, meta = doc, {}
    elif isinstance(doc, Mapping) and isinstance(doc.get("ops"), list):
        fmt = doc.get("format", FORMAT)
        if fmt != FORMAT:
            raise HistoryError(f"unknown history format {fmt!r} (expected {FORMAT})")
        ops_doc, meta = doc["ops"], doc.get("meta") or {}
    else:
        raise HistoryError('a history is a JSON list of operations or an object with "ops"')
    return History([op_from_json(o, i) for i, o in enumerate(ops_doc)], meta)


def load_json(path: str | Path) -> History:
    """Read a history file; :class:`HistoryError` (with the reason) when it is not one."""
    from keos.scenarios.input_files import MAX_HISTORY_BYTES, InputFileError, read_user_file

    try:
        doc = json.loads(read_user_file(path, "history", MAX_HISTORY_BYTES).decode("utf-8"))
    except InputFileError as exc:
        raise HistoryError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise HistoryError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise HistoryError(f"{path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    return history_from_json(doc)


def dump_json(history: History, path: str | Path) -> Path:
    """Write a history as JSON (one operation per line, so diffs stay readable)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(op.to_json(), sort_keys=False) for op in history.ops]
    body = ",\n  ".join(lines)
    head = f'{{"format": {json.dumps(FORMAT)}, "meta": {json.dumps(history.meta, sort_keys=True)},'
    p.write_text(f'{head}\n "ops": [\n  {body}\n]}}\n', encoding="utf-8")
    return p


class Recorder:
    """Thread-safe builder of a history while a workload runs.

    ``invoke`` returns the invocation; ``complete`` appends its completion.  Times
    are nanoseconds from the recorder's creation on a monotonic clock.
    """

    def __init__(self, meta: Mapping[str, Any] | None = None) -> None:
        import threading

        self._lock = threading.Lock()
        self._ops: list[Op] = []
        self._t0 = _time.monotonic_ns()
        self.meta: dict[str, Any] = dict(meta or {})

    def now(self) -> int:
        return _time.monotonic_ns() - self._t0

    def _append(self, **kw: Any) -> Op:
        with self._lock:
            op = Op(index=len(self._ops), time=self.now(), **kw)
            self._ops.append(op)
            return op

    def invoke(self, process: int | str, f: str, value: Any, **extra: Any) -> Op:
        return self._append(type="invoke", process=process, f=f, value=value, extra=extra)

    def complete(self, invoke: Op, type: str, value: Any = None, error: str | None = None, **extra: Any) -> Op:
        if type not in TYPES[1:]:
            raise ValueError(f"completion type {type!r}")
        merged = {**invoke.extra, **extra}
        return self._append(
            type=type,
            process=invoke.process,
            f=invoke.f,
            value=invoke.value if value is None else value,
            error=error,
            extra=merged,
        )

    def note(self, process: int | str, f: str, value: Any, **extra: Any) -> Op:
        """An observation with no invocation (Jepsen's lone ``info``), e.g. a client state change."""
        return self._append(type="info", process=process, f=f, value=value, error=None, extra=extra)

    def history(self) -> History:
        with self._lock:
            return History(list(self._ops), self.meta)


def concat(parts: Iterable[History]) -> History:
    """Histories run one after another become one (indices renumbered, times kept)."""
    ops: list[Op] = []
    meta: dict[str, Any] = {}
    for h in parts:
        meta.update(h.meta)
        for op in h.ops:
            ops.append(replace(op, index=len(ops)))
    return History(ops, meta)
