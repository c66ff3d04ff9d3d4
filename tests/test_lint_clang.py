"""The semantic (clang) engine: the semantic corpus, generated headers, the type normalizer, severities,
bad input, the CLI options (and the retired engine's name refused)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")

from cuentry.catalog import catalog  # noqa: E402
from cuentry.cli import main  # noqa: E402
from cuentry.lint import lint_paths, lint_text  # noqa: E402
from cuentry.lint.engine import Settings  # noqa: E402
from cuentry.lint.signature import Normalizer, normalizer  # noqa: E402

CORPUS = Path(__file__).parent / "lint_corpus"
SEMANTIC = CORPUS / "semantic"
SEM_FILES = sorted(p.name for p in SEMANTIC.iterdir() if p.suffix in (".cpp", ".cu"))
EXPECT = re.compile(r"expect:\s*((?:CE\d{3}(?:/\w+)?\s*)+)")


def expected(path: Path) -> set[tuple[int, str, str | None]]:
    out = set()
    for i, line in enumerate(path.read_text().splitlines(), 1):
        for m in EXPECT.finditer(line):
            for item in m.group(1).split():
                code, _, sev = item.partition("/")
                out.add((i, code, sev or None))
    return out


def _matches(findings: list, want: set[tuple[int, str, str | None]]) -> bool:
    got = {(f.line, f.code) for f in findings}
    if got != {(line, code) for line, code, _ in want}:
        return False
    sev = {(f.line, f.code): f.severity for f in findings}
    return all(s is None or sev[(line, code)] == s for line, code, s in want)


def _clang() -> None:
    pytest.importorskip("clang.cindex")
    from cuentry.lint import clang

    if not clang.available():
        pytest.skip("libclang cannot be loaded")


@pytest.mark.parametrize("name", SEM_FILES)
def test_semantic_corpus_clang(name: str) -> None:
    _clang()
    path = SEMANTIC / name
    findings, unit = lint_text(path.read_text(), str(path),
                               settings=Settings(engine="clang", toolkit="13.0", pedantic=True))
    assert unit.engine == "clang", unit.note
    assert "written by cuentry" in unit.headers and all(f.headers == unit.headers for f in findings)
    want = expected(path)
    mine = [f for f in findings if f.path == str(path)]
    assert _matches(mine, want), sorted((f.line, f.code, f.severity, f.message) for f in mine)
    # a row of a table a header writes is reported at the row too: the header's own `expect:` lines
    for other in sorted({f.path for f in findings} - {str(path)}):
        there = [f for f in findings if f.path == other]
        assert _matches(there, expected(Path(other))), sorted((f.path, f.line, f.code) for f in there)
        assert all(f"expanded at {name}:" in f.message for f in there)


def test_a_header_rows_findings_are_at_its_rows(tmp_path: Path) -> None:
    """The list of rows_list.h, expanded by two files linted together: each row's fault at its row in the header,
    once in the run (the expansions' causes once each)."""
    _clang()
    for name in ("rows_list.h", "rows_list.cpp"):
        (tmp_path / name).write_text((SEMANTIC / name).read_text())
    (tmp_path / "again.cpp").write_text((SEMANTIC / "rows_list.cpp").read_text())
    rep = lint_paths([str(tmp_path)], settings=Settings(engine="clang", toolkit="13.0"))
    got = sorted((Path(f.path).name, f.line, f.code) for f in rep.findings)
    assert got == [("again.cpp", 13, "CE002"), ("again.cpp", 13, "CE007"), ("rows_list.cpp", 13, "CE002"),
                   ("rows_list.cpp", 13, "CE007"), ("rows_list.h", 5, "CE007"), ("rows_list.h", 7, "CE002")]


def test_notes_only_with_pedantic() -> None:
    path = SEMANTIC / "decltype_rename.cpp"
    quiet, _ = lint_text(path.read_text(), str(path), settings=Settings(toolkit="13.0"))
    loud, _ = lint_text(path.read_text(), str(path), settings=Settings(toolkit="13.0", pedantic=True))
    assert all(f.severity != "note" for f in quiet)
    assert {f.severity for f in loud} >= {"note", "error"} and len(loud) > len(quiet)


RELEASE_PIN = ('#include <cudaTypedefs.h>\nint f() { PFN_cuMemCreate_v10020 p; CUdriverProcAddressQueryResult q;\n'
               'if (cuGetProcAddress("cuMemCreate", (void**)&p, 12010, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) '
               'return 1; return 0; }\n')   # a release number that binds the pointer's own ABI, above the 12.0
# driver the cuGetProcAddress_v2 of cuda.h already needs (at or below it, the pin is a note anyway)


def test_floor_turns_a_release_pin_into_a_note() -> None:
    src = RELEASE_PIN
    (w,), _ = lint_text(src, "f.cpp", settings=Settings(toolkit="13.0"))
    assert w.code == "CE010" and w.severity == "warning"
    (n,), _ = lint_text(src, "f.cpp", settings=Settings(toolkit="13.0", floor=12010, pedantic=True))
    assert n.code == "CE010" and n.severity == "note"
    assert lint_text(src, "f.cpp", settings=Settings(toolkit="13.0", floor=12010))[0] == []


def test_normalizer_spellings() -> None:
    n = normalizer(catalog())
    assert n.type("char const*") == n.type("const char *")
    assert n.type("const char * const") == n.type("const char*")
    assert n.type("CUdeviceptr *") == n.type("unsigned long long*")
    assert n.type("struct CUctx_st *") == n.type("CUcontext") == n.type("CUctx_st*")
    assert n.type("unsigned") == "unsigned int" and n.type("long int") == "long"
    assert n.type("int [4]") == n.type("int *")
    assert n.type("CUresult (CUDAAPI *)(CUdeviceptr *, size_t)") == n.type("enum cudaError_enum (*)(unsigned long long*, size_t)")
    assert n.type("const char *") != n.type("char *")
    assert n.type("unsigned int") != n.type("int")
    assert n.signature("CUresult", ["void"]) == n.signature("CUresult", [])


def test_normalizer_platforms() -> None:
    lp64, llp64 = Normalizer({}, windows=False), Normalizer({}, windows=True)
    assert lp64.type("size_t") == "unsigned long" and llp64.type("size_t") == "unsigned long long"
    assert lp64.type("uint64_t") == lp64.type("unsigned long")


def test_an_enum_is_passed_as_an_int_whether_tagged_or_a_typedef_of_an_anonymous_one() -> None:
    """`CUdevResourceType` is `typedef enum {...} CUdevResourceType` (no tag): passed as a 4-byte integer, like the
    tagged `CUresult`; an 8-byte integer in its place is not alike."""
    from cuentry.lint.signature import passed_alike

    n, cat = normalizer(catalog()), catalog()
    abi = n.abi(cat.abis("cuDeviceGetDevResource")[0])
    assert passed_alike(n, abi, abi.replace("CUdevResourceType", "unsigned int"))
    assert not passed_alike(n, abi, abi.replace("CUdevResourceType", "unsigned long"))


def test_every_export_of_the_recorded_driver_is_known_to_lint() -> None:
    """CE003 says a driver function's name never resolves when no toolkit declares it: every `cu[A-Z]` export of the
    recorded 13.0 driver is an ABI of the catalog or one of `UNDECLARED_EXPORTS`."""
    import re

    from cuentry.names import DRIVER_NAME_PATTERN, UNDECLARED_EXPORTS

    cat = catalog()
    truth = json.loads((Path(__file__).parent / "data" / "driver-580.159.04-truth.json").read_text())
    exports = {n for n in truth["exported"] if re.fullmatch(DRIVER_NAME_PATTERN, n)}
    unknown = {n for n in exports if n not in cat and cat.by_exported(n) is None}
    assert len(exports) > 600 and unknown == set(UNDECLARED_EXPORTS)


def test_catalog_abi_signatures_are_told_apart() -> None:
    n, cat = normalizer(catalog()), catalog()
    a2000, a3020 = cat.abis("cuMemAlloc")
    assert n.abi(a2000) != n.abi(a3020)


def test_generated_headers_declare_the_toolkit() -> None:
    from cuentry.lint.clang.headers import cuda_h, toolkit_version, typedefs_h

    cat = catalog()
    h12, h13 = cuda_h(cat, "12.4"), cuda_h(cat, "13.0")
    assert "#define CUDA_VERSION 12040" in h12 and "#define CUDA_VERSION 13000" in h13
    assert "#define cuMemAlloc cuMemAlloc_v2" in h12
    # as the real headers: 12.x cuda.h keeps cuCtxCreate the 3020 ABI (cuCtxCreate_v3 is a function of its own),
    # while its cudaTypedefs.h makes PFN_cuCtxCreate the 11040 one; 13.0 renames cuCtxCreate to cuCtxCreate_v4
    assert "#define cuCtxCreate cuCtxCreate_v2" in h12 and "#define cuCtxCreate cuCtxCreate_v4" in h13
    assert "CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1" in h12
    t = typedefs_h(cat, "12.4")
    assert "PFN_cuMemAlloc_v3020" in t and "#define PFN_cuMemAlloc PFN_cuMemAlloc_v3020" in t
    assert "#define PFN_cuCtxCreate PFN_cuCtxCreate_v11040" in t
    assert toolkit_version("12.4") == 12040
    from cuentry.errors import UsageError

    with pytest.raises(UsageError):
        toolkit_version("twelve")


def test_generated_headers_parse_cleanly_in_c_and_cpp(tmp_path: Path) -> None:
    _clang()
    import clang.cindex as ci

    from cuentry.lint.clang import RESOURCE_DIR
    from cuentry.lint.clang.headers import generated_dir

    d = generated_dir(catalog(), "12.4")
    src = tmp_path / "t.c"
    src.write_text("#include <cuda.h>\n#include <cudaTypedefs.h>\n#include <cuda_runtime_api.h>\n")
    for lang in ("c", "c++"):
        tu = ci.Index.create().parse(str(src), args=["-x", lang, "-resource-dir", RESOURCE_DIR, "-isystem", d])
        assert [str(x) for x in tu.diagnostics if x.severity >= 3] == []


def test_toolkit_choice_changes_what_decltype_binds(tmp_path: Path) -> None:
    """cuCtxCreate is cuCtxCreate_v2 (3020) in 12.4's cuda.h and cuCtxCreate_v4 (12050) in 13.0's (as the real
    headers have it: the catalog's per-release facts)."""
    _clang()
    src = ('#include <cuda.h>\nint f() { decltype(&cuCtxCreate) p = nullptr; CUdriverProcAddressQueryResult q;\n'
           'if (cuGetProcAddress("cuCtxCreate", (void**)&p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) '
           'return 1; return 0; }\n')
    f12, _ = lint_text(src, str(tmp_path / "f.cpp"), settings=Settings(engine="clang", toolkit="12.4"))
    f13, _ = lint_text(src, str(tmp_path / "f.cpp"), settings=Settings(engine="clang", toolkit="13.0"))
    # 3020 is what 12.4's decltype names, but 13.0+ headers name cuCtxCreate_v4: an error in a supported build
    assert [f.code for f in f12] == ["CE002"] and f12[0].severity == "warning" and "13.0+" in f12[0].message
    assert [f.code for f in f13] == ["CE002"] and f13[0].severity == "error"
    assert "CUDA 13.0" in f13[0].headers and "12050" in f13[0].message


def test_bad_input_is_judged_per_fact_with_a_note(tmp_path: Path) -> None:
    _clang()
    (tmp_path / "missing_include.cpp").write_text(
        '#include "nowhere.h"\nvoid f(){void*p;CUdriverProcAddressQueryResult q;'
        'cuGetProcAddress("cuMemAlloc",&p,1000,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q);}\n')
    (tmp_path / "unused_missing.cpp").write_text(
        '#include <cuda.h>\n#include "nowhere.h"\nvoid f(){void*p;CUdriverProcAddressQueryResult q;'
        'cuGetProcAddress("cuMemAlloc",&p,1000,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q);}\n')
    (tmp_path / "broken.cpp").write_text("int f( {{{ cuGetProcAddress(\n")
    (tmp_path / "good.cpp").write_text(
        '#include <cudaTypedefs.h>\nint f() { PFN_cuMemAlloc_v3020 p; CUdriverProcAddressQueryResult q;\n'
        'if (cuGetProcAddress("cuMemAlloc", (void**)&p, 0, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1;'
        ' return 0; }\n')
    rep = lint_paths([str(tmp_path)], settings=Settings(engine="clang", toolkit="13.0"))
    judged = {Path(j.path).name: j for j in rep.judged}
    assert judged["good.cpp"].engine == "clang" and not judged["good.cpp"].note
    # nowhere.h would have declared the CUDA names: judged as if it included cuda.h (the headers say so)
    mi = judged["missing_include.cpp"]
    assert mi.engine == "clang" and "nowhere.h" in mi.note and "-I" in mi.note and "assumed for it" in mi.headers
    assert (mi.requests, mi.judged, mi.unjudged) == (1, 1, ())
    assert any(Path(f.path).name == "missing_include.cpp" and (f.line, f.code) == (2, "CE009") for f in rep.findings)
    # nothing of nowhere.h is used: clang judges the file and says what it did not find
    assert judged["unused_missing.cpp"].engine == "clang"
    assert "nowhere.h" in judged["unused_missing.cpp"].note and "-I" in judged["unused_missing.cpp"].note
    assert any(Path(f.path).name == "unused_missing.cpp" and f.code == "CE009" for f in rep.findings)
    assert judged["broken.cpp"].engine == "clang" and "error" in judged["broken.cpp"].note
    assert judged["broken.cpp"].requests == 1 and judged["broken.cpp"].judged == 0
    assert judged["good.cpp"].requests == judged["good.cpp"].judged == 1 and not judged["good.cpp"].unjudged
    assert any(Path(f.path).name == "good.cpp" and f.code == "CE009" and f.severity == "error" for f in rep.findings)


def test_a_missing_header_costs_only_the_requests_that_need_it(tmp_path: Path) -> None:
    """Point 1 of issue 29: the request whose pin comes from the missing header is not judged (and `--json`
    says why); the file's other requests are, by clang, whatever their pointer's type."""
    _clang()
    (tmp_path / "needs.cpp").write_text(
        '#include <cuda.h>\n#include "pins.h"\nvoid f(){void*p;CUdriverProcAddressQueryResult q;\n'
        'cuGetProcAddress("cuMemAlloc",&p,ALLOC_PIN,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q);\n'
        'if (cuGetProcAddress("cuMemFree",&p,1000,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q)) return;\n'
        'ProjType *t = 0;\n'
        'if (cuGetProcAddress("cuMemcpy",&t->fn,3020,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q)) return;\n'
        'if (cuGetProcAddress("cuMemAlloc_v2",&p,ALLOC_PIN,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q)) return;}\n')
    rep = lint_paths([str(tmp_path)], settings=Settings(engine="clang", toolkit="13.0"))
    (j,) = rep.judged
    assert j.engine == "clang" and "pins.h" in j.note and "ALLOC_PIN" in j.note
    assert (j.requests, j.judged) == (4, 2)
    assert [line for line, _ in j.unjudged] == [4, 8] and all("ALLOC_PIN" in why for _, why in j.unjudged)
    got = {(f.line, f.code, f.severity) for f in rep.findings}
    assert got == {(5, "CE006", "warning"), (7, "CE006", "warning"), (5, "CE009", "error"), (7, "CE009", "error"),
                   (8, "CE003", "error")}
    out = io.StringIO()
    assert main(["lint", "--json", "--engine", "clang", "--toolkit", "13.0", str(tmp_path)], stdout=out) == 1
    (row,) = json.loads(out.getvalue())["judged"]
    assert row["requests_found"] == 4 and row["requests_judged"] == 2 and row["requests_unjudged"][0]["line"] == 4
    assert "ALLOC_PIN" in row["requests_unjudged"][0]["why"]


def test_a_project_header_is_found_where_projects_keep_them(tmp_path: Path) -> None:
    """`#include <proj/pins.h>` from src/a/b/loader.cpp: found in include/ beside an ancestor, not above
    the repository's root, and never through `..`."""
    _clang()
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "include" / "proj").mkdir(parents=True)
    (repo / "include" / "proj" / "pins.h").write_text("#define ALLOC_PIN 1000\n")
    deep = repo / "src" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "loader.cpp").write_text(
        '#include <cuda.h>\n#include <proj/pins.h>\nvoid f(){void*p;CUdriverProcAddressQueryResult q;'
        'cuGetProcAddress("cuMemAlloc",&p,ALLOC_PIN,CU_GET_PROC_ADDRESS_LEGACY_STREAM,&q);}\n')
    rep = lint_paths([str(deep)], settings=Settings(engine="clang", toolkit="13.0"))
    (j,) = rep.judged
    assert j.engine == "clang" and not j.note
    assert "CE009" in {f.code for f in rep.findings}            # 1000: below cuMemAlloc's first ABI
    from cuentry.lint.clang import header_dirs

    assert header_dirs("proj/pins.h", str(deep)) == [str(repo / "include")]
    assert header_dirs("../include/proj/pins.h", str(deep)) == []
    assert header_dirs(str(repo / "include" / "proj" / "pins.h"), str(deep)) == []
    (tmp_path / "include" / "other").mkdir(parents=True)
    (tmp_path / "include" / "other" / "x.h").write_text("\n")
    assert header_dirs("other/x.h", str(deep)) == []              # above the repository's root


