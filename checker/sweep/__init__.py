"""Randomized failure-injection sweeps fanned out with PySpark."""
