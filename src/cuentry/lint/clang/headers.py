"""Toolkit headers written from the catalog, for parsing where no CUDA toolkit is installed.

When `cuda.h`/`cudaTypedefs.h` are not found, the clang engine parses against
declarations generated here for one toolkit of the catalog's history
(`--toolkit 12.4`; the newest by default): every type the signatures use (enums, structs,
typedefs), `CUDA_VERSION`, the flag enums, the toolkit's own `#define cuX cuX_v2`
renames (per-thread ones under `CUDA_API_PER_THREAD_DEFAULT_STREAM`),
a prototype of every entry point as that toolkit declares it, and every PFN
typedef with its unversioned `PFN_cuX` alias. Macros and `decltype(&cuX)`
then resolve exactly as against that toolkit's own headers. A minimal
`cuda_runtime_api.h` declares the runtime's entry-point calls.

The headers are data made from the catalog (not C templates): they are written
once per toolkit into a private temporary directory of this process.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ... import names
from ...catalog import Abi, Catalog
from ...errors import UsageError

HEADERS = ("cuda.h", "cudaTypedefs.h", "cuda_runtime_api.h", "cuda_runtime.h")
_ARRAY = re.compile(r"^([^\[]*?)\s*((?:\[[^\[\]]*\])+)$")
_LOCK = threading.RLock()   # re-entered: a directory written under it asks scratch_dir() for its place
_SHADOW: dict[str, str] = {}  # the runtime shadow directory, written once per process


def toolkit_version(toolkit: str) -> int:
    """`"12.4"` -> 12040 (the CUDA_VERSION that toolkit defines)."""
    m = re.fullmatch(r"(\d+)\.(\d+)", toolkit.strip())
    if not m:
        raise UsageError(f"{toolkit!r} is not a toolkit release", hint="write it as MAJOR.MINOR, e.g. --toolkit 12.4")
    return int(m.group(1)) * 1000 + int(m.group(2)) * 10


def choose_toolkit(cat: Catalog, toolkit: str | None) -> str:
    """The toolkit to write headers for: the one asked (it must be in the catalog's history), or the newest."""
    if toolkit is None:
        return cat.history[-1] if cat.history else cat.primary_toolkit
    toolkit_version(toolkit)
    if toolkit not in cat.history:
        raise UsageError(f"the catalog has no headers of CUDA {toolkit}",
                         hint=f"choose one of {', '.join(cat.history)} with --toolkit")
    return toolkit


def declare(ctype: str, name: str) -> str:
    """Place a declarator name into an abstract C type: pointers, arrays, function (pointer) types."""
    if "(*)" in ctype:
        return ctype.replace("(*)", f"(*{name})", 1)
    m = _ARRAY.match(ctype)
    if m:
        return f"{m.group(1)} {name}{m.group(2)}"
    if ctype.endswith(")") and "(" in ctype and not ctype.startswith(("struct {", "union {")):
        i = ctype.index("(")
        return f"{ctype[:i].rstrip()} {name}{ctype[i:]}"
    return f"{ctype} {name}"


def in_toolkit(cat: Catalog, symbol: str, tk: int, per_thread: bool) -> Abi | None:
    """The ABI a toolkit's cuda.h declares for `symbol` under its plain name: as that release's real headers do
    (`Catalog.toolkit`), or, for a release the catalog has no facts of, the newest of the mode at or below it."""
    rel = release(cat, tk)
    if rel is not None:
        got = rel.function(symbol, names.PER_THREAD if per_thread else names.LEGACY)
        return got if got is not None and got.symbol == symbol else None
    best = None
    for a in cat.abis(symbol):
        if bool(a.variant) == per_thread and a.version <= tk:
            best = a
    return best


def pfn_alias(cat: Catalog, symbol: str, tk: int, per_thread: bool = False) -> Abi | None:
    """The ABI the unversioned `PFN_<symbol>` of a toolkit's cudaTypedefs.h names (as that release's real header
    does; 12.2 to 12.8 make `PFN_cuMemAdvise` the 8000 ABI). A release from 13.0 on has no unversioned names:
    code written with them was written for the 12.x headers, so the newest 12.x release's answer."""
    if tk >= 13000:
        older = [t for t in cat.toolkits() if t.cuda_version < 13000]
        tk = older[-1].cuda_version if older else tk
    rel = release(cat, tk)
    if rel is None:
        return in_toolkit(cat, symbol, tk, per_thread)
    got: Abi | None = rel.pfn_alias(symbol, names.PER_THREAD if per_thread else names.LEGACY)
    return got


def release(cat: Catalog, tk: int) -> Any:
    """The catalog's facts of the release whose CUDA_VERSION is `tk` (None when it has none)."""
    return next((t for t in cat.toolkits() if t.cuda_version == tk), None)


def _types(cat: Catalog) -> Iterable[str]:
    t: Mapping[str, Any] = cat.types
    yield "/* enums */"
    for name, e in sorted(t["enums"].items()):
        vals = ", ".join(f"{k} = {v}" for k, v in e["values"].items())
        yield f"enum {name} {{ {vals} }};"
    yield "/* aggregates, declared */"
    for name, a in sorted(t["aggregates"].items()):
        yield f"{a['kind']} {name};"
    yield "/* typedefs */"
    for name, d in sorted(t["typedefs"].items(), key=lambda kv: _typedef_rank(kv[1]["canonical"])):
        if name in ("size_t", "uint32_t", "uint64_t", "int32_t", "int64_t", "uint8_t"):
            continue
        canon = d["canonical"] if d["canonical"] not in ("enum", "struct", "union") else d["type"]
        yield f"typedef {declare(canon, name)};"
    yield "/* aggregates, defined (by-value members first) */"
    done: set[str] = set()
    for name in sorted(t["aggregates"]):
        yield from _define(name, t["aggregates"], done)


def _typedef_rank(canonical: str) -> int:
    return 0 if "(" not in canonical else 1


def _define(name: str, aggs: Mapping[str, Any], done: set[str], depth: int = 0) -> Iterable[str]:
    if name in done or depth > 32:
        return
    done.add(name)
    a = aggs[name]
    if a.get("opaque") or not a.get("fields"):
        return
    for _, _, canon in a["fields"]:
        for dep in re.findall(r"\b(?:struct|union)\s+(\w+)(?!\s*\*)\b", canon):
            if dep in aggs and not re.search(rf"\b{dep}\s*\*", canon):
                yield from _define(dep, aggs, done, depth + 1)
    fields = " ".join(f"{declare(canon, fname)};" for fname, _, canon in a["fields"])
    yield f"{a['kind']} {name} {{ {fields} }};"


def _flags() -> Iterable[str]:
    yield "typedef enum CUdriverProcAddress_flags_enum {"
    for n in sorted(names.DEFAULT_FLAG_NAMES | names.LEGACY_FLAG_NAMES | names.PER_THREAD_FLAG_NAMES):
        if n.startswith("CU_"):
            yield f"  {n} = {_flag_value(n)},"
    yield "} CUdriverProcAddress_flags;"


def _flag_value(name: str) -> int:
    mode = (names.DEFAULT if name in names.DEFAULT_FLAG_NAMES else
            names.LEGACY if name in names.LEGACY_FLAG_NAMES else names.PER_THREAD)
    return names.FLAGS[mode]


def _prototypes(cat: Catalog, tk: int) -> Iterable[str]:
    renames, pt_renames, protos = [], [], []
    for sym in cat.symbols():
        legacy = in_toolkit(cat, sym, tk, False)
        if legacy is None:
            continue
        if legacy.exported and legacy.exported != sym:
            renames.append(f"#define {sym} {legacy.exported}")
        pt = in_toolkit(cat, sym, tk, True) if any(a.variant for a in cat.abis(sym)) else None
        if pt is not None and pt.exported and pt.exported != sym:
            pt_renames.append(f"#define {sym} {pt.exported}")
        protos.append(f"{legacy.signature.returns} CUDAAPI {sym}({legacy.signature.c_params()});")
    yield "#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)"
    yield from pt_renames
    yield "#endif"
    # a name renamed for per-thread use keeps its legacy rename otherwise
    pt_names = {r.split()[1] for r in pt_renames}
    for r in renames:
        sym = r.split()[1]
        yield (f"#if !defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)\n{r}\n#endif" if sym in pt_names else r)
    yield from protos


def cuda_h(cat: Catalog, toolkit: str) -> str:
    """The generated `cuda.h` of one toolkit."""
    tk = toolkit_version(toolkit)
    out = [f"/* cuda.h of CUDA {toolkit}, written by cuentry lint from its catalog (not NVIDIA's header). */",
           "#ifndef __cuda_cuda_h__", "#define __cuda_cuda_h__", "#include <stddef.h>", "#include <stdint.h>",
           f"#define CUDA_VERSION {tk}", "#define CUENTRY_GENERATED_CUDA_H 1",
           "#if defined(_WIN32)", "#define CUDAAPI __stdcall", "#else", "#define CUDAAPI", "#endif",
           "#ifdef __cplusplus", 'extern "C" {', "#endif"]
    out += _types(cat)
    out += _flags()
    out += _prototypes(cat, tk)
    out += ["#ifdef __cplusplus", "}", "#endif", "#endif", ""]
    return "\n".join(out)


def typedefs_h(cat: Catalog, toolkit: str) -> str:
    """The generated `cudaTypedefs.h`: every PFN typedef, and `PFN_cuX` for the toolkit's own ABI."""
    tk = toolkit_version(toolkit)
    out = [f"/* cudaTypedefs.h of CUDA {toolkit}, written by cuentry lint from its catalog. */",
           "#ifndef CUDATYPEDEFS_H", "#define CUDATYPEDEFS_H", "#include <cuda.h>",
           "#ifdef __cplusplus", 'extern "C" {', "#endif"]
    for a in cat:
        out.append(a.c_typedef())
    legacy, per_thread = [], []
    for sym in cat.symbols():
        lg, pt = pfn_alias(cat, sym, tk), pfn_alias(cat, sym, tk, True)
        if lg is not None:
            legacy.append(f"#define PFN_{sym} {lg.pfn}")
        if pt is not None and pt != lg:
            per_thread.append(f"#define PFN_{sym} {pt.pfn}")
    out += ["#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)", *per_thread, "#endif"]
    names_pt = {d.split()[1] for d in per_thread}
    out += [f"#if !defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)\n{d}\n#endif" if d.split()[1] in names_pt else d
            for d in legacy]
    out += ["#ifdef __cplusplus", "}", "#endif", "#endif", ""]
    return "\n".join(out)


def runtime_h(toolkit: str) -> str:
    """A minimal `cuda_runtime_api.h`: the runtime's entry-point calls, flags and version calls."""
    tk = toolkit_version(toolkit)
    flags = ", ".join(f"{n} = {_flag_value(n)}" for n in sorted(
        names.DEFAULT_FLAG_NAMES | names.LEGACY_FLAG_NAMES | names.PER_THREAD_FLAG_NAMES) if n.startswith("cuda"))
    return "\n".join([
        f"/* cuda_runtime_api.h of CUDA {toolkit} (entry-point calls only), written by cuentry lint. */",
        "#ifndef __CUDA_RUNTIME_API_H__", "#define __CUDA_RUNTIME_API_H__",   # as NVIDIA's: no cuda.h
        f"#define CUDART_VERSION {tk}",
        "#ifdef __cplusplus", 'extern "C" {', "#endif",
        "typedef enum cudaError { cudaSuccess = 0, cudaErrorUnknown = 999 } cudaError_t;",
        f"enum cudaGetDriverEntryPointFlags {{ {flags} }};",
        "typedef enum cudaDriverEntryPointQueryResult { cudaDriverEntryPointSuccess = 0, "
        "cudaDriverEntryPointSymbolNotFound = 1, cudaDriverEntryPointVersionNotSufficent = 2 } "
        "cudaDriverEntryPointQueryResult;",
        "cudaError_t cudaDriverGetVersion(int *driverVersion);",
        "cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);",
        "#ifdef __cplusplus",   # 11.x code calls it with three arguments; 12.x headers give the fourth a default
        "cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags, "
        "cudaDriverEntryPointQueryResult *driverStatus = 0);",
        "#else",
        "cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags, "
        "cudaDriverEntryPointQueryResult *driverStatus);",
        "#endif",
        "const char *cudaGetErrorString(cudaError_t error);",
        "const char *cudaGetErrorName(cudaError_t error);",
        "cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion, "
        "unsigned long long flags, cudaDriverEntryPointQueryResult *driverStatus);",
        "#ifdef __cplusplus", "}", "#endif", "#endif", ""])


def _header_texts(cat: Catalog, toolkit: str) -> dict[str, str]:
    return {"cuda.h": cuda_h(cat, toolkit), "cudaTypedefs.h": typedefs_h(cat, toolkit),
            "cuda_runtime_api.h": runtime_h(toolkit), "cuda_runtime.h": '#include "cuda_runtime_api.h"\n'}


def _write_headers(d: str, files: Mapping[str, str], skip: str = "") -> None:
    for name, text in files.items():
        if name == skip:
            continue
        fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)


