"""The generated header as a large C/C++ library would consume it.

Compilers (gcc, clang, MinGW), standards (C99/C11, C++11/17/20) and the strictest common warnings, with
and without cuda.h; one definition across files that do and do not include cuda.h (LTO -Wodr); two shared
libraries with same-named tables in one process; a 1,000-entry table on a 64 KiB thread stack; the
header-only (static) mode; the C++ layer's check hook and [[nodiscard]]; entry names that are refused.

The compile matrix is lean by default (a few configurations); ``CUENTRY_FULL_MATRIX=1`` runs all of it.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cuentry import manifest
from cuentry.cli import main
from cuentry.errors import ManifestError
from cuentry.generate import generate_c

from .conftest import CUDA_INCLUDE

DATA = Path(__file__).parent / "generate_data"
NAMES = ("acme", "leg", "floor")
STRICT = ["-Wall", "-Wextra", "-Wpedantic", "-Werror", "-Wconversion", "-Wshadow", "-Wundef"]
# What strict C++ projects add (gcc), and clang's -Weverything minus the usual few.
STRICT_CXX = ["-Wold-style-cast", "-Wzero-as-null-pointer-constant", "-Wcast-qual", "-Wsign-conversion"]
STRICT_GCC_CXX = ["-Wuseless-cast"]
EVERYTHING = ["-Weverything", "-Werror", "-Wno-unknown-warning-option", "-Wno-c++98-compat",
              "-Wno-c++98-compat-pedantic", "-Wno-padded", "-Wno-unsafe-buffer-usage",
              "-Wno-declaration-after-statement", "-Wno-reserved-identifier", "-Wno-reserved-macro-identifier",
              "-Wno-poison-system-directories", "-Wno-pre-c11-compat", "-Wno-unused-macros", "-Wno-c++20-compat",
              "-Wno-pre-c2x-compat", "-Wno-pre-c23-compat"]
HAVE_CUDA = (CUDA_INCLUDE / "cuda.h").exists()
FULL = os.environ.get("CUENTRY_FULL_MATRIX") == "1"

# Tests that never call through cuentry's call backend run once, not again in CI's pure-backend pass.
pytestmark = pytest.mark.skipif(os.environ.get("CUENTRY_BACKEND") == "pure",
                                reason="does not use the call backend: runs in the default pass")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=300, **kw)  # type: ignore[call-overload]
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc


def _write_headers(d: Path) -> Path:
    for n in NAMES:
        (d / f"{n}.h").write_text(generate_c(manifest.load(DATA / f"{n}.toml")))
    return d


@pytest.fixture(scope="module")
def hdrs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_headers(tmp_path_factory.mktemp("consumers"))


def _unit(cxx: bool) -> str:
    lines = []
    for n in NAMES:
        lines += [f"#define {n.upper()}_IMPLEMENTATION", f'#include "{n}.h"']
    lines += ["int main(void) {", "    struct acme_table a;", "    struct leg_table l;", "    struct floor_table f;",
              "    if (acme_load(&a) != 0 || leg_load(&l) != 0 || floor_load(&f) != 0) return 1;"]
    if cxx:
        lines += ["    acme_driver::table t2;", "    if (acme_driver::load(t2) != ACME_OK) return 1;",
                  "    static_assert(acme_driver::min_driver == ACME_MIN_DRIVER, \"constexpr floor\");",
                  "    static_assert(acme_driver::version_cuMemAlloc == 3020, \"constexpr pins\");"]
    lines += [f"    return a.pfn_cuMemAlloc == {'nullptr' if cxx else '0'};", "}", ""]
    return "\n".join(lines)


_C = [("c", std) for std in ("c99", "c11", "c17", "c2x")]
_CXX = [("c++", std) for std in ("c++11", "c++14", "c++17", "c++20", "c++2b")]
_ALL = [(cc, lang, std, cuda) for cc in ("gcc", "clang") for lang, std in (*_C, *_CXX) for cuda in (False, True)]
_LEAN = [("gcc", "c", "c99", False), ("clang", "c", "c11", True), ("gcc", "c++", "c++11", True),
         ("clang", "c++", "c++20", False), ("gcc", "c++", "c++17", True), ("gcc", "c", "c2x", False),
         ("gcc", "c++", "c++2b", False)]


@pytest.mark.parametrize("cc,lang,std,cuda", _ALL if FULL else _LEAN)
def test_strict_compile(hdrs: Path, tmp_path: Path, cc: str, lang: str, std: str, cuda: bool) -> None:
    """-Wall -Wextra -Wpedantic -Werror -Wconversion -Wshadow, alone and after cuda.h/cudaTypedefs.h."""
    compiler = _tool(cc if lang == "c" else {"gcc": "g++", "clang": "clang++"}[cc])
    if cuda and not HAVE_CUDA:
        pytest.skip(f"no CUDA headers at {CUDA_INCLUDE}")
    src = tmp_path / ("u.c" if lang == "c" else "u.cpp")
    src.write_text(_unit(lang == "c++"))
    inc = ["-isystem", str(CUDA_INCLUDE), "-include", "cuda.h", "-include", "cudaTypedefs.h"] if cuda else []
    extra = [*STRICT_CXX, *(STRICT_GCC_CXX if cc == "gcc" else [])] if lang == "c++" else []
    _run([compiler, f"-std={std}", *STRICT, *extra, *inc, f"-I{hdrs}", "-fsyntax-only", str(src)])
    if cc == "clang":  # a file that only includes the headers (what every file of a project does)
        plain = tmp_path / ("p.c" if lang == "c" else "p.cpp")
        plain.write_text("".join(f'#include "{n}.h"\n' for n in NAMES) + "int use(const struct acme_table *t);\n"
                         "int use(const struct acme_table *t) { return acme_available(t, \"cuMemAlloc\"); }\n")
        _run([compiler, f"-std={std}", *EVERYTHING, *inc, f"-I{hdrs}", "-fsyntax-only", str(plain)])


def _wheel_cuda_includes() -> list[Path]:
    """include/ directories with cuda.h from NVIDIA's CUDA runtime wheels installed here (nvidia-cuda-runtime-cu12, ...)."""
    import sys

    found = {p.parent for s in sys.path if s for p in Path(s).glob("nvidia/cu*/include/cuda.h")}
    return sorted(found)


