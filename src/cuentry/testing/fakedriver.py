"""A fake CUDA driver (and runtime) for tests on machines without a GPU.

[build][cuentry.testing.fakedriver.build] generates C from the catalog and compiles it with the system C
compiler into a shared library that exports the real driver's names and answers
`cuGetProcAddress` the way a real driver does (checked against a real 13.0
driver's answers in the test suite):

* the highest ABI at or below the requested version, among the ABIs the pretended
  driver knows (those whose version is at or below the driver version);
* flags 2 (per-thread) picks `_ptds`/`_ptsz` variants where the symbol has any,
  flags 0, 1 and 3 the legacy ones, other flags give CUDA_ERROR_INVALID_VALUE;
* a known symbol asked below its first ABI: CUDA_SUCCESS + VERSION_NOT_SUFFICIENT;
  unknown, wrongly cased or suffixed names: CUDA_SUCCESS + SYMBOL_NOT_FOUND;
* a version above the driver's: CUDA_ERROR_INVALID_VALUE, status untouched;
* NULL outputs: CUDA_ERROR_INVALID_VALUE (the real driver crashes; cuentry never
  passes NULL).

Variants: `full` (12.0+: v1 and v2), `v1` (an 11.3-11.8 driver: only the v1
`cuGetProcAddress`, which answers CUDA_ERROR_NOT_FOUND), `nogpa` (a pre-11.3
driver without `cuGetProcAddress`), `stub` (the toolkit's stub libcuda: every
call gives CUDA_ERROR_STUB_LIBRARY).

Run-time knobs (environment, read at every call): `CUENTRY_FAKE_DRIVER_VERSION`
(default 13000), `CUENTRY_FAKE_DEVICE_COUNT` (default 1),
`CUENTRY_FAKE_RUNTIME_VERSION` (default 13000).

A few functions really work, so typed calls are tested end to end: cuInit,
cuDriverGetVersion, cuDeviceGetCount, cuDeviceGet, cuDeviceGetName,
cuDeviceGetUuid (v1 and v2 answer different bytes), cuDeviceGetAttribute,
cuCtxGetCurrent/cuCtxSetCurrent (per thread), cuDevicePrimaryCtxRetain/Release,
cuGetErrorName/cuGetErrorString, cuMemAlloc_v2/cuMemFree_v2 (host memory),
cuMemcpyHtoD_v2/cuMemcpyDtoH_v2 (and the _ptds ones). The rest return
CUDA_ERROR_NOT_SUPPORTED.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..catalog import Catalog, catalog
from ..errors import BuildError
from ..toolchain import c_string, compile_cached, find_compiler
from .fakeenv import ENV_KNOBS as ENV_KNOBS  # re-exported
from .fakeenv import VARIANTS as VARIANTS  # re-exported
from .fakeenv import check_env as check_env  # re-exported
from .fakeenv import check_variant as check_variant  # re-exported
from .fakeenv import variant_for as variant_for  # re-exported

__all__ = ["NOT_ON_LINUX", "TEMPLATE", "build", "source"]


# Typedef'd, but not exported by a real Linux driver (measured on 580.159.04).
NOT_ON_LINUX = frozenset({"cuEventCreateFromEGLSync"})

# Exported names with a real implementation below.
_IMPLEMENTED = {
    "cuInit", "cuDriverGetVersion", "cuGetProcAddress", "cuGetProcAddress_v2", "cuDeviceGetCount",
    "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetUuid", "cuDeviceGetUuid_v2", "cuDeviceGetAttribute",
    "cuCtxGetCurrent", "cuCtxSetCurrent", "cuCtxCreate_v2", "cuCtxCreate_v3", "cuCtxCreate_v4",
    "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuCtxSynchronize",
    "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2",
    "cuGetErrorName", "cuGetErrorString", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH_v2_ptds", "cuMemGetAddressRange_v2",
    "cuPointerGetAttribute", "cuStreamCreate", "cuStreamCreateWithPriority", "cuStreamDestroy_v2",
    "cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuStreamQuery", "cuStreamQuery_ptsz",
}

_ERRORS = [
    (0, "CUDA_SUCCESS", "no error"),
    (1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"),
    (2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"),
    (3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"),
    (34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"),
    (100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"),
    (101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"),
    (201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"),
    (500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"),
    (801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"),
    (999, "CUDA_ERROR_UNKNOWN", "unknown error"),
]

# The C lives in a real file beside this module; source() fills in its three placeholders.
TEMPLATE = "fake_cuda.c.in"


def _template() -> str:
    return (Path(__file__).resolve().parent / TEMPLATE).read_text(encoding="utf-8")


def _exports(cat: Catalog, variant: str) -> list[Any]:
    """The catalog's ABIs a real Linux driver of `variant`'s kind exports, in byte order of their names."""
    abis = [a for a in cat if "linux" in a.platforms and a.exported and a.symbol not in NOT_ON_LINUX]
    if variant != "full":
        abis = [a for a in abis if a.exported != "cuGetProcAddress_v2"]
    if variant == "nogpa":
        abis = [a for a in abis if a.symbol != "cuGetProcAddress"]
    abis.sort(key=lambda a: (a.symbol.encode(), a.version, a.variant))  # byte order, for the C binary search
    return abis


def _fill(text: str, fills: dict[str, str]) -> str:
    """Each placeholder line of the template replaced; a template without exactly one of each is damaged."""
    for key, value in fills.items():
        if text.count(f"\n{key}\n") != 1:
            raise BuildError(f"the fake driver template {TEMPLATE} has no single {key} line: the package is damaged",
                             hint="reinstall cuentry")
        text = text.replace(f"\n{key}\n", f"\n{value}\n")
    return text


def source(cat: Catalog | None = None, variant: str = "full") -> str:
    """The C source of the fake driver for `variant`: the template with the catalog's exports filled in."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown fake driver variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    abis = _exports(catalog() if cat is None else cat, variant)
    names = sorted({a.exported for a in abis})
    # The implemented functions are defined after the table uses them: DECLS declares them first.
    # cuGetProcAddress(_v2) appear in the table; the template defines them.
    decls = [f"FAKE_DECLARE({n})" for n in names if n in _IMPLEMENTED]
    decls += [f"FAKE_NOT_SUPPORTED({n})" for n in names if n not in _IMPLEMENTED]
    rows = [f"    {{{c_string(a.symbol)}, {a.version}, {1 if a.variant else 0}, (void *)&{a.exported}}}," for a in abis]
    errors = [f"    {{{c}, {c_string(n)}, {c_string(t)}}}," for c, n, t in _ERRORS]
    return _fill(_template(), {"@DECLS@": "\n".join(decls), "@ERRORS@": "\n".join(errors), "@ABIS@": "\n".join(rows)})


