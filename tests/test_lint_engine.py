"""cuentry lint on bad input: one bad file never loses the rest; limits; selection; cross-file wrappers."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")

from cuentry.cli import main  # noqa: E402
from cuentry.errors import UsageError  # noqa: E402
from cuentry.lint import lint_paths, lint_text  # noqa: E402
from cuentry.lint.engine import (
    Settings,  # noqa: E402
    is_python,  # noqa: E402
    iter_files,  # noqa: E402
    read_source,  # noqa: E402
)
from cuentry.lint.preprocess import preprocess  # noqa: E402

BAD_C = ('void f(){void*p;CUdriverProcAddressQueryResult q;'
         'if(cuGetProcAddress("cuMemAlloc",&p,1000,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q)||q){}}\n')


def _cli(*argv: str) -> tuple[int, str, str]:
    o, e = io.StringIO(), io.StringIO()
    return main(list(argv), stdout=o, stderr=e), o.getvalue(), e.getvalue()


def test_explicit_files_are_taken_by_suffix_and_a_header_without_one(tmp_path: Path) -> None:
    """`cuentry lint README.md` once parsed Markdown as C (54 clang errors, a prose `cuentry: ignore` reported as
    an unused suppression): a file given by name is linted when its suffix is a source suffix or it has none."""
    for name in ("README.md", "data.json", "notes.txt", "loader", "impl.ipp", "mod.cppm", "tool.pyw"):
        (tmp_path / name).write_text(BAD_C if "." not in name or name.endswith((".ipp", ".cppm")) else "x = 1\n")
    files, problems = iter_files([str(tmp_path / n) for n in sorted(os.listdir(tmp_path))])
    assert sorted(Path(f).name for f in files) == ["impl.ipp", "loader", "mod.cppm", "tool.pyw"]
    assert {Path(p.path).name: p.message.split(" is not")[0] for p in problems} == {
        "README.md": ".md", "data.json": ".json", "notes.txt": ".txt"}
    code, out, err = _cli("lint", str(tmp_path / "README.md"))
    assert code == 1 and "1 not linted" in out and "README.md: not linted: .md is not a suffix" in err
    assert "--stdin-filename" in err and "unused suppression" not in out + err
    code, out, _ = _cli("lint", str(tmp_path / "loader"), str(tmp_path / "impl.ipp"))
    assert code == 1 and out.count("CE009") == 2


def test_a_python_script_without_a_suffix_is_linted_as_python(tmp_path: Path) -> None:
    """pre-commit hands over `#!/usr/bin/env python3` scripts without a suffix as Python: they are linted with
    `ast`, not parsed as C++; a suffixless file with another `#!` line or none is C-family."""
    (tmp_path / "tool").write_text("#!/usr/bin/env python3\nfrom cuda.bindings import driver\n"
                                   "driver.cuGetProcAddress(b'cuMemAlloc', 1000, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)\n")
    (tmp_path / "run").write_text("#!/bin/sh\necho python\n")
    assert is_python(str(tmp_path / "tool")) and not is_python(str(tmp_path / "run"))
    assert not is_python(str(tmp_path / "gone")) and not is_python(str(tmp_path / "x.c"), "#!python")
    rep = lint_paths([str(tmp_path / "tool")])
    assert {(f.code, f.engine) for f in rep.findings} == {("CE009", "ast"), ("CE006", "ast")}


def test_dangling_symlink_and_bad_python_are_reported_and_the_rest_linted(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text(BAD_C)
    (tmp_path / "bad.py").write_text("def (:\n")
    os.symlink(tmp_path / "gone.c", tmp_path / "dangling.c")
    rep = lint_paths([str(tmp_path)])
    assert [f.code for f in rep.findings] == ["CE009"]
    assert {Path(p.path).name for p in rep.problems} == {"bad.py", "dangling.c"}
    code, out, err = _cli("lint", str(tmp_path))
    assert code == 1 and "CE009" in out and "1 finding" in out and "2 not linted" in out
    assert "bad.py: not linted: not valid Python (line 1)" in err and "dangling.c: not linted: dangling" in err
    code, out, _ = _cli("lint", "--json", str(tmp_path))
    doc = json.loads(out)
    assert {Path(p["path"]).name for p in doc["problems"]} == {"bad.py", "dangling.c"}


def test_invalid_python_alone_is_not_a_pass(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("x = = 1\n")
    code, _, err = _cli("lint", str(bad))
    assert code == 1 and "not valid Python" in err


def test_bom_python_is_linted(tmp_path: Path) -> None:
    p = tmp_path / "bom.py"
    p.write_bytes(b"\xef\xbb\xbf" + b'from cuda.bindings import driver\n'
                  b'err, f, st = driver.cuGetProcAddress(b"cuMemAlloc", 1000, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)\n')
    rep = lint_paths([str(p)])
    assert rep.problems == [] and sorted(f.code for f in rep.findings) == ["CE006", "CE009"]   # err, st never tested


def test_non_regular_files_are_refused_without_reading(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.c"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    rep = lint_paths([str(fifo), "/dev/zero"])
    assert time.monotonic() - t0 < 5
    assert [p.message for p in rep.problems] == ["not a regular file"] * 2
    code, _, err = _cli("lint", "/dev/zero")
    assert code == 1 and "not a regular file" in err


def test_size_limit(tmp_path: Path) -> None:
    big = tmp_path / "big.c"
    big.write_text("int x;\n" * 2000)
    rep = lint_paths([str(big)], max_bytes=1000)
    assert rep.files == 0 and "limit" in rep.problems[0].message
    with pytest.raises(ValueError, match="limit"):
        read_source(str(big), 1000)


def test_empty_select_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.c").write_text(BAD_C)
    with pytest.raises(UsageError):
        lint_paths([str(tmp_path)], select=[""])
    code, _, err = _cli("lint", "--select", "", str(tmp_path))
    assert code == 2 and "empty rule list" in err


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    code, _, err = _cli("lint", str(tmp_path / "missing.cpp"))
    assert code == 2 and "no such file" in err


def test_wrapper_in_a_header_is_used_by_other_files(tmp_path: Path) -> None:
    (tmp_path / "loader.h").write_text(
        'static CUresult get_entry(const char* name, void** fn, int version = 12010) {\n'
        '  CUdriverProcAddressQueryResult q;\n'
        '  CUresult r = cuGetProcAddress(name, fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n'
        '  return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS ? r : CUDA_ERROR_NOT_FOUND;\n}\n')
    (tmp_path / "use.cpp").write_text(
        '#include "loader.h"\n'
        'void init(void** a, void** b) {\n'
        '  get_entry("cuMemCreate", a);\n'           # default 12010 > newest ABI 10020
        '  get_entry("cuCtxCreate_v2", b, 3020);\n'
        '}\n')
    rep = lint_paths([str(tmp_path)])
    got = {(Path(f.path).name, f.line, f.code) for f in rep.findings}
    assert got == {("use.cpp", 3, "CE010"), ("use.cpp", 4, "CE003")}
    code, out, _ = _cli("lint", "--min-driver", str(tmp_path))
    assert "12010  cuMemCreate" in out or "12.1 (12010)" in out


def test_min_driver_through_macros(tmp_path: Path) -> None:
    src = tmp_path / "m.cpp"
    src.write_text('#define LOAD(sym, ver) do { CUdriverProcAddressQueryResult q; \\\n'
                   '  if (cuGetProcAddress(#sym, (void**)&p_##sym, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q)'
                   ' return 1; } while (0)\n'
                   'PFN_cuMulticastCreate_v12010 p_cuMulticastCreate;\n'
                   'int f() { LOAD(cuMulticastCreate, 12010); return 0; }\n')
    rep = lint_paths([str(src)])
    assert rep.findings == [] and rep.pins == {"cuMulticastCreate": 12010} and rep.min_driver == 12010


def test_include_dirs_and_compile_commands(tmp_path: Path) -> None:
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "ld.h").write_text('#define LD(s, v) '
                              'if (cuGetProcAddress(#s, &p, v, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {}\n')
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.cpp").write_text('#include "ld.h"\nvoid f(){void*p;CUdriverProcAddressQueryResult q;\n LD(cuMemAlloc, 1000)\n}\n')
    assert lint_paths([str(src)]).findings == []
    assert [f.code for f in lint_paths([str(src)], include_dirs=[str(inc)]).findings] == ["CE009"]
    cc = tmp_path / "compile_commands.json"
    cc.write_text(json.dumps([{"directory": str(tmp_path), "file": "src/a.cpp", "command": "c++ -Iinc -c src/a.cpp"}]))
    code, out, _ = _cli("lint", "--compile-commands", str(cc), str(src))
    assert code == 1 and "CE009" in out and "expanded from the macro LD" in out


def test_macro_positions_map_back_to_the_invocation() -> None:
    text = '#define M(x) cuGetProcAddress(#x, &p, 1000, 0, NULL)\nint a; int f() { return M(cuMemAlloc) + 1; }\n'
    pre = preprocess(text, "t.c")
    line = pre.text.split("\n")[1]
    col0 = line.index("cuGetProcAddress")
    col, exp = pre.origin(1, col0)
    assert exp is not None and exp.macro == "M" and col == text.split("\n")[1].index("M(") + 1
    after = line.index("+ 1")
    assert pre.origin(1, after)[0] == text.split("\n")[1].index("+ 1") + 1


def test_macro_bombs_are_bounded() -> None:
    defs = "#define A0(x) x x\n" + "".join(f"#define A{i}(x) A{i - 1}(x) A{i - 1}(x)\n" for i in range(1, 40))
    t0 = time.monotonic()
    findings, unit = lint_text(defs + "int f() { A39(cuGetProcAddress(\"cuMemAlloc\", &p, 1000, 0, 0)); }\n", "bomb.c")
    assert time.monotonic() - t0 < 10
    assert findings == [] and "macro bomb" in unit.problem   # a problem of the file, not a silent empty verdict


def test_linear_in_requests_per_function(tmp_path: Path) -> None:
    """1,000 stored-result requests in one function (was ~49 s): well under the 10,000-line benchmark's second."""
    body = "\n".join(f'  CUresult r{i} = cuGetProcAddress("cuMemAlloc", &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);'
                     f'\n  if (r{i} || q) return {i};' for i in range(1000))
    src = tmp_path / "many.cpp"
    src.write_text("int f() { void* p; CUdriverProcAddressQueryResult q;\n" + body + "\n return 0; }\n")
    t0 = time.monotonic()
    rep = lint_paths([str(src)])
    assert rep.findings == [] and time.monotonic() - t0 < 10


