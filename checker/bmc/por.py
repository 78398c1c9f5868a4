"""Partial-order reduction for the bmc engine: a canonical order for adjacent actions that can be swapped.

Bounded model checking asks whether a bad state is reachable in exactly ``t``
steps.  Many action sequences reach the same state: the application's
``Send`` can happen at any point before its batch is drained, two producers'
steps interleave freely, the broker answering a request and a client
handling an older response commute.  The solver has to refute every one of
these orders.  This module names pairs of adjacent actions ``a`` then ``b``
that can always be replaced by ``b`` then ``a``:

    (*) from every state where ``a`` then ``b`` is executable, ``b`` then
        ``a`` is executable too and ends in an equivalent state,

and the engine forbids ``a`` immediately followed by ``b`` whenever ``b``
comes first in the alphabet (:attr:`Encoding.templates` order).

Why this is sound for invariants.  Take any executable sequence of length
``t`` ending in a bad state.  While it contains a forbidden adjacent pair,
swap it: by (*) the sequence stays executable, keeps its length and ends in an
equivalent state (the invariants read the producers, the logs and the ghost
history, never the network, so an equivalent state is bad exactly when the
original is).  Each swap removes one inversion of the alphabet order, so this
stops, at a sequence the reduced encoding admits.  Hence a violation is
reachable in ``t`` steps with the reduction iff it is without it; shortest
counterexamples keep their length.  Event labels are properties of steps,
not of states, so the engine searches events *without* the reduction.

Equivalence of states: equal, except that the network may interleave
*different* channels ``(src, dst, connection)`` differently.  Every
operation of :mod:`model.network` and every use in :mod:`model.systems.idempotence`
depends only on each channel's own sequence (the head of a channel, the
first occurrence of an envelope, which is in its channel, resetting or
filtering whole channels, a duplicate inserted right behind its original),
so equivalent states have the same futures.  The encoding keeps the same
per-channel order (its ``order`` key is compared within a channel only).

The pairs (``a`` first, ``b`` second, ``b`` earlier in the alphabet), each
argued from the handlers in :mod:`model.systems.idempotence`; ``tests/test_bmc_por.py``
checks (*) on states reached by breadth-first search of every idempotence
scenario and variant:

1. ``b = Send(i)`` (the application hands over a record; it only appends a
   fresh unsent batch and advances ``next_record``) after any ``a`` except
   ``RestartProducer(i)`` (which would drop the batch) and ``Send(i)``.  A
   fresh batch has no sequence, is not in flight and comes last, so no other
   handler (drain picks an earlier eligible batch first, expiry looks at the
   partition's first batch, timeouts touch in-flight batches, the epoch bump
   re-stamps sequenced batches) sees it differently.
2. ``b = InitProducerId(i)`` (sets ``producer_id``, epoch 0, advances
   ``next_producer_id``) after any ``a`` except ``InitProducerId(j)`` (same
   counter), ``BumpEpoch(i)`` and ``RestartProducer(i)`` (both may clear the
   producer id).  No other handler reads or writes these fields of
   producer ``i`` before ``InitProducerId`` succeeded (drain requires a
   producer id, so ``a`` cannot be a drain of producer ``i``).
3. ``b`` a client step of producer ``i`` (``Send``, ``InitProducerId``,
   ``BumpEpoch``, ``ResolveSequence``, ``SendProduce``) after ``a`` a step
   that touches neither producer ``i`` nor the producer-id counter:
   ``DeliverRequest`` (the broker appends and answers; client state is
   untouched), ``DeliverResponse(j)``, the client steps of producer ``j``
   (except ``InitProducerId`` against ``InitProducerId``), and the faults
   ``DropMessage(j)``, ``RequestTimeout(j)``, ``ExpireBatch(j, *)``,
   ``RestartProducer(j)`` of another producer ``j != i``.  ``b``'s guard
   reads only producer ``i`` (and the counter), ``a`` does not write them,
   ``b`` writes only producer ``i`` (and the counter, and appends to its own
   channel), which ``a`` does not read.
4. ``b = DeliverRequest(q)`` after ``a = DeliverResponse(j)``: the response
   ``a`` consumed was the head of its channel before the request was
   answered and stays the head after (the new response is appended behind
   it); the broker never reads client state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import z3

from keos.checker.bmc.encoding import Template

__all__ = ["CLIENT_STEPS", "por_constraints", "swappable"]

#: Client steps of one producer (first argument = producer index).
CLIENT_STEPS = ("Send", "InitProducerId", "BumpEpoch", "ResolveSequence", "SendProduce")
#: Faults that act on one producer (first argument = producer index).
PRODUCER_FAULTS = ("DropMessage", "RequestTimeout", "ExpireBatch", "RestartProducer")


def _producer(t: Template) -> int | None:
    if t.kind in CLIENT_STEPS or t.kind in PRODUCER_FAULTS or t.kind == "DeliverResponse":
        return t.args[0]
    return None


def swappable(a: Template, b: Template) -> bool:
    """Whether ``a`` then ``b`` can always be replaced by ``b`` then ``a`` (rules 1-4 above)."""
    pa, pb = _producer(a), _producer(b)
    if b.kind == "Send":
        return not (a.kind in ("RestartProducer", "Send") and pa == pb)
    if b.kind == "InitProducerId":
        return not (a.kind == "InitProducerId" or (a.kind in ("BumpEpoch", "RestartProducer") and pa == pb))
    if b.kind in CLIENT_STEPS:
        if a.kind == "DeliverRequest":
            return True
        if pa is None or pa == pb:
            return False
        if a.kind == "InitProducerId" and b.kind == "InitProducerId":
            return False
        return a.kind in CLIENT_STEPS or a.kind == "DeliverResponse" or a.kind in PRODUCER_FAULTS
    if b.kind == "DeliverRequest":
        return a.kind == "DeliverResponse"
    return False


def por_constraints(templates: Sequence[Template], k_prev: Any, k_next: Any) -> list[Any]:
    """Constraints forbidding ``templates[A]`` at one step followed by ``templates[B]``, ``B < A`` swappable."""
    out = []
    for ia, a in enumerate(templates):
        banned = [ib for ib in range(ia) if swappable(a, templates[ib])]
        if banned:
            out.append(z3.Implies(k_prev == ia, z3.And([k_next != ib for ib in banned])))
    return out
