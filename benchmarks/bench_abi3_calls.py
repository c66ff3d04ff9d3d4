"""abi3 against the full C API for the current call extension (cuentry.calls._fastcall), through cuentry's real call path.

Builds the extension's C (from ``cuentry.calls._fastgen`` in this checkout) three ways with the
running interpreter's headers (3.12 or newer):

* ``full``: as shipped (static types, full C API);
* ``heap``: the same types made with PyType_FromSpec, full C API (isolates the heap-type change);
* ``abi3``: the heap types on the 3.12 limited API (``Py_LIMITED_API=0x030C0000``, a ``.abi3.so``).

Then, for each build in a child process, loads it as ``cuentry.calls._fastcall``, loads cuentry's
fake driver (run ``cuentry fake-driver`` first with any interpreter; pass its path or set
$CUENTRY_DRIVER) and times typed calls through ``Driver.call``: ``cuCtxGetCurrent(out)`` (a getter:
keeps the GIL) and ``cuDeviceGetAttribute(out, attr, dev)``; CPU time, rounds alternating between
the builds. The source changes are mechanical (static types to specs; the offsets as members;
tp_free to PyObject_GC_Del; the tuple/list GET macros and PyObject_CallOneArg to their function
forms); the script fails, naming what is missing, when the generated source no longer matches.

    python3.12 benchmarks/bench_abi3_calls.py [--json] [--driver PATH]
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")


def _sub(old: str, new: str, text: str, count: int = -1) -> str:
    if old not in text:
        raise SystemExit(f"the generated source changed; update bench_abi3_calls.py (missing: {old[:70]!r})")
    return text.replace(old, new, count)


def _static_to_spec(src: str, var: str, spec: str, members: str) -> str:
    """Replace ``static PyTypeObject VAR = {...};`` by a PyType_Spec named SPEC built from its fields."""
    m = re.search(rf"static PyTypeObject {var} = \{{\n(.*?)\n\}};\n", src, flags=re.S)
    if not m:
        raise SystemExit(f"the generated source changed: no static type {var}")
    fields = dict(re.findall(r"\.(tp_\w+) = (.*?),\n", m.group(1) + ",\n"))
    slots = []
    for k in ("tp_doc", "tp_new", "tp_init", "tp_call", "tp_traverse", "tp_clear", "tp_dealloc", "tp_methods",
              "tp_members", "tp_getset"):
        if k in fields:
            slots.append(f"    {{Py_{k}, (void *){fields[k]}}},")
    if members:
        slots = [s for s in slots if "Py_tp_members" not in s] + [f"    {{Py_tp_members, {members}}},"]
    text = (f"static PyType_Slot {spec}_slots[] = {{\n" + "\n".join(slots) + "\n    {0, NULL},\n};\n"
            f"static PyType_Spec {spec} = {{{fields['tp_name']}, {fields['tp_basicsize']}, 0, {fields['tp_flags']}, "
            f"{spec}_slots}};\nstatic PyObject *{var};\n")
    return src[:m.start()] + text + src[m.end():]


def heap_source(src: str) -> str:
    src = _sub("#include <structmember.h>\n", "#include <string.h>\n#ifndef Py_XSETREF\n#define Py_XSETREF(d, s) do "
               "{ PyObject **_p = (PyObject **)&(d); PyObject *_t = *_p; *_p = (PyObject *)(s); Py_XDECREF(_t); } "
               "while (0)\n#endif\n", src)
    src = src.replace("T_PYSSIZET", "Py_T_PYSSIZET").replace("READONLY,", "Py_READONLY,")
    src = _sub("static PyTypeObject OutBaseType;\n", "static PyObject *OutBaseType;\n", src)
    caller_members = ("static PyMemberDef caller_members[] = {\n"
                      '    {"__vectorcalloffset__", Py_T_PYSSIZET, offsetof(Caller, vectorcall), Py_READONLY, NULL},\n'
                      '    {"__dictoffset__", Py_T_PYSSIZET, offsetof(Caller, dict), Py_READONLY, NULL},\n'
                      '    {"__weaklistoffset__", Py_T_PYSSIZET, offsetof(Caller, weakrefs), Py_READONLY, NULL},\n'
                      "    {NULL, 0, 0, 0, NULL},\n};\n")
    src = _sub("static PyTypeObject CallerType = {", caller_members + "static PyTypeObject CallerType = {", src, 1)
    src = _static_to_spec(src, "OutBaseType", "out_spec", "")
    src = src.replace("static PyObject *OutBaseType;\nstatic PyObject *out_type", "static PyObject *out_type", 1)
    src = _static_to_spec(src, "CallerType", "caller_spec", "caller_members")
    src = _sub("Py_TYPE(o)->tp_free(o);", "{ PyTypeObject *tp = Py_TYPE(o); PyObject_GC_Del(o); Py_DECREF(tp); }", src)
    src = _sub("Py_TYPE(obj)->tp_free(obj);", "{ PyTypeObject *tp = Py_TYPE(obj); PyObject_GC_Del(obj); Py_DECREF(tp); }",
               src)
    src = _sub("Py_VISIT(self->slow);", "Py_VISIT(Py_TYPE(obj)); Py_VISIT(self->slow);", src)
    src = _sub("{ Py_VISIT(((OutBase *)o)->obj); return 0; }", "{ Py_VISIT(Py_TYPE(o)); Py_VISIT(((OutBase *)o)->obj); "
               "return 0; }", src)
    src = _sub("PyObject_CallOneArg(self->err, code)", "PyObject_CallFunctionObjArgs(self->err, code, NULL)", src)
    for a, b in (("PyTuple_GET_SIZE(", "PyTuple_Size("), ("PyTuple_GET_ITEM(", "PyTuple_GetItem("),
                 ("PyList_GET_SIZE(", "PyList_Size("), ("PyList_GET_ITEM(", "PyList_GetItem("),
                 ("PyBytes_AS_STRING(", "PyBytes_AsString("), ("PyBytes_GET_SIZE(", "PyBytes_Size("),
                 ("PyFloat_AS_DOUBLE(", "PyFloat_AsDouble(")):
        src = src.replace(a, b)
    src = _sub("(PyTypeObject *)cls, &OutBaseType)", "(PyTypeObject *)cls, (PyTypeObject *)OutBaseType)", src)
    src = _sub("    if (PyType_Ready(&CallerType) < 0 || PyType_Ready(&OutBaseType) < 0) return NULL;\n",
               "    CallerType = PyType_FromSpec(&caller_spec);\n    OutBaseType = PyType_FromSpec(&out_spec);\n"
               "    if (CallerType == NULL || OutBaseType == NULL) return NULL;\n", src)
    src = _sub("    Py_INCREF(&CallerType);\n", "", src)
    src = _sub("    Py_INCREF(&OutBaseType);\n", "", src)
    src = _sub("(PyObject *)&CallerType", "CallerType", src)
    src = _sub("(PyObject *)&OutBaseType", "OutBaseType", src)
    if "&OutBaseType" in src or "&CallerType" in src:
        raise SystemExit("the generated source uses the static types elsewhere; update bench_abi3_calls.py")
    return src


def build(tmp: str) -> dict[str, str]:
    sys.path.insert(0, SRC)
    from cuentry.calls._fastgen import catalog_shapes, source

    full = source([s for s in catalog_shapes() if len(s) <= 32])
    heap = heap_source(full)
    cc = os.environ.get("CC") or shutil.which("cc") or "cc"
    inc = sysconfig.get_paths()["include"]
    out = {}
    for name, src, extra, so in (("full", full, [], "_fastcall.so"), ("heap", heap, [], "_fastcall.so"),
                                 ("abi3", heap, ["-DPy_LIMITED_API=0x030C0000"], "_fastcall.abi3.so")):
        d = os.path.join(tmp, name)
        os.makedirs(d)
        with open(os.path.join(d, "fast.c"), "w") as fh:
            fh.write(src)
        path = os.path.join(d, so)
        quiet = ["-Werror=implicit-function-declaration"] if extra else ["-w"]
        proc = subprocess.run([cc, "-shared", "-fPIC", "-O2", *quiet, *extra,
                               f"-I{inc}", os.path.join(d, "fast.c"), "-o", path, "-lm"], capture_output=True, text=True,
                              check=False)
        if proc.returncode != 0:
            raise SystemExit(f"building {name} failed:\n{proc.stderr[-3000:]}")
        out[name] = path
    return out


CHILD = r"""
import importlib.util, json, sys, time, timeit
spec = importlib.util.spec_from_file_location("cuentry.calls._fastcall", sys.argv[1])
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
sys.modules["cuentry.calls._fastcall"] = mod
import cuentry
from cuentry import Driver, out
from cuentry.calls import backend
assert backend()["name"] == "compiled", backend()
d = Driver.load(sys.argv[2])
ctx, val = out("CUcontext"), out("int")
get_ctx = d.call("cuCtxGetCurrent", 4000)
attr = d.call("cuDeviceGetAttribute", 2000)
assert get_ctx(ctx) == 0 and attr(val, 16, 0) == 0
n = int(sys.argv[3])
res = {}
for name, stmt in (("cuCtxGetCurrent", lambda: get_ctx(ctx)), ("cuDeviceGetAttribute", lambda: attr(val, 16, 0))):
    f = stmt
    res[name] = timeit.timeit("f()", globals={"f": f}, number=n, timer=time.process_time) / n * 1e9
