"""A small EDN reader and writer, enough for Jepsen's ``history.edn``.

Jepsen stores a test's history as EDN (extensible data notation, the Clojure
data syntax): one operation map per line, e.g. ::

    {:type :invoke, :f :txn, :value [[:send 8 1] [:poll]], :time 3291, :process 0, :index 0}
    {:type :ok, :f :txn, :value [[:send 8 [0 1]] [:poll {8 [[0 1]]}]], :time 9981, :process 0, :index 1}

Newer Jepsen versions print operations as records (``#jepsen.history.Op{...}``)
and may wrap the whole history in a vector.  This module reads the EDN subset
those files use -- maps, vectors, lists, sets, keywords, symbols, strings,
characters, integers (with ``N``), floats (with ``M``), ``nil``/``true``/
``false``, comments, ``#_`` discards and tagged elements (the tag is dropped,
the element kept) -- and converts histories both ways with
:mod:`keos.checker.conform.history`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .history import History, HistoryError, Op, op_from_json

__all__ = ["EdnError", "Keyword", "Symbol", "dumps", "history_from_edn", "history_to_edn", "loads_all", "read_history"]


class EdnError(HistoryError):
    """Text that is not the EDN this reader understands."""


@dataclass(frozen=True)
class Keyword:
    """``:name`` (namespaced keywords keep their ``ns/`` prefix in ``name``)."""

    name: str

    def __str__(self) -> str:
        return ":" + self.name


@dataclass(frozen=True)
class Symbol:
    name: str


_WS = " \t\r\n,"
_DELIM = _WS + '()[]{}";'
_INT = re.compile(r"^[+-]?\d+N?$")
_FLOAT = re.compile(r"^[+-]?\d+(\.\d*)?([eE][+-]?\d+)?M?$")
_CHARS = {"newline": "\n", "space": " ", "tab": "\t", "return": "\r", "backspace": "\b", "formfeed": "\f"}
_ESC = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "b": "\b", "f": "\f"}


class _Reader:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def _line(self) -> int:
        return self.s.count("\n", 0, self.i) + 1

    def error(self, msg: str) -> EdnError:
        return EdnError(f"EDN line {self._line()}: {msg}")

    def skip(self) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c in _WS:
                self.i += 1
            elif c == ";":
                while self.i < n and s[self.i] != "\n":
                    self.i += 1
            else:
                break

    def at_end(self) -> bool:
        self.skip()
        return self.i >= len(self.s)

    def read(self) -> Any:
        self.skip()
        if self.i >= len(self.s):
            raise self.error("unexpected end of input")
        c = self.s[self.i]
        if c == "[":
            self.i += 1
            return self._seq("]")
        if c == "(":
            self.i += 1
            return tuple(self._seq(")"))
        if c == "{":
            self.i += 1
            items = self._seq("}")
            if len(items) % 2:
                raise self.error("a map needs an even number of forms")
            return {_hashable(items[j]): items[j + 1] for j in range(0, len(items), 2)}
        if c == '"':
            return self._string()
        if c == "\\":
            return self._char()
        if c == "#":
            return self._dispatch()
        if c in ")]}":
            raise self.error(f"unexpected {c!r}")
        return self._atom()

    def _seq(self, close: str) -> list[Any]:
        out: list[Any] = []
        while True:
            self.skip()
            if self.i >= len(self.s):
                raise self.error(f"missing {close!r}")
            if self.s[self.i] == close:
                self.i += 1
                return out
            out.append(self.read())

    def _string(self) -> str:
        self.i += 1
        buf: list[str] = []
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c == '"':
                self.i += 1
                return "".join(buf)
            if c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                if nxt == "u":
                    buf.append(chr(int(s[self.i + 2 : self.i + 6], 16)))
                    self.i += 6
                    continue
                if nxt not in _ESC:
                    raise self.error(f"bad escape \\{nxt}")
                buf.append(_ESC[nxt])
                self.i += 2
                continue
            buf.append(c)
            self.i += 1
        raise self.error("unterminated string")

    def _token(self) -> str:
        start = self.i
        while self.i < len(self.s) and self.s[self.i] not in _DELIM:
            self.i += 1
        return self.s[start : self.i]

    def _char(self) -> str:
        self.i += 1
        tok = self.s[self.i] + self._token_after()
        if len(tok) == 1:
            return tok
        if tok in _CHARS:
            return _CHARS[tok]
        if tok.startswith("u") and len(tok) == 5:
            return chr(int(tok[1:], 16))
        raise self.error(f"bad character \\{tok}")

    def _token_after(self) -> str:
        self.i += 1
        return self._token()

    def _dispatch(self) -> Any:
        nxt = self.s[self.i + 1 : self.i + 2]
        if nxt == "{":
            self.i += 2
            return frozenset(_hashable(x) for x in self._seq("}"))
        if nxt == "_":
            self.i += 2
            self.read()
            return self.read()
        self.i += 1
        tag = self._token()
        if not tag:
            raise self.error("bad # dispatch")
        return self.read()  # tagged element: #inst "...", #jepsen.history.Op{...} -> the element

    def _atom(self) -> Any:
        tok = self._token()
        if not tok:
            raise self.error(f"unexpected {self.s[self.i]!r}")
        if tok == "nil":
            return None
        if tok == "true":
            return True
        if tok == "false":
            return False
        if tok.startswith(":"):
            return Keyword(tok[1:])
        if _INT.match(tok):
            return int(tok.rstrip("N"))
        if _FLOAT.match(tok):
            return float(tok.rstrip("M"))
        if tok[0] in "+-" or tok[0].isdigit():
            if re.match(r"^[+-]?\d+/\d+$", tok):
                num, den = tok.split("/")
                return int(num) / int(den)
            if tok[0].isdigit():
                raise self.error(f"bad number {tok!r}")
        return Symbol(tok)


def _hashable(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_hashable(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted(((_hashable(k), _hashable(v)) for k, v in x.items()), key=repr))
    return x


def loads_all(text: str) -> Iterator[Any]:
    """Every top-level form in ``text``."""
    r = _Reader(text)
    while not r.at_end():
        yield r.read()


# -- writer ----------------------------------------------------------------------

_SAFE_KW = re.compile(r"^[A-Za-z*+!_?<>=/.-][A-Za-z0-9*+!_?<>=/.:#-]*$")


def dumps(x: Any) -> str:
    """EDN text for Python data: ``Keyword``/``Symbol``, dict, list/tuple (vector), set, str, numbers."""
    if x is None:
        return "nil"
    if x is True:
        return "true"
    if x is False:
        return "false"
    if isinstance(x, Keyword):
        return ":" + x.name
    if isinstance(x, Symbol):
        return x.name
    if isinstance(x, int | float):
        return repr(x)
    if isinstance(x, str):
        return '"' + x.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(x, Mapping):
        return "{" + ", ".join(f"{dumps(k)} {dumps(v)}" for k, v in x.items()) + "}"
    if isinstance(x, list | tuple):
        return "[" + " ".join(dumps(v) for v in x) + "]"
    if isinstance(x, set | frozenset):
        return "#{" + " ".join(dumps(v) for v in sorted(x, key=repr)) + "}"
    raise TypeError(f"no EDN form for {type(x).__name__}")


# -- histories ---------------------------------------------------------------------

#: Op fields whose values are keywords in Jepsen's EDN.
_KEYWORD_FIELDS = ("type", "f", "isolation")


def _plain(x: Any) -> Any:
    """EDN data -> the JSON-ish data of :mod:`history` (keywords become strings)."""
    if isinstance(x, Keyword | Symbol):
        return x.name
    if isinstance(x, Mapping):
        return {_plain(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if isinstance(x, frozenset):
        return sorted((_plain(v) for v in x), key=repr)
    return x


def _op_from_edn(form: Any, position: int) -> Op:
    if not isinstance(form, Mapping):
        raise EdnError(f"history entry {position} is not a map")
    obj = {str(_plain(k)).replace("-", "_"): _plain(v) for k, v in form.items()}
    if "process" in obj and not isinstance(obj["process"], int | str):
        obj["process"] = str(obj["process"])
    if isinstance(obj.get("error"), list | dict):
        obj["error"] = dumps(form[Keyword("error")])
    obj.setdefault("time", 0)
    return op_from_json(obj, position)


_META = ";; keos-meta: "


def _meta_comment(text: str) -> dict[str, Any]:
    """keos's run metadata (target, target profile, nemesis schedule), kept in a leading EDN comment.

    Jepsen's reader skips comments, so the file stays a plain ``history.edn`` for Jepsen.
    """
    meta: dict[str, Any] = {}
    for line in text.splitlines():
        if not line.startswith(";"):
            break
        if line.startswith(_META):
            try:
                got = json.loads(line[len(_META) :])
            except ValueError as exc:
                raise EdnError(f"EDN line 1: the keos-meta comment is not JSON: {exc}") from None
            if isinstance(got, dict):
                meta.update(got)
    return meta


def history_from_edn(text: str) -> History:
    """A history from the text of a Jepsen ``history.edn`` (operations one by one or in one vector)."""
    meta = _meta_comment(text)
    forms = list(loads_all(text))
    if len(forms) == 1 and isinstance(forms[0], list):
        forms = forms[0]
    ops = [_op_from_edn(f, i) for i, f in enumerate(forms)]
    if any(op.index != i for i, op in enumerate(ops)):
        ops = [Op(i, op.time, op.type, op.process, op.f, op.value, op.error, op.extra) for i, op in enumerate(ops)]
    return History(ops, {"source": "jepsen history.edn", **meta})


def read_history(path: str | Path) -> History:
    """Read ``history.edn`` from a file."""
    from keos.scenarios.input_files import MAX_HISTORY_BYTES, InputFileError, read_user_file

    try:
        text = read_user_file(path, "history", MAX_HISTORY_BYTES).decode("utf-8")
    except InputFileError as exc:
        raise EdnError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise EdnError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    return history_from_edn(text)


def _edn_value(x: Any, top: bool = True) -> Any:
    """Micro-operations: the first element of each ``[f ...]`` becomes a keyword."""
    if isinstance(x, list) and top:
        return [_edn_mop(m) for m in x]
    return x


def _edn_mop(m: Any) -> Any:
    if isinstance(m, list) and m and isinstance(m[0], str):
        return [Keyword(m[0]), *m[1:]]
    return m


def history_to_edn(history: History) -> str:
    """Jepsen's ``history.edn`` text: one operation map per line, keos's metadata in a leading comment."""
    lines = [_META + json.dumps(history.meta, default=str, separators=(",", ":"))] if history.meta else []
    for op in history.ops:
        d: dict[Any, Any] = {
            Keyword("index"): op.index,
            Keyword("time"): op.time,
            Keyword("type"): Keyword(op.type),
            # Jepsen's non-client processes are keywords (``:nemesis``); client processes are integers.
            Keyword("process"): Keyword(op.process) if isinstance(op.process, str) else op.process,
            Keyword("f"): Keyword(op.f),
            Keyword("value"): _edn_value(op.value),
        }
        if op.error is not None:
            d[Keyword("error")] = op.error
        for k, v in op.extra.items():
            if k in _KEYWORD_FIELDS and isinstance(v, str):
                d[Keyword(k.replace("_", "-"))] = Keyword(v)
            else:
                d[Keyword(k.replace("_", "-"))] = v
        lines.append(dumps(d))
    return "\n".join(lines) + "\n"