@pytest.mark.parametrize("lang,std", [("c", "c11"), ("c++", "c++17")])
def test_strict_compile_after_the_runtime_wheels_cuda_h(hdrs: Path, tmp_path: Path, lang: str, std: str) -> None:
    """cuda.h/cudaTypedefs.h of another toolkit (the pip wheels ship them: 12.x here), every member assigned to
    and from NVIDIA's own PFN type where that toolkit has it."""
    dirs = _wheel_cuda_includes()
    if not dirs:
        pytest.skip("no CUDA runtime wheel with include/cuda.h installed (pip install nvidia-cuda-runtime-cu12)")
    import re

    from cuentry.generate.model import plan
    from cuentry.names import format_version

    compiler = _tool("cc" if lang == "c" else "c++")
    for inc in dirs:
        m = re.search(r"#define CUDA_VERSION (\d+)", (inc / "cuda.h").read_text(errors="replace"))
        release = format_version(int(m.group(1))) if m else ""
        compat = [f"    {{ {abi.pfn} p = {n}_t.pfn_{member}; {n}_t.pfn_{member} = p; }}"
                  for n in NAMES for s in plan(manifest.load(DATA / f"{n}.toml")).slots
                  for member, abi in s.members() if abi.header == "cudaTypedefs.h" and release in abi.toolkits]
        assert compat, release
        body = [f"    struct {n}_table {n}_t = {{0}};" if lang == "c" else f"    struct {n}_table {n}_t = {{}};"
                for n in NAMES]
        src = tmp_path / ("w.c" if lang == "c" else "w.cpp")
        src.write_text("#include <cuda.h>\n#include <cudaTypedefs.h>\n" + "".join(
            f'#define {n.upper()}_IMPLEMENTATION\n#include "{n}.h"\n' for n in NAMES) +
            "int main(void) {\n" + "\n".join([*body, *compat]) + "\n    return 0;\n}\n")
        _run([compiler, f"-std={std}", *STRICT, "-Wno-missing-field-initializers", "-isystem", str(inc), f"-I{hdrs}",
              "-fsyntax-only", str(src)])


