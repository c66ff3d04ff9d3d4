"""The linter never raises, whatever text it is given (bounded hypothesis runs)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("clang.cindex")

from cuentry.lint import lint_text  # noqa: E402

C_PIECES = [
    "#define ", "#define L(s, v) ", "#define X(_) _(cuMemAlloc, 3020) ", "#if CUDA_VERSION >= 12000\n", "#else\n",
    "#endif\n", "#elif 1\n", "#undef L\n", "#include \"x.h\"\n", "#if 0\n", "\\\n", "\n", " ", "(", ")", "{", "}",
    ",", ";", "#", "##", "__VA_ARGS__", "...", "L(", "X(L)", "cuGetProcAddress(", "cudaGetDriverEntryPoint(",
    "dlsym(h, ", "\"cuMemAlloc\"", "\"cuCtxCreate_v2\"", "3020", "12000", "0", "&p", "&q", "NULL", "CUDA_VERSION",
    "CU_GET_PROC_ADDRESS_DEFAULT", "PFN_cuMemAlloc_v3020 p;", "decltype(&cuInit) f;", "int f(const char* n, int v = 1)",
    "return", "if (", "r", "=", "std::min(", "?", ":", "template <typename T>", "auto g = [](const char* n) ", "/*",
    "*/", "//", "'", "\"", "\\", "\x00", "\u00e9", "\ufeff",
]
PY_PIECES = [
    "def f(name, version=12000):\n", "    ", "return ", "driver.cuGetProcAddress(", "name.encode()", "b\"cuMemAlloc\"",
    "12000", ", ", ")", "(", "\n", "ctypes.CFUNCTYPE(ctypes.c_int)", "p = ", "f(\"cuCtxCreate\")", "getattr(lib, ",
    "\"cuMemAlloc_v2\"", "lib.cuMemFree_v2", "CUDA_VERSION", "min(", "if ", "else ", ":", "\"\"\"", "#", "\\", "\x00",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(C_PIECES), max_size=80), st.sampled_from(["a.c", "a.cpp", "a.cu", "a.h"]))
def test_c_family_never_raises(pieces: list[str], name: str) -> None:
    findings, unit = lint_text("".join(pieces), name)
    assert all(f.line >= 1 and f.col >= 1 for f in findings)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PY_PIECES), max_size=60))
def test_python_never_raises(pieces: list[str]) -> None:
    findings, unit = lint_text("".join(pieces), "a.py")
    assert all(f.line >= 1 for f in findings)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_any_text_never_raises(text: str) -> None:
    lint_text(text, "a.cpp")
    lint_text(text, "a.py")
