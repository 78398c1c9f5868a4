"""Producer configuration, validated as Kafka's ``ProducerConfig`` validates it.

KIP-98 / KAFKA-5494: idempotence needs ``acks=all`` (so an acknowledged batch
survives a leader change), ``retries > 0`` (or the sequence window never
matters) and ``max.in.flight.requests.per.connection <= 5`` (the broker caches
the metadata of only the last five batches per producer, ``ProducerStateEntry.java``).  Kafka raises
``ConfigException`` for a conflicting explicit setting;
the model raises :class:`ProducerConfigError`, which the CLI turns into a
one-line error with exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass

from keos.model.interface import ModelError

__all__ = ["ACKS", "MAX_IN_FLIGHT_FOR_IDEMPOTENCE", "ProducerConfig", "ProducerConfigError"]

#: ``acks`` values the model knows ("all" is Kafka's -1).
ACKS = ("all", "1", "0")

#: ProducerConfig's upper bound on in-flight requests with idempotence (KAFKA-5494).
MAX_IN_FLIGHT_FOR_IDEMPOTENCE = 5


class ProducerConfigError(ModelError):
    """An invalid producer configuration (Kafka's ``ConfigException``)."""


@dataclass(frozen=True)
class ProducerConfig:
    """The producer settings the model honours.

    Attributes:
        enable_idempotence: ``enable.idempotence``.
        acks: ``acks``: "all", "1" or "0".
        retries: ``retries``: how many times a batch may be re-sent.
        max_in_flight: ``max.in.flight.requests.per.connection``.
        transactional_id: ``transactional.id`` (``None`` for a plain producer).
    """

    enable_idempotence: bool = True
    acks: str = "all"
    retries: int = 3
    max_in_flight: int = 5
    transactional_id: str | None = None

    def validate(self) -> ProducerConfig:
        """Return ``self`` if Kafka would accept it, else raise.

        Each rule is marked ``input``: a scenario Kafka would reject is refused when it loads (exit 2,
        ``tests/test_bad_input.py``), so no search ever runs on one.
        """
        if self.acks not in ACKS:  # input: a scenario Kafka would reject
            raise ProducerConfigError(f"acks must be one of {', '.join(ACKS)}, got {self.acks!r}")
        if self.retries < 0:  # input: a scenario Kafka would reject
            raise ProducerConfigError(f"retries must be >= 0, got {self.retries}")
        if self.max_in_flight < 1:  # input: a scenario Kafka would reject
            raise ProducerConfigError(f"max.in.flight.requests.per.connection must be >= 1, got {self.max_in_flight}")
        if self.transactional_id is not None and not self.enable_idempotence:  # input: a scenario Kafka would reject
            raise ProducerConfigError("transactional.id requires enable.idempotence=true")
        if self.enable_idempotence:
            if self.acks != "all":  # input: a scenario Kafka would reject
                raise ProducerConfigError("enable.idempotence=true requires acks=all")
            if self.retries == 0:  # input: a scenario Kafka would reject
                raise ProducerConfigError("enable.idempotence=true requires retries > 0")
            if self.max_in_flight > MAX_IN_FLIGHT_FOR_IDEMPOTENCE:  # input: a scenario Kafka would reject
                raise ProducerConfigError(
                    "enable.idempotence=true requires max.in.flight.requests.per.connection <= "
                    f"{MAX_IN_FLIGHT_FOR_IDEMPOTENCE}, got {self.max_in_flight}"
                )
        return self