def _cached(files: Mapping[str, str], toolkit: str) -> str | None:
    """The headers' directory in the user's build cache (keyed by their content: the catalog and the toolkit),
    written once and checked on every use; None when the cache cannot hold them or a header does not match."""
    import hashlib
    from pathlib import Path

    from ...buildcache import cached_build
    from ...errors import CuentryError

    key = "".join(f"{n} {hashlib.sha256(t.encode()).hexdigest()}\n" for n, t in sorted(files.items()))

    def build(_src: Path, out: Path) -> None:
        out.write_text(files["cuda.h"], encoding="utf-8")
        _write_headers(str(out.parent), files, skip="cuda.h")

    try:
        main = cached_build("lint-headers", f"toolkit {toolkit}\n{key}", build, filename="include/cuda.h",
                            source_name="headers.sha256")
        d = str(main.parent)
        for name, text in files.items():
            with open(os.path.join(d, name), encoding="utf-8") as fh:
                if fh.read() != text:
                    return None
    except (CuentryError, OSError, ValueError):
        return None
    return d


def generated_dir(cat: Catalog, toolkit: str) -> str:
    """The directory holding the generated headers of `toolkit`: in the user's cache (once per catalog and
    toolkit, verified on use), else a private temporary directory (written once per process)."""
    dirs: dict[str, str] = cat.fact("lint.clang.headers.dirs", lambda c: {})  # per toolkit, dropped with cat
    key = toolkit
    with _LOCK:
        got = dirs.get(key)
        if got is not None and os.path.isdir(got):
            return got
        files = _header_texts(cat, toolkit)
        d = _cached(files, toolkit)
        if d is None:
            d = tempfile.mkdtemp(prefix=f"cuentry-lint-cuda{toolkit}-", dir=scratch_dir())
            _write_headers(d, files)
        dirs[key] = d
        return d


