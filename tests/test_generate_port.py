"""Two real-shaped loaders ported to generated tables, in one process.

tests/generate_data/port is a CMake project (find_package(cuentry), cuentry_generate()) with a
PyTorch-shaped library (torchish: an X-macro driver table with optional entries and fallbacks, C++)
and an NCCL-shaped one (ncclish: a cudawrap with CUPFN(), C). Both name their table "drv", with
another layout each: the crash this guards against is one library binding to the other's loader
(a plain-inline or exported wrapper at -O0), which writes one table's layout into the other.

Each configuration (shared+shared, static+static, static+shared; Debug and Release; default
visibility; AddressSanitizer where the compiler has it) is built once, and both libraries run in one
process (linked, and for shared ones dlopen'ed with RTLD_LOCAL and RTLD_GLOBAL) on the fake driver at
13.0, 12.4, 12.0, 11.8 and 11.2, the stub and no driver. Every member of both tables must land on the
export cuentry's own Python table resolves for that entry (dladdr names it), every other member
NULL; the checked calls name the entry, the CUresult and the call site. The lean set runs by default,
all of it with ``CUENTRY_FULL_MATRIX=1``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cuentry import manifest
from cuentry.driver import Driver
from cuentry.generate.model import plan
from cuentry.table import Table

PORT = Path(__file__).parent / "generate_data" / "port"
FULL = os.environ.get("CUENTRY_FULL_MATRIX") == "1"
LIBS = {"A": PORT / "torchish" / "drv.toml", "B": PORT / "ncclish" / "drv.toml"}
CHECKED = {"A": ("torchish: drv: cuMemGetAddressRange failed: CUDA_ERROR_NOT_INITIALIZED (3) at ", "torchish.cpp:"),
           "B": ("drv: cuMemCreate failed: CUDA_ERROR_NOT_SUPPORTED (801) at ", "ncclish.c:")}
DRIVERS = [("full", 13000), ("full", 12040), ("full", 12000), ("v1", 11080), ("nogpa", 11020), ("stub", 13000),
           ("none", 0)]
KINDS = [("SHARED", "SHARED"), ("STATIC", "STATIC"), ("STATIC", "SHARED")]
_ALL = [(a, b, build) for a, b in KINDS for build in ("Debug", "Release")]
_LEAN = [("SHARED", "SHARED", "Debug"), ("STATIC", "STATIC", "Debug"), ("STATIC", "SHARED", "Release")]

pytestmark = [pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("c++") is None,
                                 reason="cmake or a C++ compiler is not installed"),
              pytest.mark.skipif(os.environ.get("CUENTRY_BACKEND") == "pure",
                                 reason="does not use the call backend: runs in the default pass")]


def _run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300, **kw)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _asan(tmp: Path) -> bool:
    """Whether the C compiler links AddressSanitizer programs here."""
    src = tmp / "asan.c"
    src.write_text("int main(void) { return 0; }\n")
    proc = subprocess.run(["cc", "-fsanitize=address", "-o", str(tmp / "asan"), str(src)], capture_output=True,
                          check=False, timeout=60)
    return proc.returncode == 0


@pytest.fixture(scope="module")
def expected(fake: dict[str, str]) -> dict[tuple[str, int], dict[str, dict[str, str]]]:
    """Per driver: per library, each member and the export cuentry's Python table lands it on."""
    out: dict[tuple[str, int], dict[str, dict[str, str]]] = {}
    saved = os.environ.get("CUENTRY_FAKE_DRIVER_VERSION")
    try:
        for variant, version in DRIVERS:
            per: dict[str, dict[str, str]] = {}
            for lib, path in LIBS.items():
                m = manifest.load(path)
                p = plan(m)
                want = {name: "NULL" for s in p.slots for name, _ in s.members()}
                if variant not in ("none", "stub"):
                    os.environ["CUENTRY_FAKE_DRIVER_VERSION"] = str(version)
                    drv = Driver.load(fake[variant])
                    try:
                        report = Table.from_manifest(m, source=drv).report()
                    finally:
                        drv.close()
                    for s, r in zip(p.slots, report["entries"], strict=True):
                        if r["status"] in ("resolved", "fallback"):
                            member = next(x.member for x in s.pins if x.abi.pfn == r["abi"])
                            want[member] = r["exported"]
                per[lib] = want
            out[(variant, version)] = per
    finally:
        if saved is None:
            os.environ.pop("CUENTRY_FAKE_DRIVER_VERSION", None)
        else:
            os.environ["CUENTRY_FAKE_DRIVER_VERSION"] = saved
    return out


def _parse(out: str) -> dict[str, tuple[int, dict[str, str], str]]:
    got = {}
    for line in out.splitlines():
        lib, _, rest = line.partition(" ")
        head, _, check = rest.partition("check=")
        fields = dict(kv.split("=", 1) for kv in head.split())
        got[lib] = (int(fields.pop("rc")), fields, check.strip("[]"))
    return got


def _env(fake: dict[str, str], variant: str, version: int, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    env["CUENTRY_FAKE_DRIVER_VERSION"] = str(version or 13000)
    env["LD_LIBRARY_PATH"] = str(tmp / "nothing") if variant == "none" else str(Path(fake[variant]).parent)
    return env


@pytest.mark.parametrize("a_kind,b_kind,build", _ALL if FULL else _LEAN)
def test_two_ported_loaders_in_one_process(tmp_path: Path, fake: dict[str, str], expected: Any, a_kind: str,
                                           b_kind: str, build: str) -> None:
    sanitize = _asan(tmp_path)
    out = tmp_path / "build"
    _run(["cmake", "-S", str(PORT), "-B", str(out), f"-DPython3_EXECUTABLE={sys.executable}",
          f"-DCMAKE_BUILD_TYPE={build}", f"-DA_KIND={a_kind}", f"-DB_KIND={b_kind}",
          f"-DSANITIZE={'ON' if sanitize else 'OFF'}"])
    _run(["cmake", "--build", str(out), "-j2"])
    runs = [[str(out / "linked")]]
    if (a_kind, b_kind) == ("SHARED", "SHARED"):
        libs = [str(out / "libtorchish.so"), str(out / "libncclish.so")]
        runs += [[str(out / "opener"), "local", *libs], [str(out / "opener"), "global", *libs]]
    real = False
    for variant, version in DRIVERS:
        env = _env(fake, variant, version, tmp_path)
        for cmd in runs:
            proc = _run(cmd, env=env)
            assert "AddressSanitizer" not in proc.stderr, proc.stderr
            got = _parse(proc.stdout)
            if variant == "none" and got["A"][0] == 0:
                real = True  # a real libcuda.so.1 on this machine: "no driver" cannot be staged
                continue
            for lib in LIBS:
                rc, members, check = got[lib]
                assert members == expected[(variant, version)][lib], (cmd, variant, version, lib)
                assert rc == (2 if variant in ("none", "stub") else 0), (cmd, variant, lib)
                if rc == 0:
                    assert check.startswith(CHECKED[lib][0]) and CHECKED[lib][1] in check, check
    if real:
        pytest.skip("a real libcuda.so.1 is installed: the no-driver case was not run")
