"""``python -m keos.checker.schemas``: regenerate ``scenario.schema.json`` from the scenario dataclasses."""

from keos.checker.schemas import main

main()