def test_real_build_conventions_parse(tmp_path: Path) -> None:
    """GNU defaults (POSIX names in C), <limits.h> through the C library, a C header named .h, and the
    vector types nvcc always has in a .cu file (a project's own copy of vector_types.h is skipped)."""
    _clang()
    req = ('void* p; CUdriverProcAddressQueryResult q; '
           'cuGetProcAddress("cuMemAlloc", &p, 1000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);')
    (tmp_path / "posix.c").write_text(
        f'#include <fcntl.h>\n#include <limits.h>\n#include <cuda.h>\nint fl = O_CLOEXEC + INT_MAX;\n'
        f'void f(void) {{ {req} }}\n')
    (tmp_path / "list.h").write_text(f'#include <cuda.h>\nstruct node {{ int new; }};\nstatic void f(void) {{ {req} }}\n')
    (tmp_path / "vector_types.h").write_text("#ifndef __VECTOR_TYPES_H__\n#define __VECTOR_TYPES_H__\n"
                                             "struct dim3 { unsigned x, y, z; };\n#endif\n")
    (tmp_path / "k.cu").write_text(
        f'#include "vector_types.h"\n#include <cuda.h>\n__global__ void k(float4* a) {{}}\n'
        f'void f() {{ dim3 g(1); float4* a = 0; k<<<g, 1>>>(a); {req} }}\n')
    rep = lint_paths([str(tmp_path)], settings=Settings(engine="clang", toolkit="13.0"))
    judged = {Path(j.path).name: j for j in rep.judged}
    assert {n: (j.engine, j.note) for n, j in judged.items()} == {n: ("clang", "") for n in ("posix.c", "list.h", "k.cu")}
    assert sorted(Path(f.path).name for f in rep.findings if f.code == "CE009") == ["k.cu", "list.h", "posix.c"]


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_cli_json_engine_severity_and_sarif_levels(tmp_path: Path) -> None:
    path = str(SEMANTIC / "decltype_rename.cpp")
    code, o, _ = _cli("lint", "--json", "--toolkit", "13.0", "--pedantic", path)
    doc = json.loads(o)
    assert code == 1 and {f["severity"] for f in doc["findings"]} >= {"note", "error"}
    assert all(f["engine"] == "clang" for f in doc["findings"])
    assert doc["judged"][0]["engine"] == "clang"
    code, o, _ = _cli("lint", "--sarif", "--toolkit", "13.0", "--pedantic", path)
    levels = {r["level"] for r in json.loads(o)["runs"][0]["results"]}
    assert levels >= {"note", "error"}
    code, _, e = _cli("lint", "--toolkit", "9.9", path)
    assert code == 2 and "--toolkit" in e
    code, _, e = _cli("lint", "--engine", "nope", path)
    assert code == 2 and "unknown engine 'nope'" in e
    assert _cli("lint", "--json", "--engine", "clang", "--toolkit", "13.0", "--pedantic", path)[1] == \
        _cli("lint", "--json", "--toolkit", "13.0", "--pedantic", path)[1]   # the one engine, by its name


