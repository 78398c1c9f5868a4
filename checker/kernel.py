"""``--kernel compiled``: the model's modules compiled with mypyc, built once per source hash, never stale.

About 60 % of the explicit search's time is spent in the model's own ``actions``/``step``
functions (issue 17's and issue 27's profiles), so compiling them is the one lever on the
search's speed that leaves the model's source -- the specification -- as it is.  It is
**opt-in** (``keos explore|check|bench --kernel compiled``); the default is the interpreted
model, and source-level tools (coverage, mutation) never run compiled code.

How a run gets the compiled model, and why it can never run stale compiled code:

1. the source hash (:func:`keos._compiled_model.source_hash`) covers every ``.py`` under
   ``model/`` plus the Python version, so an edit anywhere in the model names a new build;
2. a missing build is made here: the model's sources are copied to a temporary directory,
   the hash is taken **of the copy**, mypyc compiles the copy, and the extensions and a
   ``manifest.json`` (hash, module → file) are moved into ``<cache>/<hash>/`` in one rename.
   The cache is ``$KEOS_CACHE_DIR`` or ``$XDG_CACHE_HOME/keos`` or ``~/.cache/keos``;
3. the CLI re-runs itself with ``KEOS_COMPILED_MODEL=<cache>/<hash>``; the new process's
   ``keos/__init__.py`` checks the manifest against the sources **on disk at that moment**
   before any model module is imported, and serves the compiled modules only if they match;
4. any failure (no mypyc, a build error, a stale or incomplete build, a tracer active) prints
   one line on stderr and the interpreted model runs: slower, never wrong.

Not every module is compiled (:data:`EXCLUDED`, with the reason each has); they run
interpreted beside the compiled ones.  Package ``__init__`` modules stay interpreted too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from keos import _compiled_model

__all__ = ["EXCLUDED", "KERNELS", "build", "cache_root", "compiled_modules", "run_compiled"]

KERNELS = ("interpreted", "compiled")

_CONSTANTS = ("a class of plain string constants: compiled, mypyc makes it a native class whose attributes "
              "belong to instances, and reading them off the class does not compile")

_HANDLER_TABLE = ("the system's action table `_HANDLERS: ClassVar[dict] = {\"Send\": _send, ...}` names methods "
                  "in the class body; in a native class they are not names there (KeyError at import)")

#: Model modules left interpreted, and why (mypyc 2.4, found by compiling the whole model).
EXCLUDED: dict[str, str] = {
    "coordinator/transaction/transaction_coordinator.py": "mypyc 2.4 crashes (internal error) on a starred "
                                                          "item inside a tuple display: `x not in (A, *B)`",
    "coordinator/transaction/transit_table.py": "mypyc 2.4 crashes (internal error) on a starred item inside a "
                                                "tuple display: `old.state in (S.ONGOING, S.EMPTY, *_PREPARE_OF)`",
    "systems/transactions_records.py": "TxnFaultBudget.to_json reads the dataclass's defaults off the class "
                                       "(`TxnFaultBudget.append_errors`); compiled, they are instance attributes",
    "interface.py": "Model is a @runtime_checkable Protocol; compiled, it is a native class and typing refuses "
                    "it at import (TypeError)",
    "systems/transactions.py": _HANDLER_TABLE,
    "systems/groups.py": _HANDLER_TABLE,
    "systems/connect.py": _HANDLER_TABLE,
    "codec.py": "record() installs module functions as the records' __eq__/__ne__; a compiled function is a "
                "builtin that does not bind self (TypeError: missing argument 'other')",
    "protocol/errors.py": f"Errors is {_CONSTANTS}",
    "coordinator/transaction/transaction_state.py": f"TransactionState is {_CONSTANTS}",
    "connect/worker.py": f"TaskPhase and WorkerStatus are {_CONSTANTS}",
    "systems/eos.py": f"OffsetsPhase is {_CONSTANTS}",
    "clients/transactional_producer.py": f"ErrorClass and ClientState are {_CONSTANTS}",
    "security/authorizer.py": f"Operation and ResourceType are {_CONSTANTS}",
    "memo.py": "_IdentityMemo copies the wrapped function's __doc__ and __name__ onto itself; compiled, it is a "
               "native class whose __doc__ is read-only (AttributeError at import: every compiled run crashed)",
}


def cache_root() -> Path:
    """Where builds are kept: ``$KEOS_CACHE_DIR``, else ``$XDG_CACHE_HOME/keos``, else ``~/.cache/keos``."""
    if os.environ.get("KEOS_CACHE_DIR"):
        return Path(os.environ["KEOS_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "keos"


def compiled_modules(root: Path) -> list[Path]:
    """The model's sources mypyc compiles (relative to ``root``): all but packages and :data:`EXCLUDED`."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if "__pycache__" in rel.parts or rel.name == "__init__.py" or rel.as_posix() in EXCLUDED:
            continue
        out.append(rel)
    return out


