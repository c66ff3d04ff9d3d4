"""cuentry trace and emulate on the real driver: frameworks' requests, and what emulating 12.4/12.8 does.

Run on the GPU machine (each test writes its report to $CUENTRY_GPU_OUT, default a temporary folder):

    CUENTRY_GPU_OUT=/tmp/trace-out python -m pytest -m gpu tests/gpu/test_trace_gpu.py -v

Frameworks that are not installed are skipped. ``tools/trace_page.py $CUENTRY_GPU_OUT`` renders the
reports as the Markdown of docs/trace-real-frameworks.md.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from cuentry import Driver, interpose
from cuentry import trace as tr
from cuentry.catalog import catalog

from ..tracehelp import compile_program

pytestmark = pytest.mark.gpu

PROGRAMS: dict[str, tuple[str, str]] = {
    "cuda.bindings": ("cuda.bindings", """
from cuda.bindings import driver as d
assert d.cuInit(0)[0] == 0
err, dev = d.cuDeviceGet(0)
err, ctx = d.cuDevicePrimaryCtxRetain(dev)
d.cuCtxSetCurrent(ctx)
err, p = d.cuMemAlloc(1 << 20)
assert err == 0, err
d.cuMemFree(p)
print("ok")
"""),
    "torch": ("torch", """
import torch
a = torch.randn(512, 512, device="cuda")
print(float((a @ a).sum().item()) != 0.0)
torch.cuda.synchronize()
"""),
    "cupy": ("cupy", """
import cupy as cp
x = cp.arange(100000, dtype=cp.float32)
print(float(cp.cumsum(x)[-1]), float((x * 2).sum()))
"""),
    "jax": ("jax", """
import jax, jax.numpy as jnp
x = jnp.ones((512, 512))
print(float((x @ x).sum().block_until_ready()), jax.devices())
"""),
    "triton": ("triton", """
import torch, triton, triton.language as tl

@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

n = 4096
x = torch.rand(n, device="cuda"); y = torch.rand(n, device="cuda"); o = torch.empty_like(x)
add[(n // 256,)](x, y, o, n, BLOCK=256)
print(bool(torch.allclose(o, x + y)))
"""),
}

TORCH_PROBE = """
import json, sys
got = {}
try:
    import torch
    got["is_available"] = torch.cuda.is_available()
    got["driver_version"] = torch._C._cuda_getDriverVersion() if hasattr(torch._C, "_cuda_getDriverVersion") else None
    a = torch.randn(256, 256, device="cuda")
    got["matmul"] = float((a @ a).sum().item()) != 0.0
except Exception as exc:  # what happens is the result
    got["error"] = f"{type(exc).__name__}: {exc}"[:800]
print("RESULT " + json.dumps(got))
"""

TABLE_SCRIPT = """
import json
from cuentry import Table, optional, required, Driver
drv = Driver.load()
t = Table("t", [required("cuMemAlloc", 3020), required("cuMemFree", 3020),
                optional("cuCtxCreate", 12050, fallback=optional("cuCtxCreate", 11040)),
                optional("cuMulticastCreate", 12010),
                optional("cuLibraryLoadData", 12000),
                optional("cuMemGetHandleForAddressRange", 11070),
                optional("cuCtxRecordEvent", 12050),
                optional("cuGreenCtxCreate", 12040),
                optional("cuStreamGetDevice", 12080),
                optional("cuDeviceRegisterAsyncNotification", 12040),
                optional("cuKernelGetName", 12030)], stream="legacy", source=drv)
rep = t.report()
print("RESULT " + json.dumps({"driver_version": drv.driver_version, "gpa": drv.gpa_form,
      "entries": {e["name"]: [e["status"], e["abi"]] for e in rep["entries"]}}))
"""


@pytest.fixture(scope="module")
def out_dir() -> Path:
    d = Path(os.environ.get("CUENTRY_GPU_OUT") or tempfile.mkdtemp(prefix="cuentry-gpu-trace-"))
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture(scope="module")
def driver_version() -> int:
    try:
        d = Driver.load()
    except Exception as exc:
        pytest.skip(f"no real driver: {exc}")
    if d.fake or d.stub or not d.driver_version:
        pytest.skip("not a real driver")
    v = d.driver_version
    d.close()
    return v


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    env.pop("CUENTRY_DRIVER", None)
    return env


def _save(out_dir: Path, name: str, data: dict[str, Any]) -> None:
    (out_dir / f"{name}.json").write_text(json.dumps(data, indent=1))


def _result_line(text: str) -> dict[str, Any]:
    for line in text.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])  # type: ignore[no-any-return]
    return {}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_trace_framework(name: str, out_dir: Path, driver_version: int, tmp_path: Path) -> None:
    module, code = PROGRAMS[name]
    if importlib.util.find_spec(module.split(".")[0]) is None or (
            "." in module and importlib.util.find_spec(module) is None):
        pytest.skip(f"{module} is not installed")
    prog = tmp_path / f"{name.replace('.', '_')}_program.py"  # a file: triton.jit reads its function's source
    prog.write_text(code)
    base = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, env=_env(), timeout=600,
                          check=False)
    rep, stdout, stderr = _run_captured([sys.executable, str(prog)], tmp_path, fn=tr.run)
    data = {"framework": name, "plain_exit": base.returncode, "plain_stdout": base.stdout[-2000:],
            "traced_stdout": stdout[-2000:], "traced_stderr": stderr[-2000:], "report": rep.to_dict()}
    _save(out_dir, f"trace-{name}", data)
    assert base.returncode == 0, base.stderr[-2000:]
    assert rep.exit_code == 0, stderr[-2000:]
    assert stdout == base.stdout                    # the program's output is its own
    assert rep.driver_version == driver_version
    assert sum(r.count for r in rep.requests) > 100
    assert all(r.caller for r in rep.requests)


def _run_captured(cmd: list[str], tmp_path: Path, **kw: Any) -> tuple[Any, str, str]:
    """tr.run / tr.emulate with the program's output kept in files (the report is the return value)."""
    with open(tmp_path / "stdout", "w+") as so, open(tmp_path / "stderr", "w+") as se:
        got = kw.pop("fn")(cmd, stdout=so, stderr=se, env=_env(), timeout=600, **kw)
        so.seek(0)
        se.seek(0)
        return got, so.read(), se.read()


@pytest.mark.parametrize("version", [12040, 12080])
def test_emulate_cuentry_table(version: int, out_dir: Path, driver_version: int, tmp_path: Path) -> None:
    script = tmp_path / "table.py"
    script.write_text(TABLE_SCRIPT)
    env = tr.environment(str(interpose.build()), emulate=version, base=_env())
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300,
                         check=False)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=_env(), timeout=300,
                           check=False)
    got, real = _result_line(out.stdout), _result_line(plain.stdout)
    _save(out_dir, f"emulate-table-{version}", {"version": version, "emulated": got, "real": real,
                                                 "stderr": out.stderr[-2000:]})
    assert out.returncode == 0, out.stderr[-2000:]
    assert got["driver_version"] == version and real["driver_version"] == driver_version
    cat = catalog()
    for name, (status, _abi) in got["entries"].items():
        first = cat.versions(name)[0]
        if first > version:
            assert status == "unavailable", (name, status)
    expect = "fallback" if version < 12050 else "resolved"
    assert got["entries"]["cuCtxCreate"][0] == expect