@pytest.mark.parametrize("path", [str(SEMANTIC / "decltype_rename.cpp"), str(CORPUS / "numba_like.py")])
def test_the_retired_engine_is_refused_in_one_line(path: str) -> None:
    """`--engine tree-sitter` (retired: libclang is the one engine) is bad input, exit 2, one line naming why,
    also where only Python files are given."""
    code, out, err = _cli("lint", "--engine", "tree-sitter", path)
    assert code == 2 and out == "" and "tree-sitter engine was retired" in err and len(err.strip().splitlines()) == 1


def test_cli_compile_commands_flags(tmp_path: Path) -> None:
    _clang()
    src = tmp_path / "a.cpp"
    src.write_text('#include <cudaTypedefs.h>\nint f() { PFN_cuMemAlloc_v3020 p; CUdriverProcAddressQueryResult q;\n'
                   'if (cuGetProcAddress("cuMemAlloc", (void**)&p, VER, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) '
                   'return 1; return 0; }\n')
    cc = tmp_path / "compile_commands.json"
    cc.write_text(json.dumps([{"directory": str(tmp_path), "file": "a.cpp", "arguments": ["c++", "-DVER=2000", "-c", "a.cpp"]}]))
    code, o, _ = _cli("lint", "--json", "--toolkit", "13.0", "--compile-commands", str(cc), str(src))
    doc = json.loads(o)
    assert doc["judged"][0]["engine"] == "clang"
    assert [(f["code"], f["severity"]) for f in doc["findings"]] == [("CE002", "error")]
    cc.write_text("{not json")
    code, _, e = _cli("lint", "--compile-commands", str(cc), str(src))
    assert code == 2 and "compile_commands" in e


