"""Kafka Connect's exactly-once source support (KIP-618): herder, workers, source tasks, config and offsets topics."""