@pytest.mark.parametrize("version", [12040, 12080])
def test_emulate_torch(version: int, out_dir: Path, driver_version: int, tmp_path: Path) -> None:
    """What torch (built for this machine's CUDA) does on an older driver: recorded, whatever it is."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed")
    res, stdout, stderr = _run_captured([sys.executable, "-c", TORCH_PROBE], tmp_path, fn=tr.emulate,
                                        version=version, trace=True)
    assert res.report is not None
    result = _result_line(stdout)
    _save(out_dir, f"emulate-torch-{version}", {"version": version, "exit_code": res.exit_code, "result": result,
                                                 "stderr": stderr[-3000:], "report": res.report.to_dict()})
    assert res.exit_code < 128, "torch died by a signal under emulation"
    assert result, stderr[-2000:]


@pytest.mark.parametrize("version", [12040, 12080])
def test_emulated_real_driver_answers_like_an_old_one(version: int, out_dir: Path, driver_version: int,
                                                      fake: dict[str, str], tmp_path: Path) -> None:
    """Every catalog query on the real driver emulated as VERSION equals the fake driver at VERSION."""
    req = compile_program(tmp_path / "req")
    real = Driver.load()
    path = real.path
    real.close()
    lines = []
    cat = catalog()
    for sym in cat.symbols():
        if sym in ("cuGetProcAddress", "cuDriverGetVersion", "cuEventCreateFromEGLSync", "cuWGLGetDevice"):
            continue
        if not any("linux" in a.platforms for a in cat.abis(sym)):
            continue
        vs = cat.versions(sym)
        for v in {*vs, vs[0] - 1, version, version + 10}:
            for flags in (0, 1, 2):
                lines.append(f"{sym} {v} {flags}")
    q = tmp_path / "q.txt"
    q.write_text("\n".join(lines) + "\n")
    env = tr.environment(str(interpose.build()), emulate=version, base=_env())
    got = subprocess.run([str(req), path, f"file:{q}"], capture_output=True, text=True, env=env, check=False,
                         timeout=300).stdout.splitlines()
    fenv = dict(_env(), CUENTRY_FAKE_DRIVER_VERSION=str(version))
    want = subprocess.run([str(req), fake["full"], f"file:{q}"], capture_output=True, text=True, env=fenv,
                          check=False, timeout=300).stdout.splitlines()
    diffs = [(a, b) for a, b in zip(got, want, strict=False) if a != b]
    _save(out_dir, f"emulate-parity-{version}", {"version": version, "queries": len(lines), "diffs": diffs[:200],
                                                  "ndiffs": len(diffs)})
    assert len(got) == len(want) == len(lines)
    assert diffs == []