def test_compile_commands_include_directories_are_the_builds(tmp_path: Path) -> None:
    """`-I inc` and `-isystem inc` as separate arguments are relative to the entry's directory, not to
    where cuentry runs: the header's macro is seen, and the pin it gives is judged."""
    _clang()
    build = tmp_path / "build"
    (build / "inc").mkdir(parents=True)
    (build / "inc" / "pins.h").write_text("#define VER 2000\n")
    src = tmp_path / "a.cpp"
    src.write_text('#include <cudaTypedefs.h>\n#include "pins.h"\nint f() { PFN_cuMemAlloc_v3020 p; '
                   'CUdriverProcAddressQueryResult q;\nif (cuGetProcAddress("cuMemAlloc", (void**)&p, VER, '
                   'CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; return 0; }\n')
    cc = tmp_path / "compile_commands.json"
    for flag in ("-I", "-isystem"):
        cc.write_text(json.dumps([{"directory": str(build), "file": "../a.cpp",
                                   "arguments": ["c++", flag, "inc", "-c", "../a.cpp"]}]))
        code, o, _ = _cli("lint", "--json", "--toolkit", "13.0", "--compile-commands", str(cc), str(src))
        doc = json.loads(o)
        assert doc["judged"][0]["engine"] == "clang" and not doc["judged"][0]["note"]
        assert [f["code"] for f in doc["findings"]] == ["CE002"]


