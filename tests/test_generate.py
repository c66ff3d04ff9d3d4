"""`cuentry generate`: the C/C++ loader header and the typed Python table module.

The generated headers are compiled as C99, C11, C++11 and C++17 with warnings as
errors, alone and after the real CUDA 13.0 headers (where installed), and a test
program built from them resolves its tables on the fake driver at 11.4 (the v1
cuGetProcAddress), 12.0, 12.4 and 13.0, before 11.3 (exported names) and on the
stub; the answers are compared with cuentry's own Python tables on the same
driver, entry by entry and attempt by attempt.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry import manifest
from cuentry.cli import main
from cuentry.driver import Driver
from cuentry.errors import TableDeclarationError
from cuentry.generate import generate_c, generate_python
from cuentry.generate.model import plan
from cuentry.generate.python import _param_name, class_name
from cuentry.table import Table

from .conftest import CUDA_INCLUDE

DATA = Path(__file__).parent / "generate_data"
NAMES = ("acme", "leg", "floor")
CC = os.environ.get("CC", "cc")
CXX = os.environ.get("CXX", "c++")
WARN = ["-Wall", "-Wextra", "-Werror"]

needs_cc = pytest.mark.skipif(shutil.which(CC) is None, reason="no C compiler")
needs_cxx = pytest.mark.skipif(shutil.which(CXX) is None, reason="no C++ compiler")
# Tests that never call through cuentry's call backend run once, not again in CI's pure-backend pass.
backend_independent = pytest.mark.skipif(os.environ.get("CUENTRY_BACKEND") == "pure",
                                         reason="does not use the call backend: runs in the default pass")
needs_cuda = pytest.mark.skipif(not (CUDA_INCLUDE / "cuda.h").exists(),
                                reason=f"no CUDA headers at {CUDA_INCLUDE} (set CUENTRY_CUDA_INCLUDE)")


def _manifest(name: str) -> manifest.Manifest:
    return manifest.load(DATA / f"{name}.toml")


@pytest.fixture(scope="session")
def headers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three test manifests' headers, generated once."""
    d = tmp_path_factory.mktemp("gen")
    for n in NAMES:
        (d / f"{n}.h").write_text(generate_c(_manifest(n)))
    return d


def _compile(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stderr[:4000]}"


# --- compiling -------------------------------------------------------------------------------


def _header_release() -> str:
    """The release of the CUDA headers the tests include ("13.0"), from cuda.h's CUDA_VERSION."""
    import re

    from cuentry.names import format_version

    m = re.search(r"#define CUDA_VERSION (\d+)", (CUDA_INCLUDE / "cuda.h").read_text(errors="replace"))
    return format_version(int(m.group(1))) if m else ""


def _compat_lines() -> list[str]:
    """Assign every member to NVIDIA's own PFN type: compiles only when the types are identical (C and C++)."""
    lines = []
    release = _header_release()
    for n in NAMES:
        for s in plan(_manifest(n)).slots:
            for member, abi in s.members():
                if abi.header == "cudaTypedefs.h" and release in abi.toolkits:
                    lines.append(f"    {{ {abi.pfn} p = {n}_t.pfn_{member}; {n}_t.pfn_{member} = p; }}")
    return lines


def _unit(with_cuda: bool, gl: bool) -> str:
    head = []
    if with_cuda:
        head = ["#include <cuda.h>", "#include <cudaTypedefs.h>", "#include <cuda_runtime_api.h>"]
        if gl:
            head += ["#include <GL/gl.h>", "#include <cudaGL.h>", "#include <cudaGLTypedefs.h>"]
    for n in NAMES:
        head += [f"#define {n.upper()}_IMPLEMENTATION", f'#include "{n}.h"', f'#include "{n}.h"']
    body = [f"    struct {n}_table {n}_t;" for n in NAMES]
    body += [f"    if ({n}_load(&{n}_t) != 0) return 1;" for n in NAMES]
    if with_cuda:
        body += _compat_lines()
        body.append("    { struct acme_table r; (void)acme_load_with_runtime(&r, &cudaGetDriverEntryPointByVersion); }")
        body.append("    { struct acme_table r; (void)acme_load_with(&r, (PFN_cuGetProcAddress_v12000)0); }")
    return "\n".join([*head, "int main(void) {", *body, "    return 0;", "}", ""])


STANDARDS = [("c", "c99"), ("c", "c11"), ("c++", "c++11"), ("c++", "c++17")]


@backend_independent
@needs_cc
@needs_cxx
@pytest.mark.parametrize("lang,std", STANDARDS)
def test_headers_compile_alone(headers: Path, tmp_path: Path, lang: str, std: str) -> None:
    src = tmp_path / ("alone.c" if lang == "c" else "alone.cpp")
    src.write_text(_unit(False, False))
    _compile([CC if lang == "c" else CXX, f"-std={std}", *WARN, "-Wpedantic", f"-I{headers}", "-fsyntax-only", str(src)])


@backend_independent
@needs_cc
@needs_cxx
@needs_cuda
@pytest.mark.parametrize("lang,std", STANDARDS)
def test_headers_compile_after_cuda_headers(headers: Path, tmp_path: Path, lang: str, std: str) -> None:
    gl = Path("/usr/include/GL/gl.h").exists()
    src = tmp_path / ("cuda.c" if lang == "c" else "cuda.cpp")
    src.write_text(_unit(True, gl))
    _compile([CC if lang == "c" else CXX, f"-std={std}", *WARN, f"-I{headers}", f"-I{CUDA_INCLUDE}", "-fsyntax-only",
              str(src)])


