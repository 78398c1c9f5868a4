"""Reach and kill power of the gate (issue 23): ``keos coverage`` and ``keos mutate``.

* :mod:`keos.checker.reach.branches` -- branch coverage of ``model/`` and ``invariants/`` by the
  scenarios' explicit searches, measured by coverage.py with one dynamic context per scenario;
* :mod:`keos.checker.reach.mutators` -- single-point source mutations of ``model/`` (an AST mutator,
  standard library only, so a mutant's worker process can use it before it imports the model);
* :mod:`keos.checker.reach.mutation` -- evaluating mutants in fresh processes (local or on Spark);
* :mod:`keos.checker.reach.worker` -- the process that serves one mutated module through an import
  hook and runs the explicit search on the scenarios that reach the mutated line.

This package's ``__init__`` imports nothing: a mutant's worker imports ``keos.checker.reach.worker``
before any of ``keos.model``, so that its import hook is in place first.
"""
