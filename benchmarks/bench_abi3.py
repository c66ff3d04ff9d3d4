"""Per-call cost of the compiled call extension on CPython's stable ABI (abi3) against the full C API.

The question (issue 16): can the extension be built once per platform for CPython 3.12+ on the
limited API? Defining a vectorcall type needs the 3.12 limited API (Py_TPFLAGS_HAVE_VECTORCALL,
``__vectorcalloffset__`` in a heap type's members), so 3.11 keeps a full-API build either way.

This takes the extension's generated C as it is, builds three variants with the interpreter
running this script (3.12 or newer), and times one two-int call through each, interleaved:

* ``full``: as shipped (a static type, full C API);
* ``heap``: the same type made with PyType_FromSpec, full C API (isolates the heap-type change);
* ``abi3``: the heap type compiled with ``Py_LIMITED_API=0x030C0000`` (a ``.abi3.so``).

The source changes are mechanical (a static PyTypeObject -> PyType_Spec with the three offsets
as members; tp_free -> PyObject_GC_Del; PyObject_CallOneArg -> PyObject_CallFunctionObjArgs on
the error path; cffi's tp_basicsize read -> a fixed 64-byte bound in calibrate()). CPU time
(process_time), not wall time, so other load on the machine matters less.

    python3.12 benchmarks/bench_abi3.py [--json]     (generates the C with .venv/bin/python or $CUENTRY_GEN_PYTHON)
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
import timeit

_GEN = """
import sys
for mod in ("cuentry.calls._fastgen", "cuentry._fastgen"):
    try:
        gen = __import__(mod, fromlist=["source"])
    except ImportError:
        continue
    shapes = getattr(gen, "catalog_shapes", None)
    if shapes is None:
        from cuentry._stubgen import catalog_shapes as shapes
    sys.stdout.write(gen.source([s for s in shapes() if len(s) <= 32]))
    break
else:
    raise SystemExit("cannot find the extension generator")
"""


def _generated_source() -> str:
    """The extension's C, from the checkout's generator, run by an interpreter that has cuentry's dependencies.

    That interpreter is $CUENTRY_GEN_PYTHON, else the checkout's .venv/bin/python, else this one.
    """
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    py = os.environ.get("CUENTRY_GEN_PYTHON") or next(
        (p for p in (os.path.join(root, ".venv", "bin", "python"),) if os.path.exists(p)), sys.executable)
    env = {**os.environ, "PYTHONPATH": os.path.join(root, "src")}
    return subprocess.run([py, "-c", _GEN], capture_output=True, text=True, check=True, env=env).stdout


_SLOTS = """static PyMemberDef caller_members[] = {
    {"__vectorcalloffset__", Py_T_PYSSIZET, offsetof(Caller, vectorcall), Py_READONLY, NULL},
    {"__dictoffset__", Py_T_PYSSIZET, offsetof(Caller, dict), Py_READONLY, NULL},
    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(Caller, weakrefs), Py_READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};
static PyType_Slot caller_slots[] = {
    {Py_tp_new, PyType_GenericNew}, {Py_tp_init, caller_init}, {Py_tp_call, PyVectorcall_Call},
    {Py_tp_traverse, caller_traverse}, {Py_tp_clear, caller_clear}, {Py_tp_dealloc, caller_dealloc},
    {Py_tp_methods, caller_methods}, {Py_tp_members, caller_members}, {0, NULL},
};
static PyType_Spec caller_spec = {"cuentry._fastcall.Caller", sizeof(Caller), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL, caller_slots};
static PyObject *CallerType;

