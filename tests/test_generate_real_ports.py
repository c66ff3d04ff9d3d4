"""Two real public loaders ported onto `cuentry generate c` (issue 40: how to know it works).

shiguredo/momo (src/dyn/cuda.h: a `decltype(&name)` member and a dlsym of each name, 16 entries) and
shitcoinsherpa/Freycoin (src/gpu/cuda_loader.cpp: dlsym with "_v2" appended by hand, 19 entries): their
entry lists rewritten as manifests (tests/generate_data/real_ports/*.toml, each entry pinned at the ABI the
project's code calls), and call sites written here in the shape of their use (no code of theirs). The call
sites compile against every real CUDA release's headers this machine has (13.0's; all of 11.7-13.5 with
`$CUENTRY_CUDA_HISTORY`) with `-Wall -Wextra -Werror`, where the original loaders' `decltype(&cuCtxCreate)`
would change type (13.0's cuCtxCreate is cuCtxCreate_v4); and both tables load in one program on the fake
driver at 13.0, 12.4, 11.8 (v1 form) and 11.2 (exported names).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cuentry import manifest
from cuentry.generate import generate_c

from .test_catalog_toolkits import REAL

PORTS = Path(__file__).parent / "generate_data" / "real_ports"
TABLES = {"momo": "momo.toml", "frey": "freycoin.toml"}
STRICT = ["-std=c++17", "-Wall", "-Wextra", "-Werror", "-Wshadow", "-Wconversion"]
pytestmark = pytest.mark.skipif(os.environ.get("CUENTRY_BACKEND") == "pure",
                                reason="does not use the call backend: runs in the default pass")


def _gxx() -> str:
    path = shutil.which("g++")
    if path is None:
        pytest.skip("g++ is not installed")
    return path


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300, **kw)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def hdrs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ports")
    for name, toml in TABLES.items():
        (d / f"{name}.h").write_text(generate_c(manifest.load(PORTS / toml)))
    return d


@pytest.mark.skipif(not REAL, reason="no real CUDA headers here (set CUENTRY_CUDA_INCLUDE or CUENTRY_CUDA_HISTORY)")
@pytest.mark.parametrize("release", sorted(REAL))
def test_call_sites_compile_against_the_release(hdrs: Path, release: str) -> None:
    for sites in ("momo_sites.cpp", "frey_sites.cpp"):
        _run([_gxx(), *STRICT, "-isystem", str(REAL[release]), f"-I{hdrs}", "-fsyntax-only", str(PORTS / sites)])


@pytest.mark.parametrize("variant,version", [("full", 13000), ("full", 12040), ("v1", 11080), ("nogpa", 11020)])
def test_both_tables_load_and_call_on_the_fake_driver(hdrs: Path, tmp_path: Path, fake: dict[str, str], variant: str,
                                                      version: int) -> None:
    exe = tmp_path / "ports"
    include = ["-isystem", str(REAL["13.0"])] if "13.0" in REAL else []
    if not include:
        pytest.skip("the call sites need a real cuda.h")
    _run([_gxx(), *STRICT, *include, f"-I{hdrs}", "-o", str(exe), str(PORTS / "ports_main.cpp"),
          str(PORTS / "momo_sites.cpp"), str(PORTS / "frey_sites.cpp"), "-ldl", "-pthread"])
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": str(version), "LD_LIBRARY_PATH": str(Path(fake[variant]).parent)}
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "momo 0 frey 0", proc.stdout + proc.stderr
