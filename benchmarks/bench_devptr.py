"""Per-call cost of a device pointer argument: a plain int against framework objects (issues 22 and 41).

``cuMemsetD8(dst, 0, 16)`` through cuentry's typed call with ``dst`` as an int and as device arrays:
``__cuda_array_interface__`` objects (a dict attribute, and a property that builds it as torch and CuPy do), a
DLPack object (made here, as the tests export one), and, where importable on a GPU, a torch CUDA tensor, a CuPy
array and a JAX array (DLPack only); against a hand-written ctypes call and, where cuda.bindings imports,
``cuda.bindings.driver.cuMemsetD8`` with a ``CUdeviceptr``.

Issue 41's goal: a device array argument costs at most 1.5x the producer's own protocol call, measured in the
same run: reading ``__cuda_array_interface__``, or ``__dlpack_device__()`` and ``__dlpack__(stream=1,
max_version=(1, 0))`` (the capsule dropped, as a call drops it). Two ratios per object: ``call/protocol`` (the
whole call with the object, over the protocol call alone) and ``argument/protocol`` (what the object adds to the
call with an int address, over the protocol call). All in CPU time (this thread's), interleaved rounds.

On the fake driver (its cuMemsetD8 returns at once) only the call layer is measured; on a GPU the memset
itself is in every column.

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
from _common import add_src, portable, race_cpu  # noqa: E402

add_src()


def _objects(base: int) -> dict[str, tuple[Any, Any]]:
    """name -> (the object, its producer's protocol call alone)."""

    class CAI:  # a dict attribute
        def __init__(self, ptr: int) -> None:
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (16,), "typestr": "|u1",
                                             "strides": None, "version": 3}

    class CAIProperty:  # built on each read, as torch and CuPy do
        def __init__(self, ptr: int) -> None:
            self.ptr = ptr

        @property
        def __cuda_array_interface__(self) -> dict[str, Any]:
            return {"data": (self.ptr, False), "shape": (16,), "typestr": "|u1", "strides": None, "version": 3,
                    "stream": 1}

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from tests.test_calls_devmem import DL

    def cai(o: Any) -> Any:
        return lambda: o.__cuda_array_interface__

    def dlpack(o: Any) -> Any:
        def run() -> None:
            o.__dlpack_device__()
            o.__dlpack__(stream=1, max_version=(1, 0))
        return run

    got: dict[str, tuple[Any, Any]] = {}
    for name, o, proto in (("__cuda_array_interface__ attribute", CAI(base), cai),
                           ("__cuda_array_interface__ property", CAIProperty(base), cai),
                           ("DLPack object", _Fresh(DL, base), dlpack)):
        got[name] = (o, proto(o))
    return got


class _Fresh:
    """The tests' DLPack exporter, made anew every 1000 exports (it keeps each export's memory)."""

    def __init__(self, cls: Any, base: int) -> None:
        self.cls, self.base, self.n, self.o = cls, base, 0, cls(base)

    def __dlpack_device__(self) -> Any:
        return self.o.__dlpack_device__()

    def __dlpack__(self, **kw: Any) -> Any:
        self.n += 1
        if self.n % 1000 == 0:
            self.o = self.cls(self.base)
        return self.o.__dlpack__(**kw)


