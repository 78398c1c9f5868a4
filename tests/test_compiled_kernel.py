"""``--kernel compiled`` (checker/kernel.py, keos/_compiled_model.py): a stale build is never run.

The guarantee under test: compiled model code runs only if it was built from exactly the model
sources on disk when the process starts; otherwise one line on stderr says so and the
interpreted model runs with the same results.  The fast tests drive the loader with
hand-made manifests; ``test_real_build_served_then_refused_after_an_edit`` builds a one-module
model with mypyc for real (about half a minute) and edits it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from keos import _compiled_model
from keos.checker import kernel
from keos.checker.cli.main import main

ROOT = Path(__file__).resolve().parent.parent


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(_compiled_model.ENV, None)
    env.update(extra)
    return env


def test_source_hash_changes_with_any_model_file(tmp_path: Path) -> None:
    copy = tmp_path / "model"
    shutil.copytree(_compiled_model.model_root(), copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = _compiled_model.source_hash(copy)
    assert before == _compiled_model.source_hash(_compiled_model.model_root())
    # an edit in a module kernel.EXCLUDED keeps interpreted still names a new build
    target = copy / "protocol" / "errors.py"
    target.write_text(target.read_text() + "\n# edited\n")
    assert _compiled_model.source_hash(copy) != before


def _manifest(build: Path, digest: str, modules: dict[str, str]) -> None:
    build.mkdir(parents=True, exist_ok=True)
    (build / _compiled_model.MANIFEST).write_text(json.dumps({"source_hash": digest, "modules": modules}))


def test_stale_manifest_is_refused_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fake.so").write_text("not a real extension")
    _manifest(tmp_path, "0" * 64, {"keos_fake_compiled": "fake.so"})
    hooks = list(sys.meta_path)
    assert _compiled_model.install(tmp_path) is False
    assert sys.meta_path == hooks
    assert "stale" in capsys.readouterr().err


def test_matching_manifest_serves_exactly_its_modules(tmp_path: Path) -> None:
    (tmp_path / "fake.so").write_text("")
    _manifest(tmp_path, _compiled_model.source_hash(), {"keos_fake_compiled": "fake.so"})
    hooks = list(sys.meta_path)
    try:
        assert _compiled_model.install(tmp_path) is True
        finder = sys.meta_path[0]
        spec = finder.find_spec("keos_fake_compiled")
        assert spec is not None and spec.origin == str(tmp_path / "fake.so")
        assert finder.find_spec("keos.model.network") is None  # not listed: loaded from source
    finally:
        sys.meta_path[:] = hooks
        _compiled_model._SERVED.clear()


def test_incomplete_build_and_tracer_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _manifest(tmp_path, _compiled_model.source_hash(), {"keos_fake_compiled": "missing.so"})
    assert _compiled_model.install(tmp_path) is False
    assert "incomplete" in capsys.readouterr().err
    (tmp_path / "missing.so").write_text("")
    old = sys.gettrace()
    sys.settrace(lambda *a: None)
    try:
        assert _compiled_model.install(tmp_path) is False
    finally:
        sys.settrace(old)
    assert "tracer" in capsys.readouterr().err


def test_cli_with_a_stale_build_runs_interpreted_with_the_same_result(tmp_path: Path) -> None:
    """The re-run process (KEOS_COMPILED_MODEL set, as run_compiled sets it) refuses a stale build."""
    _manifest(tmp_path, "f" * 64, {"keos.model.network": "network.so"})
    (tmp_path / "network.so").write_text("")
    argv = [sys.executable, "-m", "keos", "explore", "--scenario", "idempotence_retry", "--json"]
    plain = subprocess.run(argv, env=_env(), capture_output=True, text=True, timeout=300)
    stale = subprocess.run([*argv, "--kernel", "compiled"], env=_env(**{_compiled_model.ENV: str(tmp_path)}),
                           capture_output=True, text=True, timeout=300)
    assert plain.returncode == stale.returncode == 0
    assert "compiled model not used" in stale.stderr and "stale" in stale.stderr
    assert "running the compiled model" not in stale.stderr
    a, b = json.loads(plain.stdout), json.loads(stale.stdout)
    assert a["stats"]["distinct_states"] == b["stats"]["distinct_states"]
    assert [p["verdict"] for p in a["properties"]] == [p["verdict"] for p in b["properties"]]


def test_bad_kernel_flag_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--scenario", "idempotence_retry", "--kernel", "turbo"]) == 2
    assert "--kernel" in capsys.readouterr().err


def test_excluded_modules_exist_and_are_not_compiled() -> None:
    root = _compiled_model.model_root()
    compiled = {p.as_posix() for p in kernel.compiled_modules(root)}
    for rel in kernel.EXCLUDED:
        assert (root / rel).is_file(), rel
        assert rel not in compiled
    assert "log/partition.py" in compiled and "network.py" in compiled


@pytest.mark.slow
def test_real_build_served_then_refused_after_an_edit(tmp_path: Path) -> None:
    """mypyc builds a one-module model; the module is served compiled, then refused once its source changes."""
    pytest.importorskip("mypyc")
    root = tmp_path / "model"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "fastpath.py").write_text(textwrap.dedent("""
        def rule(x: int) -> int:
            return x + 1
    """))
    built = kernel.build(root=root, cache=tmp_path / "cache", timeout_s=900)
    assert built is not None
    manifest = json.loads((built / _compiled_model.MANIFEST).read_text())
    assert "keos.model.fastpath" in manifest["modules"]
    probe = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from keos import _compiled_model
        ok = _compiled_model.install({str(built)!r}, root=Path({str(root)!r}))
        import keos.model.fastpath as m
        print(ok, m.__file__.endswith('.py'), m.rule(1))
    """)
    first = subprocess.run([sys.executable, "-c", probe], env=_env(), capture_output=True, text=True, timeout=120)
    assert first.stdout.split() == ["True", "False", "2"], first.stderr
    (root / "fastpath.py").write_text("def rule(x: int) -> int:\n    return x + 2\n")
    # the compiled module would still answer 2; the edited source must win
    from_source = f"sys.path.insert(0, {str(root)!r})\nimport fastpath as m"
    second = subprocess.run([sys.executable, "-c", probe.replace("import keos.model.fastpath as m", from_source)],
                            env=_env(), capture_output=True, text=True, timeout=120)
    assert second.stdout.split() == ["False", "True", "3"], second.stderr
    assert "stale" in second.stderr


@pytest.mark.slow
def test_failed_build_says_so_and_keeps_its_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model mypyc cannot compile runs interpreted, and the line on stderr names a log that still exists
    (session 32: the build had failed on main since two modules were added, and the log was deleted)."""
    pytest.importorskip("mypyc")
    root = tmp_path / "model"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "broken.py").write_text('def rule(x: int) -> int:\n    return "not an int"\n')
    assert kernel.build(root=root, cache=tmp_path / "cache", timeout_s=900) is None
    said = capsys.readouterr().err
    assert "the mypyc build failed" in said and "running the interpreted model" in said
    log = Path(said.split("; log ")[1].split(")")[0])
    assert log.is_file() and "broken.py" in log.read_text()
