"""Composed systems: the components wired together into one ``Model`` (model/interface.py) an engine can explore."""
