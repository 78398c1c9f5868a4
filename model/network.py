"""The network between clients and brokers, as a value.

A message in flight is an :class:`Envelope` (source, destination, connection
incarnation, body).  The network is a tuple of envelopes in send order.

Kafka runs over TCP: requests on one connection reach the broker in the order
they were sent, and responses come back in order.  The model keeps that
guarantee per *channel* ``(src, dst, connection)``: only the oldest envelope of
a channel can be delivered by an ordinary ``Deliver``.  Different channels
interleave freely, which is how a request that was given up on (its connection
closed after a client timeout) can still reach the broker *after* its retry on
a new connection -- the reordering Kafka's sequence numbers exist for.

Faults are separate actions with budgets (``model/system.py``):

* **drop**: TCP never loses one message and delivers the next, so a drop is a
  *connection reset*: the message and everything else in flight on that
  connection, in both directions, is lost, and the client, seeing the socket
  close, retries its in-flight requests on a new connection;
* **duplicate**: a second copy right behind the first;
* **reorder**: only when a scenario gives it a budget -- deliver an envelope
  that is not at the head of its channel, which TCP never does; scenarios use
  it to show which guarantees rest on FIFO connections.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from keos.model.codec import record_compared_as_tuple

__all__ = [
    "Envelope",
    "channel_heads",
    "duplicate",
    "non_heads",
    "remove",
    "reset_connection",
    "send",
    "without",
]


@record_compared_as_tuple
class Envelope(NamedTuple):
    """A message in flight on channel ``(src, dst, connection)``.

    Envelopes are compared as tuples (the network holds nothing else); their bodies, which can be
    any request or response, compare by class as well (:func:`keos.model.codec.record`).
    """

    src: str
    dst: str
    connection: int
    body: Any


Network = tuple[Envelope, ...]


def send(network: Network, envelope: Envelope) -> Network:
    """Append ``envelope`` to the network."""
    return network + (envelope,)


def channel_heads(network: Network) -> list[Envelope]:
    """The envelopes deliverable under FIFO channels, in network order, distinct.

    A search asks this of one network many times in a row (the state's ``actions``, then each
    ``Deliver``/fault step's guard on the same state), so the last answer is kept with the tuple it
    was computed from and served again while the network is that same object (the kept reference
    keeps its identity from being reused).  A fresh list each time: callers may keep or change it.
    """
    global _LAST_HEADS
    last = _LAST_HEADS
    if last[0] is network:
        return list(last[1])
    first: dict[tuple[str, str, int], Envelope] = {}
    for env in network:
        first.setdefault(env[:3], env)  # (src, dst, connection): the first envelope of a channel is its head
    heads = list(first.values())
    _LAST_HEADS = (network, heads)
    return list(heads)


_LAST_HEADS: tuple[Any, list[Envelope]] = (None, [])


def non_heads(network: Network) -> list[Envelope]:
    """Envelopes that are *not* at the head of their channel (reorder candidates)."""
    heads = channel_heads(network)
    out: list[Envelope] = []
    for env in network:
        if env not in heads and env not in out:
            out.append(env)
    return out


def remove(network: Network, envelope: Envelope) -> Network | None:
    """Remove the first occurrence of ``envelope``; ``None`` if absent."""
    try:
        i = network.index(envelope)
    except ValueError:
        return None
    return network[:i] + network[i + 1 :]


def reset_connection(network: Network, envelope: Envelope) -> Network | None:
    """Lose every envelope of ``envelope``'s connection, both directions; ``None`` if absent."""
    if envelope not in network:  # input: an envelope not in flight (a hand-edited trace for keos replay)
        return None
    ends = {envelope.src, envelope.dst}
    return tuple(e for e in network if not ({e.src, e.dst} == ends and e.connection == envelope.connection))


def duplicate(network: Network, envelope: Envelope) -> Network | None:
    """Insert a copy of ``envelope`` right after it; ``None`` if absent."""
    try:
        i = network.index(envelope)
    except ValueError:
        return None
    return network[: i + 1] + (envelope,) + network[i + 1 :]


def without(network: Network, predicate: Any) -> Network:
    """The network minus every envelope for which ``predicate(env)`` is true."""
    return tuple(env for env in network if not predicate(env))
