"""Kafka's clients: the idempotent and transactional producer, ``ProducerConfig``, what a consumer reads.

Kafka's ``Sender`` and ``TransactionManager`` (``clients/src/main/java/org/apache/kafka/clients/producer``).
"""