@pytest.mark.parametrize("lang", ["c", "c++"])
def test_windows_branch_compiles_and_links_with_mingw(hdrs: Path, tmp_path: Path, lang: str) -> None:
    """LoadLibraryExW(LOAD_LIBRARY_SEARCH_SYSTEM32), FormatMessageA, NOMINMAX/WIN32_LEAN_AND_MEAN, InitOnce."""
    compiler = _tool("x86_64-w64-mingw32-gcc" if lang == "c" else "x86_64-w64-mingw32-g++")
    src = tmp_path / ("w.c" if lang == "c" else "w.cpp")
    # windows.h's min/max macros must not leak out of the header (NOMINMAX is undone after the include).
    src.write_text(_unit(lang == "c++").replace("int main(void) {", "static int min(int a, int b) { return a < b ? a : b; }\n"
                                                "int main(void) {\n    if (min(1, 2) != 1) return 2;"))
    std = "-std=c99" if lang == "c" else "-std=c++17"
    _run([compiler, std, *STRICT, f"-I{hdrs}", "-o", str(tmp_path / "w.exe"), str(src)])
    assert (tmp_path / "w.exe").read_bytes()[:2] == b"MZ"
    header = (hdrs / "acme.h").read_text()
    assert "LoadLibraryExW(L\"\" ACME_DRIVER_LIBRARY, NULL, LOAD_LIBRARY_SEARCH_SYSTEM32)" in header
    assert "LoadLibraryA" not in header and "FormatMessageA" in header


def test_one_definition_with_and_without_cuda_h_under_lto(hdrs: Path, tmp_path: Path) -> None:
    """One file includes cuda.h first, another does not: the same struct and inline functions (g++ -flto -Wodr)."""
    gxx = _tool("g++")
    if not HAVE_CUDA:
        pytest.skip(f"no CUDA headers at {CUDA_INCLUDE}")
    (tmp_path / "a.cpp").write_text(
        "#include <cuda.h>\n#include <cudaTypedefs.h>\n#define ACME_IMPLEMENTATION\n#include \"acme.h\"\n"
        "int b_use(const acme_table *t);\n"
        "int main() { acme_table t; if (acme_driver::load(t) != ACME_OK) return 1;\n"
        "  PFN_cuMemAlloc_v3020 p = t.pfn_cuMemAlloc; return b_use(&t) + (p == nullptr); }\n")
    (tmp_path / "b.cpp").write_text(
        "#include \"acme.h\"\n"
        "int b_use(const acme_table *t) { acme_table copy = *t; (void)acme_driver::available(copy, \"cuMemAlloc\");\n"
        "  return copy.pfn_cuMemAlloc == nullptr && copy.pfn_cuCtxCreate_3020 == nullptr; }\n")
    proc = _run([gxx, "-std=c++17", "-O2", "-flto", "-Wodr", "-Werror", "-Wall", "-Wextra", f"-I{CUDA_INCLUDE}",
                 f"-I{hdrs}", "-o", str(tmp_path / "odr"), str(tmp_path / "a.cpp"), str(tmp_path / "b.cpp"), "-ldl"])
    assert "odr" not in proc.stderr.lower()


def _struct(text: str) -> str:
    start = text.index("struct acme_table {")
    return " ".join(text[start:text.index("};", start)].split())


@pytest.mark.parametrize("lang", ["c", "c++"])
def test_struct_is_the_same_with_and_without_cuda_h_macros(hdrs: Path, tmp_path: Path, lang: str) -> None:
    """cuda.h's renaming macros (cuMemAlloc -> cuMemAlloc_v2) leave every member name alone."""
    if not HAVE_CUDA:
        pytest.skip(f"no CUDA headers at {CUDA_INCLUDE}")
    cc = _tool("cc" if lang == "c" else "c++")
    src = tmp_path / ("s.c" if lang == "c" else "s.cpp")
    src.write_text('#include "acme.h"\n')
    plain = _run([cc, "-E", "-P", "-DACME_NO_CUDA_H", f"-I{hdrs}", "-x", lang, str(src)]).stdout
    cuda = _run([cc, "-E", "-P", "-DCUDA_API_PER_THREAD_DEFAULT_STREAM", f"-I{CUDA_INCLUDE}", "-include", "cuda.h",
                 f"-I{hdrs}", "-x", lang, str(src)]).stdout
    assert _struct(plain) == _struct(cuda)
    assert "pfn_cuMemAlloc;" in _struct(cuda) and "cuMemAlloc_v2" not in _struct(cuda)


_TWIN_A = '[table]\nname = "twin"\nstream = "legacy"\nrequired = ["cuInit@2000", "cuGetErrorString@6000"]\n'
_TWIN_B = '[table]\nname = "twin"\nstream = "legacy"\nrequired = ["cuGetErrorString@6000", "cuDriverGetVersion@2020"]\n'