def test_cuda_sources_are_parsed_in_cuda_mode() -> None:
    """A `.cu` file with a kernel and its launch parses (clang's CUDA mode, host side) and is judged."""
    src = ("#include <cuda.h>\n__global__ void k(int* x) { x[0] = 1; }\n"
           "void f() { k<<<1, 2>>>(0); void* p; CUdriverProcAddressQueryResult q;\n"
           "  if (cuGetProcAddress(\"cuMemAlloc\", &p, 1000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) {} }\n")
    findings, unit = lint_text(src, "k.cu", settings=Settings(toolkit="13.0"))
    assert unit.engine == "clang" and not unit.note and [f.code for f in findings] == ["CE009"]


def test_a_default_version_two_wrappers_down_is_the_pin(tmp_path: Path) -> None:
    """`call(name, args...)` -> `get_symbol(name)` whose prototype (in the header that defines `call`)
    defaults the version to 12010: each call of `call` pins 12010, a release number."""
    (tmp_path / "drv.cpp").write_text(
        "#include <cuda_runtime_api.h>\n"
        "void *get_symbol(const char *symbol, int cuda_version) {\n"
        "  void *p = nullptr; cudaDriverEntryPointQueryResult r;\n"
        "  if (cudaGetDriverEntryPointByVersion(symbol, &p, cuda_version, cudaEnableLegacyStream, &r) != cudaSuccess"
        " || r != cudaDriverEntryPointSuccess) return nullptr;\n  return p;\n}\n")
    (tmp_path / "drv.h").write_text(
        "#include <cuda.h>\nvoid *get_symbol(const char *symbol, int cuda_version = 12010);\n"
        "template <typename... A> inline CUresult call(const char *symbol, A... args) {\n"
        "  return reinterpret_cast<CUresult (*)(A...)>(get_symbol(symbol))(args...);\n}\n")
    (tmp_path / "use.cpp").write_text('#include "drv.h"\nint f(CUstream s) { CUcontext c; '
                                      'return call("cuStreamGetCtx", s, &c) != CUDA_SUCCESS; }\n')
    rep = lint_paths([str(tmp_path)])
    (hit,) = [f for f in rep.findings if f.code == "CE010"]
    assert hit.path.endswith("use.cpp") and "cuStreamGetCtx asked at 12010" in hit.message


