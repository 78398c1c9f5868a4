"""Request and response records exchanged over the modelled network.

Each record is an immutable, registered ``NamedTuple`` so it can sit inside a
state, be compared, and appear in a JSON trace.  Field names follow Kafka's
protocol schemas (``ProduceRequest.json``: ``producerId``, ``producerEpoch``,
``baseSequence``) in snake case.

``connection`` is the client's connection incarnation to the broker: Kafka
closes a connection when a request times out (``NetworkClient`` disconnects the
node), and every request still in flight on it fails.  Responses written to a
closed connection are lost; the model lets them be delivered and the client
drops any response whose connection is not its current one.
"""

from __future__ import annotations

from typing import NamedTuple

from model.codec import record

__all__ = ["ProduceRequest", "ProduceResponse"]


@record
class ProduceRequest(NamedTuple):
    """A produce request carrying one record batch for one partition (KIP-98 §5)."""

    producer: int
    connection: int
    partition: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: tuple[int, ...]
    transactional: bool = False


@record
class ProduceResponse(NamedTuple):
    """The partition leader's answer: an error code and the batch's base offset."""

    producer: int
    connection: int
    partition: int
    producer_epoch: int
    base_sequence: int
    error: str
    base_offset: int