_TWIN_LIB = r"""
#define TWIN_IMPLEMENTATION
#include "twin.h"
#include <dlfcn.h>
#include <string.h>
/* 0 when every member points at the driver's own export of that name; the load's result otherwise. */
__attribute__((visibility("default"))) int LIBNAME(void) {
    struct twin_table t;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    int rc = twin_load(&t);
    void *p;
    if (rc != 0) return 100 + rc;
    if (lib == NULL) return 99;
    CHECKS
    return 0;
}
"""


def _twin(d: Path, text: str, libname: str, checks: list[tuple[str, str]], api: list[str]) -> Path:
    src_dir = d / libname
    src_dir.mkdir()
    (src_dir / "twin.h").write_text(generate_c(manifest.loads(text)))
    body = " ".join(f'p = dlsym(lib, "{exp}"); if (memcmp(&p, &t.{m}, sizeof p) != 0) return {i + 1};'
                    for i, (m, exp) in enumerate(checks))
    (src_dir / "lib.c").write_text(_TWIN_LIB.replace("LIBNAME", libname).replace("CHECKS", body))
    out = d / f"lib{libname}.so"
    _run([_tool("cc"), "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-shared", "-fPIC", *api, f"-I{src_dir}", "-o", str(out),
          str(src_dir / "lib.c"), "-ldl", "-pthread"])
    return out


@pytest.mark.parametrize("exported", [False, True])
def test_two_shared_libraries_with_same_named_tables(tmp_path: Path, fake: dict[str, str], exported: bool) -> None:
    """Each library keeps its own loader (hidden by default; exported on purpose, its names are stamped)."""
    api = ["-DTWIN_API=__attribute__((visibility(\"default\")))"] if exported else []
    _twin(tmp_path, _TWIN_A, "one", [("pfn_cuInit", "cuInit"), ("pfn_cuGetErrorString", "cuGetErrorString")], api)
    _twin(tmp_path, _TWIN_B, "two", [("pfn_cuGetErrorString", "cuGetErrorString"),
                                     ("pfn_cuDriverGetVersion", "cuDriverGetVersion")], api)
    (tmp_path / "main.c").write_text('#include <stdio.h>\n#include <dlfcn.h>\nint one(void);\nint two(void);\n'
                                     'int main(void) { (void)dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);\n'
                                     '  printf("ONE %d TWO %d\\n", one(), two()); return 0; }\n')
    exe = tmp_path / "main"
    _run([_tool("cc"), "-std=c99", "-o", str(exe), str(tmp_path / "main.c"), f"-L{tmp_path}", "-lone", "-ltwo", "-ldl",
          f"-Wl,-rpath,{tmp_path}"])
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    out = _run([str(exe)], env=env).stdout
    # Exported too, each library keeps its own loader: the loader's names carry the header's stamp.
    assert out.strip() == "ONE 0 TWO 0", out


def _big_manifest(n: int) -> str:
    from cuentry.catalog import catalog

    cat = catalog()
    syms = [s for s in cat.symbols() if cat.versions(s)]
    items = [f'{{ symbol = "{sym}", version = {cat.first_version(sym, "legacy")}, name = "e{i}" }}'
             for i, sym in zip(range(n), itertools.cycle(syms))]
    return '[table]\nname = "big"\nstream = "legacy"\noptional = [\n' + ",\n".join(items) + "\n]\n"


_BIG_MAIN = r"""
#define _POSIX_C_SOURCE 200809L
#define BIG_IMPLEMENTATION
#include "big.h"
#include <pthread.h>
#include <stdio.h>
static int rc = -1, avail = -1;
static void *worker(void *arg) {
    struct big_table t; /* on this thread's 64 KiB stack */
    (void)arg;
    rc = big_load(&t);
    avail = big_available(&t, "e0");
    return NULL;
}
int main(void) {
    pthread_attr_t attr;
    pthread_t th;
    pthread_attr_init(&attr);
    if (pthread_attr_setstacksize(&attr, 65536) != 0) return 3;
    if (pthread_create(&th, &attr, worker, NULL) != 0) return 4;
    pthread_join(th, NULL);
    printf("BIG rc=%d avail=%d size=%zu diag=%zu\n", rc, avail, sizeof(struct big_table), sizeof(struct big_diag));
    return 0;
}
"""