_SCRATCH: list[str] = []


def scratch_dir() -> str:
    """A private directory for what this process derives from the generated headers (precompiled headers),
    removed when the process exits (a worker's too), so a run leaves nothing behind."""
    with _LOCK:
        if _SCRATCH and os.path.isdir(_SCRATCH[-1]) and _SCRATCH[0] == str(os.getpid()):
            return _SCRATCH[-1]
        import shutil
        from multiprocessing.util import Finalize

        d = tempfile.mkdtemp(prefix="cuentry-lint-pch-")
        Finalize(None, shutil.rmtree, args=(d, True), exitpriority=0)
        _SCRATCH[:] = [str(os.getpid()), d]
        return d


def runtime_shadow() -> str:
    """A directory whose `cuda_runtime.h` is the real toolkit's `cuda_runtime_api.h` only: a `.cu` file parsed
    against a real toolkit sees every runtime declaration without the device-side headers that only nvcc
    (or clang's own CUDA wrappers) can read. Written once per process."""
    with _LOCK:
        got = _SHADOW.get("dir")
        if got is not None and os.path.isdir(got):
            return got
        d = tempfile.mkdtemp(prefix="cuentry-lint-runtime-", dir=scratch_dir())
        fd = os.open(os.path.join(d, "cuda_runtime.h"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("/* cuentry lint: the host side of cuda_runtime.h */\n#include <cuda_runtime_api.h>\n")
        _SHADOW["dir"] = d
        return d


def legacy_pfn_flags(cat: Catalog, include: str, text: str) -> list[str]:
    """`-DPFN_cuX=PFN_cuX_vN` for the unversioned names the file uses that a real toolkit's `cudaTypedefs.h`
    no longer has (13.0 dropped them): each the ABI that toolkit declares, as 11.x and 12.x headers had it.
    A name the file defines itself (`typedef ... PFN_cuX`, `#define PFN_cuX`) is left alone."""
    used = set(_UNVERSIONED_PFN.findall(text))
    if not used:
        return []
    tk = real_version(include)
    if tk < 13000:
        return []
    out = []
    for sym in sorted(used):
        if re.search(rf"(?:typedef|#\s*define|using)[^;\n]*\bPFN_{sym}\b", text):
            continue
        abi = pfn_alias(cat, sym, tk) if sym in cat else None
        if abi is not None:
            out.append(f"-DPFN_{sym}={abi.pfn}")
    return out


_UNVERSIONED_PFN = re.compile(r"\bPFN_(cu[A-Za-z0-9]+)\b")
_REAL_VERSION: dict[str, int] = {}


def real_version(include: str) -> int:
    """The CUDA_VERSION a real toolkit's cuda.h defines (0 when it cannot be read; read once per directory)."""
    if include not in _REAL_VERSION:
        try:
            with open(os.path.join(include, "cuda.h"), encoding="utf-8", errors="replace") as fh:
                m = re.search(r"^#define CUDA_VERSION (\d+)", fh.read(1 << 20), re.M)
        except OSError:
            m = None
        _REAL_VERSION[include] = int(m.group(1)) if m else 0
    return _REAL_VERSION[include]


def include_dirs(argv: Sequence[str]) -> list[str]:
    """The -I/-isystem directories of a compile command's arguments (joined or separate), in order."""
    out = []
    for i, a in enumerate(argv):
        if a.startswith("-I") and len(a) > 2:
            out.append(a[2:])
        elif a in ("-I", "-isystem") and i + 1 < len(argv):
            out.append(argv[i + 1])
    return out


def find_toolkit_include(include_dirs: Sequence[str]) -> str | None:
    """The directory of a real `cuda.h` (with `cudaTypedefs.h` beside it): the -I directories, then
    $CUDA_HOME/$CUDA_PATH, then /usr/local/cuda; None when there is none."""
    cands = list(include_dirs)
    for var in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"):
        v = os.environ.get(var, "")
        if v:
            cands.append(os.path.join(v, "include"))
    cands.append("/usr/local/cuda/include")
    for d in cands:
        if os.path.isfile(os.path.join(d, "cuda.h")) and os.path.isfile(os.path.join(d, "cudaTypedefs.h")):
            return d
    return None


__all__ = ["HEADERS", "choose_toolkit", "cuda_h", "declare", "find_toolkit_include", "generated_dir", "in_toolkit",
           "include_dirs", "legacy_pfn_flags", "pfn_alias", "real_version", "release", "runtime_h", "runtime_shadow",
           "scratch_dir",
           "toolkit_version", "typedefs_h"]
