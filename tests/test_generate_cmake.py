"""cuentry's CMake package: `python -m cuentry --cmake-dir`, find_package(cuentry), cuentry_generate().

Builds examples/cmake (a copy) with the system cmake (skipped where cmake is absent), runs the program on
the fake driver, and checks that a manifest edit regenerates the header on the next build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cuentry.cli import cmake_dir, main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

pytestmark = [pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed"),
              pytest.mark.skipif(os.environ.get("CUENTRY_BACKEND") == "pure",
                                 reason="does not use the call backend: runs in the default pass")]


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300, **kw)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_cmake_dir_holds_the_package(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", "--cmake-dir"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == cmake_dir()
    assert (Path(printed) / "cuentryConfig.cmake").is_file()
    out = _run([sys.executable, "-m", "cuentry", "--cmake-dir"]).stdout.strip()
    assert out == printed


def test_example_project_builds_runs_and_regenerates(tmp_path: Path, fake: dict[str, str]) -> None:
    src = tmp_path / "examples"
    shutil.copytree(EXAMPLES / "c", src / "c")
    shutil.copytree(EXAMPLES / "cmake", src / "cmake")
    build = tmp_path / "build"
    cmake = shutil.which("cmake")
    assert cmake is not None
    _run([cmake, "-S", str(src / "cmake"), "-B", str(build), f"-DPython3_EXECUTABLE={sys.executable}"])
    _run([cmake, "--build", str(build)])
    header = build / "cuentry" / "add_one" / "kern.h"
    assert "struct kern_table {" in header.read_text()
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    proc = subprocess.run([str(build / "add_one")], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 1 and "driver 13000, minimum 11000" in proc.stdout, proc.stdout + proc.stderr
    # A manifest edit: the next build regenerates the header (and nothing needs re-configuring).
    before = header.stat().st_mtime_ns
    time.sleep(1.1)
    manifest = src / "c" / "kern.toml"
    manifest.write_text(manifest.read_text().replace('"cuFuncGetName@12030",', '"cuFuncGetName@12030", "cuCtxGetDevice@2000",'))
    again = _run([cmake, "--build", str(build)])
    assert "generating kern.h" in again.stdout
    assert header.stat().st_mtime_ns > before and "pfn_cuCtxGetDevice;" in header.read_text()
    assert "generating" not in _run([cmake, "--build", str(build)]).stdout      # up to date: nothing regenerated
