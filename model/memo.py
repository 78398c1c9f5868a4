"""Pure functions of immutable records, cached by the values of their arguments.

An explicit search applies the same handler to the same records over and over: the states it expands differ in
a few fields, and the records a handler reads (a coordinator entry, a client, a request) recur.  Counted on
``reach_eos_partition_returns`` (40,000 states, session 32): ``handle_add_partitions`` ran 32,821 times on 16
distinct argument tuples, ``producer.drain`` 56,270 times on 16, ``sequences_to_resolve`` 70,649 times on 88.
A function wrapped here computes each argument tuple once (``functools.lru_cache``, bounded) and returns the
same result object for equal arguments -- sound because records are immutable tuples and the wrapped functions
read nothing but their arguments and module constants, and return immutable values.  (The model never decides
by an object's identity what a result *is*; the systems compare a field by identity only to skip a judge on a
field a step kept, and a judge of equal values finds nothing new.)

Every cache is emptied by :func:`clear`, which ``scenarios.build_model`` calls: a run's line coverage of the
wrapped functions is its own (``keos coverage`` records per scenario which lines a run executes), and a test
that monkeypatches a helper before it builds its model meets no result an earlier model computed.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar, cast

__all__ = ["clear", "memoised"]

F = TypeVar("F", bound=Callable[..., Any])

_CACHES: list[Any] = []  # no mutate: a cache registry

#: Argument tuples kept per function (a search meets a few dozen to a few thousand; the bound caps memory).
_SIZE = 1 << 14  # no mutate: a cache's size changes no result


def memoised(fn: F, identity: tuple[int, ...] = ()) -> F:  # no mutate: a cache, not a rule of Kafka's
    """``fn`` cached by the values (and, at the top level, the types) of its arguments.

    ``identity``: positions of arguments keyed by the object itself, not its value -- a configuration a system
    passes unchanged to every call (:class:`~keos.model.variants.ProtocolFlags`: 148 fields, hashed anew on every
    call, would cost more than most handlers).  The cache keeps those objects alive, so their ids stay theirs.
    Every argument of such a function is passed by position.
    """
    if not identity:
        cached = lru_cache(maxsize=_SIZE, typed=True)(fn)  # no mutate: a cache's size or typing changes no result
        _CACHES.append(cached)
        return cast(F, cached)
    memo = _IdentityMemo(fn, frozenset(identity))
    _CACHES.append(memo)
    return cast(F, memo)


class _IdentityMemo:
    """:func:`memoised` with some arguments keyed by identity (a plain dict, emptied when full)."""

    def __init__(self, fn: Callable[..., Any], identity: frozenset[int]) -> None:  # no mutate: a cache
        self.__wrapped__ = fn
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self._identity = identity
        self._cache: dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] = {}

    def __call__(self, *args: Any) -> Any:  # no mutate: a cache (tests/test_memo.py judges it)
        key = tuple((type(a), id(a)) if i in self._identity else (type(a), a) for i, a in enumerate(args))
        hit = self._cache.get(key)
        if hit is not None:
            return hit[1]
        result = self.__wrapped__(*args)
        if len(self._cache) >= _SIZE:  # no mutate: a cache's size changes no result
            self._cache.clear()
        self._cache[key] = (args, result)  # the arguments kept: an id in a key names a live object
        return result

    def cache_clear(self) -> None:  # no mutate: a cache
        self._cache.clear()


def clear() -> None:  # no mutate: a cache (tests/test_memo.py judges it)
    """Empty every cache (a new model: see the module docstring)."""
    for cached in _CACHES:
        cached.cache_clear()