base = lambda: None
res["empty lambda"] = timeit.timeit("f()", globals={"f": base}, number=n, timer=time.process_time) / n * 1e9
print(json.dumps(res))
"""


def main() -> int:
    if sys.version_info < (3, 12):
        raise SystemExit("run with Python 3.12 or newer (a vectorcall type needs the 3.12 limited API)")
    driver = sys.argv[sys.argv.index("--driver") + 1] if "--driver" in sys.argv else os.environ.get("CUENTRY_DRIVER")
    if not driver:
        raise SystemExit("give the fake driver: --driver \"$(cuentry fake-driver)\"")
    rounds, n = 9, 200_000
    res: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        built = build(tmp)
        env = {**os.environ, "PYTHONPATH": SRC, "CUENTRY_FAKE_DRIVER_VERSION": "13000"}
        env.pop("CUENTRY_BACKEND", None)
        for _ in range(rounds):
            for name, path in built.items():
                proc = subprocess.run([sys.executable, "-c", CHILD, path, driver, str(n)], capture_output=True,
                                      text=True, env=env, check=False)
                if proc.returncode != 0:
                    raise SystemExit(f"{name}: {proc.stderr[-2000:]}")
                for call, ns in json.loads(proc.stdout).items():
                    res.setdefault(call, {}).setdefault(name, []).append(ns)
    summary = {call: {b: {"min_ns": round(min(v), 1), "median_ns": round(statistics.median(v), 1)} for b, v in by.items()}
               for call, by in res.items()}
    if "--json" in sys.argv:
        print(json.dumps({"python": sys.version.split()[0], "rounds": rounds, "calls_per_round": n, "results": summary},
                         indent=2))
        return 0
    print(f"Python {sys.version.split()[0]}, CPU ns per call through Driver.call ({rounds} rounds of {n})")
    for call, by in summary.items():
        base = by["full"]["min_ns"]
        cells = "  ".join(f"{b} {v['min_ns']:6.1f} (median {v['median_ns']:6.1f}, x{v['min_ns'] / base:4.2f})"
                          for b, v in by.items())
        print(f"  {call:22s} {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
