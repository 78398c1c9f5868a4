"""Kafka's coordinators: the transaction coordinator and the group coordinator."""
