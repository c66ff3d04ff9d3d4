"""`cuentry generate c` on a real driver: examples/c/add_one.cpp allocates, copies and launches a PTX
kernel through a generated table; the test program's tables resolve as cuentry's Python tables do.

Run with `python -m pytest -m gpu tests/gpu` on a machine with a GPU (needs a C and a C++ compiler;
no nvcc, no CUDA headers: the kernel is PTX text the driver JIT-compiles).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cuentry import Driver
from cuentry.generate import generate_c

from ..test_generate import NAMES, _c_entries, _compile, _manifest, _parse, _py_entries

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "c"
CXX = os.environ.get("CXX", "c++")
CC = os.environ.get("CC", "cc")


def _real_env() -> dict[str, str]:
    """The process environment without the fake driver's knobs."""
    return {k: v for k, v in os.environ.items() if not k.startswith("CUENTRY_FAKE")}


def test_example_add_one_on_the_real_driver(real: Driver, tmp_path: Path) -> None:
    if shutil.which(CXX) is None:
        pytest.skip("no C++ compiler")
    from cuentry.manifest import load

    (tmp_path / "kern.h").write_text(generate_c(load(EXAMPLE / "kern.toml")))
    exe = tmp_path / "add_one"
    _compile([CXX, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-O2", f"-I{tmp_path}", "-o", str(exe),
              str(EXAMPLE / "add_one.cpp"), "-ldl", "-pthread"])
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=_real_env(), timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"driver {real.driver_version}," in proc.stdout
    assert "add_one: 1048576 elements, 0 wrong: OK" in proc.stdout
    if (real.driver_version or 0) >= 12030:
        assert "kernel add_one" in proc.stdout                 # the optional cuFuncGetName resolved


def test_tables_resolve_like_python_on_the_real_driver(real: Driver, tmp_path: Path) -> None:
    if shutil.which(CC) is None:
        pytest.skip("no C compiler")
    for n in NAMES:
        (tmp_path / f"{n}.h").write_text(generate_c(_manifest(n)))
    exe = tmp_path / "run_tables"
    _compile([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L", f"-I{tmp_path}", "-o",
              str(exe), str(ROOT / "tests" / "generate_data" / "run_tables.c"), "-ldl", "-pthread"])
    for mode in ("report", "with", "calls"):
        proc = subprocess.run([str(exe), mode], capture_output=True, text=True, env=_real_env(), timeout=120,
                              check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        if mode == "calls":
            assert "CALLS rc=0 back=cuentry generated table" in proc.stdout
            continue
        got = _parse(proc.stdout)
        for n in NAMES:
            assert got[n]["driver"] == real.driver_version
            assert _c_entries(got[n]) == _py_entries(n, real), (mode, n)


def test_cpp_tutorial_runs_on_the_real_driver(real: Driver, tmp_path: Path) -> None:
    """docs/tutorials/cpp-loader.md's program as written, on the real driver: cuInit, the primary context,
    cuMemAlloc/cuMemFree checked (issue 33.1); the tutorial's output is its last line."""
    import re

    if shutil.which(CXX) is None:
        pytest.skip("no C++ compiler")
    from cuentry.manifest import load

    page = (ROOT / "docs" / "tutorials" / "cpp-loader.md").read_text()
    (toml,) = re.findall(r"```toml\n(.*?)```", page, re.S)[:1]
    impl, main_cpp = re.findall(r"```cpp\n(.*?)```", page, re.S)[:2]
    (tmp_path / "acme.toml").write_text(toml)
    (tmp_path / "acme_table.h").write_text(generate_c(load(tmp_path / "acme.toml")))
    (tmp_path / "acme_loader.cpp").write_text(impl)
    (tmp_path / "main.cpp").write_text(main_cpp)
    subprocess.run([CXX, "-std=c++11", "-Wall", "-Wextra", "-Werror", "acme_loader.cpp", "main.cpp", "-o", "acme_demo",
                    "-ldl", "-pthread"], cwd=tmp_path, check=True, capture_output=True, timeout=300)
    r = subprocess.run([str(tmp_path / "acme_demo")], env=_real_env(), capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("acme: driver entry points loaded, 1 MiB allocated and freed")
