"""The ``keos`` command line: argument parsing and rendering over :mod:`keos.checker.api`."""
