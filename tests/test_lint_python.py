"""The Python engine by meaning: handles, names, tables, helpers, versions, widths, results, files, standard input.

Each test writes a loader the way real projects do (tests/lint_eval set 4 names them) and asserts what the linter
says: the rule, its severity by consequence, and that the fixed spelling stays silent. Python files lint without
libclang: nothing here needs the lint extra.
"""

from __future__ import annotations

import io
import json
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuentry.cli import main
from cuentry.lint import lint_paths, lint_text
from cuentry.lint.engine import looks_like_python
from cuentry.lint.python import extract


def findings(src: str, name: str = "loader.py", pedantic: bool = False) -> list[tuple[int, str, str]]:
    """(line, code, severity) of what the linter reports on `src`."""
    from cuentry.lint.engine import Settings

    got, _ = lint_text(textwrap.dedent(src), name, settings=Settings(pedantic=pedantic))
    return [(f.line, f.code, f.severity) for f in got]


def serious(src: str) -> list[tuple[int, str]]:
    return [(line, code) for line, code, sev in findings(src) if sev == "error"]


# --- where the handle comes from --------------------------------------------------------------------------------

LOOP = '''
import ctypes
from ctypes import POINTER, c_int, c_size_t
lib = None
for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
    try:
        lib = ctypes.CDLL(name)
        break
    except OSError:
        continue
lib.EXPORT.argtypes = [POINTER(c_size_t), c_int]
'''


def test_a_handle_from_a_loop_of_candidate_names() -> None:
    assert serious(LOOP.replace("EXPORT", "cuDeviceTotalMem")) == [(11, "CE011")]
    assert findings(LOOP.replace("EXPORT", "cuDeviceTotalMem_v2")) == []


def test_a_handle_returned_by_a_helper_or_find_library_or_kept_in_a_class() -> None:
    helper = '''
    import ctypes
    def _load():
        for n in ("libcuda.so.1", "libcuda.so"):
            try:
                return ctypes.CDLL(n)
            except OSError:
                pass
        raise OSError("no driver")
    class Api:
        def __init__(self):
            self._lib = _load()
        def bind(self):
            L = self._lib
            L.cuMemFree_v2.argtypes = [ctypes.c_uint]
    '''
    assert serious(helper) == [(15, "CE011")]          # a 64-bit CUdeviceptr declared c_uint
    find = '''
    import ctypes, ctypes.util
    lib = ctypes.CDLL(ctypes.util.find_library("cuda") or "libcuda.so.1")
    lib.cuMemGetInfo.argtypes = [ctypes.POINTER(ctypes.c_size_t)] * 2
    '''
    assert serious(find) == [(4, "CE011")]


def test_a_module_global_set_by_a_function() -> None:
    src = '''
    import ctypes
    _LIB = None
    def lib():
        global _LIB
        if _LIB is None:
            _LIB = ctypes.CDLL("libcuda.so.1")
            _LIB.cuMemAlloc.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        return _LIB
    '''
    assert serious(src) == [(8, "CE011")]


def test_other_libraries_are_not_the_driver() -> None:
    """libcudart, libamdhip64 aliased to cu names, cuBLAS: never judged against the driver's ABIs."""
    src = '''
    import ctypes
    hip = ctypes.CDLL("libamdhip64.so")
    hip.cuLaunchKernel = hip.hipModuleLaunchKernel
    hip.cuMemGetInfo.argtypes = [ctypes.c_void_p]
    rt = ctypes.CDLL("libcudart.so")
    rt.cudaMalloc.argtypes = [ctypes.c_void_p]
    blas = ctypes.CDLL(ctypes.util.find_library("cublas"))
    blas.cublasCreate_v2.argtypes = [ctypes.c_int]
    '''
    assert findings(src, pedantic=True) == []


# --- how the name is written and taken -----------------------------------------------------------------------------

def test_names_built_by_fstrings_concatenation_and_helpers() -> None:
    src = '''
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    HEAD = "cuMemGet"
    def sym(name):
        return getattr(lib, name)
    f = sym(f"{HEAD}Info")
    f.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    g = getattr(lib, "cuDevice" + "TotalMem")
    g.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int]
    '''
    assert serious(src) == [(8, "CE011"), (10, "CE011")]