def _frameworks(drv: Any) -> dict[str, tuple[Any, Any]]:
    """Real producers on a GPU: a torch CUDA tensor, a CuPy array, a JAX array (DLPack alone), where importable."""
    got: dict[str, tuple[Any, Any]] = {}
    if drv.fake:
        return got
    try:
        import torch

        if torch.cuda.is_available():
            t = torch.zeros(16, dtype=torch.uint8, device="cuda")
            got["torch CUDA tensor"] = (t, lambda: t.__cuda_array_interface__)

            class TorchDLPack:  # the same tensor through DLPack alone
                def __dlpack_device__(self) -> Any:
                    return t.__dlpack_device__()

                def __dlpack__(self, **kw: Any) -> Any:
                    return t.__dlpack__(**kw)

            w = TorchDLPack()

            def torch_dl() -> None:
                w.__dlpack_device__()
                w.__dlpack__(stream=1, max_version=(1, 0))

            got["torch CUDA tensor, DLPack"] = (w, torch_dl)
    except ImportError:
        pass
    try:
        import cupy

        c = cupy.zeros(16, dtype=cupy.uint8)
        got["CuPy array"] = (c, lambda: c.__cuda_array_interface__)
    except Exception:
        pass
    try:
        import jax.numpy as jnp

        j = jnp.zeros(16, dtype=jnp.uint8)
        if "cuda" in str(j.devices()).lower() or "gpu" in str(j.devices()).lower():
            def jax_dl() -> None:
                j.__dlpack_device__()
                j.__dlpack__(stream=1, max_version=(1, 0))

            got["JAX array (DLPack)"] = (j, jax_dl)
    except Exception:
        pass
    return got


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
    thunks["cuentry (int)"] = loop(memset, base, 0, 16)
    objects = {**_objects(base), **_frameworks(drv)}
    skipped: dict[str, str] = {}
    for name, (obj, proto) in list(objects.items()):
        try:
            same = memset(obj, 0, 16) == memset(base, 0, 16)
        except Exception as exc:  # e.g. a read-only export (JAX): the memset refuses it
            same, why = False, f"{type(exc).__name__}: {exc}"[:300]
        else:
            why = "the call does not answer as with the int address"
        if not same:
            skipped[name] = why
            del objects[name]
            continue
        thunks[f"cuentry ({name})"] = loop(memset, obj, 0, 16)

        def protocol(p: Any = proto) -> None:
            for _ in rng:
                p()

        thunks[f"protocol ({name})"] = protocol
    try:
        from cuda.bindings import driver as cb

        if not drv.fake and int(cb.cuInit(0)[0]) == 0:
            thunks["cuda.bindings (CUdeviceptr)"] = loop(cb.cuMemsetD8, cb.CUdeviceptr(base), 0, 16)
    except ImportError:
        pass
    best = race_cpu(thunks, inner)
    drv.call("cuMemFree", 3020)(base)
    ref, one = best["raw ctypes (int)"], best["cuentry (int)"]
    cb_ref = best.get("cuda.bindings (CUdeviceptr)")
    goal = {}
    for name in objects:
        call, proto_ns = best[f"cuentry ({name})"], best[f"protocol ({name})"]
        goal[name] = {"call_ns": round(call, 1), "protocol_ns": round(proto_ns, 1),
                      "call/protocol": round(call / proto_ns, 2), "argument/protocol": round((call - one) / proto_ns, 2)}
    report = {"backend": memset.backend, "driver": portable(drv.library.path()), "fake": drv.fake, "cpu": True,
              "ns_per_call": {k: round(v, 1) for k, v in best.items()},
              "over_ctypes": {k: round(v / ref, 3) for k, v in best.items()},
              "over_cuda_bindings": {k: round(v / cb_ref, 3) for k, v in best.items()} if cb_ref else None,
              "against_the_protocol": goal, "skipped": skipped}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"backend {report['backend']}, driver {report['driver']} (CPU ns per call)")
        for k, v in best.items():
            extra = f"  / cuda.bindings {v / cb_ref:.2f}" if cb_ref else ""
            print(f"  {k:52s} {v:9.1f} ns  / ctypes {v / ref:.2f}{extra}")
        print("  against the producer's own protocol call (goal: at most 1.5x):")
        for name, g in goal.items():
            print(f"    {name:44s} call/protocol {g['call/protocol']:.2f}  argument/protocol {g['argument/protocol']:.2f}")
        for name, why in skipped.items():
            print(f"    {name}: skipped ({why})")
        if not cb_ref:
            print("  (cuda.bindings baseline skipped: not importable, or no real driver)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
