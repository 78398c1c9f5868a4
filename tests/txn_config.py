"""The transaction coordinator's settings for handler tests: Kafka's (the default protocol flags), with overrides."""

from __future__ import annotations

from typing import Any

from keos.model.coordinator.transaction.transaction_coordinator import (
    SHORT_MAX_VALUE,
    CoordinatorConfig,
    coordinator_config,
)
from keos.model.variants import ProtocolFlags


def kafka_cc(**overrides: Any) -> CoordinatorConfig:
    """``coordinator_config`` of the default flags (Kafka 4.0, TV2), with ``overrides`` of its fields."""
    return coordinator_config(ProtocolFlags(), SHORT_MAX_VALUE)._replace(**overrides)