def test_the_pre_filter_admits_only_files_that_can_ask(tmp_path: Path) -> None:
    """A project-wide header with a dlsym wrapper does not make every file that includes it a parse; a file
    that names a driver symbol through it, or pulls in a table of driver symbols, is parsed."""
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "platform.h").write_text('#pragma once\n#include <dlfcn.h>\n'
                                    'static inline void *plat_sym(void *h, const char *n) { return dlsym(h, n); }\n')
    (inc / "rows.inc").write_text("ROW(cuMemAlloc)\nROW(cuMemFree)\n")
    (tmp_path / "plain.c").write_text('#include "platform.h"\nint add(int a, int b) { return a + b; }\n')
    (tmp_path / "named.c").write_text('#include "platform.h"\nvoid *f(void *h) { return plat_sym(h, "cuMemAlloc"); }\n')
    (tmp_path / "table.c").write_text('#include "platform.h"\n#define ROW(x) plat_sym(0, #x);\n'
                                      'void g(void) {\n#include "rows.inc"\n}\n')
    rep = lint_paths([str(tmp_path)], include_dirs=[str(inc)], settings=Settings(include_dirs=[str(inc)]))
    assert sorted(Path(j.path).name for j in rep.judged) == ["named.c", "platform.h", "table.c"]


CHAIN_C = ('#include <cuda.h>\nstatic void *create, *capture, *multicast;\nint load(void) {\n  int driver = 0;\n'
           '  CUdriverProcAddressQueryResult q;\n'
           '  CUresult r = cuGetProcAddress("cuCtxCreate", &create, 12050, CU_GET_PROC_ADDRESS_DEFAULT, &q);\n'
           '  if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS)\n'
           '    r = cuGetProcAddress("cuCtxCreate", &create, 3020, CU_GET_PROC_ADDRESS_DEFAULT, &q);\n'
           '  if (r || q) return 1;\n'
           '  r = cuGetProcAddress("cuStreamBeginCapture", &capture, 10010, CU_GET_PROC_ADDRESS_DEFAULT, &q);\n'
           '  if (r || q) return 1;\n'
           '  cuDriverGetVersion(&driver);\n'
           '  if (driver >= 12010) {\n'
           '    r = cuGetProcAddress("cuMulticastCreate", &multicast, 12010, CU_GET_PROC_ADDRESS_DEFAULT, &q);\n'
           '    if (r || q) return 1;\n  }\n  return 0;\n}\n')
