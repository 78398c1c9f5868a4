"""The opt-in compiled model (``--kernel compiled``): load it only if it was built from the sources on disk.

The model's modules can be compiled to C extensions with mypyc (:mod:`keos.checker.kernel`
builds them).  A compiled module that shadows an edited source would run the *old* rules
silently -- the worst failure for a specification tool -- so the build is keyed by a hash of
**every** ``.py`` file under ``model/`` (compiled or not: mypyc may inline what it learnt from
a module it did not compile), and this loader checks that key against the sources on disk
every time a process starts with the compiled model requested:

* the environment variable ``KEOS_COMPILED_MODEL`` names a build directory (set by the CLI for
  its own re-executed process, never needed by hand);
* the directory's ``manifest.json`` must name the hash of the current sources, this Python's
  version and extension suffix; otherwise nothing is loaded and one line on stderr says the
  interpreted model runs;
* then a finder serves exactly the modules the manifest lists (and mypyc's shared library)
  from the build; every other module loads from source as usual.

Under a tracer (``coverage run``, a debugger) or with ``coverage`` imported the compiled model
is refused as well: source-level tools must see the source run.

This module uses the standard library only and is imported by ``keos/__init__.py`` before any
model module, so the choice is made once per process.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

__all__ = ["ENV", "MANIFEST", "install", "loaded", "model_root", "source_hash"]

ENV = "KEOS_COMPILED_MODEL"
MANIFEST = "manifest.json"
#: Modules served from the build in this process (filled by :func:`install`).
_SERVED: dict[str, str] = {}


def model_root() -> Path:
    """The directory of the model's sources (``keos/model`` resolves to the repository's ``model/``)."""
    return (Path(__file__).resolve().parent / "model").resolve()


def source_hash(root: Path | None = None) -> str:
    """sha256 over every ``.py`` under ``root`` (default: the model), by relative path and content, plus
    the Python version and extension suffix: any edit anywhere in the model changes it."""
    root = model_root() if root is None else root
    h = hashlib.sha256()
    h.update(f"python {sys.version}\n{importlib.machinery.EXTENSION_SUFFIXES[0]}\n".encode())
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the compiled modules listed in a verified manifest, nothing else."""

    def __init__(self, files: dict[str, str]) -> None:
        self._files = files

    def find_spec(self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
                  ) -> importlib.machinery.ModuleSpec | None:
        file = self._files.get(fullname)
        if file is None:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, file)
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def _refuse(why: str) -> bool:
    print(f"keos: compiled model not used ({why}); running the interpreted model", file=sys.stderr)
    return False


def install(build_dir: str | os.PathLike[str], root: Path | None = None) -> bool:
    """Serve the compiled model from ``build_dir`` if it matches the sources under ``root``; say why not on stderr.

    Returns whether the finder was installed.  Must run before any ``keos.model`` module is imported.
    """
    if sys.gettrace() is not None or "coverage" in sys.modules:
        return _refuse("a tracer or coverage is active: source-level tools run the source")
    build = Path(build_dir)
    try:
        manifest = json.loads((build / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        return _refuse(f"no valid {MANIFEST} in {build}: {exc}")
    current = source_hash(root)
    if manifest.get("source_hash") != current:
        return _refuse(f"the build in {build} is stale: the model's sources changed since it was built")
    modules = manifest.get("modules")
    if not isinstance(modules, dict) or not modules:
        return _refuse(f"{build / MANIFEST} lists no modules")
    files = {name: str(build / rel) for name, rel in modules.items()}
    missing = [f for f in files.values() if not Path(f).is_file()]
    if missing:
        return _refuse(f"the build in {build} is incomplete ({missing[0]} missing)")
    already = sorted(n for n in files if n in sys.modules)
    if already:
        return _refuse(f"{already[0]} was imported before the compiled model could be installed")
    sys.meta_path.insert(0, _Finder(files))
    _SERVED.update(files)
    return True


def loaded() -> list[str]:
    """The ``keos.model`` modules this process runs compiled (imported and loaded from the build)."""
    return sorted(n for n in _SERVED if n.startswith("keos.") and n in sys.modules
                  and getattr(sys.modules[n], "__file__", "") == _SERVED[n])
