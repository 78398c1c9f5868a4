"""Incremental evaluation of state predicates: re-evaluated only when the fields they read changed.

A search evaluates every property on every state it adds, yet a property
reads a few of the state's components (``no_aborted_read`` the partitions,
``transactions_complete`` the coordinator and the network), and those repeat
across the state space far more than whole states do.  With the collapsed
visited set (:mod:`keos.checker.explore.collapse`) a state is already a tuple
of per-field value ids, so the result of a predicate can be cached by the ids
of the fields it read.

Which fields a predicate reads is *observed*, never declared: the predicate
runs on a tracing view of the state (a subclass of the state's ``NamedTuple``
class whose field accessors note the field), and its result is cached under
the ids of the fields it has read.  A later state that agrees on those fields
would make the (pure, deterministic) predicate take the same branches, read
the same fields and return the same result, so a cache hit is sound whatever
the predicate's short-circuits.  Any other use of the state
-- indexing, iterating, unpacking, ``len``, hashing, comparing, printing it,
passing it to the codec -- counts as reading every field.

States that are not ``NamedTuple`` records are evaluated directly, every time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from keos import _compiled_model

__all__ = ["PredicateCache"]

#: :meth:`PredicateCache.failing`'s plan for a tuple of predicates: the version of the read sets it was made
#: for, and per group of predicates reading the same fields (picker of those fields' ids, memo, members).
_Plan = tuple[int, list[tuple[Callable[[tuple[int, ...]], Any], dict[Any, tuple[int, ...]], tuple[int, ...]]]]

#: Cached results per (predicate, read set) before that cache starts afresh.
_LIMIT = 1 << 18


class _Reads:
    """The fields the current evaluation read (``all`` once the state was used as a whole)."""

    def __init__(self) -> None:
        self.fields: set[int] = set()
        self.all = False


def _tracing_class(cls: type, reads: _Reads) -> type:
    """A subclass of NamedTuple ``cls`` whose field accessors and whole-value uses note what is read."""
    tuple_getitem = tuple.__getitem__
    namespace: dict[str, Any] = {"__slots__": ()}

    def accessor(i: int) -> property:
        def get(self: tuple[Any, ...]) -> Any:
            reads.fields.add(i)
            return tuple_getitem(self, i)

        return property(get)

    for i, name in enumerate(cls._fields):  # type: ignore[attr-defined]
        namespace[name] = accessor(i)

    def whole(method: Callable[..., Any]) -> Callable[..., Any]:
        def use(self: Any, *args: Any) -> Any:
            reads.all = True
            return method(tuple.__new__(cls, tuple.__iter__(self)), *args)  # on the untraced state

        return use

    for name in _WHOLE:
        method = getattr(cls, name, None)
        if method is not None:
            namespace[name] = whole(method)
    traced = type(cls.__name__, (cls,), namespace)
    traced.__qualname__ = cls.__qualname__
    return traced


#: The uses of a state that read it as a whole (every field).
_WHOLE = (
        "__getitem__",
        "__iter__",
        "__len__",
        "__hash__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__repr__",
        "__str__",
        "__format__",
        "__contains__",
        "__reduce__",
        "__reduce_ex__",
        "__getnewargs__",
        "__add__",
        "__mul__",
        "__rmul__",
        "count",
        "index",
        "_asdict",
        "_replace",
)


def _view_class(cls: type, reads: _Reads) -> type:
    """Under ``--kernel compiled``: a view of a NamedTuple ``cls`` state that is *not* a tuple, noting what is read.

    mypyc compiles ``state.field`` on a ``NamedTuple``-typed value to a direct tuple item read
    (``mypyc/irbuild/expression.py``, "transform attribute access to faster index access"), which a
    tracing subclass's accessors never see: a predicate that hands the state to a compiled model function
    would be cached under too few fields (unsound hits).  This view is no tuple, so a compiled function
    typed for the record refuses it at entry (``TypeError``) and :meth:`PredicateCache.holds` evaluates
    that predicate on the state itself, as reading every field.  Interpreted code reads fields through
    the view's accessors (noted), any other use of the record reads it whole, and ``isinstance`` sees
    ``cls`` (``__class__``).
    """
    namespace: dict[str, Any] = {"__slots__": ("_state",), "_fields": cls._fields}  # type: ignore[attr-defined]

    def accessor(i: int) -> property:
        def get(self: Any) -> Any:
            reads.fields.add(i)
            return self._state[i]

        return property(get)

    for i, name in enumerate(cls._fields):  # type: ignore[attr-defined]
        namespace[name] = accessor(i)

    def whole(name: str) -> Callable[..., Any]:
        def use(self: Any, *args: Any, **kwargs: Any) -> Any:
            reads.all = True
            return getattr(self._state, name)(*args, **kwargs)

        return use

    for name in _WHOLE:
        if hasattr(cls, name):
            namespace[name] = whole(name)

    def init(self: Any, state: Any) -> None:
        self._state = state

    def rest(self: Any, name: str) -> Any:  # the record's own methods and attributes: the whole record
        reads.all = True
        return getattr(self._state, name)

    namespace.update(__init__=init, __getattr__=rest, __class__=property(lambda self: cls))
    view = type(cls.__name__, (), namespace)
    view.__qualname__ = cls.__qualname__
    return view


class PredicateCache:
    """Results of state predicates, cached by the ids of the fields their evaluations read.

    Per predicate the cache keys on ``U``, the union of the fields its evaluations have read so
    far.  An entry was computed on a state whose evaluation read ``R`` (a subset of ``U`` then and
    since), so a state agreeing on ``U`` agrees on ``R``: the hit is sound.  When an evaluation
    reads a field outside ``U``, ``U`` grows and the predicate's entries are dropped (their keys
    have the old shape); that happens a few times per predicate, early in a search.
    """

    def __init__(self, predicates: Sequence[Callable[[Any], Any]]) -> None:
        self._predicates = list(predicates)
        self._reads = _Reads()
        self._cls: type | None = None
        self._traced: type | None = None
        n = len(self._predicates)
        self._union: list[frozenset[int] | None] = [None] * n  # None: never evaluated yet
        self._pick: list[Callable[[tuple[int, ...]], Any]] = [_never] * n
        self._memo: list[dict[Any, bool]] = [{} for _ in range(n)]
        # :meth:`failing`'s plans: per tuple of predicate indices asked, its predicates grouped by read set.
        self._version = 0  # bumped whenever a predicate's read set grows (the groups change then)
        self._plans: dict[tuple[int, ...], _Plan] = {}
        self.evaluations = 0
        self.hits = 0
        # The compiled model is served in this process: predicates see the non-tuple view (_view_class).
        self._opaque = bool(_compiled_model.loaded())
        self.refused = 0  # evaluations a compiled function refused the view in

    def _tracer(self, state: Any) -> type | None:
        cls = type(state)
        if self._cls is not cls:
            if self._cls is not None or not (isinstance(state, tuple) and hasattr(cls, "_fields")):
                return None
            make = _view_class if self._opaque else _tracing_class
            self._cls, self._traced = cls, make(cls, self._reads)
        return self._traced

    def holds(self, k: int, state: Any, key: tuple[int, ...] | None) -> bool:
        """Predicate ``k`` on ``state``, whose collapsed key is ``key`` (``None``: evaluate directly)."""
        if key is not None:
            result = self._memo[k].get(self._pick[k](key))
            if result is not None:
                self.hits += 1
                return result
        traced = self._tracer(state) if key is not None else None
        self.evaluations += 1
        if traced is None:
            return bool(self._predicates[k](state))
        reads = self._reads
        reads.fields.clear()
        reads.all = False
        if not self._opaque:
            result = bool(self._predicates[k](tuple.__new__(traced, state)))
        else:
            try:
                result = bool(self._predicates[k](traced(state)))
            except TypeError:  # compiled code refused the view: evaluated on the state, as read whole
                reads.all = True
                self.refused += 1
                result = bool(self._predicates[k](state))
        assert key is not None
        read = frozenset(range(len(key))) if reads.all else frozenset(reads.fields)
        union = self._union[k]
        if union is None or not read <= union:
            union = self._union[k] = read if union is None else union | read
            self._pick[k] = _picker(tuple(sorted(union)))
            self._memo[k] = {}
            self._version += 1
        memo = self._memo[k]
        if len(memo) >= _LIMIT:
            memo.clear()
        memo[self._pick[k](key)] = result
        return result

    def failing(self, ks: tuple[int, ...], state: Any, key: tuple[int, ...]) -> tuple[int, ...]:
        """The predicates of ``ks`` that are false on ``state`` (collapsed key ``key``), in ``ks``'s order.

        The search asks this once per state for all its invariants (and once for its sometimes partners)
        instead of one :meth:`holds` per predicate (issue 27's profile: a dict lookup and a call per
        predicate per state was a fifth of the compiled kernel's time).  The predicates of ``ks`` are
        grouped by their read sets (:attr:`_union`: predicates reading the same fields share one
        group), and per group one memo maps the ids of those fields to the group's false predicates.
        A group entry is computed from :meth:`holds` of each of its predicates, whose results depend
        only on the group's fields (the per-predicate argument above); when a read set grows, the
        groups are formed afresh and their memos start empty.
        """
        plan = self._plans.get(ks)
        if plan is None or plan[0] != self._version:
            plan = self._plan(ks)
        out: tuple[int, ...] = ()
        for pick, memo, members in plan[1]:
            picked = pick(key)
            false = memo.get(picked)
            if false is None:
                version = self._version
                false = tuple(k for k in members if not self.holds(k, state, key))
                if version != self._version:  # a read set grew: the groups change, start afresh
                    return self.failing(ks, state, key)
                if len(memo) >= _LIMIT:
                    memo.clear()
                memo[picked] = false
            else:
                self.hits += len(members)
            if false:
                out += false
        if len(out) > 1:
            order = {k: i for i, k in enumerate(ks)}
            out = tuple(sorted(out, key=order.__getitem__))
        return out

    def _plan(self, ks: tuple[int, ...]) -> _Plan:
        """``ks`` grouped by read set, each group with an empty memo (a predicate never evaluated is its own group)."""
        groups: dict[Any, list[int]] = {}
        for k in ks:
            union = self._union[k]
            groups.setdefault(union if union is not None else ("new", k), []).append(k)
        plan: _Plan = (self._version, [
            (_picker(tuple(sorted(union))) if isinstance(union, frozenset) else _never, {}, tuple(members))
            for union, members in groups.items()
        ])
        self._plans[ks] = plan
        return plan


def _never(key: tuple[int, ...]) -> Any:
    """The key of a predicate never evaluated: no entry can match it."""
    return _NO_ENTRY


_NO_ENTRY = object()


def _picker(fields: tuple[int, ...]) -> Callable[[tuple[int, ...]], Any]:
    """A function from a collapsed key to the ids of ``fields`` (hashable, cheap)."""
    if not fields:
        return lambda key: ()
    if len(fields) == 1:
        return itemgetter(fields[0])
    return itemgetter(*fields)
