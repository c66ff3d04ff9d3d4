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


_STATIC_PROJECT = """cmake_minimum_required(VERSION 3.16)
project(static_by_table_name LANGUAGES C)
find_package(Python3 COMPONENTS Interpreter REQUIRED)
execute_process(COMMAND "${Python3_EXECUTABLE}" -m cuentry --cmake-dir
                OUTPUT_VARIABLE cuentry_DIR OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
find_package(cuentry CONFIG REQUIRED)
add_executable(app app.c)
cuentry_generate(app driver.toml STATIC)
"""
# Header-only: it links only where FW_STATIC (the table's name, not the file's) is defined.
_APP = '#include "driver.h"\nint main(void) { struct fw_table t; return fw_load(&t) == FW_ERR_LAYOUT; }\n'
_DRIVER = '[table]\nname = "fw"\nstream = "legacy"\nrequired = [\n  "cuInit@2000",\n]\n'


def test_static_regeneration_and_errors(tmp_path: Path) -> None:
    """STATIC from the table's name; an unchanged manifest or a cuentry upgrade regenerates without a
    recompile (identical output is not rewritten); a manifest error names its file, line and column."""
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(_STATIC_PROJECT)
    (src / "app.c").write_text(_APP)
    (src / "driver.toml").write_text(_DRIVER)
    cmake = shutil.which("cmake")
    assert cmake is not None
    _run([cmake, "-S", str(src), "-B", str(build), f"-DPython3_EXECUTABLE={sys.executable}"])
    first = _run([cmake, "--build", str(build)]).stdout
    assert "generating driver.h" in first and "Linking C executable app" in first
    header = build / "cuentry" / "app" / "driver.h"
    before = header.stat().st_mtime_ns
    time.sleep(1.1)
    # The same manifest, touched, and cuentry itself "upgraded" (its catalog touched): regenerated,
    # identical, not rewritten, nothing recompiled.
    os.utime(src / "driver.toml")
    again = _run([cmake, "--build", str(build)]).stdout
    assert "generating driver.h" in again and "Building C object" not in again, again
    catalog_data = Path(cmake_dir()).parent / "_catalog_data.py"
    stat = catalog_data.stat()
    try:
        os.utime(catalog_data)
        upgraded = _run([cmake, "--build", str(build)]).stdout
    finally:
        os.utime(catalog_data, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "generating driver.h" in upgraded and "Building C object" not in upgraded, upgraded
    assert header.stat().st_mtime_ns == before
    # A manifest error: the build fails and says where.
    (src / "driver.toml").write_text(_DRIVER.replace("cuInit@2000", "cuNope@2000"))
    proc = subprocess.run([cmake, "--build", str(build)], capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode != 0
    assert f"{src / 'driver.toml'}:5:3: entry 'cuNope@2000'" in proc.stdout + proc.stderr


def test_static_takes_the_default_name_without_a_name_line(tmp_path: Path) -> None:
    """A manifest without name = "..." (the format allows it: the name is the file's stem): STATIC defines
    <STEM>_STATIC, as `cuentry generate` names the table (issue 40); main failed at configure."""
    src, build = tmp_path / "src", tmp_path / "build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(_STATIC_PROJECT.replace("driver.toml", "gpudrv.toml"))
    (src / "app.c").write_text('#include "gpudrv.h"\n'
                               'int main(void) { struct gpudrv_table t; return gpudrv_load(&t) == GPUDRV_ERR_LAYOUT; }\n')
    (src / "gpudrv.toml").write_text(_DRIVER.replace('name = "fw"\n', "# no name: the file's stem\n"))
    cmake = shutil.which("cmake")
    assert cmake is not None
    _run([cmake, "-S", str(src), "-B", str(build), f"-DPython3_EXECUTABLE={sys.executable}"])
    built = _run([cmake, "--build", str(build)]).stdout
    assert "Linking C executable app" in built, built   # links only with GPUDRV_STATIC (header-only mode)
    # a name = line under [table] wins, in any quoting, and a changed manifest configures again
    (src / "gpudrv.toml").write_text(_DRIVER.replace('name = "fw"', "name = 'gpudrv'"))
    again = _run([cmake, "--build", str(build)]).stdout
    assert "generating gpudrv.h" in again, again
