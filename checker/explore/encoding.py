"""A compact canonical encoding of model states, and 64-bit fingerprints over it.

The search keeps *fingerprints* of visited states, not the states, and moves states
between worker processes (and Spark executors) as bytes.  One encoding serves both:

* it is **canonical**: a value has exactly one encoding, built from the value's
  structure alone (no memo of shared objects, no interning, no Python ``hash()``),
  so equal states give equal bytes in every process;
* it is a valid **pickle** stream (protocol 4, no memo; a record is rebuilt by
  ``tuple.__new__(cls, fields)``, its class named by module and qualified name), so
  a receiver -- a forked worker, a Spark executor -- turns it back into the model's
  own NamedTuples with :func:`pickle.loads` at C speed, importing the class's module
  if it has to;
* it is built **incrementally**: successors share most of their parts with their
  parent (the producer that did not move, the partition that was not written), so
  the encoding of every record (``NamedTuple``) and of every field of the state is
  cached (by object identity, see below), and a state's encoding is the
  concatenation of its fields' cached encodings.

The fingerprint is blake2b with an 8-byte digest over the encoding (a stable hash;
:func:`keos.model.codec.fingerprint` hashes the codec's text encoding instead and
remains the name of a state in traces and graphs).  Two distinct states share a
64-bit fingerprint with probability about ``n**2 / 2**65`` over ``n`` states:
3e-8 for a million states, 3e-4 for a hundred million.  A collision would hide the
second state from the search; the statistics of every run state the bound.

Model values are ints, strs, bools, ``None``, plain tuples and registered records
(:mod:`keos.model.codec`).  The caches are keyed by object *identity* (holding the
object, so its id is not reused), never by value: Python's ``==`` does not tell
``True`` from ``1``, nor two record classes with equal fields (a ``Produce`` and an
``InitProducerId`` whose fields happen to be equal are equal tuples), and a value-keyed
cache would hand one the other's encoding.  Identity still hits where it matters: a
successor shares its unchanged parts, as objects, with its parent.
"""

from __future__ import annotations

import hashlib
import pickle
import struct
from typing import Any

__all__ = ["StateEncoder", "collision_bound", "decode", "decode_fragment", "decode_head", "fingerprint_of"]

_NONE, _TRUE, _FALSE = b"N", b"\x88", b"\x89"
_MARK, _TUPLE, _EMPTY_TUPLE, _STOP = b"(", b"t", b")", b"."
# A record is rebuilt as ``tuple.__new__(cls, (fields...))`` (REDUCE), which is what a
# NamedTuple's own ``__new__`` does, without its Python-level call.
_PROTO4 = b"\x80\x04"
_END_RECORD = b"tt" + b"R"
_SMALL_INTS = [b"K" + bytes([i]) for i in range(256)]
_pack_h = struct.Struct("<H").pack
_pack_i = struct.Struct("<i").pack
_UNSET = object()  # no field value seen yet (``None`` is a field value like any other)


def _encode_int(v: int) -> bytes:
    if 0 <= v < 256:
        return _SMALL_INTS[v]
    if 0 <= v < 65536:
        return b"M" + _pack_h(v)
    if -(2**31) <= v < 2**31:
        return b"J" + _pack_i(v)
    data = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(data)]) + data


def _encode_str(v: str) -> bytes:
    data = v.encode("utf-8")
    if len(data) < 256:
        return b"\x8c" + bytes([len(data)]) + data
    return b"X" + struct.pack("<I", len(data)) + data


def _global(module: str, name: str) -> bytes:
    """The opcodes that push the object ``module.name`` (SHORT_BINUNICODE twice, STACK_GLOBAL)."""
    return _encode_str(module) + _encode_str(name) + b"\x93"


def _new_tuple() -> bytes:
    """The opcodes that push ``tuple.__new__`` and open its argument tuple."""
    return _global("builtins", "tuple.__new__") + _MARK