@pytest.mark.parametrize("name", SEM_FILES)
def test_precompiled_headers_change_nothing(name: str) -> None:
    """The generated headers precompiled (the default) and parsed each time give the same facts."""
    _clang()
    from cuentry.lint import clang

    path = SEMANTIC / name
    text = path.read_text()
    fast = clang.extract(text, str(path), clang.Options(toolkit="13.0"))
    slow = clang.extract(text, str(path), clang.Options(toolkit="13.0", pch=False))
    assert fast.queries == slow.queries and fast.exports == slow.exports


def test_wrapper_defined_in_another_file_with_a_prototype_default(tmp_path: Path) -> None:
    """clang follows a wrapper whose body is in another translation unit of the run (by its USR), with the
    default its header prototype declares."""
    _clang()
    (tmp_path / "loader.h").write_text(
        "#pragma once\n#include <cuda.h>\nCUresult get_entry(const char* name, void** fn, int version = 12010);\n")
    (tmp_path / "loader.cpp").write_text(
        '#include "loader.h"\nCUresult get_entry(const char* name, void** fn, int version) {\n'
        "  CUdriverProcAddressQueryResult q;\n"
        "  CUresult r = cuGetProcAddress(name, fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);\n"
        "  return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS ? r : CUDA_ERROR_NOT_FOUND;\n}\n")
    (tmp_path / "use.cpp").write_text(
        '#include "loader.h"\nvoid init(void** a, void** b, void** c) {\n  get_entry("cuMemCreate", a);\n'
        '  get_entry("cuCtxCreate_v2", b, 3020);\n  get_entry("cuMemMap", c, 10020);\n}\n')
    rep = lint_paths([str(tmp_path)], settings=Settings(toolkit="13.0"))
    got = {(Path(f.path).name, f.line, f.code, f.engine) for f in rep.findings}
    assert got == {("use.cpp", 3, "CE010", "clang"), ("use.cpp", 4, "CE003", "clang")}


