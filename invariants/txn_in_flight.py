"""``requests_in_flight_per_kafka`` for the transactional producer: its Sender keeps Kafka's in-flight rules too.

A transactional producer's data path is the idempotent producer's (``Sender``, ``RecordAccumulator``,
``NetworkClient``): :mod:`keos.model.systems.transactions` drains its batches with the same
:func:`keos.model.clients.producer.drain`.  The idempotence system judges that bookkeeping
(:func:`keos.invariants.idempotence.in_flight_properties`); without the same judge here, a drain that sends a
batch again while its request is outstanding, or more requests than ``max.in.flight.requests.per.connection``
admits, goes unseen in every transactional scenario -- it only blows the state space up (the sender re-sends
without end), which a mutation run sees as a timeout, not a kill.

The rule, in Kafka's terms (``NetworkClient.InFlightRequests``/``canSendMore``, ``Sender.sendProducerData``,
``RecordAccumulator.drain``/``reenqueue``, Kafka trunk @1eb7644349cb): a request stays in ``InFlightRequests``
from its send until its response is read or its connection closes, and ``canSendMore`` admits at most
``max.in.flight.requests.per.connection`` of them per connection; a batch is re-enqueued only once its request
completed.  So on the producer's live connection

* a batch the client holds but has not marked in flight has no request of its own on the wire, and
* the client's produce requests outstanding -- a request travelling, held back by the partition leader while it
  verifies the transaction (KIP-890: ``AddPartitionsToTxnManager`` keeps the request until the coordinator
  answers, :class:`~keos.model.protocol.messages.VerifyPartitionRequest`/``Response``), parked in a purgatory,
  or its answer on the way back -- number at most ``max_in_flight``.

Judged in faulty runs too (a dropped message closes the connection: the requests of the old connection are no
longer counted, as ``NetworkClient`` forgets them).

``one_txn_request_in_flight`` judges the other half of the Sender, the ``TransactionManager``'s requests to the
transaction coordinator (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn).  They are queued
(``pendingRequests``) and sent one at a time: ``Sender.maybeSendAndPollTransactionalRequest`` only polls while
``transactionManager.hasInFlightRequest()`` (``inFlightRequestCorrelationId``, set on the send, cleared when
the response -- or a disconnect -- completes it; the handler's retry is re-enqueued only then, ``reenqueue``),
apache/kafka trunk @1eb7644349cb, ``clients/.../producer/internals/Sender.java``, ``TransactionManager.java``.
So on the client's live coordinator connection at most one such request is outstanding: travelling, held by
the coordinator while its ``__transaction_state`` append is in flight (its ``TxnLogAppend`` names the request
and the client to answer), or answered on the way back.  The users' promise this keeps: the client's
transactional calls happen in order (no EndTxn overtakes the AddPartitionsToTxn of a record the application
sent, no second InitProducerId races the first); a client whose bookkeeping of the outstanding request is lost
re-sends without end, which without this judge a search sees only as a blown state space, not as a violation.
"""

from __future__ import annotations

from typing import Any

from keos.invariants._common import no_findings, sometimes_state
from keos.model.clients.producer import record_label
from keos.model.coordinator.transaction.transaction_coordinator import TxnLogAppend
from keos.model.interface import Property
from keos.model.protocol.messages import (
    ProduceRequest,
    ProduceResponse,
    VerifyPartitionRequest,
    VerifyPartitionResponse,
)
from keos.model.systems.transactions import COORDINATOR, TXN_LOG

__all__ = ["txn_in_flight_findings", "txn_in_flight_properties", "txn_request_findings"]


def _produce_by_client(network: Any) -> dict[str, list[Any]]:
    """Per client name, in network order, the produce requests and responses on the wire (a request is its
    sender's, a response its receiver's, a verification the client's it names) -- one pass over the network for
    every client: the judges run in nearly every state a search reaches (the network changes in nearly every
    step), so a pass per client was most of ``reach_txn_tv1_zombie``'s invariant time."""
    out: dict[str, list[Any]] = {}
    for env in network:
        body = env.body
        if isinstance(body, ProduceRequest):
            me = env.src
        elif isinstance(body, ProduceResponse):
            me = env.dst
        elif isinstance(body, (VerifyPartitionRequest, VerifyPartitionResponse)):
            me, body = body.client, body.produce
        else:
            continue
        out.setdefault(me, []).append(body)
    return out


def txn_in_flight_findings(s: Any, max_in_flight: int) -> list[str]:
    """What breaks the in-flight rules (module docstring) on each transactional client's live produce connection."""
    out: list[str] = []
    on_wire = _produce_by_client(s.network)
    for i, c in enumerate(s.clients):
        p = c.data
        waiting = {r for b in p.batches if not b.in_flight for r in b.records}
        requests: set[int] = {
            r.correlation_id
            for ld in s.partitions
            for r in ld.pending
            if r.producer == i and r.connection == p.connection
        }
        for body in on_wire.get(f"p{i}", ()):
            if body.connection != p.connection:
                continue
            requests.add(body.correlation_id)
            if isinstance(body, ProduceRequest):
                held = waiting.intersection(body.records)
                if held:
                    out.append(
                        f"client {i} holds {','.join(record_label(r) for r in sorted(held))} for a retry or a first "
                        f"send while its request is outstanding on connection {p.connection}"
                    )
        if len(requests) > max_in_flight:
            out.append(
                f"client {i} has {len(requests)} produce requests in flight on connection {p.connection} with "
                f"max.in.flight.requests.per.connection={max_in_flight}"
            )
    return out


