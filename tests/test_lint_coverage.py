"""cuentry lint says what it could not see (notes), and -j N gives the same report as one process.

libclang expands every macro, so files whose macros are deep or hide a request give findings, not
notes; a header that is not found is named in the file's verdict.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

pytest.importorskip("clang.cindex")

from cuentry.cli import main  # noqa: E402
from cuentry.lint import lint_paths  # noqa: E402
from cuentry.lint.engine import Settings  # noqa: E402
from cuentry.lint.preprocess import MAX_DEPTH, preprocess  # noqa: E402

CORPUS = Path(__file__).parent / "lint_corpus"
OBJECT_LIKE = ("#include <cuda.h>\nstatic void* p;\n"
               '#define LOAD_ALLOC cuGetProcAddress("cuMemAlloc_v2", &p, 3020, 0, NULL)\n'
               "void f(void) { LOAD_ALLOC; }\n")   # a request in an object-like macro
REQUEST = "cuGetProcAddress(#x, &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q)"


def _cli(*argv: str) -> tuple[int, str, str]:
    o, e = io.StringIO(), io.StringIO()
    return main(list(argv), stdout=o, stderr=e), o.getvalue(), e.getvalue()


def _chain(depth: int) -> str:
    defs = "".join(f"#define C{i}(x) C{i - 1}(x)\n" for i in range(1, depth))
    return (f"#include <cuda.h>\n#define C0(x) {REQUEST}\n{defs}"
            f"void f(void) {{ void* p; CUdriverProcAddressQueryResult q; C{depth - 1}(cuMemAlloc_v2); }}\n")


def test_a_chain_within_the_preprocessor_bound_is_expanded_and_has_no_note(tmp_path: Path) -> None:
    p = tmp_path / "chain.c"
    p.write_text(_chain(MAX_DEPTH // 2))
    rep = lint_paths([str(p)])
    assert "CE003" in {f.code for f in rep.findings} and rep.notes == []


def test_a_chain_deeper_than_the_preprocessor_bound_is_expanded_by_libclang(tmp_path: Path) -> None:
    """The bounded preprocessor is only the guard against macro bombs: a deep (not exponential) chain is
    libclang's to expand, and is judged."""
    p = tmp_path / "deep.c"
    p.write_text(_chain(2000))
    rep = lint_paths([str(p)])
    assert "CE003" in {f.code for f in rep.findings} and rep.notes == [] and rep.problems == []
    assert {f.engine for f in rep.findings} == {"clang"}


@pytest.mark.parametrize("kind", ["object", "function"])
def test_a_macro_holding_a_request_is_expanded(tmp_path: Path, kind: str) -> None:
    p = tmp_path / "m.c"
    p.write_text(OBJECT_LIKE if kind == "object" else
                 "#include <cuda.h>\nstatic void* p;\n"
                 '#define LOAD(x) cuGetProcAddress(#x, &p, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, NULL)\n'
                 "void f(void) { LOAD(cuMemAlloc_v2); }\n")
    rep = lint_paths([str(p)])
    assert "CE003" in {f.code for f in rep.findings} and rep.notes == []


def test_loader_macros_from_a_second_header_that_is_not_found_are_said(tmp_path: Path) -> None:
    """A header not found is named (with the fix: -I) in what the file's verdict says; found, the macro is
    expanded and its request judged."""
    (tmp_path / "a.h").write_text('#pragma once\n#include "loader_macros_b.h"\n')
    src = tmp_path / "use.c"
    src.write_text('#include <cuda.h>\n#include "a.h"\nstatic void* p; static CUdriverProcAddressQueryResult q;\n'
                   'void f(void) { LOAD_SYM(cuMemAlloc_v2, 3020); }\n')
    rep = lint_paths([str(src)], settings=Settings(toolkit="13.0"))
    (judged,) = rep.judged
    assert "loader_macros_b.h" in judged.note and "-I" in judged.note and rep.findings == []
    (tmp_path / "loader_macros_b.h").write_text(f"#define LOAD_SYM(x, v) {REQUEST.replace('3020', 'v')}\n")
    rep = lint_paths([str(src)], settings=Settings(toolkit="13.0"))
    assert rep.judged[0].note == "" and [f.code for f in rep.findings] == ["CE003", "CE006"]   # q never tested


def test_a_missing_header_without_loader_looking_calls_says_nothing(tmp_path: Path) -> None:
    src = tmp_path / "plain.c"
    src.write_text('#include "generated_config.h"\nint g(void) { return cuGetProcAddress != 0; }\n')
    rep = lint_paths([str(src)])
    assert rep.notes == [] and rep.findings == [] and rep.problems == []


def test_nothing_partial_in_json_and_text(tmp_path: Path) -> None:
    """libclang expands every macro: the report's `partial` list (what a bounded preprocessor could not
    expand) stays in the JSON, empty, and the text says nothing of it."""
    p = tmp_path / "deep.c"
    p.write_text(_chain(200))
    code, out, _ = _cli("lint", "--json", str(p))
    doc = json.loads(out)
    assert code == 1 and [f["code"] for f in doc["findings"]] == ["CE003", "CE006"] and doc["partial"] == []
    code, out, _ = _cli("lint", str(p))
    assert "not fully expanded" not in out and "CE003" in out


def test_branch_definitions_survive_nested_conditionals() -> None:
    """The undo log that replaced copying the macro table keeps every branch's definition."""
    text = ("#if CUDA_VERSION >= 12000\n#define L(x) A(x)\n#if X\n#define M 1\n#endif\n#else\n#define L(x) B(x)\n"
            "#endif\nL(1);\n")
    pre = preprocess(text, "t.c")
    assert "A(1)" in pre.text and "B(1)" in pre.text and "M" in pre.macros
    pre = preprocess("#define K(x) x\n#if 1\n#undef K\n#endif\nK(2);\n", "t.c")
    assert "K" not in pre.macros


def test_parallel_jobs_give_the_same_report_as_one_process() -> None:
    one = _cli("lint", "--json", str(CORPUS))
    four = _cli("lint", "--json", "-j", "4", str(CORPUS))
    assert one[0] == four[0] == 1 and json.loads(one[1])["findings"]
    assert one[1] == four[1]
    assert _cli("lint", str(CORPUS))[1] == _cli("lint", "-j", "3", str(CORPUS))[1]


@pytest.mark.parametrize("bad", ["0", "-1", "65", "two", ""])
def test_bad_job_counts_are_refused(bad: str) -> None:
    code, _, err = _cli("lint", "-j", bad, str(CORPUS / "good.cpp"))
    assert code == 2 and "-j" in err


def test_a_hostile_cdef_string_lints_quickly(tmp_path: Path) -> None:
    """Long runs without a declaration's end cannot make the cdef patterns backtrack for long."""
    import subprocess
    import sys

    body = "typedef " + "a " * 100_000 + "\\n" + "cuX(" + "b " * 100_000 + "\\n" + "unsigned " * 50_000
    p = tmp_path / "hostile.py"
    p.write_text(f'from cffi import FFI\nffi = FFI()\nffi.cdef("{body}")\nlib = ffi.dlopen("libcuda.so.1")\n')
    proc = subprocess.run([sys.executable, "-m", "cuentry", "lint", "--json", str(p)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0 and json.loads(proc.stdout)["findings"] == []