@pytest.fixture(scope="session")
def catalog_headers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """Every catalog symbol in one table: newest ABI (legacy, per-thread) and oldest ABI (legacy)."""
    from cuentry.catalog import catalog

    cat = catalog()
    d = tmp_path_factory.mktemp("gen_all")
    internal = _internal_typedefs()
    release = _header_release() if (CUDA_INCLUDE / "cuda.h").exists() else ""
    compat: list[str] = []  # each member assigned to and from NVIDIA's own PFN type
    for name, stream, newest in (("all_new", "legacy", True), ("all_pt", "per_thread", True),
                                 ("all_old", "legacy", False)):
        items = []
        for sym in cat.symbols():
            v = cat.newest(sym, stream).version if newest else cat.first_version(sym, stream)
            items.append(f'{{ symbol = "{sym}", version = {v} }}')
        m = manifest.loads(f'[table]\nname = "{name}"\nstream = "{stream}"\noptional = [{", ".join(items)}]\n')
        text = generate_c(m)
        (d / f"{name}.h").write_text(text)
        for sl in plan(m).slots:
            abi = sl.abi
            if abi.header == "cudaTypedefs.h" and release in abi.toolkits and abi.pfn not in internal:
                compat.append(f"    {{ {abi.pfn} p = {name}_t.pfn_{sl.attr}; {name}_t.pfn_{sl.attr} = p; }}")
    return d, compat


def _internal_typedefs() -> set[str]:
    """PFN typedefs cudaTypedefs.h declares only for NVIDIA's own build (__CUDA_API_VERSION_INTERNAL)."""
    import re

    path = CUDA_INCLUDE / "cudaTypedefs.h"
    if not path.exists():
        return set()
    out: set[str] = set()
    inside = False
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("#if") and "__CUDA_API_VERSION_INTERNAL" in line:
            inside = True
        elif line.startswith("#endif"):
            inside = False
        elif inside:
            out.update(re.findall(r"\bPFN_\w+", line))
    return out


@backend_independent
@needs_cc
@needs_cxx
@pytest.mark.parametrize("lang,std,with_cuda", [("c", "c99", False), ("c++", "c++11", False),
                                                ("c", "c11", True), ("c++", "c++17", True)])
def test_every_catalog_entry_compiles(catalog_headers: tuple[Path, list[str]], tmp_path: Path, lang: str, std: str,
                                      with_cuda: bool) -> None:
    if with_cuda and not (CUDA_INCLUDE / "cuda.h").exists():
        pytest.skip(f"no CUDA headers at {CUDA_INCLUDE}")
    d, compat = catalog_headers
    names = ("all_new", "all_pt", "all_old")
    lines = ["#include <cuda.h>", "#include <cudaTypedefs.h>", "#include <cudaProfiler.h>"] if with_cuda else []
    for n in names:
        lines += [f"#define {n.upper()}_IMPLEMENTATION", f'#include "{n}.h"']
    lines += ["int main(void) {", *(f"    struct {n}_table {n}_t;" for n in names),
              *(f"    if ({n}_load(&{n}_t) != 0) return 1;" for n in names), *(compat if with_cuda else []),
              "    return 0;", "}", ""]
    src = tmp_path / ("all.c" if lang == "c" else "all.cpp")
    src.write_text("\n".join(lines))
    flags = [f"-I{CUDA_INCLUDE}"] if with_cuda else ["-Wpedantic"]
    _compile([CC if lang == "c" else CXX, f"-std={std}", *WARN, *flags, f"-I{d}", "-fsyntax-only", str(src)])


@needs_cc
def test_cuda_h_rename_onto_another_entry_compiles(tmp_path: Path) -> None:
    """cuda.h maps cuGraphInstantiate onto cuGraphInstantiateWithFlags: pfn_ members are out of its reach."""
    m = manifest.loads('[table]\nname = "g"\nstream = "legacy"\n'
                       'optional = ["cuGraphInstantiate@11000", "cuGraphInstantiateWithFlags@11040"]\n')
    (tmp_path / "g.h").write_text(generate_c(m))
    src = tmp_path / "g.c"
    body = "struct g_table t; (void)g_load(&t); return t.pfn_cuGraphInstantiate == 0 && t.pfn_cuGraphInstantiateWithFlags == 0;"
    src.write_text('#include "g.h"\nint main(void) { ' + body + " }\n")
    flags = ["-include", str(CUDA_INCLUDE / "cuda.h"), f"-I{CUDA_INCLUDE}"] if (CUDA_INCLUDE / "cuda.h").exists() else []
    _compile([CC, "-std=c99", *WARN, *flags, "-DG_IMPLEMENTATION", f"-I{tmp_path}", "-fsyntax-only", str(src)])


@backend_independent
@needs_cc
@needs_cxx
@pytest.mark.parametrize("lang,std", [("c", "c99"), ("c++", "c++11")])
def test_windows_branch_type_checks(headers: Path, tmp_path: Path, lang: str, std: str) -> None:
    """The nvcuda.dll / InitOnceExecuteOnce branch, against the Win32 declarations it uses (no SDK here)."""
    src = tmp_path / ("win.c" if lang == "c" else "win.cpp")
    src.write_text(_unit(False, False))
    _compile([CC if lang == "c" else CXX, f"-std={std}", *WARN, "-D_WIN32", "-D__stdcall=",
              f"-I{DATA / 'win_stub'}", f"-I{headers}", "-fsyntax-only", str(src)])


def test_header_shape(headers: Path) -> None:
    text = (headers / "acme.h").read_text()
    assert "#define ACME_MIN_DRIVER 10010" in text
    assert "#define ACME_STREAM_FLAGS 2" in text
    assert "acme_PFN_cuMemAlloc_v3020 pfn_cuMemAlloc;" in text
    assert "acme_PFN_cuStreamBeginCapture_v10010_ptsz pfn_cuStreamBeginCapture;" in text
    assert "acme_PFN_cuCtxCreate_v3020 pfn_cuCtxCreate_3020;" in text       # a fallback of another type
    assert "acme_PFN_cuMemAllocAsync_v11020_ptsz pfn_alloc_async;" in text
    assert "acme_PFN_cuMemAlloc_v3020 pfn_alloc_async_cuMemAlloc_3020;" in text
    # Never NVIDIA's own names as typedefs, never a suffixed name asked for.
    import re

    assert not re.search(r"\*\s*PFN_", text)
    assert not re.search(r'"cu\w+_(v\d+|ptds|ptsz)"', text.split("IMPLEMENTATION")[0])
    # Enums are defined only where no CUDA header did, and once across generated headers.
    assert "#if !defined(CUENTRY_HAVE_enum_cudaError_enum) && !defined(CUDA_VERSION)" in text
    # An enum newer than the catalog's first toolkit is named by a macro: the enum, or its integer type
    # where the CUDA header included predates it (whether it has it is unknown: it is never redefined).
    assert "#if !defined(CUDA_VERSION) || CUDA_VERSION >= 12000\n" \
           "#define CUENTRY_SPELL_enum_CUdriverProcAddressQueryResult_enum enum CUdriverProcAddressQueryResult_enum" in text
    assert "CUENTRY_SPELL_enum_CUdriverProcAddressQueryResult_enum *symbolFound" in text
    assert "#if !defined(CUENTRY_HAVE_enum_CUGLDeviceList_enum) && !defined(CUDAGL_H)" in text  # from cudaGL.h
    assert "typedef enum {" in text and "} CUdevResourceType;" in text   # an anonymous enum keeps its typedef name


