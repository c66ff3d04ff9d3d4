"""Packaging configuration: what wheels are built for, what the wheel declares (entry points, dependencies)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_cibuildwheel_builds_manylinux_x86_64_and_aarch64_only() -> None:
    exe = shutil.which("cibuildwheel", path=os.path.dirname(sys.executable)) or shutil.which("cibuildwheel")
    if exe is None:
        pytest.skip("cibuildwheel not installed (pip install cibuildwheel)")
    proc = subprocess.run([exe, "--print-build-identifiers", "--platform", "linux", str(ROOT)],
                          capture_output=True, text=True, check=False, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    ids = set(proc.stdout.split())
    want = {f"cp3{m}-manylinux_{a}" for m in (11, 12, 13) for a in ("x86_64", "aarch64")}
    assert ids == want


def test_no_free_threading_declared() -> None:
    """Free-threaded CPython is neither built nor declared until it is tested."""
    cfg = PYPROJECT["tool"]["cibuildwheel"]
    assert "cpython-freethreading" not in cfg.get("enable", [])
    classifiers = PYPROJECT["project"].get("classifiers", [])
    assert not any("Free Threading" in c for c in classifiers)


def test_wheel_declares_plugin_and_dependencies() -> None:
    proj = PYPROJECT["project"]
    assert proj["entry-points"]["pytest11"] == {"cuentry": "cuentry.pytest_plugin"}
    assert proj["scripts"]["cuentry"] == "cuentry.cli:entry"
    assert any(d.startswith("cuda-pathfinder") for d in proj["dependencies"])
    assert {"docs", "test", "gen"} <= set(proj["optional-dependencies"])
    assert any(d.startswith("mkdocs") for d in proj["optional-dependencies"]["docs"])


def test_wheels_workflow_uses_the_pyproject_configuration() -> None:
    yaml = pytest.importorskip("yaml")
    wf = yaml.safe_load((ROOT / ".github" / "workflows" / "wheels.yml").read_text())
    steps = wf["jobs"]["wheels"]["steps"]
    assert any(s.get("uses", "").startswith("pypa/cibuildwheel@") for s in steps)
    assert set(wf["jobs"]["wheels"]["strategy"]["matrix"]["os"]) == {"ubuntu-24.04", "ubuntu-24.04-arm"}


def test_the_call_extension_c_lives_in_a_template_file_shipped_as_package_data() -> None:
    """Issue 23.4: the extension's C is a real file beside its generator, not a Python string, and it ships."""
    import ast

    from cuentry.calls import _fastgen

    calls = ROOT / "src" / "cuentry" / "calls"
    template = calls / _fastgen.TEMPLATE
    assert template.is_file() and "PyInit__fastcall" in template.read_text()
    assert "@CASES@" in _fastgen.template() and "@SHAPES@" in _fastgen.template()
    tree = ast.parse((calls / "_fastgen.py").read_text())
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert not any("#include" in s or "PyObject" in s for s in strings), "C source held in a Python string"
    src = _fastgen.source([("int",), ("void *", "size_t")])
    assert "case 1: *rc = ((int (*)(void *, size_t))fn)" in src
    wheel = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["src/cuentry"] and "exclude" not in wheel  # every file of the package ships
    assert "_fastcall.c.in" not in (ROOT / ".gitignore").read_text()
