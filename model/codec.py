"""Canonical encoding, stable fingerprints and the JSON codec for model values.

Model values are built from ``int``, ``str``, ``bool``, ``None``, plain tuples
and registered ``NamedTuple`` records (messages, batches, log entries).  There
are no sets or dicts in a state, so every value has one canonical encoding and
iteration order never depends on Python's salted ``hash()``.

* :func:`fingerprint` is blake2b-64 over the canonical encoding: equal values
  give equal fingerprints in every process, which the Spark sweep and the trace
  files rely on.
* :func:`to_json` / :func:`from_json` round-trip values through JSON, tagging
  records with ``"@"`` and their registered name.
* :func:`action_to_json` / :func:`action_from_json` are the trace form of an
  action, ``{"kind": ..., <arg name>: <value>, ...}``, for a system's table of
  argument names per action kind.
"""

from __future__ import annotations

import hashlib
from collections import namedtuple
from collections.abc import Mapping, Sequence
from typing import Any

from keos.model.interface import Action, ModelError

__all__ = [
    "CodecError",
    "action_from_json",
    "action_to_json",
    "fingerprint",
    "from_json",
    "record",
    "record_compared_as_tuple",
    "registered",
    "to_json",
]

_RECORDS: dict[str, type] = {}


class CodecError(ValueError):
    """A JSON value that does not decode into a model value."""


def record_compared_as_tuple(cls: type) -> type:
    """:func:`record` for a class only ever compared with its own instances: it keeps tuple equality.

    Class-aware equality (see :func:`_record_eq`) runs in Python on every comparison; a
    class whose instances never share a position with another class's -- the network's
    ``Envelope``: a network holds only envelopes and ``Deliver`` takes one -- can keep
    the C tuple comparison, while the values inside it keep theirs.
    """
    cls = record(cls)
    del cls.__eq__, cls.__ne__
    cls.__hash__ = tuple.__hash__  # type: ignore[method-assign,assignment]
    return cls


def record(cls: type) -> type:
    """Class decorator: register a NamedTuple so it can appear in traces.

    It also gives the class a faster ``_replace``.  ``collections.namedtuple``'s
    builds a dict of the changes and maps ``dict.pop`` over every field in
    Python; a search calls it on nearly every transition, and on the models'
    hot paths it was a seventh of ``keos explore``'s time (issue 17's
    profile).  The replacement has the same meaning -- keyword arguments
    only, unknown names rejected (``TypeError`` instead of ``ValueError``) --
    and builds the new tuple in one expression.
    """
    name = cls.__name__
    existing = _RECORDS.get(name)
    if existing is not None and existing is not cls:  # unreachable: two record classes of one name fail at import
        raise TypeError(f"record name {name!r} registered twice")
    _RECORDS[name] = cls
    fields = getattr(cls, "_fields", None)
    if fields and "__eq__" not in cls.__dict__:  # no branch: no model record defines its own equality
        cls.__eq__ = _record_eq  # type: ignore[method-assign,assignment]
        cls.__ne__ = _record_ne  # type: ignore[method-assign,assignment]
        cls.__hash__ = tuple.__hash__  # type: ignore[method-assign,assignment]
    if fields and getattr(getattr(cls, "_replace", None), "__code__", None) is _STOCK_REPLACE:  # no branch: ditto
        cls._replace = _fast_replace(cls, fields)  # type: ignore[attr-defined]
    return cls


_tuple_eq = tuple.__eq__
_tuple_ne = tuple.__ne__


def _record_eq(self: tuple[Any, ...], other: object) -> bool:
    """Records are equal when they are of the same class and their fields are equal.

    A ``NamedTuple`` compares as a plain tuple, so ``EndTxnResponse(0, 0, "NONE", 0, 1)``
    would equal ``InitProducerIdResponse(0, 0, "NONE", 0, 1)``: two states differing only
    in which response is in flight would be one state to a search's visited set, and a
    replayed ``Deliver`` of the one would deliver the other.  (Hashes stay the tuple's:
    equal hashes across classes are merely collisions.)
    """
    return self.__class__ is other.__class__ and _tuple_eq(self, other)


def _record_ne(self: tuple[Any, ...], other: object) -> bool:
    return self.__class__ is not other.__class__ or _tuple_ne(self, other)


_KEEP = object()
_STOCK_REPLACE = namedtuple("_Probe", "x")._replace.__code__  # type: ignore[attr-defined]


def _fast_replace(cls: type, fields: tuple[str, ...]) -> Any:
    """A ``_replace(self, *, field=...)`` for NamedTuple ``cls`` (fields are identifiers, never ``_``-prefixed)."""
    params = ", ".join(f"{f}=_KEEP" for f in fields)
    items = "".join(f"self[{i}] if {f} is _KEEP else {f}, " for i, f in enumerate(fields))
    source = f"def _replace(self, *, {params}):\n    return _new(_cls, ({items}))\n"
    namespace: dict[str, Any] = {"_KEEP": _KEEP, "_new": tuple.__new__, "_cls": cls}
    exec(source, namespace)  # generated from the class's own field names, as namedtuple does
    replace = namespace["_replace"]
    replace.__qualname__ = f"{cls.__qualname__}._replace"
    replace.__doc__ = f"A new {cls.__name__} with the given fields replaced."
    return replace


def registered() -> dict[str, type]:
    """The registered record classes, by name."""
    return dict(_RECORDS)


