"""Test-suite set-up for parallel runs (``pytest -n auto --dist loadgroup``, as ``scripts/test.sh`` does).

Tests marked ``spark`` start a Spark session (a JVM) or a standalone cluster.  They are put in one xdist
group, so they run on one worker one after another: the session of ``local[2]`` started by the first is
reused by the next (``spark_session`` returns the active one), and two JVMs never compete for the cores
and memory of a small machine.  Every other test is spread over the workers; tests write only under
``tmp_path`` and bind only free ports, so they are independent of each other.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))
