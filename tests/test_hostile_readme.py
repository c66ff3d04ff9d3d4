"""Issue 12: the README's examples run verbatim against the fake driver.

Every ```python block of README.md runs in a fresh interpreter with
``CUENTRY_DRIVER`` pointing at the fake driver (the way a user without a GPU
would try it); the documented no-GPU command line runs in a shell.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_examples() -> None:
    assert _blocks("python"), "README.md lost its ```python examples"


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_block_runs_verbatim(fake: dict[str, str], tmp_path: Path, index: int) -> None:
    code = _blocks("python")[index]
    env = {**os.environ, "CUENTRY_DRIVER": fake["full"], "CUENTRY_FAKE_DRIVER_VERSION": "13000",
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120, check=False)
    assert r.returncode == 0, f"README python block {index} failed:\n{code}\n{r.stderr[-3000:]}"


@pytest.mark.skipif(shutil.which("sh") is None, reason="no POSIX shell")
def test_readme_no_gpu_doctor_line_runs(tmp_path: Path) -> None:
    """`cuentry doctor --driver "$(cuentry fake-driver)"`, as the README gives it."""
    text = README.read_text(encoding="utf-8")
    line = 'cuentry doctor --driver "$(cuentry fake-driver)"'
    assert line in text
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "CUENTRY_FAKE_DRIVER_VERSION": "13000"}
    if not (bindir / "cuentry").exists():
        pytest.skip("the cuentry console script is not installed next to this interpreter")
    r = subprocess.run(["sh", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert "cuentry fake driver" in r.stdout and str(tmp_path / "cache") in r.stdout
