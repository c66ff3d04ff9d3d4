"""The two ported loaders of tests/generate_data/port (same-named tables, one process) on a real driver.

Run with `python -m pytest -m gpu tests/gpu/test_generate_port_gpu.py` on a machine with a GPU, cmake and
a C++ compiler: every member of both tables lands on the export cuentry's own Python table resolves for it
on this driver, linked and dlopen'ed (RTLD_LOCAL, RTLD_GLOBAL), and the checked calls name the entry, the
CUresult and the call site.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from cuentry import Driver, manifest
from cuentry.generate.model import plan
from cuentry.table import Table

from ..test_generate_port import LIBS, PORT, _parse, _run

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("build", ["Debug", "Release"])
def test_ported_loaders_on_the_real_driver(real: Driver, tmp_path: Path, build: str) -> None:
    if shutil.which("cmake") is None or shutil.which("c++") is None:
        pytest.skip("cmake or a C++ compiler is not installed")
    want: dict[str, dict[str, str]] = {}
    for lib, path in LIBS.items():
        m = manifest.load(path)
        p = plan(m)
        members = {name: "NULL" for s in p.slots for name, _ in s.members()}
        for s, r in zip(p.slots, Table.from_manifest(m, source=real).report()["entries"], strict=True):
            if r["status"] in ("resolved", "fallback"):
                members[next(x.member for x in s.pins if x.abi.pfn == r["abi"])] = r["exported"]
        want[lib] = members
    out = tmp_path / "build"
    _run(["cmake", "-S", str(PORT), "-B", str(out), f"-DPython3_EXECUTABLE={sys.executable}",
          f"-DCMAKE_BUILD_TYPE={build}", "-DA_KIND=SHARED", "-DB_KIND=SHARED"])
    _run(["cmake", "--build", str(out), "-j2"])
    libs = [str(out / "libtorchish.so"), str(out / "libncclish.so")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUENTRY_FAKE")}
    for cmd in ([str(out / "linked")], [str(out / "opener"), "local", *libs], [str(out / "opener"), "global", *libs]):
        got = _parse(_run(cmd, env=env).stdout)
        for lib in LIBS:
            rc, members, check = got[lib]
            assert rc == 0, (cmd, lib)
            assert members == want[lib], (cmd, lib)
            assert "failed: CUDA_ERROR_" in check and (".cpp:" in check or ".c:" in check), check