def test_refusals() -> None:
    bad = manifest.loads('[table]\nname = "my-lib"\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"]\n')
    with pytest.raises(TableDeclarationError, match="not usable as a C prefix"):
        generate_c(bad)
    for reserved in ("cuda", "CU", "cuda_x", "cuentry_gen"):
        m = manifest.loads(f'[table]\nname = "{reserved}"\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"]\n')
        with pytest.raises(TableDeclarationError, match="namespace"):
            generate_c(m)
    for word, gen in (("lambda", generate_python), ("match", generate_python)):
        m = manifest.loads(f'[table]\nname = "k"\nstream = "legacy"\n'
                           f'required = [{{ symbol = "cuMemAlloc", version = 3020, name = "{word}" }}]\n')
        with pytest.raises(TableDeclarationError, match="keyword"):
            gen(m)
    clash = manifest.loads('[table]\nname = "x"\nstream = "legacy"\noptional = [\n'
                           '  { symbol = "cuCtxCreate", version = 12050, fallback = "cuCtxCreate@3020" },\n'
                           '  { symbol = "cuMemAlloc", version = 3020, name = "cuCtxCreate_3020" },\n]\n')
    with pytest.raises(TableDeclarationError, match="clashes"):
        generate_c(clash)


# --- running on the fake driver -----------------------------------------------------------------


@pytest.fixture(scope="session")
def run_tables(headers: Path) -> Path:
    if shutil.which(CC) is None:
        pytest.skip("no C compiler")
    exe = headers / "run_tables"
    _compile([CC, "-std=c99", *WARN, "-D_POSIX_C_SOURCE=200809L", f"-I{headers}", "-o", str(exe),
              str(DATA / "run_tables.c"), "-ldl", "-pthread"])
    return exe


