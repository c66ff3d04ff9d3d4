"""The compiled backend: callers of the `cuentry.calls._fastcall` extension.

Which backend a process uses is decided once, in `cuentry.calls.choice` (`$CUENTRY_BACKEND`,
read at import); the names of that choice are re-exported here for callers of
this module.

A compiled caller converts in C what the contract accepts in its common forms
(exact ints in range, None, cuentry's Out objects of the right element type,
bytes for const inputs) and hands anything else, keyword arguments included, to
`Contract.convert`, then makes the call itself with the converted values:
one conversion contract, two speeds.
"""

from __future__ import annotations

from .choice import BACKEND_ENV, MODES, backend, backend_mode, extension, extension_if_wanted
from .shapes import SLOTS, shape_code

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..errors import CudaError
    from .contract import Contract
    from .ffi import Guard

__all__ = ["BACKEND_ENV", "GIL_GROUPS", "GIL_RELEASING_GETTERS", "MODES", "backend", "backend_mode", "extension",
           "extension_if_wanted", "holds_gil", "make", "shape_index"]


# The GIL policy (issue 32.5), by the catalog's function groups. A call keeps the GIL only where it cannot
# block: a getter or a query (by name: `Get`, `Query`) of a group whose getters read state the driver holds
# in host memory. Releasing and retaking the GIL costs about as much as such a call (benchmarks/bench_calls.py
# measures it); any call that may wait (synchronise, copy, allocate, launch into a full queue, load or JIT a
# module, talk to another API or process) releases it, so other Python threads run meanwhile. docs/calls.md
# lists this table; tests/test_calls.py checks that every group of the shipped catalog is in it.
GIL_GROUPS: dict[str, str] = {
    # getters and queries keep the GIL: they read the driver's own records
    **dict.fromkeys((
        "CUDA_CTX", "CUDA_CTX_DEPRECATED", "CUDA_DEVICE", "CUDA_DEVICE_DEPRECATED", "CUDA_DRIVER_ENTRY_POINT",
        "CUDA_ERROR", "CUDA_EVENT", "CUDA_EXEC", "CUDA_GRAPH", "CUDA_GREEN_CONTEXTS", "CUDA_MALLOC_ASYNC",
        "CUDA_MEM", "CUDA_MULTICAST", "CUDA_PEER_ACCESS", "CUDA_PRIMARY_CTX", "CUDA_STREAM", "CUDA_SURFOBJECT",
        "CUDA_SURFREF_DEPRECATED", "CUDA_TEXOBJECT", "CUDA_TEXREF_DEPRECATED", "CUDA_UNIFIED", "CUDA_VA",
        "CUDA_VERSION", "CUDA_CLIQUE", "CUDA_COREDUMP", "CUDA_LOGICAL_ENDPOINT", ""), "getters"),
    # every call releases the GIL: a getter may load (and JIT) a lazily loaded module
    "CUDA_MODULE": "all", "CUDA_MODULE_DEPRECATED": "all", "CUDA_LIBRARY": "all",
    # every call releases the GIL: it waits on another graphics or interop API
    "CUDA_EGL": "all", "CUDA_GL": "all", "CUDA_GL_DEPRECATED": "all", "CUDA_GRAPHICS": "all", "CUDA_VDPAU": "all",
    "CUDA_EXTRES_INTEROP": "all",
    # every call releases the GIL: process-wide state (checkpoints), initialisation, profiler, logs, the rest
    "CUDA_CHECKPOINT": "all", "CUDA_INITIALIZE": "all", "CUDA_PROFILER": "all", "CUDA_PROFILER_DEPRECATED": "all",
    "CUDA_LOGS": "all", "CUDA_EXEC_DEPRECATED": "all", "CUDA_FABRIC_COPY": "all", "CUDA_MEMOP": "all",
    "CUDA_OCCUPANCY": "all", "CUDA_TENSOR_MEMORY": "all",
}
# Getters of "getters" groups that may still block, each with why.
GIL_RELEASING_GETTERS: dict[str, str] = {
    "cuIpcGetMemHandle": "asks the OS for a shareable handle",
    "cuIpcGetEventHandle": "asks the OS for a shareable handle",
    "cuMemGetHandleForAddressRange": "asks the OS for a shareable handle",
    "cuMemGetInfo": "may wait for pending frees to be counted",
    "cuDeviceGetByPCIBusId": "may enumerate devices",
    "cuDeviceGetNvSciSyncAttributes": "asks NvSciSync",
}


