"""A fake CUDA driver (and runtime) for tests on machines without a GPU.

:func:`build` generates C from the catalog and compiles it with the system C
compiler into a shared library that exports the real driver's names and answers
``cuGetProcAddress`` the way a real driver does (checked against a real 13.0
driver's answers in the test suite):

* the highest ABI at or below the requested version, among the ABIs the pretended
  driver knows (those whose version is at or below the driver version);
* flags 2 (per-thread) picks ``_ptds``/``_ptsz`` variants where the symbol has any,
  flags 0, 1 and 3 the legacy ones, other flags give CUDA_ERROR_INVALID_VALUE;
* a known symbol asked below its first ABI: CUDA_SUCCESS + VERSION_NOT_SUFFICIENT;
  unknown, wrongly cased or suffixed names: CUDA_SUCCESS + SYMBOL_NOT_FOUND;
* a version above the driver's: CUDA_ERROR_INVALID_VALUE, status untouched;
* NULL outputs: CUDA_ERROR_INVALID_VALUE (the real driver crashes; cuentry never
  passes NULL).

Variants: ``full`` (12.0+: v1 and v2), ``v1`` (an 11.3-11.8 driver: only the v1
``cuGetProcAddress``, which answers CUDA_ERROR_NOT_FOUND), ``nogpa`` (a pre-11.3
driver without ``cuGetProcAddress``), ``stub`` (the toolkit's stub libcuda: every
call gives CUDA_ERROR_STUB_LIBRARY).

Run-time knobs (environment, read at every call): ``CUENTRY_FAKE_DRIVER_VERSION``
(default 13000), ``CUENTRY_FAKE_DEVICE_COUNT`` (default 1),
``CUENTRY_FAKE_RUNTIME_VERSION`` (default 13000).

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
import shutil
import subprocess
from pathlib import Path

from ..buildcache import cached_build
from ..catalog import Catalog, catalog
from ..errors import BuildError
from .fakeenv import ENV_KNOBS as ENV_KNOBS  # re-exported
from .fakeenv import check_env as check_env  # re-exported

VARIANTS = ("full", "v1", "nogpa", "stub")
# Typedef'd, but not exported by a real Linux driver (measured on 580.159.04).
NOT_ON_LINUX = frozenset({"cuEventCreateFromEGLSync"})

# Exported names with a real implementation below.
_IMPLEMENTED = {
    "cuInit", "cuDriverGetVersion", "cuGetProcAddress", "cuGetProcAddress_v2", "cuDeviceGetCount",
    "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetUuid", "cuDeviceGetUuid_v2", "cuDeviceGetAttribute",
    "cuCtxGetCurrent", "cuCtxSetCurrent", "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2",
    "cuGetErrorName", "cuGetErrorString", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2", "cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH_v2_ptds",
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

_PRELUDE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
typedef int CUresult;
#define EXPORT __attribute__((visibility("default")))
#if defined(FAKE_STUB)
#define STUB_GUARD return 34;
#else
#define STUB_GUARD
#endif
static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    return (v && *v) ? atoi(v) : dflt;
}
static int driver_version(void) { return env_int("CUENTRY_FAKE_DRIVER_VERSION", 13000); }
static int initialized = 0;
static __thread uintptr_t current_ctx = 0;
static long gpa_calls = 0;
static char primary_ctx[64];
EXPORT const char cuentryFakeDriver[] = "cuentry fake driver";
EXPORT long cuentryFakeGetProcAddressCalls(void) { return __atomic_load_n(&gpa_calls, __ATOMIC_SEQ_CST); }
EXPORT void cuentryFakeReset(void) { initialized = 0; current_ctx = 0; __atomic_store_n(&gpa_calls, 0, __ATOMIC_SEQ_CST); }
/* A call that takes a while (tests of close() during a call in flight): sleeps ms milliseconds. */
EXPORT CUresult cuentryFakeSleep(unsigned int ms) { struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L}; nanosleep(&t, NULL); return 0; }
"""

