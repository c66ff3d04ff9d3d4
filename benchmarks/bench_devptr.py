"""Per-call cost of a device pointer argument: a plain int against framework-like objects (issue 22).

``cuMemsetD8(dst, 0, 16)`` through cuentry's typed call with ``dst`` as an int, a
``__cuda_array_interface__`` object, a DLPack object (both made here, as torch/CuPy export them), and,
where importable with a GPU, a real torch CUDA tensor; against a hand-written ctypes call of the same
pointer and, where cuda.bindings imports and initialises, ``cuda.bindings.driver.cuMemsetD8`` with a
``CUdeviceptr`` (skipped otherwise). Every column is interleaved in one run; the ratios are to the
ctypes call and to cuda.bindings of the same run.

On the fake driver (its cuMemsetD8 returns at once, CUDA_ERROR_NOT_SUPPORTED) only the call layer is
measured; on a GPU the memset itself is in every column.

    python benchmarks/bench_devptr.py [--json] [--driver PATH] [--inner N]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import add_src, portable, race  # noqa: E402

add_src()


def _objects(base: int) -> dict[str, Any]:
    class CAI:
        def __init__(self, ptr: int) -> None:
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (16,), "typestr": "|u1",
                                             "strides": None, "version": 3}

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from tests.test_calls_devmem import DL

    return {"int": base, "__cuda_array_interface__ object": CAI(base), "DLPack object": DL(base)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--driver")
    ap.add_argument("--inner", type=int, default=20000)
    args = ap.parse_args()
    from cuentry import Driver, out

    drv = Driver.load(args.driver) if args.driver else Driver.load()
    ctx = out("CUcontext")
    drv.call("cuDevicePrimaryCtxRetain", 7000)(ctx, 0)
    drv.call("cuCtxSetCurrent", 4000)(ctx[0])
    d = out("CUdeviceptr")
    rc = drv.call("cuMemAlloc", 3020)(d, 1 << 20)
    if rc:
        raise SystemExit(f"cuMemAlloc failed: {rc}")
    base = int(d[0])
    memset = drv.call("cuMemsetD8", 3020)
    raw = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t)(memset.address)
    inner = args.inner
    rng = range(inner)
    thunks: dict[str, Any] = {}

    def loop(fn: Any, *a: Any) -> Any:
        def run() -> None:
            for _ in rng:
                fn(*a)
        return run

    thunks["raw ctypes (int)"] = loop(raw, base, 0, 16)
    for name, obj in _objects(base).items():
        thunks[f"cuentry ({name})"] = loop(memset, obj, 0, 16)
    try:
        import torch

        if torch.cuda.is_available() and not drv.fake:
            t = torch.zeros(16, dtype=torch.uint8, device="cuda")
            thunks["cuentry (torch CUDA tensor)"] = loop(memset, t, 0, 16)
    except ImportError:
        pass
    try:
        from cuda.bindings import driver as cb

        if not drv.fake and int(cb.cuInit(0)[0]) == 0:
            thunks["cuda.bindings (CUdeviceptr)"] = loop(cb.cuMemsetD8, cb.CUdeviceptr(base), 0, 16)
    except ImportError:
        pass
    best = race(thunks, inner)
    drv.call("cuMemFree", 3020)(base)
    rows = {k: round(v, 1) for k, v in best.items()}
    ref = best["raw ctypes (int)"]
    cb_ref = best.get("cuda.bindings (CUdeviceptr)")
    report = {"backend": memset.backend, "driver": portable(drv.library.path()), "fake": drv.fake, "ns_per_call": rows,
              "over_ctypes": {k: round(v / ref, 3) for k, v in best.items()},
              "over_cuda_bindings": {k: round(v / cb_ref, 3) for k, v in best.items()} if cb_ref else None}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"backend {report['backend']}, driver {report['driver']}")
        for k, v in rows.items():
            extra = f"  / cuda.bindings {v / cb_ref:.2f}" if cb_ref else ""
            print(f"  {k:40s} {v:9.1f} ns  / ctypes {v / ref:.2f}{extra}")
        if not cb_ref:
            print("  (cuda.bindings baseline skipped: not importable, or no real driver)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
