"""The suite's real-driver variant: resolution, typed calls doing real work, tables, runtime, CLI.

Run with `python -m pytest -m gpu tests/gpu` on a machine with a GPU.
"""

from __future__ import annotations

import array
import io
import json
from pathlib import Path
from typing import Any

import pytest

from cuentry import Classification, Driver, Runtime, Table, as_bytes, as_str, kernel_params, optional, out, required
from cuentry.catalog import catalog
from cuentry.errors import CudaError, DriverError, ResolutionError

pytestmark = pytest.mark.gpu

PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry add_one(.param .u64 p, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<7>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.u32 %r6, [%rd4];
  add.s32 %r6, %r6, 1;
  st.global.u32 [%rd4], %r6;
DONE:
  ret;
}
\x00"""


def test_real_driver_facts(real: Driver) -> None:
    info = real.info()
    assert info["fake"] is False and info["stub"] is False
    assert real.driver_version and real.driver_version >= 12000 and real.gpa_form == "v2"
    assert "libcuda" in real.path


def test_the_fake_answers_like_this_driver(real: Driver, fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Live version of tests/test_fake_vs_real.py: every catalog ABI x flags, on both drivers."""
    monkeypatch.setenv("CUENTRY_FAKE_DRIVER_VERSION", str(real.driver_version))
    with Driver.load(fake["full"]) as fk:
        cat = catalog()
        diffs = []
        n = 0
        for sym in cat.symbols():
            for v in sorted({*cat.versions(sym), cat.versions(sym)[0] - 1}):
                for f in (0, 1, 2):
                    r = real.query(sym, v, f)
                    k = fk.query(sym, v, f)
                    n += 1
                    rname = next((a.exported for a in cat.abis(sym) if a.exported and
                                  real.library.address(a.exported) == r[2]), None) if r[2] else None
                    kname = next((a.exported for a in cat.abis(sym) if a.exported and
                                  fk.library.address(a.exported) == k[2]), None) if k[2] else None
                    if (r[0], r[1], rname) != (k[0], k[1], kname):
                        diffs.append((sym, v, f, (r[0], r[1], rname), (k[0], k[1], kname)))
        assert n > 3000
        assert not diffs, diffs[:5]


def test_device_queries(real: Driver) -> None:
    n = out("int")
    real.call("cuDeviceGetCount", 2000).checked(n)
    assert n[0] >= 1
    dev = out("CUdevice")
    real.call("cuDeviceGet", 2000).checked(dev, 0)
    name = out("char", 256)
    real.call("cuDeviceGetName", 2000).checked(name, 256, dev[0])
    assert "NVIDIA" in as_str(name) or as_str(name)
    major = out("int")
    real.call("cuDeviceGetAttribute", 2000).checked(major, 75, dev[0])  # COMPUTE_CAPABILITY_MAJOR
    assert major[0] >= 7
    with pytest.raises(CudaError) as ei:
        real.call("cuDeviceGet", 2000).checked(dev, 4096)
    assert ei.value.name == "CUDA_ERROR_INVALID_DEVICE"


def test_uuid_v1_and_v2(real: Driver) -> None:
    u1, u2 = out("CUuuid"), out("CUuuid")
    r1 = real.resolve("cuDeviceGetUuid", 9020, "legacy")
    r2 = real.resolve("cuDeviceGetUuid", 11040, "legacy")
    assert (r1.diagnostic.exported, r2.diagnostic.exported) == ("cuDeviceGetUuid", "cuDeviceGetUuid_v2")
    r1.function.checked(u1, 0)
    r2.function.checked(u2, 0)
    assert len(as_bytes(u1)) == len(as_bytes(u2)) == 16 and any(as_bytes(u2))


def test_context_stream_memory_and_copy(real: Driver, ctx: int) -> None:
    cur = out("CUcontext")
    real.call("cuCtxGetCurrent", 4000).checked(cur)
    assert cur[0] == ctx
    s = out("CUstream")
    real.call("cuStreamCreate", 2000).checked(s, 1)  # CU_STREAM_NON_BLOCKING
    d = out("CUdeviceptr")
    real.call("cuMemAlloc", 3020).checked(d, 1 << 20)
    src = bytearray(range(256)) * 16
    dst = bytearray(len(src))
    real.call("cuMemcpyHtoDAsync", 3020).checked(d[0], src, len(src), s[0])
    real.call("cuMemcpyDtoHAsync", 3020).checked(dst, d[0], len(dst), s[0])
    real.call("cuStreamSynchronize", 2000).checked(s[0])
    assert dst == src
    real.call("cuMemFree", 3020).checked(d[0])
    real.call("cuStreamDestroy", 4000).checked(s[0])