_IMPL = r"""
EXPORT CUresult cuInit(unsigned int flags) {
    STUB_GUARD
    if (flags != 0) return 1;
    if (env_int("CUENTRY_FAKE_DEVICE_COUNT", 1) == 0) { initialized = 1; return 100; }
    initialized = 1; return 0;
}
EXPORT CUresult cuDriverGetVersion(int *v) { STUB_GUARD if (!v) return 1; *v = driver_version(); return 0; }
EXPORT CUresult cuDeviceGetCount(int *n) {
    STUB_GUARD if (!n) return 1; if (!initialized) return 3;
    *n = env_int("CUENTRY_FAKE_DEVICE_COUNT", 1); return 0;
}
EXPORT CUresult cuDeviceGet(int *dev, int ordinal) {
    STUB_GUARD if (!dev) return 1; if (!initialized) return 3;
    if (ordinal < 0 || ordinal >= env_int("CUENTRY_FAKE_DEVICE_COUNT", 1)) return 101;
    *dev = ordinal; return 0;
}
EXPORT CUresult cuDeviceGetName(char *name, int len, int dev) {
    STUB_GUARD if (!name || len <= 0) return 1; if (!initialized) return 3;
    if (dev < 0 || dev >= env_int("CUENTRY_FAKE_DEVICE_COUNT", 1)) return 101;
    snprintf(name, (size_t)len, "cuentry fake GPU %d", dev); return 0;
}
static CUresult uuid_common(unsigned char *uuid, int dev, unsigned char tag) {
    STUB_GUARD if (!uuid) return 1; if (!initialized) return 3;
    if (dev < 0 || dev >= env_int("CUENTRY_FAKE_DEVICE_COUNT", 1)) return 101;
    for (int i = 0; i < 16; i++) uuid[i] = (unsigned char)(tag + i + 16 * dev);
    return 0;
}
EXPORT CUresult cuDeviceGetUuid(unsigned char *uuid, int dev) { return uuid_common(uuid, dev, 0x10); }
EXPORT CUresult cuDeviceGetUuid_v2(unsigned char *uuid, int dev) { return uuid_common(uuid, dev, 0xA0); }
EXPORT CUresult cuDeviceGetAttribute(int *value, int attrib, int dev) {
    STUB_GUARD if (!value) return 1; if (!initialized) return 3;
    if (dev < 0 || dev >= env_int("CUENTRY_FAKE_DEVICE_COUNT", 1)) return 101;
    switch (attrib) {
        case 1: *value = 1024; return 0;   /* MAX_THREADS_PER_BLOCK */
        case 16: *value = 132; return 0;   /* MULTIPROCESSOR_COUNT */
        case 75: *value = 9; return 0;     /* COMPUTE_CAPABILITY_MAJOR */
        case 76: *value = 0; return 0;     /* COMPUTE_CAPABILITY_MINOR */
        default: if (attrib <= 0 || attrib > 200) return 1; *value = 0; return 0;
    }
}
EXPORT CUresult cuCtxGetCurrent(uintptr_t *ctx) { STUB_GUARD if (!ctx) return 1; if (!initialized) return 3; *ctx = current_ctx; return 0; }
EXPORT CUresult cuCtxSetCurrent(uintptr_t ctx) { STUB_GUARD if (!initialized) return 3; current_ctx = ctx; return 0; }
EXPORT CUresult cuDevicePrimaryCtxRetain(uintptr_t *ctx, int dev) {
    STUB_GUARD if (!ctx) return 1; if (!initialized) return 3;
    if (dev < 0 || dev >= env_int("CUENTRY_FAKE_DEVICE_COUNT", 1)) return 101;
    *ctx = (uintptr_t)&primary_ctx[dev % 64]; return 0;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(int dev) { STUB_GUARD if (!initialized) return 3; (void)dev; return 0; }
EXPORT CUresult cuMemAlloc_v2(unsigned long long *dptr, size_t size) {
    STUB_GUARD if (!dptr) return 1; if (!initialized) return 3; if (current_ctx == 0) return 201;
    if (size == 0) return 1;
    void *p = malloc(size); if (!p) return 2; *dptr = (unsigned long long)(uintptr_t)p; return 0;
}
EXPORT CUresult cuMemFree_v2(unsigned long long dptr) { STUB_GUARD if (!initialized) return 3; free((void *)(uintptr_t)dptr); return 0; }
static CUresult copy(void *dst, const void *src, size_t n) { STUB_GUARD if (!initialized) return 3; if (current_ctx == 0) return 201; if (!dst || !src) return 1; memcpy(dst, src, n); return 0; }
EXPORT CUresult cuMemcpyHtoD_v2(unsigned long long d, const void *s, size_t n) { return copy((void *)(uintptr_t)d, s, n); }
EXPORT CUresult cuMemcpyDtoH_v2(void *d, unsigned long long s, size_t n) { return copy(d, (const void *)(uintptr_t)s, n); }
EXPORT CUresult cuMemcpyHtoD_v2_ptds(unsigned long long d, const void *s, size_t n) { return copy((void *)(uintptr_t)d, s, n); }
EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *d, unsigned long long s, size_t n) { return copy(d, (const void *)(uintptr_t)s, n); }

struct err { int code; const char *name; const char *text; };
static const struct err errors[] = {
@ERRORS@
};
static const struct err *find_err(int code) {
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) if (errors[i].code == code) return &errors[i];
    return 0;
}
EXPORT CUresult cuGetErrorName(int code, const char **out) {
    if (!out) return 1; const struct err *e = find_err(code); if (!e) { *out = 0; return 1; } *out = e->name; return 0;
}
EXPORT CUresult cuGetErrorString(int code, const char **out) {
    if (!out) return 1; const struct err *e = find_err(code); if (!e) { *out = 0; return 1; } *out = e->text; return 0;
}

struct abi { const char *base; int version; int per_thread; void *fn; };
static const struct abi abis[] = {
@ABIS@
};
static const size_t n_abis = sizeof abis / sizeof abis[0];

/* The table is sorted by base name (byte order): find the symbol's run by binary search. */
static size_t first_of(const char *symbol) {
    size_t lo = 0, hi = n_abis;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(abis[mid].base, symbol) < 0) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* 0: found; 1: symbol not found; 2: version not sufficient. */
static int lookup(const char *symbol, int version, int per_thread, void **out) {
    int drv = driver_version(), known = 0, has_pt = 0;
    if (version < 0) version = 1 << 30;
    size_t start = first_of(symbol), end = start;
    while (end < n_abis && strcmp(abis[end].base, symbol) == 0) end++;
    for (size_t i = start; i < end; i++) {
        if (abis[i].version <= drv) { known = 1; if (abis[i].per_thread) has_pt = 1; }
    }
    if (!known) { *out = 0; return 1; }
    int want = per_thread && has_pt;
    const struct abi *best = 0;
    for (size_t i = start; i < end; i++) {
        const struct abi *a = &abis[i];
        if (a->version <= drv && a->version <= version && a->per_thread == want)
            if (!best || a->version > best->version) best = a;
    }
    if (!best) { *out = 0; return 2; }
    *out = best->fn; return 0;
}

#if !defined(FAKE_NOGPA)
#if !defined(FAKE_V1)
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status) {
    STUB_GUARD
    __atomic_add_fetch(&gpa_calls, 1, __ATOMIC_SEQ_CST);
    if (!symbol || !pfn) return 1;
    if (flags & ~(uint64_t)3) return 1;
    if (version > driver_version()) return 1;
    int st = lookup(symbol, version, flags == 2, pfn);
    if (status) *status = st;
    return 0;
}
#endif
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags) {
    STUB_GUARD
    __atomic_add_fetch(&gpa_calls, 1, __ATOMIC_SEQ_CST);
    if (!symbol || !pfn) return 1;
    if (flags & ~(uint64_t)3) return 1;
    if (version > driver_version()) return 1;
    return lookup(symbol, version, flags == 2, pfn) == 0 ? 0 : 500;
}
#endif

/* The runtime's entry point access, so one fake library can stand in for libcudart too. */
EXPORT int cudaRuntimeGetVersion(int *v) { if (!v) return 1; *v = env_int("CUENTRY_FAKE_RUNTIME_VERSION", 13000); return 0; }
EXPORT int cudaDriverGetVersion(int *v) { if (!v) return 1; *v = driver_version(); return 0; }
EXPORT int cudaGetDriverEntryPointByVersion(const char *symbol, void **pfn, unsigned int version, unsigned long long flags, int *status) {
    if (!symbol || !pfn) return 1;
    if (flags & ~3ULL) return 1;
    if ((int)version > driver_version()) return 1;
    int st = lookup(symbol, (int)version, flags == 2, pfn);
    if (status) *status = st;
    return 0;
}
EXPORT int cudaGetDriverEntryPoint(const char *symbol, void **pfn, unsigned long long flags, int *status) {
    return cudaGetDriverEntryPointByVersion(symbol, pfn, (unsigned int)env_int("CUENTRY_FAKE_RUNTIME_VERSION", 13000), flags, status);
}
"""


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def source(cat: Catalog | None = None, variant: str = "full") -> str:
    """The C source of the fake driver for ``variant``."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown fake driver variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    cat = catalog() if cat is None else cat
    abis = [a for a in cat if "linux" in a.platforms and a.exported and a.symbol not in NOT_ON_LINUX]
    if variant != "full":
        abis = [a for a in abis if a.exported != "cuGetProcAddress_v2"]
    if variant == "nogpa":
        abis = [a for a in abis if a.symbol != "cuGetProcAddress"]
    names = sorted({a.exported for a in abis if a.exported})
    stubs = [f"EXPORT CUresult {n}(void) {{ STUB_GUARD return 801; }}" for n in names if n not in _IMPLEMENTED]
    protos = [f"extern CUresult {n}();" for n in names if n in _IMPLEMENTED]
    abis.sort(key=lambda a: (a.symbol.encode(), a.version, a.variant))  # byte order, for the C binary search
    rows = [f"    {{{_c_string(a.symbol)}, {a.version}, {1 if a.variant else 0}, (void *)&{a.exported}}}," for a in abis]
    errors = [f"    {{{c}, {_c_string(n)}, {_c_string(t)}}}," for c, n, t in _ERRORS]
    body = _IMPL.replace("@ABIS@", "\n".join(rows)).replace("@ERRORS@", "\n".join(errors))
    # The implemented functions are defined after the table uses them; declare them first.
    head = _PRELUDE + "\n".join(protos) + "\n" + "\n".join(stubs) + "\n"
    # cuGetProcAddress(_v2) appear in the table; they are defined in the body.
    return head + body


# The fake driver's run-time knobs: (variable, smallest valid value). The C side reads them at every
# call with atoi, which turns a typo into 0; cuentry checks them when it loads the fake driver.
# ENV_KNOBS and check_env live in .fakeenv (the loader checks the knobs without importing the builder)


_DEFINES = {"full": (), "v1": ("-DFAKE_V1",), "nogpa": ("-DFAKE_NOGPA",), "stub": ("-DFAKE_STUB",)}


def _compiler(cc: str | None) -> str:
    compiler = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not compiler:
        raise BuildError("building the fake driver failed: no C compiler found")
    return compiler


def build(dest: str | os.PathLike[str] | None = None, variant: str = "full", *, cc: str | None = None) -> Path:
    """Compile the fake driver for ``variant`` and return the library's path.

    The library is kept in cuentry's per-user build cache (:mod:`cuentry.buildcache`:
    a 0700 directory of this user, entries keyed by the source's hash and verified
    against the library's own hash before every use), or in ``dest``, which must be
    a directory no other user can write. The stub variant lies in a ``stubs``
    directory, like the toolkit's stub, which is how real stubs are recognised.
    Raises :class:`BuildError` (no compiler, a compile error, an unsafe ``dest``).
    """
    src = source(variant=variant)
    defines = list(_DEFINES[variant])
    compiler = _compiler(cc)

    # -Bsymbolic: the library's calls to its own functions stay inside it, as in a real driver, whatever
    # else the process loaded with RTLD_GLOBAL (a real libcudart) or interposed (cuentry trace).
    flags = ["-shared", "-fPIC", "-Wl,-Bsymbolic", "-O1", "-w"]

    def compile_it(c_file: Path, out: Path) -> None:
        cmd = [compiler, *flags, "-o", str(out), str(c_file), *defines]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        except OSError as exc:
            raise BuildError(f"building the fake driver failed: cannot run {compiler}: {exc.strerror}") from None
        if proc.returncode != 0:
            raise BuildError(f"building the fake driver failed: {proc.stderr.strip()[:2000]}",
                             hint="check the C compiler (CC) works: cc -shared -fPIC")

    filename = "stubs/libcuda.so.1" if variant == "stub" else "libcuda.so.1"
    return cached_build(f"fake-driver-{variant}", src, compile_it, filename=filename, source_name="fake_cuda.c",
                        extra_key=" ".join([compiler, *flags, *defines]), root=dest)