CHAIN_TOML = ('[table]\nstream = "legacy"\nrequired = [\n'
              '  { symbol = "cuCtxCreate", version = 12050, fallback = "cuCtxCreate@3020" },\n'
              '  "cuStreamBeginCapture@10010",\n]\noptional = ["cuMulticastCreate@12010"]\n')


def test_min_driver_is_the_manifest_floor(tmp_path: Path) -> None:
    """A loader that falls back from 12050 to 3020 needs 3020 (each chain's lowest pin), as its manifest does;
    a request under a driver-version test is optional; both come from entry.driver_floor."""
    from cuentry.manifest import load

    (tmp_path / "loader.c").write_text(CHAIN_C)
    (tmp_path / "loader.toml").write_text(CHAIN_TOML)
    rep = lint_paths([str(tmp_path / "loader.c")])
    floor = load(str(tmp_path / "loader.toml")).min_driver()
    assert rep.min_driver == floor == 10010
    assert rep.chains["cuCtxCreate"] == {3020, 12050} and rep.pins["cuCtxCreate"] == 3020
    assert rep.pins["cuMulticastCreate"] == 12010 and rep.optional == {"cuMulticastCreate"}
    code, out, _ = _cli("lint", "--min-driver", str(tmp_path / "loader.c"))
    assert "minimum driver for the pins found: 10.1 (10010)" in out and "3020  cuCtxCreate (asked at 12050, 3020)" in out
    doc = json.loads(_cli("lint", "--json", str(tmp_path / "loader.c"))[1])
    assert doc["min_driver"] == 10010
    assert {"symbol": "cuCtxCreate", "asked_at": [3020, 12050], "pin": 3020, "required": True} in doc["chains"]
    assert "pins" not in doc                 # one shape per key across the reports: lint's pins are chains[].pin