def test_thousand_entries_on_a_64k_thread_stack(tmp_path: Path, fake: dict[str, str]) -> None:
    cc = _tool("cc")
    m = manifest.loads(_big_manifest(1000))
    (tmp_path / "big.h").write_text(generate_c(m))
    (tmp_path / "big.c").write_text(_BIG_MAIN)
    exe = tmp_path / "big"
    _run([cc, "-std=c99", "-O1", *STRICT, f"-I{tmp_path}", "-o", str(exe), str(tmp_path / "big.c"), "-ldl", "-pthread"])
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    out = _run([str(exe)], env=env).stdout
    fields = dict(kv.split("=") for kv in out.split()[1:])
    assert fields["rc"] == "0" and fields["avail"] == "1", out
    assert int(fields["size"]) <= 1000 * 8 + 64                 # pointers and a small status only
    assert int(fields["diag"]) > 100_000                        # the report lives apart, in static storage


_STATIC_A = '#define ACME_STATIC\n#include "acme.h"\nint a_rc(void) { struct acme_table t; return acme_load(&t); }\n'
_STATIC_B = ('#define ACME_STATIC\n#include "acme.h"\nint a_rc(void);\n'
             'int main(void) { struct acme_table t; return acme_load(&t) != a_rc(); }\n')


@pytest.mark.parametrize("lang", ["c", "c++"])
def test_header_only_static_mode(hdrs: Path, tmp_path: Path, fake: dict[str, str], lang: str) -> None:
    """ACME_STATIC in two files of one program: private copies, no duplicate symbols, nothing exported."""
    cc = _tool("cc" if lang == "c" else "c++")
    ext = "c" if lang == "c" else "cpp"
    (tmp_path / f"a.{ext}").write_text(_STATIC_A.replace("int a_rc", 'extern "C" int a_rc') if lang == "c++" else _STATIC_A)
    (tmp_path / f"b.{ext}").write_text(_STATIC_B.replace("int a_rc", 'extern "C" int a_rc') if lang == "c++" else _STATIC_B)
    exe = tmp_path / "st"
    std = "-std=c99" if lang == "c" else "-std=c++11"
    _run([cc, std, *STRICT, f"-I{hdrs}", "-o", str(exe), str(tmp_path / f"a.{ext}"), str(tmp_path / f"b.{ext}"), "-ldl",
          "-pthread"])
    nm = shutil.which("nm")
    if nm:
        syms = _run([nm, "-g", "--defined-only", str(exe)]).stdout
        assert "acme_load_layout" not in syms
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    _run([str(exe)], env=env)


_HOOK = r"""
#include <cstdio>
#include <cstring>
static int checks = 0;
static char seen[64];
#define ACME_CHECK(cond, message) do { if (!(cond)) { ++checks; std::snprintf(seen, sizeof seen, "%s", message); } } while (0)
#define ACME_NAMESPACE mylib_cuda
#define ACME_IMPLEMENTATION
#include "acme.h"
int main() {
    const mylib_cuda::table &t = mylib_cuda::require();
    std::printf("HOOK checks=%d ok=%d seen=%.5s\n", checks, t.pfn_cuMemAlloc != nullptr, seen);
    return 0;
}
"""


@pytest.mark.parametrize("driver", ["fake", "none"])
def test_cxx_check_hook(hdrs: Path, tmp_path: Path, fake: dict[str, str], driver: str) -> None:
    gxx = _tool("g++")
    (tmp_path / "hook.cpp").write_text(_HOOK)
    exe = tmp_path / "hook"
    _run([gxx, "-std=c++17", *STRICT, f"-I{hdrs}", "-o", str(exe), str(tmp_path / "hook.cpp"), "-ldl", "-pthread"])
    lib = Path(fake["full"]).parent if driver == "fake" else tmp_path / "nothing"
    env = {**{k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}, "CUENTRY_FAKE_DRIVER_VERSION": "13000",
           "LD_LIBRARY_PATH": str(lib)}
    out = _run([str(exe)], env=env).stdout
    if driver == "fake":
        assert "HOOK checks=0 ok=1" in out
    elif "checks=0" in out:
        pytest.skip("a real libcuda.so.1 is installed on this machine")
    else:
        assert "HOOK checks=1 ok=0 seen=acme:" in out, out          # the library's own error style, with the report