def holds_gil(symbol: str, group: str | None = None) -> bool:
    """Whether a call of `symbol` keeps the GIL, on either backend (of catalog group `group`; looked up in the
    shipped catalog when not given): see GIL_GROUPS. An unknown group releases it."""
    if group is None:
        from ..catalog import catalog

        cat = catalog()
        group = cat.newest(symbol).group if symbol in cat else None
    policy = GIL_GROUPS.get(group or "")
    if policy != "getters" or symbol in GIL_RELEASING_GETTERS:
        return False
    return "Get" in symbol or symbol.endswith("Query")


_SHAPE_INDEX: dict[str, int] = {}
_BY_TYPES: dict[tuple[str, ...], tuple[int, str] | None] = {}


def shape_index(ext: Any, ctypes_: tuple[str, ...]) -> tuple[int, str] | None:
    """(the extension's case number, slot letters) for a shape, or None when it has none."""
    if ctypes_ in _BY_TYPES:
        return _BY_TYPES[ctypes_]
    if not _SHAPE_INDEX:
        _SHAPE_INDEX.update({c: i for i, c in enumerate(ext.SHAPES.split(","))})
    code = shape_code(ctypes_)
    idx = _SHAPE_INDEX.get(code) if code else None
    got = _BY_TYPES[ctypes_] = (idx, "".join(SLOTS[t] for t in ctypes_)) if idx is not None else None
    return got


def make(ext: Any, c: Contract, address: int, guard: Guard,
         err: Callable[[int], CudaError]) -> tuple[Any, Any] | None:
    """(call, checked) compiled callers, or None when the extension has no case for this shape."""
    shape = shape_index(ext, c.ctypes)
    if shape is None:
        return None
    idx, slots = shape
    nogil = int(not holds_gil(c.abi.symbol, c.abi.group or ""))
    symbol = c.abi.symbol

    def on_closed() -> None:
        raise guard.closed_error(symbol)

    _hook_fork(ext)
    from .devmem import synchroniser

    sync = synchroniser(guard) if c.devptrs else None
    made = []
    for check in (0, 1):
        caller = ext.Caller(address, idx, slots, c.checks, c.elems, guard.state, on_closed, check, err, nogil)
        caller._slow(_slow(c.convert, sync))
        made.append(caller)
    return made[0], made[1]


_FORK_HOOKED: list[bool] = []


def _hook_fork(ext: Any) -> None:
    """In a forked child, the extension recounts the calls the forking thread still has in flight (a fork
    from a callback inside a call). Registered after the guards' own reset (ffi's, at its import), so it
    runs after it."""
    import os

    if not _FORK_HOOKED and hasattr(os, "register_at_fork"):
        _FORK_HOOKED.append(True)
        os.register_at_fork(after_in_child=ext._after_fork_child)


def _slow(convert: Callable[..., list[Any]],
          sync: Callable[[int], int] | None) -> Callable[..., tuple[list[Any], list[Any]]]:
    """The Python side of a compiled caller: the contract converts (or raises); the caller then calls with the
    converted values while it holds the keep-alives (buffer exports, encoded strings, DLPack capsules)."""

    def slow(*args: Any, **kw: Any) -> tuple[list[Any], list[Any]]:
        keep: list[Any] = []
        return convert(args, kw, keep, sync), keep

    return slow
