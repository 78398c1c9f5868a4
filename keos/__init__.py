"""keos: an executable model of Apache Kafka's exactly-once semantics, and a verifier built on it.

The repository's folders are the parts of the import name ``keos``:

* :mod:`keos.model` -- Kafka's components as pure state machines, and :mod:`keos.model.interface`,
  the one thing engines see;
* :mod:`keos.invariants` -- the named properties;
* :mod:`keos.scenarios` -- bounded configurations, built-in and user-written;
* :mod:`keos.checker` -- the engines, traces and the Python API (:mod:`keos.checker.api`);
* :mod:`keos.reports` -- the renderers.

The functions of the Python API are importable from here (``keos.check(...)``); they are loaded on
first use, so ``import keos.model`` stays light (a Spark executor imports only what it runs).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# ``--kernel compiled`` (keos/_compiled_model.py): the CLI re-runs itself with this variable naming a
# build of the model; it is served only if it was built from the sources on disk, before any model import.
if os.environ.get("KEOS_COMPILED_MODEL"):
    from keos import _compiled_model

    _compiled_model.install(os.environ["KEOS_COMPILED_MODEL"])

__all__ = ["check", "explore", "list_scenarios", "load_scenario", "mutants", "replay"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("keos.checker.api"), name)
    raise AttributeError(f"module 'keos' has no attribute {name!r}")
