"""Hypothesis stateful testing driven by the model."""