class StateEncoder:
    """Encodes model values canonically, caching the encoding of every record object."""

    def __init__(self, cache_limit: int = 16_384) -> None:
        self._records: dict[int, tuple[Any, bytes]] = {}
        self._strs: dict[str, bytes] = {}
        self._heads: dict[type, bytes] = {}
        self._field_caches: dict[type, list[dict[int, tuple[Any, bytes]]]] = {}
        self._last: dict[type, tuple[list[Any], list[bytes]]] = {}
        self._parent: tuple[tuple[Any, ...], list[bytes]] | None = None
        self._cache_limit = cache_limit
        #: The parts of the last encoding :meth:`encode` returned: ``[protocol, record head, field
        #: encodings..., end]`` for a record, ``None`` for any other value.  The explore workers send a
        #: state that crosses to another partition as ids of its fields' encodings (``workers.py``).
        self.last_parts: list[bytes] | None = None

    def _head(self, cls: type) -> bytes:
        head = self._heads.get(cls)
        if head is None:
            head = _new_tuple() + _global(cls.__module__, cls.__qualname__) + _MARK
            self._heads[cls] = head
        return head

    def _encode(self, v: Any) -> bytes:
        t = type(v)
        if t is int:
            return _SMALL_INTS[v] if 0 <= v < 256 else _encode_int(v)
        if t is tuple:
            if not v:
                return _EMPTY_TUPLE
            return _MARK + b"".join([self._encode(x) for x in v]) + _TUPLE
        if t is str:
            s = self._strs.get(v)
            if s is None:
                s = self._strs[v] = _encode_str(v)
            return s
        if v is None:
            return _NONE
        if v is True:
            return _TRUE
        if v is False:
            return _FALSE
        if hasattr(t, "_fields"):
            entry = self._records.get(id(v))
            if entry is not None and entry[0] is v:
                cached = entry[1]
            else:
                cached = self._head(t) + b"".join([self._encode(x) for x in v]) + _END_RECORD
                if len(self._records) >= self._cache_limit:
                    self._records.clear()
                self._records[id(v)] = (v, cached)
            return cached
        raise TypeError(f"value of type {t.__name__} has no canonical encoding")

    def encode(self, state: Any) -> bytes:
        """The canonical encoding of ``state`` (a complete pickle stream).

        The top-level record is not cached (a search meets each state once); the
        encoding of each of its fields is, per field, keyed by the field's value.
        """
        t = type(state)
        caches = self._field_caches.get(t)
        if caches is None:
            if not hasattr(t, "_fields"):
                self.last_parts = None
                return _PROTO4 + self._encode(state) + _STOP
            caches = self._field_caches[t] = [{} for _ in t._fields]
            self._last[t] = ([_UNSET] * len(t._fields), [b""] * len(t._fields))
        last_values, last_encodings = self._last[t]
        parent = self._parent
        parts = [_PROTO4, self._head(t)]
        for i, v in enumerate(state):
            # A successor shares most fields with its parent and with the sibling
            # encoded before it (the same objects): try identity before hashing.
            if v is last_values[i]:
                parts.append(last_encodings[i])
            elif parent is not None and v is parent[0][i]:
                parts.append(parent[1][i])
            else:
                cache = caches[i]
                hit = cache.get(id(v))
                if hit is not None and hit[0] is v:
                    enc = hit[1]
                else:
                    enc = self._encode(v)
                    if len(cache) >= self._cache_limit:
                        cache.clear()
                    cache[id(v)] = (v, enc)
                last_values[i] = v
                last_encodings[i] = enc
                parts.append(enc)
        parts.append(_END_RECORD + _STOP)
        self.last_parts = parts
        return b"".join(parts)

    def prime(self, parent: Any) -> None:
        """Remember ``parent``'s fields and encodings: its successors are encoded next."""
        t = type(parent)
        if not hasattr(t, "_fields"):
            self._parent = None  # not a record: encoded whole
            return
        caches = self._field_caches.get(t)
        if caches is None:
            self.encode(parent)
            caches = self._field_caches[t]
        encodings = []
        for cache, v in zip(caches, parent):
            hit = cache.get(id(v))
            if hit is not None and hit[0] is v:
                enc = hit[1]
            else:
                enc = self._encode(v)
                cache[id(v)] = (v, enc)
            encodings.append(enc)
        self._parent = (tuple(parent), encodings)

    def fingerprint(self, state: Any) -> tuple[int, bytes]:
        """``(fingerprint, encoding)`` of ``state``."""
        data = self.encode(state)
        return fingerprint_of(data), data


def fingerprint_of(data: bytes) -> int:
    """The 64-bit fingerprint (signed, so it fits numpy's int64) of an encoding."""
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)


def decode(data: bytes) -> Any:
    """The model value of an encoding (only ever bytes this module produced, never outside input)."""
    return pickle.loads(data)


def decode_fragment(fragment: bytes) -> Any:
    """The model value of one part of an encoding: a field's encoding, or a whole encoding without its
    protocol header and stop opcode (only ever bytes this module produced)."""
    return pickle.loads(_PROTO4 + fragment + _STOP)


def decode_head(head: bytes) -> type:
    """The record class a record's head names (the part :attr:`StateEncoder.last_parts` holds second).

    A head pushes ``tuple.__new__``, a mark, the class and a second mark; closing both marks with no
    field in between builds an empty instance (``tuple.__new__(cls, ())``), whose type is the class.
    """
    return type(pickle.loads(_PROTO4 + head + _END_RECORD + _STOP))


def collision_bound(states: int) -> float:
    """Upper bound on the probability that two of ``states`` distinct states share a fingerprint."""
    return states * (states - 1) / 2 / 2.0**64