def test_dlsym_into_decltype_note_for_one_abi_warning_for_several(tmp_path: Path) -> None:
    _clang()
    (tmp_path / "lazy.cpp").write_text(
        "#include <cuda.h>\n#include <dlfcn.h>\nvoid f(void* h) {\n"
        '  auto a = reinterpret_cast<decltype(&cuGetErrorName)>(dlsym(h, "cuGetErrorName"));\n'
        '  auto b = reinterpret_cast<decltype(&cuLaunchKernelEx)>(dlsym(h, "cuLaunchKernelEx"));\n'
        "  (void)a; (void)b;\n}\n")
    rep = lint_paths([str(tmp_path)], settings=Settings(engine="clang", toolkit="13.0", pedantic=True))
    got = {(f.line, f.code, f.severity) for f in rep.findings}
    assert got == {(4, "CE004", "note"), (5, "CE011", "warning")}
    warn = next(f for f in rep.findings if f.line == 5)
    assert "PFN_cuLaunchKernelEx_v11060_ptsz" in warn.message and "declare it as PFN_cuLaunchKernelEx_v11060" in warn.message


def test_the_floor_can_come_from_a_manifest(tmp_path: Path) -> None:
    src = tmp_path / "f.cpp"
    src.write_text(RELEASE_PIN)
    low, high = tmp_path / "low.toml", tmp_path / "high.toml"
    low.write_text('[table]\nname = "t"\nstream = "legacy"\nrequired = ["cuMemAlloc@3020"]\n')
    high.write_text('[table]\nname = "t"\nstream = "legacy"\nrequired = ["cuMemAlloc@3020", "cuMulticastCreate@12010"]\n')
    code, out, _ = _cli("lint", "--toolkit", "13.0", "--manifest", str(low), str(src))
    assert code == 1 and "CE010 warning" in out
    code, out, _ = _cli("lint", "--toolkit", "13.0", "--manifest", str(high), str(src))
    assert code == 0 and "no findings" in out
    code, _, err = _cli("lint", "--manifest", str(tmp_path / "none.toml"), str(src))
    assert code == 2 and "none.toml" in err