def test_kernel_launch_through_cuLaunchKernel(real: Driver, ctx: int) -> None:
    mod, fn = out("CUmodule"), out("CUfunction")
    real.call("cuModuleLoadData", 2000).checked(mod, PTX)
    real.call("cuModuleGetFunction", 2000).checked(fn, mod[0], b"add_one")
    n = 1000
    d = out("CUdeviceptr")
    real.call("cuMemAlloc", 3020).checked(d, 4 * n)
    host = array.array("I", range(n))
    real.call("cuMemcpyHtoD", 3020).checked(d[0], host, 4 * n)
    params = kernel_params(("CUdeviceptr", d[0]), ("unsigned int", n))
    launch = real.call("cuLaunchKernel", 4000)
    launch.checked(fn[0], (n + 255) // 256, 1, 1, 256, 1, 1, 0, 0, params, None)
    real.call("cuCtxSynchronize", 2000).checked()
    back = array.array("I", bytes(4 * n))
    real.call("cuMemcpyDtoH", 3020).checked(back, d[0], 4 * n)
    assert list(back) == [i + 1 for i in range(n)]
    real.call("cuMemFree", 3020).checked(d[0])
    real.call("cuModuleUnload", 2000).checked(mod[0])


def test_framework_stream_handles(real: Driver, ctx: int, torch: Any) -> None:
    ev = out("CUevent")
    real.call("cuEventCreate", 2000).checked(ev, 0)
    record = real.call("cuEventRecord", 2000)
    record.checked(ev[0], torch.cuda.current_stream().cuda_stream)  # a plain int
    try:
        import cupy

        cs = cupy.cuda.Stream(non_blocking=True)  # kept alive: its .ptr is only valid while it lives
        record.checked(ev[0], cs.ptr)
        cs.synchronize()
    except ImportError:
        pass

    class S:
        def __cuda_stream__(self) -> tuple[int, int]:
            return (0, 0)

    record.checked(ev[0], S())
    real.call("cuEventSynchronize", 2000).checked(ev[0])
    real.call("cuEventDestroy", 4000).checked(ev[0])


def test_per_thread_and_legacy_tables(real: Driver) -> None:
    entries = [required("cuStreamQuery", 7000), required("cuMemcpyHtoDAsync", 7000), required("cuMemAlloc", 3020)]
    lt = Table("legacy", entries, stream="legacy", source=real)
    pt = Table("pt", entries, stream="per_thread", source=real)
    assert lt.cuStreamQuery.address != pt.cuStreamQuery.address
    assert pt.cuStreamQuery.exported == "cuStreamQuery_ptsz"
    assert lt.cuMemAlloc.address == pt.cuMemAlloc.address
    assert pt.cuStreamQuery(0) in (0, 600)  # CUDA_SUCCESS or CUDA_ERROR_NOT_READY on the per-thread stream
    json.dumps(pt.report())


def test_a_table_binds_each_entry_on_its_first_read(real: Driver, ctx: int) -> None:
    """Issue 23.6 on the real driver: resolution asks and checks every entry and binds none; a first read
    binds one, the same object from then on, and it calls the driver."""
    t = Table("lazy", [required("cuCtxGetCurrent", 4000), required("cuDeviceGetCount", 2000),
                       required("cuMemAlloc", 3020)], stream="legacy", source=real).resolve()
    layout = type(t).__mro__[1]
    assert all(a in type(t).__dict__ for a in ("cuCtxGetCurrent", "cuDeviceGetCount", "cuMemAlloc"))
    f = t.cuCtxGetCurrent
    assert t.cuCtxGetCurrent is f and type(t).cuCtxGetCurrent is layout.__dict__["cuCtxGetCurrent"]
    c = out("CUcontext")
    f.checked(c)
    assert int(c[0]) == ctx and f.exported == t.report()["entries"][0]["exported"]
    n = out("int")
    t.cuDeviceGetCount.checked(n)
    assert n[0] >= 1 and "cuMemAlloc" in type(t).__dict__


def test_optional_entries_and_floor(real: Driver) -> None:
    t = Table("opt", [required("cuMemAlloc", 3020), optional("cuCheckpointOperationComplete", 13040),
                      optional("cuTensorMapSetAllocationClass", 13050, fallback=lambda *a: 801)],
              stream="legacy", source=real)
    if (real.driver_version or 0) < 13040:
        assert not t.available("cuCheckpointOperationComplete")
        r = t.reason("cuCheckpointOperationComplete")
        assert r is not None and r.classification is Classification.DRIVER_TOO_OLD
    assert t.min_driver() == 3020


def test_errors_on_the_real_driver(real: Driver) -> None:
    with pytest.raises(ResolutionError) as ei:
        real.resolve("cuMemAlloc", 13000, "legacy")
    assert ei.value.diagnostic.classification is Classification.NOT_AN_ABI_VERSION
    with pytest.raises(ResolutionError) as ei:
        real.resolve("cuEventCreateFromEGLSync", 9000, "legacy")
    assert ei.value.diagnostic.classification is Classification.NOT_EXPORTED
    assert ei.value.diagnostic.query_name == "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND"
    rc, st, addr, _ = real.query("cuMemAlloc", 1999, 0)
    assert (rc, st, addr) == (0, 2, 0)


def test_runtime_path(real: Driver) -> None:
    try:
        rt = Runtime.load()
    except DriverError as exc:
        pytest.skip(f"no libcudart: {exc}")
    with rt:
        r = rt.resolve("cuDeviceGetUuid", 11040, "legacy")
        assert r.diagnostic.access == "runtime" and r.diagnostic.result_name == "cudaSuccess"
        assert r.address == real.library.address("cuDeviceGetUuid_v2")
        with pytest.raises(ResolutionError) as ei:
            rt.resolve("cuMemcpyHtoD", 3020, "per_thread")
        assert ei.value.diagnostic.classification is Classification.VERSION_NOT_SUFFICIENT


def test_cli_doctor_and_check(real: Driver, tmp_path: Path) -> None:
    from cuentry.cli import main

    o, e = io.StringIO(), io.StringIO()
    assert main(["doctor", "--json"], stdout=o, stderr=e) == 0
    rep: dict[str, Any] = json.loads(o.getvalue())
    assert rep["driver"]["found"] and not rep["driver"]["fake"]
    assert rep["coverage"]["resolved_at_newest"] > 400
    m = tmp_path / "m.toml"
    m.write_text('[table]\nstream = "per_thread"\nrequired = ["PFN_cuMemAlloc_v3020", "cuStreamBeginCapture@10010"]\n')
    o = io.StringIO()
    assert main(["check", str(m)], stdout=o, stderr=e) == 0
    assert "PASS" in o.getvalue()
