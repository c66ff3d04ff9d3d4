"""Per-call overhead and resolution cost on a real GPU, as ratios measured in one run (issue 7).

Per call (ns) of cuCtxGetCurrent, cuDeviceGetAttribute, cuEventRecord and cuLaunchKernel
(11 arguments, an empty kernel) through: a cuentry entry, raw cffi (ABI mode), raw ctypes,
cuda.bindings.driver, a C loop through the same pointer, and an empty Python lambda.
Then: resolving the whole catalog and a 100-entry table against cuda.bindings' first-call
initialisation, and `import cuentry` against `import cuda.bindings.driver`.

    python benchmarks/bench_gpu.py [--json]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from _common import add_src, env, portable, race

add_src()

try:  # cffi: a raw baseline only (cuentry does not use it)
    import cffi

    ffi = cffi.FFI()
except ImportError:
    ffi = None

from cuentry import Driver, Table, kernel_params, out, required  # noqa: E402
from cuentry.catalog import catalog  # noqa: E402

N = 50_000
EMPTY_PTX = b""".version 8.0
.target sm_90
.address_size 64
.visible .entry empty(.param .u64 p)
{
  ret;
}
\x00"""

C_LOOPS = r"""
#include <time.h>
#include <stdint.h>
static long long now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
typedef int (*ctx_t)(void **);
typedef int (*attr_t)(int *, int, int);
typedef int (*rec_t)(void *, void *);
typedef int (*launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **, void **);
long long loop_ctx(void *f, long n) { void *c; long long t = now(); for (long i = 0; i < n; i++) ((ctx_t)f)(&c); return now() - t; }
long long loop_attr(void *f, long n) { int v; long long t = now(); for (long i = 0; i < n; i++) ((attr_t)f)(&v, 16, 0); return now() - t; }
long long loop_rec(void *f, long n, void *ev, void *s) { long long t = now(); for (long i = 0; i < n; i++) ((rec_t)f)(ev, s); return now() - t; }
long long loop_launch(void *f, long n, void *fn, void **params) { long long t = now(); for (long i = 0; i < n; i++) ((launch_t)f)(fn, 1, 1, 1, 32, 1, 1, 0, 0, params, 0); return now() - t; }
"""


def build_loops() -> ctypes.CDLL:
    d = tempfile.mkdtemp()
    src, lib = os.path.join(d, "loops.c"), os.path.join(d, "libloops.so")
    with open(src, "w") as fh:
        fh.write(C_LOOPS)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", lib, src], check=True)
    return ctypes.CDLL(lib)


def sub_time(code: str, runs: int = 7) -> float:
    """Median seconds of a fresh interpreter running ``code`` (printing its own elapsed time); -1 on failure."""
    vals = []
    for _ in range(runs):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env())
        if r.returncode != 0:
            print(r.stderr[-2000:], file=sys.stderr)
            return -1.0
        vals.append(float(r.stdout.strip().splitlines()[-1]))
    vals.sort()
    return vals[len(vals) // 2]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    from cuda.bindings import driver as cb

    drv = Driver.load()
    from cuentry.calls import backend

    res: dict[str, object] = {"backend": backend()["name"], "date": time.strftime("%Y-%m-%d"), "python": platform.python_version(),
                              "driver_version": drv.driver_version, "driver": portable(drv.path),
                              "cuda_bindings": getattr(sys.modules.get("cuda.bindings"), "__version__", "?")}
    try:
        res["gpu"] = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                    capture_output=True, text=True).stdout.strip()
    except OSError:
        res["gpu"] = "?"
    cb.cuInit(0)
    ctxo = out("CUcontext")
    drv.call("cuDevicePrimaryCtxRetain", 7000).checked(ctxo, 0)
    drv.call("cuCtxSetCurrent", 4000).checked(ctxo[0])
    loops = build_loops()
    for name in ("loop_ctx", "loop_attr", "loop_rec", "loop_launch"):
        getattr(loops, name).restype = ctypes.c_longlong
    t = Table("bench", [required("cuCtxGetCurrent", 4000), required("cuDeviceGetAttribute", 2000),
                        required("cuEventRecord", 2000), required("cuLaunchKernel", 4000),
                        required("cuEventCreate", 2000), required("cuModuleLoadData", 2000),
                        required("cuModuleGetFunction", 2000)], stream="legacy", source=drv).resolve()
    ev = out("CUevent")
    t.cuEventCreate.checked(ev, 2)  # CU_EVENT_DISABLE_TIMING
    mod, fn = out("CUmodule"), out("CUfunction")
    t.cuModuleLoadData.checked(mod, EMPTY_PTX)
    t.cuModuleGetFunction.checked(fn, mod[0], b"empty")
    params = kernel_params(("unsigned long long", 0))
    paddr = params.address
    stream = 0

    rows = []

    def measure(label, *calls, n: int = N) -> None:  # type: ignore[no-untyped-def]
        try:
            _measure(label, *calls, n=n)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports what failed and goes on
            rows.append({"call": label, "error": f"{type(exc).__name__}: {exc}"})

    def _measure(label: str, entry_call, cffi_call, ctypes_call, cb_call, c_loop, n: int = N) -> None:  # type: ignore[no-untyped-def]
        def loop(f):  # type: ignore[no-untyped-def]
            def run() -> None:
                for _ in range(n):
                    f()
            return run
        lam = lambda: None  # noqa: E731
        thunks = {"cuentry": loop(entry_call), "cffi": loop(cffi_call or ctypes_call), "ctypes": loop(ctypes_call),
                  "cuda_bindings": loop(cb_call), "empty_lambda": loop(lam)}
        r = {"call": label, **race(thunks, n, 7)}
        r["c_loop"] = min(c_loop(n) / n for _ in range(5))
        r = {k: (round(v, 1) if isinstance(v, float) else v) for k, v in r.items()}
        r["vs_cuda_bindings"] = round(r["cuentry"] / r["cuda_bindings"], 3)  # type: ignore[operator]
        r["vs_fastest_raw"] = round(r["cuentry"] / min(r["cffi"], r["ctypes"]), 3)  # type: ignore[operator,type-var]
        r["vs_empty_lambda"] = round(r["cuentry"] / r["empty_lambda"], 2)  # type: ignore[operator]
        rows.append(r)

    # cuCtxGetCurrent
    f = t.cuCtxGetCurrent
    p = out("CUcontext")
    cp = ffi.new("uintptr_t[1]") if ffi else None
    raw = ffi.cast("int(*)(void *)", f.address) if ffi else None
    ct = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)(f.address)
    cref = ctypes.byref(ctypes.c_void_p())
    measure("cuCtxGetCurrent", lambda: f(p), raw and (lambda: raw(cp)), lambda: ct(cref), lambda: cb.cuCtxGetCurrent(),
            lambda n: loops.loop_ctx(ctypes.c_void_p(f.address), n))
    # cuDeviceGetAttribute (MULTIPROCESSOR_COUNT of device 0)
    g = t.cuDeviceGetAttribute
    iv = out("int")
    ci = ffi.new("int[1]") if ffi else None
    raw2 = ffi.cast("int(*)(void *, int, int)", g.address) if ffi else None
    ct2 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int)(g.address)
    iref = ctypes.byref(ctypes.c_int())
    attr = cb.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
    dev0 = cb.CUdevice(0)
    measure("cuDeviceGetAttribute", lambda: g(iv, 16, 0), raw2 and (lambda: raw2(ci, 16, 0)), lambda: ct2(iref, 16, 0),
            lambda: cb.cuDeviceGetAttribute(attr, dev0), lambda n: loops.loop_attr(ctypes.c_void_p(g.address), n))
    # cuEventRecord on the legacy default stream
    h = t.cuEventRecord
    evh = ev[0]
    raw3 = ffi.cast("int(*)(uintptr_t, uintptr_t)", h.address) if ffi else None
    ct3 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(h.address)
    cbev, cbs = cb.CUevent(evh), cb.CUstream(stream)
    measure("cuEventRecord", lambda: h(evh, stream), raw3 and (lambda: raw3(evh, stream)), lambda: ct3(evh, None),
            lambda: cb.cuEventRecord(cbev, cbs),
            lambda n: loops.loop_rec(ctypes.c_void_p(h.address), n, ctypes.c_void_p(evh), None), n=20_000)
    # cuLaunchKernel, 11 arguments, an empty kernel
    k = t.cuLaunchKernel
    fnh = fn[0]
    raw4 = ffi.cast("int(*)(uintptr_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,"
                    " uintptr_t, void *, void *)", k.address) if ffi else None
    cparams = ffi.cast("void *", paddr) if ffi else None
    ct4 = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *([ctypes.c_uint] * 7), ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_void_p)(k.address)
    cbf = cb.CUfunction(fnh)
    measure("cuLaunchKernel", lambda: k(fnh, 1, 1, 1, 32, 1, 1, 0, 0, params, None),
            raw4 and (lambda: raw4(fnh, 1, 1, 1, 32, 1, 1, 0, 0, cparams, ffi.NULL)),
            lambda: ct4(fnh, 1, 1, 1, 32, 1, 1, 0, None, paddr, None),
            lambda: cb.cuLaunchKernel(cbf, 1, 1, 1, 32, 1, 1, 0, cbs, paddr, 0),
            lambda n: loops.loop_launch(ctypes.c_void_p(k.address), n, ctypes.c_void_p(fnh),
                                        ctypes.c_void_p(paddr)), n=20_000)
    drv.call("cuCtxSynchronize", 2000).checked()
    res["per_call_ns"] = rows

    # resolution and import, each in a fresh interpreter
    res["cuda_bindings_first_call_s"] = sub_time(
        "import time; from cuda.bindings import driver as d; t=time.perf_counter(); d.cuInit(0); d.cuDriverGetVersion();"
        " print(time.perf_counter()-t)")
    res["cuentry_resolve_catalog_s"] = sub_time(
        "import time; t=time.perf_counter(); import cuentry; from cuentry.catalog import catalog; d=cuentry.Driver.load();"
        " c=catalog(); n=0\n"
        "for s in c.symbols():\n"
        "    try: d.resolve(s, c.newest(s).version, 'legacy'); n+=1\n"
        "    except cuentry.ResolutionError: pass\n"
        "print(time.perf_counter()-t)")
    res["cuentry_table_100_s"] = sub_time(
        "import time; t=time.perf_counter(); import cuentry; from cuentry.catalog import catalog; d=cuentry.Driver.load();"
        " c=catalog(); es=[cuentry.required(s, c.newest(s).version) for s in c.symbols()"
        " if c.newest(s).version <= d.driver_version and s != 'cuEventCreateFromEGLSync' and 'linux' in c.newest(s).platforms][:100];"
        " cuentry.Table('b', es, stream='legacy', source=d).resolve(); print(time.perf_counter()-t)")
    res["import_cuda_bindings_driver_s"] = sub_time(
        "import time; t=time.perf_counter(); import cuda.bindings.driver; print(time.perf_counter()-t)")
    res["import_cuentry_lookup_s"] = sub_time(
        "import time; t=time.perf_counter(); import cuentry; cuentry.get_catalog().bind('cuMemAlloc', 3020);"
        " print(time.perf_counter()-t)")
    res["import_cuentry_driver_s"] = sub_time(
        "import time; t=time.perf_counter(); import cuentry.driver; print(time.perf_counter()-t)")
    n_cat = len(catalog().symbols())
    res["catalog_symbols"] = n_cat
    res["ratios"] = {
        "resolve_catalog_vs_cuda_bindings_init": round(res["cuentry_resolve_catalog_s"] / res["cuda_bindings_first_call_s"], 3),  # type: ignore[operator]
        "table_100_vs_cuda_bindings_init": round(res["cuentry_table_100_s"] / res["cuda_bindings_first_call_s"], 3),  # type: ignore[operator]
        "import_lookup_vs_cuda_bindings_import": round(res["import_cuentry_lookup_s"] / res["import_cuda_bindings_driver_s"], 3),  # type: ignore[operator]
    }
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        for r in rows:
            print(r)
        for k2, v in res.items():
            if k2 != "per_call_ns":
                print(k2, v)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