def test_a_pointer_to_dlsym_is_dlsym_and_signedness_alone_is_a_warning(tmp_path: Path) -> None:
    """An interposer's pointer to the real dlsym (known by its canonical type) is judged as dlsym: its
    hand-written cuGetProcAddress type with 4 parameters for the 5-parameter `_v2` export is an error;
    with 5 parameters but `unsigned int` for the ABI's `int` version, a warning."""
    _clang()
    body = ('typedef void* (*fp_dlsym)(void*, const char*);\n'
            'typedef CUresult (*gpa4)(const char*, void**, unsigned int, cuuint64_t);\n'
            'typedef CUresult (*gpa5)(const char*, void**, unsigned int, cuuint64_t, CUdriverProcAddressQueryResult*);\n'
            'void load(fp_dlsym real_dlsym, void* h) {\n'
            '  gpa4 a = (gpa4) real_dlsym(h, "cuGetProcAddress_v2");\n'
            '  gpa5 b = (gpa5) real_dlsym(h, "cuGetProcAddress_v2");\n'
            '  (void)a; (void)b;\n}\n')
    (tmp_path / "hook.cpp").write_text("#include <cuda.h>\n" + body)
    rep = lint_paths([str(tmp_path)], settings=Settings(engine="clang", toolkit="13.0"))
    got = {(f.line, f.code, f.severity) for f in rep.findings}
    assert got == {(6, "CE011", "error"), (7, "CE011", "warning")}
    assert "signedness" in next(f for f in rep.findings if f.line == 7).message
    from cuentry.lint.signature import sign_only

    assert sign_only("int (int, unsigned long)", "int (unsigned int, unsigned long)")
    assert not sign_only("int (int)", "int (long)") and not sign_only("int (int)", "int (int)")


