"""The GIL policy of both call backends: which calls keep the GIL, decided by the catalog's function groups.

The compiled backend releases the GIL around a call in C where `holds_gil` says no; the pure
backend calls through a `ctypes.PYFUNCTYPE` prototype where it says yes, `CFUNCTYPE` elsewhere.
"""

from __future__ import annotations

__all__ = ["GIL_GROUPS", "GIL_RELEASING_GETTERS", "holds_gil"]


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