def _say(message: str) -> None:
    print(f"keos: {message}", file=sys.stderr, flush=True)


def build(root: Path | None = None, cache: Path | None = None, timeout_s: float = 3600) -> Path | None:
    """The build directory of the compiled model for the sources under ``root``, built if missing.

    ``None`` (with the reason on stderr) if it cannot be built; the caller runs interpreted.
    """
    root = _compiled_model.model_root() if root is None else root
    cache = cache_root() if cache is None else cache
    try:
        import mypyc  # noqa: F401
    except ImportError:
        _say("--kernel compiled needs mypyc (pip install mypy); running the interpreted model")
        return None
    digest = _compiled_model.source_hash(root)
    target = cache / "compiled-model" / _build_key(digest)
    if (target / _compiled_model.MANIFEST).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=target.parent))
    try:
        src = work / "src"
        shutil.copytree(root, src / "keos" / "model", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        (src / "keos" / "__init__.py").write_text("")
        (src / "keos" / "py.typed").write_text("")
        copy = src / "keos" / "model"
        digest = _compiled_model.source_hash(copy)  # of what is compiled, whatever changes meanwhile
        target = cache / "compiled-model" / _build_key(digest)
        files = [str(Path("keos/model") / rel) for rel in compiled_modules(copy)]
        _say(f"building the compiled model with mypyc ({len(files)} modules, once per model source hash; "
             f"minutes) into {target}")
        started = time.monotonic()
        env = dict(os.environ, MYPYC_OPT_LEVEL=os.environ.get("MYPYC_OPT_LEVEL", "2"))
        done = subprocess.run([sys.executable, "-m", "mypyc", *files], cwd=src, env=env, capture_output=True,
                              text=True, timeout=timeout_s)
        if done.returncode != 0:
            # kept beside the builds (the work directory is removed below): mypyc stops at the first error
            log = target.parent / "failed-build.log"
            log.write_text(done.stdout + done.stderr)
            last = [line for line in (done.stdout + done.stderr).splitlines() if "error" in line][:1]
            _say(f"the mypyc build failed ({last[0] if last else 'exit ' + str(done.returncode)}; log "
                 f"{log}); running the interpreted model")
            return None
        out = work / "out"
        out.mkdir()
        modules: dict[str, str] = {}
        for ext in src.rglob("*" + _ext_suffix()):
            rel = ext.relative_to(src)
            if rel.parts[0] == "build":  # setuptools' staging copies; mypyc also put each one in place
                continue
            name = ".".join(rel.parts[:-1] + (ext.name[: -len(_ext_suffix())],))
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(ext), out / rel)
            modules[name] = rel.as_posix()
        manifest = {"source_hash": digest, "python": sys.version, "modules": modules,
                    "excluded": EXCLUDED, "build_seconds": round(time.monotonic() - started, 1)}
        (out / _compiled_model.MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
        try:
            out.rename(target)
        except OSError:
            if not (target / _compiled_model.MANIFEST).is_file():  # not a concurrent build that won the race
                raise
        _say(f"compiled model built in {manifest['build_seconds']} s")
        return target
    except (OSError, subprocess.TimeoutExpired) as exc:
        _say(f"the mypyc build failed ({exc}); running the interpreted model")
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _build_key(source_hash: str) -> str:
    """The build directory's name: the model's source hash and how it is compiled (mypyc, exclusions, level)."""
    import hashlib

    from mypy.version import __version__ as mypy_version

    config = json.dumps([source_hash, mypy_version, sorted(EXCLUDED), os.environ.get("MYPYC_OPT_LEVEL", "2")])
    return hashlib.sha256(config.encode()).hexdigest()[:32]


def _ext_suffix() -> str:
    import importlib.machinery

    return importlib.machinery.EXTENSION_SUFFIXES[0]


def run_compiled(argv: list[str], replace_process: bool) -> int | None:
    """For ``--kernel compiled``: re-run this command with the compiled model; its exit code.

    ``None`` means "go on in this process": either this process is the re-run (the loader in
    ``keos/__init__.py`` already served or refused the build), or no build could be had (the
    reason is on stderr) and the interpreted model runs.  ``replace_process`` re-runs by
    ``exec`` (the ``keos`` command: no second interpreter's start-up in the CPU figures);
    otherwise in a child process (``main(argv)`` called from Python).
    """
    if os.environ.get(_compiled_model.ENV):
        served = _compiled_model.loaded()
        if served:
            _say(f"running the compiled model ({len(served)} modules from {os.environ[_compiled_model.ENV]})")
        return None
    target = build()
    if target is None:
        return None
    env = dict(os.environ, **{_compiled_model.ENV: str(target)})
    command = [sys.executable, "-m", "keos", *argv]
    sys.stdout.flush()
    sys.stderr.flush()
    if replace_process:
        os.execve(sys.executable, command, env)
    return subprocess.run(command, env=env).returncode