def test_a_large_file_is_judged_by_libclang_whole(tmp_path: Path) -> None:
    """A file of 3 MiB (once handed to tree-sitter above 2 MiB) is parsed whole: the worker's limits bound it."""
    big = tmp_path / "big.c"
    big.write_text("#include <cuda.h>\n" + BAD_C + ("// " + "x" * 1020 + "\n") * 3072)
    rep = lint_paths([str(big)])
    assert [f.code for f in rep.findings] == ["CE009"]
    assert rep.judged[0].engine == "clang" and rep.judged[0].note == ""


def test_a_file_libclang_cannot_parse_is_a_problem_and_the_others_are_kept(tmp_path: Path) -> None:
    """A macro bomb (beyond the preprocessor's bound) and a file including more special files than are left
    out (`MAX_LEFT_OUT`): each a problem naming why, not judged, never a silent empty verdict; the good file's
    finding is kept."""
    from cuentry.lint.clang import MAX_LEFT_OUT

    (tmp_path / "good.c").write_text("#include <cuda.h>\n" + BAD_C)
    defs = "#define A0(x) x x\n" + "".join(f"#define A{i}(x) A{i - 1}(x) A{i - 1}(x)\n" for i in range(1, 40))
    (tmp_path / "bomb.c").write_text(defs + 'int f() { A39(cuGetProcAddress("cuMemAlloc", &p, 1000, 0, 0)); }\n')
    for i in range(MAX_LEFT_OUT + 1):
        os.symlink("/dev/zero", tmp_path / f"z{i}.h")
    (tmp_path / "zeros.c").write_text("".join(f'#include "z{i}.h"\n' for i in range(MAX_LEFT_OUT + 1)) + BAD_C)
    rep = lint_paths([str(tmp_path)])
    assert [(Path(f.path).name, f.code) for f in rep.findings] == [("good.c", "CE009")]
    why = {Path(p.path).name: p.message for p in rep.problems}
    assert "macro bomb" in why["bomb.c"] and why["bomb.c"].startswith("not linted: ")
    assert "which is a device" in why["zeros.c"] and "not parsed" in why["zeros.c"]
    assert sorted(Path(j.path).name for j in rep.judged) == ["good.c"]
