"""Exhaustive explicit-state search (breadth-first, within bounds)."""
