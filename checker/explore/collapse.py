"""The visited set of the explicit search, stored collapsed: a state is a tuple of small field ids.

A model state is a tuple of components (a ``NamedTuple``: producers, partitions,
network, ...).  Across a state space the components repeat far more than the
states do: on ``idempotence_epoch_bump`` 51,562 states hold 312 distinct
``producers`` values, 38 ``partitions`` and 15 ``ghost`` values, yet a search
that keeps the states themselves keeps 38,330 ``producers`` objects (equal
values built along different paths are different objects).  So, like SPIN's
``COLLAPSE`` compression (Holzmann, *The SPIN Model Checker*, §9.3), every
distinct value of a field is stored once, in a per-field pool, and a state is
stored as the tuple of its fields' pool indices.

Looking a successor up is cheap too.  A transition changes few components and
the model's step functions keep the others by reference (``_replace``), so a
field that *is* the parent's object gets the parent's index without being
hashed; only the changed fields are hashed, once, and then the short tuple of
integers.  Hashing the whole nested state for every successor -- what a set of
states does, because Python does not cache a tuple's hash -- is avoided.

The encoding is exact (no fingerprint, no collision bound needed) and local to
one process: the indices depend on discovery order, so they name states inside
one search only.  Stable cross-process names are :meth:`Model.fingerprint`.
States that are not ``NamedTuple`` records are stored as a single field.
"""

from __future__ import annotations

from array import array
from typing import Any

__all__ = ["CollapsedStates"]


class CollapsedStates:
    """Distinct states, numbered densely from 0 in the order they were added."""

    def __init__(self) -> None:
        self._cls: type | None = None
        self._width = 0
        self._pools: list[dict[Any, int]] = []
        self._values: list[list[Any]] = []
        self._ids: dict[tuple[int, ...], int] = {}
        self._keys: list[tuple[int, ...]] = []
        self._depth = array("I")
        self._parts: dict[Any, Any] = {}
        self._fast_child: Any = None
        self._fast_state: Any = None

    def __len__(self) -> int:
        return len(self._keys)

    def _shape(self, state: Any) -> None:
        cls = type(state)
        if isinstance(state, tuple) and hasattr(cls, "_fields"):  # a NamedTuple: fixed fields
            self._cls, self._width = cls, len(state)
        else:
            self._cls, self._width = None, 1
        self._pools = [{} for _ in range(self._width)]
        self._values = [[] for _ in range(self._width)]
        if self._cls is not None and self._width:
            self._fast_child, self._fast_state = _generate(
                self._cls, self._width, self._pools, self._values, self.key, self._fresh
            )

    def key(self, state: Any, parent: Any = None, parent_key: tuple[int, ...] | None = None) -> tuple[int, ...]:
        """The collapsed form of ``state``; fields identical (``is``) to ``parent``'s reuse its indices."""
        if self._width == 0:
            self._shape(state)
        if self._cls is None:
            fields: tuple[Any, ...] = (state,)
        elif type(state) is not self._cls:
            raise TypeError(f"a state of type {type(state).__name__} where {self._cls.__name__} was expected")
        else:
            fields = state  # type: ignore[assignment]
        out = []
        pools = self._pools
        for i, value in enumerate(fields):
            if parent_key is not None and value is parent[i]:
                out.append(parent_key[i])
                continue
            pool = pools[i]
            k = pool.get(value)
            if k is None:
                value = self._canonical(value)
                k = pool[value] = len(self._values[i])
                self._values[i].append(value)
            out.append(k)
        return tuple(out)

    def _fresh(self, i: int, value: Any) -> int:
        """Pool a value field ``i`` does not hold yet (:meth:`key`'s path for it): its new index."""
        value = self._canonical(value)
        k = self._pools[i][value] = len(self._values[i])
        self._values[i].append(value)
        return k

    def child_key(self, state: Any, parent: Any, parent_key: tuple[int, ...]) -> tuple[int, ...]:
        """:meth:`key` of a successor of ``parent`` (whose key is ``parent_key``): the search's hot path.

        A field that *is* the parent's takes the parent's id, any other is looked up in its pool; a
        value no pool holds yet (rare: new field values are few) is pooled then.  The search
        calls :meth:`child_key_function`'s result directly.
        """
        if self._fast_child is None:
            return self.key(state, parent, parent_key)
        return self._fast_child(state, parent, parent_key)

    def child_key_function(self) -> Any:
        """:meth:`child_key` as a plain function for the search's loop, once the states' shape is known.

        For a ``NamedTuple`` state of ``n`` fields it is generated, unrolled over the fields (three
        times faster than a loop over them: issue 27's profile); a value no pool holds yet is pooled on
        the spot, that field alone (:meth:`_fresh`), and a state of another type goes to :meth:`key`
        (which refuses it).
        """
        return self._fast_child if self._fast_child is not None else self.child_key

    def state_function(self) -> Any:
        """:meth:`state_of_key` as a plain function (generated and unrolled for ``NamedTuple`` states)."""
        return self._fast_state if self._fast_state is not None else self.state_of_key

    def _canonical(self, value: Any) -> Any:
        """``value`` with every tuple inside it replaced by the first equal one seen (hash-consing).

        Pooled values then share their parts, and comparing a successor's field with a pooled one
        finds most parts identical -- ``is`` before ``==``, so the records' Python ``__eq__`` is
        called only for the parts a step built anew.  Done once per distinct field value.
        """
        if type(value) is not tuple and not (isinstance(value, tuple) and hasattr(value, "_fields")):
            return value
        known = self._parts.get(value)
        if known is not None:
            return known
        items = [self._canonical(v) for v in value]
        if any(a is not b for a, b in zip(items, value)):
            value = tuple.__new__(type(value), items)
        self._parts[value] = value
        return value

    def add(self, key: tuple[int, ...], depth: int) -> tuple[int, bool]:
        """The id of the state ``key`` names, and whether it was new (then it is numbered ``len(self) - 1``)."""
        n = len(self._keys)
        sid = self._ids.setdefault(key, n)
        if sid == n:
            self._keys.append(key)
            self._depth.append(depth)
            return sid, True
        return sid, False

    def find(self, state: Any) -> int | None:
        """The id of ``state`` if it was added (``None`` otherwise); does not add its fields to the pools."""
        if self._width == 0:
            return None
        fields: tuple[Any, ...] = state if self._cls is not None and type(state) is self._cls else (state,)  # type: ignore[assignment]
        try:
            key = tuple(self._pools[i][v] for i, v in enumerate(fields))
        except KeyError:
            return None
        return self._ids.get(key)

    def state(self, sid: int) -> Any:
        """The state numbered ``sid``, rebuilt from the pools (its fields are the pooled objects)."""
        return self.state_of_key(self._keys[sid])

    def state_of_key(self, key: tuple[int, ...]) -> Any:
        """The state a collapsed key names."""
        if self._fast_state is not None:
            return self._fast_state(key)
        return self._values[0][key[0]]

    def keys(self) -> list[tuple[int, ...]]:
        """The keys of the states by id (the table's own list: read it, never change it)."""
        return self._keys

    def ids(self) -> dict[tuple[int, ...], int]:
        """The ids of the states by key (the table's own dict: only :meth:`add`'s inline form may add to it)."""
        return self._ids

    def depths(self) -> array[int]:
        """The depths of the states by id (the table's own array: read it, never change it)."""
        return self._depth

    def key_of(self, sid: int) -> tuple[int, ...]:
        """The collapsed key of state ``sid``."""
        return self._keys[sid]

    def depth(self, sid: int) -> int:
        """The breadth-first depth at which state ``sid`` was first reached."""
        return self._depth[sid]

    def __getitem__(self, sid: int) -> Any:
        return self.state(sid)

    def pool_sizes(self) -> tuple[int, ...]:
        """Distinct values per field (a figure for reports and benchmarks)."""
        return tuple(len(v) for v in self._values)