def _coordinator_requests_by_client(network: Any) -> dict[str, list[Any]]:
    """Per client name, in network order, its transactional requests travelling, answered, or held by the
    coordinator while its transaction-log append is in flight (:class:`TxnLogAppend` ``request``/``reply_to``) --
    one pass over the network for every client.  An envelope is a client's the first of three ways that names it:
    sent by it to the coordinator, sent by the coordinator to it, or the coordinator's log append answering it."""
    out: dict[str, list[Any]] = {}
    for env in network:
        ways = []
        if env.dst == COORDINATOR:
            ways.append((env.src, env.body))
        if env.src == COORDINATOR:
            ways.append((env.dst, env.body))
        if env.dst == TXN_LOG and isinstance(env.body, TxnLogAppend):
            ways.append((env.body.reply_to, env.body.request))
        named: set[str] = set()
        for me, body in ways:
            if me not in named:
                named.add(me)
                out.setdefault(me, []).append(body)
    return out


def txn_request_findings(s: Any) -> list[str]:
    """Clients with more than one transactional request outstanding on their live coordinator connection."""
    out: list[str] = []
    on_wire = _coordinator_requests_by_client(s.network)
    for i, c in enumerate(s.clients):
        live = [
            type(body).__name__
            for body in on_wire.get(f"p{i}", ())
            if body is not None and getattr(body, "connection", -1) == c.tc_connection
        ]
        if len(live) > 1:
            out.append(
                f"client {i} has {len(live)} transactional requests outstanding on coordinator connection "
                f"{c.tc_connection} ({', '.join(sorted(live))}): TransactionManager sends one at a time"
            )
    return out


def _txn_request_on_the_wire(s: Any) -> bool:
    return any(
        env.dst == COORDINATOR
        and env.src.startswith("p")
        and env.src[1:].isdigit()
        and int(env.src[1:]) < len(s.clients)
        and env.connection == s.clients[int(env.src[1:])].tc_connection
        for env in s.network
    )


def _request_on_the_wire(s: Any) -> bool:
    return any(
        isinstance(env.body, ProduceRequest)
        and env.src.startswith("p")
        and env.src[1:].isdigit()
        and int(env.src[1:]) < len(s.clients)
        and env.connection == s.clients[int(env.src[1:])].data.connection
        for env in s.network
    )


def txn_in_flight_properties(max_in_flight: int) -> tuple[Property, ...]:
    """``requests_in_flight_per_kafka`` (transactional clients), ``one_txn_request_in_flight`` and their partners."""
    return (
        no_findings(
            name="one_txn_request_in_flight",
            fact="A transactional producer has at most one request to the transaction coordinator outstanding on its "
            "live coordinator connection -- travelling, held while the coordinator's transaction-log append is in "
            "flight, or answered on the way back: the TransactionManager sends its next request (or a retry) only "
            "once the previous one completed or its connection closed.",
            source="``Sender.maybeSendAndPollTransactionalRequest`` (``hasInFlightRequest``), ``TransactionManager`` "
            "(``inFlightRequestCorrelationId``, ``pendingRequests``, ``TxnRequestHandler.reenqueue``), apache/kafka "
            "trunk @1eb7644349cb",
            catches="a client that loses the record of its outstanding coordinator request (a send or a handler that "
            "drops the in-flight mark, a retry enqueued before the answer, a timeout that clears the mark but keeps "
            "the connection) and sends a second request, so transactional calls reorder or race",
            findings=txn_request_findings,
            partners=("txn_coordinator_request_on_the_wire",),
        ),
        sometimes_state(
            "txn_coordinator_request_on_the_wire",
            "A transactional client's request to the transaction coordinator was on its live connection.",
            _txn_request_on_the_wire,
        ),
        no_findings(
            name="requests_in_flight_per_kafka",
            fact="A transactional producer's batch it holds but has not marked in flight has no request on the live "
            "connection (a batch is re-sent only after its request completed or its connection closed), and at "
            "most max.in.flight.requests.per.connection of its produce requests are outstanding there -- "
            "travelling, held back for verification, parked, or answered on the way back.",
            source="``NetworkClient.InFlightRequests``/``canSendMore``, ``Sender.sendProducerData``, "
            "``RecordAccumulator.drain``/``reenqueue`` (Kafka trunk @1eb7644349cb); ``ProducerConfig`` docs of "
            "``max.in.flight.requests.per.connection``",
            catches="a transactional client's batch drained again while its request is outstanding, more requests in "
            "flight than the configuration admits (RecordAccumulator.drain / NetworkClient.canSendMore defects)",
            findings=lambda s: txn_in_flight_findings(s, max_in_flight),
            partners=("txn_produce_request_on_the_wire",),
        ),
        sometimes_state(
            "txn_produce_request_on_the_wire",
            "A transactional client's produce request was on its live connection.",
            _request_on_the_wire,
        ),
    )