def test_cxx_load_is_nodiscard(hdrs: Path, tmp_path: Path) -> None:
    gxx = _tool("g++")
    src = tmp_path / "nd.cpp"
    src.write_text('#include "acme.h"\nvoid f(acme_driver::table &t) { acme_driver::load(t); }\n')
    proc = subprocess.run([gxx, "-std=c++17", "-Werror", f"-I{hdrs}", "-fsyntax-only", str(src)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode != 0 and "nodiscard" in proc.stderr


@pytest.mark.parametrize("name,why", [("linux", "predefined"), ("unix", "predefined"), ("cuInit", "another driver function"),
                                      ("cuMemAlloc_v2", "exported name of cuMemAlloc"), ("errno", "macro")])
def test_entry_names_refused_with_position(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, why: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[table]\nname = "bad"\nstream = "legacy"\nrequired = [\n'
                    f'  "cuCtxSetCurrent@4000",\n  {{ symbol = "cuMemAlloc", version = 3020, name = "{name}" }},\n]\n')
    with pytest.raises(ManifestError, match=why) as info:
        generate_c(manifest.load(path))
    assert (info.value.line, info.value.column) == (6, 3)
    assert main(["generate", "c", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:6:3:" in err and "another name" in err


def test_own_symbol_is_fine_as_a_name_and_keywords_are_refused() -> None:
    m = manifest.loads('[table]\nname = "ok"\nstream = "legacy"\n'
                       'required = [{ symbol = "cuMemAlloc", version = 3020, name = "cuMemAlloc" }, '
                       '{ symbol = "cuInit", version = 2000, name = "init" }]\n')
    text = generate_c(m)
    assert "pfn_cuMemAlloc;" in text and "pfn_init;" in text
    for word in ("class", "struct", "NULL"):
        bad = manifest.loads('[table]\nname = "k"\nstream = "legacy"\n'
                             f'required = [{{ symbol = "cuMemAlloc", version = 3020, name = "{word}" }}]\n')
        with pytest.raises(ManifestError, match="keyword"):
            generate_c(bad)


def _doc_blocks(lang: str) -> list[str]:
    import re
    import textwrap

    text = (Path(__file__).resolve().parents[1] / "docs" / "generate.md").read_text()
    return [textwrap.dedent(m.group(1)) for m in re.finditer(rf"^ *```{lang}\n(.*?)^ *```\n", text, re.M | re.S)]


def test_docs_examples_build_and_run(tmp_path: Path, fake: dict[str, str]) -> None:
    """docs/generate.md: its manifest, its C use and its C++ use, compiled strictly and run on the fake driver."""
    toml = next(b for b in _doc_blocks("toml") if 'name = "mylib"' in b)
    c_use = next(b for b in _doc_blocks("c") if "int mylib_init(void)" in b)
    cxx_use = next(b for b in _doc_blocks("cpp") if "MYLIB_CHECK" in b)
    (tmp_path / "mylib.toml").write_text(toml)
    assert main(["-q", "generate", "c", str(tmp_path / "mylib.toml"), "-o", str(tmp_path / "mylib.h")]) == 0
    (tmp_path / "use.c").write_text(c_use + "\nint main(void) { return mylib_init() != 0; }\n")
    (tmp_path / "use.cpp").write_text("#define TORCH_CHECK(c, m) do { if (!(c)) throw (m); } while (0)\n"
                                      "#define MYLIB_IMPLEMENTATION\n" + cxx_use + "\nint main() { mylib_init(); }\n")
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    for cc, src, std in (("cc", "use.c", "-std=c99"), ("c++", "use.cpp", "-std=c++17")):
        exe = tmp_path / src.replace(".", "_")
        _run([_tool(cc), std, *STRICT, f"-I{tmp_path}", "-o", str(exe), str(tmp_path / src), "-ldl", "-pthread"])
        _run([str(exe)], env=env)


@pytest.mark.parametrize("toolkit", ["11.8", "12.4", "13.0"])
def test_after_cuentrys_own_generated_cuda_h(hdrs: Path, tmp_path: Path, toolkit: str) -> None:
    """cuentry's own cuda.h/cudaTypedefs.h (lint's, from the catalog: every type, interop enums and CUuuid
    included) before the headers, in C and C++ (where the header includes cuda.h itself): nothing redefined."""
    from cuentry.catalog import catalog
    from cuentry.lint.clang.headers import generated_dir

    inc = generated_dir(catalog(), toolkit)
    for lang, compiler, std in (("c", _tool("gcc"), "-std=c11"), ("c++", _tool("g++"), "-std=c++17")):
        src = tmp_path / ("g.c" if lang == "c" else "g.cpp")
        src.write_text("#include <cuda.h>\n#include <cudaTypedefs.h>\n" + _unit(lang == "c++"))
        _run([compiler, std, *STRICT, f"-I{inc}", f"-I{hdrs}", "-fsyntax-only", str(src)])
        src.write_text(_unit(lang == "c++"))  # C++: the header finds cuda.h on the include path itself
        _run([compiler, std, *STRICT, f"-I{inc}", f"-I{hdrs}", "-fsyntax-only", str(src)])


_DEFAULT_CHECK = r"""
#include <cstdio>
#include <exception>
#include "acme.h"
int main() {
    const acme_table &t = *acme_get();
    try {
        (void)acme_driver::require();
        std::printf("REQUIRE ok\n");
    } catch (const std::exception &e) {
        std::printf("REQUIRE threw [%.40s]\n", e.what());
    }
    try {
        ACME_CALL_CHECK(&t, cuStreamBeginCapture, (nullptr, CU_STREAM_CAPTURE_MODE_GLOBAL));
        std::printf("CALL ok\n");
    } catch (const std::exception &e) {
        std::printf("CALL threw [%s]\n", e.what());
    }
    return 0;
}
"""
_C_CHECK = r"""
#include <stdio.h>
#define ACME_IMPLEMENTATION
#include "acme.h"
int main(void) {
    const struct acme_table *t = acme_get();
    int rc = ACME_CALL_CHECK(t, cuStreamBeginCapture, (NULL, CU_STREAM_CAPTURE_MODE_GLOBAL));
    int missing = ACME_CALL_CHECK(t, cuMulticastCreate, (NULL, NULL));
    printf("RC %d %d\n", rc, missing);
    return 0;
}
"""


@pytest.mark.parametrize("impl", ["c++", "c"])
def test_default_checks(hdrs: Path, tmp_path: Path, fake: dict[str, str], impl: str) -> None:
    """Without a check hook: C++'s require()/ACME_CALL_CHECK throw a std::exception naming the entry, the
    CUresult and the call site where the implementation file is C++ and asks for exceptions (ACME_EXCEPTIONS),
    and abort where it is C (or does not ask: tests/test_generate_failures.py); C's ACME_CALL_CHECK writes the
    message to stderr and returns the result (an unresolved entry: not called)."""
    (tmp_path / "use.cpp").write_text(_DEFAULT_CHECK)
    if impl == "c++":
        (tmp_path / "impl.cpp").write_text('#define ACME_EXCEPTIONS\n#define ACME_IMPLEMENTATION\n#include "acme.h"\n')
        objs = [str(tmp_path / "impl.cpp")]
    else:
        (tmp_path / "impl.c").write_text('#define ACME_IMPLEMENTATION\n#include "acme.h"\n')
        _run([_tool("gcc"), "-std=c99", *STRICT, f"-I{hdrs}", "-c", "-o", str(tmp_path / "impl.o"), str(tmp_path / "impl.c")])
        objs = [str(tmp_path / "impl.o")]
    exe = tmp_path / "chk"
    _run([_tool("g++"), "-std=c++17", *STRICT, *STRICT_CXX, f"-I{hdrs}", "-o", str(exe), str(tmp_path / "use.cpp"), *objs,
          "-ldl", "-pthread"])
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "12000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60, check=False)
    if impl == "c++":
        assert proc.returncode == 0, proc.stderr
        assert "REQUIRE ok" in proc.stdout, proc.stdout
        assert ("CALL threw [acme: cuStreamBeginCapture failed: CUDA_ERROR_NOT_SUPPORTED (801) at "
                f"{tmp_path / 'use.cpp'}:14]") in proc.stdout, proc.stdout
    else:
        assert proc.returncode < 0 and "acme:" in proc.stderr, (proc.returncode, proc.stderr)   # abort()
    c = tmp_path / "c.c"
    c.write_text(_C_CHECK)
    _run([_tool("gcc"), "-std=c99", *STRICT, f"-I{hdrs}", "-o", str(tmp_path / "cchk"), str(c), "-ldl", "-pthread"])
    proc = subprocess.run([str(tmp_path / "cchk")], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert proc.stdout.strip() == "RC 801 -1", proc.stdout + proc.stderr
    assert f"acme: cuStreamBeginCapture failed: CUDA_ERROR_NOT_SUPPORTED (801) at {c}:7" in proc.stderr
    assert f"acme: cuMulticastCreate is not available (the entry did not resolve: see acme_report()) at {c}:8" \
        in proc.stderr, proc.stderr


def test_one_struct_whatever_cuda_h_each_file_sees(hdrs: Path, tmp_path: Path) -> None:
    """C++ files of one program, some including cuda.h themselves and some not (the header includes it where it is
    on the include path): one type for each table struct (g++ -flto -Wodr -Werror), for 11.8's, 12.4's and 13.0's
    cuda.h (cuentry's own, written from the catalog's per-release facts), the real one where it is here, and none
    at all (the header's own types). Every file of a program sees one toolkit's headers or none: two toolkits in
    one program already define cuda.h's own enums (CUresult) twice, differently."""
    from cuentry.catalog import catalog
    from cuentry.lint.clang.headers import generated_dir

    gxx = _tool("g++")
    setups: dict[str, Path | None] = {"118": generated_dir(catalog(), "11.8"), "124": generated_dir(catalog(), "12.4"),
                                      "130": generated_dir(catalog(), "13.0"), "none": None}
    if HAVE_CUDA:
        setups["real"] = CUDA_INCLUDE
    use = ("int use_{v}(const acme_table *a, const leg_table *l, const floor_table *f) {{\n"
           "    acme_table a2 = *a; leg_table l2 = *l; floor_table f2 = *f;\n"
           "    return (a2.pfn_cuMemAlloc == nullptr) + (l2.pfn_cuCoredumpGetAttribute == nullptr) +\n"
           "           (f2.pfn_cuMulticastCreate == nullptr);\n}}\n")
    headers = "".join(f'#include "{n}.h"\n' for n in NAMES)
    for name, inc in setups.items():
        d = tmp_path / name
        d.mkdir()
        files = {"own": ("#include <cuda.h>\n#include <cudaTypedefs.h>\n" if inc else "") + headers + use.format(v="own"),
                 "plain": headers + use.format(v="plain"),
                 "main": "".join(f'#define {n.upper()}_IMPLEMENTATION\n#include "{n}.h"\n' for n in NAMES) +
                 "".join(f"int use_{v}(const acme_table *, const leg_table *, const floor_table *);\n"
                         for v in ("own", "plain")) +
                 "int main() { acme_table a; leg_table l; floor_table f;\n"
                 "  (void)acme_load(&a); (void)leg_load(&l); (void)floor_load(&f);\n"
                 "  return use_own(&a, &l, &f) + use_plain(&a, &l, &f); }\n"}
        objs = []
        for stem, text in files.items():
            (d / f"{stem}.cpp").write_text(text)
            objs.append(str(d / f"{stem}.o"))
            _run([gxx, "-std=c++17", "-O2", "-flto", "-Wodr", *([f"-I{inc}"] if inc else []), f"-I{hdrs}", "-c", "-o",
                  objs[-1], str(d / f"{stem}.cpp")])
        proc = _run([gxx, "-O2", "-flto", "-Wodr", "-Werror", "-o", str(d / "odr"), *objs, "-ldl", "-pthread"])
        assert "odr" not in proc.stderr.lower(), (name, proc.stderr)


def test_one_header_implemented_twice_links(hdrs: Path, tmp_path: Path, fake: dict[str, str]) -> None:
    """Two objects (two static libraries of one vendor, say) that both define ACME_IMPLEMENTATION link into one
    program: the loader's functions are weak and hidden, one definition wins, and the process has one table."""
    cc = _tool("cc")
    objs = []
    for name in ("a", "b"):
        src = tmp_path / f"{name}.c"
        src.write_text('#define ACME_IMPLEMENTATION\n#include "acme.h"\n'
                       f"const void *{name}_get(void) {{ return (const void *)acme_get(); }}\n")
        obj = tmp_path / f"{name}.o"
        _run([cc, "-std=c99", *STRICT, f"-I{hdrs}", "-c", "-o", str(obj), str(src)])
        objs.append(str(obj))
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\nconst void *a_get(void);\nconst void *b_get(void);\n'
                    'int main(void) { printf("SAME %d\\n", a_get() == b_get()); return 0; }\n')
    exe = tmp_path / "twice"
    _run([cc, "-std=c99", "-o", str(exe), str(main), *objs, "-ldl", "-pthread"])
    env = {**os.environ, "CUENTRY_FAKE_DRIVER_VERSION": "13000", "LD_LIBRARY_PATH": str(Path(fake["full"]).parent)}
    assert _run([str(exe)], env=env).stdout.strip() == "SAME 1"
    nm = shutil.which("nm")
    if nm:
        assert "acme_impl" not in _run([nm, "-D", "--defined-only", str(exe)]).stdout   # nothing exported