def _run(exe: Path, mode: str, lib: str | None, version: int) -> str:
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["CUENTRY_FAKE_DRIVER_VERSION"] = str(version)
    if lib is not None:
        env["LD_LIBRARY_PATH"] = str(Path(lib).parent)
    proc = subprocess.run([str(exe), mode], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _parse(out: str) -> dict[str, Any]:
    """STATUS/PIN lines -> {table: {"rc", "driver", "access", "floor", "pins": [...]}}."""
    tables: dict[str, Any] = {}
    for line in out.splitlines():
        f = line.split()
        if f[:1] == ["STATUS"]:
            tables[f[1]] = {"rc": int(f[2]), "driver": int(f[3]), "access": int(f[4]), "floor": int(f[5]), "pins": []}
        elif f[:1] == ["PIN"]:
            tables[f[1]]["pins"].append({"entry": f[2], "symbol": f[3], "version": int(f[4]), "member": f[5],
                                         "asked": int(f[6]), "result": int(f[7]), "query": int(f[8]),
                                         "class": f[9], "resolved": int(f[10])})
    return tables


def _c_entries(t: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    """Per entry: its status in the Python table's words, and the classification of each attempt."""
    out: dict[str, tuple[str, list[str]]] = {}
    by_entry: dict[str, list[dict[str, Any]]] = {}
    for p in t["pins"]:
        by_entry.setdefault(p["entry"], []).append(p)
    for name, pins in by_entry.items():
        tried = [p for p in pins if p["class"] != "not_asked"]
        won = [i for i, p in enumerate(pins) if p["resolved"]]
        status = "resolved" if won == [0] else "fallback" if won else "none"
        out[name] = (status, [p["class"] for p in tried])
    return out


def _py_entries(name: str, drv: Driver) -> dict[str, tuple[str, list[str]]]:
    m = _manifest(name)
    rep = Table.from_manifest(m, source=drv).report()
    out = {}
    for r in rep["entries"]:
        status = r["status"] if r["status"] in ("resolved", "fallback") else "none"
        out[r["name"]] = (status, [a["classification"] for a in r["attempts"]])
    return out


CASES = [("full", 13000), ("full", 12040), ("full", 12000), ("v1", 11080), ("v1", 11040), ("nogpa", 11020),
         ("nogpa", 11000)]
ACCESS = {"full": 1, "v1": 2, "nogpa": 3}


@pytest.mark.parametrize("variant,version", CASES)
def test_resolution_matches_python_tables(run_tables: Path, fake: dict[str, str], fake_version: Any,
                                          variant: str, version: int) -> None:
    got = _parse(_run(run_tables, "report", fake[variant], version))
    fake_version(version)
    drv = Driver.load(fake[variant])
    try:
        for n in NAMES:
            t = got[n]
            assert t["driver"] == version
            assert t["access"] == ACCESS[variant]
            assert _c_entries(t) == _py_entries(n, drv), n
    finally:
        drv.close()


def test_expected_resolutions(run_tables: Path, fake: dict[str, str]) -> None:
    def pins(out: str, table: str) -> dict[str, dict[str, Any]]:
        return {f"{p['symbol']}@{p['version']}": p for p in _parse(out)[table]["pins"]}

    new = _run(run_tables, "report", fake["full"], 13000)
    t = _parse(new)
    assert [t[n]["rc"] for n in NAMES] == [0, 0, 0]
    assert [t[n]["floor"] for n in NAMES] == [10010, 7000, 12010]
    assert pins(new, "acme")["cuCtxCreate@12050"]["resolved"] == 1
    assert pins(new, "acme")["cuCtxCreate@3020"]["class"] == "not_asked"
    # 12.0: cuCtxCreate@12050 is above the driver, its 11.4 fallback (another type) resolves; the floor fails.
    old = _run(run_tables, "report", fake["full"], 12000)
    leg = pins(old, "leg")
    assert (leg["cuCtxCreate@12050"]["class"], leg["cuCtxCreate@12050"]["result"]) == ("version_above_driver", 1)
    assert leg["cuCtxCreate@11040"]["resolved"] == 1 and leg["cuCtxCreate@11040"]["member"] == "cuCtxCreate_11040"
    assert leg["cuCoredumpGetAttribute@12010"]["class"] == "driver_too_old"
    assert leg["cuCoredumpGetAttribute@12010"]["asked"] == 0
    assert (leg["cuEventCreateFromEGLSync@9000"]["class"], leg["cuEventCreateFromEGLSync@9000"]["query"]) == \
        ("not_exported", 1)
    assert _parse(old)["floor"]["rc"] == 1                                # a required entry is newer than 12.0
    assert "cuMulticastCreate@12010 needs driver >= 12.1 (12010); this driver is 12.0 (12000)" in old
    assert "pin the older ABI 11040 that this driver has" in old
    assert "AVAILABLE 1 1 0 0 0" in old and "GET 1" in old and "AGAIN 1" in old
    assert "SAME_REPORT 1" in old and "LAYOUT 1 1" in old      # another header version is refused
    # 11.4 through the v1 form: the query result is emulated.
    v1 = _run(run_tables, "report", fake["v1"], 11040)
    assert "cuGetProcAddress (v1 form, query result emulated)" in v1
    assert pins(v1, "leg")["cuDeviceGetUuid@11040"]["resolved"] == 1
    # Before 11.3 (exported names): a pin above the driver is classified without asking, with no made-up CUresult.
    old = pins(_run(run_tables, "report", fake["nogpa"], 11020), "acme")["cuCtxCreate@12050"]
    assert (old["class"], old["result"], old["asked"]) == ("version_above_driver", -1, 0)


def test_stub_and_no_driver(run_tables: Path, fake: dict[str, str], tmp_path: Path) -> None:
    stub = _parse(_run(run_tables, "report", fake["stub"], 13000))
    assert [stub[n]["rc"] for n in NAMES] == [2, 2, 2]       # the stub is no driver: ERR_DRIVER
    assert {p["class"] for p in stub["leg"]["pins"] if p["class"] != "not_asked"} == {"stub_library"}
    out = _run(run_tables, "report", str(tmp_path / "none" / "libcuda.so.1"), 13000)
    t = _parse(out)
    if t["leg"]["access"] != 0:
        pytest.skip("a real libcuda.so.1 is installed on this machine")
    assert [t[n]["rc"] for n in NAMES] == [2, 2, 2]
    assert {p["class"] for p in t["leg"]["pins"]} == {"no_driver"}
    assert "libcuda.so.1 could not be used" in out


@pytest.mark.parametrize("version", [13000, 12000])
def test_load_with_getter_matches_load(run_tables: Path, fake: dict[str, str], version: int) -> None:
    plain = _parse(_run(run_tables, "report", fake["full"], version))
    out = _run(run_tables, "with", fake["full"], version)
    got = _parse(out)
    for n in NAMES:
        assert got[n]["access"] == 4
        assert got[n]["driver"] == version
        assert _c_entries(got[n]) == _c_entries(plain[n])
    assert "NULLS 3 3" in out


@needs_cuda
@pytest.mark.parametrize("version", [13000, 12000])
def test_load_with_runtime_getter(headers: Path, run_tables: Path, fake: dict[str, str], version: int) -> None:
    exe = headers / "run_tables_rt"
    if not exe.exists():
        _compile([CC, "-std=c99", *WARN, "-D_POSIX_C_SOURCE=200809L", "-DWITH_RUNTIME", f"-I{headers}",
                  f"-I{CUDA_INCLUDE}", "-o", str(exe), str(DATA / "run_tables.c"), "-ldl", "-pthread"])
    plain = _parse(_run(run_tables, "report", fake["full"], version))
    got = _parse(_run(exe, "runtime", fake["full"], version))
    for n in ("acme", "leg"):
        assert got[n]["access"] == 5 and got[n]["driver"] == version
        assert _c_entries(got[n]) == _c_entries(plain[n])


@backend_independent
@needs_cxx
@needs_cuda
def test_runs_with_cuda_h_renaming_macros(headers: Path, run_tables: Path, fake: dict[str, str]) -> None:
    """cuda.h first (and its per-thread macros): members are renamed alike everywhere; nothing changes."""
    exe = headers / "run_tables_cuda_h"
    _compile([CXX, "-std=c++17", "-x", "c++", *WARN, "-D_POSIX_C_SOURCE=200809L", f"-I{CUDA_INCLUDE}",
              "-include", "cuda.h", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM", f"-I{headers}", "-o", str(exe),
              str(DATA / "run_tables.c"), "-ldl", "-pthread"])
    assert "CALLS rc=0 back=cuentry generated table" in _run(exe, "calls", fake["full"], 13000)
    got, plain = (_parse(_run(e, "report", fake["full"], 12000)) for e in (exe, run_tables))
    assert {n: _c_entries(got[n]) for n in NAMES} == {n: _c_entries(plain[n]) for n in NAMES}


def _sanitized(headers: Path, kind: str) -> Path:
    exe = headers / f"run_tables_{kind}"
    if not exe.exists():
        proc = subprocess.run([CC, "-std=c99", "-g", "-O1", f"-fsanitize={kind}", "-fno-sanitize-recover=all",
                               "-D_POSIX_C_SOURCE=200809L", f"-I{headers}", "-o", str(exe), str(DATA / "run_tables.c"),
                               "-ldl", "-pthread"], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            pytest.skip(f"{CC} cannot build with -fsanitize={kind}: {proc.stderr.strip()[:200]}")
    return exe


@backend_independent
@needs_cc
def test_loader_is_clean_under_sanitizers(headers: Path, fake: dict[str, str], tmp_path: Path) -> None:
    """AddressSanitizer + UBSan on every path (report text included), ThreadSanitizer on 32 threads."""
    asan = _sanitized(headers, "address,undefined")
    for variant, version in (("full", 13000), ("full", 12040), ("full", 12000), ("v1", 11080), ("v1", 11040),
                             ("nogpa", 11020), ("nogpa", 11000), ("stub", 13000)):
        _run(asan, "report", fake[variant], version)
    _run(asan, "report", str(tmp_path / "none" / "libcuda.so.1"), 13000)
    for mode in ("with", "calls", "threads"):
        _run(asan, mode, fake["full"], 13000)
    tsan = _sanitized(headers, "thread")
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    proc = subprocess.run([str(tsan), "threads"], capture_output=True, text=True, env=env, timeout=120, check=False)
    if "FATAL: ThreadSanitizer" in proc.stderr:  # the runtime cannot start on this kernel (memory layout)
        pytest.skip(f"ThreadSanitizer cannot run here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0 and "same=1" in proc.stdout, proc.stdout + proc.stderr


def test_calls_through_the_table(run_tables: Path, fake: dict[str, str]) -> None:
    out = _run(run_tables, "calls", fake["full"], 13000)
    assert "CALLS rc=0 back=cuentry generated table" in out
    assert "UUID rc=0 first=a0" in out                                    # cuDeviceGetUuid_v2, not the v1 export


def test_32_threads_load_once(run_tables: Path, fake: dict[str, str]) -> None:
    out = _run(run_tables, "threads", fake["full"], 13000)
    assert "THREADS 32 same=1 rc=0 asked=14 calls=14" in out, out


@backend_independent
def test_generated_header_lints_clean(headers: Path, capsys: pytest.CaptureFixture[str]) -> None:
    users = [DATA / "run_tables.c", Path(__file__).resolve().parents[1] / "examples" / "c" / "add_one.cpp"]
    rc = main(["lint", *(str(headers / f"{n}.h") for n in NAMES), *map(str, users)])
    assert rc == 0, capsys.readouterr().out


# --- Python ------------------------------------------------------------------------------------


def test_class_and_parameter_names() -> None:
    assert class_name("acme") == "AcmeTable"
    assert class_name("my_lib") == "MyLibTable"
    assert class_name("3d") == "T3dTable"
    seen: set[str] = set()
    assert [_param_name(n, i, seen) for i, n in enumerate(["from", "x", "x", "", "self"])] == \
        ["from_", "x", "x_", "arg3", "self_"]


@pytest.fixture(scope="session")
def pymods(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("genpy")
    for n in NAMES:
        (d / f"{n}_table.py").write_text(generate_python(_manifest(n)))
    return d


def _import(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(f"cuentry_gen_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("version", [13000, 12000])
def test_python_module_resolves_like_the_manifest_table(pymods: Path, fake: dict[str, str], fake_version: Any,
                                                        version: int) -> None:
    fake_version(version)
    drv = Driver.load(fake["full"])
    try:
        for n in NAMES:
            mod = _import(pymods / f"{n}_table.py")
            t = mod.table(source=drv)
            assert type(t).__mro__[1].__name__ == class_name(n)
            assert mod.MIN_DRIVER == _manifest(n).min_driver()
            got = {r["name"]: (r["status"], r["abi"]) for r in t.report()["entries"]}
            want = {r["name"]: (r["status"], r["abi"]) for r in Table.from_manifest(_manifest(n), source=drv).report()["entries"]}
            assert got == want
    finally:
        drv.close()


GOOD = """\
from typing import Any

from cuentry import out
from cuentry.table import Unavailable
from leg_table import leg, table


class Array:                                  # a CUDA array (torch, CuPy, numba): a device pointer
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {}


class CudaStream:                             # the CUDA stream protocol: a stream
    def __cuda_stream__(self) -> tuple[int, int]:
        return (0, 0)


leg.cuMemcpyHtoD(Array(), b"abc", 3)
leg.cuMemcpyDtoH(bytearray(3), Array(), 3)
if leg.cuStreamBeginCapture:
    leg.cuStreamBeginCapture(CudaStream(), 0)

p = out("CUdeviceptr")
rc: int = leg.cuMemAlloc(p, 1 << 20)
leg.cuMemcpyHtoD.checked(0, b"abc", 3)
if leg.cuStreamBeginCapture:
    leg.cuStreamBeginCapture(None, 0)
t = table()
t.cuDriverGetVersion(out("int"))
capture = leg.cuStreamBeginCapture
if not isinstance(capture, Unavailable):
    capture.checked(None, 0)
v11 = leg.cuCtxCreate_as_v11040()             # a fallback of another type: narrowed by its accessor
if v11 is not None:
    v11.checked(out("CUcontext"), None, 0, 0, 0)
v12 = leg.cuCtxCreate_as_v12050()
if v12 is not None:
    v12(out("CUcontext"), None, 0, 0)
# a pointer is an Out, a buffer (array, ctypes, memoryview, numpy), an address or None
import array
import ctypes

from cuentry import address

leg.cuDriverGetVersion(array.array("i", [0]))
leg.cuDriverGetVersion((ctypes.c_int * 1)())
leg.cuDriverGetVersion(memoryview(bytearray(4)).cast("i"))
leg.cuDriverGetVersion(address(0x1000))
leg.cuDriverGetVersion(None)
"""

BAD = """\
from leg_table import leg

leg.cuMemAlloc(1)
leg.cuMemAlloc(None, 1, 2)
leg.cuMemcpyHtoD(0, b"abc", "3")
leg.cuNotThere(1)
x: str = leg.cuInit(0)
leg.cuCtxCreate_as_v3020()(None, 0, 0)
leg.cuMemAlloc.checked("x", 16)
leg.cuMemAlloc.checked(16, 16)
"""


REQUIRED_CHAIN = """\
[table]
name = "req"
stream = "legacy"
required = [{ symbol = "cuCtxCreate", version = 12050, fallback = ["cuCtxCreate@11040", "cuCtxCreate@3020"] },
            { symbol = "cuMemAlloc", version = 3020, name = "alloc", fallback = "cuMemAlloc@3020" }]
"""


@pytest.mark.parametrize("version", [13000, 12000])
def test_python_module_with_a_required_chain_imports_and_resolves(tmp_path: Path, fake: dict[str, str],
                                                                  fake_version: Any, version: int) -> None:
    path = tmp_path / "req_table.py"
    path.write_text(generate_python(manifest.loads(REQUIRED_CHAIN)))
    mod = _import(path)                                   # raised TypeError at import before
    fake_version(version)
    drv = Driver.load(fake["full"])
    try:
        t = mod.table(source=drv)
        t.resolve()
        assert t.cuCtxCreate.abi.version == (12050 if version >= 12050 else 11040)
        assert (t.cuCtxCreate_as_v11040() is None) == (version >= 12050)
        assert t.cuCtxCreate_as_v3020() is None
        want = Table.from_manifest(manifest.loads(REQUIRED_CHAIN), source=drv).report()["entries"]
        assert [(r["name"], r["status"], r["abi"]) for r in t.report()["entries"]] == \
            [(r["name"], r["status"], r["abi"]) for r in want]
    finally:
        drv.close()


@backend_independent
def test_mypy_sees_entry_signatures(pymods: Path, tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    for n in NAMES:
        shutil.copy(pymods / f"{n}_table.py", tmp_path / f"{n}_table.py")
    (tmp_path / "req_table.py").write_text(generate_python(manifest.loads(REQUIRED_CHAIN)))
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                           *(f"{n}_table.py" for n in (*NAMES, "req")), "good.py", "bad.py"], cwd=tmp_path,
                          capture_output=True, text=True, check=False, timeout=300)
    lines = [ln for ln in proc.stdout.splitlines() if ": error:" in ln]
    assert lines, proc.stdout + proc.stderr
    assert all(ln.startswith("bad.py:") for ln in lines), proc.stdout
    assert {int(ln.split(":")[1]) for ln in lines} == {3, 4, 5, 6, 7, 8, 9, 10}, proc.stdout
    assert 'Too few arguments for "__call__" of "_cuMemAlloc_v3020"' in proc.stdout


# --- the command ---------------------------------------------------------------------------------


def test_cli_generate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = str(DATA / "acme.toml")
    out_h = tmp_path / "acme.h"
    assert main(["generate", "c", src, "-o", str(out_h)]) == 0
    assert out_h.read_text() == generate_c(_manifest("acme"))
    assert "wrote" in capsys.readouterr().out
    assert main(["generate", "python", src, "-o", str(tmp_path / "acme.py")]) == 0
    assert (tmp_path / "acme.py").read_text() == generate_python(_manifest("acme"))
    capsys.readouterr()
    assert main(["generate", "c", src]) == 0
    assert "struct acme_table {" in capsys.readouterr().out
    assert main(["generate", "c", src, "-o", src]) == 2
    assert "is the manifest itself" in capsys.readouterr().err
    assert main(["generate", "c", src, "-o", str(tmp_path)]) == 2
    assert main(["generate", "c", src, "-o", str(tmp_path / "missing" / "x.h")]) == 2
    assert main(["generate", "c", src, "--json"]) == 2
    assert main(["generate", "c", str(tmp_path / "absent.toml")]) == 2
    assert main(["generate", "rust", src]) == 2


def test_cli_generate_quiet_and_file_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out_h = str(DATA / "leg.toml"), tmp_path / "leg.h"
    old = os.umask(0o022)
    try:
        assert main(["-q", "generate", "c", src, "-o", str(out_h)]) == 0
    finally:
        os.umask(old)
    assert capsys.readouterr().out == ""                       # -q: the file is written, nothing said
    assert out_h.stat().st_mode & 0o777 == 0o644               # what a plain write gives, not mkstemp's 0600
    out_h.chmod(0o664)
    assert main(["generate", "c", src, "-o", str(out_h)]) == 0
    assert out_h.stat().st_mode & 0o777 == 0o664               # an existing file keeps its mode
    assert main(["-q", "generate", "c", src]) == 0
    assert "struct leg_table {" in capsys.readouterr().out      # to stdout, the product still prints


def test_cli_generate_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    src, out_h = str(DATA / "leg.toml"), tmp_path / "leg.h"
    assert main(["generate", "c", src, "-o", str(out_h), "--check"]) == 1
    assert "is missing" in capsys.readouterr().out
    assert main(["generate", "c", src, "-o", str(out_h)]) == 0
    assert main(["generate", "c", src, "-o", str(out_h), "--check"]) == 0
    capsys.readouterr()
    out_h.write_text(out_h.read_text() + "/* edited */\n")
    assert main(["generate", "c", src, "-o", str(out_h), "--check", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {"ok": False, "language": "c", "manifest": src,
                                                   "output": str(out_h), "exists": True, "up_to_date": False}
    assert main(["generate", "python", src, "-o", str(out_h), "--check"]) == 1
    assert main(["generate", "c", src, "--check"]) == 2


def test_cli_generate_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["generate", "c", str(DATA / "leg.toml"), "-o", str(tmp_path / "leg.h"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] is True
    assert rep["table"] == "leg" and rep["min_driver"] == 7000 and rep["stream"] == "legacy"
    ctx = next(e for e in rep["entries"] if e["name"] == "cuCtxCreate")
    assert [p["member"] for p in ctx["pins"]] == ["pfn_cuCtxCreate", "pfn_cuCtxCreate_11040", "pfn_cuCtxCreate_3020"]
    # A failure with --json is the CLI's error document.
    assert main(["generate", "c", str(DATA / "leg.toml"), "--json"]) == 2
    err = json.loads(capsys.readouterr().out)
    assert err["ok"] is False and err["error"]["type"] == "UsageError" and "-o PATH" in err["error"]["hint"]


@needs_cxx
def test_example_builds_and_runs_to_the_kernel_on_the_fake(tmp_path: Path, fake: dict[str, str]) -> None:
    ex = Path(__file__).resolve().parents[1] / "examples" / "c"
    (tmp_path / "kern.h").write_text(generate_c(manifest.load(ex / "kern.toml")))
    exe = tmp_path / "add_one"
    _compile([CXX, "-std=c++17", *WARN, "-O1", f"-I{tmp_path}", "-o", str(exe), str(ex / "add_one.cpp"),
              "-ldl", "-pthread"])
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60, check=False)
    # The fake driver resolves every entry and runs the set-up calls, but cannot load a module.
    assert proc.returncode == 1
    assert "driver 13000, minimum 11000" in proc.stdout and "device 0: cuentry fake GPU 0" in proc.stdout
    assert "add_one: cuModuleLoadData failed: CUDA_ERROR_NOT_SUPPORTED" in proc.stderr


# --- random manifests ------------------------------------------------------------------------------


_FUZZ_SYMBOLS = ("cuCtxCreate", "cuMemAlloc", "cuMemcpyHtoD", "cuStreamBeginCapture", "cuDeviceGetUuid",
                 "cuGraphInstantiate", "cuGraphInstantiateWithFlags", "cuMemAllocAsync", "cuLaunchKernel",
                 "cuMemPrefetchAsync", "cuDevSmResourceSplitByCount", "cuGLGetDevices", "cuProfilerInitialize")


@st.composite
def _manifests(draw: st.DrawFn) -> str:
    from cuentry.catalog import catalog

    cat = catalog()
    stream = draw(st.sampled_from(["legacy", "per_thread"]))

    def pin() -> str:
        sym = draw(st.sampled_from(_FUZZ_SYMBOLS))
        return f'{{ symbol = "{sym}", version = {draw(st.sampled_from(cat.versions(sym)))} }}'

    items = []
    for i in range(draw(st.integers(1, 5))):
        sym = draw(st.sampled_from(_FUZZ_SYMBOLS))
        ver = draw(st.sampled_from(cat.versions(sym)))
        name = draw(st.sampled_from(["", f'name = "e{i}", ', f'name = "{sym}_3020", ']))
        chain = [pin() for _ in range(draw(st.integers(0, 2)))]
        fb = f", fallback = [{', '.join(chain)}]" if chain else ""
        kind = draw(st.sampled_from(["required", "optional"]))
        items.append((kind, f'{{ {name}symbol = "{sym}", version = {ver}{fb} }}'))
    req = ", ".join(t for k, t in items if k == "required")
    opt = ", ".join(t for k, t in items if k == "optional")
    return f'[table]\nname = "fz"\nstream = "{stream}"\nrequired = [{req}]\noptional = [{opt}]\n'


@backend_independent
@needs_cc
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_manifests())
def test_random_manifests_generate_or_refuse(tmp_path: Path, text: str) -> None:
    from cuentry.errors import ManifestError

    try:
        m = manifest.loads(text)
    except ManifestError:
        return                                   # the manifest refuses it (duplicate names, mixed modes, ...)
    try:
        header = generate_c(m)
    except TableDeclarationError as exc:
        assert "clashes" in str(exc)
        return
    members = [mm for s in plan(m).slots for mm, _ in s.members()]
    assert len(members) == len(set(members))
    compile(generate_python(m), "fz_table.py", "exec")
    (tmp_path / "fz.h").write_text(header)
    src = tmp_path / "fz.c"
    src.write_text('#define FZ_IMPLEMENTATION\n#include "fz.h"\nint main(void) { struct fz_table t; return fz_load(&t); }\n')
    _compile([CC, "-std=c99", *WARN, "-Wpedantic", f"-I{tmp_path}", "-fsyntax-only", str(src)])


def test_python_module_for_any_table_name(tmp_path: Path) -> None:
    path = tmp_path / 'we"ird.toml'
    path.write_text("[table]\nname = 'a\"\"\"b\\x'\nstream = \"legacy\"\nrequired = [\"cuMemAlloc@3020\"]\n")
    m = manifest.load(path)
    src = generate_python(m)
    compile(src, "weird_table.py", "exec")
    assert "    a___b_x: ABXTable\n" in src and "if name == 'a___b_x':" in src
    with pytest.raises(TableDeclarationError):
        generate_c(m)


def test_a_program_using_generated_tables_traces_clean(run_tables: Path, fake: dict[str, str]) -> None:
    """`cuentry trace` of the generated loader finds nothing: pins, flags and query results are all right."""
    from cuentry import trace

    from .tracehelp import session_cache

    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["CUENTRY_FAKE_DRIVER_VERSION"] = "13000"
    env["LD_LIBRARY_PATH"] = str(Path(fake["full"]).parent)
    with session_cache():
        rep = trace.run([str(run_tables), "report"], env=env, stdout=subprocess.DEVNULL, timeout=60)
    assert rep.exit_code == 0
    assert sum(r.count for r in rep.requests) >= 10           # it really asked the driver
    assert {r.symbol for r in rep.requests} >= {"cuMemAlloc", "cuCtxCreate"}
    # Every request is clean. The one finding is about the program, not the header: this test program
    # holds a legacy and a per-thread table at once on purpose, which CT006 reports for one library.
    assert [f.code for f in rep.findings] == ["CT006"], [f.message for f in rep.findings]


def test_templates_and_cmake_package_are_package_data() -> None:
    """The C templates and the CMake package ship inside the package (CI runs this suite from the wheel)."""
    from importlib import resources

    from cuentry.cli import cmake_dir
    from cuentry.generate.c import template

    assert resources.files("cuentry.generate").joinpath("templates", "loader.h.in").is_file()
    assert "#ifndef CUENTRY_PFX_CUENTRY_H" in template()
    assert (Path(cmake_dir()) / "cuentryConfig.cmake").is_file()


@needs_cc
def test_manifest_file_name_is_never_expanded(tmp_path: Path) -> None:
    """A file name holding a placeholder or the prefix stays text in the header's first comment."""
    path = tmp_path / "cuentry_pfx@TYPES@@PINS@.toml"
    path.write_text('[table]\nname = "fn"\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"]\n')
    text = generate_c(manifest.load(path))
    assert "from cuentry_pfx@TYPES@@PINS@.toml (cuentry" in text
    assert text.count("static const struct fn_impl_pin fn_impl_pins[]") == 1
    (tmp_path / "fn.h").write_text(text)
    (tmp_path / "fn.c").write_text('#define FN_IMPLEMENTATION\n#include "fn.h"\n'
                                   "int main(void) { struct fn_table t; return fn_load(&t); }\n")
    _compile([CC, "-std=c99", *WARN, "-Wpedantic", f"-I{tmp_path}", "-fsyntax-only", str(tmp_path / "fn.c")])


def test_the_usage_comment_calls_the_tables_own_entries(tmp_path: Path) -> None:
    for optional, want in (('optional = ["cuMulticastCreate@12010"]\n', True), ("", False)):
        m = tmp_path / "u.toml"
        m.write_text('[table]\nname = "u"\nstream = "legacy"\nrequired = ["cuInit@2000"]\n' + optional)
        out = tmp_path / "u.h"
        assert main(["generate", "c", str(m), "-o", str(out), "-q"]) == 0
        usage = out.read_text().split("*/", 1)[0]
        assert "t->pfn_cuInit(...)" in usage and "cuMemAlloc" not in usage
        assert ("t->pfn_cuMulticastCreate" in usage) == want


@backend_independent
def test_generators_and_lint_import_no_ffi(tmp_path: Path) -> None:
    """`cuentry generate` (C and Python) and lint read C type facts beside the catalog: no ctypes, no calls/."""
    code = ("import sys\nfrom cuentry import manifest\nfrom cuentry.generate import generate_c, generate_python\n"
            "import cuentry.lint\n"
            f"m = manifest.load({str(DATA / 'acme.toml')!r})\ngenerate_c(m)\ngenerate_python(m)\n"
            "print(sorted(k for k in sys.modules if k == 'ctypes' or k.startswith('cuentry.calls')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]", out


def test_c_type_facts_are_the_call_layers() -> None:
    """cfacts' scalar names and sizes are the ones the call layer passes values as (ctypes)."""
    import ctypes

    from cuentry import cfacts
    from cuentry.calls import ffi

    assert set(ffi.SCALARS) == cfacts.SCALAR_NAMES and ffi.ALIASES is cfacts.ALIASES
    assert {k: cfacts.sizeof(k) for k in ffi.SCALARS} == {k: ctypes.sizeof(v) for k, v in ffi.SCALARS.items()}


@backend_independent
def test_python_module_imports_its_runtime_and_nothing_of_typing(pymods: Path, fake: dict[str, str]) -> None:
    """Importing a generated module imports the table runtime its first use needs (so that first use imports
    nothing: tests/test_generate_python_fork.py), never typing (its types are for type checkers only)."""
    code = ("import sys\nimport leg_table\n"
            "print('cuentry.table' in sys.modules, 'typing' in sys.modules)\n"
            "t = leg_table.leg\nprint(type(t).__mro__[1].__name__, t is leg_table.leg, leg_table.leg.available('cuInit'))\n"
            "from leg_table import LegTable\nprint(isinstance(t, LegTable))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pymods), os.environ.get("PYTHONPATH", "")]),
           "CUENTRY_FAKE_DRIVER_VERSION": "13000", "CUENTRY_DRIVER": fake["full"],
           "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         timeout=120, cwd=pymods).stdout.splitlines()
    assert out == ["True False", "LegTable True True", "True"], out


@pytest.mark.parametrize("version", [12000, 13000])
def test_python_available_and_reason_after_a_required_entry_failed(pymods: Path, fake: dict[str, str],
                                                                   fake_version: Any, version: int) -> None:
    """floor requires cuMulticastCreate@12010: on 12.0 resolution fails, and available()/reason() still answer
    (as the C header's available() and the table's report() do)."""
    from cuentry.errors import TableResolutionError

    fake_version(version)
    drv = Driver.load(fake["full"])
    try:
        t = _import(pymods / "floor_table.py").table(source=drv)
        if version == 12000:
            with pytest.raises(TableResolutionError):
                t.resolve()
        assert t.available("cuMemAlloc") is True
        assert t.available("cuMulticastCreate") is (version >= 12010)
        assert t.reason("cuMemAlloc") is None
        why = t.reason("cuMulticastCreate")
        if version == 12000:
            assert why is not None and why.classification.value == "driver_too_old" and why.symbol == "cuMulticastCreate"
        else:
            assert why is None
        with pytest.raises(AttributeError):
            t.available("cuNotThere")
    finally:
        drv.close()


@backend_independent
@needs_cc
def test_member_prefix_has_one_owner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """names.GENERATED_MEMBER_PREFIX names every member the header writes or reads: another prefix leaves no pfn_."""
    from cuentry.generate import c as gen_c

    monkeypatch.setattr(gen_c, "MEMBER_PREFIX", "fn_")
    text = generate_c(_manifest("leg"))
    assert "pfn_" not in text and "fn_cuMemAlloc;" in text
    (tmp_path / "leg.h").write_text(text)
    src = tmp_path / "p.c"
    src.write_text('#define LEG_IMPLEMENTATION\n#include "leg.h"\n'
                   "int main(void) { const struct leg_table *t = leg_get();\n"
                   "  return LEG_CALL_CHECK(t, cuInit, (0)) + leg_available(t, \"fn_cuInit\"); }\n")
    _compile([CC, "-std=c99", *WARN, "-Wpedantic", f"-I{tmp_path}", "-fsyntax-only", str(src)])