def _encode(value: Any, out: list[str]) -> None:
    if value is None or value is True or value is False:
        out.append(repr(value))
    elif type(value) is int:
        out.append(str(value))
    elif type(value) is str:
        out.append(repr(value))
    elif type(value) is tuple:
        out.append("(")
        for item in value:
            _encode(item, out)
            out.append(",")
        out.append(")")
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
        out.append(type(value).__name__)
        out.append("(")
        for item in value:
            _encode(item, out)
            out.append(",")
        out.append(")")
    else:  # unreachable: the model's values are None, bools, ints, strings, tuples and records
        raise TypeError(f"value of type {type(value).__name__} has no canonical encoding")


def canonical(value: Any) -> str:
    """The canonical text encoding of a model value."""
    out: list[str] = []
    _encode(value, out)
    return "".join(out)


def fingerprint(value: Any) -> str:
    """Stable 64-bit fingerprint (16 hex digits) of a model value."""
    return hashlib.blake2b(canonical(value).encode(), digest_size=8).hexdigest()


def to_json(value: Any) -> Any:
    """Encode a model value as JSON-compatible data."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        data: dict[str, Any] = {"@": type(value).__name__}
        for name, item in zip(value._fields, value):
            data[name] = to_json(item)
        return data
    if isinstance(value, tuple):  # no branch: as canonical(), a model value is one of these kinds
        return [to_json(item) for item in value]
    raise TypeError(f"value of type {type(value).__name__} is not a model value")


def from_json(data: Any) -> Any:
    """Decode JSON data produced by :func:`to_json`; raises :class:`CodecError`."""
    if data is None or isinstance(data, (bool, int, str)):
        return data
    if isinstance(data, float):  # input: a hand-edited trace (keos writes integers)
        raise CodecError(f"unexpected number {data!r} (model values are integers)")
    if isinstance(data, list):
        return tuple(from_json(item) for item in data)
    if isinstance(data, dict):
        name = data.get("@")
        cls = _RECORDS.get(name) if isinstance(name, str) else None
        if cls is None:  # input: a hand-edited trace names no record class
            raise CodecError(f"unknown record type {name!r}")
        fields: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
        missing = [f for f in fields if f not in data]
        extra = [k for k in data if k != "@" and k not in fields]
        if missing or extra:  # input: a hand-edited trace's record lacks or adds a field
            raise CodecError(f"record {name}: missing fields {missing}, unexpected fields {extra}")
        values = [from_json(data[f]) for f in fields]
        for f, value in zip(fields, values):
            expected = _scalar_fields(cls).get(f)
            if expected is not None and not _is_scalar(value, expected):  # input: a field of the wrong type
                raise CodecError(f"record {name}: field {f!r} must be {expected}, got {value!r:.40}")
        return cls(*values)
    raise CodecError(f"unexpected JSON value of type {type(data).__name__}")  # input: not JSON keos writes


_SCALARS: dict[type, dict[str, str]] = {}


def _scalar_fields(cls: type) -> dict[str, str]:
    """A record's field annotations as text, for the fields :func:`_is_scalar` can check."""
    known = _SCALARS.get(cls)
    if known is None:
        known = {}
        for f, a in getattr(cls, "__annotations__", {}).items():
            known[f] = a.__name__ if isinstance(a, type) else str(getattr(a, "__forward_arg__", a))
        _SCALARS[cls] = known
    return known


def _alternatives(text: str) -> list[str]:  # input: parses annotations for _is_scalar
    """``"tuple[int, ...] | None"`` -> ``["tuple[int, ...]", "None"]`` (split on ``|`` outside brackets)."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "|" and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def _is_scalar(value: Any, expected: str) -> bool:  # input: decides only on a hand-edited trace's field
    """Whether a decoded value fits an annotation (``int``, ``str | None``, ``tuple[int, ...]``, ...).

    Only what can be checked from the annotation's text is checked; a record type, a type
    variable or anything else is accepted as is (the model's own range checks follow).
    """
    for alt in _alternatives(expected):
        if alt == "None" and value is None:
            return True
        if alt == "bool" and isinstance(value, bool):
            return True
        if alt == "int" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if alt == "str" and isinstance(value, str):
            return True
        if alt.startswith("tuple[") and alt.endswith(", ...]"):
            inner = alt[len("tuple["):-len(", ...]")]
            if type(value) is tuple and all(_is_scalar(v, inner) for v in value):
                return True
        elif alt.startswith("tuple"):
            if type(value) is tuple:
                return True
        elif alt not in ("None", "bool", "int", "str"):
            return True
    return False


def action_to_json(action: Action, arg_names: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """``{"kind": ..., <arg>: <value>, ...}`` with the argument names of ``action.kind``."""
    data: dict[str, Any] = {"kind": action.kind}
    for name, value in zip(arg_names[action.kind], action.args, strict=True):
        data[name] = to_json(value)
    return data


def action_from_json(data: Any, arg_names: Mapping[str, Sequence[str]]) -> Action:
    """Decode :func:`action_to_json`'s form; :class:`ModelError` (one line) on malformed input.

    Checks the envelope (an object with a known ``kind`` and exactly its argument names) and decodes
    each value; whether the values are in range for a scenario is the system's to check.
    """
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):  # input: not an action object
        raise ModelError(f"an action must be an object with a 'kind', got {data!r:.80}")
    kind = data["kind"]
    names = arg_names.get(kind)
    if names is None:  # input: a hand-edited trace names an unknown action
        raise ModelError(f"unknown action kind {kind!r}")
    extra = sorted(set(data) - {"kind", *names})
    missing = [n for n in names if n not in data]
    if extra or missing:  # input: an action's arguments are not its names
        raise ModelError(f"action {kind}: missing {missing}, unexpected {extra}")
    try:
        return Action(kind, tuple(from_json(data[n]) for n in names))
    except CodecError as exc:  # input: an argument that does not decode
        raise ModelError(f"action {kind}: {exc}") from None