def _generate(
    cls: type, width: int, pools: list[dict[Any, int]], values: list[list[Any]], slow: Any, fresh: Any
) -> tuple[Any, Any]:
    """``child_key(state, parent, parent_key)`` and ``state_of_key(key)`` for ``NamedTuple`` ``cls``, unrolled."""
    n = range(width)
    c = ", ".join(f"c{i}" for i in n)
    p = ", ".join(f"p{i}" for i in n)
    k = ", ".join(f"k{i}" for i in n)
    r = ", ".join(f"r{i}" for i in n)
    lines = [
        "def child_key(state, parent, parent_key):",
        "    if type(state) is not _cls:",
        "        return _slow(state, parent, parent_key)",
        f"    {c}, = state",
        f"    {p}, = parent",
        f"    {k}, = parent_key",
        *(f"    r{i} = k{i} if c{i} is p{i} else g{i}(c{i})" for i in n),
        f"    if {' or '.join(f'r{i} is None' for i in n)}:",
        *(f"        if r{i} is None:\n            r{i} = _fresh({i}, c{i})" for i in n),
        f"    return ({r},)",
        "",
        "def state_of_key(key):",
        f"    {k}, = key",
        f"    return _new(_cls, ({', '.join(f'v{i}[k{i}]' for i in n)},))",
    ]
    scope: dict[str, Any] = {"_cls": cls, "_slow": slow, "_fresh": fresh, "_new": tuple.__new__}
    for i in n:
        scope[f"g{i}"] = pools[i].get
        scope[f"v{i}"] = values[i]
    exec("\n".join(lines) + "\n", scope)  # generated from the field count only
    return scope["child_key"], scope["state_of_key"]