def test_an_interposer_forwarding_its_callers_status_is_not_unchecked(tmp_path: Path) -> None:
    """A hand-typed pointer to the real getter (`unsigned int` for the ABI's `int`) is still the getter;
    the status it fills is the caller's parameter (the caller tests it), a local one is this code's."""
    _clang()
    (tmp_path / "hook.cpp").write_text(
        "#include <cuda.h>\n"
        "typedef CUresult (*gpa_t)(const char*, void**, unsigned int, cuuint64_t, CUdriverProcAddressQueryResult*);\n"
        "gpa_t real_cuGetProcAddress;\n"
        "CUresult hooked(const char* s, void** p, int v, cuuint64_t f, CUdriverProcAddressQueryResult* st) {\n"
        "  CUresult r = real_cuGetProcAddress(s, p, v, f, st);\n  return r;\n}\n"
        "void own(void** p) {\n  CUdriverProcAddressQueryResult st;\n"
        '  if (real_cuGetProcAddress("cuMemAlloc", p, 3020, 0, &st) != CUDA_SUCCESS) return;\n}\n')
    rep = lint_paths([str(tmp_path)], settings=Settings(engine="clang", toolkit="13.0"))
    assert {(f.line, f.code) for f in rep.findings if f.code == "CE006"} == {(10, "CE006")}


def test_rows_of_an_included_x_macro_table_are_judged_at_the_include(tmp_path: Path) -> None:
    """A table header pulled in with #include inside a loader function (each row a request through a
    struct field named cuGetProcAddress, which cuda.h renames to cuGetProcAddress_v2 while the field keeps
    its hand-written 4-parameter type: the old ABI, judged as that getter)."""
    _clang()
    (tmp_path / "table.h").write_text("ROW(cuMemAlloc, CUdeviceptr*, size_t)\nROW(cuLaunchKernel, CUfunction, "
                                      "unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, "
                                      "CUstream, void**, void**)\n")
    (tmp_path / "syms.c").write_text(
        "#include <cuda.h>\n"
        "typedef struct syms { CUresult (*cuGetProcAddress)(const char*, void**, int, cuuint64_t);\n"
        "#define ROW(name, ...) CUresult (*name)(__VA_ARGS__);\n#include \"table.h\"\n#undef ROW\n} syms_t;\n"
        "int load(syms_t* s) {\n"
        "#define ROW(name, ...) if (s->cuGetProcAddress(#name, (void**)&s->name, 11030, "
        "CU_GET_PROC_ADDRESS_DEFAULT)) return 1;\n"
        "#include \"table.h\"\n#undef ROW\n  return 0;\n}\n")
    rep = lint_paths([str(tmp_path / "syms.c")], settings=Settings(engine="clang", toolkit="13.0"))
    got = {(Path(f.path).name, f.line, f.code) for f in rep.findings}
    # the row's stream mode also at the row in table.h (a release pin stays at the include only)
    assert got == {("syms.c", 9, "CE010"), ("syms.c", 9, "CE007"), ("table.h", 2, "CE007")}
    assert all("table.h:" in f.message for f in rep.findings if f.path.endswith("syms.c"))
    assert all("included at syms.c:9" in f.message for f in rep.findings if f.path.endswith("table.h"))
    assert not any("cuGetProcAddress_v2" in f.message for f in rep.findings)