"""


def heap_type_source(src: str) -> str:
    """The generated source with its static type made a heap type usable under the limited API."""
    def sub(old: str, new: str, text: str) -> str:
        if old not in text:
            raise SystemExit(f"the generated source changed; update bench_abi3.py (missing: {old[:60]!r})")
        return text.replace(old, new)

    src = re.sub(r"static PyTypeObject CallerType = \{.*?\n\};\n", _SLOTS, src, count=1, flags=re.S)
    src = sub("#include <Python.h>\n", "#include <Python.h>\n#include <string.h>\n#ifndef Py_XSETREF\n"
              "#define Py_XSETREF(d, s) do { PyObject **_p = (PyObject **)&(d); PyObject *_t = *_p; "
              "*_p = (PyObject *)(s); Py_XDECREF(_t); } while (0)\n#endif\n", src)
    src = sub("Py_TYPE(obj)->tp_free(obj);", "PyTypeObject *tp = Py_TYPE(obj); PyObject_GC_Del(obj); Py_DECREF(tp);", src)
    src = sub("Py_VISIT(self->slow);", "Py_VISIT(Py_TYPE(obj)); Py_VISIT(self->slow);", src)
    src = sub("PyObject_CallOneArg(self->err, code)", "PyObject_CallFunctionObjArgs(self->err, code, NULL)", src)
    src = sub("<= Py_TYPE(cd)->tp_basicsize;", "<= 64;", src)
    src = src.replace("PyBytes_AS_STRING(", "PyBytes_AsString(")
    src = src.replace("Py_INCREF(Py_TYPE(cd));", "Py_INCREF((PyObject *)Py_TYPE(cd));")
    src = sub("    if (PyType_Ready(&CallerType) < 0) return NULL;\n", "    CallerType = PyType_FromSpec(&caller_spec);\n"
              "    if (CallerType == NULL) return NULL;\n", src)
    src = sub("    Py_INCREF(&CallerType);\n", "", src)
    return sub("(PyObject *)&CallerType", "CallerType", src)


def _build(tmp: str) -> dict[str, str]:
    cc = os.environ.get("CC") or shutil.which("cc") or "cc"
    inc = sysconfig.get_paths()["include"]
    full = _generated_source()
    heap = heap_type_source(full)
    out = {}
    for name, src, extra, so in (("full", full, [], "_fastcall.so"), ("heap", heap, [], "_fastcall.so"),
                                 ("abi3", heap, ["-DPy_LIMITED_API=0x030C0000", "-Werror=implicit-function-declaration"],
                                  "_fastcall.abi3.so")):
        d = os.path.join(tmp, name)
        os.makedirs(d)
        c = os.path.join(d, "fast.c")
        with open(c, "w") as fh:
            fh.write(src)
        path = os.path.join(d, so)
        subprocess.run([cc, "-shared", "-fPIC", "-O2", "-w", *extra, f"-I{inc}", c, "-o", path], check=True)
        out[name] = path
    lib = os.path.join(tmp, "libadd.so")
    with open(os.path.join(tmp, "add.c"), "w") as fh:
        fh.write("int add(int a, int b) { return a + b; }\n")
    subprocess.run([cc, "-shared", "-fPIC", "-O2", os.path.join(tmp, "add.c"), "-o", lib], check=True)
    out["lib"] = lib
    return out


def _load(path: str) -> object:
    spec = importlib.util.spec_from_file_location("_fastcall", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main() -> int:
    if sys.version_info < (3, 12):
        raise SystemExit("run with Python 3.12 or newer (a vectorcall type needs the 3.12 limited API)")
    with tempfile.TemporaryDirectory() as tmp:
        built = _build(tmp)
        lib = ctypes.CDLL(built["lib"])
        addr = ctypes.cast(lib.add, ctypes.c_void_p).value
        calls = {}
        for name in ("full", "heap", "abi3"):
            mod = _load(built[name])
            shapes = mod.SHAPES.split(",")
            for nogil in (0, 1):
                f = mod.Caller(addr, shapes.index("ii"), "ii", "ss", lambda *a: None, nogil=nogil)
                assert f(2, 3) == 5
                calls[f"{name}{'' if nogil == 0 else ' (GIL released)'}"] = f
        calls["empty lambda"] = lambda a, b: 0
        n, rounds = 300_000, 15
        res: dict[str, list[float]] = {k: [] for k in calls}
        for _ in range(rounds):
            for k, f in calls.items():
                res[k].append(timeit.timeit("f(2, 3)", globals={"f": f}, number=n, timer=time.process_time) / n * 1e9)
    summary = {k: {"min_ns": round(min(v), 1), "median_ns": round(statistics.median(v), 1)} for k, v in res.items()}
    base = summary["full"]["min_ns"]
    if "--json" in sys.argv:
        print(json.dumps({"python": sys.version.split()[0], "results": summary}, indent=2))
    else:
        print(f"Python {sys.version.split()[0]}, one call add(2, 3), CPU ns per call ({rounds} rounds of {n}, interleaved)")
        for k, v in summary.items():
            print(f"  {k:24s} min {v['min_ns']:6.1f}  median {v['median_ns']:6.1f}  min/full {v['min_ns'] / base:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