# The fake driver's run-time knobs: (variable, smallest valid value). The C side reads them at every
# call with atoi, which turns a typo into 0; cuentry checks them when it loads the fake driver.
# ENV_KNOBS and check_env live in .fakeenv (the loader checks the knobs without importing the builder)


_DEFINES = {"full": (), "v1": ("-DFAKE_V1",), "nogpa": ("-DFAKE_NOGPA",), "stub": ("-DFAKE_STUB",)}


def build(dest: str | os.PathLike[str] | None = None, variant: str = "full", *, cc: str | None = None) -> Path:
    """Compile the fake driver for `variant` and return the library's path.

    The library is kept in cuentry's per-user build cache (`cuentry.buildcache`:
    a 0700 directory of this user, entries keyed by the source's hash and verified
    against the library's own hash before every use), or in `dest`, which must be
    a directory no other user can write. The stub variant lies in a `stubs`
    directory, like the toolkit's stub, which is how real stubs are recognised.
    Raises [BuildError][cuentry.errors.BuildError] (no compiler, a compile error, an unsafe `dest`).
    """
    src = source(variant=variant)
    defines = list(_DEFINES[variant])
    what = "build the fake driver"
    compiler = find_compiler(cc, what=what)  # cuentry's one compiler discovery (cuentry.toolchain)
    # -Bsymbolic: the library's calls to its own functions stay inside it, as in a real driver, whatever
    # else the process loaded with RTLD_GLOBAL (a real libcudart) or interposed (cuentry trace).
    flags = ["-shared", "-fPIC", "-Wl,-Bsymbolic", "-O1", "-w"]
    filename = "stubs/libcuda.so.1" if variant == "stub" else "libcuda.so.1"
    return compile_cached(f"fake-driver-{variant}", src, filename=filename, source_name="fake_cuda.c", flags=flags,
                          libs=defines, cc=compiler, root=dest, what=what, failed="building the fake driver failed",
                          hint=f"check the C compiler works: {compiler[0]} -shared -fPIC -o /tmp/x.so x.c "
                               "(or set CC to one that does)")
