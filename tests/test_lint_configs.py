"""Every configuration: requests in `#if` branches the flags skip are judged by parsing again with the
guard flipped (clang engine), each finding naming its configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cuentry.lint.clang import configs
from cuentry.lint.clang.configs import INF, Need, condition, label, plan, regions, require

CORPUS = Path(__file__).parent / "lint_corpus" / "configs"


def _clang() -> None:
    pytest.importorskip("clang.cindex")
    from cuentry.lint import clang

    if not clang.available():
        pytest.skip("libclang cannot be loaded")


def _lint(name: str, **kw: object) -> tuple[list, object]:
    from cuentry.lint import lint_text
    from cuentry.lint.engine import Settings

    path = CORPUS / name
    return lint_text(path.read_text(), str(path), settings=Settings(engine="clang", pedantic=True, **kw))


def _skipped_then_given(name: str, line: int, code: str, config: str, **given: object) -> tuple[Any, Any]:
    """A file's one fault, in a branch the flags skip: reported in that configuration; linted again with `given`
    (the flags that enter the branch), the same fault is the flags' own, named by no configuration. Returns
    (the first finding, the second run's unit)."""
    found, _ = _lint(name)
    assert [(f.line, f.code, f.config) for f in found] == [(line, code, config)]
    first = found[0]
    found, unit = _lint(name, **given)
    assert [(f.line, f.code, f.config) for f in found] == [(line, code, "")]
    return first, unit


# ---- conditions, without clang ----------------------------------------------------------------------------------------


def test_conditions_are_read_into_needs() -> None:
    assert condition("defined(USE_CUDA) && !defined(USE_ROCM)") == (
        "and", ("defined", "USE_CUDA"), ("not", ("defined", "USE_ROCM")))
    assert condition("12000 <= CUDA_VERSION") == ("cmp", "CUDA_VERSION", ">=", 12000)
    assert condition("CUDA_VERSION >= 11030UL") == ("cmp", "CUDA_VERSION", ">=", 11030)
    assert condition("HAS_FEATURE(x)") is None          # a function-like macro is not read
    assert condition("A + 1 > 2") is None
    assert require(condition("defined(USE_CUDA) && !defined(USE_ROCM)"), True) == {
        "USE_CUDA": Need(True), "USE_ROCM": Need(False)}
    assert require(condition("CUDA_VERSION >= 12000"), False) == {"CUDA_VERSION": Need(None, -INF, 11999)}
    assert require(condition("0"), True) is None         # `#if 0` is never entered
    assert require(condition("defined(A) && !defined(A)"), True) is None
    assert label({"CUDA_VERSION": Need(True, -INF, 11999), "USE_CUDA": Need(True)}) == \
        "when CUDA_VERSION < 12000 and USE_CUDA is defined"


def test_regions_nest_and_chain() -> None:
    text = ("#ifdef A\n"
            "#if V >= 3\n  dlsym(h, \"cuInit\");\n"
            "#elif V == 2\n  x();\n"
            "#else\n  cuGetProcAddress(\"cuInit\", &p, 2000, 0, 0);\n#endif\n"
            "#endif\n/* #ifdef B dlsym */\n#ifdef C\n  log(\"dlsym failed\", '\"');\n#endif\n")
    got = regions(text)
    assert [(r.first, r.last) for r in got] == [(2, 4), (6, 8)]
    assert got[0].needs == {"A": Need(True), "V": Need(True, 3, INF)}
    assert got[1].needs == {"A": Need(True), "V": Need(None, -INF, 2, frozenset({2}))}   # neither >= 3 nor 2
    assert [t[2] for t in got[1].tokens] == ["cuGetProcAddress"]


def test_a_continued_condition_is_read_whole() -> None:
    text = "#if defined(USE_CUDA) && \\\n    !defined(USE_ROCM)\n  dlsym(h, \"cuInit\");\n#endif\n"
    (r,) = regions(text)
    assert r.needs == {"USE_CUDA": Need(True), "USE_ROCM": Need(False)}
    assert r.tokens == [(3, 3, "dlsym")]


def test_plan_shares_compatible_needs_and_is_bounded() -> None:
    from cuentry.catalog import catalog

    text = "".join(f"#ifdef M{i}\ndlsym(h, \"cuInit\");\n#endif\n" for i in range(6))
    text += "#if CUDA_VERSION < 3000\ndlsym(h, \"cuInit\");\n#endif\n"      # below every toolkit of the catalog
    found = regions(text)
    cs, left = plan(found, catalog())
    assert len(cs) == 1 and len(cs[0].regions) == 6              # independent macros: one configuration
    assert [r.first for r in left] == [19]
    newer = "#if defined(USE_CUDA) && CUDA_VERSION >= 12000\ndlsym(h, \"cuInit\");\n#endif\n"
    (c,), _ = plan(regions(newer), catalog(), base=13000)
    assert c.toolkit is None and "-DCUDA_VERSION=13000" in c.flags()     # the flags' own 13.0 headers fit
    (c,), _ = plan(regions(newer), catalog(), base=11080)
    assert c.toolkit == catalog().history[-1] and "-DUSE_CUDA" in c.flags()
    exclusive = "".join(f"#if MODE == {i}\ndlsym(h, \"cuInit\");\n#endif\n" for i in range(6))
    cs, left = plan(regions(exclusive), catalog())
    assert len(cs) == configs.MAX_CONFIGS and len(left) == 6 - configs.MAX_CONFIGS


# ---- judged by clang ---------------------------------------------------------------------------------------------------


def test_a_file_under_a_build_macro_is_judged() -> None:
    _clang()
    found, unit = _lint("whole_file_macro.cpp")
    assert [(f.line, f.code, f.severity, f.config) for f in found] == [(18, "CE002", "error", "when USE_CUDA is defined")]
    assert found[0].message.endswith("(when USE_CUDA is defined)")
    # with the macro given, the same fault is the flags' own configuration, named by none
    skipped_requests = (unit.requests, unit.judged)  # type: ignore[attr-defined]
    found, unit = _lint("whole_file_macro.cpp", defines=["USE_CUDA"])
    assert [(f.line, f.code, f.config) for f in found] == [(18, "CE002", "")]
    assert unit.configs == []
    # the requests judged in a configuration count as found and judged, as the flags' own do (--json)
    assert skipped_requests == (unit.requests, unit.judged) and unit.requests > 0  # type: ignore[attr-defined]


def test_no_configuration_no_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    _clang()
    from cuentry.lint import clang

    path = CORPUS / "whole_file_macro.cpp"
    unit = clang.extract(path.read_text(), str(path), clang.Options())
    assert [(q.line, q.version, q.config) for q in unit.queries] == [
        (14, 3020, "when USE_CUDA is defined"), (18, 12050, "when USE_CUDA is defined")]
    assert clang.extract(path.read_text(), str(path), clang.Options(flip=False)).queries == []
    monkeypatch.setattr(configs, "MAX_CONFIGS", 0)
    monkeypatch.setattr(configs, "MAX_FORCED", 0)   # else the branch beyond the bound is entered by its text
    unit = clang.extract(path.read_text(), str(path), clang.Options())
    assert unit.queries == []
    assert "USE_CUDA" in unit.note and "not judged" in unit.note      # said, not silent


def test_both_sides_of_a_toolkit_test() -> None:
    _clang()
    # under an 11.8 toolkit the other side is the skipped one; it has no fault
    _skipped_then_given("version_branches.cpp", 14, "CE002", "when CUDA_VERSION < 12000", toolkit="11.8")


def test_the_windows_branch_is_judged() -> None:
    _clang()
    found, _ = _lint("win32_branch.c")
    assert [(f.line, f.code, f.config) for f in found] == [(17, "CE011", "when _WIN32 is defined")]


def test_a_fault_outside_the_branches_is_reported_once(tmp_path: Path) -> None:
    _clang()
    from cuentry.lint import lint_text
    from cuentry.lint.engine import Settings

    src = ("#include <cuda.h>\n#include <cudaTypedefs.h>\nstatic PFN_cuMemFree_v3020 p;\n"
           "int f(void) {\n#ifdef EXTRA\n  cuGetProcAddress(\"cuMemFree\", (void **)&p, 2000, 0, 0);\n#endif\n"
           "  cuGetProcAddress(\"cuMemFree\", (void **)&p, 2000, 0, 0);\n  return 0;\n}\n")
    found, _ = lint_text(src, str(tmp_path / "f.c"), settings=Settings(engine="clang"))
    got = [(f.line, f.code, f.config) for f in found if f.code == "CE002"]
    assert got == [(6, "CE002", "when EXTRA is defined"), (8, "CE002", "")]


def test_an_unreadable_condition_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _clang()
    from cuentry.lint import lint_text
    from cuentry.lint.engine import Settings

    src = ("#include <cuda.h>\n#include <cudaTypedefs.h>\nstatic PFN_cuMemFree_v3020 p;\n"
           "#if LEVEL * 2 > 6\nint f(void) { return cuGetProcAddress(\"cuMemFree\", (void **)&p, 2000, 0, 0); }\n"
           "#endif\n")
    found, unit = lint_text(src, str(tmp_path / "f.cpp"), settings=Settings(engine="clang"))
    # no -D sets the condition: the branch is entered by rewriting its #if (see the forced test below)
    assert [(f.code, f.config) for f in found if f.code == "CE002"] == [
        ("CE002", "in the branch #if LEVEL * 2 > 6 of line 4, entered whatever its condition")]
    assert "LEVEL" not in unit.note
    monkeypatch.setattr(configs, "MAX_FORCED", 0)   # and without that, it is said
    found, unit = lint_text(src, str(tmp_path / "f.cpp"), settings=Settings(engine="clang"))
    assert not [f for f in found if f.code == "CE002"]
    assert "#if LEVEL * 2 > 6 (line 4)" in unit.note


def test_config_in_json_and_sarif(capsys: pytest.CaptureFixture[str]) -> None:
    _clang()
    from cuentry.cli import main

    rc = main(["lint", "--engine", "clang", "--json", str(CORPUS / "win32_branch.c")])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert [f["config"] for f in doc["findings"]] == ["when _WIN32 is defined"]
    main(["lint", "--engine", "clang", "--sarif", str(CORPUS / "win32_branch.c")])
    doc = json.loads(capsys.readouterr().out)
    assert [r["properties"]["config"] for r in doc["runs"][0]["results"]] == ["when _WIN32 is defined"]


# ---- headers that let old code parse (issue 29.4) -------------------------------------------------------------------


def test_unversioned_pfn_names_under_a_real_13_toolkit(tmp_path: Path) -> None:
    from cuentry.catalog import catalog
    from cuentry.lint.clang.headers import legacy_pfn_flags

    for tk in ("13000", "12080"):
        inc = tmp_path / tk
        inc.mkdir()
        (inc / "cuda.h").write_text(f"#define CUDA_VERSION {tk}\n")
    text = "static PFN_cuMemAlloc a; static PFN_cuGetProcAddress g; static PFN_cuMemFree_v3020 f;\n"
    assert legacy_pfn_flags(catalog(), str(tmp_path / "13000"), text) == [
        "-DPFN_cuGetProcAddress=PFN_cuGetProcAddress_v12000", "-DPFN_cuMemAlloc=PFN_cuMemAlloc_v3020"]
    assert legacy_pfn_flags(catalog(), str(tmp_path / "12080"), text) == []          # 12.x headers have them
    own = "typedef CUresult (*PFN_cuMemAlloc)(CUdeviceptr *, size_t);\n" + text
    assert "-DPFN_cuMemAlloc=PFN_cuMemAlloc_v3020" not in legacy_pfn_flags(catalog(), str(tmp_path / "13000"), own)


OLD_CU = """\
// 11.x-era CUDA source: no runtime include (nvcc adds it), the 3-argument cudaGetDriverEntryPoint
#include <cudaTypedefs.h>
__global__ void fill(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }
static PFN_cuMemAlloc p_alloc;
int load() {
    return cudaGetDriverEntryPoint("cuMemAlloc", (void **)&p_alloc, cudaEnableDefault) == cudaSuccess ? 0 : -1;
}
"""


@pytest.mark.parametrize("toolkit", [None, "11.8", "12.4", "13.0"])
def test_old_cuda_source_parses(tmp_path: Path, toolkit: str | None) -> None:
    """Under the generated headers of any toolkit, and against a real toolkit when one is installed."""
    _clang()
    from cuentry.lint import lint_text
    from cuentry.lint.engine import Settings

    found, unit = lint_text(OLD_CU, str(tmp_path / "old.cu"), settings=Settings(engine="clang", toolkit=toolkit))
    assert unit.engine == "clang", unit.note
    assert {f.code for f in found} >= {"CE005"}


# ---- bounded on hostile input ------------------------------------------------------------------------------------------

_HOSTILE = {
    "deep": "#include <dlfcn.h>\n" + "".join(f"#ifdef D{i}\n" for i in range(20000))
            + "void f(void *h) { dlsym(h, \"cuInit\"); }\n" + "#endif\n" * 20000,
    "wide": "#include <dlfcn.h>\n" + "".join(f"#if MODE == {i}\nvoid f{i}(void *h) {{ dlsym(h, \"cuInit\"); }}\n#endif\n"
                                             for i in range(5000)),
    "unclosed": "#include <dlfcn.h>\n#ifdef A\n#if B >= 3\nvoid f(void *h) { dlsym(h, \"cuInit\"); }\n#elif\n#else junk\n",
}


@pytest.mark.parametrize("shape", sorted(_HOSTILE))
def test_hostile_branches_are_bounded(tmp_path: Path, shape: str) -> None:
    """Deep nesting, thousands of exclusive branches, directives left open: the clang engine judges the file in
    bounded time, in a child process (a hang or a crash there fails this test, not the run)."""
    _clang()
    import subprocess
    import sys

    path = tmp_path / "h.c"
    path.write_text(_HOSTILE[shape])
    code = ("import sys; from cuentry.lint import clang; p = sys.argv[1]\n"
            "try:\n u = clang.extract(open(p).read(), p, clang.Options()); print(len(u.queries), int(bool(u.note)))\n"
            "except clang.NotParsed:\n print(-1, -1)")
    got = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    queries, notes = map(int, got.stdout.split())
    assert (queries, notes) == {"deep": (0, 1), "wide": (0, 1), "unclosed": (0, 1)}[shape]   # unclosed: judged per fact, noted


def test_the_time_bound_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    _clang()
    from cuentry.lint import clang

    monkeypatch.setattr(configs, "MAX_SECONDS", -1.0)
    path = CORPUS / "whole_file_macro.cpp"
    unit = clang.extract(path.read_text(), str(path), clang.Options())
    assert unit.queries == []
    assert "s for configurations is spent" in unit.note


def test_a_wrapper_called_from_a_skipped_branch() -> None:
    """The project's own lookup helper, called inside `#ifdef WITH_CONTEXTS`: the call there is judged."""
    _clang()
    first, _ = _skipped_then_given("wrapper_branches.cpp", 18, "CE002", "when WITH_CONTEXTS is defined",
                                   defines=["WITH_CONTEXTS"])
    assert "through load" in first.message


def test_the_windows_branch_of_a_unicode_cpp_loader() -> None:
    _clang()
    found, _ = _lint("win32_wide.cpp")
    assert [(f.line, f.code, f.config) for f in found] == [(17, "CE011", "when WIN32 is defined")]


def test_a_runtime_version_test_without_the_runtime_header() -> None:
    _clang()
    found, _ = _lint("runtime_version.cpp")
    assert [(f.line, f.code, f.config) for f in found] == [(7, "CE002", "when CUDART_VERSION >= 12000"),
                                                           (7, "CE006", "when CUDART_VERSION >= 12000")]


def test_a_wrappers_own_fault_is_reported_once() -> None:
    _clang()
    found, _ = _lint("wrapper_fault.c")
    got = [(f.line, f.code, f.config) for f in found]
    assert got == [(5, "CE006", ""), (12, "CE002", "when WITH_FREE is defined")]
    assert "(in the wrapper load, reported once; called from line 10)" in found[0].message


STUB_CU = """\
// a .cu file with its own driver declarations (no cuda.h), as dynamic-loading projects keep them
typedef int CUresult;
typedef CUresult (*PFN_cuInit_v2000)(unsigned int);
#include <dlfcn.h>
static PFN_cuInit_v2000 p_init;
__global__ void zero(int *x) { x[threadIdx.x] = 0; }
int load(void *h) { p_init = (PFN_cuInit_v2000)dlsym(h, "cuInit"); return p_init ? 0 : 1; }
"""


@pytest.mark.parametrize("toolkit", [None, "13.0"])
def test_a_cu_file_with_its_own_driver_declarations_parses(tmp_path: Path, toolkit: str | None) -> None:
    """The runtime API a `.cu` file gets implicitly is the runtime's alone (as nvcc's cuda_runtime.h: no cuda.h)."""
    _clang()
    from cuentry.lint import lint_text
    from cuentry.lint.engine import Settings

    found, unit = lint_text(STUB_CU, str(tmp_path / "stub.cu"), settings=Settings(engine="clang", toolkit=toolkit))
    assert unit.engine == "clang", unit.note
    assert found == []


def test_a_file_under_a_build_macro_calling_its_own_wrapper() -> None:
    """Nothing in the file names a request API (the getter is a pointer), so only the parse that enters it
    knows the wrapper `load`; the branch that calls it is then judged (the retired tree-sitter engine's
    reach, now clang's: a whole loader under `#if WP_ENABLE_CUDA`)."""
    _clang()
    first, _ = _skipped_then_given("whole_file_wrapper.cpp", 28, "CE002", "when WITH_CUDA >= 1", defines=["WITH_CUDA=1"])
    assert "through load" in first.message


def test_a_loader_macro_defined_per_branch() -> None:
    """`#if USE_BY_VERSION` defines LOAD_SYM one way, `#else` another, expanded after the `#endif`: the
    definition the flags skip is judged at its expansion, in its configuration, once (the flags' own
    definition is right)."""
    _clang()
    first, unit = _skipped_then_given("define_branches.cpp", 18, "CE007", "when USE_BY_VERSION >= 1",
                                      defines=["USE_BY_VERSION=1"])
    assert "expanded from the macro LOAD_SYM" in first.message
    assert unit.configs == []


def test_a_branch_under_a_function_like_macro_condition_is_forced() -> None:
    """`#if _TK_AT_LEAST(99, 0)` (no -D or toolkit sets it): the branch is entered by rewriting its `#if`, and
    its request through `_GET_DRIVER_FN(cuDevSmResourceSplit)` is judged (asked at 12000, below its first ABI);
    the finding names the branch. The include guard around it is never rewritten."""
    _clang()
    found, unit = _lint("macro_condition.h", toolkit="13.0")
    label = "in the branch #if _TK_AT_LEAST(99, 0) of line 22, entered whatever its condition"
    assert [(f.line, f.code, f.severity, f.config) for f in found] == [(24, "CE009", "error", label)]
    assert unit.configs == [label] and unit.note == ""
    text = (CORPUS / "macro_condition.h").read_text()
    assert configs.forced(text, 4) is None                        # the guard
    entered = configs.forced(text, 22)
    assert entered is not None and entered.count("\n") == text.count("\n")
    assert entered.splitlines()[21] == "#if 1" and entered.splitlines()[3] == "#ifndef MACRO_CONDITION_H"