def test_argtypes_from_a_table_in_a_loop_and_by_lookup() -> None:
    src = '''
    import ctypes
    from ctypes import POINTER, c_int, c_size_t, c_uint64, c_void_p
    lib = ctypes.CDLL("libcuda.so.1")
    PROTOS = [
        ("cuInit", c_int, [ctypes.c_uint]),
        ("cuMemAlloc", c_int, [POINTER(c_uint64), c_size_t]),
        ("cuMemFree_v2", c_int, [c_uint64]),
    ]
    for name, res, args in PROTOS:
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    SIGS = {"cuMemGetInfo": (c_int, POINTER(c_size_t), POINTER(c_size_t))}
    class Driver:
        def __getattr__(self, name):
            proto = SIGS[name]
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = proto[0], proto[1:]
            return fn
    '''
    assert serious(src) == [(13, "CE011"), (19, "CE011")]   # the 2000 cuMemAlloc, the 2000 cuMemGetInfo


def test_a_table_in_another_module_of_the_package(tmp_path: Path) -> None:
    """Imports of the project are read (relative ones, and packages above the file); the finding is at the
    binding, naming the row."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "types.py").write_text("from ctypes import c_uint64, POINTER\nCUdeviceptr = c_uint64\n"
                                  "PTR = POINTER(CUdeviceptr)\n")
    (pkg / "table.py").write_text("from ctypes import c_size_t, c_int\nfrom .types import PTR, CUdeviceptr\n"
                                  "TABLE = {\n    'cuMemAlloc': [PTR, c_size_t],\n    'cuMemFree_v2': [CUdeviceptr],\n}\n")
    (pkg / "driver.py").write_text("import ctypes\nfrom .table import TABLE\nlib = ctypes.CDLL('libcuda.so.1')\n"
                                   "for name, args in TABLE.items():\n    getattr(lib, name).argtypes = args\n")
    rep = lint_paths([str(pkg)])
    assert [(Path(f.path).name, f.line, f.code, f.severity) for f in rep.findings] == [
        ("driver.py", 5, "CE011", "error")]
    assert "table.py:4" in rep.findings[0].message
    unit = extract((pkg / "driver.py").read_text(), str(pkg / "driver.py"))   # no reader: imports not followed
    assert unit.py_protos == [] and unit.unjudged


def test_a_missing_name_tried_where_its_absence_is_handled_is_no_finding() -> None:
    src = '''
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    def find(name):
        for suffix in ("_v2_ptds", "_v2", ""):
            try:
                return getattr(lib, name + suffix)
            except AttributeError:
                pass
    f = find("cuCtxGetDevice")
    f.argtypes = [ctypes.POINTER(ctypes.c_int)]
    typo = lib.cuCtxSyncronize
    typo.argtypes = []
    '''
    got = findings(src)
    assert (11, "CE011", "error") in got       # the 13000 cuCtxGetDevice_v2 takes two parameters
    assert (13, "CE003", "error") in got       # a literal misspelling never resolves
    assert len(got) == 2


def test_a_fallback_to_the_old_export_only_where_the_new_one_is_missing_is_a_note() -> None:
    src = '''
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    f = getattr(lib, "cuMemGetInfo_v2", getattr(lib, "cuMemGetInfo"))
    f.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    '''
    assert findings(src) == []
    assert findings(src, pedantic=True) == [(5, "CE011", "note")]


# --- widths --------------------------------------------------------------------------------------------------------

def test_out_parameters_are_compared_by_width() -> None:
    call = '''
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    total = ctypes.c_size_t()
    lib.EXPORT(ctypes.byref(total), 0)
    '''
    assert serious(call.replace("EXPORT", "cuDeviceTotalMem")) == [(5, "CE011")]
    assert findings(call.replace("EXPORT", "cuDeviceTotalMem_v2")) == []
    wider = call.replace("c_size_t()", "c_uint()").replace("EXPORT", "cuDeviceTotalMem_v2")
    got = [m for m in lint_text(textwrap.dedent(wider), "w.py")[0]]
    assert [(f.code, f.severity) for f in got] == [("CE011", "error")] and "write past it" in got[0].message


def test_c_long_is_32_bits_for_a_windows_only_handle() -> None:
    src = '''
    from ctypes import byref, c_long, c_void_p, windll
    lib = windll.LoadLibrary("nvcuda.dll")
    size = c_long()
    var = c_void_p()
    lib.cuModuleGetGlobal_v2(byref(var), byref(size), None, b"x")
    '''
    got = lint_text(textwrap.dedent(src), "w.py")[0]
    assert [(f.line, f.code, f.severity) for f in got] == [(6, "CE011", "error")] and "Windows" in got[0].message
    assert findings(src.replace('windll.LoadLibrary("nvcuda.dll")', 'CDLL("libcuda.so.1")')
                    .replace("windll", "CDLL")) == []


def test_too_few_arguments_by_consequence() -> None:
    src = '''
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuDeviceGetAttribute.argtypes = (ctypes.c_void_p, ctypes.c_int)
    lib.cuModuleGetGlobal_v2.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
    def attr(a, d):
        v = ctypes.c_int()
        return lib.cuDeviceGetAttribute(ctypes.byref(v), a, d)
    def glob(m, n):
        p = ctypes.c_void_p()
        return lib.cuModuleGetGlobal_v2(ctypes.byref(p), m, n)
    '''
    assert findings(src) == [(4, "CE011", "warning"), (5, "CE011", "error")]


# --- requests -------------------------------------------------------------------------------------------------------

def test_the_version_from_a_helper_a_global_or_a_parameter() -> None:
    src = '''
    from cuda.bindings import driver
    def _version():
        err, v = driver.cuDriverGetVersion()
        return v
    _, DRIVER = driver.cuDriverGetVersion()
    def load(version):
        err, p, st = driver.cuGetProcAddress(b"cuMemAlloc", version, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)
        if err or st:
            raise RuntimeError(err)
        return p
    load(_version())
    err, p, st = driver.cuGetProcAddress(b"cuMemFree", DRIVER, 1)
    assert not err and not st
    '''
    assert [(line, code) for line, code, _ in findings(src)] == [(8, "CE001"), (13, "CE001")]
    assert findings(src.replace("load(_version())", "load(3020)").replace("DRIVER, 1", "3020, 1")) == []


def test_a_wrapper_is_reported_where_it_names_the_symbol() -> None:
    src = '''
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    def get(name, version):
        p, st = ctypes.c_void_p(), ctypes.c_int()
        rc = lib.cuGetProcAddress_v2(name, ctypes.byref(p), version, 1, ctypes.byref(st))
        if rc or st.value:
            raise OSError(rc)
        return p.value
    a = get(b"cuMemAlloc", 3020)
    b = get(b"cuCtxCreate_v2", 3020)
    '''
    got = lint_text(textwrap.dedent(src), "w.py")[0]
    assert [(f.line, f.code) for f in got] == [(11, "CE003")]
    assert got[0].col == 9                       # at the symbol's literal, in the call of the wrapper


def test_return_codes_never_tested_after_a_ctypes_request() -> None:
    src = '''
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")
    p, st = ctypes.c_void_p(), ctypes.c_int()
    rc = lib.cuGetProcAddress_v2(b"cuMemAlloc", ctypes.byref(p), 3020, 1, ctypes.byref(st))
    lib.cuGetProcAddress_v2(b"cuMemFree", ctypes.byref(p), 3020, 1, None)
    '''
    assert [(line, code) for line, code, _ in findings(src)] == [(5, "CE006"), (6, "CE006")]
    checked = textwrap.dedent(src).replace('ctypes.byref(st))\n',
                                           'ctypes.byref(st))\nif rc or st.value:\n    raise OSError(rc)\n')
    assert [(line, code) for line, code, _ in findings(checked)] == [(8, "CE006")]


def test_a_prototype_applied_to_a_request_pointer() -> None:
    src = '''
    import ctypes
    from cuda.bindings import driver
    err, ptr, st = driver.cuGetProcAddress(b"cuMemAlloc", 3020, driver.CU_GET_PROC_ADDRESS_LEGACY_STREAM)
    assert err == 0 and st == 0
    alloc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_uint)(ptr)
    free = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(lambda p: None)
    '''
    assert findings(src) == [(6, "CE004", "error")]


def test_cffi_with_the_cdef_in_a_variable_and_dlopen_in_a_loop() -> None:
    src = '''
    from cffi import FFI
    ffi = FFI()
    SRC = "typedef unsigned long long CUdeviceptr;\\n" + "int cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n);"
    ffi.cdef(SRC)
    def open_driver(names=("libcuda.so", "nvcuda.dll")):
        for n in names:
            try:
                return ffi.dlopen(n)
            except OSError:
                pass
    '''
    assert findings(src) == [(5, "CE011", "error")]


# --- what a file says it judged -----------------------------------------------------------------------------------

def test_requests_found_and_judged_in_json(tmp_path: Path) -> None:
    f = tmp_path / "loader.py"
    f.write_text(textwrap.dedent('''
        import ctypes
        from cuda.bindings import driver
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuInit.argtypes = [ctypes.c_uint]
        def wrap(name):
            return driver.cuGetProcAddress(name, 3020, 1)
        def by_name(n):
            return getattr(lib, n)
        err, p, st = driver.cuGetProcAddress(b"cuMemAlloc", 3020, 1)
        '''))
    out, err = io.StringIO(), io.StringIO()
    main(["lint", "--json", "--isolated", str(f)], stdout=out, stderr=err)
    (judged,) = json.loads(out.getvalue())["judged"]
    assert judged["engine"] == "ast"
    assert judged["requests_found"] == 4 and judged["requests_judged"] == 2
    whys = {u["line"]: u["why"] for u in judged["requests_unjudged"]}
    assert "parameter of wrap" in whys[7] and "not a constant" in whys[9]


# --- standard input ---------------------------------------------------------------------------------------------

PY_STDIN = b"import ctypes\nlib = ctypes.CDLL('libcuda.so.1')\nlib.cuMemAlloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]\n"


def _stdin_lint(data: bytes, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    o, e = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    return main(["lint", "--isolated", *args, "-"], stdout=o, stderr=e), o.getvalue(), e.getvalue()


def test_stdin_that_looks_like_python_is_linted_as_python(monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = _stdin_lint(PY_STDIN, monkeypatch)
    assert code == 1 and out.startswith("<stdin>:3:1: CE011")
    code, out, _ = _stdin_lint(b"#!/usr/bin/env python3\n" + PY_STDIN, monkeypatch)
    assert code == 1 and out.startswith("<stdin>:4:1: CE011")


def test_stdin_that_does_not_look_like_python_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    import cuentry.lint.extra as extra

    monkeypatch.setattr(extra, "missing", lambda: ["clang.cindex"])    # the core install: no libclang
    code, _, err = _stdin_lint(b"lib = CDLL('libcuda.so.1')\n", monkeypatch)
    assert code == 2 and "--stdin-filename x.py" in err
    code, out, _ = _stdin_lint(b"lib = CDLL('libcuda.so.1')\n", monkeypatch, "--stdin-filename", "x.py")
    assert code == 0


@pytest.mark.parametrize(("text", "python"), [
    ("import ctypes\n", True), ("from . import x\n", True), ("  from cuda.bindings import driver\n", True),
    ("#!/usr/bin/python3.12\nx = 1\n", True), ("import std;\nint main() {}\n", False), ("#import <x>\n", False),
    ("#include <cuda.h>\n", False), ("int x;\n", False),
])
def test_looks_like_python(text: str, python: bool) -> None:
    assert looks_like_python(text) is python


# --- never crash, never hang -----------------------------------------------------------------------------------

def test_hostile_programs_are_bounded() -> None:
    fan = "import ctypes\nlib = ctypes.CDLL('libcuda.so.1')\n" + "".join(
        f"def f{i}(x):\n" + "".join(f"    f{i + 1}(x + {j})\n" for j in range(8)) + "    return lib.cuInit(0)\n"
        for i in range(14)) + "def f14(x):\n    return f0(x)\nf0(1)\n"
    table = "import ctypes\nlib = ctypes.CDLL('libcuda.so.1')\nT = {" + ",".join(
        f"'cuX{i}': [ctypes.c_int]" for i in range(6000)) + "}\nfor k, v in T.items():\n    getattr(lib, k).argtypes = v\n"
    recursive = "def f(x):\n    return f(f(x))\nf(1)\nclass A(A):\n    pass\nimport loader\n"
    for src in (fan, table, recursive, "x = [" * 90 + "]" * 90, "s = 'a'\nfor i in range(64):\n    s = s + s\n"):
        t = time.process_time()
        lint_text(src, "hostile.py")
        assert time.process_time() - t < 20


_STATEMENTS = st.sampled_from([
    "lib = ctypes.CDLL('libcuda.so.1')", "lib = ctypes.CDLL(name)", "name = 'cuMemAlloc'", "name = name + '_v2'",
    "f = getattr(lib, name)", "f.argtypes = [ctypes.c_void_p, ctypes.c_size_t]", "f = lib[name]",
    "T = {name: [ctypes.c_int]}", "for k, v in T.items():\n    getattr(lib, k).argtypes = v",
    "def g(n):\n    return getattr(lib, n)", "f = g(name)", "class C:\n    x = lib\n    def m(self):\n        return self.x",
    "lib = C().m()", "v = ctypes.c_int()", "lib.cuDriverGetVersion(ctypes.byref(v))",
    "rc = lib.cuGetProcAddress_v2(name.encode(), ctypes.byref(v), v.value, 1, None)", "f(ctypes.byref(v), 1)",
    "while name:\n    name = name[1:]", "try:\n    lib = ctypes.CDLL(name)\nexcept OSError:\n    lib = None",
    "if v:\n    name = f'{name}x'\nelse:\n    name = 'cuInit'", "from cuda.bindings import driver",
    "e, p, s = driver.cuGetProcAddress(name, v, 1)", "t = ctypes.CFUNCTYPE(ctypes.c_int)(p)", "del name",
    "name = [name, name]", "lib.cuMemGetInfo = lib.cuMemGetInfo_v2", "name, v = v, name", "lambda: g(name)",
])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STATEMENTS, max_size=25))
def test_any_sequence_of_loader_statements_is_judged_without_raising(stmts: list[str]) -> None:
    src = "import ctypes\n" + "\n".join(stmts) + "\n"
    got, unit = lint_text(src, "gen.py")
    assert not unit.problem and all(f.line >= 1 for f in got)


def test_properties_repeated_lists_objects_passed_by_value_and_min_of_versions() -> None:
    src = '''
    import ctypes
    class Driver:
        def __init__(self):
            self._h = ctypes.CDLL("libcuda.so.1")
        @property
        def lib(self):
            return self._h
        def bind(self):
            f = self.lib.cuMemGetInfo
            f.argtypes = [ctypes.POINTER(ctypes.c_size_t)] * 2
            v = ctypes.c_int()
            self.lib.cuDriverGetVersion(ctypes.byref(v))
            p, st = ctypes.c_void_p(), ctypes.c_int()
            sym = ctypes.c_char_p(b"cuMemAlloc")
            rc = self.lib.cuGetProcAddress_v2(sym, ctypes.byref(p), min(v.value, 12000), 1, ctypes.byref(st))
            if rc or st.value:
                raise OSError(rc)
    '''
    assert findings(src) == [(11, "CE011", "error"), (16, "CE001", "error")]


def test_what_an_imported_module_does_is_its_own_finding_unless_this_file_names_it(tmp_path: Path) -> None:
    """A request made in an imported module (its symbol and pin written there) is that module's finding, not its
    callers'; a wrapper there called here with the symbol is reported here, where the symbol is written."""
    (tmp_path / "dma.py").write_text(textwrap.dedent('''
        from cuda.bindings import driver
        def resolve():
            err, ver = driver.cuDriverGetVersion()
            err, ptr, st = driver.cuGetProcAddress(b"cuMemcpyBatchAsync", ver, 1)
            assert not err and not st
            return ptr
        def get(name, version):
            err, ptr, st = driver.cuGetProcAddress(name, version, 1)
            assert not err and not st
            return ptr
        '''))
    (tmp_path / "user.py").write_text("from cuda.bindings import driver\nfrom dma import resolve, get\n"
                                      "resolve()\nget(b'cuMemAlloc_v2', 3020)\n")
    rep = lint_paths([str(tmp_path)])
    assert sorted((Path(f.path).name, f.line, f.code) for f in rep.findings) == [
        ("dma.py", 5, "CE001"), ("user.py", 4, "CE003")]
